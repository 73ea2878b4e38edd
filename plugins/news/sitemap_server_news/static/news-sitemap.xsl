<?xml version="1.0" encoding="UTF-8"?>
<!--
  A news sitemap as a page for people: one row per article (S-308, S-504).

  As main-sitemap.xsl: a browser applies it to the XML, the server applies it with lxml for
  /sitemaps/{name}.html (view='html'); each view links to the other.
-->
<xsl:stylesheet version="1.0"
    xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
    xmlns:sitemap="http://www.sitemaps.org/schemas/sitemap/0.9"
    xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"
    exclude-result-prefixes="sitemap news">
  <xsl:output method="html" encoding="UTF-8" indent="yes" doctype-system="about:legacy-compat"/>

  <xsl:param name="view" select="'xml'"/>
  <xsl:param name="xml-url" select="''"/>
  <xsl:param name="html-base" select="''"/>

  <xsl:template match="/">
    <html lang="en">
      <head>
        <meta charset="utf-8"/>
        <meta name="robots" content="noindex, follow"/>
        <meta name="viewport" content="width=device-width, initial-scale=1"/>
        <title>News Sitemap</title>
        <xsl:call-template name="style"/>
      </head>
      <body>
        <xsl:apply-templates select="sitemap:urlset"/>
      </body>
    </html>
  </xsl:template>

  <xsl:template match="sitemap:urlset">
    <h1>News Sitemap</h1>
    <xsl:call-template name="about"/>
    <p class="count" id="count">This news sitemap contains
      <strong><xsl:value-of select="count(sitemap:url)"/></strong> URLs: the articles
      published or changed in the last 48 hours, most recently changed first.</p>
    <xsl:call-template name="other-view"/>
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

  <!-- What a sitemap is, for the site owner who opened it. -->
  <xsl:template name="about">
    <p class="intro">An XML sitemap lists the pages of this site that search engines may
      index, with the date each last changed, so that they find new and updated pages
      quickly. Search engines read the XML; this page shows the same list to people.</p>
  </xsl:template>

  <!-- The link to the other view of this document, and back to the index. -->
  <xsl:template name="other-view">
    <xsl:variable name="page" select="normalize-space(/processing-instruction('html-view'))"/>
    <p class="views">
      <xsl:choose>
        <xsl:when test="$view = 'html'">
          <a id="xml-view" href="{$xml-url}">View the XML</a>
          <xsl:if test="sitemap:url"> · <a id="index" href="{$html-base}">All sitemaps</a></xsl:if>
        </xsl:when>
        <xsl:otherwise>
          <xsl:if test="$page"><a id="html-view" href="{$page}">View as a web page</a></xsl:if>
          <!-- The site's URL is what comes before /sitemaps/ in the page's URL. -->
          <xsl:variable name="site">
            <xsl:if test="contains($page, '/sitemaps/')"><xsl:value-of select="substring-before($page, '/sitemaps/')"/></xsl:if>
          </xsl:variable>
          <xsl:if test="sitemap:url"> · <a id="index" href="{$site}/sitemap_index.xml">All sitemaps</a></xsl:if>
        </xsl:otherwise>
      </xsl:choose>
    </p>
  </xsl:template>

  <!-- An href only for an http(s) URL: nothing in a document makes this page run a script. -->
  <xsl:template name="href">
    <xsl:param name="url"/>
    <xsl:if test="starts-with($url, 'https://') or starts-with($url, 'http://')">
      <xsl:attribute name="href"><xsl:value-of select="$url"/></xsl:attribute>
    </xsl:if>
  </xsl:template>

  <!-- "2024-05-01 14:30 (+02:00)" from a W3C date-time; its offset is the site's. -->
  <xsl:template name="date">
    <xsl:param name="value"/>
    <xsl:if test="$value">
      <time datetime="{$value}">
        <xsl:value-of select="substring($value, 1, 10)"/>
        <xsl:if test="string-length($value) &gt; 10">
          <xsl:value-of select="concat(' ', substring($value, 12, 5))"/>
          <span class="offset"><xsl:value-of select="concat(' (', substring($value, 20), ')')"/></span>
        </xsl:if>
      </time>
    </xsl:if>
  </xsl:template>

  <xsl:template name="style">
    <style>
      body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; }
      h1 { font-size: 1.6rem; margin-bottom: .25rem; }
      p.intro { color: #555; margin-top: 0; max-width: 48rem; }
      p.count { margin-bottom: .25rem; }
      p.views { margin-top: 0; }
      .scroll { overflow-x: auto; }
      table { border-collapse: collapse; width: 100%; }
      th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid #e3e3e3; vertical-align: top; }
      th { background: #f4f4f6; font-weight: 600; }
      tr:hover td { background: #fafafe; }
      .number { text-align: right; width: 5rem; }
      .date { white-space: nowrap; width: 15rem; }
      .offset { color: #777; }
      td.url a { word-break: break-all; }
      a { color: #1a4fb3; text-decoration: none; }
      a:hover { text-decoration: underline; }
      @media (max-width: 40rem) {
        body { margin: 1rem auto; font-size: 14px; }
        .date { width: auto; white-space: normal; }
        .offset { display: block; }
      }
    </style>
  </xsl:template>
</xsl:stylesheet>
