
/*
 * The PostgreSQL pool's private parts, shared by ngx_http_cms_pg.c (the
 * pool, queries, results) and ngx_http_cms_pg_conn.c (connecting and
 * closing a slot's connection).
 */


#ifndef _NGX_HTTP_CMS_PG_INT_H_INCLUDED_
#define _NGX_HTTP_CMS_PG_INT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_pg.h"


#define NGX_HTTP_CMS_PG_BACKOFF_MIN    100
#define NGX_HTTP_CMS_PG_BACKOFF_MAX    1000
#define NGX_HTTP_CMS_PG_POLL_STEPS     1000
#define NGX_HTTP_CMS_PG_LAST_ADDRS     512


typedef enum {
    NGX_HTTP_CMS_PG_DOWN = 0,
    NGX_HTTP_CMS_PG_CONNECTING,
    NGX_HTTP_CMS_PG_IDLE,
    NGX_HTTP_CMS_PG_QUERYING
} ngx_http_cms_pg_state_e;


typedef struct ngx_http_cms_pg_query_s  ngx_http_cms_pg_query_t;
typedef struct ngx_http_cms_pg_pool_s   ngx_http_cms_pg_pool_t;


/*
 * A statement sent on a connection, its results not all read yet: the
 * connection is in libpq's pipeline mode, each statement its own
 * transaction (a Sync after it), up to "depth=" of them in flight.
 */
typedef struct {
    ngx_http_cms_pg_query_t    *query;        /* NULL when detached */
    ngx_http_cms_pg_stmt_t     *stmt;
    ngx_msec_t                  sent;         /* when: its timeout's start */
    unsigned                    parse:1;      /* its Parse's result first */
    unsigned                    unparsed:1;   /* sent without a Parse
                                                 behind one that failed */
} ngx_http_cms_pg_sent_t;


typedef struct {
    ngx_http_cms_pg_pool_t     *pg;           /* the pool it belongs to */
    PGconn                     *conn;
    ngx_connection_t           *c;
    ngx_http_cms_pg_state_e     state;
    ngx_event_t                 timer;        /* connect timeout, or the
                                                 first statement's */
    ngx_http_cms_pg_sent_t     *sent;         /* a ring of conf->depth */
    ngx_uint_t                  first;        /* the oldest in the ring */
    ngx_uint_t                  nsent;        /* how many are in flight */
    PGresult                   *result;       /* the oldest's, so far */
    u_char                     *prepared;     /* by statement id */
    ino_t                       ino;          /* the socket c wraps */
    ngx_log_t                   log;
    ngx_pool_t                 *resolving;    /* the host names' lookups */
    ngx_uint_t                  resolved;     /* how many are done */
    u_char                     *addrs;        /* their hostaddr= text */
    u_char                     *addrs_last;
} ngx_http_cms_pg_slot_t;


struct ngx_http_cms_pg_query_s {
    ngx_http_request_t         *request;     /* NULL for a job */
    ngx_pool_t                 *pool;        /* a job's own */
    ngx_http_cms_pg_job_pt      job_done;
    void                       *job_data;
    ngx_log_t                  *log;
    ngx_http_cms_pg_stmt_t     *stmt;
    const char                **values;
    ngx_http_cms_pg_done_pt     done;
    ngx_http_cms_pg_slot_t     *slot;
    ngx_http_cms_pg_pool_t     *pg;          /* where it runs */
    ngx_queue_t                 queue;
    ngx_event_t                 wait;
    unsigned                    queued:1;
    unsigned                    retried:1;
    unsigned                    reparse:1;   /* sent again unnamed: its
                                                named Parse failed before
                                                it (_pg.c) */
    unsigned                    fallback:1;  /* a replica's read, run
                                                again on the primary */
};


struct ngx_http_cms_pg_pool_s {
    ngx_http_cms_pg_conf_t     *conf;
    ngx_http_cms_pg_slot_t     *slots;
    ngx_queue_t                 waiting;
    ngx_uint_t                  nwaiting;
    ngx_msec_t                  backoff;
    ngx_msec_t                  retry_at;
    ngx_uint_t                  nstmts;
    u_char                      last[NGX_HTTP_CMS_PG_LAST_ADDRS];
    size_t                      last_len;     /* the names' last hostaddr=
                                                 text, to log a move */

