
/*
 * The per-worker PostgreSQL pool.
 *
 * Each slot owns a PGconn whose socket is wrapped in an nginx connection.
 * nginx's epoll is edge-triggered and libpq does not always read or write
 * what an edge announced (ASYNC-NOTES.md), so before waiting for an edge
 * every step asks poll(2) with a zero timeout whether the socket is already
 * ready, and goes on at once if it is.  Over TLS, OpenSSL may hold
 * decrypted bytes with the socket empty: the same check counts them
 * (ngx_http_cms_pg_ready()).
 *
 * A query belongs to a request but lives in the slot's care: a request-pool
 * cleanup detaches it, after which the slot drains the result (bounded by
 * the query timer) and goes back to the pool, or is closed.
 *
 * Connections are in libpq's pipeline mode: a statement goes as Parse (at
 * its first use on the connection), Bind, Execute and Sync in one write,
 * its own transaction.  With "depth=" above 1, a statement that finds no
 * idle connection is sent behind those in flight on the least busy one
 * (up to depth of them) instead of waiting in the pool's queue: the
 * server runs them one after the other without waiting for a round trip
 * in between, and their results come back in order.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <poll.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_pg_int.h"
#include "ngx_http_cms_metrics.h"
#include "cms_validate.h"


static ngx_int_t ngx_http_cms_pg_start(ngx_http_cms_pg_slot_t *slot,
    ngx_http_cms_pg_query_t *q);
static ngx_int_t ngx_http_cms_pg_send(ngx_http_cms_pg_slot_t *slot);
static ngx_int_t ngx_http_cms_pg_sent(ngx_http_cms_pg_slot_t *slot);
static ngx_int_t ngx_http_cms_pg_io(ngx_http_cms_pg_slot_t *slot);
static void ngx_http_cms_pg_keep(ngx_http_cms_pg_slot_t *slot, PGresult *res);
static ngx_http_cms_pg_query_t *ngx_http_cms_pg_pop(
    ngx_http_cms_pg_slot_t *slot, ngx_uint_t *unparsed);
static void ngx_http_cms_pg_finished(ngx_http_cms_pg_slot_t *slot);
static void ngx_http_cms_pg_drop(ngx_http_cms_pg_slot_t *slot);
static ngx_uint_t ngx_http_cms_pg_hand_out(ngx_http_cms_pg_pool_t *pg);
static void ngx_http_cms_pg_wait_handler(ngx_event_t *ev);
static void ngx_http_cms_pg_kick(ngx_http_cms_pg_pool_t *pg);
static void ngx_http_cms_pg_deliver(ngx_http_cms_pg_query_t *q,
    PGresult *res);
static void ngx_http_cms_pg_detach(void *data);
static ngx_http_cms_pg_query_t *ngx_http_cms_pg_prepare(ngx_pool_t *pool,
    ngx_log_t *log, ngx_http_cms_pg_stmt_t *stmt, ngx_str_t *args,
    ngx_uint_t nargs);
static ngx_int_t ngx_http_cms_pg_submit_to(ngx_http_cms_pg_query_t *q);


ngx_http_cms_pg_pool_t   ngx_http_cms_pg_pool;
ngx_http_cms_pg_pool_t  *ngx_http_cms_pg_replicas;
ngx_uint_t               ngx_http_cms_pg_nreplicas;

/* statements are numbered once for every pool: their id names them */
static ngx_uint_t        ngx_http_cms_pg_nstmts;


/* the request side */

