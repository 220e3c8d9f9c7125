
/*
 * The Redis pool's connections: a slot goes from DOWN through CONNECTING
 * (the host name resolved through nginx's resolver, the TCP connect, the
 * TLS handshake on nginx's SSL helpers, AUTH) to IDLE, under one timer
 * (the pool's timeout).  A failure at any step is a connect failure: the
 * pool backs off and its waiters get the Redis-down answer.
 *
 * A host name is resolved again at every connect (nginx's resolver keeps
 * an answer for its TTL, or "valid="), so a service that moved is found
 * by the next connection; nothing is resolved at load time.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <ngx_event_connect.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_redis.h"
#include "ngx_http_cms_redis_int.h"
#include "ngx_http_cms_metrics.h"
#include "ngx_http_cms_resolve.h"
#include "ngx_http_cms_crypto.h"


#if !(NGX_SSL)
#error "ngx_http_cms_module needs nginx built with SSL (--with-http_ssl_module)"
#endif


static void ngx_http_cms_redis_resolved(void *data, ngx_int_t rc,
    ngx_addr_t *addrs, ngx_uint_t naddrs);
static void ngx_http_cms_redis_moved(ngx_http_cms_redis_slot_t *s);
static ngx_int_t ngx_http_cms_redis_open(ngx_http_cms_redis_slot_t *s,
    struct sockaddr *sa, socklen_t socklen);
static void ngx_http_cms_redis_tls_start(ngx_http_cms_redis_slot_t *s);
static void ngx_http_cms_redis_tls_done(ngx_connection_t *c);
static void ngx_http_cms_redis_connected(ngx_http_cms_redis_slot_t *s);


/*
 * Starts a slot's connection: NGX_OK (CONNECTING, the rest comes from
 * events), or NGX_ERROR (logged, the slot DOWN, the pool backing off).
 */
ngx_int_t
ngx_http_cms_redis_connect(ngx_http_cms_redis_slot_t *s)
{
    ngx_http_cms_redis_conf_t  *rcf;

    rcf = ngx_http_cms_redis_pool.conf;

    ngx_http_cms_metric(NGX_HTTP_CMS_M_REDIS_CONNECTS);

    s->state = NGX_HTTP_CMS_REDIS_CONNECTING;
    ngx_add_timer(&s->timer, rcf->timeout);

    if (rcf->host.len == 0) {
        if (ngx_http_cms_redis_open(s, rcf->addr.sockaddr, rcf->addr.socklen)
            != NGX_OK)
        {
            goto failed;
        }

        return NGX_OK;
    }

    s->log.action = "resolving the redis host";

    s->resolving = ngx_create_pool(512, &s->log);

    if (s->resolving == NULL
        || ngx_http_cms_resolve_start(s->resolving, &s->log, &rcf->host,
                                      ngx_http_cms_redis_resolved, s)
           == NULL)
    {
        ngx_log_error(NGX_LOG_ERR, &s->log, 0,
                      "cms: cannot resolve the redis host \"%V\"",
                      &rcf->host);
        goto failed;
    }

    return NGX_OK;

failed:

    ngx_http_cms_redis_close(s);
    ngx_http_cms_redis_failed(NULL, 1);

    return NGX_ERROR;
}


/* the host name's addresses (from the event loop): connect to the first */
static void
ngx_http_cms_redis_resolved(void *data, ngx_int_t rc, ngx_addr_t *addrs,
    ngx_uint_t naddrs)
{
    ngx_http_cms_redis_slot_t *s = data;

    ngx_http_cms_redis_conf_t  *rcf;

    rcf = ngx_http_cms_redis_pool.conf;

    if (rc != NGX_OK || naddrs == 0) {
        ngx_log_error(NGX_LOG_ERR, &s->log, 0,
                      "cms: cannot resolve the redis host \"%V\"%s",
                      &rcf->host,
                      rc == NGX_DECLINED ? ": the name has no address" : "");
        ngx_http_cms_redis_failed(s, 1);
        return;
    }

    ngx_memcpy(&s->sockaddr, addrs[0].sockaddr, addrs[0].socklen);
    s->socklen = addrs[0].socklen;
    ngx_inet_set_port(&s->sockaddr.sockaddr, rcf->port);

    /* the lookup's state goes with it: allowed from inside its callback */
    ngx_destroy_pool(s->resolving);
    s->resolving = NULL;

    ngx_http_cms_redis_moved(s);

    if (ngx_http_cms_redis_open(s, &s->sockaddr.sockaddr, s->socklen)
        != NGX_OK)
    {
        ngx_http_cms_redis_failed(s, 1);
    }
}


