
/*
 * The PostgreSQL pool's connections: host names resolved first when the
 * conninfo gives them without hostaddr= (through nginx's resolver, at
 * every connect, so that a moved server is followed), opening a slot's
 * connection without blocking (PQconnectStartParams, then PQconnectPoll
 * from events), the nginx connection around libpq's socket, what a failed
 * result says of the connection, and closing; which slot a statement
 * goes to (an idle one, or one with room in its pipeline), and the idle
 * ones' keeping.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <poll.h>
#include <sys/stat.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_pg_int.h"
#include "ngx_http_cms_metrics.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_resolve.h"


static u_char *ngx_http_cms_pg_log_context(ngx_log_t *log, u_char *buf,
    size_t len);
static ngx_int_t ngx_http_cms_pg_open(ngx_http_cms_pg_slot_t *slot,
    const char **values);
static void ngx_http_cms_pg_idle_handler(ngx_event_t *ev);
static ngx_int_t ngx_http_cms_pg_resolve(ngx_http_cms_pg_slot_t *slot);
static void ngx_http_cms_pg_resolved(void *data, ngx_int_t rc,
    ngx_addr_t *addrs, ngx_uint_t naddrs);
static ngx_int_t ngx_http_cms_pg_open_resolved(ngx_http_cms_pg_slot_t *slot);
static void ngx_http_cms_pg_notice(void *arg, const char *message);
static ino_t ngx_http_cms_pg_inode(ngx_socket_t fd);
static ngx_int_t ngx_http_cms_pg_follow(ngx_http_cms_pg_slot_t *slot);
static ngx_int_t ngx_http_cms_pg_settings(ngx_http_cms_pg_slot_t *slot);


/*
 * Starts a slot's connection: NGX_OK (CONNECTING, or already IDLE), or
 * NGX_ERROR (logged, the slot DOWN, the pool backing off).
 */
ngx_int_t
ngx_http_cms_pg_connect(ngx_http_cms_pg_slot_t *slot)
{
    ngx_int_t                rc;
    ngx_http_cms_pg_conf_t  *pcf;

    pcf = slot->pg->conf;
    ngx_http_cms_metric(NGX_HTTP_CMS_M_PG_CONNECTS);

    slot->state = NGX_HTTP_CMS_PG_CONNECTING;
    ngx_memzero(slot->prepared, NGX_HTTP_CMS_PG_MAX_STMTS);
    ngx_add_timer(&slot->timer, pcf->connect_timeout);

    if (pcf->hosts != NULL) {
        rc = ngx_http_cms_pg_resolve(slot);

    } else {
        rc = ngx_http_cms_pg_open(slot, pcf->values);

        if (rc == NGX_OK && ngx_http_cms_pg_connect_step(slot) == NGX_ERROR) {
            rc = NGX_ERROR;
        }
    }

    if (rc != NGX_OK) {
        ngx_http_cms_pg_close(slot);
        ngx_http_cms_pg_failed(slot->pg, NULL, 1);
        return NGX_ERROR;
    }

    return NGX_OK;
}


/* libpq's connection started and watched: NGX_OK, or NGX_ERROR (logged) */
static ngx_int_t
ngx_http_cms_pg_open(ngx_http_cms_pg_slot_t *slot, const char **values)
{
    slot->log.action = "connecting to postgres";
    slot->log.handler = ngx_http_cms_pg_log_context;
    slot->log.data = slot;

    slot->conn = PQconnectStartParams(slot->pg->conf->keywords,
                                      values, 0);

    if (slot->conn == NULL || PQstatus(slot->conn) == CONNECTION_BAD) {
        ngx_log_error(NGX_LOG_ERR, &slot->log, 0,
                      "cms: PQconnectStartParams() failed: %s",
                      slot->conn
                      ? ngx_http_cms_pg_oneline(PQerrorMessage(slot->conn))
                      : "no memory");
        return NGX_ERROR;
    }

    if (PQsetnonblocking(slot->conn, 1) != 0) {
        ngx_log_error(NGX_LOG_ERR, &slot->log, 0,
                      "cms: PQsetnonblocking() failed");
        return NGX_ERROR;
    }

    PQsetNoticeProcessor(slot->conn, ngx_http_cms_pg_notice, &slot->log);

    return ngx_http_cms_pg_wrap(slot);
}