/* long: the NUL check, the query with its cleanup, its route */
ngx_int_t
ngx_http_cms_pg_query(ngx_http_request_t *r, ngx_http_cms_pg_stmt_t *stmt,
    ngx_str_t *args, ngx_uint_t nargs, ngx_http_cms_pg_done_pt done)
{
    ngx_int_t                 rc;
    ngx_uint_t                i;
    ngx_pool_cleanup_t       *cln;
    ngx_http_cms_pg_query_t  *q;

    /*
     * libpq takes C strings: a NUL would cut a value short of what was
     * checked.  Input readers refuse NUL first; this is the backstop.
     */
    for (i = 0; i < nargs; i++) {
        if (args[i].len && ngx_strlchr(args[i].data,
                                       args[i].data + args[i].len, '\0'))
        {
            ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                          "cms: parameter $%ui of a statement holds a NUL "
                          "byte (an input check is missing)", i + 1);
            return NGX_HTTP_BAD_REQUEST;
        }
    }

    q = ngx_http_cms_pg_prepare(r->pool, r->connection->log, stmt, args,
                                nargs);
    if (q == NULL) {
        return NGX_ERROR;
    }

    cln = ngx_pool_cleanup_add(r->pool, 0);
    if (cln == NULL) {
        return NGX_ERROR;
    }

    cln->handler = ngx_http_cms_pg_detach;
    cln->data = q;

    q->request = r;
    q->done = done;

    /* notice a client that leaves while we wait */
    r->read_event_handler = ngx_http_test_reading;

    rc = ngx_http_cms_pg_route(q);
    if (rc != NGX_OK) {
        return rc;      /* NGX_DONE: submitted once routed; NGX_ERROR */
    }

    if (ngx_http_cms_pg_submit(q) != NGX_OK) {
        return NGX_HTTP_SERVICE_UNAVAILABLE;
    }

    return NGX_DONE;
}


ngx_int_t
ngx_http_cms_pg_job(ngx_http_cms_pg_stmt_t *stmt, ngx_str_t *args,
    ngx_uint_t nargs, ngx_http_cms_pg_job_pt done, void *data)
{
    return ngx_http_cms_pg_job_args(&ngx_http_cms_pg_pool, stmt, args, nargs,
                                    done, data);
}


/* a job on a pool of one's choosing (a replica's check) */
ngx_int_t
ngx_http_cms_pg_job_args(ngx_http_cms_pg_pool_t *pg,
    ngx_http_cms_pg_stmt_t *stmt, ngx_str_t *args, ngx_uint_t nargs,
    ngx_http_cms_pg_job_pt done, void *data)
{
    ngx_pool_t               *pool;
    ngx_http_cms_pg_query_t  *q;

    pool = ngx_create_pool(1024, ngx_cycle->log);
    if (pool == NULL) {
        return NGX_ERROR;
    }

    q = ngx_http_cms_pg_prepare(pool, ngx_cycle->log, stmt, args, nargs);

    if (q == NULL) {
        ngx_destroy_pool(pool);
        return NGX_ERROR;
    }

    q->pool = pool;
    q->pg = pg;
    q->job_done = done;
    q->job_data = data;

    if (ngx_http_cms_pg_submit(q) != NGX_OK) {
        ngx_destroy_pool(pool);
        return NGX_ERROR;
    }

    return NGX_OK;
}


/* a query with its parameters copied (NUL-terminated) into "pool" */
/* long: each parameter copied NUL-terminated, one block */
static ngx_http_cms_pg_query_t *
ngx_http_cms_pg_prepare(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_cms_pg_stmt_t *stmt, ngx_str_t *args, ngx_uint_t nargs)
{
    char                     *v;
    ngx_uint_t                i;
    ngx_http_cms_pg_query_t  *q;

    if (ngx_http_cms_pg_pool.conf == NULL) {
        ngx_log_error(NGX_LOG_ERR, log, 0,
                      "cms: \"cms_postgres\" is not configured");
        return NULL;
    }

    if (stmt->id == 0) {
        if (ngx_http_cms_pg_nstmts + 1 >= NGX_HTTP_CMS_PG_MAX_STMTS) {
            ngx_log_error(NGX_LOG_ALERT, log, 0, "cms: too many statements");
            return NULL;
        }

        stmt->id = ++ngx_http_cms_pg_nstmts;
        ngx_sprintf((u_char *) stmt->name, "cms_%ui%Z", stmt->id);
    }

    q = ngx_pcalloc(pool, sizeof(ngx_http_cms_pg_query_t));
    if (q == NULL) {
        return NULL;
    }

    q->values = ngx_pcalloc(pool, (nargs + 1) * sizeof(char *));
    if (q->values == NULL) {
        return NULL;
    }

    for (i = 0; i < nargs; i++) {
        if (args[i].data == NULL) {
            continue;
        }

        v = ngx_pnalloc(pool, args[i].len + 1);

        if (v == NULL
            || cms_cstr(v, args[i].len + 1, (const char *) args[i].data,
                        args[i].len)
               != 0)
        {
            return NULL;
        }

        q->values[i] = v;
    }

    q->stmt = stmt;
    q->log = log;

    return q;
}


