
/*
 * The workers' counters, in one shared memory zone so that one scrape of
 * cms_status sees every worker.  Each worker writes its own record only
 * (a plain increment: one writer), any worker reads them all.  The pools
 * count events with one line, ngx_http_cms_metric(); what is a state
 * rather than an event (pool sizes, queue lengths, lanes) is sampled into
 * the record by the worker itself (ngx_http_cms_status.c).
 */


#ifndef _NGX_HTTP_CMS_METRICS_H_INCLUDED_
#define _NGX_HTTP_CMS_METRICS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


/* events, counted since the worker started */
typedef enum {
    NGX_HTTP_CMS_M_PG_WAITS = 0,        /* queued for a connection */
    NGX_HTTP_CMS_M_PG_WAIT_TIMEOUTS,    /* gave up waiting in the queue */
    NGX_HTTP_CMS_M_PG_REJECTED,         /* queue full, or nothing alive */
    NGX_HTTP_CMS_M_PG_TIMEOUTS,         /* a query or connect timer fired */
    NGX_HTTP_CMS_M_PG_CONNECTS,         /* connections opened (reconnects) */
    NGX_HTTP_CMS_M_PG_CONNECT_FAILURES,
    NGX_HTTP_CMS_M_PG_ERRORS,           /* a connection failed in use */

    NGX_HTTP_CMS_M_REDIS_WAITS,         /* the same, for Redis */
    NGX_HTTP_CMS_M_REDIS_WAIT_TIMEOUTS,
    NGX_HTTP_CMS_M_REDIS_REJECTED,
    NGX_HTTP_CMS_M_REDIS_TIMEOUTS,
    NGX_HTTP_CMS_M_REDIS_CONNECTS,
    NGX_HTTP_CMS_M_REDIS_CONNECT_FAILURES,
    NGX_HTTP_CMS_M_REDIS_ERRORS,

    NGX_HTTP_CMS_M_JOB_PURGE,           /* background job rounds done */
    NGX_HTTP_CMS_M_JOB_RELAY,
    NGX_HTTP_CMS_M_JOB_EXTENSIONS,

    NGX_HTTP_CMS_M_READ_REPLICA,        /* with replicas, a GET's reads: */
    NGX_HTTP_CMS_M_READ_PRIMARY,        /* on a replica, on the primary, */
    NGX_HTTP_CMS_M_READ_FALLBACK,       /* asked of it after a replica */

    NGX_HTTP_CMS_M_COUNTERS
} ngx_http_cms_metric_e;

/* a pool's counters are these offsets from its first one */
#define NGX_HTTP_CMS_M_POOL_COUNTERS  \
    (NGX_HTTP_CMS_M_REDIS_WAITS - NGX_HTTP_CMS_M_PG_WAITS)


/* states, sampled by the worker (ngx_http_cms_status.c writes them) */
typedef enum {
    NGX_HTTP_CMS_G_POOL_MAX = 0,        /* per pool: pg, then redis */
    NGX_HTTP_CMS_G_POOL_BUSY,
    NGX_HTTP_CMS_G_POOL_IDLE,
    NGX_HTTP_CMS_G_POOL_QUEUED,
    NGX_HTTP_CMS_G_POOL_GAUGES
} ngx_http_cms_pool_gauge_e;

typedef enum {
    NGX_HTTP_CMS_G_LANE_JOBS = 0,       /* per lane: password, sanitize */
    NGX_HTTP_CMS_G_LANE_QUEUE,
    NGX_HTTP_CMS_G_LANE_RUNNING,
    NGX_HTTP_CMS_G_LANE_QUEUED,
    NGX_HTTP_CMS_G_LANE_STARTED,
    NGX_HTTP_CMS_G_LANE_REFUSED,
    NGX_HTTP_CMS_G_LANE_GAUGES
} ngx_http_cms_lane_gauge_e;

/*
 * Requests (counted in the log phase, ngx_http_cms_metrics.c): by route
 * family (the first segment below /v1/), method and status class, and a
 * latency histogram per family, its upper bounds in ms
 * (NGX_HTTP_CMS_RQ_BOUNDS); the last bucket is +Inf.
 */
