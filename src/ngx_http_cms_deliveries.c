
/*
 * A webhook's delivery log and the two ways to queue a delivery by hand
 * (README, Webhooks): GET /v1/api/webhooks/{id}/deliveries (newest
 * first, paged), POST .../deliveries/{deliveryId}/redeliver (a new
 * delivery of the same event: same event id, same body) and POST
 * .../webhooks/{id}/test (a "webhook.test" event for that endpoint only).
 * Secret keys need webhooks:read / webhooks:write and an admin or owner
 * behind them; the studio mirrors are for owners and admins.  The two
 * POSTs share a workspace's limit (a burst of 20, then one every 3 s):
 * each makes the module send a request where the caller points it.
 * Sending is the delivery job's (ngx_http_cms_deliver.c).
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
#include "ngx_http_cms_ratelimit.h"
#include "cms_uuid.h"


static ngx_int_t ngx_http_cms_deliveries_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_deliveries_limit(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_deliveries_redeliver(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_deliveries_test(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_deliveries_queued(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);


/* a delivery and its attempts, oldest first */
#define NGX_HTTP_CMS_DELIVERY_COLUMNS                                        \
    " d.id, d.webhook_id, d.event_id, d.event_type, d.status, d.attempt,"    \
    " d.last_status_code, d.last_duration_ms, d.last_error,"                 \
    " d.next_attempt_at, d.created_at,"                      \
    " d.updated_at, d.delivered_at,"                         \
    " (SELECT coalesce(json_agg(json_build_object('attempt', a.attempt,"     \
    "  'status_code', a.status_code, 'duration_ms', a.duration_ms,"          \
    "  'error', a.error, 'next_attempt_at', cms_ts(a.next_attempt_at),"      \
    "  'created_at', cms_ts(a.created_at)) ORDER BY a.attempt), '[]')"       \
    "  FROM webhook_delivery_attempts a WHERE a.delivery_id = d.id)"

static const ngx_http_cms_col_t  ngx_http_cms_delivery_cols[] = {
    { "id", 1, NGX_HTTP_CMS_COL_STRING },
    { "webhook_id", 2, NGX_HTTP_CMS_COL_STRING },
    { "event_id", 3, NGX_HTTP_CMS_COL_STRING },
    { "event_type", 4, NGX_HTTP_CMS_COL_STRING },
    { "status", 5, NGX_HTTP_CMS_COL_STRING },
    { "attempt", 6, NGX_HTTP_CMS_COL_NUMBER },
    { "status_code", 7, NGX_HTTP_CMS_COL_NUMBER },
    { "duration_ms", 8, NGX_HTTP_CMS_COL_NUMBER },
    { "error", 9, NGX_HTTP_CMS_COL_STRING },
    { "next_attempt_at", 10, NGX_HTTP_CMS_COL_TIME },
    { "created_at", 11, NGX_HTTP_CMS_COL_TIME },
    { "updated_at", 12, NGX_HTTP_CMS_COL_TIME },
    { "delivered_at", 13, NGX_HTTP_CMS_COL_TIME },
    { "attempts", 14, NGX_HTTP_CMS_COL_JSON },
};

static const ngx_http_cms_record_t  ngx_http_cms_delivery = {
    "delivery", "deliveries", ngx_http_cms_delivery_cols,
    sizeof(ngx_http_cms_delivery_cols) / sizeof(ngx_http_cms_col_t)
};


/*
 * $1 workspace, $2 webhook, $3 limit, $4 offset: a NULL total when the
 * webhook is not the workspace's (404); past the end, one row of NULLs.
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_deliveries_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT t.total, p.* FROM (SELECT h.id FROM webhooks h"
        "  WHERE h.id = $2 AND h.workspace_id = $1"
        "  UNION ALL SELECT NULL LIMIT 1) wh"
        " CROSS JOIN LATERAL (SELECT CASE WHEN wh.id IS NULL THEN NULL"
        "  ELSE (SELECT count(*) FROM webhook_deliveries"
        "   WHERE webhook_id = wh.id) END AS total OFFSET 0) t"
        " LEFT JOIN LATERAL (SELECT" NGX_HTTP_CMS_DELIVERY_COLUMNS
        "  FROM webhook_deliveries d WHERE d.webhook_id = wh.id"
        "  ORDER BY d.created_at DESC, d.id DESC LIMIT $3 OFFSET $4) p"
        " ON true", 4);

/* $1 workspace, $2 webhook, $3 delivery: the same event queued again */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_deliveries_redeliver_sql =
    ngx_http_cms_pg_stmt(
        "INSERT INTO webhook_deliveries AS d (webhook_id, workspace_id,"
        " event_id, event_type, payload)"
        " SELECT o.webhook_id, o.workspace_id, o.event_id, o.event_type,"
        " o.payload FROM webhook_deliveries o"
        " WHERE o.id = $3 AND o.webhook_id = $2 AND o.workspace_id = $1"
        " RETURNING 0," NGX_HTTP_CMS_DELIVERY_COLUMNS, 3);

