
/*
 * Article edit locks: POST and DELETE
 * /v1/workspaces/{id}/articles/{articleId}/lock (session).
 *
 * A lock is a Redis hash (holder, acquired and refreshed times in ms from
 * Redis TIME) under "cms:lock:{<workspace>}:<article>", with a TTL of
 * cms_lock_ttl (2 min).  Each operation is one Lua script, so it is
 * atomic across workers and hosts: POST takes a free lock or refreshes
 * the caller's own (a new TTL) and otherwise leaves the holder's as it
 * is; it always answers 200 { lock } with the holder, "mine" telling the
 * caller whether it is theirs (the spec: not an error status).  DELETE
 * releases the caller's own lock; someone else's only for an owner or an
 * admin (a force release), else it is a no-op; always 204.
 *
 * Who may lock: authors and up, on the articles they may edit (an author
 * only their own; cms_article_editable(), sql/0025_article_seo.sql).
 * DELETE needs the article to exist, nothing more: releasing one's own
 * lock is always allowed.  The holder's name and email are read from
 * PostgreSQL (a member of the workspace; null when they left it).  Redis
 * is the lock's only home: when it cannot be asked, 503.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_json.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_auth.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_redis.h"


#define NGX_HTTP_CMS_LOCK_ARGS     7


/*
 * KEYS[1] the lock, ARGV[1] the caller, ARGV[2] the TTL in ms: a free
 * lock becomes the caller's, the caller's own is refreshed (new TTL),
 * another's is left alone.  Answers { holder, acquired ms, refreshed ms,
 * expires ms }, the times as the hash keeps them (a hash without
 * "expires": now + its PTTL).  TIME before a write needs effects
 * replication (the default since Redis 5).
 */
static ngx_http_cms_redis_script_t  ngx_http_cms_lock_acquire =
    ngx_http_cms_redis_script(
    "if redis.replicate_commands then redis.replicate_commands() end\n"
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "local h = redis.call('HMGET', KEYS[1], 'user', 'acquired',"
    " 'refreshed', 'expires')\n"
    "if not h[1] then\n"
    "  h = { ARGV[1], now }\n"
    "end\n"
    "if h[1] == ARGV[1] then\n"
    "  h[3] = now\n"
    "  h[4] = now + tonumber(ARGV[2])\n"
    "  redis.call('HSET', KEYS[1], 'user', h[1], 'acquired', h[2],"
    " 'refreshed', h[3], 'expires', h[4])\n"
    "  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
    "end\n"
    "return { h[1], tonumber(h[2]) or 0, tonumber(h[3]) or 0,"
    " tonumber(h[4]) or now + redis.call('PTTL', KEYS[1]) }\n");

/*
 * KEYS[1] the lock, ARGV[1] the caller, ARGV[2] "1" to release anyone's:
 * deletes the lock when the caller holds it (or ARGV[2] is "1").
 * Answers 1 when it did, else 0.
 */
static ngx_http_cms_redis_script_t  ngx_http_cms_lock_release =
    ngx_http_cms_redis_script(
    "local u = redis.call('HGET', KEYS[1], 'user')\n"
    "if u and (u == ARGV[1] or ARGV[2] == '1') then\n"
    "  redis.call('DEL', KEYS[1])\n"
    "  return 1\n"
    "end\n"
    "return 0\n");


/* a lock request between its steps */
typedef struct {
    ngx_str_t                   args[NGX_HTTP_CMS_LOCK_ARGS];
    ngx_str_t                   key;
    unsigned                    release:1;   /* DELETE */
    unsigned                    eval:1;      /* NOSCRIPT seen: EVAL */
} ngx_http_cms_lock_t;


