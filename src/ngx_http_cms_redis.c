
/*
 * The per-worker Redis pool.
 *
 * nginx connects (ngx_http_cms_redis_conn.c: a host name through nginx's
 * resolver, TLS through nginx's SSL helpers), sends and receives; hiredis
 * formats commands and parses replies.  Every read goes on until EAGAIN,
 * so edge triggering never strands bytes.  A pipeline is a batch of
 * commands whose replies are counted.  Idle connections follow nginx's
 * upstream keepalive habits: a peek on read closes them on EOF or stray
 * data, and c->idle lets reload and quit close them.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <ngx_event_connect.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_redis.h"
#include "ngx_http_cms_redis_int.h"
#include "ngx_http_cms_metrics.h"


static u_char *ngx_http_cms_redis_log_context(ngx_log_t *log, u_char *buf,
    size_t len);
static ngx_int_t ngx_http_cms_redis_start(ngx_http_cms_redis_slot_t *s,
    ngx_http_cms_redis_op_t *op);
static ngx_int_t ngx_http_cms_redis_recv(ngx_http_cms_redis_slot_t *s);
static void ngx_http_cms_redis_idle_handler(ngx_event_t *ev);
static void ngx_http_cms_redis_timer_handler(ngx_event_t *ev);
static void ngx_http_cms_redis_wait_handler(ngx_event_t *ev);
static void ngx_http_cms_redis_finished(ngx_http_cms_redis_slot_t *s);
static void ngx_http_cms_redis_kick_handler(ngx_event_t *ev);
static ngx_http_cms_redis_slot_t *ngx_http_cms_redis_acquire(void);
static ngx_uint_t ngx_http_cms_redis_live(void);
static ngx_http_cms_redis_op_t *ngx_http_cms_redis_dequeue(void);
static void ngx_http_cms_redis_deliver(ngx_http_cms_redis_op_t *op,
    redisReply **replies, ngx_uint_t n);
static void ngx_http_cms_redis_detach(void *data);
static ngx_int_t ngx_http_cms_redis_submit(ngx_http_cms_redis_op_t *op);


ngx_http_cms_redis_pool_t  ngx_http_cms_redis_pool;


/* worker lifetime */

ngx_int_t
ngx_http_cms_redis_init_process(ngx_cycle_t *cycle,
    ngx_http_cms_redis_conf_t *rcf)
{
    ngx_uint_t                  i;
    ngx_http_cms_redis_slot_t  *s;

    ngx_http_cms_redis_pool.conf = rcf;
    ngx_queue_init(&ngx_http_cms_redis_pool.waiting);

    ngx_http_cms_redis_pool.kick.handler = ngx_http_cms_redis_kick_handler;
    ngx_http_cms_redis_pool.kick.log = cycle->log;

    ngx_http_cms_redis_pool.slots =
        ngx_pcalloc(cycle->pool, rcf->max * sizeof(ngx_http_cms_redis_slot_t));
    if (ngx_http_cms_redis_pool.slots == NULL) {
        return NGX_ERROR;
    }

    for (i = 0; i < rcf->max; i++) {
        s = &ngx_http_cms_redis_pool.slots[i];

        s->log = *cycle->log;
        s->log.action = "talking to redis";
        s->log.handler = ngx_http_cms_redis_log_context;
        s->log.data = s;

        s->timer.handler = ngx_http_cms_redis_timer_handler;
        s->timer.data = s;
        s->timer.log = &s->log;

        /* not cancelable: quit and reload wait for the commands in flight */
        s->timer.cancelable = 0;
    }

    return NGX_OK;
}


void
ngx_http_cms_redis_exit_process(void)
{
    ngx_uint_t  i;

    if (ngx_http_cms_redis_pool.conf == NULL) {
        return;
    }

    for (i = 0; i < ngx_http_cms_redis_pool.conf->max; i++) {
        ngx_http_cms_redis_close(&ngx_http_cms_redis_pool.slots[i]);
    }
}


/* the request side */

