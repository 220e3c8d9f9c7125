
/*
 * The one-shot HTTP/1.1 client (ngx_http_cms_client.h).  Steps, each from
 * an event: resolved -> the address checked -> connected -> (TLS
 * handshake, certificate verified) -> request sent -> head read -> body
 * drained (bounded) -> finish.  Any failure, or the timer, finishes with
 * an error; finish keeps the connection idle for the next exchange (the
 * answer read to its end) or closes it, before done() runs.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>
#include <ngx_event_connect.h>
#include "ngx_http_cms_client.h"
#include "ngx_http_cms_resolve.h"
#include "ngx_http_cms_crypto.h"


static void ngx_http_cms_client_resolved(void *data, ngx_int_t rc,
    ngx_addr_t *addrs, ngx_uint_t naddrs);
static void ngx_http_cms_client_connect(ngx_http_cms_client_t *cl);
static void ngx_http_cms_client_tls(ngx_http_cms_client_t *cl);
static void ngx_http_cms_client_tls_done(ngx_connection_t *c);
static void ngx_http_cms_client_write(ngx_event_t *wev);
static void ngx_http_cms_client_read(ngx_event_t *rev);
static ngx_int_t ngx_http_cms_client_head(ngx_http_cms_client_t *cl);
static ssize_t ngx_http_cms_client_body(ngx_http_cms_client_t *cl,
    ngx_connection_t *c, u_char *buf, size_t len);
static void ngx_http_cms_client_fields(ngx_http_cms_client_t *cl,
    u_char *end, ngx_uint_t *chunked, ngx_uint_t *lengths);
static void ngx_http_cms_client_timeout(ngx_event_t *ev);
static void ngx_http_cms_client_finish(ngx_http_cms_client_t *cl,
    const char *error);
static void ngx_http_cms_client_close(ngx_http_cms_client_t *cl);
static void ngx_http_cms_client_cleanup(void *data);
static ngx_int_t ngx_http_cms_client_lookup(ngx_http_cms_client_t *cl);
static ngx_int_t ngx_http_cms_client_reuse(ngx_http_cms_client_t *cl);
static void ngx_http_cms_client_park(ngx_http_cms_client_t *cl);
static void ngx_http_cms_client_idle(ngx_event_t *ev);


#define NGX_HTTP_CMS_CLIENT_IDLE      30000    /* ms an idle connection */
#define NGX_HTTP_CMS_CLIENT_AGE       60000    /* ms, reused until then */
#define NGX_HTTP_CMS_CLIENT_IDLE_MAX  64       /* idle, per process */

/* the outcome of a host without an address deliveries may go to */
#define NGX_HTTP_CMS_CLIENT_NO_ADDRESS  "the host has no public address"


/* a connection: its own pool (the TLS state is in it), idle or in use */
typedef struct {
    ngx_queue_t                 queue;      /* idle */
    ngx_pool_t                 *pool;
    ngx_connection_t           *c;
    ngx_str_t                   host;
    in_port_t                   port;
    ngx_ssl_t                  *ssl;
    ngx_uint_t                  trusted;    /* made for an operator's
                                               target: serves no other */
    ngx_sockaddr_t              sockaddr;
    socklen_t                   socklen;
    ngx_str_t                   name;       /* the address, as text */
    ngx_msec_t                  born;
    ngx_log_t                   log;        /* while idle */
} ngx_http_cms_client_conn_t;


static ngx_http_cms_client_conn_t *ngx_http_cms_client_conn(
    ngx_http_cms_client_t *cl);
static void ngx_http_cms_client_conn_close(ngx_http_cms_client_conn_t *conn);


static ngx_queue_t  ngx_http_cms_client_idle_queue;
static ngx_uint_t   ngx_http_cms_client_nidle;


