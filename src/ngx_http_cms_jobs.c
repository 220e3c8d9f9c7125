
/*
 * Periodic jobs.  One worker (number 0) runs them, on a cancelable timer,
 * through the pool like any query: never a blocking call.  Several nginx
 * hosts may run them at once; each job is safe to repeat.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_jobs.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_redis.h"
#include "ngx_http_cms_metrics.h"


#define NGX_HTTP_CMS_RELAY_BATCH       NGX_HTTP_CMS_REDIS_MAX_PIPELINE


/* a batch: one Redis command a row, then the rows' ids for the mark */
typedef struct {
    ngx_pool_t                 *pool;        /* the job's, holding all */
    ngx_http_cms_redis_cmds_t  *cmds;
    ngx_str_t                   ids;         /* "{id,id,...}" */
    ngx_uint_t                  n;
} ngx_http_cms_jobs_batch_t;


/* appends the command for one row of a batch */
typedef ngx_int_t (*ngx_http_cms_jobs_row_pt)(ngx_pool_t *pool,
    ngx_http_cms_redis_cmds_t *cmds, PGresult *res, int row);


static void ngx_http_cms_jobs_arm(ngx_event_t *ev,
    ngx_event_handler_pt handler, ngx_http_cms_main_conf_t *mcf,
    ngx_log_t *log, ngx_msec_t msec);
static void ngx_http_cms_jobs_purge(ngx_event_t *ev);
static void ngx_http_cms_jobs_purged(void *data, PGresult *res);
static void ngx_http_cms_jobs_expire(ngx_event_t *ev);
static void ngx_http_cms_jobs_expired(void *data, PGresult *res);
static ngx_msec_t ngx_http_cms_jobs_expire_interval(
    ngx_http_cms_main_conf_t *mcf);
static void ngx_http_cms_jobs_relay(ngx_event_t *ev);
static void ngx_http_cms_jobs_claimed(void *data, PGresult *res);
static ngx_http_cms_jobs_batch_t *ngx_http_cms_jobs_batch(PGresult *res,
    ngx_http_cms_jobs_row_pt append);
static ngx_int_t ngx_http_cms_jobs_xadd(ngx_pool_t *pool,
    ngx_http_cms_redis_cmds_t *cmds, PGresult *res, int row);
static void ngx_http_cms_jobs_added(void *data, redisReply **replies,
    ngx_uint_t n);
static void ngx_http_cms_jobs_marked(void *data, PGresult *res);
static void ngx_http_cms_jobs_again(ngx_uint_t more);
static void ngx_http_cms_jobs_release(PGresult *res, int rows);
static u_char *ngx_http_cms_jobs_ids(u_char *p, PGresult *res, int rows);
static u_char *ngx_http_cms_jobs_close(u_char *p);
static void ngx_http_cms_jobs_ext_tick(ngx_event_t *ev);
static void ngx_http_cms_jobs_ext_ticked(void *data, PGresult *res);
static ngx_int_t ngx_http_cms_jobs_xgroup(ngx_pool_t *pool,
    ngx_http_cms_redis_cmds_t *cmds, PGresult *res, int row);
static void ngx_http_cms_jobs_ext_grouped(void *data, redisReply **replies,
    ngx_uint_t n);
static void ngx_http_cms_jobs_ext_done(void *data, PGresult *res);
static void ngx_http_cms_jobs_due(ngx_event_t *ev);
static void ngx_http_cms_jobs_announced(void *data, PGresult *res);
static void ngx_http_cms_jobs_lag(ngx_event_t *ev);
static void ngx_http_cms_jobs_lagged(void *data, PGresult *res);


static ngx_http_cms_pg_stmt_t  ngx_http_cms_jobs_purge_sql =
    ngx_http_cms_pg_stmt(
        "SELECT cms_articles_purge(make_interval(secs => $1::float8)),"
        " cms_webhook_deliveries_purge(make_interval(secs => $2::float8)),"
        " cms_cdn_purges_expire(),"
        " cms_outbox_events_purge(make_interval(secs => $2::float8)),"
        " cms_ext_events_purge(make_interval(secs => $2::float8))",
        2);