ngx_int_t
ngx_http_cms_redis_run(ngx_http_request_t *r,
    ngx_http_cms_redis_cmds_t *cmds, ngx_http_cms_redis_done_pt done)
{
    ngx_pool_cleanup_t       *cln;
    ngx_http_cms_redis_op_t  *op;

    if (ngx_http_cms_redis_pool.conf == NULL) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: \"cms_redis\" is not configured");
        return NGX_ERROR;
    }

    op = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_redis_op_t));
    cln = ngx_pool_cleanup_add(r->pool, 0);

    if (op == NULL || cln == NULL) {
        return NGX_ERROR;
    }

    cln->handler = ngx_http_cms_redis_detach;
    cln->data = op;

    op->request = r;
    op->cmds = cmds;
    op->done = done;
    op->log = r->connection->log;

    r->read_event_handler = ngx_http_test_reading;

    if (ngx_http_cms_redis_submit(op) != NGX_OK) {
        return NGX_HTTP_SERVICE_UNAVAILABLE;
    }

    return NGX_DONE;
}


ngx_int_t
ngx_http_cms_redis_job(ngx_pool_t *pool, ngx_http_cms_redis_cmds_t *cmds,
    ngx_http_cms_redis_job_pt done, void *data)
{
    ngx_http_cms_redis_op_t  *op;

    if (ngx_http_cms_redis_pool.conf == NULL) {
        ngx_destroy_pool(pool);
        return NGX_ERROR;
    }

    op = ngx_pcalloc(pool, sizeof(ngx_http_cms_redis_op_t));
    if (op == NULL) {
        ngx_destroy_pool(pool);
        return NGX_ERROR;
    }

    op->pool = pool;
    op->cmds = cmds;
    op->job_done = done;
    op->job_data = data;
    op->log = ngx_cycle->log;

    if (ngx_http_cms_redis_submit(op) != NGX_OK) {
        ngx_destroy_pool(pool);
        return NGX_ERROR;
    }

    return NGX_OK;
}


/* a connection now, or a place in the queue; NGX_DECLINED: none to have */
static ngx_int_t
ngx_http_cms_redis_submit(ngx_http_cms_redis_op_t *op)
{
    ngx_uint_t                  i;
    ngx_http_cms_redis_pool_t  *pool;
    ngx_http_cms_redis_slot_t  *s;

    pool = &ngx_http_cms_redis_pool;

    s = ngx_http_cms_redis_acquire();

    if (s == NULL && ngx_current_msec >= pool->retry_at) {
        for (i = 0; i < pool->conf->max; i++) {
            if (pool->slots[i].state == NGX_HTTP_CMS_REDIS_DOWN) {
                (void) ngx_http_cms_redis_connect(&pool->slots[i]);
                break;
            }
        }

        s = ngx_http_cms_redis_acquire();
    }

    if (s != NULL) {
        if (ngx_http_cms_redis_start(s, op) == NGX_OK) {
            return NGX_OK;
        }

        ngx_http_cms_redis_close(s);
        return NGX_DECLINED;
    }

    if (!ngx_http_cms_redis_live() || pool->nwaiting >= pool->conf->queue) {
        ngx_http_cms_metric(NGX_HTTP_CMS_M_REDIS_REJECTED);
        ngx_log_error(NGX_LOG_ERR, op->log, 0,
                      "cms: no redis connection can be had");
        return NGX_DECLINED;
    }

    op->wait.handler = ngx_http_cms_redis_wait_handler;
    op->wait.data = op;
    op->wait.log = op->log;
    ngx_add_timer(&op->wait, pool->conf->timeout);

    ngx_queue_insert_tail(&pool->waiting, &op->queue);
    pool->nwaiting++;
    op->queued = 1;
    ngx_http_cms_metric(NGX_HTTP_CMS_M_REDIS_WAITS);

    return NGX_OK;
}


