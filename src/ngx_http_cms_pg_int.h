
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
    NGX_HTTP_CMS_PG_PREPARING,
    NGX_HTTP_CMS_PG_QUERYING
} ngx_http_cms_pg_state_e;


typedef struct ngx_http_cms_pg_query_s  ngx_http_cms_pg_query_t;


typedef struct {
    PGconn                     *conn;
    ngx_connection_t           *c;
    ngx_http_cms_pg_state_e     state;
    ngx_event_t                 timer;        /* connect or query timeout */
    ngx_http_cms_pg_query_t    *query;        /* NULL when detached */
    ngx_http_cms_pg_stmt_t     *stmt;
    PGresult                   *result;
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
    ngx_queue_t                 queue;
    ngx_event_t                 wait;
    unsigned                    queued:1;
    unsigned                    retried:1;
};


typedef struct {
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
} ngx_http_cms_pg_pool_t;


extern ngx_http_cms_pg_pool_t  ngx_http_cms_pg_pool;


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

/* _pg.c: what the connection side hands back to the pool */
void ngx_http_cms_pg_failed(ngx_http_cms_pg_slot_t *slot,
    ngx_uint_t connect);
void ngx_http_cms_pg_idle(ngx_http_cms_pg_slot_t *slot);
void ngx_http_cms_pg_event_handler(ngx_event_t *ev);


#endif /* _NGX_HTTP_CMS_PG_INT_H_INCLUDED_ */
