
/*
 * The per-worker PostgreSQL pool.
 *
 * Each slot owns a PGconn whose socket is wrapped in an nginx connection.
 * nginx's epoll is edge-triggered and libpq does not always read or write
 * what an edge announced (ASYNC-NOTES.md), so before waiting for an edge
 * every step asks poll(2) with a zero timeout whether the socket is already
 * ready, and goes on at once if it is.
 *
 * A query belongs to a request but lives in the slot's care: a request-pool
 * cleanup detaches it, after which the slot drains the result (bounded by
 * the query timer) and goes back to the pool, or is closed.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <poll.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_pg.h"
#include "cms_validate.h"


#define NGX_HTTP_CMS_PG_BACKOFF_MIN    100
#define NGX_HTTP_CMS_PG_BACKOFF_MAX    2000
#define NGX_HTTP_CMS_PG_POLL_STEPS     1000


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
    ngx_log_t                   log;
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
};


typedef struct {
    ngx_http_cms_pg_conf_t     *conf;
    ngx_http_cms_pg_slot_t     *slots;
    ngx_queue_t                 waiting;
    ngx_uint_t                  nwaiting;
    ngx_msec_t                  backoff;
    ngx_msec_t                  retry_at;
    ngx_uint_t                  nstmts;
} ngx_http_cms_pg_pool_t;


static ngx_int_t ngx_http_cms_pg_connect(ngx_http_cms_pg_slot_t *slot);
static ngx_int_t ngx_http_cms_pg_wrap(ngx_http_cms_pg_slot_t *slot);
static void ngx_http_cms_pg_unwrap(ngx_http_cms_pg_slot_t *slot);
static ngx_int_t ngx_http_cms_pg_connect_step(ngx_http_cms_pg_slot_t *slot);
static ngx_int_t ngx_http_cms_pg_start(ngx_http_cms_pg_slot_t *slot,
    ngx_http_cms_pg_query_t *q);
static ngx_int_t ngx_http_cms_pg_send(ngx_http_cms_pg_slot_t *slot);
static ngx_int_t ngx_http_cms_pg_io(ngx_http_cms_pg_slot_t *slot);
static ngx_int_t ngx_http_cms_pg_step_done(ngx_http_cms_pg_slot_t *slot);
static void ngx_http_cms_pg_finished(ngx_http_cms_pg_slot_t *slot);
static void ngx_http_cms_pg_event_handler(ngx_event_t *ev);
static void ngx_http_cms_pg_idle_handler(ngx_event_t *ev);
static void ngx_http_cms_pg_timer_handler(ngx_event_t *ev);
static void ngx_http_cms_pg_wait_handler(ngx_event_t *ev);
static void ngx_http_cms_pg_failed(ngx_http_cms_pg_slot_t *slot,
    ngx_uint_t connect);
static void ngx_http_cms_pg_close(ngx_http_cms_pg_slot_t *slot);
static void ngx_http_cms_pg_idle(ngx_http_cms_pg_slot_t *slot);
static void ngx_http_cms_pg_kick(void);
static ngx_http_cms_pg_slot_t *ngx_http_cms_pg_acquire(void);
static ngx_uint_t ngx_http_cms_pg_live(void);
static void ngx_http_cms_pg_deliver(ngx_http_cms_pg_query_t *q,
    PGresult *res);
static void ngx_http_cms_pg_detach(void *data);
static ngx_http_cms_pg_query_t *ngx_http_cms_pg_prepare(ngx_pool_t *pool,
    ngx_log_t *log, ngx_http_cms_pg_stmt_t *stmt, ngx_str_t *args,
    ngx_uint_t nargs);
static ngx_int_t ngx_http_cms_pg_submit(ngx_http_cms_pg_query_t *q);
static ngx_int_t ngx_http_cms_pg_ready(ngx_http_cms_pg_slot_t *slot,
    short events);
static void ngx_http_cms_pg_notice(void *arg, const char *message);
static char *ngx_http_cms_pg_conninfo(ngx_conf_t *cf,
    ngx_http_cms_pg_conf_t *pcf, ngx_str_t *conninfo);
static char *ngx_http_cms_pg_strdup(ngx_pool_t *pool, const char *s);
static ngx_uint_t ngx_http_cms_pg_error_code(const char *state,
    const char *msg);
static ngx_int_t ngx_http_cms_pg_fail(ngx_http_request_t *r, PGresult *res,
    ngx_uint_t code);


static ngx_http_cms_pg_pool_t  ngx_http_cms_pg_pool;


/* configuration */

