"""The built-in sitemap providers, registered as plugins through the public hooks."""
