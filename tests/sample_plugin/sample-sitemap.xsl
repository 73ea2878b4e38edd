<?xml version="1.0" encoding="UTF-8"?>
<!-- The sample plugin's stylesheet (tests/functional/test_hooks.py, sitemap_xsl). -->
<xsl:stylesheet version="1.0"
    xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
    xmlns:sitemap="http://www.sitemaps.org/schemas/sitemap/0.9">
  <xsl:output method="html" encoding="UTF-8"/>
  <xsl:template match="/">
    <html lang="en">
      <head><title>Bookmarks sitemap</title></head>
      <body>
        <ul>
          <xsl:for-each select="sitemap:urlset/sitemap:url">
            <li><xsl:value-of select="sitemap:loc"/></li>
          </xsl:for-each>
        </ul>
      </body>
    </html>
  </xsl:template>
</xsl:stylesheet>
