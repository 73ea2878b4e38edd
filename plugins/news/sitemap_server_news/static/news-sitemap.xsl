<?xml version="1.0" encoding="UTF-8"?>
<!--
  A news sitemap as a page for people: one row per article (S-308, S-504).

  As main-sitemap.xsl: a browser applies it to the XML, the server applies it with lxml for
  /sitemaps/{name}.html (view='html'); each view links to the other. It imports the core's
  stylesheet, served beside it, for the page around its table (the site's name, a private
  site's notice, the filter of the rows, the style) and its named templates; only its
  table is its own.
-->
<xsl:stylesheet version="1.0"
    xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
    xmlns:sitemap="http://www.sitemaps.org/schemas/sitemap/0.9"
    xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"
    exclude-result-prefixes="sitemap news">
  <xsl:import href="main-sitemap.xsl"/>
  <xsl:output method="html" encoding="UTF-8" indent="yes" doctype-system="about:legacy-compat"/>

  <xsl:template match="sitemap:urlset" mode="title">News Sitemap</xsl:template>

  <xsl:template match="sitemap:urlset">
    <h1>News Sitemap</h1>
    <xsl:call-template name="about"/>
    <p class="count" id="count">This news sitemap contains
      <strong><xsl:value-of select="count(sitemap:url)"/></strong> URLs: the articles
      published or changed in the last 48 hours, most recently changed first.</p>
    <xsl:call-template name="other-view"/>
    <xsl:call-template name="filter"><xsl:with-param name="rows" select="count(sitemap:url)"/></xsl:call-template>
    <div class="scroll">
      <table id="urls">
        <thead><tr><th>Title</th><th>Language</th><th class="date">Published</th></tr></thead>
        <tbody>
          <xsl:for-each select="sitemap:url">
            <tr>
              <td class="title"><a><xsl:call-template name="href"><xsl:with-param name="url" select="sitemap:loc"/></xsl:call-template><xsl:value-of select="news:news/news:title"/></a></td>
              <td class="language"><xsl:value-of select="news:news/news:publication/news:language"/></td>
              <td class="date"><xsl:call-template name="date"><xsl:with-param name="value" select="news:news/news:publication_date"/></xsl:call-template></td>
            </tr>
          </xsl:for-each>
        </tbody>
      </table>
    </div>
  </xsl:template>

</xsl:stylesheet>