/* lapsed upload reservations given back (sql/0027_uploads.sql) */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_jobs_expire_sql =
    ngx_http_cms_pg_stmt("SELECT cms_media_expire()", 0);


/*
 * $2 the lease (s): longer than a batch can take, the claim's and the
 * mark's statements waiting and running and Redis's exchange, so that a
 * live host's batch is never claimed again (ngx_http_cms_jobs_relay())
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_jobs_claim_sql =
    ngx_http_cms_pg_stmt(
        "SELECT id, facility_id, livemode, payload"
        " FROM cms_ext_events_claim($1::integer,"
        " make_interval(secs => $2::float8))",
        2);

/*
 * The batch given back.  By id only, in the mark too: asking for
 * "relayed_at IS NULL" as well would let the planner read the waiting
 * events' partial index instead, all of it, whenever the last ANALYZE saw
 * none waiting (sql/0055); and a row another host relayed meanwhile is not
 * read again for its lease.  Statements of their own, not functions: a
 * module upgraded before its migrations still marks what it relays.
 * t/148 runs these two as written here.
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_jobs_release_sql =
    ngx_http_cms_pg_stmt_replan(
        "UPDATE ext_events SET claimed_until = NULL"
        " WHERE id = ANY($1::uuid[])",
        1);

/*
 * $1 the relayed, $2 those Redis refused: tried again in a few seconds,
 * after the events behind them (one event that always fails must not
 * hold up the rest)
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_jobs_mark_sql =
    ngx_http_cms_pg_stmt_replan(
        "WITH relayed AS (UPDATE ext_events SET relayed_at = now()"
        " WHERE id = ANY($1::uuid[]))"
        " UPDATE ext_events SET claimed_until = now() + interval '5 seconds'"
        " WHERE id = ANY($2::uuid[])",
        2);


static ngx_http_cms_pg_stmt_t  ngx_http_cms_jobs_tick_sql =
    ngx_http_cms_pg_stmt(
        "SELECT id, facility_id, name FROM cms_extensions_tick()", 0);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_jobs_running_sql =
    ngx_http_cms_pg_stmt(
        "UPDATE extensions SET status = 'running', updated_at = now()"
        " WHERE id = ANY($1::uuid[]) AND status = 'installing'",
        1);


static ngx_event_t  ngx_http_cms_jobs_purge_ev;
static ngx_event_t  ngx_http_cms_jobs_expire_ev;
static ngx_event_t  ngx_http_cms_jobs_relay_ev;
static ngx_event_t  ngx_http_cms_jobs_ext_ev;
static ngx_event_t  ngx_http_cms_jobs_lag_ev;
static ngx_event_t  ngx_http_cms_jobs_due_ev;


/* scheduled articles whose time came: article.published, once each */
#define NGX_HTTP_CMS_DUE_BATCH  100

static ngx_http_cms_pg_stmt_t  ngx_http_cms_jobs_due_sql =
    ngx_http_cms_pg_stmt(
        "SELECT cms_articles_announce_due($1::integer)", 1);


/*
 * How late the outboxes are, in ms, 0 when they are not: content events
 * reach webhook deliveries in their own transaction (a trigger), so the
 * most overdue pending delivery; extension events, the oldest not yet
 * relayed.  Each a min() over a partial index: one entry read.
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_jobs_lag_sql =
    ngx_http_cms_pg_stmt_replan(
        "SELECT (greatest(0, coalesce(extract(epoch FROM now() - ("
        "SELECT min(next_attempt_at) FROM webhook_deliveries"
        " WHERE status = 'pending')), 0)) * 1000)::bigint,"
        " (greatest(0, coalesce(extract(epoch FROM now() - ("
        "SELECT min(created_at) FROM ext_events"
        " WHERE relayed_at IS NULL)), 0)) * 1000)::bigint", 0);


ngx_uint_t
ngx_http_cms_jobs_here(ngx_http_cms_main_conf_t *mcf)
{
    /* a worker numbered 0, or the only process (master_process off) */
    return (ngx_process == NGX_PROCESS_WORKER
            || ngx_process == NGX_PROCESS_SINGLE)
           && ngx_worker == 0 && mcf->pg != NULL;
}