/*
 * Gives "q" a connection now, or queues it.  NGX_OK, or NGX_DECLINED when
 * no connection can be had (logged).  A replica's read that cannot be
 * had goes to the primary.
 */
ngx_int_t
ngx_http_cms_pg_submit(ngx_http_cms_pg_query_t *q)
{
    if (ngx_http_cms_pg_submit_to(q) == NGX_OK) {
        return NGX_OK;
    }

    if (!ngx_http_cms_pg_fall_back(q, NULL)) {
        return NGX_DECLINED;
    }

    return ngx_http_cms_pg_submit_to(q);
}


/* long: an idle slot, a new connection, or the queue */
static ngx_int_t
ngx_http_cms_pg_submit_to(ngx_http_cms_pg_query_t *q)
{
    ngx_uint_t               i;
    ngx_http_cms_pg_pool_t  *pool;
    ngx_http_cms_pg_slot_t  *slot;

    pool = q->pg;

    slot = ngx_http_cms_pg_acquire(pool);

    if (slot == NULL && ngx_current_msec >= pool->retry_at) {
        for (i = 0; i < pool->conf->max; i++) {
            if (pool->slots[i].state == NGX_HTTP_CMS_PG_DOWN) {
                (void) ngx_http_cms_pg_connect(&pool->slots[i]);
                break;
            }
        }

        /* a connect may complete at once */
        slot = ngx_http_cms_pg_acquire(pool);
    }

    if (slot == NULL) {
        slot = ngx_http_cms_pg_pipeline(pool);
    }

    if (slot != NULL) {
        if (ngx_http_cms_pg_start(slot, q) == NGX_OK) {
            return NGX_OK;
        }

        ngx_http_cms_pg_drop(slot);
        return NGX_DECLINED;
    }

    if (!ngx_http_cms_pg_live(pool)) {
        ngx_http_cms_metric(NGX_HTTP_CMS_M_PG_REJECTED);
        ngx_log_error(NGX_LOG_ERR, q->log, 0,
                      "cms: no postgres connection can be had");
        return NGX_DECLINED;
    }

    if (pool->nwaiting >= pool->conf->queue) {
        ngx_http_cms_metric(NGX_HTTP_CMS_M_PG_REJECTED);
        ngx_log_error(NGX_LOG_WARN, q->log, 0, "cms: postgres queue is full");
        return NGX_DECLINED;
    }

    q->wait.handler = ngx_http_cms_pg_wait_handler;
    q->wait.data = q;
    q->wait.log = q->log;
    ngx_add_timer(&q->wait, pool->conf->queue_timeout);

    ngx_queue_insert_tail(&pool->waiting, &q->queue);
    pool->nwaiting++;
    q->queued = 1;
    ngx_http_cms_metric(NGX_HTTP_CMS_M_PG_WAITS);

    return NGX_OK;
}


/* a request-pool cleanup: the request is gone, the slot keeps draining */
static void
ngx_http_cms_pg_detach(void *data)
{
    ngx_http_cms_pg_query_t *q = data;

    ngx_uint_t               i;
    ngx_http_cms_pg_sent_t  *s;
    ngx_http_cms_pg_slot_t  *slot;

    if (q->queued) {
        ngx_queue_remove(&q->queue);
        q->pg->nwaiting--;
        q->queued = 0;
    }

    if (q->wait.timer_set) {
        ngx_del_timer(&q->wait);
    }

    if (q->slot != NULL) {
        slot = q->slot;

        for (i = 0; i < slot->nsent; i++) {
            s = &slot->sent[(slot->first + i) % slot->pg->conf->depth];

            if (s->query == q) {
                s->query = NULL;
            }
        }

        q->slot = NULL;
    }
}


