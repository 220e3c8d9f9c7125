
/*
 * Webhooks: /v1/api/webhooks (secret key, webhooks:read / webhooks:write,
 * the key's creator an admin or the owner) and the studio mirrors under
 * /v1/workspaces/{id}/webhooks (owners and admins).  The URL is checked
 * before anything is written as a site's origin is: https, and every
 * address its host has (nginx's resolver) globally reachable
 * (ngx_http_cms_outbound_all_allowed); plain http only with
 * "cms_outbound_loopback on" and to loopback addresses.  The signing
 * secret, "whsec_" + base64 of 32 random bytes, is answered once (create,
 * rotate) and stored sealed (AES-256-GCM, the row's identity bound in);
 * a rotation keeps the previous secret for an overlap in which deliveries
 * carry both signatures (sql/0023_webhooks.sql).
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
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_resolve.h"
#include "ngx_http_cms_deliver.h"
#include "cms_fields.h"
#include "cms_url.h"
#include "cms_uuid.h"


#define NGX_HTTP_CMS_WEBHOOK_ARGS      7
#define NGX_HTTP_CMS_WEBHOOK_SECRET    32       /* random bytes */
#define NGX_HTTP_CMS_WEBHOOK_PREFIX    "whsec_"
#define NGX_HTTP_CMS_WEBHOOK_AAD       "webhook:"

/* how long a rotated secret still signs (README, Webhooks) */
#define NGX_HTTP_CMS_WEBHOOK_OVERLAP   "24 hours"


/* a write waiting for its URL's host to resolve */
typedef struct {
    ngx_http_cms_outbound_t     out;        /* first: the check's */
    ngx_str_t                   args[NGX_HTTP_CMS_WEBHOOK_ARGS];
    ngx_str_t                   secret;
} ngx_http_cms_webhook_write_t;


