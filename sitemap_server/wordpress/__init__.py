"""Bringing a WordPress site in: its export (WXR) read, mapped to this site's content, imported."""