/* $1 workspace, $2 webhook: a webhook.test event for it alone */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_deliveries_test_sql =
    ngx_http_cms_pg_stmt(
        "INSERT INTO webhook_deliveries AS d (webhook_id, workspace_id,"
        " event_id, event_type, payload)"
        " SELECT h.id, h.workspace_id, e.id, 'webhook.test',"
        " cms_webhook_payload(e.id, 'webhook.test', now(), h.workspace_id,"
        "  jsonb_build_object('webhook_id', h.id))"
        " FROM webhooks h CROSS JOIN (SELECT gen_random_uuid() AS id) e"
        " WHERE h.id = $2 AND h.workspace_id = $1"
        " RETURNING 0," NGX_HTTP_CMS_DELIVERY_COLUMNS, 2);


#define NGX_HTTP_CMS_HOOK_READ   NGX_HTTP_CMS_SCOPE_WEBHOOKS_READ
#define NGX_HTTP_CMS_HOOK_WRITE  NGX_HTTP_CMS_SCOPE_WEBHOOKS_WRITE


ngx_http_cms_route_t  ngx_http_cms_deliveries_routes[] = {

    { NGX_HTTP_GET, ngx_string("/api/webhooks/:id/deliveries"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_HOOK_READ,
      ngx_http_cms_deliveries_list, NULL, NULL, NGX_HTTP_CMS_ROLE_ADMIN },

    { NGX_HTTP_POST,
      ngx_string("/api/webhooks/:id/deliveries/:deliveryId/redeliver"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_HOOK_WRITE,
      ngx_http_cms_deliveries_redeliver, NULL, NULL,
      NGX_HTTP_CMS_ROLE_ADMIN },

    { NGX_HTTP_POST, ngx_string("/api/webhooks/:id/test"),
      NGX_HTTP_CMS_AUTH_SECRET_KEY, NGX_HTTP_CMS_HOOK_WRITE,
      ngx_http_cms_deliveries_test, NULL, NULL, NGX_HTTP_CMS_ROLE_ADMIN },

    ngx_http_cms_null_route
};


static ngx_int_t
ngx_http_cms_deliveries_list(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[4];

    rc = ngx_http_cms_path_id(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_list_query(r, &ngx_http_cms_deliveries_list_sql,
                                   args, 4, &ngx_http_cms_delivery);
}


static ngx_int_t
ngx_http_cms_deliveries_redeliver(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[3];

    rc = ngx_http_cms_path_id(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    if (ctx->nparams < 2
        || !cms_uuid_valid((char *) ctx->params[1].data, ctx->params[1].len))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    if (!ctx->counted) {
        return ngx_http_cms_deliveries_limit(r, ctx);
    }

    args[2] = ctx->params[1];

    return ngx_http_cms_pg_query(r, &ngx_http_cms_deliveries_redeliver_sql,
                                 args, 3, ngx_http_cms_deliveries_queued);
}


static ngx_int_t
ngx_http_cms_deliveries_test(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[2];

    rc = ngx_http_cms_path_id(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    if (!ctx->counted) {
        return ngx_http_cms_deliveries_limit(r, ctx);
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_deliveries_test_sql,
                                 args, 2, ngx_http_cms_deliveries_queued);
}


/* the workspace's hand-queued sends (a malformed id is refused before it
   costs one); the handler runs again after */
static ngx_int_t
ngx_http_cms_deliveries_limit(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    static ngx_http_cms_throttle_t  sends = { 20, 3000 };

    ctx->counted = 1;

    return ngx_http_cms_ratelimit_own(r, ctx, "cms:rl:wh:",
                                      &ctx->principal.workspace_id, &sends,
                                      ctx->route->handler);
}


/* 202 {delivery}: queued, the delivery job sends it */
static ngx_int_t
ngx_http_cms_deliveries_queued(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_send_row(r, NGX_HTTP_ACCEPTED, &ngx_http_cms_delivery,
                                 res);
}