ngx_int_t
ngx_http_cms_jobs_init_process(ngx_cycle_t *cycle,
    ngx_http_cms_main_conf_t *mcf)
{
    if (!ngx_http_cms_jobs_here(mcf)) {
        return NGX_OK;
    }

    ngx_http_cms_jobs_arm(&ngx_http_cms_jobs_purge_ev,
                          ngx_http_cms_jobs_purge, mcf, cycle->log,
                          mcf->purge_interval);
    ngx_http_cms_jobs_arm(&ngx_http_cms_jobs_due_ev, ngx_http_cms_jobs_due,
                          mcf, cycle->log, mcf->events_interval);
    ngx_http_cms_jobs_arm(&ngx_http_cms_jobs_expire_ev,
                          ngx_http_cms_jobs_expire, mcf, cycle->log,
                          ngx_http_cms_jobs_expire_interval(mcf));

    if (mcf->metrics != NULL) {
        /* for cms_status: asked now, then with the relay's interval */
        ngx_http_cms_jobs_arm(&ngx_http_cms_jobs_lag_ev,
                              ngx_http_cms_jobs_lag, mcf, cycle->log, 1);
    }

    if (mcf->redis == NULL) {
        return NGX_OK;
    }

    ngx_http_cms_jobs_arm(&ngx_http_cms_jobs_relay_ev,
                          ngx_http_cms_jobs_relay, mcf, cycle->log,
                          mcf->events_interval);
    ngx_http_cms_jobs_arm(&ngx_http_cms_jobs_ext_ev,
                          ngx_http_cms_jobs_ext_tick, mcf, cycle->log,
                          mcf->events_interval);

    return NGX_OK;
}


/*
 * A job's timer, cancelable: a job never holds an exiting worker.  nginx
 * still fires a cancelable timer while an exiting worker waits for what is
 * in flight (a request's query, a round of a job), so each job's tick (and
 * the store's and the deliveries' and the schema check's) returns at once
 * once the worker quits: a query started then would hold the worker for as
 * long as its connection, its wait for a slot and its own timeout allow.
 */
static void
ngx_http_cms_jobs_arm(ngx_event_t *ev, ngx_event_handler_pt handler,
    ngx_http_cms_main_conf_t *mcf, ngx_log_t *log, ngx_msec_t msec)
{
    ev->handler = handler;
    ev->data = mcf;
    ev->log = log;
    ev->cancelable = 1;

    ngx_add_timer(ev, msec);
}


void
ngx_http_cms_jobs_next(ngx_event_t *ev, ngx_msec_t after)
{
    if (ngx_http_cms_quitting() || ev->handler == NULL) {
        return;
    }

    if (ev->timer_set) {
        ngx_del_timer(ev);
    }

    ngx_add_timer(ev, after);
}


/* soft-deleted articles older than the retention go for good; settled
   webhook deliveries, content events and relayed extension events past
   the deliveries' retention */
static void
ngx_http_cms_jobs_purge(ngx_event_t *ev)
{
    ngx_http_cms_main_conf_t *mcf = ev->data;

    u_char     buf[NGX_TIME_T_LEN], hooks[NGX_TIME_T_LEN];
    ngx_str_t  args[2];

    if (ngx_http_cms_quitting()) {
        return;                 /* nothing new: ngx_http_cms_jobs_arm() */
    }

    args[0].data = buf;
    args[0].len = ngx_sprintf(buf, "%T", mcf->retention) - buf;
    args[1].data = hooks;
    args[1].len = ngx_sprintf(hooks, "%M", mcf->hooks->retention / 1000)
                  - hooks;

    if (ngx_http_cms_pg_job(&ngx_http_cms_jobs_purge_sql, args, 2,
                            ngx_http_cms_jobs_purged, mcf)
        != NGX_OK)
    {
        ngx_add_timer(ev, mcf->purge_interval);
    }
}


