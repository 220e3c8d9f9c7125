
/*
 * Routes for the test suite only, under /v1/_test, answered only with
 * "cms_test_routes on" (off by default): a slow query, pool and thread
 * lane counters, a body echo and a Redis read.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_query.h"
#include "ngx_http_cms_redis.h"
#include "ngx_http_cms_thread.h"
#include "ngx_http_cms_json.h"
#include "ngx_http_cms_auth.h"
#include "ngx_http_cms_resolve.h"


static ngx_int_t ngx_http_cms_testing_sleep(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_testing_slept(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_testing_flaky(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_testing_flaked(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static json_t *ngx_http_cms_testing_lane(ngx_uint_t lane);
static ngx_int_t ngx_http_cms_testing_wait(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_testing_pool(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_testing_echo(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_testing_redis(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_testing_scoped(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_testing_resolve(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static void ngx_http_cms_testing_resolved(void *data, ngx_int_t rc,
    ngx_addr_t *addrs, ngx_uint_t naddrs);
static ngx_int_t ngx_http_cms_testing_addresses(ngx_http_request_t *r,
    ngx_int_t rc, ngx_addr_t *addrs, ngx_uint_t naddrs);
static ngx_int_t ngx_http_cms_testing_redis_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, redisReply **replies, ngx_uint_t n);


static ngx_http_cms_pg_stmt_t  ngx_http_cms_testing_sleep_sql =
    ngx_http_cms_pg_stmt("SELECT pg_sleep($1::float8)", 1);

/* cms_test_flaky() is the test's own function (t/047-pg-refusals.t) */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_testing_flaky_sql =
    ngx_http_cms_pg_stmt_retry("SELECT cms_test_flaky()", 0);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_testing_flaky_once_sql =
    ngx_http_cms_pg_stmt("SELECT cms_test_flaky()", 0);

/* cms_test_wait() is the test's own: it returns once the test says so */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_testing_wait_sql =
    ngx_http_cms_pg_stmt("SELECT cms_test_wait()", 0);


ngx_http_cms_route_t  ngx_http_cms_testing_routes[] = {

    { NGX_HTTP_GET, ngx_string("/_test/sleep"), NGX_HTTP_CMS_AUTH_NONE, 0,
      ngx_http_cms_testing_sleep, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/_test/flaky"), NGX_HTTP_CMS_AUTH_NONE, 0,
      ngx_http_cms_testing_flaky, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/_test/wait"), NGX_HTTP_CMS_AUTH_NONE, 0,
      ngx_http_cms_testing_wait, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/_test/pool"), NGX_HTTP_CMS_AUTH_NONE, 0,
      ngx_http_cms_testing_pool, NULL, NULL, 0 },

    { NGX_HTTP_POST, ngx_string("/_test/echo"), NGX_HTTP_CMS_AUTH_NONE, 0,
      ngx_http_cms_testing_echo, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/_test/redis"), NGX_HTTP_CMS_AUTH_NONE, 0,
      ngx_http_cms_testing_redis, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/_test/resolve"), NGX_HTTP_CMS_AUTH_NONE, 0,
      ngx_http_cms_testing_resolve, NULL, NULL, 0 },

    /* a secret-key route needing a scope, before any resource needs one */
    { NGX_HTTP_GET, ngx_string("/_test/scoped"), NGX_HTTP_CMS_AUTH_SECRET_KEY,
      NGX_HTTP_CMS_SCOPE_ARTICLES_WRITE, ngx_http_cms_testing_scoped, NULL,
      NULL, 0 },

    /* a studio route needing the editor role */
    { NGX_HTTP_GET, ngx_string("/workspaces/:id/_test/editor"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_EDITOR,
      ngx_http_cms_testing_scoped, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


static ngx_int_t
ngx_http_cms_testing_sleep(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  seconds;

    if (ngx_http_cms_query_arg(r, "seconds", 4, &seconds) != NGX_OK
        || seconds.len == 0
        || ngx_atofp(seconds.data, seconds.len, 2) == NGX_ERROR)
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_REQUEST,
                                 "seconds");
    }

    /* the reader's copy lives in r->pool: keep it for the answer */
    ctx->data = ngx_palloc(r->pool, sizeof(ngx_str_t));
    if (ctx->data == NULL) {
        return NGX_ERROR;
    }

    *(ngx_str_t *) ctx->data = seconds;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_testing_sleep_sql,
                                 &seconds, 1, ngx_http_cms_testing_slept);
}