ngx_int_t
ngx_http_cms_client_start(ngx_http_cms_client_t *cl)
{
    ngx_pool_cleanup_t  *cln;

    cl->log = *ngx_cycle->log;
    cl->log.action = cl->action ? (char *) cl->action
                                : "delivering a webhook";
    cl->start = ngx_current_msec;
    cl->step = "timed out resolving the host";
    cl->pos = cl->request.data;
    cl->body = -1;

    cl->head = ngx_pnalloc(cl->pool, NGX_HTTP_CMS_CLIENT_HEAD);
    cln = ngx_pool_cleanup_add(cl->pool, 0);

    if (cl->head == NULL || cln == NULL) {
        return NGX_ERROR;
    }

    /* before the lookup's own cleanup: run after it, closes the rest */
    cln->handler = ngx_http_cms_client_cleanup;
    cln->data = cl;

    cl->timer.handler = ngx_http_cms_client_timeout;
    cl->timer.data = cl;
    cl->timer.log = &cl->log;
    cl->timer.cancelable = 1;
    ngx_add_timer(&cl->timer, cl->timeout);

    if (ngx_http_cms_client_reuse(cl) == NGX_OK) {
        return NGX_OK;
    }

    return ngx_http_cms_client_lookup(cl);
}


/* a new connection begins with the lookup of the host */
static ngx_int_t
ngx_http_cms_client_lookup(ngx_http_cms_client_t *cl)
{
    cl->step = "timed out resolving the host";

    if (ngx_http_cms_resolve_start(cl->pool, &cl->log, &cl->host,
                                   ngx_http_cms_client_resolved, cl)
        == NULL)
    {
        /* finished from the loop, as every other outcome */
        cl->error = "the host cannot be resolved now";
        ngx_del_timer(&cl->timer);
        ngx_add_timer(&cl->timer, 1);
    }

    return NGX_OK;
}


/* an idle connection to the same host, port and TLS context, if any */
/* long: the search, then the connection handed over to this exchange */
static ngx_int_t
ngx_http_cms_client_reuse(ngx_http_cms_client_t *cl)
{
    ngx_queue_t                 *q;
    ngx_connection_t            *c;
    ngx_http_cms_client_conn_t  *conn;

    if (ngx_http_cms_client_idle_queue.next == NULL) {
        ngx_queue_init(&ngx_http_cms_client_idle_queue);
    }

    for (q = ngx_queue_head(&ngx_http_cms_client_idle_queue);
         q != ngx_queue_sentinel(&ngx_http_cms_client_idle_queue);
         q = ngx_queue_next(q))
    {
        conn = ngx_queue_data(q, ngx_http_cms_client_conn_t, queue);

        if (conn->ssl == cl->ssl && conn->port == cl->port
            && conn->trusted == cl->trusted
            && conn->host.len == cl->host.len
            && ngx_strncmp(conn->host.data, cl->host.data, cl->host.len) == 0
            && ngx_current_msec - conn->born < NGX_HTTP_CMS_CLIENT_AGE)
        {
            break;
        }
    }

    if (q == ngx_queue_sentinel(&ngx_http_cms_client_idle_queue)) {
        return NGX_DECLINED;
    }

    ngx_queue_remove(q);
    ngx_http_cms_client_nidle--;

    c = conn->c;

    if (c->read->timer_set) {
        ngx_del_timer(c->read);
    }

    cl->conn = conn;
    cl->peer.connection = c;
    cl->reused = 1;
    cl->step = "timed out waiting for the answer";

    c->data = cl;
    c->log = &cl->log;
    c->read->log = &cl->log;
    c->write->log = &cl->log;
    c->read->handler = ngx_http_cms_client_read;
    c->write->handler = ngx_http_cms_client_write;

    ngx_post_event(c->write, &ngx_posted_events);

    return NGX_OK;
}


/*
 * The first address is the one connected to, and the one checked: the
 * outbound rule on the very sockaddr given to connect(), so an answer
 * that changed since the endpoint was registered is judged again.  No
 * address, no name and a refused address are one outcome: the log a
 * caller reads must not tell a name inside the network from one that
 * does not exist (the error log says which).
 */
