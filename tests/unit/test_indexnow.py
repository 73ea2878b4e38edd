"""What an IndexNow submission says of the site (``notify/indexnow.py``)."""

from __future__ import annotations

import pytest

from sitemap_server.notify.channels import Burst
from sitemap_server.notify.indexnow import IndexNow


@pytest.mark.parametrize(
    ("site_url", "host"),
    [
        ("https://example.org", "example.org"),
        ("http://127.0.0.1:6611", "127.0.0.1:6611"),
        ("https://shop.example.org:8443/blog", "shop.example.org:8443"),
        ("http://[::1]:6611", "[::1]:6611"),
    ],
)
def test_the_host_is_the_authority_its_urls_carry(site_url, host):
    """IndexNow refuses URLs whose host is not the one it is told: with a port in the
    site URL, the port is part of both."""
    urls = [f"{site_url}/a/", f"{site_url}/b/", "https://elsewhere.example/c/"]
    burst = Burst(changes=3, sitemaps=("post",), urls=urls, site_url=site_url)

    [message] = IndexNow("k" * 8, "http://127.0.0.1:9/indexnow", 100).messages(burst)

    assert message.payload == {"host": host, "urlList": urls[:2]}
