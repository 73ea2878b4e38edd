<?xml version="1.0" encoding="UTF-8"?>
<!--
  Sitemap indexes and urlsets as a page for people (S-308).

  Two ways in, one stylesheet: a browser applies it to the XML (the xml-stylesheet
  instruction, when sitemap_server.xsl_instruction leaves it in), and the server applies
  it with lxml for /sitemaps/ and /sitemaps/{name}.html, passing view='html' so that links
  lead to those pages. Each view links to the other: the XML names its page in an
  <?html-view URL?> instruction, the server passes the XML's URL as xml-url.

  What the document says for people besides its entries is in instructions crawlers
  ignore: <?site-title?> (the site's name), <?site-private?> (why a private site lists
  nothing) and, in an index, <?urls N?> in each <sitemap> (how many URLs it holds).

  A plugin's stylesheet imports this one (<xsl:import href="main-sitemap.xsl"/>, the
  path it is served at) and gives its own root element's templates (match="sitemap:urlset",
  and mode="title" for the page's title) and, if it needs some, "style-extra": the page
  around them (the site's name, a private site's notice, the filter of the table, the
  style) and the named templates below are this file's.
-->
<xsl:stylesheet version="1.0"
    xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
    xmlns:sitemap="http://www.sitemaps.org/schemas/sitemap/0.9"
    xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
    xmlns:xhtml="http://www.w3.org/1999/xhtml"
    exclude-result-prefixes="sitemap image xhtml">
  <xsl:output method="html" encoding="UTF-8" indent="yes" doctype-system="about:legacy-compat"/>

  <!-- Set by the server's HTML view: 'html', the XML's URL, the pages' common URL. -->
  <xsl:param name="view" select="'xml'"/>
  <xsl:param name="xml-url" select="''"/>
  <xsl:param name="html-base" select="''"/>

  <!-- Read from the document: the site's name, and the site's URL (what comes before
       /sitemaps/ in the page for people's URL). -->
  <xsl:variable name="page-url" select="normalize-space(/processing-instruction('html-view'))"/>
  <xsl:variable name="site-url">
    <xsl:if test="contains($page-url, '/sitemaps/')"><xsl:value-of select="substring-before($page-url, '/sitemaps/')"/></xsl:if>
  </xsl:variable>
  <xsl:variable name="site-title" select="normalize-space(/processing-instruction('site-title'))"/>

  <xsl:template match="/">
    <html lang="en">
      <head>
        <meta charset="utf-8"/>
        <meta name="robots" content="noindex, follow"/>
        <meta name="viewport" content="width=device-width, initial-scale=1"/>
        <title>
          <xsl:apply-templates select="*" mode="title"/>
          <xsl:if test="$site-title"><xsl:value-of select="concat(' · ', $site-title)"/></xsl:if>
        </title>
        <xsl:call-template name="style"/>
      </head>
      <body>
        <xsl:call-template name="site"/>
        <xsl:call-template name="private"/>
        <xsl:apply-templates select="*"/>
        <xsl:call-template name="filter-script"/>
      </body>
    </html>
  </xsl:template>

  <xsl:template match="sitemap:sitemapindex" mode="title">XML Sitemap Index</xsl:template>
  <xsl:template match="sitemap:urlset" mode="title">XML Sitemap</xsl:template>

  <xsl:template match="sitemap:sitemapindex">
    <h1>XML Sitemap Index</h1>
    <xsl:call-template name="about"/>
    <p class="count" id="count">This XML sitemap index contains
      <strong><xsl:value-of select="count(sitemap:sitemap)"/></strong> sitemaps.</p>
    <xsl:call-template name="other-view"/>
    <xsl:call-template name="filter"><xsl:with-param name="rows" select="count(sitemap:sitemap)"/></xsl:call-template>
    <div class="scroll">
      <table id="sitemaps">
        <thead><tr><th>Sitemap</th><th class="number">URLs</th><th class="date">Last modified</th></tr></thead>
        <tbody>
          <xsl:for-each select="sitemap:sitemap">
            <xsl:variable name="name">
              <xsl:call-template name="document-name"><xsl:with-param name="url" select="sitemap:loc"/></xsl:call-template>
            </xsl:variable>
            <tr>
              <td class="url">
                <xsl:choose>
                  <xsl:when test="$view = 'html'">
                    <a href="{concat($html-base, $name, '.html')}"><xsl:value-of select="sitemap:loc"/></a>
                  </xsl:when>
                  <xsl:otherwise><a><xsl:call-template name="href"><xsl:with-param name="url" select="sitemap:loc"/></xsl:call-template><xsl:value-of select="sitemap:loc"/></a></xsl:otherwise>
                </xsl:choose>
              </td>
              <td class="number urls"><xsl:value-of select="normalize-space(processing-instruction('urls'))"/></td>
              <td class="date"><xsl:call-template name="date"><xsl:with-param name="value" select="sitemap:lastmod"/></xsl:call-template></td>
            </tr>
          </xsl:for-each>
        </tbody>
      </table>
    </div>
  </xsl:template>

  <xsl:template match="sitemap:urlset">
    <h1>XML Sitemap</h1>
    <xsl:call-template name="about"/>
    <p class="count" id="count">This XML sitemap contains
      <strong><xsl:value-of select="count(sitemap:url)"/></strong> URLs.</p>
    <xsl:call-template name="other-view"/>
    <xsl:call-template name="filter"><xsl:with-param name="rows" select="count(sitemap:url)"/></xsl:call-template>
    <div class="scroll">
      <table id="urls">
        <!-- A column of translations when some URL has them (hreflang, S-405). -->
        <xsl:variable name="translated" select="boolean(sitemap:url/xhtml:link[@rel = 'alternate'])"/>
        <thead><tr><th>URL</th><xsl:if test="$translated"><th class="translations">Translations</th></xsl:if><th class="number">Images</th><th class="date">Last modified</th></tr></thead>
        <tbody>
          <xsl:for-each select="sitemap:url">
            <tr>
              <td class="url"><a><xsl:call-template name="href"><xsl:with-param name="url" select="sitemap:loc"/></xsl:call-template><xsl:value-of select="sitemap:loc"/></a></td>
              <xsl:if test="$translated">
                <td class="translations">
                  <xsl:for-each select="xhtml:link[@rel = 'alternate']">
                    <xsl:if test="position() > 1"><xsl:text> </xsl:text></xsl:if>
                    <a hreflang="{@hreflang}" title="{@href}"><xsl:call-template name="href"><xsl:with-param name="url" select="@href"/></xsl:call-template><xsl:value-of select="@hreflang"/></a>
                  </xsl:for-each>
                </td>
              </xsl:if>
              <td class="number"><xsl:value-of select="count(image:image)"/></td>
              <td class="date"><xsl:call-template name="date"><xsl:with-param name="value" select="sitemap:lastmod"/></xsl:call-template></td>
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
    <p class="views">
      <xsl:choose>
        <xsl:when test="$view = 'html'">
          <a id="xml-view" href="{$xml-url}">View the XML</a>
          <xsl:if test="sitemap:url"> · <a id="index" href="{$html-base}">All sitemaps</a></xsl:if>
        </xsl:when>
        <xsl:otherwise>
          <xsl:if test="$page-url"><a id="html-view" href="{$page-url}">View as a web page</a></xsl:if>
          <xsl:if test="sitemap:url"> · <a id="index" href="{$site-url}/sitemap_index.xml">All sitemaps</a></xsl:if>
        </xsl:otherwise>
      </xsl:choose>
    </p>
  </xsl:template>

  <!-- The site's name, linked to its home page. -->
  <xsl:template name="site">
    <xsl:if test="$site-title">
      <p class="site" id="site"><a><xsl:call-template name="href"><xsl:with-param name="url" select="concat($site-url, '/')"/></xsl:call-template><xsl:value-of select="$site-title"/></a></p>
    </xsl:if>
  </xsl:template>

  <!-- A private site's notice: why its sitemaps list nothing, and how that changes. -->
  <xsl:template name="private">
    <xsl:variable name="why" select="normalize-space(/processing-instruction('site-private'))"/>
    <xsl:if test="$why">
      <p class="private" id="private" role="alert"><xsl:value-of select="$why"/></p>
    </xsl:if>
  </xsl:template>

  <!-- A box that filters the table's rows by what they say (URL, date, title), in the
       browser: filter-script, at the end of the page, does it. -->
  <xsl:template name="filter">
    <xsl:param name="rows" select="0"/>
    <xsl:if test="$rows &gt; 0">
      <p class="filter">
        <label for="filter">Find</label><xsl:text> </xsl:text>
        <input type="search" id="filter" autocomplete="off" placeholder="part of a URL, a date, a title"/>
        <xsl:text> </xsl:text><output id="shown" for="filter"></output>
      </p>
    </xsl:if>
  </xsl:template>

  <!-- Shows only the rows holding every word typed in the filter box, and how many. No
       script from anywhere else: this page runs only what it carries. -->
  <xsl:template name="filter-script">
    <script>
(function () {
  var input = document.getElementById("filter");
  if (!input) { return; }
  var rows = Array.prototype.slice.call(document.querySelectorAll("table tbody tr"));
  var texts = rows.map(function (row) { return row.textContent.toLowerCase(); });
  var shown = document.getElementById("shown");
  function filter() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var count = 0;
    rows.forEach(function (row, i) {
      var hit = words.every(function (word) { return texts[i].indexOf(word) !== -1; });
      row.hidden = !hit;
      if (hit) { count += 1; }
    });
    shown.textContent = words.length ? count + " of " + rows.length + " shown" : "";
  }
  input.addEventListener("input", filter);
  filter();
})();
    </script>
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

  <!-- "post-sitemap2" from "https://example.com/post-sitemap2.xml". -->
  <xsl:template name="document-name">
    <xsl:param name="url"/>
    <xsl:choose>
      <xsl:when test="contains($url, '/')">
        <xsl:call-template name="document-name"><xsl:with-param name="url" select="substring-after($url, '/')"/></xsl:call-template>
      </xsl:when>
      <xsl:otherwise><xsl:value-of select="substring-before($url, '.xml')"/></xsl:otherwise>
    </xsl:choose>
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
      td.translations { white-space: nowrap; }
      p.site { margin: 0; font-weight: 600; }
      p.private { background: #fff4e5; border-left: 4px solid #e08a00; padding: .6rem .8rem; max-width: 48rem; }
      p.filter input { font: inherit; padding: .2rem .4rem; width: 20rem; max-width: 60vw; }
      p.filter output { color: #555; }
      a { color: #1a4fb3; text-decoration: none; }
      a:hover { text-decoration: underline; }
      @media (max-width: 40rem) {
        body { margin: 1rem auto; font-size: 14px; }
        .date { width: auto; white-space: normal; }
        .offset { display: block; }
      }
    </style>
    <xsl:call-template name="style-extra"/>
  </xsl:template>

  <!-- A plugin's stylesheet adds its own rules here. -->
  <xsl:template name="style-extra"/>
</xsl:stylesheet>