static void
ngx_http_cms_client_resolved(void *data, ngx_int_t rc, ngx_addr_t *addrs,
    ngx_uint_t naddrs)
{
    ngx_http_cms_client_t *cl = data;

    ngx_http_cms_client_conn_t  *conn;

    if (ngx_exiting || ngx_terminate) {
        ngx_http_cms_client_finish(cl, "abandoned: the worker is quitting");
        return;
    }

    if (rc != NGX_OK || naddrs == 0) {
        ngx_log_error(NGX_LOG_INFO, &cl->log, 0,
                      "cms: webhook host \"%V\" %s", &cl->host,
                      rc == NGX_DECLINED ? "has no address"
                                         : "could not be resolved");
        ngx_http_cms_client_finish(cl, NGX_HTTP_CMS_CLIENT_NO_ADDRESS);
        return;
    }

    conn = ngx_http_cms_client_conn(cl);
    if (conn == NULL) {
        ngx_http_cms_client_finish(cl, "out of memory");
        return;
    }

    ngx_memcpy(&conn->sockaddr, addrs[0].sockaddr, addrs[0].socklen);
    conn->socklen = addrs[0].socklen;
    ngx_inet_set_port(&conn->sockaddr.sockaddr, cl->port);

    conn->name.len = ngx_sock_ntop(&conn->sockaddr.sockaddr, conn->socklen,
                                   conn->name.data, NGX_SOCKADDR_STRLEN, 1);

    addrs[0].sockaddr = &conn->sockaddr.sockaddr;

    if (!cl->trusted
        && ngx_http_cms_outbound_all_allowed(&addrs[0], 1, cl->ssl == NULL)
           != NGX_OK)
    {
        ngx_log_error(NGX_LOG_WARN, &cl->log, 0,
                      "cms: webhook host \"%V\" is at %V, an address "
                      "deliveries may not go to", &cl->host, &conn->name);
        ngx_http_cms_client_finish(cl, NGX_HTTP_CMS_CLIENT_NO_ADDRESS);
        return;
    }

    cl->step = "timed out connecting";
    ngx_http_cms_client_connect(cl);
}


/* a connection's state, in a pool of its own, for the host */
static ngx_http_cms_client_conn_t *
ngx_http_cms_client_conn(ngx_http_cms_client_t *cl)
{
    ngx_pool_t                  *pool;
    ngx_http_cms_client_conn_t  *conn;

    pool = ngx_create_pool(2048, ngx_cycle->log);
    if (pool == NULL) {
        return NULL;
    }

    conn = ngx_pcalloc(pool, sizeof(ngx_http_cms_client_conn_t));

    if (conn == NULL) {
        ngx_destroy_pool(pool);
        return NULL;
    }

    conn->pool = pool;
    conn->port = cl->port;
    conn->ssl = cl->ssl;
    conn->trusted = cl->trusted;
    conn->born = ngx_current_msec;
    conn->log = *ngx_cycle->log;
    conn->host.len = cl->host.len;
    conn->host.data = ngx_pstrdup(pool, &cl->host);
    conn->name.data = ngx_pnalloc(pool, NGX_SOCKADDR_STRLEN);

    if (conn->host.data == NULL || conn->name.data == NULL) {
        ngx_destroy_pool(pool);
        return NULL;
    }

    cl->conn = conn;

    return conn;
}


static void
ngx_http_cms_client_connect(ngx_http_cms_client_t *cl)
{
    ngx_int_t                    rc;
    ngx_connection_t            *c;
    ngx_http_cms_client_conn_t  *conn;

    conn = cl->conn;

    cl->peer.sockaddr = &conn->sockaddr.sockaddr;
    cl->peer.socklen = conn->socklen;
    cl->peer.name = &conn->name;
    cl->peer.get = ngx_event_get_peer;
    cl->peer.log = &cl->log;
    cl->peer.log_error = NGX_ERROR_INFO;

    rc = ngx_event_connect_peer(&cl->peer);

    if (rc == NGX_ERROR || rc == NGX_BUSY || rc == NGX_DECLINED) {
        cl->peer.connection = NULL;
        ngx_http_cms_client_finish(cl, "the connection failed");
        return;
    }

    c = cl->peer.connection;
    conn->c = c;
    c->data = cl;
    c->pool = conn->pool;
    c->log = &cl->log;
    c->read->log = &cl->log;
    c->write->log = &cl->log;
    c->read->handler = ngx_http_cms_client_read;
    c->write->handler = ngx_http_cms_client_write;

    /* a graceful quit closes it (ngx_close_idle_connections): abandoned */
    c->idle = 1;

    if (rc == NGX_OK) {
        ngx_post_event(c->write, &ngx_posted_events);
    }
}