static ngx_int_t
ngx_http_cms_testing_slept(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t   rc;
    ngx_str_t   seconds;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    json_t     *json;

    seconds = *(ngx_str_t *) ctx->data;

    json = json_pack("{s:f}", "slept",
                     ngx_atofp(seconds.data, seconds.len, 2) / 100.0);

    if (json == NULL || ngx_http_cms_json_pool(r, json) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_send_json(r, NGX_HTTP_OK, json);
}


/* a statement the test makes fail now and then: ?once=1 is not retried */
static ngx_int_t
ngx_http_cms_testing_flaky(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  once;

    rc = ngx_http_cms_query_arg(r, "once", 1, &once);

    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return rc;
    }

    if (rc == NGX_OK && once.len == 1 && once.data[0] == '1') {
        return ngx_http_cms_pg_query(r, &ngx_http_cms_testing_flaky_once_sql,
                                     NULL, 0, ngx_http_cms_testing_flaked);
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_testing_flaky_sql, NULL, 0,
                                 ngx_http_cms_testing_flaked);
}


/* a statement that holds a connection until the test lets it go */
static ngx_int_t
ngx_http_cms_testing_wait(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_pg_query(r, &ngx_http_cms_testing_wait_sql, NULL, 0,
                                 ngx_http_cms_testing_flaked);
}


static ngx_int_t
ngx_http_cms_testing_flaked(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    json_t     *json;
    ngx_int_t   rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    json = json_pack("{s:s}", "value", PQgetvalue(res, 0, 0));

    if (json == NULL || ngx_http_cms_json_pool(r, json) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_send_json(r, NGX_HTTP_OK, json);
}


static json_t *
ngx_http_cms_testing_stats(ngx_http_cms_pool_stats_t *st)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}",
                     "max", (json_int_t) st->max,
                     "connections", (json_int_t) st->connections,
                     "idle", (json_int_t) st->idle,
                     "busy", (json_int_t) st->busy,
                     "queued", (json_int_t) st->queued,
                     "pipelined", (json_int_t) st->pipelined);
}


static json_t *
ngx_http_cms_testing_lane(ngx_uint_t lane)
{
    ngx_http_cms_thread_stats_t  st;

    ngx_http_cms_thread_stats(lane, &st);

    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
                     "jobs", (json_int_t) st.jobs,
                     "queue", (json_int_t) st.queue,
                     "running", (json_int_t) st.running,
                     "queued", (json_int_t) st.queued,
                     "held", (json_int_t) st.held,
                     "started", (json_int_t) st.started,
                     "refused", (json_int_t) st.refused);
}


/* the worker's pools and thread lanes, with their counters */
static ngx_int_t
ngx_http_cms_testing_pool(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    json_t                     *json;
    ngx_http_cms_pool_stats_t   pg, redis;

    ngx_http_cms_pg_stats(&pg);
    ngx_http_cms_redis_stats(&redis);

    /* "libpq": the version the module runs with (t/044 asks) */
    json = json_pack("{s:o, s:o, s:o, s:o, s:o, s:i}",
                     "pg", ngx_http_cms_testing_stats(&pg),
                     "redis", ngx_http_cms_testing_stats(&redis),
                     "password",
                     ngx_http_cms_testing_lane(NGX_HTTP_CMS_LANE_PASSWORD),
                     "sanitizer",
                     ngx_http_cms_testing_lane(NGX_HTTP_CMS_LANE_SANITIZE),
                     "image",
                     ngx_http_cms_testing_lane(NGX_HTTP_CMS_LANE_IMAGE),
                     "libpq", PQlibVersion());

    if (json == NULL || ngx_http_cms_json_pool(r, json) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_send_json(r, NGX_HTTP_OK, json);
}


static ngx_int_t
ngx_http_cms_testing_echo(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    if (ctx->body == NULL) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_BODY_REQUIRED, NULL);
    }

    return ngx_http_cms_send_json(r, NGX_HTTP_OK, ctx->body);
}