static void
ngx_http_cms_pg_wait_handler(ngx_event_t *ev)
{
    ngx_http_cms_pg_query_t *q = ev->data;

    ngx_log_error(NGX_LOG_ERR, ev->log, 0,
                  "cms: timed out waiting for a postgres connection");
    ngx_http_cms_metric(NGX_HTTP_CMS_M_PG_WAIT_TIMEOUTS);

    ngx_queue_remove(&q->queue);
    q->pg->nwaiting--;
    q->queued = 0;

    ngx_http_cms_pg_deliver(q, NULL);
}


/* calls the continuation and finishes the request with what it returns */
static void
ngx_http_cms_pg_deliver(ngx_http_cms_pg_query_t *q, PGresult *res)
{
    ngx_int_t            rc;
    ngx_connection_t    *c;
    ngx_http_request_t  *r;
    ngx_http_cms_ctx_t  *ctx;

    if (ngx_http_cms_pg_fall_back(q, res)
        && ngx_http_cms_pg_submit(q) == NGX_OK)
    {
        /* a replica gave no answer: the primary was asked instead */
        return;
    }

    if (q->request == NULL) {
        /* a job: its pool (and q with it) goes once it has the answer */
        q->job_done(q->job_data, res);
        ngx_destroy_pool(q->pool);
        return;
    }

    r = q->request;
    c = r->connection;
    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    /* q lives in r->pool: it must not be touched after finish() */
    rc = q->done(r, ctx, res);

    ctx->finish(r, rc);
    ngx_http_run_posted_requests(c);
}


/*
 * Sends a query behind those in flight on the slot: its statement's Parse
 * first at its first use on this connection, then Bind, Execute and Sync.
 * NGX_OK, or NGX_ERROR (logged; the caller answers q and drops the slot).
 */
/* long: the messages, the query's place in the ring, and its removal */
static ngx_int_t
ngx_http_cms_pg_start(ngx_http_cms_pg_slot_t *slot,
    ngx_http_cms_pg_query_t *q)
{
    int                      ok;
    ngx_uint_t               parse, unnamed;
    ngx_http_cms_pg_sent_t  *s;
    ngx_http_cms_pg_stmt_t  *stmt;

    stmt = q->stmt;
    unnamed = stmt->replan || q->reparse;
    parse = !unnamed && !slot->prepared[stmt->id];

    ok = !parse || PQsendPrepare(slot->conn, stmt->name, stmt->sql,
                                 stmt->nparams, NULL);

    /* a replanned statement is planned for its values at each call */
    ok = ok && (unnamed
                ? PQsendQueryParams(slot->conn, stmt->sql, stmt->nparams,
                                    NULL, q->values, NULL, NULL, 0)
                : PQsendQueryPrepared(slot->conn, stmt->name, stmt->nparams,
                                      q->values, NULL, NULL, 0));

    if (!ok || !PQpipelineSync(slot->conn)) {
        ngx_log_error(NGX_LOG_ERR, &slot->log, 0,
                      "cms: sending a postgres query failed: %s",
                      ngx_http_cms_pg_oneline(PQerrorMessage(slot->conn)));
        return NGX_ERROR;
    }

    /* the statements sent after it find it prepared (if its Parse fails,
       they are sent again unnamed: ngx_http_cms_pg_keep()) */
    if (parse) {
        slot->prepared[stmt->id] = 1;
    }

    s = &slot->sent[(slot->first + slot->nsent++) % slot->pg->conf->depth];
    s->query = q;
    s->stmt = stmt;
    s->sent = ngx_current_msec;
    s->parse = parse;
    s->unparsed = 0;
    q->slot = slot;

    if (slot->nsent == 1) {
        slot->log.action = "running a postgres query";
        slot->state = NGX_HTTP_CMS_PG_QUERYING;
        slot->c->idle = 0;
        slot->c->read->handler = ngx_http_cms_pg_event_handler;
        slot->c->write->handler = ngx_http_cms_pg_event_handler;
    }

    if (ngx_http_cms_pg_sent(slot) != NGX_OK) {
        /* the caller answers q, and drops the slot with the others */
        slot->nsent--;
        s->query = NULL;
        q->slot = NULL;
        return NGX_ERROR;
    }

    return NGX_OK;
}


