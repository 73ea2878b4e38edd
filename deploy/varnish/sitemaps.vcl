# Varnish in front of sitemap-server: every answer the sitemaps give is kept until a
# change makes it wrong, then purged by its cache tags (docs/operations.md, "Shared caches
# and CDNs"). Included by default.vcl, which names the backends and who may purge.
#
# Needs Varnish 7 with the xkey and var modules (Debian: varnish, varnish-modules).
#
# - The application tags what it answers in Surrogate-Key (its default
#   sitemap_server.cache.tag_headers): "sitemaps", "doc:NAME", "provider:NAME", "index".
#   They are handed to xkey, kept out of the answers to clients.
# - Every tagged answer (a document in any form, a page for people, a redirect to one, a
#   404 of one that does not exist yet) is kept a day, whatever its s-maxage: the worker
#   purges what each applied change touched (sitemap_server.purge.varnish), so a day only
#   bounds how long a lost purge could last.
# - A purge is "PURGE /" with the tags in "xkey-purge", from the sitemap_purgers ACL.
# - A fetch that was under way when a purge came may have read the database before the
#   change: it answers its client but is not kept (see vcl_backend_response). A fetch
#   asks for no-cache: the application then reads the database, not what its process
#   last heard of it (which may be a commit behind for a millisecond).
# - The admin API, and anything not tagged, follows its own Cache-Control (the API's says
#   no-store).

vcl 4.1;

import std;
import var;
import xkey;

sub vcl_recv {
    if (req.method == "PURGE") {
        if (client.ip !~ sitemap_purgers) {
            return (synth(403, "Not allowed to purge from this address"));
        }
        if (!req.http.xkey-purge) {
            return (synth(400, "A PURGE names cache tags in an xkey-purge header"));
        }
        # Before purging: a fetch that started earlier is not kept (vcl_backend_response).
        var.global_set("sitemaps-purged-at", std.real(time = now));
        set req.http.xkey-purged = xkey.purge(req.http.xkey-purge);
        return (synth(200, "Purged " + req.http.xkey-purged + " objects"));
    }
    if (req.url ~ "^/api(/|\?|$)") {
        return (pass);
    }
    if (req.method != "GET" && req.method != "HEAD") {
        return (pass);
    }
    # What the sitemaps answer depends on no cookie and no credentials.
    unset req.http.Cookie;
    unset req.http.Authorization;
    return (hash);
}

sub vcl_backend_fetch {
    set bereq.http.x-fetch-started = std.real(time = now);
    # Answer from what the database holds now: a process's copy of the versions may hear
    # of a commit a moment after the purge it caused has arrived here.
    set bereq.http.Cache-Control = "no-cache";
}

sub vcl_backend_response {
    if (beresp.http.Surrogate-Key) {
        set beresp.http.xkey = beresp.http.Surrogate-Key;
    }
    if (bereq.is_bgfetch && beresp.status >= 500) {
        # An origin that fails: keep serving what the cache has (stale-if-error).
        return (abandon);
    }
    if (beresp.http.xkey ~ "(^|[ ,])sitemaps([ ,]|$)"
            && (beresp.status == 200 || beresp.status == 301 || beresp.status == 404)) {
        if (std.real(var.global_get("sitemaps-purged-at"), 0)
                >= std.real(bereq.http.x-fetch-started, 0)) {
            # A purge came while this was fetched: it may be the document before the
            # change the purge was for. Its client gets it; the next request fetches again.
            set beresp.ttl = 0s;
            set beresp.grace = 0s;
            set beresp.uncacheable = true;
            return (deliver);
        }
        set beresp.ttl = 1d;
        set beresp.grace = 0s;
        # Revalidated with its ETag once the day is over (a 304 is cheap at the origin).
        set beresp.keep = 1d;
        return (deliver);
    }
}

sub vcl_deliver {
    unset resp.http.xkey;
    unset resp.http.Surrogate-Key;
    if (obj.hits > 0) {
        set resp.http.X-Cache = "HIT";
    } else {
        set resp.http.X-Cache = "MISS";
    }
}