/* one line when the name leads somewhere else than last time */
static void
ngx_http_cms_redis_moved(ngx_http_cms_redis_slot_t *s)
{
    size_t                      len;
    ngx_uint_t                  level;
    ngx_http_cms_redis_pool_t  *pool;
    u_char                      text[NGX_SOCKADDR_STRLEN];

    pool = &ngx_http_cms_redis_pool;

    if (pool->last_len == s->socklen
        && ngx_cmp_sockaddr(&pool->last.sockaddr, pool->last_len,
                            &s->sockaddr.sockaddr, s->socklen, 1)
           == NGX_OK)
    {
        return;
    }

    len = ngx_sock_ntop(&s->sockaddr.sockaddr, s->socklen, text,
                        NGX_SOCKADDR_STRLEN, 1);

    level = pool->last_len ? NGX_LOG_NOTICE : NGX_LOG_INFO;

    ngx_log_error(level, &s->log, 0, "cms: redis host \"%V\" %s %*s",
                  &pool->conf->host, pool->last_len ? "moved to" : "is at",
                  len, text);

    ngx_memcpy(&pool->last, &s->sockaddr, s->socklen);
    pool->last_len = s->socklen;
}


/* long: the three outcomes of ngx_event_connect_peer() */
static ngx_int_t
ngx_http_cms_redis_open(ngx_http_cms_redis_slot_t *s, struct sockaddr *sa,
    socklen_t socklen)
{
    ngx_int_t                   rc;
    ngx_connection_t           *c;
    ngx_http_cms_redis_conf_t  *rcf;

    rcf = ngx_http_cms_redis_pool.conf;

    ngx_memzero(&s->peer, sizeof(ngx_peer_connection_t));
    s->peer.sockaddr = sa;
    s->peer.socklen = socklen;
    s->peer.name = &rcf->addr.name;
    s->peer.get = ngx_event_get_peer;
    s->peer.log = &s->log;
    s->peer.log_error = NGX_ERROR_ERR;
    s->log.action = "connecting to redis";

    rc = ngx_event_connect_peer(&s->peer);

    if (rc == NGX_ERROR || rc == NGX_BUSY || rc == NGX_DECLINED) {
        ngx_log_error(NGX_LOG_ERR, &s->log, 0,
                      "cms: cannot connect to redis at \"%V\"",
                      &rcf->addr.name);
        return NGX_ERROR;
    }

    s->reader = redisReaderCreate();
    if (s->reader == NULL) {
        return NGX_ERROR;
    }

    c = s->peer.connection;
    c->data = s;
    c->log = &s->log;
    c->read->log = &s->log;
    c->write->log = &s->log;
    c->read->handler = ngx_http_cms_redis_read_handler;
    c->write->handler = ngx_http_cms_redis_write_handler;

    if (rc == NGX_OK) {
        /* connected at once (a unix socket): finish it from the handler */
        ngx_post_event(c->write, &ngx_posted_events);
    }

    return NGX_OK;
}


/* the connect's outcome, from the write (or read) handler */
void
ngx_http_cms_redis_tcp_done(ngx_http_cms_redis_slot_t *s)
{
    int                err;
    socklen_t          len;
    ngx_connection_t  *c;

    c = s->peer.connection;
    err = 0;
    len = sizeof(int);

    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, (void *) &err, &len) == -1
        || err != 0)
    {
        ngx_log_error(NGX_LOG_ERR, &s->log, err ? err : ngx_socket_errno,
                      "cms: connecting to redis failed");
        ngx_http_cms_redis_failed(s, 1);
        return;
    }

    if (ngx_http_cms_redis_pool.conf->ssl != NULL) {
        ngx_http_cms_redis_tls_start(s);
        return;
    }

    ngx_http_cms_redis_connected(s);
    ngx_http_cms_redis_kick();
}


/*
 * TLS as ngx_http_upstream_ssl_init_connection() does it: the client
 * side of nginx's SSL connection, the name as SNI, the handshake driven
 * by nginx's handshake handler until it calls tls_done().
 */