void
ngx_http_cms_redis_stats(ngx_http_cms_pool_stats_t *st)
{
    ngx_uint_t                  i;
    ngx_http_cms_redis_slot_t  *s;

    ngx_memzero(st, sizeof(ngx_http_cms_pool_stats_t));

    if (ngx_http_cms_redis_pool.conf == NULL) {
        return;
    }

    st->max = ngx_http_cms_redis_pool.conf->max;
    st->queued = ngx_http_cms_redis_pool.nwaiting;

    for (i = 0; i < st->max; i++) {
        s = &ngx_http_cms_redis_pool.slots[i];

        if (s->state == NGX_HTTP_CMS_REDIS_DOWN) {
            continue;
        }

        st->connections++;

        if (s->state == NGX_HTTP_CMS_REDIS_IDLE) {
            st->idle++;

        } else {
            st->busy++;
        }
    }
}


/* the request ended: a half-sent batch cannot go on, a sent one drains */
static void
ngx_http_cms_redis_detach(void *data)
{
    ngx_http_cms_redis_op_t *op = data;

    ngx_http_cms_redis_slot_t  *s;

    if (op->queued) {
        ngx_queue_remove(&op->queue);
        ngx_http_cms_redis_pool.nwaiting--;
        op->queued = 0;
    }

    if (op->wait.timer_set) {
        ngx_del_timer(&op->wait);
    }

    s = op->slot;

    if (s == NULL) {
        return;
    }

    s->op = NULL;
    op->slot = NULL;

    if (s->pos != s->last) {
        /* the unsent bytes live in the request's pool */
        ngx_http_cms_redis_close(s);

        /*
         * a waiter may need the slot again: kick from the event loop, not
         * from inside the ending request's cleanup
         */
        ngx_post_event(&ngx_http_cms_redis_pool.kick, &ngx_posted_events);
    }
}


static void
ngx_http_cms_redis_kick_handler(ngx_event_t *ev)
{
    ngx_http_cms_redis_kick();
}


static void
ngx_http_cms_redis_wait_handler(ngx_event_t *ev)
{
    ngx_http_cms_redis_op_t *op = ev->data;

    ngx_log_error(NGX_LOG_ERR, ev->log, 0,
                  "cms: timed out waiting for a redis connection");
    ngx_http_cms_metric(NGX_HTTP_CMS_M_REDIS_WAIT_TIMEOUTS);

    ngx_queue_remove(&op->queue);
    ngx_http_cms_redis_pool.nwaiting--;
    op->queued = 0;

    ngx_http_cms_redis_deliver(op, NULL, 0);
}


static void
ngx_http_cms_redis_deliver(ngx_http_cms_redis_op_t *op, redisReply **replies,
    ngx_uint_t n)
{
    ngx_int_t            rc;
    ngx_connection_t    *c;
    ngx_http_request_t  *r;
    ngx_http_cms_ctx_t  *ctx;

    if (op->request == NULL) {
        /* a job: its pool (op with it) goes once it has the answer */
        op->job_done(op->job_data, replies, n);
        ngx_destroy_pool(op->pool);
        return;
    }

    r = op->request;
    c = r->connection;

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    /* op lives in r->pool: it must not be touched after finish() */
    rc = op->done(r, ctx, replies, n);

    ctx->finish(r, rc);
    ngx_http_run_posted_requests(c);
}


/* slots */

static ngx_http_cms_redis_slot_t *
ngx_http_cms_redis_acquire(void)
{
    ngx_int_t                   rc;
    ngx_uint_t                  i;
    ngx_http_cms_redis_slot_t  *s;

    for (i = 0; i < ngx_http_cms_redis_pool.conf->max; i++) {
        s = &ngx_http_cms_redis_pool.slots[i];

        if (s->state != NGX_HTTP_CMS_REDIS_IDLE) {
            continue;
        }

        /* without a system call where nginx can tell (_module.h) */
        rc = ngx_http_cms_idle_sound(s->peer.connection);

        if (rc == NGX_DECLINED) {
            rc = ngx_http_cms_redis_peek(s->peer.connection);
        }

        if (rc != NGX_OK) {
            ngx_log_error(NGX_LOG_WARN, &s->log, 0,
                          "cms: redis closed an idle connection");
            ngx_http_cms_redis_close(s);
            continue;
        }

        return s;
    }

    return NULL;
}


