
/*
 * The thread pool glue, and the lanes.
 *
 * The task lives in r->pool.  While it runs, r->main->blocked holds the
 * request: a client that leaves makes nginx defer the request's
 * termination until the task is back (ngx_http_terminate_request()), so a
 * thread never writes into freed memory.
 *
 * A lane bounds one kind of work per worker: argon2id takes 64 MiB and
 * ~100 ms of a CPU a hash, the sanitizer up to 64 MiB of parser memory;
 * nginx's pool would run as many as it has threads (32 by default) and
 * queue the rest without bound.  A lane runs at most "jobs" at once (the
 * number of CPUs unless configured), keeps at most "queue" waiting, and
 * refuses the rest (503), so a flood costs bounded memory and a bounded
 * wait instead of minutes of delay for everyone.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_thread.h"
#include "cms_sanitize.h"

#if (NGX_LINUX)
#include <sys/resource.h>
#include <sys/syscall.h>
#endif


/* how often a worker waiting for a task to come back says so */
#define NGX_HTTP_CMS_THREAD_HOLD  60000


#if !(NGX_THREADS)
#error ngx_http_cms_module needs nginx built --with-threads
#endif


typedef struct {
    ngx_queue_t                     waiting;
    ngx_http_cms_thread_stats_t     st;
    const char                     *name;
} ngx_http_cms_thread_lane_t;


/* a place held in a lane by a request that has not queued its job yet */
typedef struct {
    ngx_http_cms_thread_lane_t     *lane;
    unsigned                        held:1;
} ngx_http_cms_thread_hold_t;


typedef struct {
    ngx_http_request_t             *request;
    ngx_thread_task_t              *task;
    ngx_http_cms_thread_work_pt     work;
    ngx_http_cms_thread_done_pt     start;
    ngx_http_cms_thread_done_pt     done;
    void                           *data;
    ngx_http_cms_thread_lane_t     *lane;        /* NULL: none */
    ngx_event_t                     hold;        /* keeps a worker up */
    ngx_queue_t                     queue;
    unsigned                        queued:1;
    unsigned                        running:1;
} ngx_http_cms_thread_task_t;


static ngx_uint_t ngx_http_cms_thread_admit(ngx_http_request_t *r,
    ngx_http_cms_thread_lane_t *lane);
static void ngx_http_cms_thread_unhold(void *data);
static ngx_http_cms_thread_task_t *ngx_http_cms_thread_task(
    ngx_http_request_t *r);
static ngx_int_t ngx_http_cms_thread_post(ngx_http_cms_thread_task_t *t);
static void ngx_http_cms_thread_next(ngx_http_cms_thread_lane_t *lane);
static void ngx_http_cms_thread_release(ngx_http_cms_thread_task_t *t);
static void ngx_http_cms_thread_cleanup(void *data);
static void ngx_http_cms_thread_handler(void *data, ngx_log_t *log);
static void ngx_http_cms_thread_event(ngx_event_t *ev);
static void ngx_http_cms_thread_hold(ngx_event_t *ev);


static ngx_http_cms_thread_lane_t  ngx_http_cms_thread_lanes[
    NGX_HTTP_CMS_LANES];