static void
ngx_http_cms_redis_tls_start(ngx_http_cms_redis_slot_t *s)
{
    ngx_int_t                   rc;
    ngx_connection_t           *c;
    ngx_http_cms_redis_conf_t  *rcf;

    rcf = ngx_http_cms_redis_pool.conf;
    c = s->peer.connection;

    /* the SSL connection's state lives in the connection's pool */
    c->pool = ngx_create_pool(128, &s->log);

    if (c->pool == NULL
        || ngx_ssl_create_connection(rcf->ssl, c, NGX_SSL_CLIENT) != NGX_OK
        || ngx_http_cms_crypto_tls_sni(c, &rcf->tls_name) != NGX_OK)
    {
        ngx_http_cms_redis_failed(s, 1);
        return;
    }

    s->log.action = "SSL handshaking to redis";

    rc = ngx_ssl_handshake(c);

    if (rc == NGX_AGAIN) {
        c->ssl->handler = ngx_http_cms_redis_tls_done;
        return;
    }

    ngx_http_cms_redis_tls_done(c);
}


/* the handshake ended: the certificate checked, then AUTH or idle */
static void
ngx_http_cms_redis_tls_done(ngx_connection_t *c)
{
    ngx_http_cms_redis_conf_t  *rcf;
    ngx_http_cms_redis_slot_t  *s;

    s = c->data;
    rcf = ngx_http_cms_redis_pool.conf;

    if (!c->ssl->handshaked) {
        ngx_log_error(NGX_LOG_ERR, &s->log, 0,
                      "cms: TLS handshake with redis at \"%V\" failed",
                      &rcf->addr.name);
        ngx_http_cms_redis_failed(s, 1);
        return;
    }

    if (ngx_http_cms_crypto_tls_verify(c, &rcf->tls_name, "redis",
                                       &rcf->addr.name)
        != NGX_OK)
    {
        ngx_http_cms_redis_failed(s, 1);
        return;
    }

    c->read->handler = ngx_http_cms_redis_read_handler;
    c->write->handler = ngx_http_cms_redis_write_handler;

    ngx_http_cms_redis_connected(s);
    ngx_http_cms_redis_kick();
}


/* the connection is up: AUTH first when configured (the timer still runs) */
static void
ngx_http_cms_redis_connected(ngx_http_cms_redis_slot_t *s)
{
    ngx_str_t  *auth;

    auth = &ngx_http_cms_redis_pool.conf->auth;

    if (auth->len && !s->authing) {
        s->authing = 1;
        s->state = NGX_HTTP_CMS_REDIS_BUSY;
        s->log.action = "authenticating to redis";
        s->pos = auth->data;
        s->last = auth->data + auth->len;
        s->expect = 1;
        s->got = 0;

        if (ngx_http_cms_redis_send(s) == NGX_ERROR) {
            ngx_http_cms_redis_failed(s, 1);
        }

        return;
    }

    s->authing = 0;

    if (s->timer.timer_set) {
        ngx_del_timer(&s->timer);
    }

    ngx_http_cms_redis_pool.backoff = 0;
    ngx_http_cms_redis_idle(s);
}


/* Redis answered AUTH: the slot is ready, or the connect failed */
void
ngx_http_cms_redis_authed(ngx_http_cms_redis_slot_t *s)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_redis_auth_check(ngx_http_cms_redis_pool.conf, &s->log,
                                       s->replies[0]);
    ngx_http_cms_redis_free_replies(s);

    if (rc != NGX_OK) {
        ngx_http_cms_redis_failed(s, 1);
        return;
    }

    ngx_http_cms_redis_connected(s);
    ngx_http_cms_redis_kick();
}


/* tears a slot down to DOWN; the caller answers its request, if any */
void
ngx_http_cms_redis_close(ngx_http_cms_redis_slot_t *s)
{
    ngx_connection_t  *c;

    if (s->timer.timer_set) {
        ngx_del_timer(&s->timer);
    }

    if (s->resolving != NULL) {
        /* its cleanup cancels a lookup still pending */
        ngx_destroy_pool(s->resolving);
        s->resolving = NULL;
    }

    c = s->peer.connection;

    if (c != NULL) {
        ngx_http_cms_crypto_tls_close(c);

        if (c->pool != NULL) {
            ngx_destroy_pool(c->pool);
            c->pool = NULL;
        }

        ngx_close_connection(c);
        s->peer.connection = NULL;
    }

    if (s->reader != NULL) {
        redisReaderFree(s->reader);
        s->reader = NULL;
    }

    ngx_http_cms_redis_free_replies(s);

    if (s->op != NULL) {
        s->op->slot = NULL;
        s->op = NULL;
    }

    s->pos = NULL;
    s->last = NULL;
    s->authing = 0;
    s->state = NGX_HTTP_CMS_REDIS_DOWN;
}