/* the client side of nginx's SSL connection, as the Redis pool's */
static void
ngx_http_cms_client_tls(ngx_http_cms_client_t *cl)
{
    ngx_int_t          rc;
    ngx_connection_t  *c;

    c = cl->peer.connection;

    if (ngx_ssl_create_connection(cl->ssl, c, NGX_SSL_CLIENT) != NGX_OK
        || ngx_http_cms_crypto_tls_sni(c, &cl->host) != NGX_OK)
    {
        ngx_http_cms_client_finish(cl, "TLS could not start");
        return;
    }

    cl->step = "timed out in the TLS handshake";
    rc = ngx_ssl_handshake(c);

    if (rc == NGX_AGAIN) {
        c->ssl->handler = ngx_http_cms_client_tls_done;
        return;
    }

    ngx_http_cms_client_tls_done(c);
}


static void
ngx_http_cms_client_tls_done(ngx_connection_t *c)
{
    ngx_http_cms_client_t *cl = c->data;

    if (!c->ssl->handshaked) {
        ngx_http_cms_client_finish(cl, "the TLS handshake failed");
        return;
    }

    if (ngx_http_cms_crypto_tls_verify(c, &cl->host, "a webhook endpoint",
                                       &((ngx_http_cms_client_conn_t *)
                                         cl->conn)->name)
        != NGX_OK)
    {
        ngx_http_cms_client_finish(cl, "the TLS certificate is not trusted "
                                   "for the host");
        return;
    }

    c->read->handler = ngx_http_cms_client_read;
    c->write->handler = ngx_http_cms_client_write;

    ngx_http_cms_client_write(c->write);
}


/* connected (or refused), then the request, as the socket takes it */
static void
ngx_http_cms_client_write(ngx_event_t *wev)
{
    ssize_t                 n;
    ngx_connection_t       *c;
    ngx_http_cms_client_t  *cl;

    c = wev->data;
    cl = c->data;

    if (c->close) {
        ngx_http_cms_client_finish(cl, "abandoned: the worker is quitting");
        return;
    }

    if (cl->ssl != NULL && c->ssl == NULL) {
        ngx_http_cms_client_tls(cl);
        return;
    }

    while (cl->pos < cl->request.data + cl->request.len) {
        n = c->send(c, cl->pos, cl->request.data + cl->request.len - cl->pos);

        if (n == NGX_AGAIN) {
            if (ngx_handle_write_event(wev, 0) != NGX_OK) {
                ngx_http_cms_client_finish(cl, "the connection failed");
            }

            return;
        }

        if (n == NGX_ERROR) {
            ngx_http_cms_client_finish(cl, cl->pos == cl->request.data
                                       ? "the connection failed"
                                       : "the connection broke while "
                                         "sending");
            return;
        }

        cl->pos += n;
    }

    /* all sent: what comes now is the answer */
    cl->step = "timed out waiting for the answer";

    if (c->read->ready) {
        ngx_http_cms_client_read(c->read);
    }
}