/* the host names' lookups, one after the other, in a pool of the slot's */
static ngx_int_t
ngx_http_cms_pg_resolve(ngx_http_cms_pg_slot_t *slot)
{
    ngx_str_t               *host;
    ngx_http_cms_pg_conf_t  *pcf;

    pcf = slot->pg->conf;
    host = pcf->hosts->elts;

    if (slot->resolving == NULL) {
        slot->resolving = ngx_create_pool(1024, &slot->log);
        if (slot->resolving == NULL) {
            return NGX_ERROR;
        }

        slot->addrs = ngx_pnalloc(slot->resolving, pcf->hosts->nelts
                                                   * NGX_SOCKADDR_STRLEN);
        if (slot->addrs == NULL) {
            return NGX_ERROR;
        }

        slot->addrs_last = slot->addrs;
        slot->resolved = 0;
    }

    slot->log.action = "resolving the postgres host";

    if (ngx_http_cms_resolve_start(slot->resolving, &slot->log,
                                   &host[slot->resolved],
                                   ngx_http_cms_pg_resolved, slot)
        == NULL)
    {
        ngx_log_error(NGX_LOG_ERR, &slot->log, 0,
                      "cms: cannot resolve the postgres host \"%V\"",
                      &host[slot->resolved]);
        return NGX_ERROR;
    }

    return NGX_OK;
}


/* one name's addresses (from the event loop): its first one is kept */
static void
ngx_http_cms_pg_resolved(void *data, ngx_int_t rc, ngx_addr_t *addrs,
    ngx_uint_t naddrs)
{
    ngx_http_cms_pg_slot_t *slot = data;

    ngx_str_t               *host;
    ngx_http_cms_pg_conf_t  *pcf;

    pcf = slot->pg->conf;
    host = pcf->hosts->elts;

    if (rc != NGX_OK || naddrs == 0) {
        ngx_log_error(NGX_LOG_ERR, &slot->log, 0,
                      "cms: cannot resolve the postgres host \"%V\"%s",
                      &host[slot->resolved],
                      rc == NGX_DECLINED ? ": the name has no address" : "");
        ngx_http_cms_pg_failed(slot->pg, slot, 1);
        return;
    }

    if (slot->resolved) {
        *slot->addrs_last++ = ',';
    }

    slot->addrs_last += ngx_sock_ntop(addrs[0].sockaddr, addrs[0].socklen,
                                      slot->addrs_last,
                                      NGX_SOCKADDR_STRLEN - 1, 0);

    if (++slot->resolved < pcf->hosts->nelts) {
        rc = ngx_http_cms_pg_resolve(slot);

    } else {
        rc = ngx_http_cms_pg_open_resolved(slot);
    }

    if (rc != NGX_OK) {
        ngx_http_cms_pg_failed(slot->pg, slot, 1);
    }
}