ngx_int_t
ngx_http_cms_thread_init_process(ngx_cycle_t *cycle,
    ngx_http_cms_main_conf_t *mcf)
{
    ngx_uint_t                   i, jobs[NGX_HTTP_CMS_LANES];
    ngx_uint_t                   queue[NGX_HTTP_CMS_LANES];
    ngx_http_cms_thread_lane_t  *lane;

    static const char  *names[] = { "password", "sanitizer", "image" };

    jobs[NGX_HTTP_CMS_LANE_PASSWORD] = mcf->password_jobs;
    queue[NGX_HTTP_CMS_LANE_PASSWORD] = mcf->password_queue;
    jobs[NGX_HTTP_CMS_LANE_SANITIZE] = mcf->sanitize_jobs;
    queue[NGX_HTTP_CMS_LANE_SANITIZE] = mcf->sanitize_queue;
    jobs[NGX_HTTP_CMS_LANE_IMAGE] = mcf->image.jobs;
    queue[NGX_HTTP_CMS_LANE_IMAGE] = mcf->image.queue;

    for (i = 0; i < NGX_HTTP_CMS_LANES; i++) {
        lane = &ngx_http_cms_thread_lanes[i];

        ngx_queue_init(&lane->waiting);
        ngx_memzero(&lane->st, sizeof(ngx_http_cms_thread_stats_t));

        /* 0: as many as the machine has CPUs */
        lane->st.jobs = jobs[i] ? jobs[i] : (ngx_uint_t) ngx_max(ngx_ncpu, 1);
        lane->st.queue = queue[i];
        lane->name = names[i];
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_thread_run(ngx_http_request_t *r,
    ngx_http_cms_thread_work_pt work, void *data,
    ngx_http_cms_thread_done_pt done)
{
    ngx_http_cms_thread_task_t  *t;

    t = ngx_http_cms_thread_task(r);
    if (t == NULL) {
        return NGX_ERROR;
    }

    t->work = work;
    t->done = done;
    t->data = data;

    return ngx_http_cms_thread_post(t);
}


ngx_int_t
ngx_http_cms_thread_queue(ngx_http_request_t *r, ngx_uint_t lane,
    ngx_http_cms_thread_job_t *job, void *data)
{
    ngx_pool_cleanup_t          *cln;
    ngx_http_cms_thread_lane_t  *l;
    ngx_http_cms_thread_task_t  *t;

    l = &ngx_http_cms_thread_lanes[lane];

    if (!ngx_http_cms_thread_admit(r, l)) {
        return NGX_BUSY;
    }

    t = ngx_http_cms_thread_task(r);
    cln = ngx_pool_cleanup_add(r->pool, 0);

    if (t == NULL || cln == NULL) {
        return NGX_ERROR;
    }

    t->work = job->work;
    t->start = job->start;
    t->done = job->done;
    t->data = data;
    t->lane = l;

    cln->handler = ngx_http_cms_thread_cleanup;
    cln->data = t;

    if (l->st.running < l->st.jobs) {
        return ngx_http_cms_thread_post(t);
    }

    /* a client that leaves meanwhile is noticed; the cleanup unqueues it */
    r->read_event_handler = ngx_http_test_reading;

    ngx_queue_insert_tail(&l->waiting, &t->queue);
    t->queued = 1;
    l->st.queued++;

    return NGX_DONE;
}


ngx_int_t
ngx_http_cms_thread_reserve(ngx_http_request_t *r, ngx_uint_t lane)
{
    ngx_pool_cleanup_t          *cln;
    ngx_http_cms_ctx_t          *ctx;
    ngx_http_cms_thread_lane_t  *l;
    ngx_http_cms_thread_hold_t  *hold;

    l = &ngx_http_cms_thread_lanes[lane];
    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    if (!ngx_http_cms_thread_admit(r, l)) {
        return NGX_BUSY;
    }

    hold = ngx_palloc(r->pool, sizeof(ngx_http_cms_thread_hold_t));
    cln = ngx_pool_cleanup_add(r->pool, 0);

    if (hold == NULL || cln == NULL) {
        return NGX_ERROR;
    }

    hold->lane = l;
    hold->held = 1;
    l->st.held++;

    cln->handler = ngx_http_cms_thread_unhold;
    cln->data = hold;
    ctx->lane_hold = hold;

    return NGX_OK;
}


/*
 * Whether a job of r may join the lane: the place r holds there, taken
 * now, or a free one (running, waiting and held places count); else the
 * refusal is counted and logged.
 */
static ngx_uint_t
ngx_http_cms_thread_admit(ngx_http_request_t *r,
    ngx_http_cms_thread_lane_t *lane)
{
    ngx_http_cms_ctx_t          *ctx;
    ngx_http_cms_thread_hold_t  *hold;

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);
    hold = ctx->lane_hold;

    if (hold != NULL && hold->held && hold->lane == lane) {
        ngx_http_cms_thread_unhold(hold);
        ctx->lane_hold = NULL;
        return 1;
    }

    if (lane->st.running + lane->st.queued + lane->st.held
        < lane->st.jobs + lane->st.queue)
    {
        return 1;
    }

    lane->st.refused++;

    ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                  "cms: %s queue full (%ui running, %ui waiting, %ui held)",
                  lane->name, lane->st.running, lane->st.queued,
                  lane->st.held);

    return 0;
}