char *
ngx_http_cms_pg_conf(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_cms_main_conf_t *mcf = conf;

    ngx_int_t                n;
    ngx_str_t               *value, s;
    ngx_uint_t               i;
    ngx_msec_t              *ms;
    ngx_http_cms_pg_conf_t  *pcf;

    if (mcf->pg != NULL) {
        return "is duplicate";
    }

    pcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_cms_pg_conf_t));
    if (pcf == NULL) {
        return NGX_CONF_ERROR;
    }

    pcf->max = 16;
    pcf->queue = 256;
    pcf->queue_timeout = 5000;
    pcf->query_timeout = 10000;
    pcf->connect_timeout = 3000;

    value = cf->args->elts;

    for (i = 2; i < cf->args->nelts; i++) {

        if (ngx_strncmp(value[i].data, "max=", 4) == 0
            || ngx_strncmp(value[i].data, "queue=", 6) == 0)
        {
            s.data = (u_char *) ngx_strchr(value[i].data, '=') + 1;
            s.len = value[i].data + value[i].len - s.data;
            n = ngx_atoi(s.data, s.len);

            if (n == NGX_ERROR || (n == 0 && value[i].data[0] == 'm')) {
                goto invalid;
            }

            *(value[i].data[0] == 'm' ? &pcf->max : &pcf->queue) = n;
            continue;
        }

        if (ngx_strncmp(value[i].data, "queue_timeout=", 14) == 0) {
            ms = &pcf->queue_timeout;

        } else if (ngx_strncmp(value[i].data, "query_timeout=", 14) == 0) {
            ms = &pcf->query_timeout;

        } else if (ngx_strncmp(value[i].data, "connect_timeout=", 16) == 0) {
            ms = &pcf->connect_timeout;

        } else {
            goto invalid;
        }

        s.data = (u_char *) ngx_strchr(value[i].data, '=') + 1;
        s.len = value[i].data + value[i].len - s.data;
        *ms = ngx_parse_time(&s, 0);

        if (*ms == (ngx_msec_t) NGX_ERROR || *ms == 0) {
            goto invalid;
        }
    }

    if (ngx_http_cms_pg_conninfo(cf, pcf, &value[1]) != NGX_CONF_OK) {
        return NGX_CONF_ERROR;
    }

    mcf->pg = pcf;

    return NGX_CONF_OK;

invalid:

    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                       "invalid parameter \"%V\" in \"cms_postgres\"",
                       &value[i]);

    return NGX_CONF_ERROR;
}


/*
 * Parses the conninfo with libpq's own (pure) parser and refuses what
 * would block a worker: a host name (libpq resolves it with a blocking
 * name lookup), a service file, TLS (buffered plaintext is invisible to
 * the readiness checks).  Adds what non-blocking operation needs.
 */
static char *
ngx_http_cms_pg_conninfo(ngx_conf_t *cf, ngx_http_cms_pg_conf_t *pcf,
    ngx_str_t *conninfo)
{
    char               *err, *ci, *p;
    ngx_uint_t          n, i, addr, timeout;
    const char         *host, *sslmode, *options;
    PQconninfoOption   *opts, *o;

    ci = (char *) ngx_pnalloc(cf->pool, conninfo->len + 1);
    if (ci == NULL) {
        return NGX_CONF_ERROR;
    }

    (void) ngx_cpystrn((u_char *) ci, conninfo->data, conninfo->len + 1);

    err = NULL;
    opts = PQconninfoParse(ci, &err);

    if (opts == NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_postgres: invalid conninfo: %s",
                           err ? err : "out of memory");
        PQfreemem(err);
        return NGX_CONF_ERROR;
    }

    n = 0;
    addr = 0;
    host = NULL;
    sslmode = NULL;
    options = NULL;

    for (o = opts; o->keyword; o++) {
        if (o->val == NULL) {
            continue;
        }

        n++;

        if (ngx_strcmp(o->keyword, "hostaddr") == 0) {
            addr = 1;

        } else if (ngx_strcmp(o->keyword, "host") == 0) {
            host = o->val;

        } else if (ngx_strcmp(o->keyword, "sslmode") == 0) {
            sslmode = o->val;

        } else if (ngx_strcmp(o->keyword, "options") == 0) {
            options = o->val;

        } else if (ngx_strcmp(o->keyword, "service") == 0) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "cms_postgres: \"service\" is not supported");
            goto failed;
        }
    }

    if (!addr && (host == NULL || host[0] != '/' || ngx_strchr(host, ','))) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_postgres: use \"hostaddr=\" with an IP "
                           "address or \"host=\" with a socket folder; a "
                           "host name would be resolved by a blocking "
                           "name lookup in the worker");
        goto failed;
    }

    if (sslmode != NULL && ngx_strcmp(sslmode, "disable") != 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_postgres: sslmode \"%s\" is not supported, "
                           "only \"disable\" (use a local socket or a "
                           "trusted network)", sslmode);
        goto failed;
    }

    /* what we add: sslmode, gssencmode, application name, options */
    pcf->keywords = ngx_pcalloc(cf->pool, (n + 5) * sizeof(char *));
    pcf->values = ngx_pcalloc(cf->pool, (n + 5) * sizeof(char *));

    if (pcf->keywords == NULL || pcf->values == NULL) {
        goto failed;
    }

    i = 0;

    for (o = opts; o->keyword; o++) {
        if (o->val == NULL || ngx_strcmp(o->keyword, "options") == 0) {
            continue;
        }

        pcf->keywords[i] = ngx_http_cms_pg_strdup(cf->pool, o->keyword);
        pcf->values[i++] = ngx_http_cms_pg_strdup(cf->pool, o->val);

        if (pcf->keywords[i - 1] == NULL || pcf->values[i - 1] == NULL) {
            goto failed;
        }
    }

    /* the server gives up a little before the module does */
    timeout = pcf->query_timeout > 1000 ? pcf->query_timeout - 500
                                        : pcf->query_timeout * 9 / 10;

    p = ngx_pnalloc(cf->pool, (options ? ngx_strlen(options) : 0) + 64);
    if (p == NULL) {
        goto failed;
    }

    ngx_sprintf((u_char *) p, "%s%s-c statement_timeout=%ui%Z",
                options ? options : "", options ? " " : "", timeout);

    pcf->keywords[i] = "options";
    pcf->values[i++] = p;
    pcf->keywords[i] = "gssencmode";
    pcf->values[i++] = "disable";
    pcf->keywords[i] = "fallback_application_name";
    pcf->values[i++] = "ngx_http_cms";

    if (sslmode == NULL) {
        pcf->keywords[i] = "sslmode";
        pcf->values[i++] = "disable";
    }

    PQconninfoFree(opts);

    return NGX_CONF_OK;