/* long: the head into its buffer, then the body drained and counted */
static void
ngx_http_cms_client_read(ngx_event_t *rev)
{
    u_char                  buf[4096];
    size_t                  size;
    ssize_t                 n;
    ngx_int_t               rc;
    ngx_connection_t       *c;
    ngx_http_cms_client_t  *cl;

    c = rev->data;
    cl = c->data;

    if (c->close || cl->pos < cl->request.data + cl->request.len
        || (cl->ssl != NULL && (c->ssl == NULL || !c->ssl->handshaked)))
    {
        /* a refused connect shows up as readable too; a quit: abandoned */
        ngx_http_cms_client_write(c->write);
        return;
    }

    for ( ;; ) {
        if (!cl->headers) {
            size = NGX_HTTP_CMS_CLIENT_HEAD - cl->nhead;
            n = (size == 0) ? 0 : c->recv(c, cl->head + cl->nhead, size);

            if (size == 0) {
                ngx_http_cms_client_finish(cl, "the answer's head is over "
                                           "8 KiB");
                return;
            }

        } else {
            n = ngx_http_cms_client_body(cl, c, buf, sizeof(buf));

            if (n == NGX_DONE) {
                /* all the body said, or as much as is read: enough */
                ngx_http_cms_client_finish(cl, NULL);
                return;
            }
        }

        if (n == NGX_AGAIN) {
            if (ngx_handle_read_event(rev, 0) != NGX_OK) {
                ngx_http_cms_client_finish(cl, "the connection failed");
            }

            return;
        }

        if (n == NGX_ERROR || n == 0) {
            ngx_http_cms_client_finish(cl, cl->headers ? NULL
                                       : "the connection closed before "
                                         "an answer");
            return;
        }

        if (cl->headers) {
            cl->got += n;
            if (cl->keep_body) {
                cl->answer.len += n;
            }

            if (cl->body > 0) {
                cl->body -= n;
            }

            continue;
        }

        cl->nhead += n;

        rc = ngx_http_cms_client_head(cl);

        if (rc == NGX_ERROR) {
            ngx_http_cms_client_finish(cl, "the answer is not HTTP/1.x");
            return;
        }
    }
}


/*
 * The body's next bytes, into the kept answer or "buf" (dropped): what
 * c->recv() returned, or NGX_DONE when the body said is read, or as much
 * as is read
 */
static ssize_t
ngx_http_cms_client_body(ngx_http_cms_client_t *cl, ngx_connection_t *c,
    u_char *buf, size_t len)
{
    size_t  size;

    size = cl->keep_body ? cl->keep_body - cl->answer.len
                         : ngx_min(len, NGX_HTTP_CMS_CLIENT_BODY - cl->got);
    if (cl->body >= 0) {
        size = ngx_min((off_t) size, cl->body);
    }

    if (size == 0) {
        return NGX_DONE;
    }

    return c->recv(c, cl->keep_body ? cl->answer.data + cl->answer.len : buf,
                   size);
}


/*
 * The head so far: NGX_AGAIN (incomplete), NGX_OK (complete: the status,
 * Content-Length, the body bytes that came with it counted), NGX_ERROR.
 */
/* long: the status line (interim ones skipped), then what the fields say */
static ngx_int_t
ngx_http_cms_client_head(ngx_http_cms_client_t *cl)
{
    u_char      *end, *last;
    ngx_int_t    status;
    ngx_uint_t   chunked, lengths;

again:

    last = cl->head + cl->nhead;
    chunked = 0;
    lengths = 0;

    if (cl->nhead >= 12
        && (ngx_strncmp(cl->head, "HTTP/1.", 7) != 0 || cl->head[8] != ' '))
    {
        return NGX_ERROR;
    }

    end = ngx_strnstr(cl->head, "\r\n\r\n", cl->nhead);
    if (end == NULL) {
        return NGX_AGAIN;
    }

    if (end - cl->head < 12) {
        return NGX_ERROR;
    }

    status = ngx_atoi(cl->head + 9, 3);
    if (status < 100 || status > 599) {
        return NGX_ERROR;
    }

    cl->status = status;

    if (status < 200 && status != 101) {
        /* an interim answer (100, 102, 103): the final one follows it */
        cl->nhead = last - (end + 4);
        ngx_memmove(cl->head, end + 4, cl->nhead);
        goto again;
    }

    /* HTTP/1.1 keeps the connection unless the answer says otherwise */
    cl->keep = (cl->head[7] == '1');

    ngx_http_cms_client_fields(cl, end, &chunked, &lengths);

    if (status == 204 || status == 304 || status < 200 || chunked) {
        cl->body = 0;
    }

    cl->headers = 1;
    cl->got = last - (end + 4);

    if (cl->keep_body) {
        cl->answer.data = ngx_pnalloc(cl->pool, cl->keep_body);
        if (cl->answer.data == NULL) {
            return NGX_ERROR;
        }

        cl->answer.len = ngx_min(cl->got, cl->keep_body);
        ngx_memcpy(cl->answer.data, end + 4, cl->answer.len);
    }

    if (chunked || cl->body < 0 || (off_t) cl->got > cl->body
        || lengths > 1 || status < 200)
    {
        /* the answer's end unknown or doubtful, more came than it said, or
         * the connection switches protocols (101) */
        cl->keep = 0;
    }

    if (cl->body >= 0) {
        cl->body = ngx_max(cl->body - (off_t) cl->got, 0);
    }

    return NGX_OK;
}


