
/*
 * The pools: the primary's and, for "cms_postgres_replica", a pool each
 * beside it; a check that keeps what each replica has replayed; and
 * where a request's query runs.
 *
 * A query runs on a replica only for a GET or HEAD, only for a statement
 * not marked primary, and only on a replica whose last check (each second)
 * found it in recovery and at most max_lag behind: it has replayed what
 * the primary had written max_lag ago (the worker samples the primary's
 * position with each check), so a replica cut off from its primary stops
 * being read once the primary has moved on for max_lag.  Read-your-writes, as
 * GitLab balances its reads: a request that wrote keeps the primary's WAL
 * insert position in Redis under its principal (the key's HMAC, the
 * session's user) before its answer leaves; that principal's reads then
 * go to a replica only once the replica has replayed that position, or
 * to the primary.  The position is kept for max_lag and two checks: by
 * then a usable replica has replayed it.  A replica that gives no answer
 * (down, refused, timed out, or read-only for a statement that writes)
 * is answered for by the primary: a replica never causes a 5xx.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_pg_int.h"
#include "ngx_http_cms_redis.h"
#include "ngx_http_cms_metrics.h"


#define NGX_HTTP_CMS_PG_CHECK       1000
#define NGX_HTTP_CMS_PG_RYW_PREFIX  "cms:ryw:"


/* a write's position being kept, then what goes on */
typedef struct {
    ngx_str_t                   key;          /* the principal's */
    ngx_http_cms_handler_pt     then;
} ngx_http_cms_pg_mark_t;


static void ngx_http_cms_pg_check(ngx_event_t *ev);
static void ngx_http_cms_pg_checked(void *data, PGresult *res);
static void ngx_http_cms_pg_sampled(void *data, PGresult *res);
static uint64_t ngx_http_cms_pg_needed(ngx_msec_t max_lag);
static ngx_uint_t ngx_http_cms_pg_usable(ngx_http_cms_pg_pool_t *pg);
static ngx_uint_t ngx_http_cms_pg_pick(uint64_t lsn);
static uint64_t ngx_http_cms_pg_lsn(const char *text);
static ngx_http_cms_pg_pool_t *ngx_http_cms_pg_to(ngx_http_cms_ctx_t *ctx,
    ngx_uint_t route);
