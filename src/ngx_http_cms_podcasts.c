
/*
 * Podcasts: shows and their episodes.
 *
 * A show is a studio concept: created, changed and deleted under
 * /v1/workspaces/{id}/podcast-shows (session, editors and up); a secret
 * key with podcasts:read lists and reads them (so that an integration can
 * find the show it publishes into), as does every member.  Episodes are
 * published into an existing show of the workspace with POST
 * /v1/api/podcast-episodes (404 for any other show) and listed with GET
 * /v1/api/podcast-episodes?show_id=.  The feed of a show is
 * ngx_http_cms_podcasts_feed.c.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_json.h"
#include "ngx_http_cms_list.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_auth.h"
#include "ngx_http_cms_pg.h"
#include "cms_fields.h"
#include "cms_validate.h"
#include "cms_text.h"
#include "cms_uuid.h"
#include "cms_url.h"


#define NGX_HTTP_CMS_SHOW_ARGS  11


static ngx_int_t ngx_http_cms_shows_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_shows_get(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_shows_create(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_shows_update(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_shows_delete(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_shows_read(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, int mode, ngx_str_t *args);
static ngx_int_t ngx_http_cms_episodes_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_episodes_create(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static int ngx_http_cms_podcasts_audio_type(const char *p, size_t len);


/* shows: 0 (a list's total), the show, where its feed is */
#define NGX_HTTP_CMS_SHOW_COLUMNS                                            \
    " s.id, s.title, s.slug, s.description, s.image_url, s.link, s.author,"  \
    " s.language, s.category, s.explicit,"                                   \
    " '/v1/feeds/podcasts/' || s.id || '.xml',"                              \
    " s.created_at, s.updated_at"