static ngx_int_t ngx_http_cms_locks_acquire(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_locks_release(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_locks_start(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t release);
static ngx_int_t ngx_http_cms_locks_checked(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_locks_send(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_locks_replied(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, redisReply **replies, ngx_uint_t n);
static ngx_int_t ngx_http_cms_locks_holder(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, redisReply *rp);
static ngx_uint_t ngx_http_cms_locks_shape(redisReply *rp);


/* the lock's record: $1 workspace, $2 article, $3 holder, $4 acquired,
   $5 refreshed, $6 expires (ms since the epoch), $7 mine */
#define NGX_HTTP_CMS_LOCK_TS(n)                                              \
    " cms_ts(timestamptz 'epoch' + $" #n "::bigint * interval '1 ms'),"

static ngx_http_cms_pg_stmt_t  ngx_http_cms_locks_row_sql =
    ngx_http_cms_pg_stmt(
        "SELECT $2::uuid::text, $3::text, u.name, u.email,"
        NGX_HTTP_CMS_LOCK_TS(4) NGX_HTTP_CMS_LOCK_TS(5)
        NGX_HTTP_CMS_LOCK_TS(6) " $7::boolean"
        " FROM (SELECT 1) one"
        " LEFT JOIN members m ON m.workspace_id = $1"
        "  AND m.user_id = $3::uuid"
        " LEFT JOIN users u ON u.id = m.user_id", 7);

/* $1 workspace, $2 article, $3 the actor (NULL: any article): raises
   not_found or forbidden */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_locks_check_sql =
    ngx_http_cms_pg_stmt("SELECT cms_article_editable($1, $3, $2)", 3);

static const ngx_http_cms_col_t  ngx_http_cms_lock_cols[] = {
    { "article_id", 0, NGX_HTTP_CMS_COL_STRING },
    { "user_id", 1, NGX_HTTP_CMS_COL_STRING },
    { "user_name", 2, NGX_HTTP_CMS_COL_STRING },
    { "user_email", 3, NGX_HTTP_CMS_COL_STRING },
    { "acquired_at", 4, NGX_HTTP_CMS_COL_STRING },
    { "refreshed_at", 5, NGX_HTTP_CMS_COL_STRING },
    { "expires_at", 6, NGX_HTTP_CMS_COL_STRING },
    { "mine", 7, NGX_HTTP_CMS_COL_BOOL },
};

static const ngx_http_cms_record_t  ngx_http_cms_lock = {
    "lock", "locks", ngx_http_cms_lock_cols,
    sizeof(ngx_http_cms_lock_cols) / sizeof(ngx_http_cms_col_t)
};


ngx_http_cms_route_t  ngx_http_cms_locks_routes[] = {

    { NGX_HTTP_POST, ngx_string("/workspaces/:id/articles/:article/lock"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_AUTHOR,
      ngx_http_cms_locks_acquire, NULL, NULL, 0 },

    { NGX_HTTP_DELETE, ngx_string("/workspaces/:id/articles/:article/lock"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_AUTHOR,
      ngx_http_cms_locks_release, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


static ngx_int_t
ngx_http_cms_locks_acquire(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_locks_start(r, ctx, 0);
}


static ngx_int_t
ngx_http_cms_locks_release(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_locks_start(r, ctx, 1);
}


/* the path's article, the lock's key, then the article's check */
static ngx_int_t
ngx_http_cms_locks_start(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_uint_t release)
{
    ngx_int_t             rc;
    ngx_http_cms_lock_t  *lk;

    rc = ngx_http_cms_json_no_body(r, ctx->body);
    if (rc != NGX_OK) {
        return rc;
    }

    lk = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_lock_t));
    if (lk == NULL) {
        return NGX_ERROR;
    }

    rc = ngx_http_cms_path_id(r, ctx, lk->args);
    if (rc != NGX_OK) {
        return rc;
    }

    lk->release = release;

    lk->key.data = ngx_pnalloc(r->pool, sizeof("cms:lock:{}:") - 1
                                        + lk->args[0].len
                                        + lk->args[1].len);
    if (lk->key.data == NULL) {
        return NGX_ERROR;
    }

    /* the hash tag keeps a workspace's locks on one cluster slot */
    lk->key.len = ngx_sprintf(lk->key.data, "cms:lock:{%V}:%V",
                              &lk->args[0], &lk->args[1])
                  - lk->key.data;

    /* a uuid in capitals is the same article: one key for both */
    ngx_strlow(lk->key.data, lk->key.data, lk->key.len);

    /* a DELETE only needs the article; a lock, the right to edit it */
    ngx_str_null(&lk->args[2]);

    if (!release && ctx->principal.role < NGX_HTTP_CMS_ROLE_EDITOR) {
        lk->args[2] = ctx->principal.user_id;
    }

    ctx->data = lk;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_locks_check_sql, lk->args,
                                 3, ngx_http_cms_locks_checked);
}


static ngx_int_t
ngx_http_cms_locks_checked(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_locks_send(r, ctx);
}


/* one EVALSHA (EVAL once Redis said NOSCRIPT) */
/* long: the script's arguments, acquire or release */
static ngx_int_t
ngx_http_cms_locks_send(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    u_char                     *ttl;
    size_t                      len[6];
    ngx_int_t                   rc;
    const char                 *argv[6];
    ngx_http_cms_lock_t        *lk;
    ngx_http_cms_main_conf_t   *mcf;
    ngx_http_cms_redis_cmds_t  *cmds;

    lk = ctx->data;
    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    cmds = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_redis_cmds_t));
    ttl = ngx_pnalloc(r->pool, NGX_INT_T_LEN);

    if (cmds == NULL || ttl == NULL) {
        return NGX_ERROR;
    }

    ngx_http_cms_redis_script_argv(lk->release ? &ngx_http_cms_lock_release
                                               : &ngx_http_cms_lock_acquire,
                                   lk->eval, argv, len);
    argv[2] = "1";
    len[2] = 1;
    argv[3] = (const char *) lk->key.data;
    len[3] = lk->key.len;
    argv[4] = (const char *) ctx->principal.user_id.data;
    len[4] = ctx->principal.user_id.len;

    if (lk->release) {
        /* owners and admins release anyone's lock */
        argv[5] = (ctx->principal.role >= NGX_HTTP_CMS_ROLE_ADMIN) ? "1"
                                                                   : "0";
        len[5] = 1;

    } else {
        argv[5] = (const char *) ttl;
        len[5] = ngx_sprintf(ttl, "%M", mcf->lock_ttl) - ttl;
    }

    if (ngx_http_cms_redis_append(r->pool, cmds, 6, argv, len) != NGX_OK) {
        return NGX_ERROR;
    }

    rc = ngx_http_cms_redis_run(r, cmds, ngx_http_cms_locks_replied);

    if (rc == NGX_DONE || rc == NGX_ERROR) {
        return rc;
    }

    return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_UNAVAILABLE, NULL);
}


static ngx_int_t
ngx_http_cms_locks_replied(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    redisReply **replies, ngx_uint_t n)
{
    redisReply           *rp;
    ngx_str_t             empty = ngx_null_string;
    ngx_http_cms_lock_t  *lk;

    lk = ctx->data;

    if (replies == NULL || n != 1) {
        /* logged where it failed: the lock cannot be known */
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_UNAVAILABLE, NULL);
    }

    rp = replies[0];

    if (rp->type == REDIS_REPLY_ERROR) {
        if (!lk->eval && ngx_http_cms_redis_noscript(rp)) {
            lk->eval = 1;
            return ngx_http_cms_locks_send(r, ctx);
        }

        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: lock script failed: %s", rp->str);
        return NGX_ERROR;
    }

    if (lk->release) {
        return ngx_http_cms_send(r, NGX_HTTP_NO_CONTENT, &empty);
    }

    return ngx_http_cms_locks_holder(r, ctx, rp);
}


/* the script's { holder, acquired, refreshed, expires } to the record */
static ngx_int_t
ngx_http_cms_locks_holder(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    redisReply *rp)
{
    u_char               *p;
    ngx_uint_t            i;
    ngx_http_cms_lock_t  *lk;

    lk = ctx->data;

    if (!ngx_http_cms_locks_shape(rp)) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: lock script answered an unknown shape");
        return NGX_ERROR;
    }

    /* the reply is freed when this returns: copies in r->pool */
    p = ngx_pnalloc(r->pool, rp->element[0]->len + 3 * NGX_INT64_LEN);
    if (p == NULL) {
        return NGX_ERROR;
    }

    lk->args[2].data = p;
    lk->args[2].len = rp->element[0]->len;
    p = ngx_cpymem(p, rp->element[0]->str, rp->element[0]->len);

    for (i = 1; i < 4; i++) {
        lk->args[2 + i].data = p;
        p = ngx_sprintf(p, "%L", (int64_t) rp->element[i]->integer);
        lk->args[2 + i].len = p - lk->args[2 + i].data;
    }

    if (lk->args[2].len == ctx->principal.user_id.len
        && ngx_strncmp(lk->args[2].data, ctx->principal.user_id.data,
                       lk->args[2].len) == 0)
    {
        ngx_str_set(&lk->args[6], "true");

    } else {
        ngx_str_set(&lk->args[6], "false");
    }

    ctx->data = (void *) &ngx_http_cms_lock;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_locks_row_sql, lk->args,
                                 NGX_HTTP_CMS_LOCK_ARGS,
                                 ngx_http_cms_row_ok_done);
}


/* whether "rp" is { holder (a string of 1 to 64 bytes), 3 integers } */
static ngx_uint_t
ngx_http_cms_locks_shape(redisReply *rp)
{
    ngx_uint_t  i;

    if (rp->type != REDIS_REPLY_ARRAY || rp->elements != 4
        || rp->element[0]->type != REDIS_REPLY_STRING
        || rp->element[0]->len == 0 || rp->element[0]->len > 64)
    {
        return 0;
    }

    for (i = 1; i < 4; i++) {
        if (rp->element[i]->type != REDIS_REPLY_INTEGER) {
            return 0;
        }
    }

    return 1;
}