static ngx_uint_t
ngx_http_cms_redis_live(void)
{
    ngx_uint_t  i;

    for (i = 0; i < ngx_http_cms_redis_pool.conf->max; i++) {
        if (ngx_http_cms_redis_pool.slots[i].state
            != NGX_HTTP_CMS_REDIS_DOWN)
        {
            return 1;
        }
    }

    return 0;
}


static ngx_int_t
ngx_http_cms_redis_start(ngx_http_cms_redis_slot_t *s,
    ngx_http_cms_redis_op_t *op)
{
    ngx_connection_t  *c;

    c = s->peer.connection;

    s->op = op;
    op->slot = s;
    s->pos = op->cmds->out.data;
    s->last = s->pos + op->cmds->out.len;
    s->expect = op->cmds->n;
    s->got = 0;
    s->state = NGX_HTTP_CMS_REDIS_BUSY;
    s->log.action = "talking to redis";

    c->idle = 0;
    c->read->handler = ngx_http_cms_redis_read_handler;
    c->write->handler = ngx_http_cms_redis_write_handler;

    ngx_add_timer(&s->timer, ngx_http_cms_redis_pool.conf->timeout);

    if (ngx_http_cms_redis_send(s) == NGX_ERROR) {
        op->slot = NULL;
        s->op = NULL;
        return NGX_ERROR;
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_redis_send(ngx_http_cms_redis_slot_t *s)
{
    ssize_t            n;
    ngx_connection_t  *c;

    c = s->peer.connection;

    while (s->pos < s->last) {
        n = c->send(c, s->pos, s->last - s->pos);

        if (n == NGX_AGAIN) {
            return NGX_AGAIN;
        }

        if (n == NGX_ERROR) {
            return NGX_ERROR;
        }

        s->pos += n;
    }

    return NGX_OK;
}


void
ngx_http_cms_redis_write_handler(ngx_event_t *ev)
{
    ngx_connection_t           *c;
    ngx_http_cms_redis_slot_t  *s;

    c = ev->data;
    s = c->data;

    if (s->state == NGX_HTTP_CMS_REDIS_CONNECTING) {
        ngx_http_cms_redis_tcp_done(s);
        return;
    }

    if (s->state == NGX_HTTP_CMS_REDIS_BUSY
        && ngx_http_cms_redis_send(s) == NGX_ERROR)
    {
        ngx_log_error(NGX_LOG_ERR, &s->log, 0, "cms: sending to redis failed");
        ngx_http_cms_redis_failed(s, 0);
    }
}


void
ngx_http_cms_redis_read_handler(ngx_event_t *ev)
{
    ngx_int_t                   rc;
    ngx_connection_t           *c;
    ngx_http_cms_redis_slot_t  *s;

    c = ev->data;
    s = c->data;

    if (s->state == NGX_HTTP_CMS_REDIS_CONNECTING) {
        /* a refused connect shows up as readable too */
        ngx_http_cms_redis_write_handler(c->write);
        return;
    }

    if (s->state != NGX_HTTP_CMS_REDIS_BUSY) {
        return;
    }

    rc = ngx_http_cms_redis_recv(s);

    if (rc == NGX_ERROR) {
        ngx_http_cms_redis_failed(s, 0);

    } else if (rc == NGX_OK) {
        ngx_http_cms_redis_finished(s);
    }
}


/* reads until EAGAIN; NGX_OK once every expected reply is parsed */
/* long: read, feed, parse, then the check that nothing is left over */
static ngx_int_t
ngx_http_cms_redis_recv(ngx_http_cms_redis_slot_t *s)
{
    void              *reply;
    ssize_t            n;
    ngx_connection_t  *c;
    u_char             buf[4096];

    c = s->peer.connection;

    for ( ;; ) {
        n = c->recv(c, buf, sizeof(buf));

        if (n == NGX_AGAIN) {
            return NGX_AGAIN;
        }

        if (n == 0 || n == NGX_ERROR) {
            ngx_log_error(NGX_LOG_ERR, &s->log, 0,
                          "cms: redis closed the connection");
            return NGX_ERROR;
        }

        if (redisReaderFeed(s->reader, (char *) buf, n) != REDIS_OK) {
            return NGX_ERROR;
        }

        while (s->got < s->expect) {
            if (redisReaderGetReply(s->reader, &reply) != REDIS_OK) {
                ngx_log_error(NGX_LOG_ERR, &s->log, 0,
                              "cms: bad reply from redis: %s",
                              s->reader->errstr);
                return NGX_ERROR;
            }

            if (reply == NULL) {
                break;
            }

            s->replies[s->got++] = reply;
        }

        if (s->got == s->expect) {
            /* anything more is a reply nobody asked for: out of step */
            if (s->reader->pos < s->reader->len) {
                ngx_log_error(NGX_LOG_ERR, &s->log, 0,
                              "cms: redis sent more than was asked");
                return NGX_ERROR;
            }

            return NGX_OK;
        }
    }
}


static void
ngx_http_cms_redis_finished(ngx_http_cms_redis_slot_t *s)
{
    ngx_uint_t                  n;
    ngx_http_cms_redis_op_t    *op;
    redisReply                 *replies[NGX_HTTP_CMS_REDIS_MAX_PIPELINE];

    if (s->authing) {
        ngx_http_cms_redis_authed(s);
        return;
    }

    if (s->timer.timer_set) {
        ngx_del_timer(&s->timer);
    }

    op = s->op;
    s->op = NULL;
    n = s->got;
    ngx_memcpy(replies, s->replies, n * sizeof(redisReply *));
    s->got = 0;

    if (op != NULL) {
        op->slot = NULL;
    }

    ngx_http_cms_redis_idle(s);

    if (op != NULL) {
        ngx_http_cms_redis_deliver(op, replies, n);
    }

    while (n) {
        freeReplyObject(replies[--n]);
    }

    ngx_http_cms_redis_kick();
}


/* as the PostgreSQL pool does: the kick that follows closes it when exiting */
void
ngx_http_cms_redis_idle(ngx_http_cms_redis_slot_t *s)
{
    ngx_connection_t  *c;

    c = s->peer.connection;

    s->state = NGX_HTTP_CMS_REDIS_IDLE;
    s->log.action = "keeping a redis connection";
    c->idle = 1;
    c->read->handler = ngx_http_cms_redis_idle_handler;
    c->write->handler = ngx_http_cms_redis_idle_handler;
}


static void
ngx_http_cms_redis_idle_handler(ngx_event_t *ev)
{
    ngx_connection_t           *c;
    ngx_http_cms_redis_slot_t  *s;

    c = ev->data;
    s = c->data;

    if (c->close) {
        ngx_http_cms_redis_close(s);
        return;
    }

    if (!ev->write && ngx_http_cms_redis_peek(c) != NGX_OK) {
        ngx_log_error(NGX_LOG_WARN, &s->log, 0,
                      "cms: redis closed an idle connection");
        ngx_http_cms_redis_close(s);
    }
}


static void
ngx_http_cms_redis_timer_handler(ngx_event_t *ev)
{
    ngx_http_cms_redis_slot_t *s = ev->data;

    ngx_log_error(NGX_LOG_ERR, &s->log, 0, "cms: redis timed out");
    ngx_http_cms_metric(NGX_HTTP_CMS_M_REDIS_TIMEOUTS);

    ngx_http_cms_redis_failed(s, s->state == NGX_HTTP_CMS_REDIS_CONNECTING
                                 || s->authing);
}


void
ngx_http_cms_redis_failed(ngx_http_cms_redis_slot_t *s, ngx_uint_t connect)
{
    ngx_http_cms_redis_pool_t  *pool;
    ngx_http_cms_redis_op_t    *op;

    pool = &ngx_http_cms_redis_pool;
    op = NULL;

    ngx_http_cms_metric(connect ? NGX_HTTP_CMS_M_REDIS_CONNECT_FAILURES
                                : NGX_HTTP_CMS_M_REDIS_ERRORS);

    if (connect) {
        pool->backoff = ngx_min(ngx_max(pool->backoff * 2,
                                        NGX_HTTP_CMS_REDIS_BACKOFF_MIN),
                                NGX_HTTP_CMS_REDIS_BACKOFF_MAX);
        pool->retry_at = ngx_current_msec + pool->backoff;
    }

    if (s == NULL) {
        return;
    }

    op = s->op;
    s->op = NULL;

    if (op != NULL) {
        op->slot = NULL;
    }

    ngx_http_cms_redis_close(s);

    if (op != NULL) {
        ngx_http_cms_redis_deliver(op, NULL, 0);
    }

    ngx_http_cms_redis_kick();
}


static ngx_http_cms_redis_op_t *
ngx_http_cms_redis_dequeue(void)
{
    ngx_queue_t              *head;
    ngx_http_cms_redis_op_t  *op;

    head = ngx_queue_head(&ngx_http_cms_redis_pool.waiting);
    op = ngx_queue_data(head, ngx_http_cms_redis_op_t, queue);

    ngx_queue_remove(head);
    ngx_http_cms_redis_pool.nwaiting--;
    op->queued = 0;

    if (op->wait.timer_set) {
        ngx_del_timer(&op->wait);
    }

    return op;
}


/* long: the scheduler, as ngx_http_cms_pg_kick() */
void
ngx_http_cms_redis_kick(void)
{
    ngx_uint_t                  i, connecting;
    ngx_http_cms_redis_op_t    *op;
    ngx_http_cms_redis_pool_t  *pool;
    ngx_http_cms_redis_slot_t  *s;

    pool = &ngx_http_cms_redis_pool;

    while (!ngx_queue_empty(&pool->waiting)) {
        s = ngx_http_cms_redis_acquire();

        if (s == NULL) {
            break;
        }

        op = ngx_http_cms_redis_dequeue();

        if (ngx_http_cms_redis_start(s, op) != NGX_OK) {
            ngx_http_cms_redis_close(s);
            ngx_http_cms_redis_deliver(op, NULL, 0);
        }
    }

    if (ngx_queue_empty(&pool->waiting)) {

        /* an exiting worker keeps connections only for waiters */
        for (i = 0; ngx_http_cms_quitting() && i < pool->conf->max; i++) {
            if (pool->slots[i].state == NGX_HTTP_CMS_REDIS_IDLE) {
                ngx_http_cms_redis_close(&pool->slots[i]);
            }
        }

        return;
    }

    connecting = 0;

    for (i = 0; i < pool->conf->max; i++) {
        connecting += (pool->slots[i].state == NGX_HTTP_CMS_REDIS_CONNECTING);
    }

    for (i = 0; i < pool->conf->max
                && connecting < pool->nwaiting
                && ngx_current_msec >= pool->retry_at; i++)
    {
        if (pool->slots[i].state == NGX_HTTP_CMS_REDIS_DOWN
            && ngx_http_cms_redis_connect(&pool->slots[i]) == NGX_OK)
        {
            connecting++;
        }
    }

    if (ngx_http_cms_redis_live()) {
        return;
    }

    while (!ngx_queue_empty(&pool->waiting)) {
        ngx_http_cms_redis_deliver(ngx_http_cms_redis_dequeue(), NULL, 0);
    }
}


void
ngx_http_cms_redis_free_replies(ngx_http_cms_redis_slot_t *s)
{
    while (s->got) {
        freeReplyObject(s->replies[--s->got]);
    }
}




/* what a connection's log lines end with: the action and the server */
static u_char *
ngx_http_cms_redis_log_context(ngx_log_t *log, u_char *buf, size_t len)
{
    u_char                     *p;
    ngx_http_cms_redis_slot_t  *s;

    s = log->data;
    p = buf;

    if (log->action) {
        p = ngx_snprintf(p, len, " while %s", log->action);
    }

    if (s->peer.name != NULL) {
        p = ngx_snprintf(p, len - (p - buf), ", redis: %V", s->peer.name);
    }

    return p;
}
