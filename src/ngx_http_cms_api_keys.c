
/*
 * API keys: minted, listed and revoked by owners and admins under
 * /v1/workspaces/{id}/api-keys; GET /v1/api/key tells a key about itself.
 * The secret is shown once; only its HMAC and visible prefix are stored.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_json.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_list.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_auth.h"
#include "ngx_http_cms_pg.h"
#include "cms_key.h"
#include "cms_kdf.h"
#include "cms_hex.h"
#include "cms_uuid.h"


#define NGX_HTTP_CMS_KEY_SECRET_LEN    32


static ngx_int_t ngx_http_cms_api_keys_create(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_api_keys_created(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_api_keys_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_api_keys_delete(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_api_keys_self(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_api_keys_got(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static int ngx_http_cms_api_keys_scope_valid(const char *p, size_t len);


/*
 * What every statement returns: column 0 the list's total (0 for a single
 * record, so one record table serves both), then the key's columns.
 */
#define NGX_HTTP_CMS_API_KEY_COLUMNS                                         \
    " k.id, k.workspace_id, k.created_by, k.name, k.key_prefix,"             \
    " array_to_json(k.scopes), k.created_at, k.revoked_at"

static const ngx_http_cms_col_t  ngx_http_cms_api_key_cols[] = {
    { "id", 1, NGX_HTTP_CMS_COL_STRING },
    { "workspace_id", 2, NGX_HTTP_CMS_COL_STRING },
    { "created_by", 3, NGX_HTTP_CMS_COL_STRING },
    { "name", 4, NGX_HTTP_CMS_COL_STRING },
    { "key_prefix", 5, NGX_HTTP_CMS_COL_STRING },
    { "scopes", 6, NGX_HTTP_CMS_COL_JSON },
    { "created_at", 7, NGX_HTTP_CMS_COL_TIME },
    { "revoked_at", 8, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_api_key = {
    "api_key", "api_keys", ngx_http_cms_api_key_cols,
    sizeof(ngx_http_cms_api_key_cols) / sizeof(ngx_http_cms_col_t)
};


static ngx_http_cms_pg_stmt_t  ngx_http_cms_api_keys_insert_sql =
    ngx_http_cms_pg_stmt(
        "INSERT INTO api_keys AS k (workspace_id, created_by, name,"
        " key_prefix, secret_hash, scopes)"
        " VALUES ($1, $2, $3, $4, decode($5, 'hex'),"
        "  ARRAY(SELECT s FROM jsonb_array_elements_text($6::jsonb)"
        "   WITH ORDINALITY AS e(s, n) GROUP BY s ORDER BY min(n)))"
        " RETURNING 0," NGX_HTTP_CMS_API_KEY_COLUMNS,
        6);

/* $1 workspace, $2 limit, $3 offset; past the end, one row of NULLs */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_api_keys_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT t.total, p.* FROM"
        " (SELECT count(*) AS total FROM api_keys WHERE workspace_id = $1) t"
        " LEFT JOIN LATERAL (SELECT" NGX_HTTP_CMS_API_KEY_COLUMNS
        "  FROM api_keys k WHERE k.workspace_id = $1"
        "  ORDER BY k.created_at DESC, k.id LIMIT $2 OFFSET $3) p ON true",
        3);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_api_keys_revoke_sql =
    ngx_http_cms_pg_stmt(
        "UPDATE api_keys SET revoked_at = now()"
        " WHERE id = $1 AND workspace_id = $2 AND revoked_at IS NULL"
        " RETURNING id",
        2);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_api_keys_get_sql =
    ngx_http_cms_pg_stmt(
        "SELECT 0," NGX_HTTP_CMS_API_KEY_COLUMNS " FROM api_keys k"
        " WHERE k.id = $1 AND k.workspace_id = $2",
        2);


/*
 * The body: $3 name, $6 scopes (known names, a repeat kept once, in the
 * order given); $1, $2, $4, $5 are the caller's.
 */
static const cms_field_t  ngx_http_cms_api_keys_scope = {
    NULL, CMS_FIELD_STRING, 0, 0, 0, 0, 1, 31, NULL,
    ngx_http_cms_api_keys_scope_valid, 0, NULL
};

static const cms_field_t  ngx_http_cms_api_keys_fields[] = {
    { "name", CMS_FIELD_STRING, CMS_FIELD_REQUIRED | CMS_FIELD_NONEMPTY, 3,
      NGX_HTTP_CMS_ERR_NAME_REQUIRED, 0, 1, 200, NULL, NULL, 0, NULL },
    { "scopes", CMS_FIELD_ARRAY, CMS_FIELD_REQUIRED, 6,
      NGX_HTTP_CMS_ERR_INVALID_SCOPE, NGX_HTTP_CMS_ERR_INVALID_SCOPE, 1, 64,
      NULL, NULL, 0, &ngx_http_cms_api_keys_scope },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_api_keys_input = {
    ngx_http_cms_api_keys_fields, NULL,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};


ngx_http_cms_route_t  ngx_http_cms_api_keys_routes[] = {

    { NGX_HTTP_POST, ngx_string("/workspaces/:id/api-keys"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_ADMIN,
      ngx_http_cms_api_keys_create, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/workspaces/:id/api-keys"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_ADMIN,
      ngx_http_cms_api_keys_list, NULL, NULL, 0 },

    { NGX_HTTP_DELETE, ngx_string("/workspaces/:id/api-keys/:key"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_ADMIN,
      ngx_http_cms_api_keys_delete, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/api/key"), NGX_HTTP_CMS_AUTH_SECRET_KEY, 0,
      ngx_http_cms_api_keys_self, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


static ngx_int_t
ngx_http_cms_api_keys_create(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t   rc;
    ngx_str_t   args[6], *secret;

    rc = ngx_http_cms_json_read(r, ctx->body, &ngx_http_cms_api_keys_input,
                                CMS_FIELDS_CREATE, args, 6);
    if (rc != NGX_OK) {
        return rc;
    }

    secret = ngx_palloc(r->pool, sizeof(ngx_str_t));
    if (secret == NULL
        || ngx_http_cms_crypto_mint_key(r, "svc_live_", secret, &args[3],
                                        &args[4])
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    ctx->data = secret;

    args[0] = ctx->principal.workspace_id;
    args[1] = ctx->principal.user_id;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_api_keys_insert_sql, args,
                                 6, ngx_http_cms_api_keys_created);
}


static ngx_int_t
ngx_http_cms_api_keys_created(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t     rc;
    ngx_keyval_t  secret;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    ngx_str_set(&secret.key, "secret");
    secret.value = *(ngx_str_t *) ctx->data;

    return ngx_http_cms_send_row_with(r, NGX_HTTP_CREATED,
                                      &ngx_http_cms_api_key, res, &secret);
}


/* a scope name the module knows */
static int
ngx_http_cms_api_keys_scope_valid(const char *p, size_t len)
{
    ngx_str_t  name;

    name.data = (u_char *) p;
    name.len = len;

    return ngx_http_cms_auth_scope(&name) != 0;
}


static ngx_int_t
ngx_http_cms_api_keys_list(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[3];

    args[0] = ctx->principal.workspace_id;

    return ngx_http_cms_list_query(r, &ngx_http_cms_api_keys_list_sql, args, 3,
                                   &ngx_http_cms_api_key);
}


static ngx_int_t
ngx_http_cms_api_keys_delete(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[2];

    if (!cms_uuid_valid((char *) ctx->params[0].data, ctx->params[0].len)) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    args[0] = ctx->params[0];
    args[1] = ctx->principal.workspace_id;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_api_keys_revoke_sql, args,
                                 2, ngx_http_cms_deleted_done);
}


static ngx_int_t
ngx_http_cms_api_keys_self(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[2];

    args[0] = ctx->principal.key_id;
    args[1] = ctx->principal.workspace_id;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_api_keys_get_sql, args, 2,
                                 ngx_http_cms_api_keys_got);
}


static ngx_int_t
ngx_http_cms_api_keys_got(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_send_row(r, NGX_HTTP_OK, &ngx_http_cms_api_key, res);
}