static void
ngx_http_cms_jobs_purged(void *data, PGresult *res)
{
    ngx_http_cms_main_conf_t *mcf = data;

    ngx_http_cms_metric(NGX_HTTP_CMS_M_JOB_PURGE);

    if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
        ngx_log_error(NGX_LOG_ERR, ngx_cycle->log, 0,
                      "cms: purging deleted articles failed%s%s",
                      res ? ": " : "",
                      ngx_http_cms_pg_oneline(PQresultErrorMessage(res)));

    } else if (PQgetvalue(res, 0, 0)[0] != '0'
               || PQgetvalue(res, 0, 1)[0] != '0'
               || PQgetvalue(res, 0, 3)[0] != '0'
               || PQgetvalue(res, 0, 4)[0] != '0')
    {
        ngx_log_error(NGX_LOG_INFO, ngx_cycle->log, 0,
                      "cms: purged %s deleted articles, %s settled "
                      "webhook deliveries, %s content events and %s "
                      "extension events",
                      PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1),
                      PQgetvalue(res, 0, 3), PQgetvalue(res, 0, 4));
    }

    if (!ngx_http_cms_quitting()) {
        ngx_add_timer(&ngx_http_cms_jobs_purge_ev, mcf->purge_interval);
    }
}


/*
 * Scheduled articles whose time came get their article.published in the
 * outbox (sql/0024_scheduled_events.sql: exactly once, whichever worker
 * or host asks); a full batch asks again at once.
 */
static void
ngx_http_cms_jobs_due(ngx_event_t *ev)
{
    ngx_http_cms_main_conf_t *mcf = ev->data;

    ngx_str_t  arg;

    if (ngx_http_cms_quitting()) {
        return;                 /* nothing new: ngx_http_cms_jobs_arm() */
    }

    ngx_str_set(&arg, ngx_value(NGX_HTTP_CMS_DUE_BATCH));

    if (ngx_http_cms_pg_job(&ngx_http_cms_jobs_due_sql, &arg, 1,
                            ngx_http_cms_jobs_announced, mcf)
        != NGX_OK)
    {
        ngx_add_timer(ev, mcf->events_interval);
    }
}


static void
ngx_http_cms_jobs_announced(void *data, PGresult *res)
{
    ngx_http_cms_main_conf_t *mcf = data;

    ngx_int_t  n;

    n = 0;

    if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
        ngx_log_error(NGX_LOG_ERR, ngx_cycle->log, 0,
                      "cms: announcing scheduled articles failed%s%s",
                      res ? ": " : "",
                      ngx_http_cms_pg_oneline(PQresultErrorMessage(res)));

    } else {
        n = ngx_atoi((u_char *) PQgetvalue(res, 0, 0),
                     PQgetlength(res, 0, 0));
    }

    if (!ngx_http_cms_quitting()) {
        ngx_add_timer(&ngx_http_cms_jobs_due_ev,
                      n == NGX_HTTP_CMS_DUE_BATCH ? 1 : mcf->events_interval);
    }
}


/*
 * Upload reservations past cms_upload_ttl: looked for as often as the
 * TTL, a minute at most, so one is given back within twice its life.
 */
static ngx_msec_t
ngx_http_cms_jobs_expire_interval(ngx_http_cms_main_conf_t *mcf)
{
    return (ngx_msec_t) ngx_max(ngx_min(mcf->upload_ttl, 60), 1) * 1000;
}


static void
ngx_http_cms_jobs_expire(ngx_event_t *ev)
{
    ngx_http_cms_main_conf_t *mcf = ev->data;

    if (ngx_http_cms_quitting()) {
        return;                 /* nothing new: ngx_http_cms_jobs_arm() */
    }

    if (ngx_http_cms_pg_job(&ngx_http_cms_jobs_expire_sql, NULL, 0,
                            ngx_http_cms_jobs_expired, mcf)
        != NGX_OK)
    {
        ngx_add_timer(ev, ngx_http_cms_jobs_expire_interval(mcf));
    }
}


