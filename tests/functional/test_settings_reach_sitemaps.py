"""Settings from the ini file or the environment reach the stored sitemaps (issue 30).

The stored documents record the output settings they were made with (the site URL in
effect, the page size, plugins' document settings): a start with others rebuilds what
they change before it is served, says so in one log line, and ``check`` then finds
nothing, with no command run. Each "start" here is an application made with other
settings on the same database, as ``pserve`` after an edit of the ini file would be.
"""

from __future__ import annotations

import logging

from sitemap_server.site import Site
from sitemap_server.testing import client, parse_sitemap

JAN = "2024-01-15T10:00:00+00:00"
NS = {
    "s": "http://www.sitemaps.org/schemas/sitemap/0.9",
    "image": "http://www.google.com/schemas/sitemap-image/1.1",
}
FIRST, SECOND = "http://127.0.0.1:6543", "http://127.0.0.1:6613"


def start(app_with, token, **settings):
    return client(app_with(**settings), token)


def checked(engine, app_settings, **settings):
    """What ``sitemap-server check`` finds for a server started with ``settings``."""
    site = Site({**app_settings, **settings})
    try:
        with site.sessions() as session:
            report = site.engine.check(session)
            session.commit()
    finally:
        site.close()
    return report


def locs(app, path):
    root = parse_sitemap(app.get(path, status=200).body)
    return [loc.text for loc in root.iter(f"{{{NS['s']}}}loc")] + [
        loc.text for loc in root.iter(f"{{{NS['image']}}}loc")
    ]


def test_a_start_with_another_site_url_moves_images_too(
    app_with, api_token, app_settings, clean_database, caplog
):
    first = start(app_with, api_token, **{"sitemap_server.site_url": FIRST})
    body = {
        "type": "post",
        "status": "publish",
        "title": "Pictures",
        "published_at": JAN,
        "content": '<p><img src="/uploads/a.jpg"></p>',
        "featured_image": "/uploads/featured.jpg",
    }
    first.post_json("/api/posts", body, status=201)
    before = locs(first, "/post-sitemap.xml")
    assert f"{FIRST}/uploads/a.jpg" in before and f"{FIRST}/uploads/featured.jpg" in before

    caplog.set_level(logging.WARNING, logger="sitemap_server.sitemaps.maintenance")
    second = start(app_with, api_token, **{"sitemap_server.site_url": SECOND})
    after = locs(second, "/post-sitemap.xml")
    assert after == [loc.replace(FIRST, SECOND) for loc in before]
    assert all(loc.startswith(SECOND) for loc in locs(second, "/sitemap_index.xml"))
    said = [r.getMessage() for r in caplog.records if "built with other settings" in r.message]
    assert len(said) == 1 and f"site_url '{FIRST}' -> '{SECOND}'" in said[0]
    report = checked(clean_database, app_settings, **{"sitemap_server.site_url": SECOND})
    assert (report.count, report.failures) == (0, [])


def test_a_start_with_a_smaller_page_cuts_the_pages_again(
    app_with, api_token, app_settings, clean_database
):
    first = start(app_with, api_token)
    for n in range(12):
        body = {"type": "post", "status": "publish", "title": f"Post {n}", "published_at": JAN}
        first.post_json("/api/posts", body, status=201)
    assert "/post-sitemap2.xml" not in "".join(locs(first, "/sitemap_index.xml"))
    whole = locs(first, "/post-sitemap.xml")

    small = {"sitemap_server.max_page_bytes": "2500"}
    second = start(app_with, api_token, **small)
    index = locs(second, "/sitemap_index.xml")
    pages = [loc.rsplit("/", 1)[1] for loc in index if "/post-sitemap" in loc]
    assert len(pages) > 1
    served = [loc for page in pages for loc in locs(second, f"/{page}")]
    assert served == whole
    for page in pages:
        assert len(second.get(f"/{page}").body) <= 2500
    assert checked(clean_database, app_settings, **small).count == 0
