# Varnish in front of two sitemap-server processes (pserve production.ini) on this host,
# with the worker (sitemap-server worker) sending purges from this host too. Change the
# backends and the ACL to your deployment; the rules are in sitemaps.vcl.
#
#   varnishd -a :80 -f /etc/varnish/default.vcl -p vcl_path=/etc/varnish -s malloc,1G
#
# and in the worker's environment: SITEMAP_SERVER_PURGE_VARNISH=http://127.0.0.1:80

vcl 4.1;

import directors;

backend sitemaps_1 {
    .host = "127.0.0.1";
    .port = "6543";
    .probe = { .url = "/robots.txt"; .interval = 5s; .timeout = 2s; .window = 5; .threshold = 3; }
}

backend sitemaps_2 {
    .host = "127.0.0.1";
    .port = "6544";
    .probe = { .url = "/robots.txt"; .interval = 5s; .timeout = 2s; .window = 5; .threshold = 3; }
}

# Who may send PURGE: the hosts where sitemap-server's worker runs.
acl sitemap_purgers {
    "127.0.0.1";
    "::1";
}

sub vcl_init {
    new sitemaps = directors.round_robin();
    sitemaps.add_backend(sitemaps_1);
    sitemaps.add_backend(sitemaps_2);
}

sub vcl_recv {
    set req.backend_hint = sitemaps.backend();
}

include "sitemaps.vcl";
