
/*
 * Newsletter subscribers: /v1/api/subscribers (secret key) and the studio
 * mirrors, and the unsubscribe link, POST /v1/unsubscribe/{token}, which
 * needs no login.
 *
 * POST upserts by email (compared case-insensitively): 201 when the
 * address is new, 200 when it was there (its name and status change only
 * when given, so posting an address again never subscribes again someone
 * who left).  Its answer carries the subscriber's unsubscribe token, the
 * id signed with a sub-key of cms_secret (cms_signed_id.h), for the
 * sender's links.
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
#include "cms_signed_id.h"
#include "cms_validate.h"
#include "cms_uuid.h"


static ngx_int_t ngx_http_cms_subscribers_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_subscribers_upsert(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_subscribers_upserted(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_subscribers_unsubscribe(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_subscribers_unsubscribed(
    ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx, PGresult *res);


/* what every statement returns: 0 (a list's total) and the subscriber */
#define NGX_HTTP_CMS_SUBSCRIBER_COLUMNS                                      \
    " s.id, s.email, s.name, s.status, s.created_at,"                \
    " s.updated_at"

static const ngx_http_cms_col_t  ngx_http_cms_subscriber_cols[] = {
    { "id", 1, NGX_HTTP_CMS_COL_STRING },
    { "email", 2, NGX_HTTP_CMS_COL_STRING },
    { "name", 3, NGX_HTTP_CMS_COL_STRING },
    { "status", 4, NGX_HTTP_CMS_COL_STRING },
    { "created_at", 5, NGX_HTTP_CMS_COL_TIME },
    { "updated_at", 6, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_subscriber = {
    "subscriber", "subscribers", ngx_http_cms_subscriber_cols,
    sizeof(ngx_http_cms_subscriber_cols) / sizeof(ngx_http_cms_col_t)
};

/* what the unsubscribe link answers: no address, only the outcome */
static const ngx_http_cms_col_t  ngx_http_cms_unsubscribed_cols[] = {
    { "status", 1, NGX_HTTP_CMS_COL_STRING },
};

static const ngx_http_cms_record_t  ngx_http_cms_unsubscribed = {
    "subscriber", "subscribers", ngx_http_cms_unsubscribed_cols, 1
};


static const char *const  ngx_http_cms_subscribers_statuses[] = {
    "subscribed", "unsubscribed", NULL
};

/* the body: $2 email, $3 name, $4 status ($1 the workspace) */
static const char *const  ngx_http_cms_subscribers_ignored[] = {
    "id", "created_at", "updated_at", NULL
};

static const cms_field_t  ngx_http_cms_subscribers_fields[] = {
    { "email", CMS_FIELD_STRING, CMS_FIELD_REQUIRED | CMS_FIELD_NONEMPTY, 2,
      NGX_HTTP_CMS_ERR_EMAIL_REQUIRED, NGX_HTTP_CMS_ERR_INVALID_EMAIL, 1, 254,
      NULL, cms_email_valid, 0, NULL },
    { "name", CMS_FIELD_STRING, CMS_FIELD_NULL_ABSENT, 3, 0, 0, 0, 200,
      NULL, NULL, 0, NULL },
    { "status", CMS_FIELD_STRING, CMS_FIELD_NULL_ABSENT, 4, 0, 0, 0, 20,
      ngx_http_cms_subscribers_statuses, NULL,
      NGX_HTTP_CMS_ERR_INVALID_STATUS, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_subscribers_input = {
    ngx_http_cms_subscribers_fields, ngx_http_cms_subscribers_ignored,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};


/* the last column says whether the row is new (xmax 0: inserted) */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_subscribers_upsert_sql =
    ngx_http_cms_pg_stmt(
        "INSERT INTO subscribers AS s (workspace_id, email, name, status)"
        " VALUES ($1, $2, coalesce($3, ''), coalesce($4, 'subscribed'))"
        " ON CONFLICT (workspace_id, lower(email)) DO UPDATE"
        " SET name = coalesce($3, s.name), status = coalesce($4, s.status),"
        "  updated_at = CASE WHEN (coalesce($3, s.name),"
        "   coalesce($4, s.status)) IS DISTINCT FROM (s.name, s.status)"
        "   THEN now() ELSE s.updated_at END"
        " RETURNING 0," NGX_HTTP_CMS_SUBSCRIBER_COLUMNS ", s.xmax = 0",
        4);

/*
 * $1 workspace, $2 status or NULL, $3 limit, $4 offset; the total from
 * the counters kept by the writes (cms_record_total(), sql/0043)
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_subscribers_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT t.total, p.* FROM"
        " (SELECT cms_record_total('subscribers', $1, $2) AS total"
        "  OFFSET 0) t"
        " LEFT JOIN LATERAL (SELECT" NGX_HTTP_CMS_SUBSCRIBER_COLUMNS
        "  FROM subscribers s WHERE s.workspace_id = $1"
        "   AND ($2::text IS NULL OR s.status = $2)"
        "  ORDER BY s.created_at DESC, s.id DESC LIMIT $3 OFFSET $4) p"
        " ON true", 4);

/* the first unsubscribe moves updated_at, a repeat changes nothing */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_subscribers_unsubscribe_sql =
    ngx_http_cms_pg_stmt(
        "UPDATE subscribers SET status = 'unsubscribed',"
        " updated_at = CASE WHEN status = 'subscribed' THEN now()"
        "  ELSE updated_at END"
        " WHERE id = $1 RETURNING 0, status", 1);


#define NGX_HTTP_CMS_SUB_READ   NGX_HTTP_CMS_SCOPE_SUBSCRIBERS_READ
#define NGX_HTTP_CMS_SUB_WRITE  NGX_HTTP_CMS_SCOPE_SUBSCRIBERS_WRITE


/* addresses are personal data: editors and up, in the studio too */
ngx_http_cms_route_t  ngx_http_cms_subscribers_routes[] = {

    { NGX_HTTP_GET, ngx_string("/api/subscribers"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_SUB_READ,
      ngx_http_cms_subscribers_list, NULL, NULL,
      NGX_HTTP_CMS_ROLE_EDITOR },

    { NGX_HTTP_POST, ngx_string("/api/subscribers"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_SUB_WRITE,
      ngx_http_cms_subscribers_upsert, NULL, NULL,
      NGX_HTTP_CMS_ROLE_EDITOR },

    { NGX_HTTP_POST, ngx_string("/unsubscribe/:token"),
      NGX_HTTP_CMS_AUTH_NONE, 0,
      ngx_http_cms_subscribers_unsubscribe, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


static ngx_int_t
ngx_http_cms_subscribers_list(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[4];

    args[0] = ctx->principal.workspace_id;

    rc = ngx_http_cms_list_filter(r, "status",
                                  ngx_http_cms_subscribers_statuses,
                                  NGX_HTTP_CMS_ERR_INVALID_STATUS, &args[1]);
    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return rc;
    }

    return ngx_http_cms_list_query(r, &ngx_http_cms_subscribers_list_sql,
                                   args, 4, &ngx_http_cms_subscriber);
}


static ngx_int_t
ngx_http_cms_subscribers_upsert(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[4];

    args[0] = ctx->principal.workspace_id;

    rc = ngx_http_cms_json_read(r, ctx->body, &ngx_http_cms_subscribers_input,
                                CMS_FIELDS_CREATE, args, 4);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_subscribers_upsert_sql,
                                 args, 4, ngx_http_cms_subscribers_upserted);
}


/* {"subscriber": {...}, "unsubscribe_token": "..."}: 201 new, 200 not */
static ngx_int_t
ngx_http_cms_subscribers_upserted(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    u_char                    *tok;
    ngx_int_t                  rc;
    ngx_keyval_t               token;
    ngx_http_cms_main_conf_t  *mcf;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    if (PQntuples(res) != 1 || PQnfields(res) != 8) {
        return NGX_ERROR;
    }

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    tok = ngx_pnalloc(r->pool, CMS_SIGNED_ID_LEN);
    if (tok == NULL) {
        return NGX_ERROR;
    }

    if (cms_signed_id_make(mcf->unsub_key, PQgetvalue(res, 0, 1),
                           PQgetlength(res, 0, 1), (char *) tok)
        != 0)
    {
        return NGX_ERROR;
    }

    ngx_str_set(&token.key, "unsubscribe_token");
    token.value.data = tok;
    token.value.len = CMS_SIGNED_ID_LEN;

    return ngx_http_cms_send_row_with(r, PQgetvalue(res, 0, 7)[0] == 't'
                                         ? NGX_HTTP_CREATED : NGX_HTTP_OK,
                                      &ngx_http_cms_subscriber, res, &token);
}


/* the link's token opens to the subscriber's id, or the link is unknown */
static ngx_int_t
ngx_http_cms_subscribers_unsubscribe(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx)
{
    u_char                    *id;
    ngx_str_t                  arg;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    id = ngx_pnalloc(r->pool, CMS_UUID_LEN);
    if (id == NULL) {
        return NGX_ERROR;
    }

    if (cms_signed_id_open(mcf->unsub_key, (char *) ctx->params[0].data,
                           ctx->params[0].len, (char *) id)
        != 0)
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_UNSUBSCRIBE,
                                 NULL);
    }

    arg.data = id;
    arg.len = CMS_UUID_LEN;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_subscribers_unsubscribe_sql,
                                 &arg, 1,
                                 ngx_http_cms_subscribers_unsubscribed);
}


static ngx_int_t
ngx_http_cms_subscribers_unsubscribed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    /* a subscriber deleted since (its workspace gone): the link is dead */
    if (PQntuples(res) == 0) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_UNSUBSCRIBE,
                                 NULL);
    }

    return ngx_http_cms_send_row(r, NGX_HTTP_OK, &ngx_http_cms_unsubscribed,
                                 res);
}