#define NGX_HTTP_CMS_RQ_FAMILIES   11
#define NGX_HTTP_CMS_RQ_METHODS    8
#define NGX_HTTP_CMS_RQ_CLASSES    5
#define NGX_HTTP_CMS_RQ_BUCKETS    14
#define NGX_HTTP_CMS_RQ_BOUNDS                                                \
    { 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000 }

typedef struct {
    ngx_atomic_t                count[NGX_HTTP_CMS_RQ_FAMILIES]
                                     [NGX_HTTP_CMS_RQ_METHODS]
                                     [NGX_HTTP_CMS_RQ_CLASSES];
    ngx_atomic_t                bucket[NGX_HTTP_CMS_RQ_FAMILIES]
                                      [NGX_HTTP_CMS_RQ_BUCKETS];
    ngx_atomic_t                ms[NGX_HTTP_CMS_RQ_FAMILIES];  /* sum */
} ngx_http_cms_metrics_requests_t;

/* the labels' values, in the arrays' order */
extern const char  *ngx_http_cms_metrics_families[NGX_HTTP_CMS_RQ_FAMILIES];
extern const char  *ngx_http_cms_metrics_methods[NGX_HTTP_CMS_RQ_METHODS];
extern const ngx_msec_t  ngx_http_cms_metrics_bounds[
                             NGX_HTTP_CMS_RQ_BUCKETS - 1];


#define NGX_HTTP_CMS_METRICS_POOLS  2
#define NGX_HTTP_CMS_METRICS_LANES  3
#define NGX_HTTP_CMS_METRICS_OUTBOXES  2


/* one worker's record in the zone */
typedef struct {
    ngx_atomic_t                pid;          /* 0: no worker yet */
    ngx_atomic_t                started;      /* seconds, Unix time */
    ngx_atomic_t                sampled;      /* msec, Unix time */
    ngx_atomic_t                counter[NGX_HTTP_CMS_M_COUNTERS];
    ngx_atomic_t                pool[NGX_HTTP_CMS_METRICS_POOLS]
                                    [NGX_HTTP_CMS_G_POOL_GAUGES];
    ngx_atomic_t                lane[NGX_HTTP_CMS_METRICS_LANES]
                                    [NGX_HTTP_CMS_G_LANE_GAUGES];
    /* the oldest pending event's age in ms, plus 1 (0: not known), of the
       content and the extension outboxes: the jobs' worker asks */
    ngx_atomic_t                outbox_lag[NGX_HTTP_CMS_METRICS_OUTBOXES];
    ngx_http_cms_metrics_requests_t  requests;
} ngx_http_cms_metrics_worker_t;


/*
 * This process's record: a private one until the worker has claimed its
 * record in the zone (and in processes that have none), so that counting
 * never needs a test.
 */
extern ngx_http_cms_metrics_worker_t  *ngx_http_cms_metrics_mine;

#define ngx_http_cms_metric(m)  ngx_http_cms_metrics_mine->counter[m]++


/*
 * Adds the zone to the configuration (once; cms_status asks for it).
 * NGX_OK or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_metrics_zone(ngx_conf_t *cf);

/* the log phase's handler that counts requests below /v1/ (postconfiguration)
   when a location has cms_status; NGX_OK or NGX_ERROR */
ngx_int_t ngx_http_cms_metrics_init(ngx_conf_t *cf);

/* Claims this worker's record when there is a zone.  NGX_OK. */
ngx_int_t ngx_http_cms_metrics_init_process(ngx_cycle_t *cycle);

/*
 * Worker "n"'s record, or NULL when there is no zone or "n" is past the
 * configured workers; *workers is set to their number.
 */
ngx_http_cms_metrics_worker_t *ngx_http_cms_metrics_worker(ngx_uint_t n,
    ngx_uint_t *workers);


#endif /* _NGX_HTTP_CMS_METRICS_H_INCLUDED_ */