static ngx_int_t ngx_http_cms_pg_principal(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *key);
static ngx_int_t ngx_http_cms_pg_routed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, redisReply **replies, ngx_uint_t n);
static ngx_int_t ngx_http_cms_pg_position(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_pg_kept(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, redisReply **replies, ngx_uint_t n);


/* whether the replica is one, and what it has replayed */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_pg_check_sql =
    ngx_http_cms_pg_stmt_primary(
        "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text", 0);

/* the primary's position, sampled each check: what "max_lag behind" means */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_pg_sample_sql =
    ngx_http_cms_pg_stmt_primary("SELECT pg_current_wal_lsn()::text", 0);

#define NGX_HTTP_CMS_PG_SAMPLES  64

typedef struct {
    ngx_msec_t                  at;
    uint64_t                    lsn;
} ngx_http_cms_pg_sample_t;

static ngx_http_cms_pg_sample_t
                    ngx_http_cms_pg_samples[NGX_HTTP_CMS_PG_SAMPLES];
static ngx_uint_t   ngx_http_cms_pg_nsamples;          /* ever taken */
static ngx_uint_t   ngx_http_cms_pg_sampling;

/* taken after a write: at or past its commit record */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_pg_position_sql =
    ngx_http_cms_pg_stmt_primary(
        "SELECT pg_current_wal_insert_lsn()::text", 0);


static ngx_uint_t  ngx_http_cms_pg_next;      /* round robin */


/* worker lifetime */

ngx_int_t
ngx_http_cms_pg_init_process(ngx_cycle_t *cycle, ngx_http_cms_pg_conf_t *pcf,
    ngx_array_t *replicas)
{
    ngx_uint_t                i;
    ngx_http_cms_pg_pool_t   *pg;
    ngx_http_cms_pg_conf_t  **rcf;

    if (ngx_http_cms_pg_pool_init(cycle, &ngx_http_cms_pg_pool, pcf)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (replicas == NULL || replicas->nelts == 0) {
        return NGX_OK;
    }

    pg = ngx_pcalloc(cycle->pool,
                     replicas->nelts * sizeof(ngx_http_cms_pg_pool_t));
    if (pg == NULL) {
        return NGX_ERROR;
    }

    rcf = replicas->elts;

    for (i = 0; i < replicas->nelts; i++) {
        if (ngx_http_cms_pg_pool_init(cycle, &pg[i], rcf[i]) != NGX_OK) {
            return NGX_ERROR;
        }

        pg[i].replica = i + 1;
        pg[i].check.handler = ngx_http_cms_pg_check;
        pg[i].check.data = &pg[i];
        pg[i].check.log = cycle->log;
        pg[i].check.cancelable = 1;

        ngx_add_timer(&pg[i].check, 1);
    }

    ngx_http_cms_pg_replicas = pg;
    ngx_http_cms_pg_nreplicas = replicas->nelts;

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_pg_pool_init(ngx_cycle_t *cycle, ngx_http_cms_pg_pool_t *pool,
    ngx_http_cms_pg_conf_t *pcf)
{
    ngx_uint_t               i;
    ngx_http_cms_pg_slot_t  *slot;

    pool->conf = pcf;
    ngx_queue_init(&pool->waiting);

    pool->slots = ngx_pcalloc(cycle->pool,
                              pcf->max * sizeof(ngx_http_cms_pg_slot_t));
    if (pool->slots == NULL) {
        return NGX_ERROR;
    }

    for (i = 0; i < pcf->max; i++) {
        slot = &pool->slots[i];
        slot->pg = pool;

        slot->prepared = ngx_pcalloc(cycle->pool, NGX_HTTP_CMS_PG_MAX_STMTS);
        slot->sent = ngx_pcalloc(cycle->pool,
                                 pcf->depth * sizeof(ngx_http_cms_pg_sent_t));

        if (slot->prepared == NULL || slot->sent == NULL) {
            return NGX_ERROR;
        }

        slot->log = *cycle->log;
        slot->log.action = "talking to postgres";

        slot->timer.handler = ngx_http_cms_pg_timer_handler;
        slot->timer.data = slot;
        slot->timer.log = &slot->log;

        /*
         * Not cancelable: a worker told to quit or reload waits for the
         * queries in flight (bounded by their timeouts) instead of
         * leaving their requests unanswered.
         */
        slot->timer.cancelable = 0;
    }

    return NGX_OK;
}


void
ngx_http_cms_pg_pool_close(ngx_http_cms_pg_pool_t *pg)
{
    ngx_uint_t  i;

    if (pg->conf == NULL) {
        return;
    }

    for (i = 0; i < pg->conf->max; i++) {
        ngx_http_cms_pg_close(&pg->slots[i]);
    }
}


void
ngx_http_cms_pg_exit_process(void)
{
    ngx_uint_t  i;

    ngx_http_cms_pg_pool_close(&ngx_http_cms_pg_pool);

    for (i = 0; i < ngx_http_cms_pg_nreplicas; i++) {
        ngx_http_cms_pg_pool_close(&ngx_http_cms_pg_replicas[i]);
    }
}


/* the replicas' checks */

static void
ngx_http_cms_pg_check(ngx_event_t *ev)
{
    ngx_http_cms_pg_pool_t *pg = ev->data;

    if (ngx_http_cms_quitting()) {
        return;
    }

    if (pg->replica == 1 && !ngx_http_cms_pg_sampling
        && ngx_http_cms_pg_job(&ngx_http_cms_pg_sample_sql, NULL, 0,
                               ngx_http_cms_pg_sampled, NULL)
           == NGX_OK)
    {
        ngx_http_cms_pg_sampling = 1;
    }

    if (!pg->checking) {
        pg->checking = 1;

        if (ngx_http_cms_pg_job_args(pg, &ngx_http_cms_pg_check_sql, NULL, 0,
                                     ngx_http_cms_pg_checked, pg)
            != NGX_OK)
        {
            /* no connection to be had: as good as no answer */
            ngx_http_cms_pg_checked(pg, NULL);
        }
    }

    ngx_add_timer(&pg->check, NGX_HTTP_CMS_PG_CHECK);
}


static void
ngx_http_cms_pg_checked(void *data, PGresult *res)
{
    ngx_http_cms_pg_pool_t *pg = data;

    uint64_t    lsn, needed;
    ngx_uint_t  usable, level;

    pg->checking = 0;
    usable = 0;

    if (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK
        && PQntuples(res) == 1 && PQnfields(res) == 2)
    {
        lsn = ngx_http_cms_pg_lsn(PQgetvalue(res, 0, 1));
        needed = ngx_http_cms_pg_needed(pg->conf->max_lag);

        if (PQgetvalue(res, 0, 0)[0] != 't') {
            ngx_log_error(NGX_LOG_WARN, ngx_cycle->log, 0,
                          "cms: postgres replica %ui is not in recovery "
                          "(promoted?): not read from", pg->replica);

        } else if (lsn != 0) {
            /* it has replayed what the primary had max_lag ago */
            pg->replayed = lsn;
            pg->checked = ngx_current_msec;
            usable = (needed != 0 && lsn >= needed);
        }
    }

    if (pg->usable != usable) {
        level = usable ? NGX_LOG_NOTICE : NGX_LOG_WARN;
        ngx_log_error(level, ngx_cycle->log, 0,
                      "cms: postgres replica %ui %s", pg->replica,
                      usable ? "is read from" : "is skipped: it gave no "
                      "answer, or is further behind than max_lag");
        pg->usable = usable;
    }
}


static void
ngx_http_cms_pg_sampled(void *data, PGresult *res)
{
    uint64_t                   lsn;
    ngx_http_cms_pg_sample_t  *s;

    ngx_http_cms_pg_sampling = 0;

    if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK
        || PQntuples(res) != 1)
    {
        return;
    }

    lsn = ngx_http_cms_pg_lsn(PQgetvalue(res, 0, 0));

    if (lsn != 0) {
        s = &ngx_http_cms_pg_samples[ngx_http_cms_pg_nsamples++
                                     % NGX_HTTP_CMS_PG_SAMPLES];
        s->at = ngx_current_msec;
        s->lsn = lsn;
    }
}


/*
 * The primary's position max_lag ago: the newest sample at least that
 * old, else the oldest kept (a stricter bound); 0 with none yet
 */
static uint64_t
ngx_http_cms_pg_needed(ngx_msec_t max_lag)
{
    uint64_t                   lsn;
    ngx_uint_t                 i, n, first;
    ngx_http_cms_pg_sample_t  *s;

    n = ngx_min(ngx_http_cms_pg_nsamples, NGX_HTTP_CMS_PG_SAMPLES);
    first = ngx_http_cms_pg_nsamples - n;

    if (n == 0) {
        return 0;
    }

    lsn = ngx_http_cms_pg_samples[first % NGX_HTTP_CMS_PG_SAMPLES].lsn;

    for (i = first; i < first + n; i++) {
        s = &ngx_http_cms_pg_samples[i % NGX_HTTP_CMS_PG_SAMPLES];

        if (ngx_current_msec - s->at < max_lag) {
            break;
        }

        lsn = s->lsn;
    }

    return lsn;
}


/* answered in the last three checks, and not too late then */
static ngx_uint_t
ngx_http_cms_pg_usable(ngx_http_cms_pg_pool_t *pg)
{
    return pg->usable
           && ngx_current_msec - pg->checked < 3 * NGX_HTTP_CMS_PG_CHECK;
}


/* a usable replica that has replayed "lsn" (2 + its index), or 1 */
static ngx_uint_t
ngx_http_cms_pg_pick(uint64_t lsn)
{
    ngx_uint_t               i, k;
    ngx_http_cms_pg_pool_t  *pg;

    for (i = 0; i < ngx_http_cms_pg_nreplicas; i++) {
        k = (ngx_http_cms_pg_next + i) % ngx_http_cms_pg_nreplicas;
        pg = &ngx_http_cms_pg_replicas[k];

        if (ngx_http_cms_pg_usable(pg) && pg->replayed >= lsn) {
            ngx_http_cms_pg_next = k + 1;
            return 2 + k;
        }
    }

    return 1;
}


/* "16/B374D848" as a number; 0 for anything else */
static uint64_t
ngx_http_cms_pg_lsn(const char *text)
{
    size_t      len;
    ngx_int_t   hi, lo;
    const char *slash;

    len = ngx_strlen(text);
    slash = ngx_strchr(text, '/');

    if (slash == NULL || slash == text || slash - text > 8
        || len - (slash - text) - 1 == 0 || len - (slash - text) - 1 > 8)
    {
        return 0;
    }

    hi = ngx_hextoi((u_char *) text, slash - text);
    lo = ngx_hextoi((u_char *) slash + 1, len - (slash - text) - 1);

    if (hi == NGX_ERROR || lo == NGX_ERROR) {
        return 0;
    }

    return ((uint64_t) hi << 32) | (uint64_t) lo;
}


/* routing */

/* long: the primary unless a read may go elsewhere; then the lookup */
ngx_int_t
ngx_http_cms_pg_route(ngx_http_cms_pg_query_t *q)
{
    ngx_str_t                   key;
    ngx_uint_t                  route;
    ngx_http_request_t         *r;
    ngx_http_cms_ctx_t         *ctx;
    ngx_http_cms_redis_cmds_t  *cmds;
    const char                 *argv[2];
    size_t                      argvlen[2];

    r = q->request;
    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);
    q->pg = &ngx_http_cms_pg_pool;

    if (ngx_http_cms_pg_nreplicas == 0 || ctx == NULL) {
        return NGX_OK;
    }

    if (!(r->method & (NGX_HTTP_GET|NGX_HTTP_HEAD))) {
        ctx->pg_wrote = 1;
        return NGX_OK;
    }

    if (q->stmt->primary || ctx->pg_route == 1) {
        return NGX_OK;
    }

    if (ctx->pg_route >= 2) {
        /* the request's other statements read where its first did */
        q->pg = &ngx_http_cms_pg_replicas[ctx->pg_route - 2];
        return NGX_OK;
    }

    route = ngx_http_cms_pg_pick(0);

    if (route == 1 || ngx_http_cms_pg_principal(r, ctx, &key) != NGX_OK) {
        /* none usable; or nobody who could have written: the one picked */
        q->pg = ngx_http_cms_pg_to(ctx, route);
        return NGX_OK;
    }

    argv[0] = "GET";
    argvlen[0] = 3;
    argv[1] = (const char *) key.data;
    argvlen[1] = key.len;

    /* the commands live as long as the request: a queued op sends them later */
    cmds = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_redis_cmds_t));

    if (cmds == NULL
        || ngx_http_cms_redis_append(r->pool, cmds, 2, argv, argvlen) != NGX_OK)
    {
        return NGX_ERROR;
    }

    ctx->pg_wait = q;

    if (ngx_http_cms_redis_run(r, cmds, ngx_http_cms_pg_routed) == NGX_DONE) {
        return NGX_DONE;
    }

    /* no Redis now: what the principal wrote is only sure on the primary */
    ctx->pg_wait = NULL;
    q->pg = ngx_http_cms_pg_to(ctx, 1);

    return NGX_OK;
}


