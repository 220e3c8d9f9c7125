
/*
 * "cms_status": a location answering the workers' counters in the
 * Prometheus text exposition format (version 0.0.4), one scrape for the
 * whole server: every worker's record comes from the shared zone
 * (ngx_http_cms_metrics.c), labelled worker="<ngx_worker>".
 *
 * Counters are counted where they happen; states (pool and lane sizes,
 * queue lengths) are sampled by each worker into its record every
 * NGX_HTTP_CMS_STATUS_SAMPLE ms, and by the answering worker just before
 * it answers.  The outbox lag is the one database fact: the jobs' worker
 * asks it with their interval (ngx_http_cms_jobs.c), so that a scrape
 * never waits for a pool, and answers even when the pools are saturated
 * or PostgreSQL is away (without the lag, then).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_status.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_metrics.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_redis.h"
#include "ngx_http_cms_thread.h"
#include "cms_version.h"


#define NGX_HTTP_CMS_STATUS_SAMPLE     1000
#define NGX_HTTP_CMS_STATUS_LINE       160


typedef enum {
    NGX_HTTP_CMS_SF_POOL_COUNTER = 0,  /* index: offset in a pool's run */
    NGX_HTTP_CMS_SF_POOL_GAUGE,        /* index: ngx_http_cms_pool_gauge_e */
    NGX_HTTP_CMS_SF_POOL_STATE,        /* busy and idle */
    NGX_HTTP_CMS_SF_LANE,              /* index: ngx_http_cms_lane_gauge_e */
    NGX_HTTP_CMS_SF_JOB,               /* the job counters */
    NGX_HTTP_CMS_SF_READS,             /* where GETs read (replicas) */
    NGX_HTTP_CMS_SF_WORKER             /* index: 0 started, 1 sample age */
} ngx_http_cms_status_kind_e;


/* one metric family: its HELP and TYPE lines, then a sample per label set */
typedef struct {
    const char                 *name;
    const char                 *type;
    const char                 *help;
    ngx_uint_t                  kind;
    ngx_uint_t                  index;
} ngx_http_cms_status_family_t;