    /* a replica's (_pg_replica.c): its state at the last check */
    ngx_uint_t                  replica;      /* 1 + its index; 0: the
                                                 primary */
    uint64_t                    replayed;     /* pg_last_wal_replay_lsn() */
    ngx_msec_t                  checked;      /* when it last answered */
    ngx_event_t                 check;
    unsigned                    usable:1;     /* answered, not too late */
    unsigned                    checking:1;
};


/* the primary's pool, and the replicas' (NULL when none) */
extern ngx_http_cms_pg_pool_t   ngx_http_cms_pg_pool;
extern ngx_http_cms_pg_pool_t  *ngx_http_cms_pg_replicas;
extern ngx_uint_t               ngx_http_cms_pg_nreplicas;


/* _pg_conn.c: a slot's connection (see each definition) */
ngx_int_t ngx_http_cms_pg_connect(ngx_http_cms_pg_slot_t *slot);
ngx_int_t ngx_http_cms_pg_wrap(ngx_http_cms_pg_slot_t *slot);
void ngx_http_cms_pg_unwrap(ngx_http_cms_pg_slot_t *slot);
ngx_int_t ngx_http_cms_pg_connect_step(ngx_http_cms_pg_slot_t *slot);
ngx_int_t ngx_http_cms_pg_ready(ngx_http_cms_pg_slot_t *slot,
    short events);
void ngx_http_cms_pg_close(ngx_http_cms_pg_slot_t *slot);
ngx_int_t ngx_http_cms_pg_verdict(ngx_http_cms_pg_slot_t *slot,
    ngx_http_cms_pg_query_t *q, PGresult *res);
ngx_http_cms_pg_slot_t *ngx_http_cms_pg_acquire(ngx_http_cms_pg_pool_t *pg);
ngx_http_cms_pg_slot_t *ngx_http_cms_pg_pipeline(ngx_http_cms_pg_pool_t *pg);
ngx_uint_t ngx_http_cms_pg_live(ngx_http_cms_pg_pool_t *pg);
void ngx_http_cms_pg_idle(ngx_http_cms_pg_slot_t *slot);

/* _pg.c: what the connection side hands back to the pool */
void ngx_http_cms_pg_failed(ngx_http_cms_pg_pool_t *pg,
    ngx_http_cms_pg_slot_t *slot, ngx_uint_t connect);
void ngx_http_cms_pg_event_handler(ngx_event_t *ev);
void ngx_http_cms_pg_timer_handler(ngx_event_t *ev);
ngx_int_t ngx_http_cms_pg_pool_init(ngx_cycle_t *cycle,
    ngx_http_cms_pg_pool_t *pg, ngx_http_cms_pg_conf_t *pcf);
void ngx_http_cms_pg_pool_close(ngx_http_cms_pg_pool_t *pg);
ngx_int_t ngx_http_cms_pg_submit(ngx_http_cms_pg_query_t *q);
ngx_int_t ngx_http_cms_pg_job_args(ngx_http_cms_pg_pool_t *pg,
    ngx_http_cms_pg_stmt_t *stmt, ngx_str_t *args, ngx_uint_t nargs,
    ngx_http_cms_pg_job_pt done, void *data);

/*
 * _pg_replica.c: where a request's query runs.  NGX_OK: q->pg is set,
 * submit it; NGX_DONE: a lookup is in flight, which submits it (or
 * delivers no answer); NGX_ERROR.
 */
ngx_int_t ngx_http_cms_pg_route(ngx_http_cms_pg_query_t *q);
/* whether a replica's read that got no answer goes to the primary */
ngx_uint_t ngx_http_cms_pg_fall_back(ngx_http_cms_pg_query_t *q,
    PGresult *res);


#endif /* _NGX_HTTP_CMS_PG_INT_H_INCLUDED_ */