static void
ngx_http_cms_jobs_expired(void *data, PGresult *res)
{
    ngx_http_cms_main_conf_t *mcf = data;

    if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
        ngx_log_error(NGX_LOG_ERR, ngx_cycle->log, 0,
                      "cms: giving back lapsed upload reservations "
                      "failed%s%s", res ? ": " : "",
                      ngx_http_cms_pg_oneline(PQresultErrorMessage(res)));

    } else if (ngx_atoi((u_char *) PQgetvalue(res, 0, 0),
                        PQgetlength(res, 0, 0)) > 0)
    {
        ngx_log_error(NGX_LOG_INFO, ngx_cycle->log, 0,
                      "cms: gave back %s lapsed upload reservations",
                      PQgetvalue(res, 0, 0));
    }

    if (!ngx_http_cms_quitting()) {
        ngx_add_timer(&ngx_http_cms_jobs_expire_ev,
                      ngx_http_cms_jobs_expire_interval(mcf));
    }
}


/*
 * The outbox relay: events written with their change are claimed for a
 * lease, XADDed to the facility's stream, then marked.  A batch lost
 * between the two is claimed again after the lease: at least once, with
 * the event id stable.  Several hosts share the work (SKIP LOCKED).
 */
static void
ngx_http_cms_jobs_relay(ngx_event_t *ev)
{
    u_char                     batch[NGX_INT_T_LEN], lease[NGX_INT_T_LEN];
    ngx_str_t                  args[2];
    ngx_http_cms_main_conf_t  *mcf;

    if (ngx_http_cms_quitting()) {
        return;                 /* nothing new: ngx_http_cms_jobs_arm() */
    }

    mcf = ev->data;

    args[0].data = batch;
    args[0].len = ngx_sprintf(batch, "%ui",
                              (ngx_uint_t) NGX_HTTP_CMS_RELAY_BATCH)
                  - batch;
    args[1].data = lease;
    args[1].len = ngx_sprintf(lease, "%M",
                              (2 * (mcf->pg->queue_timeout
                                    + mcf->pg->query_timeout)
                               + 2 * mcf->redis->timeout) / 1000 + 10)
                  - lease;

    if (ngx_http_cms_pg_job(&ngx_http_cms_jobs_claim_sql, args, 2,
                            ngx_http_cms_jobs_claimed, NULL)
        != NGX_OK)
    {
        ngx_http_cms_jobs_again(0);
    }
}


static void
ngx_http_cms_jobs_claimed(void *data, PGresult *res)
{
    ngx_http_cms_jobs_batch_t  *relay;

    relay = ngx_http_cms_jobs_batch(res, ngx_http_cms_jobs_xadd);
    if (relay == NULL) {
        ngx_http_cms_jobs_again(0);
        return;
    }

    /*
     * Redis cannot be asked now: hand the batch back before giving up
     * (the relay went with the pool, so the rows are counted again)
     */
    if (ngx_http_cms_redis_job(relay->pool, relay->cmds,
                               ngx_http_cms_jobs_added, relay)
        != NGX_OK)
    {
        ngx_http_cms_jobs_release(res, PQntuples(res));
    }
}


/*
 * A batch in a pool of its own: append's command for each row of res and
 * the rows' ids (column 0) as a PostgreSQL array.  NULL when the query
 * failed, found nothing, or memory ran out (the pool is gone then).
 */
static ngx_http_cms_jobs_batch_t *
ngx_http_cms_jobs_batch(PGresult *res, ngx_http_cms_jobs_row_pt append)
{
    int                         i, rows;
    u_char                     *p;
    ngx_pool_t                 *pool;
    ngx_http_cms_jobs_batch_t  *batch;
    ngx_http_cms_redis_cmds_t  *cmds;

    if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK
        || PQntuples(res) == 0)
    {
        return NULL;
    }

    rows = PQntuples(res);

    pool = ngx_create_pool(4096, ngx_cycle->log);
    if (pool == NULL) {
        return NULL;
    }

    cmds = ngx_pcalloc(pool, sizeof(ngx_http_cms_redis_cmds_t));
    batch = ngx_pcalloc(pool, sizeof(ngx_http_cms_jobs_batch_t));
    p = ngx_pnalloc(pool, rows * 37 + 2);

    if (cmds == NULL || batch == NULL || p == NULL) {
        goto failed;
    }

    for (i = 0; i < rows; i++) {
        if (append(pool, cmds, res, i) != NGX_OK) {
            goto failed;
        }
    }

    batch->pool = pool;
    batch->cmds = cmds;
    batch->ids.data = p;
    batch->ids.len = ngx_http_cms_jobs_ids(p, res, rows) - p;
    batch->n = rows;

    return batch;

