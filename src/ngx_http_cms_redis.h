
/*
 * The per-worker Redis pool: nginx owns the sockets, hiredis only formats
 * commands and parses replies.
 */


#ifndef _NGX_HTTP_CMS_REDIS_H_INCLUDED_
#define _NGX_HTTP_CMS_REDIS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <hiredis/hiredis.h>
#include "ngx_http_cms_module.h"


#define NGX_HTTP_CMS_REDIS_MAX_PIPELINE  64


struct ngx_http_cms_redis_conf_s {
    ngx_addr_t                  addr;          /* name: as written */
    ngx_str_t                   host;          /* a host name resolved at
                                                  each connect; empty for
                                                  an address */
    in_port_t                   port;          /* with host */
    ngx_uint_t                  max;
    ngx_uint_t                  queue;
    ngx_msec_t                  timeout;
    ngx_str_t                   user;          /* user=: an ACL user */
    ngx_str_t                   password_file; /* password_file= */
    ngx_str_t                   auth;          /* AUTH [user] password,
                                                  sent first on each
                                                  connection; empty: none */
    ngx_str_t                   tls;           /* tls=on|off */
    ngx_str_t                   tls_ca;        /* tls_ca= */
    ngx_str_t                   tls_name;      /* tls_name=, or the host;
                                                  NUL-terminated */
    ngx_str_t                   tls_cert;      /* tls_cert= */
    ngx_str_t                   tls_key;       /* tls_key= */
    ngx_ssl_t                  *ssl;           /* NULL: plain text */
};


/* commands to pipeline, formatted in r->pool */
typedef struct {
    ngx_str_t                   out;
    ngx_uint_t                  n;
} ngx_http_cms_redis_cmds_t;


/*
 * The continuation: "replies" holds "n" replies in command order, or is
 * NULL when no answer came (logged).  Replies are freed when it returns.
 */
typedef ngx_int_t (*ngx_http_cms_redis_done_pt)(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, redisReply **replies, ngx_uint_t n);


char *ngx_http_cms_redis_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);

ngx_int_t ngx_http_cms_redis_init_process(ngx_cycle_t *cycle,
    ngx_http_cms_redis_conf_t *rcf);
void ngx_http_cms_redis_exit_process(void);

/* a background job's continuation; "replies" NULL when none came */
typedef void (*ngx_http_cms_redis_job_pt)(void *data, redisReply **replies,
    ngx_uint_t n);


/*
 * Appends one command to "cmds", formatted in "pool".  Returns NGX_OK or
 * NGX_ERROR.
 */
ngx_int_t ngx_http_cms_redis_append(ngx_pool_t *pool,
    ngx_http_cms_redis_cmds_t *cmds, int argc, const char **argv,
    const size_t *argvlen);

/*
 * Sends "cmds" on one connection and calls "done" with every reply.
 * "cmds" must live as long as the request (r->pool, not the stack): a
 * command queued for a connection is sent later.
 * Returns NGX_DONE, a status >= 300 recorded (no connection now) or
 * NGX_ERROR; like ngx_http_cms_pg_query().
 */
ngx_int_t ngx_http_cms_redis_run(ngx_http_request_t *r,
    ngx_http_cms_redis_cmds_t *cmds, ngx_http_cms_redis_done_pt done);

/*
 * Sends "cmds" for a background job, not a request; "pool" holds the
 * commands and is the job's: it is destroyed after done() (or at once
 * when NGX_ERROR is returned, and done() is then not called).
 */
ngx_int_t ngx_http_cms_redis_job(ngx_pool_t *pool,
    ngx_http_cms_redis_cmds_t *cmds, ngx_http_cms_redis_job_pt done,
    void *data);

void ngx_http_cms_redis_stats(ngx_http_cms_pool_stats_t *st);

/*
 * Whether "reply" is Redis accepting AUTH on a new connection; when not,
 * logs why (never the password) on "log".  NGX_OK or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_redis_auth_check(ngx_http_cms_redis_conf_t *rcf,
    ngx_log_t *log, redisReply *reply);

/*
 * A Lua script, sent by its SHA-1 (EVALSHA) and whole (EVAL) once Redis
 * has answered NOSCRIPT (which caches it again); its SHA-1 is computed at
 * its first use in the worker.
 */
typedef struct {
    ngx_str_t                   lua;
    u_char                      sha[40];       /* lowercase hex */
    unsigned                    hashed:1;
} ngx_http_cms_redis_script_t;

#define ngx_http_cms_redis_script(lua)  { ngx_string(lua), { 0 }, 0 }

/* argv[0] and argv[1]: EVALSHA and the SHA-1, or EVAL and the script */
void ngx_http_cms_redis_script_argv(ngx_http_cms_redis_script_t *script,
    ngx_uint_t eval, const char **argv, size_t *len);

/* whether "rp" is Redis's NOSCRIPT: the script is to be sent whole */
ngx_uint_t ngx_http_cms_redis_noscript(redisReply *rp);

/* the pool's: NGX_OK when an idle connection has nothing to read */
ngx_int_t ngx_http_cms_redis_peek(ngx_connection_t *c);


#endif /* _NGX_HTTP_CMS_REDIS_H_INCLUDED_ */
