"""The news plugin's tests use the core's fixtures (``testapp``, ``api``, ``clean_database``
…), opt-in as for any plugin's test suite. The plugin is installed, so the core's
application already includes it through its entry point."""

pytest_plugins = ["sitemap_server.testing"]