/* every name has an address: libpq gets them as hostaddr= */
static ngx_int_t
ngx_http_cms_pg_open_resolved(ngx_http_cms_pg_slot_t *slot)
{
    size_t                   len;
    ngx_str_t               *host;
    ngx_uint_t               n, level;
    const char             **values;
    ngx_http_cms_pg_pool_t  *pool;

    pool = slot->pg;

    *slot->addrs_last = '\0';
    len = slot->addrs_last - slot->addrs;

    if (len != pool->last_len
        || ngx_strncmp(pool->last, slot->addrs, len) != 0)
    {
        level = pool->last_len ? NGX_LOG_NOTICE : NGX_LOG_INFO;
        host = pool->conf->hosts->elts;

        ngx_log_error(level, &slot->log, 0,
                      "cms: postgres host \"%V\"%s %s %s", &host[0],
                      pool->conf->hosts->nelts > 1 ? " and the next" : "",
                      pool->last_len ? "moved to" : "is at", slot->addrs);

        pool->last_len = ngx_min(len, NGX_HTTP_CMS_PG_LAST_ADDRS);
        ngx_memcpy(pool->last, slot->addrs, pool->last_len);
    }

    for (n = 0; pool->conf->keywords[n] != NULL; n++) { /* void */ }

    values = ngx_pnalloc(slot->resolving, (n + 1) * sizeof(char *));
    if (values == NULL) {
        return NGX_ERROR;
    }

    ngx_memcpy(values, pool->conf->values, (n + 1) * sizeof(char *));
    values[pool->conf->hostaddr] = (char *) slot->addrs;

    /* libpq keeps its own copies: the lookups' pool can go */
    if (ngx_http_cms_pg_open(slot, values) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_destroy_pool(slot->resolving);
    slot->resolving = NULL;

    /* the event handler polls, and kicks the pool when connected */
    ngx_post_event(slot->c->write, &ngx_posted_events);

    return NGX_OK;
}

/* wraps PQsocket() in an nginx connection; libpq keeps owning the fd */
ngx_int_t
ngx_http_cms_pg_wrap(ngx_http_cms_pg_slot_t *slot)
{
    ngx_connection_t  *c;

    /* a failed connection has no socket: nothing to watch */
    if (PQsocket(slot->conn) < 0) {
        return NGX_ERROR;
    }

    c = ngx_get_connection(PQsocket(slot->conn), &slot->log);
    if (c == NULL) {
        return NGX_ERROR;
    }

    c->data = slot;
    c->log = &slot->log;
    c->read->log = &slot->log;
    c->write->log = &slot->log;
    c->read->handler = ngx_http_cms_pg_event_handler;
    c->write->handler = ngx_http_cms_pg_event_handler;

    slot->c = c;
    slot->ino = ngx_http_cms_pg_inode(c->fd);

    if (ngx_add_conn) {
        if (ngx_add_conn(c) == NGX_ERROR) {
            return NGX_ERROR;
        }

    } else if (ngx_add_event(c->read, NGX_READ_EVENT, NGX_CLEAR_EVENT)
               == NGX_ERROR
               || ngx_add_event(c->write, NGX_WRITE_EVENT, NGX_CLEAR_EVENT)
               == NGX_ERROR)
    {
        return NGX_ERROR;
    }

    return NGX_OK;
}

/* frees the nginx connection without closing the fd: libpq closes it */
void
ngx_http_cms_pg_unwrap(ngx_http_cms_pg_slot_t *slot)
{
    ngx_connection_t  *c;

    c = slot->c;

    if (c == NULL) {
        return;
    }

    if (c->read->timer_set) {
        ngx_del_timer(c->read);
    }

    if (c->write->timer_set) {
        ngx_del_timer(c->write);
    }

    if (c->read->posted) {
        ngx_delete_posted_event(c->read);
    }

    if (c->write->posted) {
        ngx_delete_posted_event(c->write);
    }

    /* the fd is about to be closed (or already was): no epoll_ctl call */
    if (ngx_del_conn) {
        ngx_del_conn(c, NGX_CLOSE_EVENT);

    } else {
        if (c->read->active) {
            ngx_del_event(c->read, NGX_READ_EVENT, NGX_CLOSE_EVENT);
        }

        if (c->write->active) {
            ngx_del_event(c->write, NGX_WRITE_EVENT, NGX_CLOSE_EVENT);
        }
    }

    ngx_free_connection(c);

    /* as ngx_close_connection() does, or the exit check sees a leak */
    c->fd = (ngx_socket_t) -1;
    slot->c = NULL;
}

/*
 * Drives PQconnectPoll() as far as it goes without waiting.  Returns
 * NGX_OK (connected, slot idle or given a waiter), NGX_AGAIN (waiting
 * for an event) or NGX_ERROR (failed, logged; the caller closes).
 */
/* long: a flat switch over PQconnectPoll()'s states */
ngx_int_t
ngx_http_cms_pg_connect_step(ngx_http_cms_pg_slot_t *slot)
{
    ngx_uint_t                 n;
    PostgresPollingStatusType  st;

    for (n = 0; n < NGX_HTTP_CMS_PG_POLL_STEPS; n++) {

        st = PQconnectPoll(slot->conn);

        if (st == PGRES_POLLING_FAILED) {
            ngx_log_error(NGX_LOG_ERR, &slot->log, 0,
                          "cms: PQconnectPoll() failed: %s",
                          ngx_http_cms_pg_oneline(PQerrorMessage(slot->conn)));
            return NGX_ERROR;
        }

        if (ngx_http_cms_pg_follow(slot) != NGX_OK) {
            return NGX_ERROR;
        }

        switch (st) {

        case PGRES_POLLING_OK:
            if (ngx_http_cms_pg_settings(slot) != NGX_OK) {
                return NGX_ERROR;
            }

            if (slot->timer.timer_set) {
                ngx_del_timer(&slot->timer);
            }

            /* each statement then goes with its Sync (_pg.c) */
            if (!PQenterPipelineMode(slot->conn)) {
                ngx_log_error(NGX_LOG_ERR, &slot->log, 0,
                              "cms: PQenterPipelineMode() failed: %s",
                              ngx_http_cms_pg_oneline(
                                  PQerrorMessage(slot->conn)));
                return NGX_ERROR;
            }

            slot->pg->backoff = 0;
            ngx_log_debug1(NGX_LOG_DEBUG_HTTP, &slot->log, 0,
                           "cms pg connected, fd:%d", slot->c->fd);
            ngx_http_cms_pg_idle(slot);
            return NGX_OK;

        case PGRES_POLLING_READING:
            /*
             * With TLS libpq reads the answer to its SSLRequest, runs
             * the handshake (SSL_connect() asks for reading or writing
             * in turn) and then authenticates through OpenSSL: ready()
             * counts what OpenSSL already holds.
             */
            if (ngx_http_cms_pg_ready(slot, POLLIN) == NGX_DECLINED) {
                return NGX_AGAIN;
            }

            break;

        case PGRES_POLLING_WRITING:
            /* after CONNECTION_MADE libpq asks for writing with no I/O */
            if (ngx_http_cms_pg_ready(slot, POLLOUT) == NGX_DECLINED) {
                return NGX_AGAIN;
            }

            break;

        default:
            ngx_log_error(NGX_LOG_ERR, &slot->log, 0,
                          "cms: PQconnectPoll() failed: %s",
                          ngx_http_cms_pg_oneline(PQerrorMessage(slot->conn)));
            return NGX_ERROR;
        }
    }

    ngx_log_error(NGX_LOG_ALERT, &slot->log, 0,
                  "cms: PQconnectPoll() made no progress");

    return NGX_ERROR;
}

/*
 * libpq moves to the next host or address (a refusal, a failed TLS
 * handshake or certificate check) by closing its socket and opening
 * another, which usually gets the same number: the socket's inode tells
 * them apart.  The closed one left epoll with its last descriptor, so the
 * new one must be added.  NGX_OK, or NGX_ERROR.
 */
static ngx_int_t
ngx_http_cms_pg_follow(ngx_http_cms_pg_slot_t *slot)
{
    if (slot->c != NULL && PQsocket(slot->conn) == slot->c->fd
        && ngx_http_cms_pg_inode(slot->c->fd) == slot->ino)
    {
        return NGX_OK;
    }

    ngx_log_debug1(NGX_LOG_DEBUG_HTTP, &slot->log, 0,
                   "cms pg socket switched, fd:%d", PQsocket(slot->conn));

    ngx_http_cms_pg_unwrap(slot);

    return ngx_http_cms_pg_wrap(slot);
}


/*
 * Whether libpq would find something without waiting: NGX_OK when the
 * socket is ready for "events" (or has an error or EOF pending), or, for
 * reading over TLS, when OpenSSL holds decrypted bytes; NGX_DECLINED when
 * neither.  poll(2) with a zero timeout sees only the kernel's buffer.
 *
 * With TLS, PQconsumeInput() reads through SSL_read() at most the free
 * space of libpq's buffer (8 to 16 KB at first), while a record carries
 * up to 16 KB: OpenSSL takes the whole record from the kernel and keeps
 * the rest of its plaintext.  The socket is then empty, epoll reports
 * nothing more, and only SSL_pending() knows a read would succeed; a
 * caller that waited for an edge here would wait until its timeout.  (For
 * one wakeup nginx's epoll module often calls the write handler after the
 * read handler, which reads once more and hides this: a coincidence of
 * the event module, not something to rely on.)  A partial record left in
 * OpenSSL is not counted: its rest is still to come through the socket,
 * with an edge.
 */
ngx_int_t
ngx_http_cms_pg_ready(ngx_http_cms_pg_slot_t *slot, short events)
{
    size_t         n;
    struct pollfd  pfd;

    n = (events & POLLIN)
        ? ngx_http_cms_crypto_tls_pending(PQsslStruct(slot->conn, "OpenSSL"))
        : 0;

    if (n) {
        ngx_log_debug1(NGX_LOG_DEBUG_HTTP, &slot->log, 0,
                       "cms pg tls: %uz bytes decrypted, not read yet", n);
        return NGX_OK;
    }

    pfd.fd = PQsocket(slot->conn);
    pfd.events = events;
    pfd.revents = 0;

    if (pfd.fd < 0) {
        return NGX_OK;
    }

    if (poll(&pfd, 1, 0) == 0) {
        return NGX_DECLINED;
    }

    return NGX_OK;
}

/* tears a slot down to DOWN; the caller answers its request, if any */
void
ngx_http_cms_pg_close(ngx_http_cms_pg_slot_t *slot)
{
    ngx_http_cms_pg_query_t  *q;

    if (slot->timer.timer_set) {
        ngx_del_timer(&slot->timer);
    }

    if (slot->resolving != NULL) {
        /* its cleanup cancels a lookup still pending */
        ngx_destroy_pool(slot->resolving);
        slot->resolving = NULL;
    }

    ngx_http_cms_pg_unwrap(slot);

    if (slot->result != NULL) {
        PQclear(slot->result);
        slot->result = NULL;
    }

    if (slot->conn != NULL) {
        PQfinish(slot->conn);
        slot->conn = NULL;
    }

    /* the statements in flight are their callers' to answer */
    for ( /* void */ ; slot->nsent; slot->nsent--) {
        q = slot->sent[slot->first].query;

        if (q != NULL) {
            q->slot = NULL;
        }

        slot->first = (slot->first + 1) % slot->pg->conf->depth;
    }

    slot->first = 0;
    slot->state = NGX_HTTP_CMS_PG_DOWN;
}

/*
 * What a result means for its request: NGX_OK (deliver it), NGX_AGAIN (a
 * serialization failure or deadlock of a statement safe to retry, not
 * retried yet), NGX_DECLINED (the server gave up or refused for now: no
 * answer) or NGX_ABORT (the same, and the connection must go: it was
 * shut down, or it leads to a server that can no longer write).
 */
/* long: a flat table of SQLSTATE classes */
ngx_int_t
ngx_http_cms_pg_verdict(ngx_http_cms_pg_slot_t *slot,
    ngx_http_cms_pg_query_t *q, PGresult *res)
{
    char  *state, *msg;

    if (res == NULL || PQresultStatus(res) != PGRES_FATAL_ERROR) {
        return NGX_OK;
    }

    state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
    msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

    if (state == NULL || ngx_strlen(state) != 5) {
        if (PQstatus(slot->conn) == CONNECTION_OK) {
            return NGX_OK;
        }

        /* libpq's own error: the connection went away under the query */
        ngx_log_error(NGX_LOG_ERR, &slot->log, 0,
                      "cms: postgres connection lost: %s",
                      ngx_http_cms_pg_oneline(PQerrorMessage(slot->conn)));
        return NGX_ABORT;
    }

    if (ngx_strncmp(state, "40", 2) == 0
        && q != NULL && q->stmt->retry && !q->retried)
    {
        ngx_log_error(NGX_LOG_WARN, &slot->log, 0,
                      "cms: postgres refused a statement (SQLSTATE %s), "
                      "running it again", state);
        return NGX_AGAIN;
    }

    if (ngx_strncmp(state, "40", 2) != 0
        && ngx_strncmp(state, "57", 2) != 0
        && ngx_strncmp(state, "08", 2) != 0
        && ngx_strncmp(state, "53", 2) != 0
        && ngx_strcmp(state, "25006") != 0)
    {
        return NGX_OK;
    }

    if (slot->pg->replica && q != NULL && ngx_strcmp(state, "25006") == 0) {
        /* a GET's statement that writes: the primary's from now on */
        ngx_log_error(NGX_LOG_WARN, &slot->log, 0,
                      "cms: statement %s writes: it runs on the primary "
                      "from now on", q->stmt->name);
        q->stmt->primary = 1;
        return NGX_DECLINED;
    }

    ngx_log_error(NGX_LOG_ERR, &slot->log, 0,
                  "cms: postgres gave up on a statement: %s (SQLSTATE %s)",
                  msg ? msg : "", state);

    /* 57014 (a timeout) and 40xxx leave a sound connection behind */
    if (ngx_strcmp(state, "57014") == 0 || ngx_strncmp(state, "40", 2) == 0
        || ngx_strncmp(state, "53", 2) == 0)
    {
        return NGX_DECLINED;
    }

    return NGX_ABORT;
}

/* a socket's identity: numbers are reused, inodes are not while open */
/*
 * The session's time settings are the module's (NGX_HTTP_CMS_PG_TIME,
 * ngx_http_cms_pg_conf.c): answers' times are written from their text.
 * A pooler that drops the startup options, or PGTZ / PGDATESTYLE in
 * nginx's environment (sent after the options), would change them
 * silently: such a connection is refused, and says why.
 */
static ngx_int_t
ngx_http_cms_pg_settings(ngx_http_cms_pg_slot_t *slot)
{
    const char  *tz, *ds;

    tz = PQparameterStatus(slot->conn, "TimeZone");
    ds = PQparameterStatus(slot->conn, "DateStyle");

    if (tz != NULL && ds != NULL && ngx_strcmp(tz, "UTC") == 0
        && ngx_strncmp(ds, "ISO", 3) == 0)
    {
        return NGX_OK;
    }

    ngx_log_error(NGX_LOG_ERR, &slot->log, 0,
                  "cms: the session's TimeZone is \"%s\" and DateStyle "
                  "\"%s\", not UTC and ISO: the connection's options did "
                  "not reach the server (a pooler that ignores startup "
                  "options, or PGTZ or PGDATESTYLE set)",
                  tz ? tz : "", ds ? ds : "");

    return NGX_ERROR;
}


static ino_t
ngx_http_cms_pg_inode(ngx_socket_t fd)
{
    struct stat  st;

    if (fd < 0 || fstat(fd, &st) == -1) {
        return 0;
    }

    return st.st_ino;
}

/* the default notice processor prints to stderr */
static void
ngx_http_cms_pg_notice(void *arg, const char *message)
{
    ngx_log_t *log = arg;

    ngx_log_error(NGX_LOG_INFO, log, 0, "cms: postgres notice: %s", message);
}


/*
 * What a connection's log lines end with: the action, and the server
 * libpq talks to (PQhost(), PQport(): accessors, no I/O)
 */
static u_char *
ngx_http_cms_pg_log_context(ngx_log_t *log, u_char *buf, size_t len)
{
    u_char                  *p;
    const char              *host, *port;
    ngx_http_cms_pg_slot_t  *slot;

    slot = log->data;
    p = buf;

    if (log->action) {
        p = ngx_snprintf(p, len, " while %s", log->action);
    }

    host = (slot->conn != NULL) ? PQhost(slot->conn) : NULL;

    if (host != NULL && host[0] != '\0') {
        port = PQport(slot->conn);
        p = ngx_snprintf(p, len - (p - buf), ", postgres: %s%s%s", host,
                         port && port[0] ? ":" : "", port ? port : "");
    }

    return p;
}


const char *
ngx_http_cms_pg_oneline(const char *msg)
{
    static u_char  line[NGX_HTTP_CMS_PG_LINE];

    u_char   *p, *last;
    size_t    n;

    if (msg == NULL) {
        return "";
    }

    p = line;
    last = line + sizeof(line) - 1;

    /* each newline and the blanks after it become "; ", none at the end */
    while (*msg && p < last) {
        if (*msg != '\n') {
            *p++ = (u_char) *msg++;
            continue;
        }

        while (*msg == '\n' || *msg == ' ' || *msg == '\t') {
            msg++;
        }

        if (*msg && last - p > 2) {
            *p++ = ';';
            *p++ = ' ';
        }
    }

    n = p - line;
    line[n] = '\0';

    return (const char *) line;
}


/* the pool's choice of a slot, and its idle ones (_pg.c) */

/* an idle slot whose connection is still sound, or NULL */
ngx_http_cms_pg_slot_t *
ngx_http_cms_pg_acquire(ngx_http_cms_pg_pool_t *pg)
{
    ngx_int_t                rc;
    ngx_uint_t               i;
    ngx_http_cms_pg_slot_t  *slot;

    for (i = 0; i < pg->conf->max; i++) {
        slot = &pg->slots[i];

        if (slot->state != NGX_HTTP_CMS_PG_IDLE) {
            continue;
        }

        /*
         * An idle connection has nothing to read: data means FATAL or
         * EOF.  Without a system call where nginx can tell (_module.h);
         * over TLS, OpenSSL may hold what the socket no longer shows.
         */
        rc = PQsslInUse(slot->conn) ? NGX_DECLINED
                                    : ngx_http_cms_idle_sound(slot->c);

        if (rc == NGX_DECLINED) {
            rc = (ngx_http_cms_pg_ready(slot, POLLIN) == NGX_DECLINED)
                 ? NGX_OK : NGX_ERROR;
        }

        if (rc != NGX_OK) {
            ngx_log_error(NGX_LOG_WARN, &slot->log, 0,
                          "cms: postgres closed an idle connection");
            ngx_http_cms_pg_close(slot);
            continue;
        }

        return slot;
    }

    return NULL;
}


/*
 * With no idle slot: the busy one with the fewest statements in flight,
 * fewer than depth=, or NULL (always with depth=1).  A statement waits
 * there, on the server, rather than in the pool's queue.
 */
ngx_http_cms_pg_slot_t *
ngx_http_cms_pg_pipeline(ngx_http_cms_pg_pool_t *pg)
{
    ngx_uint_t               i;
    ngx_http_cms_pg_slot_t  *slot, *best;

    best = NULL;

    for (i = 0; i < pg->conf->max; i++) {
        slot = &pg->slots[i];

        if (slot->state == NGX_HTTP_CMS_PG_QUERYING
            && slot->nsent < pg->conf->depth
            && (best == NULL || slot->nsent < best->nsent))
        {
            best = slot;
        }
    }

    return best;
}


/* whether any slot is connected or connecting */
ngx_uint_t
ngx_http_cms_pg_live(ngx_http_cms_pg_pool_t *pg)
{
    ngx_uint_t  i;

    for (i = 0; i < pg->conf->max; i++) {
        if (pg->slots[i].state != NGX_HTTP_CMS_PG_DOWN) {
            return 1;
        }
    }

    return 0;
}


/*
 * Puts a connected slot back: idle, watched for EOF, closable on reload.
 * Every caller kicks the pool next, which closes it in an exiting worker
 * unless a waiter, or the next step of the request just answered, has it.
 */
void
ngx_http_cms_pg_idle(ngx_http_cms_pg_slot_t *slot)
{
    slot->state = NGX_HTTP_CMS_PG_IDLE;
    slot->log.action = "keeping a postgres connection";
    slot->c->idle = 1;
    slot->c->read->handler = ngx_http_cms_pg_idle_handler;
    slot->c->write->handler = ngx_http_cms_pg_idle_handler;
}


static void
ngx_http_cms_pg_idle_handler(ngx_event_t *ev)
{
    ngx_connection_t        *c;
    ngx_http_cms_pg_slot_t  *slot;

    c = ev->data;
    slot = c->data;

    if (c->close) {
        /* nginx is reloading or quitting: ngx_close_idle_connections() */
        ngx_http_cms_pg_close(slot);
        return;
    }

    if (!ev->write && ngx_http_cms_pg_ready(slot, POLLIN) == NGX_OK) {
        ngx_log_error(NGX_LOG_WARN, &slot->log, 0,
                      "cms: postgres closed an idle connection");
        ngx_http_cms_pg_close(slot);
    }
}


/* the primary pool's state, for cms_status and the test routes */
void
ngx_http_cms_pg_stats(ngx_http_cms_pool_stats_t *st)
{
    ngx_uint_t               i;
    ngx_http_cms_pg_slot_t  *slot;

    ngx_memzero(st, sizeof(ngx_http_cms_pool_stats_t));

    if (ngx_http_cms_pg_pool.conf == NULL) {
        return;
    }

    st->max = ngx_http_cms_pg_pool.conf->max;
    st->queued = ngx_http_cms_pg_pool.nwaiting;

    for (i = 0; i < st->max; i++) {
        slot = &ngx_http_cms_pg_pool.slots[i];

        switch (slot->state) {
        case NGX_HTTP_CMS_PG_DOWN:
            continue;

        case NGX_HTTP_CMS_PG_IDLE:
            st->idle++;
            break;

        default:
            st->busy++;
            st->pipelined += slot->nsent ? slot->nsent - 1 : 0;
        }

        st->connections++;
    }
}