/*
 * A statement was handed to libpq: the query timer starts if it is the
 * only one in flight, and what libpq holds is flushed.  PQflush() reads
 * when the socket is full (so that a server writing back cannot deadlock
 * it): what it read sits in libpq or OpenSSL, and the edge that announced
 * it may be spent.  Then the result is taken from a posted read event,
 * never from here: the request's handler has not returned NGX_DONE yet.
 * NGX_OK or NGX_ERROR (logged).
 */
static ngx_int_t
ngx_http_cms_pg_sent(ngx_http_cms_pg_slot_t *slot)
{
    if (slot->nsent == 1) {
        if (slot->timer.timer_set) {
            ngx_del_timer(&slot->timer);
        }

        ngx_add_timer(&slot->timer, slot->pg->conf->query_timeout);
    }

    if (ngx_http_cms_pg_send(slot) == NGX_ERROR) {
        return NGX_ERROR;
    }

    if (!PQisBusy(slot->conn)
        || ngx_http_cms_pg_ready(slot, POLLIN) == NGX_OK)
    {
        ngx_post_event(slot->c->read, &ngx_posted_events);
    }

    return NGX_OK;
}


/* flushes what libpq holds; NGX_AGAIN means a write event will come */
static ngx_int_t
ngx_http_cms_pg_send(ngx_http_cms_pg_slot_t *slot)
{
    int  rc;

    rc = PQflush(slot->conn);

    if (rc < 0) {
        ngx_log_error(NGX_LOG_ERR, &slot->log, 0, "cms: PQflush() failed: %s",
                      ngx_http_cms_pg_oneline(PQerrorMessage(slot->conn)));
        return NGX_ERROR;
    }

    return rc == 0 ? NGX_OK : NGX_AGAIN;
}


void
ngx_http_cms_pg_event_handler(ngx_event_t *ev)
{
    ngx_int_t                rc;
    ngx_connection_t        *c;
    ngx_http_cms_pg_slot_t  *slot;

    c = ev->data;
    slot = c->data;

    switch (slot->state) {

    case NGX_HTTP_CMS_PG_CONNECTING:
        rc = ngx_http_cms_pg_connect_step(slot);

        if (rc == NGX_ERROR) {
            ngx_http_cms_pg_failed(slot->pg, slot, 1);
            return;
        }

        if (rc == NGX_OK) {
            ngx_http_cms_pg_kick(slot->pg);
        }

        return;

    case NGX_HTTP_CMS_PG_QUERYING:
        if (ngx_http_cms_pg_io(slot) == NGX_ERROR) {
            ngx_http_cms_pg_failed(slot->pg, slot, 0);
        }

        return;

    default:
        /* idle slots have their own handler; a stale event is harmless */
        return;
    }
}


/*
 * Sends what is pending, then takes the results libpq holds and reads
 * until the oldest statement's are complete (its Sync's result) or the
 * socket has nothing more.  One statement is answered a call: its
 * continuation may send on this slot, or drop it; the next one's results
 * are taken from a posted read event.  Returns NGX_OK, NGX_AGAIN or
 * NGX_ERROR.
 */