/*
 * The head's fields up to "end" that say where the answer ends and
 * whether the connection stays: Content-Length (counted: two are not
 * trusted), Transfer-Encoding (chunked: not read), Connection: close.
 */
static void
ngx_http_cms_client_fields(ngx_http_cms_client_t *cl, u_char *end,
    ngx_uint_t *chunked, ngx_uint_t *lengths)
{
    u_char     *p, *eol;
    ngx_int_t   len;

    for (p = cl->head; p < end; p = eol + 2) {
        eol = ngx_strnstr(p, "\r\n", end + 2 - p);

        if (eol - p > 15 && ngx_strncasecmp(p, (u_char *) "content-length:",
                                            15) == 0)
        {
            for (p += 15; p < eol && *p == ' '; p++) { /* void */ }
            len = ngx_atoi(p, eol - p);
            cl->body = (len == NGX_ERROR) ? -1 : len;
            (*lengths)++;

        } else if (eol - p > 18
                   && ngx_strncasecmp(p, (u_char *) "transfer-encoding:",
                                      18) == 0)
        {
            *chunked = 1;

        } else if (eol - p > 11
                   && ngx_strncasecmp(p, (u_char *) "connection:", 11) == 0
                   && ngx_strlcasestrn(p + 11, eol, (u_char *) "close", 4)
                      != NULL)
        {
            cl->keep = 0;
        }
    }
}


static void
ngx_http_cms_client_timeout(ngx_event_t *ev)
{
    ngx_http_cms_client_t *cl = ev->data;

    cl->timedout = 1;
    ngx_http_cms_client_finish(cl, cl->error ? cl->error : cl->step);
}


/*
 * The outcome: the connection kept or closed, then done() (which may free
 * all).  A kept connection that failed before any byte of answer was most
 * likely closed by the server while idle: the exchange is made once more
 * on a new one, within the same timer.
 */
static void
ngx_http_cms_client_finish(ngx_http_cms_client_t *cl, const char *error)
{
    if (cl->finished) {
        return;
    }

    if (error != NULL && cl->reused && !cl->retried && !cl->timedout
        && cl->nhead == 0 && cl->status == 0 && !ngx_exiting
        && !ngx_terminate)
    {
        ngx_http_cms_client_close(cl);
        ngx_add_timer(&cl->timer, cl->timeout - (ngx_current_msec - cl->start));

        cl->reused = 0;
        cl->retried = 1;
        cl->pos = cl->request.data;
        (void) ngx_http_cms_client_lookup(cl);
        return;
    }

    cl->finished = 1;
    cl->error = error;
    cl->elapsed = ngx_current_msec - cl->start;

    if (error == NULL && cl->keep_body == 0
        && cl->got >= NGX_HTTP_CMS_CLIENT_BODY)
    {
        ngx_log_error(NGX_LOG_INFO, &cl->log, 0,
                      "cms: the answer of \"%V\" was cut off after %uz "
                      "bytes of body", &cl->host, cl->got);
    }

    /* bytes OpenSSL holds would be the next answer's start: not kept */
    if (error == NULL && cl->keep && cl->body == 0
        && cl->got < (cl->keep_body ? cl->keep_body
                                    : NGX_HTTP_CMS_CLIENT_BODY)
        && (cl->ssl == NULL
            || SSL_pending(cl->peer.connection->ssl->connection) == 0)
        && ngx_http_cms_client_nidle < NGX_HTTP_CMS_CLIENT_IDLE_MAX
        && !ngx_exiting && !ngx_terminate)
    {
        ngx_http_cms_client_park(cl);

    } else {
        ngx_http_cms_client_close(cl);
    }

    cl->done(cl);
}