failed:

    ngx_destroy_pool(pool);

    return NULL;
}


/* XADD cms:events:{<facility>}:<mode> MAXLEN ~ 100000 * id <id> event <json> */
static ngx_int_t
ngx_http_cms_jobs_xadd(ngx_pool_t *pool, ngx_http_cms_redis_cmds_t *cmds,
    PGresult *res, int row)
{
    u_char      *key;
    size_t       len[10];
    const char  *argv[10];

    key = ngx_pnalloc(pool, PQgetlength(res, row, 1) + 32);
    if (key == NULL) {
        return NGX_ERROR;
    }

    argv[0] = "XADD";       len[0] = 4;
    argv[1] = (char *) key;
    len[1] = ngx_sprintf(key, "cms:events:{%s}:%s", PQgetvalue(res, row, 1),
                         PQgetvalue(res, row, 2)[0] == 't' ? "live"
                                                           : "sandbox")
             - key;
    argv[2] = "MAXLEN";     len[2] = 6;
    argv[3] = "~";          len[3] = 1;
    argv[4] = "100000";     len[4] = 6;
    argv[5] = "*";          len[5] = 1;
    argv[6] = "id";         len[6] = 2;
    argv[7] = PQgetvalue(res, row, 0);
    len[7] = PQgetlength(res, row, 0);
    argv[8] = "event";      len[8] = 5;
    argv[9] = PQgetvalue(res, row, 3);
    len[9] = PQgetlength(res, row, 3);

    return ngx_http_cms_redis_append(pool, cmds, 10, argv, len);
}


/* long: the batch's ids split by their replies, then one statement */
static void
ngx_http_cms_jobs_added(void *data, redisReply **replies, ngx_uint_t n)
{
    ngx_http_cms_jobs_batch_t *relay = data;

    u_char      *ok, *failed;
    ngx_str_t    ids[2];
    ngx_uint_t   i, relayed;

    if (replies == NULL) {
        /* released at once: the next tick after Redis is back relays it */
        ngx_log_error(NGX_LOG_WARN, ngx_cycle->log, 0,
                      "cms: relaying events to redis failed; retrying");

        if (ngx_http_cms_pg_job(&ngx_http_cms_jobs_release_sql, &relay->ids,
                                1, ngx_http_cms_jobs_marked, (void *) 0)
            != NGX_OK)
        {
            ngx_http_cms_jobs_again(0);
        }

        return;
    }

    /* the ids split by their replies: "{id,...}" each, 37 bytes an id */
    ids[0].data = ngx_pnalloc(relay->pool, 2 * (relay->ids.len + 2));
    if (ids[0].data == NULL) {
        ngx_http_cms_jobs_again(0);
        return;
    }

    ids[1].data = ids[0].data + relay->ids.len + 2;
    ok = ids[0].data;
    failed = ids[1].data;
    *ok++ = '{';
    *failed++ = '{';
    relayed = 0;

    for (i = 0; i < n && i < relay->n; i++) {
        if (replies[i]->type == REDIS_REPLY_STRING) {
            ok = ngx_cpymem(ok, relay->ids.data + 1 + i * 37, 36);
            *ok++ = ',';
            relayed++;

        } else {
            failed = ngx_cpymem(failed, relay->ids.data + 1 + i * 37, 36);
            *failed++ = ',';
        }
    }

    if (relayed < relay->n) {
        ngx_log_error(NGX_LOG_WARN, ngx_cycle->log, 0,
                      "cms: redis refused %ui of %ui events; they are "
                      "relayed again in a few seconds",
                      relay->n - relayed, relay->n);
    }

    ids[0].len = ngx_http_cms_jobs_close(ok) - ids[0].data;
    ids[1].len = ngx_http_cms_jobs_close(failed) - ids[1].data;

    /* the job's pool goes after this returns: the query copies the ids */
    if (ngx_http_cms_pg_job(&ngx_http_cms_jobs_mark_sql, ids, 2,
                            ngx_http_cms_jobs_marked,
                            (void *) (uintptr_t) relayed)
        != NGX_OK)
    {
        ngx_http_cms_jobs_again(0);
    }
}