/* long: libpq's results, then its reads, with the lost connection's end */
static ngx_int_t
ngx_http_cms_pg_io(ngx_http_cms_pg_slot_t *slot)
{
    PGresult    *res;
    ngx_uint_t   read, ended;

    if (ngx_http_cms_pg_send(slot) == NGX_ERROR) {
        return NGX_ERROR;
    }

    ended = 0;

    for (read = 0; /* void */; read = 1) {

        while (!PQisBusy(slot->conn)) {
            res = PQgetResult(slot->conn);

            if (res == NULL) {
                /*
                 * The end of one message's results: the next ones, or
                 * the Sync's, follow.  Twice in a row, libpq has nothing
                 * more in flight (the connection was lost): no Sync's
                 * result will come.
                 */
                if (ended++) {
                    ngx_log_error(NGX_LOG_ERR, &slot->log, 0,
                                  "cms: postgres connection lost: %s",
                                  ngx_http_cms_pg_oneline(
                                      PQerrorMessage(slot->conn)));
                    return NGX_ERROR;
                }

                continue;
            }

            ended = 0;

            if (PQresultStatus(res) != PGRES_PIPELINE_SYNC) {
                ngx_http_cms_pg_keep(slot, res);
                continue;
            }

            PQclear(res);
            ngx_http_cms_pg_finished(slot);

            if (slot->state == NGX_HTTP_CMS_PG_QUERYING) {
                ngx_post_event(slot->c->read, &ngx_posted_events);
            }

            return NGX_OK;
        }

        /* bytes left in the kernel or in OpenSSL: no new edge would come */
        if (read && ngx_http_cms_pg_ready(slot, POLLIN) == NGX_DECLINED) {
            return NGX_AGAIN;
        }

        if (!PQconsumeInput(slot->conn)) {
            ngx_log_error(NGX_LOG_ERR, &slot->log, 0,
                          "cms: PQconsumeInput() failed: %s",
                          ngx_http_cms_pg_oneline(PQerrorMessage(slot->conn)));
            return NGX_ERROR;
        }
    }
}


/* one result of the oldest statement: its Parse's, or the first kept */
static void
ngx_http_cms_pg_keep(ngx_http_cms_pg_slot_t *slot, PGresult *res)
{
    ngx_uint_t               i;
    ngx_http_cms_pg_sent_t  *s, *next;

    s = &slot->sent[slot->first];

    if (s->parse) {
        s->parse = 0;

        if (PQresultStatus(res) == PGRES_COMMAND_OK) {
            PQclear(res);
            return;
        }

        /*
         * Answered like a failed query; the next use parses it again.
         * Those sent behind it without their own Parse cannot run: each
         * is sent again when its error comes (ngx_http_cms_pg_finished).
         */
        slot->prepared[s->stmt->id] = 0;

        for (i = 1; i < slot->nsent; i++) {
            next = &slot->sent[(slot->first + i) % slot->pg->conf->depth];

            if (next->stmt == s->stmt && !next->parse) {
                next->unparsed = 1;
            }
        }
    }

    /* keep the first result, or the first error */
    if (slot->result == NULL
        || (PQresultStatus(res) == PGRES_FATAL_ERROR
            && PQresultStatus(slot->result) != PGRES_FATAL_ERROR))
    {
        PQclear(slot->result);
        slot->result = res;

    } else {
        PQclear(res);
    }
}


/*
 * Takes the oldest statement off the ring: its query (NULL when detached)
 * and whether it went without a Parse behind one that failed.  The query
 * timer goes to the next one, its time counted from when it was sent.
 */
static ngx_http_cms_pg_query_t *
ngx_http_cms_pg_pop(ngx_http_cms_pg_slot_t *slot, ngx_uint_t *unparsed)
{
    ngx_msec_t                timeout, elapsed;
    ngx_http_cms_pg_sent_t   *s;
    ngx_http_cms_pg_query_t  *q;

    s = &slot->sent[slot->first];
    q = s->query;
    *unparsed = s->unparsed;
    slot->first = (slot->first + 1) % slot->pg->conf->depth;
    slot->nsent--;

    if (q != NULL) {
        q->slot = NULL;
    }

    if (slot->timer.timer_set) {
        ngx_del_timer(&slot->timer);
    }

    if (slot->nsent) {
        s = &slot->sent[slot->first];
        timeout = slot->pg->conf->query_timeout;
        elapsed = ngx_current_msec - s->sent;
        ngx_add_timer(&slot->timer, elapsed < timeout ? timeout - elapsed : 1);
    }

    return q;
}