failed:

    PQconninfoFree(opts);

    return NGX_CONF_ERROR;
}


/* libpq's parsed values die with PQconninfoFree(): keep copies */
static char *
ngx_http_cms_pg_strdup(ngx_pool_t *pool, const char *s)
{
    size_t   len;
    u_char  *p;

    len = ngx_strlen(s) + 1;
    p = ngx_pnalloc(pool, len);

    if (p != NULL) {
        ngx_memcpy(p, s, len);
    }

    return (char *) p;
}


/* worker lifetime */

ngx_int_t
ngx_http_cms_pg_init_process(ngx_cycle_t *cycle, ngx_http_cms_pg_conf_t *pcf)
{
    ngx_uint_t               i;
    ngx_http_cms_pg_pool_t  *pool;
    ngx_http_cms_pg_slot_t  *slot;

    pool = &ngx_http_cms_pg_pool;
    pool->conf = pcf;
    ngx_queue_init(&pool->waiting);

    pool->slots = ngx_pcalloc(cycle->pool,
                              pcf->max * sizeof(ngx_http_cms_pg_slot_t));
    if (pool->slots == NULL) {
        return NGX_ERROR;
    }

    for (i = 0; i < pcf->max; i++) {
        slot = &pool->slots[i];

        slot->prepared = ngx_pcalloc(cycle->pool, NGX_HTTP_CMS_PG_MAX_STMTS);
        if (slot->prepared == NULL) {
            return NGX_ERROR;
        }

        slot->log = *cycle->log;
        slot->log.action = "talking to postgres";

        slot->timer.handler = ngx_http_cms_pg_timer_handler;
        slot->timer.data = slot;
        slot->timer.log = &slot->log;
        slot->timer.cancelable = 1;
    }

    return NGX_OK;
}


void
ngx_http_cms_pg_exit_process(void)
{
    ngx_uint_t  i;

    if (ngx_http_cms_pg_pool.conf == NULL) {
        return;
    }

    for (i = 0; i < ngx_http_cms_pg_pool.conf->max; i++) {
        ngx_http_cms_pg_close(&ngx_http_cms_pg_pool.slots[i]);
    }
}


/* the request side */

ngx_int_t
ngx_http_cms_pg_query(ngx_http_request_t *r, ngx_http_cms_pg_stmt_t *stmt,
    ngx_str_t *args, ngx_uint_t nargs, ngx_http_cms_pg_done_pt done)
{
    ngx_uint_t                i;
    ngx_pool_cleanup_t       *cln;
    ngx_http_cms_pg_query_t  *q;

    /*
     * libpq takes C strings: a NUL would cut a value short of what was
     * checked.  Input readers refuse NUL first; this is the backstop.
     */
    for (i = 0; i < nargs; i++) {
        if (args[i].len && ngx_strlchr(args[i].data,
                                       args[i].data + args[i].len, '\0'))
        {
            ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                          "cms: parameter $%ui of a statement holds a NUL "
                          "byte (an input check is missing)", i + 1);
            return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_REQUEST,
                                     NULL);
        }
    }

    q = ngx_http_cms_pg_prepare(r->pool, r->connection->log, stmt, args,
                                nargs);
    if (q == NULL) {
        return NGX_ERROR;
    }

    cln = ngx_pool_cleanup_add(r->pool, 0);
    if (cln == NULL) {
        return NGX_ERROR;
    }

    cln->handler = ngx_http_cms_pg_detach;
    cln->data = q;

    q->request = r;
    q->done = done;

    /* notice a client that leaves while we wait */
    r->read_event_handler = ngx_http_test_reading;

    if (ngx_http_cms_pg_submit(q) != NGX_OK) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_UNAVAILABLE, NULL);
    }

    return NGX_DONE;
}


ngx_int_t
ngx_http_cms_pg_job(ngx_http_cms_pg_stmt_t *stmt, ngx_str_t *args,
    ngx_uint_t nargs, ngx_http_cms_pg_job_pt done, void *data)
{
    ngx_pool_t               *pool;
    ngx_http_cms_pg_query_t  *q;

    pool = ngx_create_pool(1024, ngx_cycle->log);
    if (pool == NULL) {
        return NGX_ERROR;
    }

    q = ngx_http_cms_pg_prepare(pool, ngx_cycle->log, stmt, args, nargs);

    if (q == NULL) {
        ngx_destroy_pool(pool);
        return NGX_ERROR;
    }

    q->pool = pool;
    q->job_done = done;
    q->job_data = data;

    if (ngx_http_cms_pg_submit(q) != NGX_OK) {
        ngx_destroy_pool(pool);
        return NGX_ERROR;
    }

    return NGX_OK;
}


