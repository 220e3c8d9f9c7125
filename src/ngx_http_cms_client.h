
/*
 * A one-shot HTTP/1.1 client on nginx's events, for requests the module
 * makes without a request of its own (webhook deliveries on a user's
 * behalf, cache purges to the operator's targets): the host resolved
 * through nginx's resolver (ngx_http_cms_resolve.h), the address actually
 * connected to checked by the outbound rule before the connect, the
 * connect non-blocking (ngx_event_connect_peer), TLS on nginx's SSL
 * connection with SNI and the certificate verified, the request written,
 * and the answer read bounded: the status line and headers (at most
 * 8 KiB), then at most 64 KiB of body, discarded, or kept up to the
 * caller's bound (a bucket's listing).  One timer bounds the
 * whole exchange; it is cancelable, so a quitting worker does not wait
 * for it (the exchange is abandoned).
 *
 * Connections are kept alive per process: after an answer whose end was
 * read (HTTP/1.1, a Content-Length or no body, no "Connection: close"),
 * the connection waits idle (at most 30 s, at most 64 of them, none older
 * than 60 s reused), and the next exchange with the same host, port and
 * TLS context takes it without a lookup or a handshake: its address is the
 * one checked when it was connected.  An exchange on a kept connection
 * that fails before any byte of answer (the server closed it meanwhile)
 * is made once more on a new connection.
 */


#ifndef _NGX_HTTP_CMS_CLIENT_H_INCLUDED_
#define _NGX_HTTP_CMS_CLIENT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event_connect.h>


#define NGX_HTTP_CMS_CLIENT_HEAD   8192
#define NGX_HTTP_CMS_CLIENT_BODY   65536


typedef struct ngx_http_cms_client_s  ngx_http_cms_client_t;

/* the exchange's end, from the event loop; it may destroy cl->pool */
typedef void (*ngx_http_cms_client_done_pt)(ngx_http_cms_client_t *cl);


struct ngx_http_cms_client_s {
    /* the caller's, before start() */
    ngx_pool_t                    *pool;      /* holds cl and all it uses */
    ngx_str_t                      host;      /* name or literal, no [] */
    in_port_t                      port;
    ngx_ssl_t                     *ssl;       /* NULL: plain http */
    ngx_str_t                      request;   /* the bytes to send */
    ngx_msec_t                     timeout;   /* the whole exchange */
    ngx_http_cms_client_done_pt    done;
    void                          *data;
    const char                    *action;    /* the log's; NULL: a
                                                 webhook's delivery */
    ngx_uint_t                     trusted;   /* an operator's target (a
                                                 cache to purge): any
                                                 address, no outbound rule */
    size_t                         keep_body; /* 0: the body discarded;
                                                 else kept in "answer", at
                                                 most this many bytes */

    /* the outcome, when done() runs */
    ngx_uint_t                     status;    /* 0: no answer came */
    const char                    *error;     /* NULL, or why it failed */
    ngx_msec_t                     elapsed;
    ngx_str_t                      answer;    /* the body kept; cut off
                                                 when answer.len ==
                                                 keep_body */

    /* private */
    ngx_log_t                      log;
    ngx_event_t                    timer;
    ngx_peer_connection_t          peer;
    void                          *conn;      /* the connection's state */
    ngx_msec_t                     start;
    const char                    *step;      /* for a timeout's error */
    u_char                        *pos;       /* request bytes to send */
    u_char                        *head;      /* the answer's head */
    size_t                         nhead;
    off_t                          body;      /* left to read, -1 unknown */
    size_t                         got;       /* body bytes read */
    unsigned                       headers:1;
    unsigned                       finished:1;
    unsigned                       keep:1;    /* the answer allows reuse */
    unsigned                       reused:1;  /* on a kept connection */
    unsigned                       retried:1;
    unsigned                       timedout:1;
};


/*
 * Starts the exchange; done() is called exactly once, later, from the
 * event loop, unless the pool is destroyed first (its cleanup then stops
 * everything).  NGX_OK, or NGX_ERROR (no memory: done() is not called).
 */
ngx_int_t ngx_http_cms_client_start(ngx_http_cms_client_t *cl);

/* closes the connections kept idle (the worker exits) */
void ngx_http_cms_client_exit_process(void);


#endif /* _NGX_HTTP_CMS_CLIENT_H_INCLUDED_ */
