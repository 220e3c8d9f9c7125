
/*
 * The one-shot HTTP/1.1 client (ngx_http_cms_client.h).  Steps, each from
 * an event: resolved -> the address checked -> connected -> (TLS
 * handshake, certificate verified) -> request sent -> head read -> body
 * drained (bounded) -> finish.  Any failure, or the timer, finishes with
 * an error; finish closes the connection before done() runs.
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
static void ngx_http_cms_client_timeout(ngx_event_t *ev);
static void ngx_http_cms_client_finish(ngx_http_cms_client_t *cl,
    const char *error);
static void ngx_http_cms_client_close(ngx_http_cms_client_t *cl);
static void ngx_http_cms_client_cleanup(void *data);


ngx_int_t
ngx_http_cms_client_start(ngx_http_cms_client_t *cl)
{
    ngx_pool_cleanup_t  *cln;

    cl->log = *ngx_cycle->log;
    cl->log.action = "delivering a webhook";
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


/*
 * The first address is the one connected to, and the one checked: the
 * outbound rule on the very sockaddr given to connect(), so an answer
 * that changed since the endpoint was registered is judged again.
 */
static void
ngx_http_cms_client_resolved(void *data, ngx_int_t rc, ngx_addr_t *addrs,
    ngx_uint_t naddrs)
{
    ngx_http_cms_client_t *cl = data;

    if (ngx_exiting || ngx_terminate) {
        ngx_http_cms_client_finish(cl, "abandoned: the worker is quitting");
        return;
    }

    if (rc != NGX_OK || naddrs == 0) {
        ngx_http_cms_client_finish(cl, rc == NGX_DECLINED
                                       ? "the host has no address"
                                       : "the host could not be resolved");
        return;
    }

    ngx_memcpy(&cl->sockaddr, addrs[0].sockaddr, addrs[0].socklen);
    cl->socklen = addrs[0].socklen;
    ngx_inet_set_port(&cl->sockaddr.sockaddr, cl->port);

    cl->name.data = ngx_pnalloc(cl->pool, NGX_SOCKADDR_STRLEN);
    if (cl->name.data == NULL) {
        ngx_http_cms_client_finish(cl, "out of memory");
        return;
    }

    cl->name.len = ngx_sock_ntop(&cl->sockaddr.sockaddr, cl->socklen,
                                 cl->name.data, NGX_SOCKADDR_STRLEN, 1);

    addrs[0].sockaddr = &cl->sockaddr.sockaddr;

    if (ngx_http_cms_outbound_all_allowed(&addrs[0], 1, cl->ssl == NULL)
        != NGX_OK)
    {
        ngx_log_error(NGX_LOG_WARN, &cl->log, 0,
                      "cms: webhook host \"%V\" is at %V, an address "
                      "deliveries may not go to", &cl->host, &cl->name);
        ngx_http_cms_client_finish(cl, "the host's address is not public");
        return;
    }

    cl->step = "timed out connecting";
    ngx_http_cms_client_connect(cl);
}


static void
ngx_http_cms_client_connect(ngx_http_cms_client_t *cl)
{
    ngx_int_t          rc;
    ngx_connection_t  *c;

    cl->peer.sockaddr = &cl->sockaddr.sockaddr;
    cl->peer.socklen = cl->socklen;
    cl->peer.name = &cl->name;
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
    c->data = cl;
    c->pool = cl->pool;
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
                                       &cl->name)
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
            size = ngx_min(sizeof(buf), NGX_HTTP_CMS_CLIENT_BODY - cl->got);
            if (cl->body >= 0) {
                size = ngx_min((off_t) size, cl->body);
            }

            if (size == 0) {
                /* all the body said, or as much as is read: enough */
                ngx_http_cms_client_finish(cl, NULL);
                return;
            }

            n = c->recv(c, buf, size);
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
 * The head so far: NGX_AGAIN (incomplete), NGX_OK (complete: the status,
 * Content-Length, the body bytes that came with it counted), NGX_ERROR.
 */
static ngx_int_t
ngx_http_cms_client_head(ngx_http_cms_client_t *cl)
{
    u_char     *p, *end, *eol, *last;
    ngx_int_t   status, len;

    last = cl->head + cl->nhead;

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

    for (p = cl->head; p < end; p = eol + 2) {
        eol = ngx_strnstr(p, "\r\n", end + 2 - p);

        if (eol - p > 15 && ngx_strncasecmp(p, (u_char *) "content-length:",
                                            15) == 0)
        {
            for (p += 15; p < eol && *p == ' '; p++) { /* void */ }
            len = ngx_atoi(p, eol - p);
            cl->body = (len == NGX_ERROR) ? -1 : len;
        }
    }

    cl->headers = 1;
    cl->got = last - (end + 4);

    if (cl->body >= 0) {
        cl->body = ngx_max(cl->body - (off_t) cl->got, 0);
    }

    return NGX_OK;
}


static void
ngx_http_cms_client_timeout(ngx_event_t *ev)
{
    ngx_http_cms_client_t *cl = ev->data;

    ngx_http_cms_client_finish(cl, cl->error ? cl->error : cl->step);
}


/* the outcome, the connection closed, then done() (which may free all) */
static void
ngx_http_cms_client_finish(ngx_http_cms_client_t *cl, const char *error)
{
    if (cl->finished) {
        return;
    }

    cl->finished = 1;
    cl->error = error;
    cl->elapsed = ngx_current_msec - cl->start;

    if (error == NULL && cl->got >= NGX_HTTP_CMS_CLIENT_BODY) {
        ngx_log_error(NGX_LOG_INFO, &cl->log, 0,
                      "cms: the answer of \"%V\" was cut off after %uz "
                      "bytes of body", &cl->host, cl->got);
    }

    ngx_http_cms_client_close(cl);

    cl->done(cl);
}


static void
ngx_http_cms_client_close(ngx_http_cms_client_t *cl)
{
    ngx_connection_t  *c;

    if (cl->timer.timer_set) {
        ngx_del_timer(&cl->timer);
    }

    c = cl->peer.connection;

    if (c != NULL) {
        ngx_http_cms_crypto_tls_close(c);
        c->pool = NULL;                     /* cl's, not the connection's */
        ngx_close_connection(c);
        cl->peer.connection = NULL;
    }
}


/* the pool goes before done(): nothing may fire afterwards */
static void
ngx_http_cms_client_cleanup(void *data)
{
    ngx_http_cms_client_t *cl = data;

    cl->finished = 1;
    ngx_http_cms_client_close(cl);
}