/* where the request's reads go (1 the primary, 2 + i replica i), counted */
static ngx_http_cms_pg_pool_t *
ngx_http_cms_pg_to(ngx_http_cms_ctx_t *ctx, ngx_uint_t route)
{
    ctx->pg_route = route;

    if (route == 1) {
        ngx_http_cms_metric(NGX_HTTP_CMS_M_READ_PRIMARY);
        return &ngx_http_cms_pg_pool;
    }

    ngx_http_cms_metric(NGX_HTTP_CMS_M_READ_REPLICA);

    return &ngx_http_cms_pg_replicas[route - 2];
}


/* the principal's key in Redis, or NGX_DECLINED when nobody could write */
static ngx_int_t
ngx_http_cms_pg_principal(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_str_t *key)
{
    u_char     *p;
    ngx_str_t   id;

    if (ctx->auth == NGX_HTTP_CMS_AUTH_PUBLISHABLE_KEY) {
        /* the public surface writes nothing */
        return NGX_DECLINED;

    } else if (ctx->principal.key_hmac != NULL) {
        id.data = ctx->principal.key_hmac;
        id.len = 64;

    } else if (ctx->principal.user_id.len) {
        id = ctx->principal.user_id;

    } else {
        return NGX_DECLINED;
    }

    key->len = sizeof(NGX_HTTP_CMS_PG_RYW_PREFIX) - 1 + id.len;
    key->data = ngx_pnalloc(r->pool, key->len);
    if (key->data == NULL) {
        return NGX_ERROR;
    }

    p = ngx_cpymem(key->data, NGX_HTTP_CMS_PG_RYW_PREFIX,
                   sizeof(NGX_HTTP_CMS_PG_RYW_PREFIX) - 1);
    ngx_memcpy(p, id.data, id.len);

    return NGX_OK;
}