static ngx_int_t ngx_http_cms_status_handler(ngx_http_request_t *r);
static ngx_int_t ngx_http_cms_status_send(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_buf_t *ngx_http_cms_status_body(ngx_http_request_t *r);
static u_char *ngx_http_cms_status_family(u_char *p, u_char *last,
    ngx_http_cms_status_family_t *f);
static u_char *ngx_http_cms_status_samples(u_char *p, u_char *last,
    ngx_http_cms_status_family_t *f, ngx_uint_t n,
    ngx_http_cms_metrics_worker_t *w);
static u_char *ngx_http_cms_status_lag(u_char *p, u_char *last,
    ngx_uint_t n);
static ngx_http_cms_metrics_requests_t *ngx_http_cms_status_rq(
    ngx_uint_t n);
static u_char *ngx_http_cms_status_requests(u_char *p, u_char *last,
    ngx_uint_t n);
static u_char *ngx_http_cms_status_latency(u_char *p, u_char *last,
    ngx_uint_t n);
static void ngx_http_cms_status_sample(void);
static void ngx_http_cms_status_timer(ngx_event_t *ev);


static const char  *ngx_http_cms_status_pools[] = { "postgres", "redis" };
static const char  *ngx_http_cms_status_lanes[] = { "password", "sanitize",
    "image" };
static const char  *ngx_http_cms_status_jobs[] = {
    "purge", "relay", "extensions"
};
static const char  *ngx_http_cms_status_reads[] = {
    "replica", "primary", "fallback"
};


static ngx_http_cms_status_family_t  ngx_http_cms_status_families[] = {

    { "cms_pool_size", "gauge",
      "Connections the worker's pool may open (max=).",
      NGX_HTTP_CMS_SF_POOL_GAUGE, NGX_HTTP_CMS_G_POOL_MAX },

    { "cms_pool_connections", "gauge",
      "Open connections of the worker's pool, by state.",
      NGX_HTTP_CMS_SF_POOL_STATE, 0 },

    { "cms_pool_queue_length", "gauge",
      "Requests waiting for a connection now.",
      NGX_HTTP_CMS_SF_POOL_GAUGE, NGX_HTTP_CMS_G_POOL_QUEUED },

    { "cms_pool_waits_total", "counter",
      "Requests that waited in the queue for a connection.",
      NGX_HTTP_CMS_SF_POOL_COUNTER, NGX_HTTP_CMS_M_PG_WAITS },

    { "cms_pool_wait_timeouts_total", "counter",
      "Requests that gave up waiting for a connection (503).",
      NGX_HTTP_CMS_SF_POOL_COUNTER, NGX_HTTP_CMS_M_PG_WAIT_TIMEOUTS },

    { "cms_pool_rejected_total", "counter",
      "Requests refused at once: queue full or no connection alive (503).",
      NGX_HTTP_CMS_SF_POOL_COUNTER, NGX_HTTP_CMS_M_PG_REJECTED },

    { "cms_pool_timeouts_total", "counter",
      "Queries, commands or connects that timed out.",
      NGX_HTTP_CMS_SF_POOL_COUNTER, NGX_HTTP_CMS_M_PG_TIMEOUTS },

    { "cms_pool_connects_total", "counter",
      "Connections opened: the first ones and every reconnect.",
      NGX_HTTP_CMS_SF_POOL_COUNTER, NGX_HTTP_CMS_M_PG_CONNECTS },

    { "cms_pool_connect_failures_total", "counter",
      "Connects that failed (refused, timed out, authentication).",
      NGX_HTTP_CMS_SF_POOL_COUNTER, NGX_HTTP_CMS_M_PG_CONNECT_FAILURES },

    { "cms_pool_errors_total", "counter",
      "Connections lost while in use (closed, bad reply, timeout).",
      NGX_HTTP_CMS_SF_POOL_COUNTER, NGX_HTTP_CMS_M_PG_ERRORS },

    { "cms_thread_lane_size", "gauge",
      "Jobs the worker's lane runs at once.",
      NGX_HTTP_CMS_SF_LANE, NGX_HTTP_CMS_G_LANE_JOBS },

    { "cms_thread_lane_queue_size", "gauge",
      "Jobs the worker's lane may keep waiting.",
      NGX_HTTP_CMS_SF_LANE, NGX_HTTP_CMS_G_LANE_QUEUE },

    { "cms_thread_lane_running", "gauge",
      "Jobs of the lane running in the thread pool now.",
      NGX_HTTP_CMS_SF_LANE, NGX_HTTP_CMS_G_LANE_RUNNING },

    { "cms_thread_lane_queue_length", "gauge",
      "Jobs waiting in the lane now (places held included).",
      NGX_HTTP_CMS_SF_LANE, NGX_HTTP_CMS_G_LANE_QUEUED },

    { "cms_thread_lane_started_total", "counter",
      "Jobs the lane started.",
      NGX_HTTP_CMS_SF_LANE, NGX_HTTP_CMS_G_LANE_STARTED },

    { "cms_thread_lane_refused_total", "counter",
      "Jobs refused with the lane full (503).",
      NGX_HTTP_CMS_SF_LANE, NGX_HTTP_CMS_G_LANE_REFUSED },

    { "cms_job_runs_total", "counter",
      "Rounds of a background job completed (worker 0 runs them).",
      NGX_HTTP_CMS_SF_JOB, NGX_HTTP_CMS_M_JOB_PURGE },

    { "cms_postgres_reads_total", "counter",
      "With replicas: GET requests read on a replica, on the primary "
      "(read-your-writes, or none usable), and replica reads the primary "
      "answered (fallback).",
      NGX_HTTP_CMS_SF_READS, NGX_HTTP_CMS_M_READ_REPLICA },

    { "cms_worker_start_time_seconds", "gauge",
      "When the worker started, Unix time.",
      NGX_HTTP_CMS_SF_WORKER, 0 },

    { "cms_worker_sample_age_seconds", "gauge",
      "Age of the worker's sampled gauges.",
      NGX_HTTP_CMS_SF_WORKER, 1 },

    { NULL, NULL, NULL, 0, 0 }
};


static ngx_event_t  ngx_http_cms_status_ev;


char *
ngx_http_cms_status_conf(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_core_loc_conf_t  *clcf;

    if (ngx_http_cms_metrics_zone(cf) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    clcf->handler = ngx_http_cms_status_handler;

    return NGX_CONF_OK;
}


ngx_int_t
ngx_http_cms_status_init_process(ngx_cycle_t *cycle)
{
    ngx_uint_t                      n;
    ngx_event_t                    *ev;
    ngx_http_cms_metrics_worker_t  *w;

    if (ngx_http_cms_metrics_init_process(cycle) != NGX_OK) {
        return NGX_ERROR;
    }

    w = ngx_http_cms_metrics_worker(ngx_worker, &n);

    if (w == NULL || w != ngx_http_cms_metrics_mine) {
        return NGX_OK;
    }

    ngx_http_cms_status_sample();

    /* shown from here on: the gauges are written before the pid */
    ngx_memory_barrier();
    w->pid = ngx_pid;

    /* cancelable: it never keeps an exiting worker alive */
    ev = &ngx_http_cms_status_ev;
    ev->handler = ngx_http_cms_status_timer;
    ev->log = cycle->log;
    ev->cancelable = 1;

    ngx_add_timer(ev, NGX_HTTP_CMS_STATUS_SAMPLE);

    return NGX_OK;
}


static void
ngx_http_cms_status_timer(ngx_event_t *ev)
{
    ngx_http_cms_status_sample();

    if (!ngx_http_cms_quitting()) {
        ngx_add_timer(ev, NGX_HTTP_CMS_STATUS_SAMPLE);
    }
}


/* the worker's states into its record */
static void
ngx_http_cms_status_sample(void)
{
    ngx_uint_t                      i;
    ngx_time_t                     *tp;
    ngx_atomic_t                   *g;
    ngx_http_cms_pool_stats_t       st[NGX_HTTP_CMS_METRICS_POOLS];
    ngx_http_cms_thread_stats_t     ls;
    ngx_http_cms_metrics_worker_t  *w;

    w = ngx_http_cms_metrics_mine;

    ngx_http_cms_pg_stats(&st[0]);
    ngx_http_cms_redis_stats(&st[1]);

    for (i = 0; i < NGX_HTTP_CMS_METRICS_POOLS; i++) {
        g = w->pool[i];
        g[NGX_HTTP_CMS_G_POOL_MAX] = st[i].max;
        g[NGX_HTTP_CMS_G_POOL_BUSY] = st[i].busy;
        g[NGX_HTTP_CMS_G_POOL_IDLE] = st[i].idle;
        g[NGX_HTTP_CMS_G_POOL_QUEUED] = st[i].queued;
    }

    for (i = 0; i < NGX_HTTP_CMS_METRICS_LANES; i++) {
        ngx_http_cms_thread_stats(i, &ls);

        g = w->lane[i];
        g[NGX_HTTP_CMS_G_LANE_JOBS] = ls.jobs;
        g[NGX_HTTP_CMS_G_LANE_QUEUE] = ls.queue;
        g[NGX_HTTP_CMS_G_LANE_RUNNING] = ls.running;
        g[NGX_HTTP_CMS_G_LANE_QUEUED] = ls.queued + ls.held;
        g[NGX_HTTP_CMS_G_LANE_STARTED] = ls.started;
        g[NGX_HTTP_CMS_G_LANE_REFUSED] = ls.refused;
    }

    tp = ngx_timeofday();
    w->sampled = (ngx_atomic_uint_t) tp->sec * 1000 + tp->msec;
}


/* GET (or HEAD) the status location: no I/O, answered at once */
static ngx_int_t
ngx_http_cms_status_handler(ngx_http_request_t *r)
{
    ngx_int_t            rc;
    ngx_http_cms_ctx_t  *ctx;

    if (!(r->method & (NGX_HTTP_GET|NGX_HTTP_HEAD))) {
        return NGX_HTTP_NOT_ALLOWED;
    }

    rc = ngx_http_discard_request_body(r);
    if (rc != NGX_OK) {
        return rc;
    }

    ctx = ngx_http_cms_ctx_create(r);
    if (ctx == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ngx_http_cms_metrics_mine->pid == (ngx_atomic_uint_t) ngx_pid) {
        ngx_http_cms_status_sample();
    }

    rc = ngx_http_cms_status_send(r, ctx);

    /* the answer went out (or a 500 goes): finish() finalizes once */
    r->main->count++;
    ngx_http_cms_finish(r, rc);

    return NGX_DONE;
}


/* the scrape's text: every family, every worker's samples */
/* long: the size of the largest answer, then the families in order */
static ngx_buf_t *
ngx_http_cms_status_body(ngx_http_request_t *r)
{
    size_t                          size;
    u_char                         *p, *last;
    ngx_buf_t                      *b;
    ngx_uint_t                      n, i, workers;
    ngx_http_cms_status_family_t   *f;
    ngx_http_cms_metrics_worker_t  *w;

    (void) ngx_http_cms_metrics_worker(0, &n);

    /* a line per label set: at most three a worker in any family; the
       requests' series a worker, each family's histogram */
    size = 4096 + 2 * NGX_HTTP_CMS_STATUS_LINE
           + (sizeof(ngx_http_cms_status_families)
              / sizeof(ngx_http_cms_status_family_t))
             * (2 * NGX_HTTP_CMS_STATUS_LINE
                + 3 * n * NGX_HTTP_CMS_STATUS_LINE)
           + 4 * NGX_HTTP_CMS_STATUS_LINE
           + n * NGX_HTTP_CMS_RQ_FAMILIES * NGX_HTTP_CMS_STATUS_LINE
             * (NGX_HTTP_CMS_RQ_METHODS * NGX_HTTP_CMS_RQ_CLASSES
                + NGX_HTTP_CMS_RQ_BUCKETS + 2);

    b = ngx_create_temp_buf(r->pool, size);
    if (b == NULL) {
        return NULL;
    }

    p = b->pos;
    last = b->end;

    p = ngx_slprintf(p, last,
                     "# HELP cms_build_info The module's release.\n"
                     "# TYPE cms_build_info gauge\n"
                     "cms_build_info{version=\"" CMS_VERSION "\"} 1\n");

    for (f = ngx_http_cms_status_families; f->name; f++) {
        p = ngx_http_cms_status_family(p, last, f);

        for (i = 0; i < n; i++) {
            w = ngx_http_cms_metrics_worker(i, &workers);

            /* a worker not started (yet) has nothing to say */
            if (w != NULL && w->pid != 0) {
                p = ngx_http_cms_status_samples(p, last, f, i, w);
            }
        }
    }

    p = ngx_http_cms_status_lag(p, last, n);
    p = ngx_http_cms_status_requests(p, last, n);
    p = ngx_http_cms_status_latency(p, last, n);

    if (p == last) {
        ngx_log_error(NGX_LOG_ALERT, r->connection->log, 0,
                      "cms: status: the answer outgrew its buffer");
        return NULL;
    }

    b->last = p;

    return b;
}


/* writes every family and sends it; the handler contract's codes */
static ngx_int_t
ngx_http_cms_status_send(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t     rc;
    ngx_buf_t    *b;
    ngx_chain_t   out;

    b = ngx_http_cms_status_body(r);
    if (b == NULL) {
        return NGX_ERROR;
    }

    b->last_buf = 1;
    b->last_in_chain = 1;

    r->headers_out.status = NGX_HTTP_OK;
    r->headers_out.content_length_n = b->last - b->pos;
    ngx_str_set(&r->headers_out.content_type,
                "text/plain; version=0.0.4; charset=utf-8");
    r->headers_out.content_type_len = sizeof("text/plain") - 1;

    if (b->last == b->pos || r->method == NGX_HTTP_HEAD) {
        r->header_only = 1;
    }

    ctx->answering = 1;
    ctx->sent = 1;

    rc = ngx_http_send_header(r);
    ctx->out_rc = rc;

    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        return rc == NGX_ERROR ? NGX_ERROR : NGX_OK;
    }

    out.buf = b;
    out.next = NULL;

    ctx->out_rc = ngx_http_output_filter(r, &out);

    return ctx->out_rc == NGX_ERROR ? NGX_ERROR : NGX_OK;
}


static u_char *
ngx_http_cms_status_family(u_char *p, u_char *last,
    ngx_http_cms_status_family_t *f)
{
    return ngx_slprintf(p, last, "# HELP %s %s\n# TYPE %s %s\n",
                        f->name, f->help, f->name, f->type);
}


/* worker n's samples of family f */
/* long: one case a kind of family, each a line or three */
static u_char *
ngx_http_cms_status_samples(u_char *p, u_char *last,
    ngx_http_cms_status_family_t *f, ngx_uint_t n,
    ngx_http_cms_metrics_worker_t *w)
{
    ngx_uint_t    i;
    ngx_msec_t    age;
    ngx_time_t   *tp;
    ngx_atomic_t  v;

    switch (f->kind) {

    case NGX_HTTP_CMS_SF_POOL_COUNTER:
    case NGX_HTTP_CMS_SF_POOL_GAUGE:
        for (i = 0; i < NGX_HTTP_CMS_METRICS_POOLS; i++) {
            v = (f->kind == NGX_HTTP_CMS_SF_POOL_GAUGE)
                ? w->pool[i][f->index]
                : w->counter[f->index + i * NGX_HTTP_CMS_M_POOL_COUNTERS];

            p = ngx_slprintf(p, last, "%s{worker=\"%ui\",pool=\"%s\"} %uA\n",
                             f->name, n, ngx_http_cms_status_pools[i], v);
        }

        return p;

    case NGX_HTTP_CMS_SF_POOL_STATE:
        for (i = 0; i < NGX_HTTP_CMS_METRICS_POOLS; i++) {
            p = ngx_slprintf(p, last,
                             "%s{worker=\"%ui\",pool=\"%s\",state=\"busy\"}"
                             " %uA\n"
                             "%s{worker=\"%ui\",pool=\"%s\",state=\"idle\"}"
                             " %uA\n",
                             f->name, n, ngx_http_cms_status_pools[i],
                             w->pool[i][NGX_HTTP_CMS_G_POOL_BUSY],
                             f->name, n, ngx_http_cms_status_pools[i],
                             w->pool[i][NGX_HTTP_CMS_G_POOL_IDLE]);
        }

        return p;

    case NGX_HTTP_CMS_SF_LANE:
        for (i = 0; i < NGX_HTTP_CMS_METRICS_LANES; i++) {
            p = ngx_slprintf(p, last, "%s{worker=\"%ui\",lane=\"%s\"} %uA\n",
                             f->name, n, ngx_http_cms_status_lanes[i],
                             w->lane[i][f->index]);
        }

        return p;

    case NGX_HTTP_CMS_SF_JOB:
    case NGX_HTTP_CMS_SF_READS:
        for (i = 0; i < 3; i++) {
            p = ngx_slprintf(p, last, "%s{worker=\"%ui\",%s=\"%s\"} %uA\n",
                             f->name, n,
                             f->kind == NGX_HTTP_CMS_SF_JOB ? "job" : "on",
                             f->kind == NGX_HTTP_CMS_SF_JOB
                             ? ngx_http_cms_status_jobs[i]
                             : ngx_http_cms_status_reads[i],
                             w->counter[f->index + i]);
        }

        return p;

    default: /* NGX_HTTP_CMS_SF_WORKER */
        if (f->index == 0) {
            return ngx_slprintf(p, last, "%s{worker=\"%ui\"} %uA\n",
                                f->name, n, w->started);
        }

        tp = ngx_timeofday();
        v = (ngx_atomic_uint_t) tp->sec * 1000 + tp->msec;
        age = v > w->sampled ? (ngx_msec_t) (v - w->sampled) : 0;

        return ngx_slprintf(p, last, "%s{worker=\"%ui\"} %M.%03M\n",
                            f->name, n, age / 1000, age % 1000);
    }
}


/* the outbox lag family, from the worker running the jobs, when known */
static u_char *
ngx_http_cms_status_lag(u_char *p, u_char *last, ngx_uint_t n)
{
    ngx_uint_t                      i, k, workers;
    ngx_atomic_uint_t               v;
    ngx_http_cms_metrics_worker_t  *w;

    static char  *names[] = { "content", "extensions" };

    for (i = 0; i < n; i++) {
        w = ngx_http_cms_metrics_worker(i, &workers);

        if (w == NULL || w->pid == 0
            || (w->outbox_lag[0] == 0 && w->outbox_lag[1] == 0))
        {
            continue;
        }

        p = ngx_slprintf(p, last,
                         "# HELP cms_outbox_lag_seconds Age of the oldest"
                         " event not yet delivered (0: none).\n"
                         "# TYPE cms_outbox_lag_seconds gauge\n");

        for (k = 0; k < NGX_HTTP_CMS_METRICS_OUTBOXES; k++) {
            v = w->outbox_lag[k];

            if (v != 0) {
                v--;
                p = ngx_slprintf(p, last, "cms_outbox_lag_seconds"
                                 "{outbox=\"%s\"} %uA.%03uA\n",
                                 names[k], v / 1000, v % 1000);
            }
        }

        return p;
    }

    return p;
}


/* worker n's request counters, or NULL for a worker not started */
static ngx_http_cms_metrics_requests_t *
ngx_http_cms_status_rq(ngx_uint_t n)
{
    ngx_uint_t                      workers;
    ngx_http_cms_metrics_worker_t  *w;

    w = ngx_http_cms_metrics_worker(n, &workers);

    return (w == NULL || w->pid == 0) ? NULL : &w->requests;
}


/* the requests by family, method and status class: the series counted */
static u_char *
ngx_http_cms_status_requests(u_char *p, u_char *last, ngx_uint_t n)
{
    ngx_uint_t                        i, f, m, c;
    ngx_http_cms_metrics_requests_t  *rq;

    p = ngx_slprintf(p, last,
                     "# HELP cms_http_requests_total Requests below /v1/"
                     " answered, by route family, method and status class."
                     "\n# TYPE cms_http_requests_total counter\n");

    for (i = 0; i < n; i++) {
        rq = ngx_http_cms_status_rq(i);
        if (rq == NULL) {
            continue;
        }

        for (f = 0; f < NGX_HTTP_CMS_RQ_FAMILIES; f++) {
            for (m = 0; m < NGX_HTTP_CMS_RQ_METHODS; m++) {
                for (c = 0; c < NGX_HTTP_CMS_RQ_CLASSES; c++) {
                    if (rq->count[f][m][c] == 0) {
                        continue;
                    }

                    p = ngx_slprintf(p, last, "cms_http_requests_total"
                                     "{worker=\"%ui\",family=\"%s\","
                                     "method=\"%s\",status=\"%uixx\"}"
                                     " %uA\n", i,
                                     ngx_http_cms_metrics_families[f],
                                     ngx_http_cms_metrics_methods[m], c + 1,
                                     rq->count[f][m][c]);
                }
            }
        }
    }

    return p;
}


/* each family's latency histogram, for the families that had a request */
/* long: the buckets cumulated, then _sum and _count */
static u_char *
ngx_http_cms_status_latency(u_char *p, u_char *last, ngx_uint_t n)
{
    ngx_uint_t                        i, f, b;
    ngx_atomic_uint_t                 sum, total;
    ngx_http_cms_metrics_requests_t  *rq;

    p = ngx_slprintf(p, last,
                     "# HELP cms_http_request_duration_seconds Time from a"
                     " request's first byte to its log phase, by route"
                     " family.\n"
                     "# TYPE cms_http_request_duration_seconds histogram\n");

    for (i = 0; i < n; i++) {
        rq = ngx_http_cms_status_rq(i);
        if (rq == NULL) {
            continue;
        }

        for (f = 0; f < NGX_HTTP_CMS_RQ_FAMILIES; f++) {
            total = 0;

            for (b = 0; b < NGX_HTTP_CMS_RQ_BUCKETS; b++) {
                total += rq->bucket[f][b];
            }

            if (total == 0) {
                continue;
            }

            sum = 0;

            for (b = 0; b < NGX_HTTP_CMS_RQ_BUCKETS; b++) {
                sum += rq->bucket[f][b];

                if (b == NGX_HTTP_CMS_RQ_BUCKETS - 1) {
                    p = ngx_slprintf(p, last,
                                     "cms_http_request_duration_seconds_bucket"
                                     "{worker=\"%ui\",family=\"%s\","
                                     "le=\"+Inf\"} %uA\n", i,
                                     ngx_http_cms_metrics_families[f], sum);
                    break;
                }

                p = ngx_slprintf(p, last,
                                 "cms_http_request_duration_seconds_bucket"
                                 "{worker=\"%ui\",family=\"%s\","
                                 "le=\"%M.%03M\"} %uA\n", i,
                                 ngx_http_cms_metrics_families[f],
                                 ngx_http_cms_metrics_bounds[b] / 1000,
                                 ngx_http_cms_metrics_bounds[b] % 1000, sum);
            }

            p = ngx_slprintf(p, last,
                             "cms_http_request_duration_seconds_sum"
                             "{worker=\"%ui\",family=\"%s\"} %uA.%03uA\n"
                             "cms_http_request_duration_seconds_count"
                             "{worker=\"%ui\",family=\"%s\"} %uA\n",
                             i, ngx_http_cms_metrics_families[f],
                             rq->ms[f] / 1000, rq->ms[f] % 1000,
                             i, ngx_http_cms_metrics_families[f], total);
        }
    }

    return p;
}
