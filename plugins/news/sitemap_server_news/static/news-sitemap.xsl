<?xml version="1.0" encoding="UTF-8"?>
<!-- Renders a news sitemap as a readable page: one row per article (S-308, S-504). -->
<xsl:stylesheet version="1.0"
    xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
    xmlns:sitemap="http://www.sitemaps.org/schemas/sitemap/0.9"
    xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
  <xsl:output method="html" version="1.0" encoding="UTF-8" indent="yes"/>
  <xsl:template match="/">
    <html lang="en">
      <head>
        <meta charset="utf-8"/>
        <meta name="robots" content="noindex, follow"/>
        <meta name="viewport" content="width=device-width, initial-scale=1"/>
        <title>News Sitemap</title>
        <style>
          body { font: 15px/1.5 system-ui, sans-serif; color: #222; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; }
          h1 { font-size: 1.6rem; margin-bottom: .25rem; }
          p.intro { color: #555; margin-top: 0; }
          table { border-collapse: collapse; width: 100%; }
          th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid #e3e3e3; vertical-align: top; }
          th { background: #f4f4f6; font-weight: 600; }
          td.date, td.language { white-space: nowrap; }
          a { color: #1a4fb3; text-decoration: none; }
          a:hover { text-decoration: underline; }
        </style>
      </head>
      <body>
        <h1>News Sitemap</h1>
        <p class="intro">This sitemap lists the <xsl:value-of select="count(sitemap:urlset/sitemap:url)"/> articles
          published or changed in the last 48 hours, newest first.
          <a href="/sitemap_index.xml">Back to the index</a>.</p>
        <table>
          <thead><tr><th>Title</th><th>Language</th><th>Published</th></tr></thead>
          <tbody>
            <xsl:for-each select="sitemap:urlset/sitemap:url">
              <tr>
                <td class="title"><a href="{sitemap:loc}"><xsl:value-of select="news:news/news:title"/></a></td>
                <td class="language"><xsl:value-of select="news:news/news:publication/news:language"/></td>
                <td class="date"><xsl:value-of select="concat(substring(news:news/news:publication_date, 1, 10), ' ', substring(news:news/news:publication_date, 12, 5))"/></td>
              </tr>
            </xsl:for-each>
          </tbody>
        </table>
      </body>
    </html>
  </xsl:template>
</xsl:stylesheet>
