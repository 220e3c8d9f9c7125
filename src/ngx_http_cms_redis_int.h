
/*
 * The Redis pool's private types and functions, shared by _redis.c (the
 * pool, commands in flight), _redis_conn.c (opening and closing a slot's
 * connection) and _redis_cmd.c (commands and connection bytes).
 */


#ifndef _NGX_HTTP_CMS_REDIS_INT_H_INCLUDED_
#define _NGX_HTTP_CMS_REDIS_INT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event_connect.h>
#include "ngx_http_cms_redis.h"


#define NGX_HTTP_CMS_REDIS_BACKOFF_MIN  100
#define NGX_HTTP_CMS_REDIS_BACKOFF_MAX  2000


typedef enum {
    NGX_HTTP_CMS_REDIS_DOWN = 0,
    NGX_HTTP_CMS_REDIS_CONNECTING,
    NGX_HTTP_CMS_REDIS_IDLE,
    NGX_HTTP_CMS_REDIS_BUSY
} ngx_http_cms_redis_state_e;


typedef struct ngx_http_cms_redis_op_s  ngx_http_cms_redis_op_t;


typedef struct {
    ngx_peer_connection_t       peer;
    ngx_http_cms_redis_state_e  state;
    redisReader                *reader;
    ngx_http_cms_redis_op_t    *op;          /* NULL when detached */
    u_char                     *pos;         /* unsent output */
    u_char                     *last;
    ngx_uint_t                  expect;
    ngx_uint_t                  got;
    redisReply                 *replies[NGX_HTTP_CMS_REDIS_MAX_PIPELINE];
    ngx_event_t                 timer;
    ngx_log_t                   log;
    ngx_pool_t                 *resolving;   /* the host name's lookup */
    ngx_sockaddr_t              sockaddr;    /* what the name gave */
    socklen_t                   socklen;
    unsigned                    authing:1;   /* AUTH sent, not answered */
} ngx_http_cms_redis_slot_t;


struct ngx_http_cms_redis_op_s {
    ngx_http_request_t         *request;     /* NULL for a job */
    ngx_pool_t                 *pool;        /* a job's own */
    ngx_http_cms_redis_job_pt   job_done;
    void                       *job_data;
    ngx_log_t                  *log;
    ngx_http_cms_redis_cmds_t  *cmds;
    ngx_http_cms_redis_done_pt  done;
    ngx_http_cms_redis_slot_t  *slot;
    ngx_queue_t                 queue;
    ngx_event_t                 wait;
    unsigned                    queued:1;
};


typedef struct {
    ngx_http_cms_redis_conf_t  *conf;
    ngx_http_cms_redis_slot_t  *slots;
    ngx_queue_t                 waiting;
    ngx_uint_t                  nwaiting;
    ngx_msec_t                  backoff;
    ngx_msec_t                  retry_at;
    ngx_event_t                 kick;        /* posted by a detach */
    ngx_sockaddr_t              last;        /* the host name's last */
    socklen_t                   last_len;    /* address, to log a move */
} ngx_http_cms_redis_pool_t;


extern ngx_http_cms_redis_pool_t  ngx_http_cms_redis_pool;


/* _redis_conn.c: a slot's connection (see each definition) */
ngx_int_t ngx_http_cms_redis_connect(ngx_http_cms_redis_slot_t *s);
void ngx_http_cms_redis_tcp_done(ngx_http_cms_redis_slot_t *s);
void ngx_http_cms_redis_authed(ngx_http_cms_redis_slot_t *s);
void ngx_http_cms_redis_close(ngx_http_cms_redis_slot_t *s);

/* _redis.c: what the connection side hands back to the pool */
ngx_int_t ngx_http_cms_redis_send(ngx_http_cms_redis_slot_t *s);
void ngx_http_cms_redis_read_handler(ngx_event_t *ev);
void ngx_http_cms_redis_write_handler(ngx_event_t *ev);
void ngx_http_cms_redis_failed(ngx_http_cms_redis_slot_t *s,
    ngx_uint_t connect);
void ngx_http_cms_redis_idle(ngx_http_cms_redis_slot_t *s);
void ngx_http_cms_redis_kick(void);
void ngx_http_cms_redis_free_replies(ngx_http_cms_redis_slot_t *s);


#endif /* _NGX_HTTP_CMS_REDIS_INT_H_INCLUDED_ */
