
/*
 * A show's podcast feed: GET /v1/feeds/podcasts/{showId}.xml, no
 * credential (what a podcast directory fetches), RSS 2.0 with the iTunes
 * namespace.  Its published episodes whose time has come, newest first
 * (at most NGX_HTTP_CMS_FEED_ITEMS).  Every text goes through cms_xml
 * (escaped, never CDATA, so "]]>" in a title ends nothing).  A strong
 * ETag (the body's SHA-256) lets nginx's not-modified filter answer a
 * matching If-None-Match with 304; Cache-Control lets a CDN keep it a few
 * minutes.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_response_cache.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_pg.h"
#include "cms_uuid.h"
#include "cms_xml.h"


#define NGX_HTTP_CMS_FEED_ITEMS     "300"

/* the markup around the values, at most: the channel's, an item's */
#define NGX_HTTP_CMS_FEED_CHANNEL   1024
#define NGX_HTTP_CMS_FEED_ITEM      512

/* the columns: the show's (every row), then one episode's (or NULLs) */
enum {
    NGX_HTTP_CMS_FEED_TITLE = 0,
    NGX_HTTP_CMS_FEED_DESCRIPTION,
    NGX_HTTP_CMS_FEED_IMAGE,
    NGX_HTTP_CMS_FEED_LINK,
    NGX_HTTP_CMS_FEED_AUTHOR,
    NGX_HTTP_CMS_FEED_LANGUAGE,
    NGX_HTTP_CMS_FEED_CATEGORY,
    NGX_HTTP_CMS_FEED_EXPLICIT,
    NGX_HTTP_CMS_FEED_BUILT,
    NGX_HTTP_CMS_FEED_EP_ID,
    NGX_HTTP_CMS_FEED_EP_TITLE,
    NGX_HTTP_CMS_FEED_EP_DESCRIPTION,
    NGX_HTTP_CMS_FEED_EP_URL,
    NGX_HTTP_CMS_FEED_EP_TYPE,
    NGX_HTTP_CMS_FEED_EP_SIZE,
    NGX_HTTP_CMS_FEED_EP_DURATION,
    NGX_HTTP_CMS_FEED_EP_NUMBER,
    NGX_HTTP_CMS_FEED_EP_DATE,
    NGX_HTTP_CMS_FEED_COLUMNS
};