/*
 * The oldest statement is over: a retry on the same connection, else the
 * slot idle once nothing is in flight, and the answer.
 */
/* long: the verdict's four ways, each with what it does to the slot */
static void
ngx_http_cms_pg_finished(ngx_http_cms_pg_slot_t *slot)
{
    PGresult                 *res;
    ngx_int_t                 rc;
    ngx_uint_t                unparsed;
    ngx_http_cms_pg_query_t  *q;

    res = slot->result;
    slot->result = NULL;

    q = ngx_http_cms_pg_pop(slot, &unparsed);

    if (unparsed) {
        /* it never ran (its statement's Parse failed before it): once
           more, unnamed, parsed with it (none other can fail for it) */
        rc = (q != NULL && !q->reparse) ? NGX_AGAIN : NGX_DECLINED;

    } else {
        rc = ngx_http_cms_pg_verdict(slot, q, res);
    }

    if (rc == NGX_ABORT || PQstatus(slot->conn) != CONNECTION_OK) {
        ngx_http_cms_pg_drop(slot);

    } else if (rc == NGX_AGAIN) {
        /* rolled back by the server, or never run: once more, here */
        PQclear(res);
        res = NULL;
        q->reparse |= unparsed;
        q->retried |= !unparsed;

        if (ngx_http_cms_pg_start(slot, q) == NGX_OK) {
            return;
        }

        ngx_http_cms_pg_drop(slot);
        rc = NGX_DECLINED;

    } else if (slot->nsent == 0) {
        if (PQtransactionStatus(slot->conn) == PQTRANS_IDLE) {
            ngx_http_cms_pg_idle(slot);

        } else {
            ngx_log_error(NGX_LOG_WARN, &slot->log, 0,
                          "cms: postgres connection left a transaction "
                          "open");
            ngx_http_cms_pg_close(slot);
        }
    }

    if (rc != NGX_OK) {
        /* answered as no answer: 503 with Retry-After, never a 500 */
        PQclear(res);
        res = NULL;
    }

    if (q != NULL) {
        ngx_http_cms_pg_deliver(q, res);
    }

    PQclear(res);

    ngx_http_cms_pg_kick(slot->pg);
}


/*
 * Closes a slot and answers each statement in flight on it with no
 * answer; the continuations run once the slot is down.
 */
static void
ngx_http_cms_pg_drop(ngx_http_cms_pg_slot_t *slot)
{
    ngx_uint_t                i, n;
    ngx_http_cms_pg_query_t  *q, *lost[NGX_HTTP_CMS_PG_MAX_DEPTH];

    n = 0;

    for (i = 0; i < slot->nsent; i++) {
        q = slot->sent[(slot->first + i) % slot->pg->conf->depth].query;

        if (q != NULL) {
            lost[n++] = q;
        }
    }

    ngx_http_cms_pg_close(slot);

    for (i = 0; i < n; i++) {
        ngx_http_cms_pg_deliver(lost[i], NULL);
    }
}


void
ngx_http_cms_pg_timer_handler(ngx_event_t *ev)
{
    ngx_http_cms_pg_slot_t *slot = ev->data;

    ngx_log_error(NGX_LOG_ERR, &slot->log, 0, "cms: postgres timed out");
    ngx_http_cms_metric(NGX_HTTP_CMS_M_PG_TIMEOUTS);

    /* PQcancel() would block: close and let the server's timeout stop it */
    ngx_http_cms_pg_failed(slot->pg, slot,
                           slot->state == NGX_HTTP_CMS_PG_CONNECTING);
}


/*
 * From an event: the slot (if any) failed.  Its requests get no answer,
 * a connect failure delays the next attempt, and if nothing is left
 * alive the waiters are answered at once.
 */