/* a query with its parameters copied (NUL-terminated) into "pool" */
static ngx_http_cms_pg_query_t *
ngx_http_cms_pg_prepare(ngx_pool_t *pool, ngx_log_t *log,
    ngx_http_cms_pg_stmt_t *stmt, ngx_str_t *args, ngx_uint_t nargs)
{
    char                     *v;
    ngx_uint_t                i;
    ngx_http_cms_pg_pool_t   *pg;
    ngx_http_cms_pg_query_t  *q;

    pg = &ngx_http_cms_pg_pool;

    if (pg->conf == NULL) {
        ngx_log_error(NGX_LOG_ERR, log, 0,
                      "cms: \"cms_postgres\" is not configured");
        return NULL;
    }

    if (stmt->id == 0) {
        if (pg->nstmts + 1 >= NGX_HTTP_CMS_PG_MAX_STMTS) {
            ngx_log_error(NGX_LOG_ALERT, log, 0, "cms: too many statements");
            return NULL;
        }

        stmt->id = ++pg->nstmts;
        ngx_sprintf((u_char *) stmt->name, "cms_%ui%Z", stmt->id);
    }

    q = ngx_pcalloc(pool, sizeof(ngx_http_cms_pg_query_t));
    if (q == NULL) {
        return NULL;
    }

    q->values = ngx_pcalloc(pool, (nargs + 1) * sizeof(char *));
    if (q->values == NULL) {
        return NULL;
    }

    for (i = 0; i < nargs; i++) {
        if (args[i].data == NULL) {
            continue;
        }

        v = ngx_pnalloc(pool, args[i].len + 1);

        if (v == NULL
            || cms_cstr(v, args[i].len + 1, (const char *) args[i].data,
                        args[i].len)
               != 0)
        {
            return NULL;
        }

        q->values[i] = v;
    }

    q->stmt = stmt;
    q->log = log;

    return q;
}


/*
 * Gives "q" a connection now, or queues it.  NGX_OK, or NGX_DECLINED when
 * no connection can be had (logged).
 */
static ngx_int_t
ngx_http_cms_pg_submit(ngx_http_cms_pg_query_t *q)
{
    ngx_uint_t               i;
    ngx_http_cms_pg_pool_t  *pool;
    ngx_http_cms_pg_slot_t  *slot;

    pool = &ngx_http_cms_pg_pool;

    slot = ngx_http_cms_pg_acquire();

    if (slot == NULL && ngx_current_msec >= pool->retry_at) {
        for (i = 0; i < pool->conf->max; i++) {
            if (pool->slots[i].state == NGX_HTTP_CMS_PG_DOWN) {
                (void) ngx_http_cms_pg_connect(&pool->slots[i]);
                break;
            }
        }

        /* a connect may complete at once */
        slot = ngx_http_cms_pg_acquire();
    }

    if (slot != NULL) {
        if (ngx_http_cms_pg_start(slot, q) == NGX_OK) {
            return NGX_OK;
        }

        ngx_http_cms_pg_close(slot);
        return NGX_DECLINED;
    }

    if (!ngx_http_cms_pg_live()) {
        ngx_log_error(NGX_LOG_ERR, q->log, 0,
                      "cms: no postgres connection can be had");
        return NGX_DECLINED;
    }

    if (pool->nwaiting >= pool->conf->queue) {
        ngx_log_error(NGX_LOG_WARN, q->log, 0, "cms: postgres queue is full");
        return NGX_DECLINED;
    }

    q->wait.handler = ngx_http_cms_pg_wait_handler;
    q->wait.data = q;
    q->wait.log = q->log;
    ngx_add_timer(&q->wait, pool->conf->queue_timeout);

    ngx_queue_insert_tail(&pool->waiting, &q->queue);
    pool->nwaiting++;
    q->queued = 1;

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_pg_result(ngx_http_request_t *r, PGresult *res,
    ExecStatusType expect)
{
    char        *state, *msg;
    size_t       len;
    ngx_uint_t   code;

    if (res == NULL) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_UNAVAILABLE, NULL);
    }

    if (PQresultStatus(res) == expect) {
        return NGX_OK;
    }

    state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
    msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

    code = ngx_http_cms_pg_error_code(state, msg);

    if (code != NGX_HTTP_CMS_ERR_NONE) {
        return ngx_http_cms_pg_fail(r, res, code);
    }

    /* data exceptions: a client's value the checks let through */
    if (state != NULL && state[0] == '2' && state[1] == '2') {
        /* the server's message may quote the value: 48 bytes of it */
        len = msg ? ngx_min(ngx_strlen(msg), 48) : 0;

        ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                      "cms: a value reached the database unchecked: %*s "
                      "(SQLSTATE %s)", len, msg ? msg : "", state);
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_REQUEST, NULL);
    }

    ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                  "cms: query failed: %s (%s, SQLSTATE %s)",
                  msg ? msg : "", PQresStatus(PQresultStatus(res)),
                  state ? state : "none");

    return NGX_ERROR;
}


/* what a client did wrong, told by the server: an API error code */
static ngx_uint_t
ngx_http_cms_pg_error_code(const char *state, const char *msg)
{
    if (state == NULL) {
        return NGX_HTTP_CMS_ERR_NONE;
    }

    /* raised by cms_raise() in sql/ with the API's code as the message */
    if (ngx_strcmp(state, "P0001") == 0 && msg != NULL) {
        return ngx_http_cms_error_find(msg);
    }

    if (ngx_strcmp(state, "23505") == 0) {
        return NGX_HTTP_CMS_ERR_CONFLICT;
    }

    /* a date-time the server cannot read, a reference that is not there */
    if (ngx_strcmp(state, "22007") == 0 || ngx_strcmp(state, "22008") == 0
        || ngx_strcmp(state, "23503") == 0)
    {
        return NGX_HTTP_CMS_ERR_INVALID_FIELD;
    }

    return NGX_HTTP_CMS_ERR_NONE;
}