static const ngx_http_cms_col_t  ngx_http_cms_show_cols[] = {
    { "id", 1, NGX_HTTP_CMS_COL_STRING },
    { "title", 2, NGX_HTTP_CMS_COL_STRING },
    { "slug", 3, NGX_HTTP_CMS_COL_STRING },
    { "description", 4, NGX_HTTP_CMS_COL_STRING },
    { "image_url", 5, NGX_HTTP_CMS_COL_STRING },
    { "link", 6, NGX_HTTP_CMS_COL_STRING },
    { "author", 7, NGX_HTTP_CMS_COL_STRING },
    { "language", 8, NGX_HTTP_CMS_COL_STRING },
    { "category", 9, NGX_HTTP_CMS_COL_STRING },
    { "explicit", 10, NGX_HTTP_CMS_COL_BOOL },
    { "feed_path", 11, NGX_HTTP_CMS_COL_STRING },
    { "created_at", 12, NGX_HTTP_CMS_COL_TIME },
    { "updated_at", 13, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_show = {
    "podcast_show", "podcast_shows", ngx_http_cms_show_cols,
    sizeof(ngx_http_cms_show_cols) / sizeof(ngx_http_cms_col_t)
};

/* episodes: 0 (a list's total) and the episode */
#define NGX_HTTP_CMS_EPISODE_COLUMNS                                         \
    " e.id, e.show_id, e.title, e.description, e.audio_url, e.audio_type,"   \
    " e.audio_size_bytes, e.duration_seconds, e.episode_number, e.status,"   \
    " e.published_at, e.created_at, e.updated_at"

static const ngx_http_cms_col_t  ngx_http_cms_episode_cols[] = {
    { "id", 1, NGX_HTTP_CMS_COL_STRING },
    { "show_id", 2, NGX_HTTP_CMS_COL_STRING },
    { "title", 3, NGX_HTTP_CMS_COL_STRING },
    { "description", 4, NGX_HTTP_CMS_COL_STRING },
    { "audio_url", 5, NGX_HTTP_CMS_COL_STRING },
    { "audio_type", 6, NGX_HTTP_CMS_COL_STRING },
    { "audio_size_bytes", 7, NGX_HTTP_CMS_COL_NUMBER },
    { "duration_seconds", 8, NGX_HTTP_CMS_COL_NUMBER },
    { "episode_number", 9, NGX_HTTP_CMS_COL_NUMBER },
    { "status", 10, NGX_HTTP_CMS_COL_STRING },
    { "published_at", 11, NGX_HTTP_CMS_COL_TIME },
    { "created_at", 12, NGX_HTTP_CMS_COL_TIME },
    { "updated_at", 13, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_episode = {
    "podcast_episode", "podcast_episodes", ngx_http_cms_episode_cols,
    sizeof(ngx_http_cms_episode_cols) / sizeof(ngx_http_cms_col_t)
};


/*
 * A show's body: $2 title, $3 slug, $4 description, $5 image_url, $6 link,
 * $7 author, $8 language, $9 category, $10 explicit ($1 the workspace,
 * $11 the show on update).  null keeps the default or the current value.
 */
static const char *const  ngx_http_cms_shows_ignored[] = {
    "id", "feed_path", "created_at", "updated_at", NULL
};

static const cms_field_t  ngx_http_cms_shows_fields[] = {
    { "title", CMS_FIELD_STRING, CMS_FIELD_REQUIRED | CMS_FIELD_NONEMPTY
      | CMS_FIELD_NULL_ABSENT, 2, NGX_HTTP_CMS_ERR_TITLE_REQUIRED, 0,
      1, 500, NULL, NULL, 0, NULL },
    { "slug", CMS_FIELD_STRING, CMS_FIELD_NULL_ABSENT, 3, 0, 0, 0, 1000,
      NULL, cms_slug_valid, NGX_HTTP_CMS_ERR_INVALID_SLUG, NULL },
    { "description", CMS_FIELD_STRING, CMS_FIELD_NULL_ABSENT, 4, 0, 0,
      0, 10000, NULL, NULL, 0, NULL },
    { "image_url", CMS_FIELD_STRING, CMS_FIELD_NULL_ABSENT, 5, 0, 0, 0,
      CMS_URL_MAX, NULL, cms_url_http_valid_or_empty,
      NGX_HTTP_CMS_ERR_INVALID_URL, NULL },
    { "link", CMS_FIELD_STRING, CMS_FIELD_NULL_ABSENT, 6, 0, 0, 0,
      CMS_URL_MAX, NULL, cms_url_http_valid_or_empty,
      NGX_HTTP_CMS_ERR_INVALID_URL, NULL },
    { "author", CMS_FIELD_STRING, CMS_FIELD_NULL_ABSENT, 7, 0, 0, 0, 200,
      NULL, NULL, 0, NULL },
    { "language", CMS_FIELD_STRING, CMS_FIELD_NULL_ABSENT, 8, 0, 0, 0, 35,
      NULL, cms_locale_valid, 0, NULL },
    { "category", CMS_FIELD_STRING, CMS_FIELD_NULL_ABSENT, 9, 0, 0, 0, 100,
      NULL, NULL, 0, NULL },
    { "explicit", CMS_FIELD_BOOLEAN, CMS_FIELD_NULL_ABSENT, 10, 0, 0, 0, 0,
      NULL, NULL, 0, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_shows_input = {
    ngx_http_cms_shows_fields, ngx_http_cms_shows_ignored,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};

/*
 * An episode's body: $2 show_id, $3 title, $4 description, $5 audio_url,
 * $6 audio_type, $7 audio_size_bytes, $8 duration_seconds,
 * $9 episode_number, $10 status, $11 published_at ($1 the workspace).
 */
static const char *const  ngx_http_cms_episodes_statuses[] = {
    "draft", "published", NULL
};

static const char *const  ngx_http_cms_episodes_ignored[] = {
    "id", "created_at", "updated_at", NULL
};

static const cms_field_t  ngx_http_cms_episodes_fields[] = {
    { "show_id", CMS_FIELD_STRING, CMS_FIELD_REQUIRED, 2,
      NGX_HTTP_CMS_ERR_ID_REQUIRED, 0, 0, 36, NULL, cms_uuid_valid, 0,
      NULL },
    { "title", CMS_FIELD_STRING, CMS_FIELD_REQUIRED | CMS_FIELD_NONEMPTY, 3,
      NGX_HTTP_CMS_ERR_TITLE_REQUIRED, 0, 1, 500, NULL, NULL, 0, NULL },
    { "description", CMS_FIELD_STRING, CMS_FIELD_NULL_ABSENT, 4, 0, 0, 0,
      10000, NULL, NULL, 0, NULL },
    { "audio_url", CMS_FIELD_STRING, CMS_FIELD_REQUIRED | CMS_FIELD_NONEMPTY,
      5, NGX_HTTP_CMS_ERR_URL_REQUIRED, 0, 1, CMS_URL_MAX, NULL,
      cms_url_http_valid, NGX_HTTP_CMS_ERR_INVALID_URL, NULL },
    { "audio_type", CMS_FIELD_STRING, CMS_FIELD_NULL_ABSENT, 6, 0, 0, 0, 100,
      NULL, ngx_http_cms_podcasts_audio_type, 0, NULL },
    { "audio_size_bytes", CMS_FIELD_INTEGER, CMS_FIELD_NULL_ABSENT, 7, 0, 0,
      0, 9007199254740991LL, NULL, NULL, 0, NULL },
    { "duration_seconds", CMS_FIELD_INTEGER, CMS_FIELD_NULLABLE, 8, 0, 0,
      0, 1000000, NULL, NULL, 0, NULL },
    { "episode_number", CMS_FIELD_INTEGER, CMS_FIELD_NULLABLE, 9, 0, 0,
      1, 1000000, NULL, NULL, 0, NULL },
    { "status", CMS_FIELD_STRING, CMS_FIELD_NULL_ABSENT, 10, 0, 0, 0, 20,
      ngx_http_cms_episodes_statuses, NULL, NGX_HTTP_CMS_ERR_INVALID_STATUS,
      NULL },
    { "published_at", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 11, 0, 0, 0, 64,
      NULL, cms_rfc3339_valid, 0, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_episodes_input = {
    ngx_http_cms_episodes_fields, ngx_http_cms_episodes_ignored,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};


static ngx_http_cms_pg_stmt_t  ngx_http_cms_shows_insert_sql =
    ngx_http_cms_pg_stmt(
        "INSERT INTO podcast_shows AS s (workspace_id, title, slug,"
        " description, image_url, link, author, language, category,"
        " explicit)"
        " VALUES ($1, $2,"
        "  CASE WHEN $11::boolean THEN cms_show_slug_free($1, $3) ELSE $3 END,"
        "  coalesce($4, ''), coalesce($5, ''),"
        "  coalesce($6, ''), coalesce($7, ''), coalesce($8, 'en'),"
        "  coalesce($9, ''), coalesce($10::boolean, false))"
        " RETURNING 0," NGX_HTTP_CMS_SHOW_COLUMNS, 11);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_shows_update_sql =
    ngx_http_cms_pg_stmt(
        "UPDATE podcast_shows AS s SET title = coalesce($2, title),"
        " slug = coalesce($3, slug),"
        " description = coalesce($4, description),"
        " image_url = coalesce($5, image_url), link = coalesce($6, link),"
        " author = coalesce($7, author), language = coalesce($8, language),"
        " category = coalesce($9, category),"
        " explicit = coalesce($10::boolean, explicit), updated_at = now()"
        " WHERE s.workspace_id = $1 AND s.id = $11"
        " RETURNING 0," NGX_HTTP_CMS_SHOW_COLUMNS, 11);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_shows_get_sql =
    ngx_http_cms_pg_stmt(
        "SELECT 0," NGX_HTTP_CMS_SHOW_COLUMNS " FROM podcast_shows s"
        " WHERE s.workspace_id = $1 AND s.id = $2", 2);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_shows_delete_sql =
    ngx_http_cms_pg_stmt(
        "DELETE FROM podcast_shows WHERE workspace_id = $1 AND id = $2"
        " RETURNING id", 2);

/* $1 workspace, $2 limit, $3 offset; past the end, one row of NULLs */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_shows_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT t.total, p.* FROM"
        " (SELECT count(*) AS total FROM podcast_shows"
        "   WHERE workspace_id = $1) t"
        " LEFT JOIN LATERAL (SELECT" NGX_HTTP_CMS_SHOW_COLUMNS
        "  FROM podcast_shows s WHERE s.workspace_id = $1"
        "  ORDER BY s.created_at DESC, s.id DESC LIMIT $2 OFFSET $3) p"
        " ON true", 3);

/*
 * Into a show of the workspace only (no row: 404).  A published episode
 * without a time is published now; one with a time to come appears in
 * the feed from then on.
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_episodes_insert_sql =
    ngx_http_cms_pg_stmt(
        "INSERT INTO podcast_episodes AS e (workspace_id, show_id, title,"
        " description, audio_url, audio_type, audio_size_bytes,"
        " duration_seconds, episode_number, status, published_at)"
        " SELECT $1, s.id, $3, coalesce($4, ''), $5,"
        "  coalesce($6, 'audio/mpeg'), coalesce($7::bigint, 0),"
        "  $8::integer, $9::integer, coalesce($10, 'draft'),"
        "  CASE WHEN $10 = 'published'"
        "   THEN coalesce($11::timestamptz, now())"
        "   ELSE $11::timestamptz END"
        " FROM podcast_shows s WHERE s.workspace_id = $1 AND s.id = $2"
        " RETURNING 0," NGX_HTTP_CMS_EPISODE_COLUMNS, 11);

/*
 * $1 workspace, $2 show or NULL, $3 status or NULL, $4 limit, $5 offset;
 * the total from the counters kept by the writes (sql/0044)
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_episodes_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT t.total, p.* FROM"
        " (SELECT cms_record_total_of('episodes', $1, $2::uuid, $3::text)"
        "   AS total OFFSET 0) t"
        " LEFT JOIN LATERAL (SELECT" NGX_HTTP_CMS_EPISODE_COLUMNS
        "  FROM podcast_episodes e WHERE e.workspace_id = $1"
        "   AND ($2::uuid IS NULL OR e.show_id = $2)"
        "   AND ($3::text IS NULL OR e.status = $3)"
        "  ORDER BY e.created_at DESC, e.id DESC LIMIT $4 OFFSET $5) p"
        " ON true", 5);


/*
 * The list searched (docs/search.md): $1 .. $5 as above, $6 the query,
 * read in the workspace's language (an episode's words are its show's).
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_episodes_search_sql =
    ngx_http_cms_pg_stmt(NGX_HTTP_CMS_SEARCH(
        "(SELECT default_locale AS locale FROM workspaces WHERE id = $1) l",
        "podcast_episodes e", "e",
        "e.workspace_id = $1 AND ($2::uuid IS NULL OR e.show_id = $2)"
        " AND ($3::text IS NULL OR e.status = $3)",
        "e.title", NGX_HTTP_CMS_EPISODE_COLUMNS,
        "cms_html_escape(e.description)", "$6", "$4", "$5"), 6);


#define NGX_HTTP_CMS_POD_READ   NGX_HTTP_CMS_SCOPE_PODCASTS_READ
#define NGX_HTTP_CMS_POD_WRITE  NGX_HTTP_CMS_SCOPE_PODCASTS_WRITE


/*
 * Any member reads; authors and up publish episodes (publish rights, as
 * for articles); editors and up manage shows, in the studio only.
 */
ngx_http_cms_route_t  ngx_http_cms_podcasts_routes[] = {

    { NGX_HTTP_GET, ngx_string("/api/podcast-shows"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_POD_READ,
      ngx_http_cms_shows_list, NULL, NULL,
      NGX_HTTP_CMS_ROLE_VIEWER },

    { NGX_HTTP_GET, ngx_string("/api/podcast-shows/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_POD_READ,
      ngx_http_cms_shows_get, NULL, NULL,
      NGX_HTTP_CMS_ROLE_VIEWER },

    { NGX_HTTP_POST, ngx_string("/workspaces/:ws/podcast-shows"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_EDITOR,
      ngx_http_cms_shows_create, NULL, NULL, 0 },

    { NGX_HTTP_PATCH, ngx_string("/workspaces/:ws/podcast-shows/:id"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_EDITOR,
      ngx_http_cms_shows_update, NULL, NULL, 0 },

    { NGX_HTTP_DELETE, ngx_string("/workspaces/:ws/podcast-shows/:id"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_EDITOR,
      ngx_http_cms_shows_delete, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/api/podcast-episodes"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_POD_READ,
      ngx_http_cms_episodes_list, NULL, NULL,
      NGX_HTTP_CMS_ROLE_VIEWER },

    { NGX_HTTP_POST, ngx_string("/api/podcast-episodes"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_POD_WRITE,
      ngx_http_cms_episodes_create, NULL, NULL,
      NGX_HTTP_CMS_ROLE_AUTHOR },

    ngx_http_cms_null_route
};


/* shows */

static ngx_int_t
ngx_http_cms_shows_list(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[3];

    args[0] = ctx->principal.workspace_id;

    return ngx_http_cms_list_query(r, &ngx_http_cms_shows_list_sql, args, 3,
                                   &ngx_http_cms_show);
}


static ngx_int_t
ngx_http_cms_shows_get(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[2];

    rc = ngx_http_cms_path_id(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    ctx->data = (void *) &ngx_http_cms_show;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_shows_get_sql, args, 2,
                                 ngx_http_cms_row_done);
}


static ngx_int_t
ngx_http_cms_shows_create(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[NGX_HTTP_CMS_SHOW_ARGS];

    rc = ngx_http_cms_shows_read(r, ctx, CMS_FIELDS_CREATE, args);
    if (rc != NGX_OK) {
        return rc;
    }

    ctx->data = (void *) &ngx_http_cms_show;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_shows_insert_sql, args, 11,
                                 ngx_http_cms_row_done);
}


static ngx_int_t
ngx_http_cms_shows_update(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[NGX_HTTP_CMS_SHOW_ARGS], id[2];

    rc = ngx_http_cms_path_id(r, ctx, id);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_cms_shows_read(r, ctx, CMS_FIELDS_PATCH, args);
    if (rc != NGX_OK) {
        return rc;
    }

    args[10] = id[1];
    ctx->data = (void *) &ngx_http_cms_show;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_shows_update_sql, args, 11,
                                 ngx_http_cms_row_done);
}


static ngx_int_t
ngx_http_cms_shows_delete(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[2];

    rc = ngx_http_cms_path_id(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_shows_delete_sql, args, 2,
                                 ngx_http_cms_deleted_done);
}


/* the body into $1..$10 (args[0..9]); a new show's slug from its title,
   $11 (args[10]) true when derived */
static ngx_int_t
ngx_http_cms_shows_read(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    int mode, ngx_str_t *args)
{
    ngx_int_t  rc;

    args[0] = ctx->principal.workspace_id;

    rc = ngx_http_cms_json_read(r, ctx->body, &ngx_http_cms_shows_input,
                                mode, args, 10);
    if (rc != NGX_OK) {
        return rc;
    }

    ngx_str_null(&args[10]);

    if (mode != CMS_FIELDS_CREATE || args[2].data != NULL) {
        /* given: checked as given, and a taken one answers slug_taken */
        return ngx_http_cms_json_slug(r, &args[2], NULL);
    }

    /* derived in every script; the statement takes the first free one */
    ngx_str_set(&args[10], "t");

    return ngx_http_cms_json_slug_text(r, &args[1], &args[2]);
}


/* episodes */

static ngx_int_t
ngx_http_cms_episodes_list(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[6];

    args[0] = ctx->principal.workspace_id;

    rc = ngx_http_cms_list_filter(r, "show_id", NULL, 0, &args[1]);
    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return rc;
    }

    rc = ngx_http_cms_list_filter(r, "status", ngx_http_cms_episodes_statuses,
                                  NGX_HTTP_CMS_ERR_INVALID_STATUS, &args[2]);
    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return rc;
    }

    rc = ngx_http_cms_list_search_arg(r, &args[5]);

    if (rc == NGX_OK) {
        return ngx_http_cms_list_search(r, &ngx_http_cms_episodes_search_sql,
                                        args, 6, &ngx_http_cms_episode,
                                        &args[5]);
    }

    if (rc != NGX_DECLINED) {
        return rc;
    }

    return ngx_http_cms_list_query(r, &ngx_http_cms_episodes_list_sql, args,
                                   5, &ngx_http_cms_episode);
}


static ngx_int_t
ngx_http_cms_episodes_create(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[11];

    args[0] = ctx->principal.workspace_id;

    rc = ngx_http_cms_json_read(r, ctx->body, &ngx_http_cms_episodes_input,
                                CMS_FIELDS_CREATE, args, 11);
    if (rc != NGX_OK) {
        return rc;
    }

    ctx->data = (void *) &ngx_http_cms_episode;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_episodes_insert_sql, args,
                                 11, ngx_http_cms_row_done);
}


/* "audio/<subtype>" or "video/<subtype>": what a podcast app plays */
static int
ngx_http_cms_podcasts_audio_type(const char *p, size_t len)
{
    size_t  i;

    if (len < 7
        || (ngx_strncmp(p, "audio/", 6) != 0
            && ngx_strncmp(p, "video/", 6) != 0))
    {
        return 0;
    }

    for (i = 6; i < len; i++) {
        if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9')
              || p[i] == '.' || p[i] == '+' || p[i] == '-'))
        {
            return 0;
        }
    }

    return 1;
}