/* the principal's last write: where its query may run */
static ngx_int_t
ngx_http_cms_pg_routed(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    redisReply **replies, ngx_uint_t n)
{
    uint64_t                  lsn;
    ngx_http_cms_pg_query_t  *q;

    q = ctx->pg_wait;
    ctx->pg_wait = NULL;

    if (replies == NULL || n != 1) {
        lsn = 0;                          /* unknown: the primary's */

    } else if (replies[0]->type == REDIS_REPLY_NIL) {
        lsn = 1;                          /* nothing written lately */

    } else if (replies[0]->type == REDIS_REPLY_STRING) {
        lsn = ngx_http_cms_pg_lsn(replies[0]->str);

    } else {
        lsn = 0;
    }

    q->pg = ngx_http_cms_pg_to(ctx, lsn ? ngx_http_cms_pg_pick(lsn) : 1);

    if (ngx_http_cms_pg_submit(q) != NGX_OK) {
        return NGX_HTTP_SERVICE_UNAVAILABLE;
    }

    return NGX_DONE;
}


/*
 * A replica's read that got no answer, or no connection, is asked of the
 * primary, once: "q" is turned to it.
 */
ngx_uint_t
ngx_http_cms_pg_fall_back(ngx_http_cms_pg_query_t *q, PGresult *res)
{
    ngx_http_cms_ctx_t  *ctx;

    if (res != NULL || q->request == NULL || q->pg->replica == 0
        || q->fallback)
    {
        return 0;
    }

    ngx_log_error(NGX_LOG_WARN, q->log, 0,
                  "cms: postgres replica %ui gave no answer to statement "
                  "%s, asking the primary", q->pg->replica, q->stmt->name);
    ngx_http_cms_metric(NGX_HTTP_CMS_M_READ_FALLBACK);

    ctx = ngx_http_get_module_ctx(q->request, ngx_http_cms_module);

    if (ctx != NULL) {
        ctx->pg_route = 1;
    }

    q->pg = &ngx_http_cms_pg_pool;
    q->fallback = 1;
    q->retried = 0;

    return 1;
}


