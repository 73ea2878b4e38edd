"""A plugin with a misspelt hook name: the plugin manager must refuse it at start-up."""

from sitemap_server.plugin import hookimpl


@hookimpl
def sitemap_provider(session):  # should be sitemap_providers
    return []
