
/*
 * GET /v1/health: asks PostgreSQL and Redis at the same time and answers
 * 200 when both reply, 503 naming the one that does not.
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


typedef struct {
    ngx_uint_t                  pg_ok;
    ngx_uint_t                  redis_ok;
} ngx_http_cms_health_t;


static ngx_int_t ngx_http_cms_health_get(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_health_pg_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_health_redis_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, redisReply **replies, ngx_uint_t n);
static ngx_int_t ngx_http_cms_health_answer(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);


static ngx_http_cms_pg_stmt_t  ngx_http_cms_health_sql =
    ngx_http_cms_pg_stmt("SELECT 1", 0);


ngx_http_cms_route_t  ngx_http_cms_health_routes[] = {

    { NGX_HTTP_GET, ngx_string("/health"), NGX_HTTP_CMS_AUTH_NONE, 0,
      ngx_http_cms_health_get, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


static ngx_int_t
ngx_http_cms_health_get(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t                   rc;
    ngx_http_cms_redis_cmds_t  *cmds;
    static const char          *ping[] = { "PING" };
    static const size_t         ping_len[] = { 4 };

    ctx->data = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_health_t));
    cmds = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_redis_cmds_t));

    if (ctx->data == NULL || cmds == NULL) {
        return NGX_ERROR;
    }

    /* a dependency that cannot even be asked is simply not ok */
    rc = ngx_http_cms_pg_query(r, &ngx_http_cms_health_sql, NULL, 0,
                               ngx_http_cms_health_pg_done);
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

    h->pg_ok = (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK);

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

    static ngx_str_t  answers[] = {
        ngx_string("{\"postgres\":\"unavailable\",\"redis\":\"unavailable\"}"),
        ngx_string("{\"postgres\":\"ok\",\"redis\":\"unavailable\"}"),
        ngx_string("{\"postgres\":\"unavailable\",\"redis\":\"ok\"}"),
        ngx_string("{\"postgres\":\"ok\",\"redis\":\"ok\"}")
    };

    body = answers[h->pg_ok | (h->redis_ok << 1)];

    return ngx_http_cms_send(r, (h->pg_ok && h->redis_ok)
                                ? NGX_HTTP_OK
                                : NGX_HTTP_SERVICE_UNAVAILABLE, &body);
}