/*
 * Whether a read that found nothing on a replica should ask the primary:
 * a key or a user made a moment ago may not have reached it yet.  The
 * request's later statements then run on the primary too.
 */
ngx_uint_t
ngx_http_cms_pg_missed(ngx_http_request_t *r)
{
    ngx_http_cms_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    if (ctx == NULL || ctx->pg_route < 2) {
        return 0;
    }

    ctx->pg_route = 1;

    return 1;
}


/* read-your-writes: the position kept before the answer leaves */

ngx_int_t
ngx_http_cms_pg_mark(ngx_http_request_t *r, ngx_http_cms_handler_pt then)
{
    ngx_int_t                rc;
    ngx_http_cms_ctx_t      *ctx;
    ngx_http_cms_pg_mark_t  *mark;

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    if (ctx == NULL || !ctx->pg_wrote || ctx->pg_marked) {
        return NGX_DECLINED;
    }

    mark = ngx_palloc(r->pool, sizeof(ngx_http_cms_pg_mark_t));
    if (mark == NULL) {
        return NGX_ERROR;
    }

    rc = ngx_http_cms_pg_principal(r, ctx, &mark->key);

    if (rc != NGX_OK) {
        return rc;
    }

    ctx->pg_marked = 1;
    mark->then = then;
    ctx->pg_wait = mark;

    rc = ngx_http_cms_pg_query(r, &ngx_http_cms_pg_position_sql, NULL, 0,
                               ngx_http_cms_pg_position);

    if (rc == NGX_DONE) {
        return NGX_DONE;
    }

    /* the write is done: its answer goes, the position unkept */
    ctx->pg_wait = NULL;

    return NGX_DECLINED;
}


