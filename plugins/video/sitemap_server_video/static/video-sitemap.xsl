<?xml version="1.0" encoding="UTF-8"?>
<!--
  A video sitemap as a page for people: one row per video (S-308, S-503).

  As main-sitemap.xsl: a browser applies it to the XML, the server applies it with lxml for
  /sitemaps/{name}.html (view='html'); each view links to the other. It imports the core's
  stylesheet, served beside it, for the page around its table (the site's name, a private
  site's notice, the filter of the rows, the style) and its named templates; only its
  table is its own.
-->
<xsl:stylesheet version="1.0"
    xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
    xmlns:sitemap="http://www.sitemaps.org/schemas/sitemap/0.9"
    xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"
    exclude-result-prefixes="sitemap video">
  <xsl:import href="main-sitemap.xsl"/>
  <xsl:output method="html" encoding="UTF-8" indent="yes" doctype-system="about:legacy-compat"/>

  <xsl:template match="sitemap:urlset" mode="title">Video Sitemap</xsl:template>

  <xsl:template match="sitemap:urlset">
    <h1>Video Sitemap</h1>
    <xsl:call-template name="about"/>
    <p class="count" id="count">This video sitemap contains
      <strong><xsl:value-of select="count(sitemap:url)"/></strong> URLs with
      <strong><xsl:value-of select="count(sitemap:url/video:video)"/></strong> videos.</p>
    <xsl:call-template name="other-view"/>
    <xsl:call-template name="filter"><xsl:with-param name="rows" select="count(sitemap:url)"/></xsl:call-template>
    <div class="scroll">
      <table id="urls">
        <thead><tr><th>Thumbnail</th><th>Title</th><th>Description</th><th class="number">Duration</th><th class="date">Published</th></tr></thead>
        <tbody>
          <xsl:for-each select="sitemap:url/video:video">
            <tr>
              <td class="thumb">
                <xsl:if test="starts-with(video:thumbnail_loc, 'https://') or starts-with(video:thumbnail_loc, 'http://')">
                  <img src="{video:thumbnail_loc}" alt="" loading="lazy"/>
                </xsl:if>
              </td>
              <td class="title"><a><xsl:call-template name="href"><xsl:with-param name="url" select="../sitemap:loc"/></xsl:call-template><xsl:value-of select="video:title"/></a></td>
              <td class="description"><xsl:value-of select="video:description"/></td>
              <td class="number">
                <xsl:if test="video:duration">
                  <xsl:value-of select="floor(video:duration div 60)"/>:<xsl:value-of select="format-number(video:duration mod 60, '00')"/>
                </xsl:if>
              </td>
              <td class="date"><xsl:call-template name="date"><xsl:with-param name="value" select="video:publication_date"/></xsl:call-template></td>
            </tr>
          </xsl:for-each>
        </tbody>
      </table>
    </div>
  </xsl:template>

  <xsl:template name="style-extra">
    <style>
      td.thumb img { width: 8rem; max-width: 30vw; height: auto; display: block; }
    </style>
  </xsl:template>
</xsl:stylesheet>