/* records "code" with the field the server named; results die early */
static ngx_int_t
ngx_http_cms_pg_fail(ngx_http_request_t *r, PGresult *res, ngx_uint_t code)
{
    char       *field, *param;
    size_t      len;
    ngx_uint_t  i;

    static struct {
        const char  *constraint;
        ngx_uint_t   code;
        const char  *param;
    } unique[] = {
        { "users_email_key", NGX_HTTP_CMS_ERR_EMAIL_TAKEN, "email" },
        { "categories_slug_key", NGX_HTTP_CMS_ERR_SLUG_TAKEN, "slug" },
        { "articles_slug_key", NGX_HTTP_CMS_ERR_SLUG_TAKEN, "slug" },
    };

    field = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);

    if (code == NGX_HTTP_CMS_ERR_CONFLICT) {
        field = PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME);

        for (i = 0; field && i < sizeof(unique) / sizeof(unique[0]); i++) {
            if (ngx_strcmp(field, unique[i].constraint) == 0) {
                return ngx_http_cms_fail(r, unique[i].code, unique[i].param);
            }
        }

        field = NULL;
    }

    param = NULL;
    len = field ? ngx_strlen(field) : 0;

    if (len && len < 64) {
        param = ngx_pnalloc(r->pool, len + 1);
        if (param == NULL) {
            return NGX_ERROR;
        }

        ngx_memcpy(param, field, len + 1);
    }

    ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                  "cms: refused by the database: %s",
                  ngx_http_cms_error_get(code)->code.data);

    return ngx_http_cms_fail(r, code, param);
}


ngx_int_t
ngx_http_cms_pg_send_wrapped(ngx_http_request_t *r, ngx_uint_t status,
    const char *name, PGresult *res)
{
    return ngx_http_cms_pg_send_column(r, status, name, res, 0);
}


ngx_int_t
ngx_http_cms_pg_send_column(ngx_http_request_t *r, ngx_uint_t status,
    const char *name, PGresult *res, int col)
{
    size_t     len;
    ngx_str_t  body;

    if (PQntuples(res) == 0 || PQnfields(res) <= col
        || PQgetisnull(res, 0, col))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    len = PQgetlength(res, 0, col);

    body.data = ngx_pnalloc(r->pool, len + (name ? ngx_strlen(name) : 0) + 8);
    if (body.data == NULL) {
        return NGX_ERROR;
    }

    if (name == NULL) {
        /* the column is the whole answer */
        body.len = ngx_cpymem(body.data, PQgetvalue(res, 0, col), len)
                   - body.data;

        return ngx_http_cms_send(r, status, &body);
    }

    body.len = ngx_sprintf(body.data, "{\"%s\":%*s}", name, len,
                           PQgetvalue(res, 0, col))
               - body.data;

    return ngx_http_cms_send(r, status, &body);
}


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
        }

        st->connections++;
    }
}


/* a request-pool cleanup: the request is gone, the slot keeps draining */
static void
ngx_http_cms_pg_detach(void *data)
{
    ngx_http_cms_pg_query_t *q = data;

    if (q->queued) {
        ngx_queue_remove(&q->queue);
        ngx_http_cms_pg_pool.nwaiting--;
        q->queued = 0;
    }

    if (q->wait.timer_set) {
        ngx_del_timer(&q->wait);
    }

    if (q->slot != NULL) {
        q->slot->query = NULL;
        q->slot = NULL;
    }
}


static void
ngx_http_cms_pg_wait_handler(ngx_event_t *ev)
{
    ngx_http_cms_pg_query_t *q = ev->data;

    ngx_log_error(NGX_LOG_ERR, ev->log, 0,
                  "cms: timed out waiting for a postgres connection");

    ngx_queue_remove(&q->queue);
    ngx_http_cms_pg_pool.nwaiting--;
    q->queued = 0;

    ngx_http_cms_pg_deliver(q, NULL);
}


/* calls the continuation and finishes the request with what it returns */
static void
ngx_http_cms_pg_deliver(ngx_http_cms_pg_query_t *q, PGresult *res)
{
    ngx_int_t            rc;
    ngx_connection_t    *c;
    ngx_http_request_t  *r;
    ngx_http_cms_ctx_t  *ctx;

    if (q->request == NULL) {
        /* a job: its pool (and q with it) goes once it has the answer */
        q->job_done(q->job_data, res);
        ngx_destroy_pool(q->pool);
        return;
    }

    r = q->request;
    c = r->connection;
    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    /* q lives in r->pool: it must not be touched after finish() */
    rc = q->done(r, ctx, res);

    ngx_http_cms_finish(r, rc);
    ngx_http_run_posted_requests(c);
}


/* slots */

/* an idle slot whose connection is still sound, or NULL */
static ngx_http_cms_pg_slot_t *
ngx_http_cms_pg_acquire(void)
{
    ngx_uint_t               i;
    ngx_http_cms_pg_slot_t  *slot;

    for (i = 0; i < ngx_http_cms_pg_pool.conf->max; i++) {
        slot = &ngx_http_cms_pg_pool.slots[i];

        if (slot->state != NGX_HTTP_CMS_PG_IDLE) {
            continue;
        }

        /* an idle connection has nothing to read: data means FATAL or EOF */
        if (ngx_http_cms_pg_ready(slot, POLLIN) != NGX_DECLINED) {
            ngx_log_error(NGX_LOG_WARN, &slot->log, 0,
                          "cms: postgres closed an idle connection");
            ngx_http_cms_pg_close(slot);
            continue;
        }

        return slot;
    }

    return NULL;
}


