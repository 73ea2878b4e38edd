<?xml version="1.0" encoding="UTF-8"?>
<!-- Renders sitemap indexes and urlsets as a readable page (S-308). -->
<xsl:stylesheet version="1.0"
    xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
    xmlns:sitemap="http://www.sitemaps.org/schemas/sitemap/0.9"
    xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <xsl:output method="html" version="1.0" encoding="UTF-8" indent="yes"/>
  <xsl:template match="/">
    <html lang="en">
      <head>
        <meta charset="utf-8"/>
        <meta name="robots" content="noindex, follow"/>
        <title>XML Sitemap</title>
        <style>
          body { font: 15px/1.5 system-ui, sans-serif; color: #222; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; }
          h1 { font-size: 1.6rem; margin-bottom: .25rem; }
          p.intro { color: #555; margin-top: 0; }
          table { border-collapse: collapse; width: 100%; }
          th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid #e3e3e3; vertical-align: top; }
          th { background: #f4f4f6; font-weight: 600; }
          tr:hover td { background: #fafafe; }
          td.number { text-align: right; width: 6rem; }
          td.date { white-space: nowrap; width: 14rem; }
          a { color: #1a4fb3; text-decoration: none; word-break: break-all; }
          a:hover { text-decoration: underline; }
        </style>
      </head>
      <body>
        <h1>XML Sitemap</h1>
        <xsl:choose>
          <xsl:when test="sitemap:sitemapindex">
            <p class="intro">This index lists <xsl:value-of select="count(sitemap:sitemapindex/sitemap:sitemap)"/> sitemaps.
              Search engines read it; this page is for people.</p>
            <table>
              <thead><tr><th>Sitemap</th><th>Last modified</th></tr></thead>
              <tbody>
                <xsl:for-each select="sitemap:sitemapindex/sitemap:sitemap">
                  <tr>
                    <td><a href="{sitemap:loc}"><xsl:value-of select="sitemap:loc"/></a></td>
                    <td class="date"><xsl:value-of select="concat(substring(sitemap:lastmod, 1, 10), ' ', substring(sitemap:lastmod, 12, 5))"/></td>
                  </tr>
                </xsl:for-each>
              </tbody>
            </table>
          </xsl:when>
          <xsl:otherwise>
            <p class="intro">This sitemap lists <xsl:value-of select="count(sitemap:urlset/sitemap:url)"/> URLs.
              <a href="/sitemap_index.xml">Back to the index</a>.</p>
            <table>
              <thead><tr><th>URL</th><th>Images</th><th>Last modified</th></tr></thead>
              <tbody>
                <xsl:for-each select="sitemap:urlset/sitemap:url">
                  <tr>
                    <td><a href="{sitemap:loc}"><xsl:value-of select="sitemap:loc"/></a></td>
                    <td class="number"><xsl:value-of select="count(image:image)"/></td>
                    <td class="date"><xsl:value-of select="concat(substring(sitemap:lastmod, 1, 10), ' ', substring(sitemap:lastmod, 12, 5))"/></td>
                  </tr>
                </xsl:for-each>
              </tbody>
            </table>
          </xsl:otherwise>
        </xsl:choose>
      </body>
    </html>
  </xsl:template>
</xsl:stylesheet>