static ngx_int_t
ngx_http_cms_pg_position(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    u_char                      ttl[NGX_INT_T_LEN];
    ngx_uint_t                  i;
    ngx_msec_t                  lag;
    ngx_http_cms_pg_mark_t     *mark;
    ngx_http_cms_redis_cmds_t  *cmds;
    const char                 *argv[5];
    size_t                      argvlen[5];

    mark = ctx->pg_wait;

    if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK
        || PQntuples(res) != 1
        || ngx_http_cms_pg_lsn(PQgetvalue(res, 0, 0)) == 0)
    {
        return ngx_http_cms_pg_kept(r, ctx, NULL, 0);
    }

    lag = 0;

    for (i = 0; i < ngx_http_cms_pg_nreplicas; i++) {
        lag = ngx_max(lag, ngx_http_cms_pg_replicas[i].conf->max_lag);
    }

    argv[0] = "SET";
    argv[1] = (const char *) mark->key.data;
    argv[2] = PQgetvalue(res, 0, 0);
    argv[3] = "PX";
    argv[4] = (const char *) ttl;
    argvlen[0] = 3;
    argvlen[1] = mark->key.len;
    argvlen[2] = PQgetlength(res, 0, 0);
    argvlen[3] = 2;
    /* longer than a usable verdict can be old (three checks), and more */
    argvlen[4] = ngx_sprintf(ttl, "%M", lag + 5 * NGX_HTTP_CMS_PG_CHECK)
                 - ttl;

    cmds = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_redis_cmds_t));

    if (cmds == NULL
        || ngx_http_cms_redis_append(r->pool, cmds, 5, argv, argvlen) != NGX_OK
        || ngx_http_cms_redis_run(r, cmds, ngx_http_cms_pg_kept) != NGX_DONE)
    {
        return ngx_http_cms_pg_kept(r, ctx, NULL, 0);
    }

    return NGX_DONE;
}


/* the position kept (or not: logged where it failed): the answer goes */
static ngx_int_t
ngx_http_cms_pg_kept(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    redisReply **replies, ngx_uint_t n)
{
    ngx_http_cms_pg_mark_t  *mark;

    mark = ctx->pg_wait;
    ctx->pg_wait = NULL;

    if (replies == NULL) {
        ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                      "cms: a write's WAL position was not kept: the "
                      "principal's next reads may miss it on a replica");
    }

    return mark->then(r, ctx);
}