static void
ngx_http_cms_jobs_marked(void *data, PGresult *res)
{
    ngx_uint_t  n;

    n = (ngx_uint_t) (uintptr_t) data;

    if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK) {
        ngx_log_error(NGX_LOG_WARN, ngx_cycle->log, 0,
                      "cms: marking relayed events failed; they will be "
                      "relayed again");
        n = 0;
    }

    /* a full batch: there may be more waiting */
    ngx_http_cms_jobs_again(n == NGX_HTTP_CMS_RELAY_BATCH);
}


/* gives claimed rows back (the redis job destroyed the pool with the ids) */
static void
ngx_http_cms_jobs_release(PGresult *res, int rows)
{
    u_char      buf[NGX_HTTP_CMS_RELAY_BATCH * 37 + 2];
    ngx_str_t   ids;

    ids.data = buf;
    ids.len = ngx_http_cms_jobs_ids(buf, res,
                                    ngx_min(rows, NGX_HTTP_CMS_RELAY_BATCH))
              - buf;

    if (ngx_http_cms_pg_job(&ngx_http_cms_jobs_release_sql, &ids, 1,
                            ngx_http_cms_jobs_marked, (void *) 0)
        != NGX_OK)
    {
        ngx_http_cms_jobs_again(0);
    }
}


/* closes "{id,id," or "{" as a PostgreSQL array; returns its end */
static u_char *
ngx_http_cms_jobs_close(u_char *p)
{
    if (p[-1] == ',') {
        p[-1] = '}';
        return p;
    }

    *p++ = '}';

    return p;
}


/*
 * "{id,id,...}" at p from column 0 of the first rows rows, uuids (each cut
 * to 36 bytes, so rows * 37 + 2 bytes always do); returns the end.
 */
static u_char *
ngx_http_cms_jobs_ids(u_char *p, PGresult *res, int rows)
{
    int  i;

    *p++ = '{';

    for (i = 0; i < rows; i++) {
        p = ngx_cpymem(p, PQgetvalue(res, i, 0),
                       ngx_min(PQgetlength(res, i, 0), 36));
        *p++ = (i + 1 < rows) ? ',' : '}';
    }

    return p;
}


static void
ngx_http_cms_jobs_again(ngx_uint_t more)
{
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_cms_jobs_relay_ev.data;

    ngx_http_cms_metric(NGX_HTTP_CMS_M_JOB_RELAY);

    if (ngx_http_cms_quitting()) {
        return;
    }

    ngx_add_timer(&ngx_http_cms_jobs_relay_ev,
                  more ? 1 : mcf->events_interval);
}


/*
 * Extensions: a reload whose grace period ended runs again (a timer, not
 * a wait), and an install completes once its consumer group exists on
 * the facility's stream (XGROUP CREATE ... MKSTREAM; BUSYGROUP: it does).
 */
static void
ngx_http_cms_jobs_ext_tick(ngx_event_t *ev)
{
    if (ngx_http_cms_quitting()) {
        return;                 /* nothing new: ngx_http_cms_jobs_arm() */
    }

    if (ngx_http_cms_pg_job(&ngx_http_cms_jobs_tick_sql, NULL, 0,
                            ngx_http_cms_jobs_ext_ticked, NULL)
        != NGX_OK)
    {
        ngx_http_cms_jobs_ext_done(NULL, NULL);
    }
}


static void
ngx_http_cms_jobs_ext_ticked(void *data, PGresult *res)
{
    ngx_http_cms_jobs_batch_t  *ids;

    ids = ngx_http_cms_jobs_batch(res, ngx_http_cms_jobs_xgroup);

    if (ids == NULL
        || ngx_http_cms_redis_job(ids->pool, ids->cmds,
                                  ngx_http_cms_jobs_ext_grouped, ids)
           != NGX_OK)
    {
        ngx_http_cms_jobs_ext_done(NULL, NULL);
    }
}


