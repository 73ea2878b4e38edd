"""``sitemap-server export``: the content as NDJSON that ``import`` reads back to the same
sitemaps (a site is never locked in)."""

from __future__ import annotations

import json

from lxml import etree

from sitemap_server.testing import (
    PROJECT_ROOT,
    apply_changes,
    forget_rendered,
    index_locs,
    reset_database,
)

THEME_UNIT_TEST = (
    PROJECT_ROOT.parent / "shared" / "fixtures" / "wordpress" / "themeunittestdata.wordpress.xml"
)


# The plugins' sitemaps (when their plugins are installed) are made from their own tables,
# which an export does not hold: the core's documents are compared.
PLUGIN_SITEMAPS = ("video-", "news-")


def documents(app) -> dict[str, bytes]:
    """Every document of the core's read path: the index (less the plugins' sitemaps),
    each sitemap page, robots.txt."""
    index = app.get("/sitemap_index.xml", status=200).body
    root = etree.fromstring(index)
    for sitemap in list(root):
        loc = sitemap.findtext("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")
        if loc.rsplit("/", 1)[-1].startswith(PLUGIN_SITEMAPS):
            root.remove(sitemap)
    found = {"/sitemap_index.xml": etree.tostring(root)}
    for loc in index_locs(app):
        name = loc.rsplit("/", 1)[-1]
        if not name.startswith(PLUGIN_SITEMAPS):
            found["/" + name] = app.get("/" + name, status=200).body
    robots = app.get("/robots.txt", status=200).text.splitlines()
    found["/robots.txt"] = "\n".join(
        r for r in robots if not any(p in r for p in PLUGIN_SITEMAPS)
    ).encode()
    return found


def test_an_export_imported_into_an_empty_site_serves_the_same_sitemaps(
    cli, api, testapp, tmp_path, engine, _migrated_rows
):
    status, _out, err = cli("import-wordpress", "--quiet", THEME_UNIT_TEST)
    assert status == 0, err
    # What the site itself adds: a type and a taxonomy of its own, settings that name
    # posts and change the documents.
    api.post_json("/api/post-types", {"name": "book", "label": "Books", "hierarchical": True})
    api.post_json("/api/taxonomies", {"name": "genre", "label": "Genres"})
    genre = api.post_json("/api/terms", {"taxonomy": "genre", "name": "Poetry"}).json
    api.post_json(
        "/api/posts",
        {"type": "book", "title": "A book", "status": "publish", "terms": [genre["id"]]},
    )
    page = api.get("/api/posts?type=page").json["items"][0]
    api.patch_json(
        "/api/settings",
        {
            "timezone": "Europe/Berlin",
            "front_page": "page",
            "front_page_id": page["id"],
            "excluded_post_ids": [1],
            "entries_per_page": 20,
        },
    )
    api.patch_json("/api/post-types/page", {"archive_path": None})
    apply_changes(testapp)
    before = documents(testapp)
    assert len(before) > 8

    export = tmp_path / "site.ndjson"
    status, _out, err = cli("export", export)
    assert status == 0, err
    kinds = [next(iter(json.loads(line))) for line in export.read_text().splitlines()]
    assert kinds[-1] == "settings"
    assert {"post_type_settings", "taxonomy_settings", "post_type", "taxonomy"} <= set(kinds)

    reset_database(engine, _migrated_rows)
    forget_rendered(testapp)
    assert documents(testapp) != before  # an empty site
    status, out, err = cli("import", "--quiet", export)
    assert status == 0, err
    assert out.startswith(f"imported {len(kinds)} lines")
    after = documents(testapp)
    assert after.keys() == before.keys()
    for path, body in before.items():
        assert after[path] == body, path


def test_an_export_to_standard_output(cli, api):
    api.post_json("/api/authors", {"slug": "ada", "name": "Ada"})
    status, out, _err = cli("export")
    assert status == 0
    lines = [json.loads(line) for line in out.splitlines()]
    authors = [line["author"] for line in lines if "author" in line]
    assert [(a["slug"], a["name"], a["noindex"]) for a in authors] == [("ada", "Ada", False)]