/* a held place is taken by its job or given back by the request's end */
static void
ngx_http_cms_thread_unhold(void *data)
{
    ngx_http_cms_thread_hold_t *hold = data;

    if (hold->held) {
        hold->held = 0;
        hold->lane->st.held--;
    }
}


void
ngx_http_cms_thread_stats(ngx_uint_t lane, ngx_http_cms_thread_stats_t *st)
{
    *st = ngx_http_cms_thread_lanes[lane].st;
}


/* a task in r->pool, its context ours */
static ngx_http_cms_thread_task_t *
ngx_http_cms_thread_task(ngx_http_request_t *r)
{
    ngx_thread_task_t           *task;
    ngx_http_cms_thread_task_t  *t;

    task = ngx_thread_task_alloc(r->pool, sizeof(ngx_http_cms_thread_task_t));
    if (task == NULL) {
        return NULL;
    }

    t = task->ctx;
    ngx_memzero(t, sizeof(ngx_http_cms_thread_task_t));

    t->request = r;
    t->task = task;

    task->handler = ngx_http_cms_thread_handler;
    task->event.handler = ngx_http_cms_thread_event;
    task->event.data = t;

    t->hold.handler = ngx_http_cms_thread_hold;
    t->hold.data = t;
    t->hold.log = r->connection->log;

    return t;
}


/* the job's turn: start(), then into nginx's pool; NGX_DONE or a code */
static ngx_int_t
ngx_http_cms_thread_post(ngx_http_cms_thread_task_t *t)
{
    ngx_int_t                  rc;
    ngx_http_request_t        *r;
    ngx_http_cms_main_conf_t  *mcf;

    r = t->request;
    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    if (t->start != NULL) {
        rc = t->start(r, ngx_http_get_module_ctx(r, ngx_http_cms_module),
                      t->data);
        if (rc != NGX_OK) {
            return rc;
        }
    }

    if (mcf->tp == NULL || ngx_thread_task_post(mcf->tp, t->task) != NGX_OK)
    {
        return NGX_ERROR;
    }

    r->main->blocked++;

    /*
     * A task arms no timer of its own: a worker told to quit would see
     * none it must wait for and leave the request unanswered.
     */
    ngx_add_timer(&t->hold, NGX_HTTP_CMS_THREAD_HOLD);

    if (t->lane != NULL) {
        t->running = 1;
        t->lane->st.running++;
        t->lane->st.started++;
    }

    return NGX_DONE;
}


/* a turn ended: waiting jobs start while there is room */
static void
ngx_http_cms_thread_next(ngx_http_cms_thread_lane_t *lane)
{
    ngx_int_t                    rc;
    ngx_queue_t                 *q;
    ngx_connection_t            *c;
    ngx_http_request_t          *r;
    ngx_http_cms_ctx_t          *ctx;
    ngx_http_cms_thread_task_t  *t;

    while (!ngx_queue_empty(&lane->waiting)
           && lane->st.running < lane->st.jobs)
    {
        q = ngx_queue_head(&lane->waiting);
        ngx_queue_remove(q);

        t = ngx_queue_data(q, ngx_http_cms_thread_task_t, queue);
        t->queued = 0;
        lane->st.queued--;

        rc = ngx_http_cms_thread_post(t);

        if (rc == NGX_DONE) {
            continue;
        }

        r = t->request;
        c = r->connection;

        ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);
        ctx->finish(r, rc);
        ngx_http_run_posted_requests(c);
    }
}


/* a running job gives its turn back */
static void
ngx_http_cms_thread_release(ngx_http_cms_thread_task_t *t)
{
    if (!t->running) {
        return;
    }

    t->running = 0;
    t->lane->st.running--;

    ngx_http_cms_thread_next(t->lane);
}


