"""The sitemaps: what is listed (kept current by every write) and how it is served."""