static ngx_int_t ngx_http_cms_feed_get(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_feed_got(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static u_char *ngx_http_cms_feed_channel(u_char *p, PGresult *res,
    ngx_str_t *self);
static u_char *ngx_http_cms_feed_item(u_char *p, PGresult *res, int row);
static u_char *ngx_http_cms_feed_el(u_char *p, const char *open,
    PGresult *res, int row, int col, const char *close);
static u_char *ngx_http_cms_feed_text(u_char *p, const u_char *s,
    size_t len);
static ngx_int_t ngx_http_cms_feed_self(ngx_http_request_t *r,
    ngx_str_t *self);


static ngx_str_t  ngx_http_cms_feed_type =
    ngx_string("application/rss+xml; charset=utf-8");


static ngx_http_cms_pg_stmt_t  ngx_http_cms_feed_sql =
    ngx_http_cms_pg_stmt(
        "SELECT s.title, s.description, s.image_url, s.link, s.author,"
        " s.language, s.category, s.explicit,"
        " cms_rfc822(greatest(s.updated_at, u.at)),"
        " e.id, e.title, e.description, e.audio_url, e.audio_type,"
        " e.audio_size_bytes, e.duration_seconds, e.episode_number,"
        " cms_rfc822(e.published_at)"
        " FROM podcast_shows s"
        /* once, not once an item: the newest change of an episode */
        " CROSS JOIN LATERAL (SELECT max(x.updated_at) AS at"
        "  FROM podcast_episodes x WHERE x.show_id = s.id) u"
        " LEFT JOIN LATERAL (SELECT * FROM podcast_episodes e"
        "  WHERE e.show_id = s.id AND e.status = 'published'"
        "   AND e.published_at <= now()"
        "  ORDER BY e.published_at DESC, e.id DESC"
        "  LIMIT " NGX_HTTP_CMS_FEED_ITEMS ") e ON true"
        " WHERE s.id = $1", 1);


ngx_http_cms_route_t  ngx_http_cms_podcasts_feed_routes[] = {

    { NGX_HTTP_GET, ngx_string("/feeds/podcasts/:file"),
      NGX_HTTP_CMS_AUTH_NONE, 0,
      ngx_http_cms_feed_get, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


/* "<show id>.xml" */
static ngx_int_t
ngx_http_cms_feed_get(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  *file, id;

    file = &ctx->params[0];

    if (file->len != CMS_UUID_LEN + 4
        || ngx_strncmp(file->data + CMS_UUID_LEN, ".xml", 4) != 0
        || !cms_uuid_valid((char *) file->data, CMS_UUID_LEN))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    id.data = file->data;
    id.len = CMS_UUID_LEN;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_feed_sql, &id, 1,
                                 ngx_http_cms_feed_got);
}


/* long: the size bound, then the document, then the answer */
static ngx_int_t
ngx_http_cms_feed_got(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    int        row, rows, col;
    size_t     len;
    u_char    *p;
    ngx_int_t  rc;
    ngx_str_t  self, body;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    rows = PQntuples(res);

    if (rows == 0) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    if (PQnfields(res) != NGX_HTTP_CMS_FEED_COLUMNS) {
        return NGX_ERROR;
    }

    if (ngx_http_cms_feed_self(r, &self) != NGX_OK) {
        return NGX_ERROR;
    }

    if (PQgetisnull(res, 0, NGX_HTTP_CMS_FEED_EP_ID)) {
        rows = 0;
    }

    /* every value may grow six times when escaped; the self URL twice */
    len = NGX_HTTP_CMS_FEED_CHANNEL + 2 * cms_xml_escaped_max(self.len);

    for (col = 0; col < NGX_HTTP_CMS_FEED_EP_ID; col++) {
        len += cms_xml_escaped_max((size_t) PQgetlength(res, 0, col));
    }

    for (row = 0; row < rows; row++) {
        len += NGX_HTTP_CMS_FEED_ITEM;

        for (col = NGX_HTTP_CMS_FEED_EP_ID; col < NGX_HTTP_CMS_FEED_COLUMNS;
             col++)
        {
            len += cms_xml_escaped_max((size_t) PQgetlength(res, row, col));
        }
    }

    body.data = ngx_pnalloc(r->pool, len);
    if (body.data == NULL) {
        return NGX_ERROR;
    }

    p = ngx_http_cms_feed_channel(body.data, res, &self);

    for (row = 0; row < rows; row++) {
        p = ngx_http_cms_feed_item(p, res, row);
    }

    p = ngx_cpymem(p, "</channel>\n</rss>\n",
                   sizeof("</channel>\n</rss>\n") - 1);
    body.len = p - body.data;

    return ngx_http_cms_send_cached(r, &ngx_http_cms_feed_type, &body, NULL);
}


/* the document's head and the channel's elements (markup bounded by
   NGX_HTTP_CMS_FEED_CHANNEL) */
static u_char *
ngx_http_cms_feed_channel(u_char *p, PGresult *res, ngx_str_t *self)
{
    ngx_str_t  link;

    p = ngx_sprintf(p, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<rss version=\"2.0\""
        " xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\""
        " xmlns:atom=\"http://www.w3.org/2005/Atom\">\n<channel>\n");

    p = ngx_http_cms_feed_el(p, "<title>", res, 0, NGX_HTTP_CMS_FEED_TITLE,
                             "</title>\n");

    /* the show's site, else the feed itself */
    link.data = (u_char *) PQgetvalue(res, 0, NGX_HTTP_CMS_FEED_LINK);
    link.len = PQgetlength(res, 0, NGX_HTTP_CMS_FEED_LINK);

    if (link.len == 0) {
        link = *self;
    }

    p = ngx_cpymem(p, "<link>", 6);
    p = ngx_http_cms_feed_text(p, link.data, link.len);
    p = ngx_cpymem(p, "</link>\n", 8);

    p = ngx_http_cms_feed_el(p, "<description>", res, 0,
                             NGX_HTTP_CMS_FEED_DESCRIPTION,
                             "</description>\n");
    p = ngx_http_cms_feed_el(p, "<language>", res, 0,
                             NGX_HTTP_CMS_FEED_LANGUAGE, "</language>\n");
    p = ngx_http_cms_feed_el(p, "<lastBuildDate>", res, 0,
                             NGX_HTTP_CMS_FEED_BUILT, "</lastBuildDate>\n");

    p = ngx_cpymem(p, "<atom:link href=\"", 17);
    p = ngx_http_cms_feed_text(p, self->data, self->len);
    p = ngx_sprintf(p, "\" rel=\"self\" type=\"application/rss+xml\"/>\n");

    p = ngx_http_cms_feed_el(p, "<itunes:author>", res, 0,
                             NGX_HTTP_CMS_FEED_AUTHOR, "</itunes:author>\n");
    p = ngx_http_cms_feed_el(p, "<itunes:image href=\"", res, 0,
                             NGX_HTTP_CMS_FEED_IMAGE, "\"/>\n");
    p = ngx_http_cms_feed_el(p, "<itunes:category text=\"", res, 0,
                             NGX_HTTP_CMS_FEED_CATEGORY, "\"/>\n");

    return ngx_sprintf(p, "<itunes:explicit>%s</itunes:explicit>\n"
                       "<itunes:type>episodic</itunes:type>\n",
                       PQgetvalue(res, 0, NGX_HTTP_CMS_FEED_EXPLICIT)[0]
                       == 't' ? "true" : "false");
}


/* one episode (markup bounded by NGX_HTTP_CMS_FEED_ITEM) */
static u_char *
ngx_http_cms_feed_item(u_char *p, PGresult *res, int row)
{
    p = ngx_cpymem(p, "<item>\n", 7);
    p = ngx_http_cms_feed_el(p, "<title>", res, row,
                             NGX_HTTP_CMS_FEED_EP_TITLE, "</title>\n");
    p = ngx_http_cms_feed_el(p, "<description>", res, row,
                             NGX_HTTP_CMS_FEED_EP_DESCRIPTION,
                             "</description>\n");
    p = ngx_http_cms_feed_el(p, "<enclosure url=\"", res, row,
                             NGX_HTTP_CMS_FEED_EP_URL, "\"");
    p = ngx_http_cms_feed_el(p, " length=\"", res, row,
                             NGX_HTTP_CMS_FEED_EP_SIZE, "\"");
    p = ngx_http_cms_feed_el(p, " type=\"", res, row,
                             NGX_HTTP_CMS_FEED_EP_TYPE, "\"/>\n");
    p = ngx_http_cms_feed_el(p, "<guid isPermaLink=\"false\">", res, row,
                             NGX_HTTP_CMS_FEED_EP_ID, "</guid>\n");
    p = ngx_http_cms_feed_el(p, "<pubDate>", res, row,
                             NGX_HTTP_CMS_FEED_EP_DATE, "</pubDate>\n");
    p = ngx_http_cms_feed_el(p, "<itunes:duration>", res, row,
                             NGX_HTTP_CMS_FEED_EP_DURATION,
                             "</itunes:duration>\n");
    p = ngx_http_cms_feed_el(p, "<itunes:episode>", res, row,
                             NGX_HTTP_CMS_FEED_EP_NUMBER,
                             "</itunes:episode>\n");

    return ngx_cpymem(p, "</item>\n", 8);
}


/*
 * open, the column's text escaped, close; nothing for NULL, nor for ""
 * in an optional element of the show (author, image, category) or an
 * episode's description
 */
static u_char *
ngx_http_cms_feed_el(u_char *p, const char *open, PGresult *res, int row,
    int col, const char *close)
{
    size_t  len;

    len = PQgetlength(res, row, col);

    if (PQgetisnull(res, row, col)
        || (len == 0
            && (col == NGX_HTTP_CMS_FEED_AUTHOR
                || col == NGX_HTTP_CMS_FEED_IMAGE
                || col == NGX_HTTP_CMS_FEED_CATEGORY
                || col == NGX_HTTP_CMS_FEED_EP_DESCRIPTION)))
    {
        return p;
    }

    p = ngx_cpymem(p, open, ngx_strlen(open));
    p = ngx_http_cms_feed_text(p, (u_char *) PQgetvalue(res, row, col), len);

    return ngx_cpymem(p, close, ngx_strlen(close));
}


static u_char *
ngx_http_cms_feed_text(u_char *p, const u_char *s, size_t len)
{
    return p + cms_xml_escape((const char *) s, len, (char *) p);
}


/* the feed's own URL: the scheme nginx received, the Host nginx checked */
static ngx_int_t
ngx_http_cms_feed_self(ngx_http_request_t *r, ngx_str_t *self)
{
    u_char      *p;
    ngx_str_t    host;
    const char  *scheme;

    scheme = "http";

#if (NGX_HTTP_SSL)
    if (r->connection->ssl) {
        scheme = "https";
    }
#endif

    host = r->headers_in.server;

    if (host.len == 0) {
        ngx_str_set(&host, "localhost");
    }

    p = ngx_pnalloc(r->pool, sizeof("https://") + host.len + r->uri.len);
    if (p == NULL) {
        return NGX_ERROR;
    }

    self->data = p;
    self->len = ngx_sprintf(p, "%s://%V%V", scheme, &host, &r->uri) - p;

    return NGX_OK;
}