void
ngx_http_cms_pg_failed(ngx_http_cms_pg_pool_t *pool,
    ngx_http_cms_pg_slot_t *slot, ngx_uint_t connect)
{
    ngx_http_cms_metric(connect ? NGX_HTTP_CMS_M_PG_CONNECT_FAILURES
                                : NGX_HTTP_CMS_M_PG_ERRORS);

    if (connect) {
        pool->backoff = ngx_min(ngx_max(pool->backoff * 2,
                                        NGX_HTTP_CMS_PG_BACKOFF_MIN),
                                NGX_HTTP_CMS_PG_BACKOFF_MAX);
        pool->retry_at = ngx_current_msec + pool->backoff;
    }

    if (slot != NULL) {
        ngx_http_cms_pg_drop(slot);
        ngx_http_cms_pg_kick(pool);
    }
}


/* gives waiters to idle slots, opens connections for them, or fails them */
/* long: the scheduler: waiters to slots, connect, or fail */
static void
ngx_http_cms_pg_kick(ngx_http_cms_pg_pool_t *pool)
{
    ngx_uint_t                i, connecting, ready;
    ngx_queue_t              *head;
    ngx_http_cms_pg_slot_t   *slot;
    ngx_http_cms_pg_query_t  *q;

    do {
        if (!ngx_http_cms_pg_hand_out(pool)) {
            return;
        }

        connecting = 0;
        ready = 0;

        for (i = 0; i < pool->conf->max; i++) {
            connecting += (pool->slots[i].state
                           == NGX_HTTP_CMS_PG_CONNECTING);
        }

        for (i = 0; i < pool->conf->max
                    && connecting < pool->nwaiting
                    && ngx_current_msec >= pool->retry_at; i++)
        {
            slot = &pool->slots[i];

            if (slot->state != NGX_HTTP_CMS_PG_DOWN
                || ngx_http_cms_pg_connect(slot) != NGX_OK)
            {
                continue;
            }

            /* a connect may complete at once: its waiter is served now */
            if (slot->state == NGX_HTTP_CMS_PG_IDLE) {
                ready = 1;

            } else {
                connecting++;
            }
        }

    } while (ready);

    if (ngx_http_cms_pg_live(pool)) {
        return;
    }

    /* nothing can serve the waiters: answer them now, not at timeout */
    while (!ngx_queue_empty(&pool->waiting)) {
        head = ngx_queue_head(&pool->waiting);
        q = ngx_queue_data(head, ngx_http_cms_pg_query_t, queue);
        ngx_queue_remove(head);
        pool->nwaiting--;
        q->queued = 0;

        if (q->wait.timer_set) {
            ngx_del_timer(&q->wait);
        }

        ngx_http_cms_pg_deliver(q, NULL);
    }
}


/*
 * Gives idle slots to waiters; returns whether waiters are left.  An
 * exiting worker closes what no waiter needs.
 */
static ngx_uint_t
ngx_http_cms_pg_hand_out(ngx_http_cms_pg_pool_t *pool)
{
    ngx_uint_t                i;
    ngx_queue_t              *head;
    ngx_http_cms_pg_slot_t   *slot;
    ngx_http_cms_pg_query_t  *q;

    while (!ngx_queue_empty(&pool->waiting)) {

        slot = ngx_http_cms_pg_acquire(pool);

        if (slot == NULL) {
            slot = ngx_http_cms_pg_pipeline(pool);
        }

        if (slot == NULL) {
            return 1;
        }

        head = ngx_queue_head(&pool->waiting);
        q = ngx_queue_data(head, ngx_http_cms_pg_query_t, queue);
        ngx_queue_remove(head);
        pool->nwaiting--;
        q->queued = 0;

        if (q->wait.timer_set) {
            ngx_del_timer(&q->wait);
        }

        if (ngx_http_cms_pg_start(slot, q) != NGX_OK) {
            ngx_http_cms_pg_drop(slot);
            ngx_http_cms_pg_deliver(q, NULL);
        }
    }

    for (i = 0; ngx_http_cms_quitting() && i < pool->conf->max; i++) {
        if (pool->slots[i].state == NGX_HTTP_CMS_PG_IDLE) {
            ngx_http_cms_pg_close(&pool->slots[i]);
        }
    }

    return 0;
}
