
/*
 * The per-worker PostgreSQL pool: libpq in non-blocking mode, driven by
 * nginx events and timers.
 */


#ifndef _NGX_HTTP_CMS_PG_H_INCLUDED_
#define _NGX_HTTP_CMS_PG_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <libpq-fe.h>
#include "ngx_http_cms_module.h"


#define NGX_HTTP_CMS_PG_MAX_STMTS      256
#define NGX_HTTP_CMS_PG_LINE           1024
#define NGX_HTTP_CMS_PG_MAX_DEPTH      64


struct ngx_http_cms_pg_conf_s {
    const char                **keywords;     /* NULL-terminated */
    const char                **values;
    ngx_uint_t                  max;
    ngx_uint_t                  depth;        /* statements in flight on
                                                 one connection */
    ngx_uint_t                  queue;
    ngx_msec_t                  queue_timeout;
    ngx_msec_t                  query_timeout;
    ngx_msec_t                  connect_timeout;
    ngx_msec_t                  max_lag;      /* a replica's: skipped when
                                                 further behind */
    ngx_array_t                *hosts;        /* ngx_str_t: host= names
                                                 resolved at each connect
                                                 (no hostaddr=), or NULL */
    ngx_uint_t                  hostaddr;     /* the index of "hostaddr"
                                                 in keywords: their
                                                 addresses then */
    ngx_str_t                   name;         /* a host name among hosts
                                                 (not an IP): needs the
                                                 resolver; or empty */
};


/*
 * A statement: static in the resource file that runs it, prepared once per
 * connection under a name given at its first use (but for a "replan" one,
 * below).
 */
typedef struct {
    const char                 *sql;
    int                         nparams;
    ngx_uint_t                  id;           /* 0 until first use */
    char                        name[16];
    ngx_uint_t                  retry;        /* safe to run again */
    ngx_uint_t                  primary;      /* never on a replica */
    ngx_uint_t                  replan;       /* not kept prepared */
} ngx_http_cms_pg_stmt_t;

#define ngx_http_cms_pg_stmt(s, n)  { .sql = s, .nparams = n }

/*
 * A statement of a GET that must see the primary: a check of the
 * database's own state (its schema, its health) or one that writes.
 */
#define ngx_http_cms_pg_stmt_primary(s, n)                                    \
    { .sql = s, .nparams = n, .primary = 1 }

/*
 * A statement the pool may run once more when the server refuses it with
 * a serialization failure or a deadlock (40001, 40P01): one statement is
 * one transaction, rolled back by the refusal, so a second run is safe
 * unless the statement reaches outside the database.
 */
#define ngx_http_cms_pg_stmt_retry(s, n)  { .sql = s, .nparams = n, .retry = 1 }

/*
 * A background job's statement on a queue (a table empty most of the time,
 * then a burst of rows): parsed and planned at each run, as an unnamed
 * statement, never kept prepared.  A plan kept from a moment the queue
 * was empty on disk reads the whole burst for each batch until the
 * table's next ANALYZE (a sequential scan costs nothing on an empty
 * table); planned at each run, the plan sees the table's size then.  The
 * planning costs a batch, not a request.
 */
#define ngx_http_cms_pg_stmt_replan(s, n)                                     \
    { .sql = s, .nparams = n, .replan = 1 }


/*
 * The continuation of a query.  "res" is NULL when no answer came (pool
 * full, queue timeout, connection lost, query timeout, the server gave up
 * or refused for now: SQLSTATE classes 08, 40, 53, 57 and 25006; already
 * logged, answered 503),
 * else the result, which the pool clears when the continuation returns:
 * copy out what outlives it.  Returns the handler contract's codes.
 */
typedef ngx_int_t (*ngx_http_cms_pg_done_pt)(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);


/* a background job's continuation: "res" as for requests, may be NULL */
typedef void (*ngx_http_cms_pg_job_pt)(void *data, PGresult *res);


/* "cms_postgres" directive: conninfo checked and completed at load time */
char *ngx_http_cms_pg_conf(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
char *ngx_http_cms_pg_replica_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);

ngx_int_t ngx_http_cms_pg_init_process(ngx_cycle_t *cycle,
    ngx_http_cms_pg_conf_t *pcf, ngx_array_t *replicas);
void ngx_http_cms_pg_exit_process(void);

/*
 * Runs "stmt" with text parameters "args" (data == NULL is SQL NULL) and
 * calls "done" later, then ctx->finish() with what done() returns.
 * Returns NGX_DONE (queued; done() will be called exactly once unless the
 * request ends first), 503 (no connection can be had now), 400 (a
 * parameter holds a NUL byte: an input check is missing) or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_pg_query(ngx_http_request_t *r,
    ngx_http_cms_pg_stmt_t *stmt, ngx_str_t *args, ngx_uint_t nargs,
    ngx_http_cms_pg_done_pt done);

/*
 * Runs "stmt" for a background job, not a request (periodic purges, the
 * outbox relay).  done() is called once, on the event loop.  Returns
 * NGX_OK, or NGX_ERROR when it cannot even be queued (logged; done() is
 * not called).
 */
ngx_int_t ngx_http_cms_pg_job(ngx_http_cms_pg_stmt_t *stmt, ngx_str_t *args,
    ngx_uint_t nargs, ngx_http_cms_pg_job_pt done, void *data);

void ngx_http_cms_pg_stats(ngx_http_cms_pool_stats_t *st);

/*
 * Read-your-writes (_pg_replica.c): for a request that wrote, with
 * replicas, keeps the primary's WAL position for its principal, so that
 * the principal's next reads skip replicas that have not replayed it;
 * then(r, ctx) goes on (its code finishes the request).  NGX_DECLINED:
 * nothing to keep, go on now; NGX_DONE: then() is called later (also
 * when the position could not be kept: logged); NGX_ERROR.
 */
ngx_int_t ngx_http_cms_pg_mark(ngx_http_request_t *r,
    ngx_http_cms_handler_pt then);

/*
 * A request's read found nothing where something was looked for (a key):
 * 1 when it ran on a replica, and the request's reads now go to the
 * primary (ask again); else 0.
 */
ngx_uint_t ngx_http_cms_pg_missed(ngx_http_request_t *r);

/*
 * libpq's message (PQerrorMessage(), PQresultErrorMessage()) as one log
 * line: its lines joined by "; ", the final newline dropped, at most
 * NGX_HTTP_CMS_PG_LINE - 1 bytes.  In a buffer of the worker's that the
 * next call reuses: for the log line at hand only.
 */
const char *ngx_http_cms_pg_oneline(const char *msg);


#endif /* _NGX_HTTP_CMS_PG_H_INCLUDED_ */