static ngx_int_t ngx_http_cms_webhooks_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_webhooks_create(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_webhooks_insert(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_webhooks_get(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_webhooks_update(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_webhooks_save(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_webhooks_delete(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_webhooks_rotate(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_webhooks_secret_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_webhooks_write(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, int mode, ngx_http_cms_handler_pt next);
static ngx_int_t ngx_http_cms_webhooks_url(ngx_http_request_t *r,
    ngx_http_cms_webhook_write_t *w, ngx_str_t *host);
static ngx_int_t ngx_http_cms_webhooks_secret(ngx_http_request_t *r,
    ngx_str_t *id, ngx_str_t *secret, ngx_str_t *sealed);


/* column 0 the list's total (0 for one record), then the webhook's */
#define NGX_HTTP_CMS_WEBHOOK_COLUMNS                                         \
    " h.id, h.url, array_to_json(h.events), h.enabled, h.description,"       \
    " h.disabled_reason, h.previous_secret_expires_at,"              \
    " h.created_at, h.updated_at"

static const ngx_http_cms_col_t  ngx_http_cms_webhook_cols[] = {
    { "id", 1, NGX_HTTP_CMS_COL_STRING },
    { "url", 2, NGX_HTTP_CMS_COL_STRING },
    { "events", 3, NGX_HTTP_CMS_COL_JSON },
    { "enabled", 4, NGX_HTTP_CMS_COL_BOOL },
    { "description", 5, NGX_HTTP_CMS_COL_STRING },
    { "disabled_reason", 6, NGX_HTTP_CMS_COL_STRING },
    { "previous_secret_expires_at", 7, NGX_HTTP_CMS_COL_TIME },
    { "created_at", 8, NGX_HTTP_CMS_COL_TIME },
    { "updated_at", 9, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_webhook = {
    "webhook", "webhooks", ngx_http_cms_webhook_cols,
    sizeof(ngx_http_cms_webhook_cols) / sizeof(ngx_http_cms_col_t)
};


/* the events a webhook may ask for (README, Webhooks); "*" is all */
static const char *const  ngx_http_cms_webhook_events[] = {
    "*", "article.published", "article.updated", "article.unpublished",
    "page.updated", "video.published", "comment.created",
    "custom_entry.published", NULL
};

/* the body: $3 url, $4 events, $5 enabled, $6 description */
static const char *const  ngx_http_cms_webhook_ignored[] = {
    "id", "disabled_reason", "previous_secret_expires_at", "created_at",
    "updated_at", NULL
};

static const cms_field_t  ngx_http_cms_webhook_event = {
    NULL, CMS_FIELD_STRING, 0, 0, 0, 0, 1, 40, ngx_http_cms_webhook_events,
    NULL, 0, NULL
};

static const cms_field_t  ngx_http_cms_webhook_fields[] = {
    { "url", CMS_FIELD_STRING, CMS_FIELD_REQUIRED | CMS_FIELD_NONEMPTY, 3,
      NGX_HTTP_CMS_ERR_URL_REQUIRED, NGX_HTTP_CMS_ERR_INVALID_URL, 1,
      CMS_URL_MAX, NULL, NULL, 0, NULL },
    { "events", CMS_FIELD_ARRAY, CMS_FIELD_NULL_ABSENT, 4, 0, 0, 1, 20,
      NULL, NULL, 0, &ngx_http_cms_webhook_event },
    { "enabled", CMS_FIELD_BOOLEAN, CMS_FIELD_NULL_ABSENT, 5, 0, 0, 0, 0,
      NULL, NULL, 0, NULL },
    { "description", CMS_FIELD_STRING, CMS_FIELD_NULL_ABSENT, 6, 0, 0, 0,
      1000, NULL, NULL, 0, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_webhook_input = {
    ngx_http_cms_webhook_fields, ngx_http_cms_webhook_ignored,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};


/* $1 workspace, $2 id, $3 url, $4 events, $5 enabled, $6 description,
   $7 the sealed secret (hex) */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_webhooks_insert_sql =
    ngx_http_cms_pg_stmt(
        "SELECT 0," NGX_HTTP_CMS_WEBHOOK_COLUMNS
        " FROM cms_webhook_create($1, $2, $3,"
        "  coalesce(cms_webhook_events($4::jsonb), '{*}'),"
        "  coalesce($5::boolean, true), coalesce($6, ''),"
        "  decode($7, 'hex')) h",
        7);

/* $1 workspace, $2 limit, $3 offset; past the end, one row of NULLs */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_webhooks_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT t.total, p.* FROM"
        " (SELECT count(*) AS total FROM webhooks WHERE workspace_id = $1) t"
        " LEFT JOIN LATERAL (SELECT" NGX_HTTP_CMS_WEBHOOK_COLUMNS
        "  FROM webhooks h WHERE h.workspace_id = $1"
        "  ORDER BY h.created_at, h.id LIMIT $2 OFFSET $3) p ON true",
        3);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_webhooks_get_sql =
    ngx_http_cms_pg_stmt(
        "SELECT 0," NGX_HTTP_CMS_WEBHOOK_COLUMNS " FROM webhooks h"
        " WHERE h.workspace_id = $1 AND h.id = $2",
        2);

/* enabled set by the caller clears the service's reason for disabling */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_webhooks_update_sql =
    ngx_http_cms_pg_stmt(
        "UPDATE webhooks h SET url = coalesce($3, url),"
        " events = coalesce(cms_webhook_events($4::jsonb), events),"
        " enabled = coalesce($5::boolean, enabled),"
        " disabled_reason = CASE WHEN $5::boolean IS NULL"
        "  THEN disabled_reason END,"
        " description = coalesce($6, description), updated_at = now()"
        " WHERE h.workspace_id = $1 AND h.id = $2"
        " RETURNING 0," NGX_HTTP_CMS_WEBHOOK_COLUMNS,
        6);

/* the current secret becomes the previous one (SET reads the old row) */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_webhooks_rotate_sql =
    ngx_http_cms_pg_stmt(
        "UPDATE webhooks h SET previous_secret_sealed = secret_sealed,"
        " previous_secret_expires_at = now()"
        "  + interval '" NGX_HTTP_CMS_WEBHOOK_OVERLAP "',"
        " secret_sealed = decode($3, 'hex'), updated_at = now()"
        " WHERE h.workspace_id = $1 AND h.id = $2"
        " RETURNING 0," NGX_HTTP_CMS_WEBHOOK_COLUMNS,
        3);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_webhooks_delete_sql =
    ngx_http_cms_pg_stmt(
        "DELETE FROM webhooks WHERE workspace_id = $1 AND id = $2"
        " RETURNING id",
        2);


#define NGX_HTTP_CMS_HOOK_READ   NGX_HTTP_CMS_SCOPE_WEBHOOKS_READ
#define NGX_HTTP_CMS_HOOK_WRITE  NGX_HTTP_CMS_SCOPE_WEBHOOKS_WRITE


/* endpoints and secrets: owners and admins only (README, Webhooks) */
ngx_http_cms_route_t  ngx_http_cms_webhooks_routes[] = {

    { NGX_HTTP_GET, ngx_string("/api/webhooks"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_HOOK_READ,
      ngx_http_cms_webhooks_list, NULL, NULL, NGX_HTTP_CMS_ROLE_ADMIN },

    { NGX_HTTP_POST, ngx_string("/api/webhooks"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_HOOK_WRITE,
      ngx_http_cms_webhooks_create, NULL, NULL, NGX_HTTP_CMS_ROLE_ADMIN },

    { NGX_HTTP_GET, ngx_string("/api/webhooks/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_HOOK_READ,
      ngx_http_cms_webhooks_get, NULL, NULL, NGX_HTTP_CMS_ROLE_ADMIN },

    { NGX_HTTP_PATCH, ngx_string("/api/webhooks/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_HOOK_WRITE,
      ngx_http_cms_webhooks_update, NULL, NULL, NGX_HTTP_CMS_ROLE_ADMIN },

    { NGX_HTTP_DELETE, ngx_string("/api/webhooks/:id"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_HOOK_WRITE,
      ngx_http_cms_webhooks_delete, NULL, NULL, NGX_HTTP_CMS_ROLE_ADMIN },

    { NGX_HTTP_POST, ngx_string("/api/webhooks/:id/secret/rotate"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_HOOK_WRITE,
      ngx_http_cms_webhooks_rotate, NULL, NULL, NGX_HTTP_CMS_ROLE_ADMIN },

    ngx_http_cms_null_route
};


static ngx_int_t
ngx_http_cms_webhooks_list(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[3];

    args[0] = ctx->principal.workspace_id;

    return ngx_http_cms_list_query(r, &ngx_http_cms_webhooks_list_sql, args, 3,
                                   &ngx_http_cms_webhook);
}


static ngx_int_t
ngx_http_cms_webhooks_create(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_webhooks_write(r, ctx, CMS_FIELDS_CREATE,
                                       ngx_http_cms_webhooks_insert);
}


/* the URL passed: a new id, its secret sealed to it, the row */
static ngx_int_t
ngx_http_cms_webhooks_insert(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_http_cms_webhook_write_t  *w = ctx->data;

    if (ngx_http_cms_crypto_uuid7(r->pool, &w->args[1]) != NGX_OK
        || ngx_http_cms_webhooks_secret(r, &w->args[1], &w->secret,
                                        &w->args[6])
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_webhooks_insert_sql,
                                 w->args, NGX_HTTP_CMS_WEBHOOK_ARGS,
                                 ngx_http_cms_webhooks_secret_done);
}


/* {webhook, secret}: the secret shown this once */
static ngx_int_t
ngx_http_cms_webhooks_secret_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    ngx_int_t                      rc;
    ngx_keyval_t                   secret;
    ngx_http_cms_webhook_write_t  *w = ctx->data;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    ngx_str_set(&secret.key, "secret");
    secret.value = w->secret;

    /* a create has its next step; a rotation has none */
    return ngx_http_cms_send_row_with(r, w->out.next ? NGX_HTTP_CREATED
                                                 : NGX_HTTP_OK,
                                      &ngx_http_cms_webhook, res, &secret);
}


static ngx_int_t
ngx_http_cms_webhooks_get(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[2];

    rc = ngx_http_cms_path_id(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    ctx->data = (void *) &ngx_http_cms_webhook;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_webhooks_get_sql, args, 2,
                                 ngx_http_cms_row_done);
}


static ngx_int_t
ngx_http_cms_webhooks_update(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  id[2];

    rc = ngx_http_cms_path_id(r, ctx, id);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_webhooks_write(r, ctx, CMS_FIELDS_PATCH,
                                       ngx_http_cms_webhooks_save);
}


static ngx_int_t
ngx_http_cms_webhooks_save(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_http_cms_webhook_write_t  *w = ctx->data;

    ctx->data = (void *) &ngx_http_cms_webhook;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_webhooks_update_sql,
                                 w->args, 6, ngx_http_cms_row_done);
}


static ngx_int_t
ngx_http_cms_webhooks_delete(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[2];

    rc = ngx_http_cms_path_id(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_webhooks_delete_sql, args,
                                 2, ngx_http_cms_deleted_done);
}


/* a new secret; the current one signs too until the overlap ends */
static ngx_int_t
ngx_http_cms_webhooks_rotate(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t                      rc;
    ngx_http_cms_webhook_write_t  *w;

    w = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_webhook_write_t));
    if (w == NULL) {
        return NGX_ERROR;
    }

    rc = ngx_http_cms_path_id(r, ctx, w->args);
    if (rc != NGX_OK) {
        return rc;
    }

    if (ngx_http_cms_webhooks_secret(r, &w->args[1], &w->secret, &w->args[2])
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    ctx->data = w;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_webhooks_rotate_sql,
                                 w->args, 3,
                                 ngx_http_cms_webhooks_secret_done);
}


/*
 * The body into the write's arguments ($1 workspace, $2 the path's id),
 * then the URL when one was given: an address checked here, or a name
 * resolved first; next() runs once it passed.
 */
static ngx_int_t
ngx_http_cms_webhooks_write(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    int mode, ngx_http_cms_handler_pt next)
{
    ngx_int_t                      rc;
    ngx_str_t                      host;
    ngx_http_cms_webhook_write_t  *w;

    w = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_webhook_write_t));
    if (w == NULL) {
        return NGX_ERROR;
    }

    w->out.next = next;
    w->out.param = "url";
    w->out.message = "url's host has no address, or one that is not public";
    w->args[0] = ctx->principal.workspace_id;

    if (mode == CMS_FIELDS_PATCH) {
        w->args[1] = ctx->params[0];
    }

    rc = ngx_http_cms_json_read(r, ctx->body, &ngx_http_cms_webhook_input,
                                mode, w->args, 6);
    if (rc != NGX_OK) {
        return rc;
    }

    ctx->data = w;

    if (w->args[2].data == NULL) {
        return next(r, ctx);
    }

    rc = ngx_http_cms_webhooks_url(r, w, &host);
    if (rc != NGX_DECLINED) {
        return (rc == NGX_OK) ? next(r, ctx) : rc;
    }

    return ngx_http_cms_outbound_resolve(r, &host);
}


/*
 * "url" (args[2]) normalized in place: NGX_OK for an allowed address,
 * NGX_DECLINED with *host a name to resolve, or the error recorded.
 */
/* long: the parse, its message, then an address literal's check */
static ngx_int_t
ngx_http_cms_webhooks_url(ngx_http_request_t *r,
    ngx_http_cms_webhook_write_t *w, ngx_str_t *host)
{
    int                        rc;
    size_t                     n, size;
    u_char                    *out, *msg;
    unsigned                   flags;
    ngx_str_t                 *url;
    cms_url_t                  u;
    ngx_addr_t                 addr;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);
    url = &w->args[2];

    flags = CMS_URL_HTTPS;
    if (mcf->outbound_loopback == 1) {
        flags |= CMS_URL_HTTP;
    }

    rc = cms_url_parse((char *) url->data, url->len, flags, &u);
    if (rc != CMS_URL_OK) {
        msg = ngx_pnalloc(r->pool, 160);
        if (msg == NULL) {
            return NGX_ERROR;
        }

        ngx_snprintf(msg, 159, "url %s%Z", cms_url_error(rc));
        msg[159] = '\0';

        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_URL, "url",
                                     (char *) msg);
    }

    size = CMS_URL_BUILD_SIZE(url->len);
    out = ngx_pnalloc(r->pool, size);
    if (out == NULL) {
        return NGX_ERROR;
    }

    n = cms_url_build((char *) url->data, &u, 0, (char *) out, size);
    if (n == 0) {
        return NGX_ERROR;
    }

    if (!ngx_http_cms_deliver_port_allowed(mcf, u.port_num)) {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_URL, "url",
                                     "url's port is not one deliveries may "
                                     "use (443, or cms_webhook_delivery "
                                     "ports=)");
    }

    host->data = url->data + u.host.off;
    host->len = u.host.len;
    w->out.loopback_only = !u.https;

    url->data = out;
    url->len = n;

    if (u.host_type == CMS_URL_HOST_NAME) {
        return NGX_DECLINED;
    }

    if (ngx_parse_addr(r->pool, &addr, host->data, host->len) != NGX_OK
        || ngx_http_cms_outbound_all_allowed(&addr, 1,
                                             w->out.loopback_only) != NGX_OK)
    {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_URL, "url",
                                     "url is not a public address");
    }

    return NGX_OK;
}


/*
 * A fresh secret for the webhook "id": "whsec_" + base64 of 32 random
 * bytes into *secret, and its seal under the stored-secrets key with
 * "webhook:<id>" bound in, as hex, into *sealed; both in r->pool.
 */
static ngx_int_t
ngx_http_cms_webhooks_secret(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *secret, ngx_str_t *sealed)
{
    u_char              *p;
    ngx_str_t            raw, b64, aad;
    ngx_http_cms_ctx_t  *ctx;
    u_char               rnd[NGX_HTTP_CMS_WEBHOOK_SECRET];

    /* the secret is answered once: no cache may keep that answer */
    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);
    ctx->no_store = 1;

    if (ngx_http_cms_crypto_random(rnd, sizeof(rnd)) != NGX_OK) {
        return NGX_ERROR;
    }

    raw.data = rnd;
    raw.len = sizeof(rnd);

    secret->len = sizeof(NGX_HTTP_CMS_WEBHOOK_PREFIX) - 1
                  + ngx_base64_encoded_length(sizeof(rnd));
    secret->data = ngx_pnalloc(r->pool, secret->len + 1);

    aad.len = sizeof(NGX_HTTP_CMS_WEBHOOK_AAD) - 1 + id->len;
    aad.data = ngx_pnalloc(r->pool, aad.len);

    if (secret->data == NULL || aad.data == NULL) {
        ngx_explicit_memzero(rnd, sizeof(rnd));
        return NGX_ERROR;
    }

    p = ngx_cpymem(secret->data, NGX_HTTP_CMS_WEBHOOK_PREFIX,
                   sizeof(NGX_HTTP_CMS_WEBHOOK_PREFIX) - 1);
    b64.data = p;
    ngx_encode_base64(&b64, &raw);
    p[b64.len] = '\0';

    ngx_explicit_memzero(rnd, sizeof(rnd));

    /* the id as PostgreSQL writes it back: lowercase */
    p = ngx_cpymem(aad.data, NGX_HTTP_CMS_WEBHOOK_AAD,
                   sizeof(NGX_HTTP_CMS_WEBHOOK_AAD) - 1);
    ngx_strlow(p, id->data, id->len);

    return ngx_http_cms_crypto_seal(r, &aad, secret, sealed);
}