/* the connection, its answer read to the end, waits for the next one */
static void
ngx_http_cms_client_park(ngx_http_cms_client_t *cl)
{
    ngx_connection_t            *c;
    ngx_http_cms_client_conn_t  *conn;

    if (cl->timer.timer_set) {
        ngx_del_timer(&cl->timer);
    }

    conn = cl->conn;
    c = conn->c;

    cl->conn = NULL;
    cl->peer.connection = NULL;

    c->data = conn;
    c->log = &conn->log;
    c->read->log = &conn->log;
    c->write->log = &conn->log;
    c->read->handler = ngx_http_cms_client_idle;
    c->write->handler = ngx_http_cms_client_idle;
    c->read->cancelable = 1;

    ngx_add_timer(c->read, NGX_HTTP_CMS_CLIENT_IDLE);

    if (ngx_handle_read_event(c->read, 0) != NGX_OK) {
        ngx_http_cms_client_conn_close(conn);
        return;
    }

    ngx_queue_insert_head(&ngx_http_cms_client_idle_queue, &conn->queue);
    ngx_http_cms_client_nidle++;

    if (c->read->ready) {
        ngx_post_event(c->read, &ngx_posted_events);
    }
}


/*
 * An idle connection: anything readable (the server closed it, or sent
 * what nobody asked for), its idle time over, or a graceful quit (nginx
 * closes idle connections) ends it.
 */
static void
ngx_http_cms_client_idle(ngx_event_t *ev)
{
    u_char                       buf;
    ssize_t                      n;
    ngx_connection_t            *c;
    ngx_http_cms_client_conn_t  *conn;

    c = ev->data;
    conn = c->data;

    if (ev->write) {
        return;
    }

    if (!c->close && !ev->timedout) {
        n = recv(c->fd, &buf, 1, MSG_PEEK);

        if (n == -1 && ngx_socket_errno == NGX_EAGAIN) {
            ev->ready = 0;

            if (ngx_handle_read_event(ev, 0) == NGX_OK) {
                return;
            }
        }
    }

    ngx_queue_remove(&conn->queue);
    ngx_http_cms_client_nidle--;
    ngx_http_cms_client_conn_close(conn);
}


static void
ngx_http_cms_client_close(ngx_http_cms_client_t *cl)
{
    if (cl->timer.timer_set) {
        ngx_del_timer(&cl->timer);
    }

    if (cl->conn != NULL) {
        ngx_http_cms_client_conn_close(cl->conn);
        cl->conn = NULL;
        cl->peer.connection = NULL;
    }
}


/* the connection closed, if there is one, and its state freed */
static void
ngx_http_cms_client_conn_close(ngx_http_cms_client_conn_t *conn)
{
    ngx_connection_t  *c;

    c = conn->c;

    if (c != NULL) {
        if (c->read->timer_set) {
            ngx_del_timer(c->read);
        }

        ngx_http_cms_crypto_tls_close(c);
        c->pool = NULL;                     /* destroyed below */
        ngx_close_connection(c);
    }

    ngx_destroy_pool(conn->pool);
}


/* the pool goes before done(): nothing may fire afterwards */
static void
ngx_http_cms_client_cleanup(void *data)
{
    ngx_http_cms_client_t *cl = data;

    cl->finished = 1;
    ngx_http_cms_client_close(cl);
}


/* the worker exits: the idle connections are closed */
void
ngx_http_cms_client_exit_process(void)
{
    ngx_queue_t                 *q;
    ngx_http_cms_client_conn_t  *conn;

    if (ngx_http_cms_client_idle_queue.next == NULL) {
        return;
    }

    while (!ngx_queue_empty(&ngx_http_cms_client_idle_queue)) {
        q = ngx_queue_head(&ngx_http_cms_client_idle_queue);
        ngx_queue_remove(q);

        conn = ngx_queue_data(q, ngx_http_cms_client_conn_t, queue);
        ngx_http_cms_client_conn_close(conn);
    }

    ngx_http_cms_client_nidle = 0;
}