/* whether any slot is connected or connecting */
static ngx_uint_t
ngx_http_cms_pg_live(void)
{
    ngx_uint_t  i;

    for (i = 0; i < ngx_http_cms_pg_pool.conf->max; i++) {
        if (ngx_http_cms_pg_pool.slots[i].state != NGX_HTTP_CMS_PG_DOWN) {
            return 1;
        }
    }

    return 0;
}


static ngx_int_t
ngx_http_cms_pg_connect(ngx_http_cms_pg_slot_t *slot)
{
    ngx_http_cms_pg_conf_t  *pcf;

    pcf = ngx_http_cms_pg_pool.conf;
    slot->log.action = "connecting to postgres";

    slot->conn = PQconnectStartParams(pcf->keywords, pcf->values, 0);

    if (slot->conn == NULL || PQstatus(slot->conn) == CONNECTION_BAD) {
        ngx_log_error(NGX_LOG_ERR, &slot->log, 0,
                      "cms: PQconnectStartParams() failed: %s",
                      slot->conn ? PQerrorMessage(slot->conn) : "no memory");
        goto failed;
    }

    if (PQsetnonblocking(slot->conn, 1) != 0) {
        ngx_log_error(NGX_LOG_ERR, &slot->log, 0,
                      "cms: PQsetnonblocking() failed");
        goto failed;
    }

    PQsetNoticeProcessor(slot->conn, ngx_http_cms_pg_notice, &slot->log);

    if (ngx_http_cms_pg_wrap(slot) != NGX_OK) {
        goto failed;
    }

    slot->state = NGX_HTTP_CMS_PG_CONNECTING;
    ngx_memzero(slot->prepared, NGX_HTTP_CMS_PG_MAX_STMTS);
    ngx_add_timer(&slot->timer, pcf->connect_timeout);

    if (ngx_http_cms_pg_connect_step(slot) == NGX_ERROR) {
        goto failed;
    }

    return NGX_OK;

failed:

    ngx_http_cms_pg_close(slot);
    ngx_http_cms_pg_failed(NULL, 1);

    return NGX_ERROR;
}


/* wraps PQsocket() in an nginx connection; libpq keeps owning the fd */
static ngx_int_t
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
static void
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
static ngx_int_t
ngx_http_cms_pg_connect_step(ngx_http_cms_pg_slot_t *slot)
{
    ngx_uint_t                 n;
    PostgresPollingStatusType  st;

    for (n = 0; n < NGX_HTTP_CMS_PG_POLL_STEPS; n++) {

        st = PQconnectPoll(slot->conn);

        if (st == PGRES_POLLING_FAILED) {
            ngx_log_error(NGX_LOG_ERR, &slot->log, 0,
                          "cms: PQconnectPoll() failed: %s",
                          PQerrorMessage(slot->conn));
            return NGX_ERROR;
        }

        /* libpq may have opened a new socket (it closed the old one) */
        if (slot->c != NULL && PQsocket(slot->conn) != slot->c->fd) {
            ngx_http_cms_pg_unwrap(slot);

            if (ngx_http_cms_pg_wrap(slot) != NGX_OK) {
                return NGX_ERROR;
            }
        }

        switch (st) {

        case PGRES_POLLING_OK:
            if (slot->timer.timer_set) {
                ngx_del_timer(&slot->timer);
            }

            ngx_http_cms_pg_pool.backoff = 0;
            ngx_log_debug1(NGX_LOG_DEBUG_HTTP, &slot->log, 0,
                           "cms pg connected, fd:%d", slot->c->fd);
            ngx_http_cms_pg_idle(slot);
            return NGX_OK;

        case PGRES_POLLING_READING:
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
                          PQerrorMessage(slot->conn));
            return NGX_ERROR;
        }
    }

    ngx_log_error(NGX_LOG_ALERT, &slot->log, 0,
                  "cms: PQconnectPoll() made no progress");

    return NGX_ERROR;
}


/*
 * poll(2) with a zero timeout: NGX_OK when the socket is ready for
 * "events" (or has an error or EOF pending), NGX_DECLINED when not.
 */
