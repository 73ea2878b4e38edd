"""How long the server takes to make a sitemap's page for people (``/sitemaps/{name}.html``).

    .venv/bin/python bench/xsl_bench.py

Applies ``main-sitemap.xsl`` with lxml (as ``sitemaps/html.py`` does) to generated urlsets
of 1,000 URLs (the default page size) and 50,000 (the protocol's largest), each with an
image, five times, and prints the median with the sizes. The XML itself is served from
the render cache; the page is made again on every request.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from lxml import etree

ROOT = Path(__file__).resolve().parent.parent
XSL = ROOT / "sitemap_server" / "static" / "main-sitemap.xsl"


def urlset(count: int) -> bytes:
    urls = "".join(
        f"<url><loc>https://example.com/2024/05/post-{i}/</loc>"
        "<lastmod>2024-05-01T10:00:00+02:00</lastmod>"
        f"<image:image><image:loc>https://example.com/u/{i}.jpg</image:loc></image:image></url>"
        for i in range(count)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<?xml-stylesheet type="text/xsl" href="/main-sitemap.xsl"?>'
        "<?html-view https://example.com/sitemaps/post-sitemap.html?>"
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        f'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">{urls}</urlset>'
    ).encode()


def main() -> None:
    transform = etree.XSLT(etree.parse(str(XSL)))
    for count in (1000, 50_000):
        document = urlset(count)
        times = []
        for _ in range(5):
            started = time.perf_counter()
            page = bytes(transform(etree.fromstring(document).getroottree(), view="'html'"))
            times.append(time.perf_counter() - started)
        print(
            f"{count} URLs: {statistics.median(times) * 1000:.0f} ms (median of 5); "
            f"{len(document) // 1024} KiB of XML -> {len(page) // 1024} KiB of HTML"
        )


if __name__ == "__main__":
    main()