/* XGROUP CREATE cms:events:{<facility>}:live ext:<name> $ MKSTREAM */
static ngx_int_t
ngx_http_cms_jobs_xgroup(ngx_pool_t *pool, ngx_http_cms_redis_cmds_t *cmds,
    PGresult *res, int row)
{
    u_char      *key, *group;
    size_t       len[6];
    const char  *argv[6];

    /* both sized from the values: a name is the database's to bound */
    key = ngx_pnalloc(pool, PQgetlength(res, row, 1) + 32);
    group = ngx_pnalloc(pool, PQgetlength(res, row, 2) + 8);

    if (key == NULL || group == NULL) {
        return NGX_ERROR;
    }

    argv[0] = "XGROUP";   len[0] = 6;
    argv[1] = "CREATE";   len[1] = 6;
    argv[2] = (char *) key;
    len[2] = ngx_sprintf(key, "cms:events:{%s}:live",
                         PQgetvalue(res, row, 1)) - key;
    argv[3] = (char *) group;
    len[3] = ngx_sprintf(group, "ext:%s", PQgetvalue(res, row, 2)) - group;
    argv[4] = "$";        len[4] = 1;
    argv[5] = "MKSTREAM"; len[5] = 8;

    return ngx_http_cms_redis_append(pool, cmds, 6, argv, len);
}


static void
ngx_http_cms_jobs_ext_grouped(void *data, redisReply **replies, ngx_uint_t n)
{
    ngx_http_cms_jobs_batch_t *ids = data;

    ngx_uint_t  i;

    for (i = 0; replies != NULL && i < n; i++) {
        if (replies[i]->type == REDIS_REPLY_ERROR
            && ngx_strncmp(replies[i]->str, "BUSYGROUP", 9) != 0)
        {
            break;
        }
    }

    if (replies == NULL || i < n
        || ngx_http_cms_pg_job(&ngx_http_cms_jobs_running_sql, &ids->ids, 1,
                               ngx_http_cms_jobs_ext_done, NULL)
           != NGX_OK)
    {
        /* the next tick tries again */
        ngx_http_cms_jobs_ext_done(NULL, NULL);
    }
}


static void
ngx_http_cms_jobs_ext_done(void *data, PGresult *res)
{
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_cms_jobs_ext_ev.data;

    ngx_http_cms_metric(NGX_HTTP_CMS_M_JOB_EXTENSIONS);

    if (!ngx_http_cms_quitting()) {
        ngx_add_timer(&ngx_http_cms_jobs_ext_ev, mcf->events_interval);
    }
}


/* the outbox lag, for cms_status (ngx_http_cms_metrics.h) */
static void
ngx_http_cms_jobs_lag(ngx_event_t *ev)
{
    if (ngx_http_cms_quitting()) {
        return;                 /* nothing new: ngx_http_cms_jobs_arm() */
    }

    if (ngx_http_cms_pg_job(&ngx_http_cms_jobs_lag_sql, NULL, 0,
                            ngx_http_cms_jobs_lagged, NULL)
        != NGX_OK)
    {
        ngx_http_cms_jobs_lagged(NULL, NULL);
    }
}


static void
ngx_http_cms_jobs_lagged(void *data, PGresult *res)
{
    ngx_int_t                  ms;
    ngx_uint_t                 i;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_cms_jobs_lag_ev.data;

    for (i = 0; i < NGX_HTTP_CMS_METRICS_OUTBOXES; i++) {
        ms = NGX_ERROR;

        if (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK
            && PQntuples(res) == 1 && PQnfields(res) == 2)
        {
            ms = ngx_atoi((u_char *) PQgetvalue(res, 0, i),
                          PQgetlength(res, 0, i));
        }

        /* not known: the scrape leaves it out rather than say 0 */
        ngx_http_cms_metrics_mine->outbox_lag[i] = (ms == NGX_ERROR)
                                                   ? 0 : (ngx_uint_t) ms + 1;
    }

    if (!ngx_http_cms_quitting()) {
        ngx_add_timer(&ngx_http_cms_jobs_lag_ev, mcf->events_interval);
    }
}
