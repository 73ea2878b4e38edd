"""Content rules shared by the API and (later) the sitemaps: permalinks, URL checks."""