static ngx_int_t
ngx_http_cms_pg_ready(ngx_http_cms_pg_slot_t *slot, short events)
{
    struct pollfd  pfd;

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


/* sends a query: prepares its statement first on this connection */
static ngx_int_t
ngx_http_cms_pg_start(ngx_http_cms_pg_slot_t *slot,
    ngx_http_cms_pg_query_t *q)
{
    int                      ok;
    ngx_http_cms_pg_stmt_t  *stmt;

    stmt = q->stmt;

    slot->query = q;
    slot->stmt = stmt;
    q->slot = slot;
    slot->c->idle = 0;
    slot->c->read->handler = ngx_http_cms_pg_event_handler;
    slot->c->write->handler = ngx_http_cms_pg_event_handler;

    if (slot->prepared[stmt->id]) {
        slot->log.action = "running a postgres query";
        slot->state = NGX_HTTP_CMS_PG_QUERYING;
        ok = PQsendQueryPrepared(slot->conn, stmt->name, stmt->nparams,
                                 q->values, NULL, NULL, 0);

    } else {
        slot->log.action = "preparing a postgres statement";
        slot->state = NGX_HTTP_CMS_PG_PREPARING;
        ok = PQsendPrepare(slot->conn, stmt->name, stmt->sql, stmt->nparams,
                           NULL);
    }

    if (!ok) {
        ngx_log_error(NGX_LOG_ERR, &slot->log, 0,
                      "cms: PQsendQuery failed: %s",
                      PQerrorMessage(slot->conn));
        q->slot = NULL;
        slot->query = NULL;
        return NGX_ERROR;
    }

    if (slot->timer.timer_set) {
        ngx_del_timer(&slot->timer);
    }

    ngx_add_timer(&slot->timer, ngx_http_cms_pg_pool.conf->query_timeout);

    if (ngx_http_cms_pg_send(slot) == NGX_ERROR) {
        q->slot = NULL;
        slot->query = NULL;
        return NGX_ERROR;
    }

    return NGX_OK;
}


/* flushes what libpq holds; NGX_AGAIN means a write event will come */
static ngx_int_t
ngx_http_cms_pg_send(ngx_http_cms_pg_slot_t *slot)
{
    int  rc;

    rc = PQflush(slot->conn);

    if (rc < 0) {
        ngx_log_error(NGX_LOG_ERR, &slot->log, 0, "cms: PQflush() failed: %s",
                      PQerrorMessage(slot->conn));
        return NGX_ERROR;
    }

    return rc == 0 ? NGX_OK : NGX_AGAIN;
}


static void
ngx_http_cms_pg_event_handler(ngx_event_t *ev)
{
    ngx_int_t                rc;
    ngx_connection_t        *c;
    ngx_http_cms_pg_slot_t  *slot;

    c = ev->data;
    slot = c->data;

    switch (slot->state) {

    case NGX_HTTP_CMS_PG_CONNECTING:
        rc = ngx_http_cms_pg_connect_step(slot);

        if (rc == NGX_ERROR) {
            ngx_http_cms_pg_failed(slot, 1);
            return;
        }

        if (rc == NGX_OK) {
            ngx_http_cms_pg_kick();
        }

        return;

    case NGX_HTTP_CMS_PG_PREPARING:
    case NGX_HTTP_CMS_PG_QUERYING:
        if (ngx_http_cms_pg_io(slot) == NGX_ERROR) {
            ngx_http_cms_pg_failed(slot, 0);
        }

        return;

    default:
        /* idle slots have their own handler; a stale event is harmless */
        return;
    }
}


/*
 * Sends what is pending and reads until libpq is no longer busy or the
 * socket has nothing more.  Returns NGX_OK, NGX_AGAIN or NGX_ERROR.
 */
static ngx_int_t
ngx_http_cms_pg_io(ngx_http_cms_pg_slot_t *slot)
{
    PGresult  *res;

    if (ngx_http_cms_pg_send(slot) == NGX_ERROR) {
        return NGX_ERROR;
    }

    for ( ;; ) {

        if (!PQconsumeInput(slot->conn)) {
            ngx_log_error(NGX_LOG_ERR, &slot->log, 0,
                          "cms: PQconsumeInput() failed: %s",
                          PQerrorMessage(slot->conn));
            return NGX_ERROR;
        }

        while (!PQisBusy(slot->conn)) {
            res = PQgetResult(slot->conn);

            if (res == NULL) {
                return ngx_http_cms_pg_step_done(slot);
            }

            /* keep the first result, or the first error */
            if (slot->result == NULL
                || (PQresultStatus(res) == PGRES_FATAL_ERROR
                    && PQresultStatus(slot->result) != PGRES_FATAL_ERROR))
            {
                PQclear(slot->result);
                slot->result = res;

            } else {
                PQclear(res);
            }
        }

        /* libpq may leave bytes in the kernel: no new edge would come */
        if (ngx_http_cms_pg_ready(slot, POLLIN) == NGX_DECLINED) {
            return NGX_AGAIN;
        }
    }
}


/* one step's results are complete: the prepare, or the query itself */
static ngx_int_t
ngx_http_cms_pg_step_done(ngx_http_cms_pg_slot_t *slot)
{
    int                       ok;
    ngx_http_cms_pg_query_t  *q;

    if (slot->state == NGX_HTTP_CMS_PG_QUERYING) {
        ngx_http_cms_pg_finished(slot);
        return NGX_OK;
    }

    q = slot->query;

    if (PQresultStatus(slot->result) != PGRES_COMMAND_OK || q == NULL) {
        /* a failed prepare is answered like a failed query */
        if (PQresultStatus(slot->result) == PGRES_COMMAND_OK) {
            slot->prepared[slot->stmt->id] = 1;
        }

        ngx_http_cms_pg_finished(slot);
        return NGX_OK;
    }

    slot->prepared[slot->stmt->id] = 1;
    PQclear(slot->result);
    slot->result = NULL;

    slot->log.action = "running a postgres query";
    slot->state = NGX_HTTP_CMS_PG_QUERYING;

    ok = PQsendQueryPrepared(slot->conn, slot->stmt->name,
                             slot->stmt->nparams, q->values, NULL, NULL, 0);
    if (!ok) {
        ngx_log_error(NGX_LOG_ERR, &slot->log, 0,
                      "cms: PQsendQueryPrepared() failed: %s",
                      PQerrorMessage(slot->conn));
        return NGX_ERROR;
    }

    return ngx_http_cms_pg_io(slot);
}


/* the query is over: the slot returns to the pool, the request resumes */
static void
ngx_http_cms_pg_finished(ngx_http_cms_pg_slot_t *slot)
{
    PGresult                 *res;
    ngx_http_cms_pg_query_t  *q;

    if (slot->timer.timer_set) {
        ngx_del_timer(&slot->timer);
    }

    res = slot->result;
    slot->result = NULL;
    q = slot->query;
    slot->query = NULL;

    if (q != NULL) {
        q->slot = NULL;
    }

    if (PQstatus(slot->conn) == CONNECTION_OK
        && PQtransactionStatus(slot->conn) == PQTRANS_IDLE)
    {
        ngx_http_cms_pg_idle(slot);

    } else {
        ngx_log_error(NGX_LOG_WARN, &slot->log, 0,
                      "cms: postgres connection left a transaction open");
        ngx_http_cms_pg_close(slot);
    }

    if (q != NULL) {
        ngx_http_cms_pg_deliver(q, res);
    }

    PQclear(res);

    ngx_http_cms_pg_kick();
}


/* puts a connected slot back: idle, watched for EOF, closable on reload */
static void
ngx_http_cms_pg_idle(ngx_http_cms_pg_slot_t *slot)
{
    if (ngx_exiting || ngx_terminate) {
        ngx_http_cms_pg_close(slot);
        return;
    }

    slot->state = NGX_HTTP_CMS_PG_IDLE;
    slot->stmt = NULL;
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


static void
ngx_http_cms_pg_timer_handler(ngx_event_t *ev)
{
    ngx_http_cms_pg_slot_t *slot = ev->data;

    ngx_log_error(NGX_LOG_ERR, &slot->log, 0, "cms: postgres timed out");

    /* PQcancel() would block: close and let the server's timeout stop it */
    ngx_http_cms_pg_failed(slot, slot->state == NGX_HTTP_CMS_PG_CONNECTING);
}


/*
 * From an event: the slot (if any) failed.  Its request gets no answer,
 * a connect failure delays the next attempt, and if nothing is left
 * alive the waiters are answered at once.
 */
static void
ngx_http_cms_pg_failed(ngx_http_cms_pg_slot_t *slot, ngx_uint_t connect)
{
    ngx_http_cms_pg_pool_t   *pool;
    ngx_http_cms_pg_query_t  *q;

    pool = &ngx_http_cms_pg_pool;
    q = NULL;

    if (connect) {
        pool->backoff = ngx_min(ngx_max(pool->backoff * 2,
                                        NGX_HTTP_CMS_PG_BACKOFF_MIN),
                                NGX_HTTP_CMS_PG_BACKOFF_MAX);
        pool->retry_at = ngx_current_msec + pool->backoff;
    }

    if (slot != NULL) {
        q = slot->query;
        slot->query = NULL;

        if (q != NULL) {
            q->slot = NULL;
        }

        ngx_http_cms_pg_close(slot);
    }

    if (q != NULL) {
        ngx_http_cms_pg_deliver(q, NULL);
    }

    if (slot != NULL) {
        ngx_http_cms_pg_kick();
    }
}


/* gives waiters to idle slots, opens connections for them, or fails them */
static void
ngx_http_cms_pg_kick(void)
{
    ngx_uint_t                i, connecting;
    ngx_queue_t              *head;
    ngx_http_cms_pg_pool_t   *pool;
    ngx_http_cms_pg_slot_t   *slot;
    ngx_http_cms_pg_query_t  *q;

    pool = &ngx_http_cms_pg_pool;

    while (!ngx_queue_empty(&pool->waiting)) {

        slot = ngx_http_cms_pg_acquire();

        if (slot == NULL) {
            break;
        }

        head = ngx_queue_head(&pool->waiting);
        q = ngx_queue_data(head, ngx_http_cms_pg_query_t, queue);
        ngx_queue_remove(head);
        pool->nwaiting--;
        q->queued = 0;

        if (q->wait.timer_set) {
            ngx_del_timer(&q->wait);
        }

        if (ngx_http_cms_pg_start(slot, q) != NGX_OK) {
            ngx_http_cms_pg_close(slot);
            ngx_http_cms_pg_deliver(q, NULL);
        }
    }

    if (ngx_queue_empty(&pool->waiting)) {
        return;
    }

    connecting = 0;

    for (i = 0; i < pool->conf->max; i++) {
        connecting += (pool->slots[i].state == NGX_HTTP_CMS_PG_CONNECTING);
    }

    for (i = 0; i < pool->conf->max
                && connecting < pool->nwaiting
                && ngx_current_msec >= pool->retry_at; i++)
    {
        slot = &pool->slots[i];

        if (slot->state == NGX_HTTP_CMS_PG_DOWN
            && ngx_http_cms_pg_connect(slot) == NGX_OK)
        {
            connecting++;
        }
    }

    if (ngx_http_cms_pg_live()) {
        return;
    }

    /* nothing can serve the waiters: answer them now, not at timeout */
    while (!ngx_queue_empty(&pool->waiting)) {
        head = ngx_queue_head(&pool->waiting);
        q = ngx_queue_data(head, ngx_http_cms_pg_query_t, queue);
        ngx_queue_remove(head);
        pool->nwaiting--;
        q->queued = 0;

        if (q->wait.timer_set) {
            ngx_del_timer(&q->wait);
        }

        ngx_http_cms_pg_deliver(q, NULL);
    }
}


/* tears a slot down to DOWN; the caller answers its request, if any */
static void
ngx_http_cms_pg_close(ngx_http_cms_pg_slot_t *slot)
{
    if (slot->timer.timer_set) {
        ngx_del_timer(&slot->timer);
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

    if (slot->query != NULL) {
        slot->query->slot = NULL;
        slot->query = NULL;
    }

    slot->stmt = NULL;
    slot->state = NGX_HTTP_CMS_PG_DOWN;
}


/* the default notice processor prints to stderr */
static void
ngx_http_cms_pg_notice(void *arg, const char *message)
{
    ngx_log_t *log = arg;

    ngx_log_error(NGX_LOG_INFO, log, 0, "cms: postgres notice: %s", message);
}
