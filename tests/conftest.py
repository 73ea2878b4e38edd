"""The core's tests use the fixtures that every sitemap-server test suite can opt into."""

pytest_plugins = ["sitemap_server.testing"]
