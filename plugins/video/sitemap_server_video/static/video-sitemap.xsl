<?xml version="1.0" encoding="UTF-8"?>
<!-- Renders a video sitemap as a readable page: one row per video (S-308, S-503). -->
<xsl:stylesheet version="1.0"
    xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
    xmlns:sitemap="http://www.sitemaps.org/schemas/sitemap/0.9"
    xmlns:video="http://www.google.com/schemas/sitemap-video/1.1">
  <xsl:output method="html" version="1.0" encoding="UTF-8" indent="yes"/>
  <xsl:template match="/">
    <html lang="en">
      <head>
        <meta charset="utf-8"/>
        <meta name="robots" content="noindex, follow"/>
        <meta name="viewport" content="width=device-width, initial-scale=1"/>
        <title>Video Sitemap</title>
        <style>
          body { font: 15px/1.5 system-ui, sans-serif; color: #222; margin: 2rem auto; max-width: 76rem; padding: 0 1rem; }
          h1 { font-size: 1.6rem; margin-bottom: .25rem; }
          p.intro { color: #555; margin-top: 0; }
          table { border-collapse: collapse; width: 100%; }
          th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid #e3e3e3; vertical-align: top; }
          th { background: #f4f4f6; font-weight: 600; }
          td.thumb img { width: 8rem; height: auto; display: block; }
          td.number, td.date { white-space: nowrap; }
          td.description { color: #444; font-size: .9rem; max-width: 28rem; }
          a { color: #1a4fb3; text-decoration: none; word-break: break-all; }
          a:hover { text-decoration: underline; }
        </style>
      </head>
      <body>
        <h1>Video Sitemap</h1>
        <p class="intro">This sitemap lists <xsl:value-of select="count(sitemap:urlset/sitemap:url/video:video)"/> videos
          on <xsl:value-of select="count(sitemap:urlset/sitemap:url)"/> pages.
          <a href="/sitemap_index.xml">Back to the index</a>.</p>
        <table>
          <thead><tr><th>Thumbnail</th><th>Title</th><th>Description</th><th>Duration</th><th>Published</th></tr></thead>
          <tbody>
            <xsl:for-each select="sitemap:urlset/sitemap:url/video:video">
              <tr>
                <td class="thumb"><img src="{video:thumbnail_loc}" alt="" loading="lazy"/></td>
                <td class="title"><a href="{../sitemap:loc}"><xsl:value-of select="video:title"/></a></td>
                <td class="description"><xsl:value-of select="video:description"/></td>
                <td class="number">
                  <xsl:if test="video:duration">
                    <xsl:value-of select="floor(video:duration div 60)"/>:<xsl:value-of select="format-number(video:duration mod 60, '00')"/>
                  </xsl:if>
                </td>
                <td class="date"><xsl:value-of select="concat(substring(video:publication_date, 1, 10), ' ', substring(video:publication_date, 12, 5))"/></td>
              </tr>
            </xsl:for-each>
          </tbody>
        </table>
      </body>
    </html>
  </xsl:template>
</xsl:stylesheet>
