
/*
 * Health (docs/operations.md, "Health and readiness"):
 *
 *   GET /v1/health        PostgreSQL and Redis asked at the same time:
 *                         200 when both reply, 503 naming the one that
 *                         does not (every dependency, for a person);
 *   GET /v1/health/live   200 with no I/O: the worker answers (liveness);
 *   GET /v1/health/ready  PostgreSQL's schema version and Redis asked at
 *                         once: 200 when PostgreSQL answers with a current
 *                         schema, Redis down only "degraded" (the module
 *                         serves without it); 503 with Retry-After when
 *                         PostgreSQL is unreachable or its schema behind.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_redis.h"
#include "ngx_http_cms_schema.h"
#include "cms_version.h"


typedef struct {
    ngx_uint_t                  pg_ok;
    ngx_uint_t                  redis_ok;
    ngx_uint_t                  ready;       /* /health/ready's answer */
    ngx_uint_t                  schema;      /* ngx_http_cms_schema_state_e */
} ngx_http_cms_health_t;


static ngx_int_t ngx_http_cms_health_get(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_health_pg_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_health_redis_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, redisReply **replies, ngx_uint_t n);
static ngx_int_t ngx_http_cms_health_answer(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_health_ready(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_health_live(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_health_ask(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t ready);
static ngx_int_t ngx_http_cms_health_readiness(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);


/* a 503 of health says when to ask again */
static ngx_str_t  ngx_http_cms_health_retry_name = ngx_string("Retry-After");
static ngx_str_t  ngx_http_cms_health_retry = ngx_string("5");

static ngx_http_cms_pg_stmt_t  ngx_http_cms_health_sql =
    ngx_http_cms_pg_stmt_primary("SELECT 1", 0);


ngx_http_cms_route_t  ngx_http_cms_health_routes[] = {

    { NGX_HTTP_GET, ngx_string("/health"), NGX_HTTP_CMS_AUTH_NONE, 0,
      ngx_http_cms_health_get, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/health/live"), NGX_HTTP_CMS_AUTH_NONE, 0,
      ngx_http_cms_health_live, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/health/ready"), NGX_HTTP_CMS_AUTH_NONE, 0,
      ngx_http_cms_health_ready, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


static ngx_int_t
ngx_http_cms_health_get(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_health_ask(r, ctx, 0);
}


static ngx_int_t
ngx_http_cms_health_ready(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_health_ask(r, ctx, 1);
}


static ngx_int_t
ngx_http_cms_health_live(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    static ngx_str_t  ok = ngx_string("{\"status\":\"ok\"}");

    return ngx_http_cms_send(r, NGX_HTTP_OK, &ok);
}


/* both asked at once; readiness asks PostgreSQL for its schema */
static ngx_int_t
ngx_http_cms_health_ask(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_uint_t ready)
{
    ngx_int_t                   rc;
    ngx_http_cms_health_t      *h;
    ngx_http_cms_redis_cmds_t  *cmds;
    static const char          *ping[] = { "PING" };
    static const size_t         ping_len[] = { 4 };

    ctx->data = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_health_t));
    cmds = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_redis_cmds_t));

    if (ctx->data == NULL || cmds == NULL) {
        return NGX_ERROR;
    }

    h = ctx->data;
    h->ready = ready;

    /* a dependency that cannot even be asked is simply not ok */
    rc = ngx_http_cms_pg_query(r, ready ? &ngx_http_cms_schema_sql
                                        : &ngx_http_cms_health_sql,
                               NULL, 0, ngx_http_cms_health_pg_done);
    ctx->pending += (rc == NGX_DONE);

    if (ngx_http_cms_redis_append(r->pool, cmds, 1, ping, ping_len) != NGX_OK) {
        return NGX_ERROR;
    }

    rc = ngx_http_cms_redis_run(r, cmds, ngx_http_cms_health_redis_done);
    ctx->pending += (rc == NGX_DONE);

    return ctx->pending ? NGX_DONE : ngx_http_cms_health_answer(r, ctx);
}


static ngx_int_t
ngx_http_cms_health_pg_done(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_http_cms_health_t *h = ctx->data;

    char  *state;

    h->pg_ok = (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK);

    if (h->ready) {
        /* no schema_migrations table: reachable, nothing applied */
        state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
        h->pg_ok |= (state != NULL && ngx_strcmp(state, "42P01") == 0);
        h->schema = ngx_http_cms_schema_answer(res);
    }

    return --ctx->pending ? NGX_DONE : ngx_http_cms_health_answer(r, ctx);
}


static ngx_int_t
ngx_http_cms_health_redis_done(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    redisReply **replies, ngx_uint_t n)
{
    ngx_http_cms_health_t *h = ctx->data;

    h->redis_ok = (replies != NULL && n == 1
                   && replies[0]->type == REDIS_REPLY_STATUS);

    return --ctx->pending ? NGX_DONE : ngx_http_cms_health_answer(r, ctx);
}


static ngx_int_t
ngx_http_cms_health_answer(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_http_cms_health_t *h = ctx->data;

    ngx_str_t  body;

    if (h->ready) {
        return ngx_http_cms_health_readiness(r, ctx);
    }

    static ngx_str_t  answers[] = {
        ngx_string("{\"postgres\":\"unavailable\",\"redis\":\"unavailable\"}"),
        ngx_string("{\"postgres\":\"ok\",\"redis\":\"unavailable\"}"),
        ngx_string("{\"postgres\":\"unavailable\",\"redis\":\"ok\"}"),
        ngx_string("{\"postgres\":\"ok\",\"redis\":\"ok\"}")
    };

    body = answers[h->pg_ok | (h->redis_ok << 1)];

    if (h->pg_ok && h->redis_ok) {
        return ngx_http_cms_send(r, NGX_HTTP_OK, &body);
    }

    if (ngx_http_cms_header_add(r, &ngx_http_cms_health_retry_name,
                                &ngx_http_cms_health_retry)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_cms_send(r, NGX_HTTP_SERVICE_UNAVAILABLE, &body);
}


/* long: the body's fields, then 200 or 503 with Retry-After */
static ngx_int_t
ngx_http_cms_health_readiness(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_http_cms_health_t *h = ctx->data;

    ngx_str_t    body;
    ngx_uint_t   ready;
    const char  *status, *schema;

    schema = !h->pg_ok ? "unknown"
             : h->schema == NGX_HTTP_CMS_SCHEMA_CURRENT ? "current"
             : h->schema == NGX_HTTP_CMS_SCHEMA_BEHIND ? "out_of_date"
             : "unknown";

    ready = h->pg_ok && h->schema == NGX_HTTP_CMS_SCHEMA_CURRENT;
    status = !ready ? "unavailable" : h->redis_ok ? "ok" : "degraded";

    body.data = ngx_pnalloc(r->pool, 384);
    if (body.data == NULL) {
        return NGX_ERROR;
    }

    /* the versions: "NNNN_name", at most 64 bytes of the database's */
    body.len = ngx_snprintf(body.data, 384,
                            "{\"status\":\"%s\",\"postgres\":\"%s\","
                            "\"redis\":\"%s\",\"schema\":\"%s\","
                            "\"schema_version\":\"%s\","
                            "\"schema_needed\":\"%s\","
                            "\"version\":\"" CMS_VERSION "\"}",
                            status, h->pg_ok ? "ok" : "unavailable",
                            h->redis_ok ? "ok" : "degraded", schema,
                            ngx_http_cms_schema_seen(), NGX_HTTP_CMS_SCHEMA)
               - body.data;

    if (!ready
        && ngx_http_cms_header_add(r, &ngx_http_cms_health_retry_name,
                                   &ngx_http_cms_health_retry)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_cms_send(r, ready ? NGX_HTTP_OK
                                      : NGX_HTTP_SERVICE_UNAVAILABLE, &body);
}
