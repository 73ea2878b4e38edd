"""``/api/docs``: Swagger UI from our own process, nothing from elsewhere (issue 14)."""

import re

from sitemap_server.api.docs import START, _script_hash


def test_the_docs_page_loads_everything_from_the_site(testapp):
    page = testapp.get("/api/docs", status=200)

    sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert sources and all(s.startswith("/api/") for s in sources), sources
    for source in sources:
        assert testapp.get(source).status_int == 200
    policy = page.headers["Content-Security-Policy"]
    assert "default-src 'self'" in policy
    # The one inline script is allowed by its hash, and keeps the token in memory only.
    (script,) = re.findall(r"<script>(.*?)</script>", page.text)
    assert _script_hash(script) in policy
    assert "persistAuthorization: false" in script
    assert script == START % '"/api/openapi.json"'


def test_swagger_ui_is_cached_by_browsers(testapp):
    asset = testapp.get("/api/docs/assets/swagger-ui-bundle.js", status=200)
    assert asset.content_type in ("text/javascript", "application/javascript")
    assert "max-age=86400" in asset.headers["Cache-Control"]