static ngx_int_t
ngx_http_cms_testing_redis(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t                   key;
    const char                 *argv[2];
    size_t                      argvlen[2];
    ngx_http_cms_redis_cmds_t  *cmds;

    if (ngx_http_cms_query_arg(r, "key", 256, &key) != NGX_OK
        || key.len == 0)
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_REQUEST, "key");
    }

    cmds = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_redis_cmds_t));
    if (cmds == NULL) {
        return NGX_ERROR;
    }

    argv[0] = "GET";
    argvlen[0] = 3;
    argv[1] = (const char *) key.data;
    argvlen[1] = key.len;

    if (ngx_http_cms_redis_append(r->pool, cmds, 2, argv, argvlen) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_redis_run(r, cmds, ngx_http_cms_testing_redis_done);
}


static ngx_int_t
ngx_http_cms_testing_redis_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, redisReply **replies, ngx_uint_t n)
{
    json_t  *json;

    if (replies == NULL) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_UNAVAILABLE, NULL);
    }

    json = json_pack("{s:o}", "value",
                     replies[0]->type == REDIS_REPLY_STRING
                     ? json_stringn(replies[0]->str, replies[0]->len)
                     : json_null());

    if (json == NULL || ngx_http_cms_json_pool(r, json) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_send_json(r, NGX_HTTP_OK, json);
}


/* tells who the router let in */
static ngx_int_t
ngx_http_cms_testing_scoped(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    json_t  *json;

    json = json_pack("{s:s%, s:s%, s:I}",
                     "workspace_id", ctx->principal.workspace_id.data,
                     ctx->principal.workspace_id.len,
                     "user_id", ctx->principal.user_id.data,
                     ctx->principal.user_id.len,
                     "role", (json_int_t) ctx->principal.role);

    if (json == NULL || ngx_http_cms_json_pool(r, json) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_send_json(r, NGX_HTTP_OK, json);
}


/*
 * GET /_test/resolve?host=NAME: NAME through ngx_http_cms_resolve_start(),
 * answered as {"result": "ok" | "nxdomain" | "error", "addresses":
 * [{"address", "allowed"}]}, "allowed" by ngx_http_cms_outbound_allowed();
 * 503 when the resolution cannot start (no resolver).
 */
static ngx_int_t
ngx_http_cms_testing_resolve(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  host;

    if (ngx_http_cms_query_arg(r, "host", 253, &host) != NGX_OK
        || host.len == 0)
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_REQUEST, "host");
    }

    if (ngx_http_cms_resolve_start(r->pool, r->connection->log, &host,
                                   ngx_http_cms_testing_resolved, r)
        == NULL)
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_UNAVAILABLE, NULL);
    }

    return NGX_DONE;
}


static void
ngx_http_cms_testing_resolved(void *data, ngx_int_t rc, ngx_addr_t *addrs,
    ngx_uint_t naddrs)
{
    ngx_http_request_t  *r = data;
    ngx_connection_t    *c;
    ngx_http_cms_ctx_t  *ctx;

    c = r->connection;
    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    ctx->finish(r, ngx_http_cms_testing_addresses(r, rc, addrs, naddrs));
    ngx_http_run_posted_requests(c);
}


static ngx_int_t
ngx_http_cms_testing_addresses(ngx_http_request_t *r, ngx_int_t rc,
    ngx_addr_t *addrs, ngx_uint_t naddrs)
{
    u_char      text[NGX_SOCKADDR_STRLEN];
    size_t      len;
    json_t     *json, *list, *one;
    ngx_int_t   allowed;
    ngx_uint_t  i;

    list = json_array();
    json = json_pack("{s:s,s:o}", "result",
                     rc == NGX_OK ? "ok"
                     : rc == NGX_DECLINED ? "nxdomain" : "error",
                     "addresses", list);

    for (i = 0; json != NULL && i < naddrs; i++) {
        len = ngx_sock_ntop(addrs[i].sockaddr, addrs[i].socklen, text,
                            NGX_SOCKADDR_STRLEN, 0);

        allowed = ngx_http_cms_outbound_allowed((ngx_cycle_t *) ngx_cycle,
                                                addrs[i].sockaddr);

        one = json_pack("{s:s#,s:b}", "address", text, (int) len,
                        "allowed", allowed == NGX_OK);

        if (one == NULL || json_array_append_new(list, one) != 0) {
            json_decref(json);
            json = NULL;
        }
    }

    if (json == NULL || ngx_http_cms_json_pool(r, json) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_send_json(r, NGX_HTTP_OK, json);
}