/* the request ends: a waiting job leaves the queue */
static void
ngx_http_cms_thread_cleanup(void *data)
{
    ngx_http_cms_thread_task_t *t = data;

    if (t->queued) {
        ngx_queue_remove(&t->queue);
        t->queued = 0;
        t->lane->st.queued--;
    }

    /* not reached while the work runs (the request is blocked) */
    ngx_http_cms_thread_release(t);
}


static void
ngx_http_cms_thread_handler(void *data, ngx_log_t *log)
{
    ngx_http_cms_thread_task_t *t = data;

#if (NGX_LINUX)
    static __thread int  niced;

    /*
     * Linux schedules threads on their own: a pool thread doing seconds of
     * hashing yields to the event loop's thread, which answers requests.
     */
    if (!niced) {
        niced = 1;
        (void) setpriority(PRIO_PROCESS, (id_t) syscall(SYS_gettid), 19);
    }
#endif

    t->work(t->data);
}


static void
ngx_http_cms_thread_event(ngx_event_t *ev)
{
    ngx_http_cms_thread_task_t *t = ev->data;

    ngx_int_t            rc;
    ngx_connection_t    *c;
    ngx_http_request_t  *r;
    ngx_http_cms_ctx_t  *ctx;

    r = t->request;
    c = r->connection;
    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    r->main->blocked--;

    if (t->hold.timer_set) {
        ngx_del_timer(&t->hold);
    }

    /* the next job starts before this one's continuation runs */
    ngx_http_cms_thread_release(t);

    if (c->error) {
        /* the client left: nginx deferred its termination until now */
        rc = NGX_HTTP_CLIENT_CLOSED_REQUEST;

    } else {
        rc = t->done(r, ctx, t->data);
    }

    ctx->finish(r, rc);
    ngx_http_run_posted_requests(c);
}


/* a task still running a minute on: the worker keeps waiting for it */
static void
ngx_http_cms_thread_hold(ngx_event_t *ev)
{
    ngx_log_error(NGX_LOG_WARN, ev->log, 0,
                  "cms: a thread task is still running");

    ngx_add_timer(ev, NGX_HTTP_CMS_THREAD_HOLD);
}


/* the sanitize lane's batch: the values, and whom to tell */
typedef struct {
    ngx_array_t                    *html;
    ngx_http_cms_thread_done_pt     done;
    void                           *data;
} ngx_http_cms_thread_batch_t;


static ngx_int_t
ngx_http_cms_thread_html_start(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    void *data)
{
    ngx_http_cms_thread_batch_t *b = data;

    ngx_uint_t            i;
    ngx_http_cms_html_t  *h;

    h = b->html->elts;

    for (i = 0; i < b->html->nelts; i++) {
        h[i].out_size = cms_sanitize_out_max(h[i].in_len);
        h[i].out = ngx_pnalloc(r->pool, h[i].out_size);

        if (h[i].out == NULL) {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/* in a pool thread */
static void
ngx_http_cms_thread_html_work(void *data)
{
    ngx_http_cms_thread_batch_t *b = data;

    ngx_uint_t            i;
    ngx_http_cms_html_t  *h;

    h = b->html->elts;

    for (i = 0; i < b->html->nelts; i++) {
        h[i].rc = cms_sanitize(h[i].in, h[i].in_len, h[i].out, h[i].out_size,
                               &h[i].out_len);
    }
}


static ngx_int_t
ngx_http_cms_thread_html_done(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    void *data)
{
    ngx_http_cms_thread_batch_t *b = data;

    return b->done(r, ctx, b->data);
}


ngx_int_t
ngx_http_cms_thread_html(ngx_http_request_t *r, ngx_array_t *html,
    ngx_http_cms_thread_done_pt done, void *data)
{
    ngx_http_cms_thread_batch_t  *b;

    static ngx_http_cms_thread_job_t  job = {
        ngx_http_cms_thread_html_work, ngx_http_cms_thread_html_start,
        ngx_http_cms_thread_html_done
    };

    b = ngx_palloc(r->pool, sizeof(ngx_http_cms_thread_batch_t));
    if (b == NULL) {
        return NGX_ERROR;
    }

    b->html = html;
    b->done = done;
    b->data = data;

    return ngx_http_cms_thread_queue(r, NGX_HTTP_CMS_LANE_SANITIZE, &job, b);
}
