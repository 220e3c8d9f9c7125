
/*
 * Cache purges on publish (docs/public-surface.md, "Purging on
 * publish").  Whatever changes what a site's public answers say queues a
 * purge of its surrogate key in the database, in the transaction of the
 * change (sql/0034_cdn_purges.sql).  Worker 0 of each host with
 * "cms_cdn_purge" claims up to a batch of due purges for a lease (FOR
 * UPDATE SKIP LOCKED: two hosts never send one), sends one
 * "PURGE <path>" with "xkey: <the keys>" to every target at once, and
 * when every target has answered deletes the rows (all 2xx) or lets them
 * wait again, later each time.  One round is in flight at a time; a full
 * batch claims the next at once.
 *
 * A quitting worker starts nothing new and abandons a round in flight:
 * its lease runs out and a sender takes the rows again, as after a
 * crash.  The lease is the timeout plus a minute.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_cdn.h"
#include "ngx_http_cms_client.h"
#include "ngx_http_cms_conf.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_jobs.h"
#include "ngx_http_cms_pg.h"
#include "cms_url.h"


#define NGX_HTTP_CMS_CDN_BATCH    32         /* purges a round claims */
#define NGX_HTTP_CMS_CDN_KEY_MAX  200        /* a row's keys (the table's) */
#define NGX_HTTP_CMS_CDN_UA       "ngx_http_cms_module-purge/1"


/* a target: "PURGE <path> HTTP/1.1" and its Host, written once */
typedef struct {
    ngx_str_t                   host;        /* NUL-terminated, no [] */
    in_port_t                   port;
    ngx_uint_t                  https;
    ngx_str_t                   head;
} ngx_http_cms_cdn_target_t;


struct ngx_http_cms_cdn_conf_s {
    ngx_array_t                 targets;     /* ngx_http_cms_cdn_target_t */
    ngx_msec_t                  timeout;
    ngx_ssl_t                  *ssl;         /* https targets */
};


typedef struct ngx_http_cms_cdn_round_s  ngx_http_cms_cdn_round_t;

/* one target's PURGE; a pool of its own, gone when it is done */
typedef struct {
    ngx_http_cms_client_t       cl;          /* first: the client's */
    ngx_http_cms_cdn_round_t   *round;
} ngx_http_cms_cdn_send_t;

/* the claimed rows and their sends; a pool of its own */
struct ngx_http_cms_cdn_round_s {
    ngx_pool_t                 *pool;
    ngx_http_cms_main_conf_t   *mcf;
    ngx_str_t                   ids;         /* "{1,2,...}" */
    ngx_str_t                   keys;        /* "site-a site-b" */
    ngx_http_cms_cdn_send_t   **sends;       /* NULL once done */
    ngx_uint_t                  nsends;
    ngx_uint_t                  pending;
    ngx_uint_t                  failed;
    ngx_uint_t                  full;        /* as many rows as asked */
};


static ngx_int_t ngx_http_cms_cdn_target(ngx_conf_t *cf,
    ngx_http_cms_cdn_conf_t *ccf, ngx_str_t *value);
static ngx_int_t ngx_http_cms_cdn_tls(ngx_conf_t *cf,
    ngx_http_cms_cdn_conf_t *ccf);
static void ngx_http_cms_cdn_tick(ngx_event_t *ev);
static void ngx_http_cms_cdn_claimed(void *data, PGresult *res);
static ngx_int_t ngx_http_cms_cdn_round(ngx_http_cms_main_conf_t *mcf,
    PGresult *res, int rows);
static ngx_int_t ngx_http_cms_cdn_send(ngx_http_cms_cdn_round_t *rd,
    ngx_http_cms_cdn_target_t *t);
static void ngx_http_cms_cdn_done(ngx_http_cms_client_t *cl);
static void ngx_http_cms_cdn_settle(ngx_http_cms_cdn_round_t *rd);
static void ngx_http_cms_cdn_settled(void *data, PGresult *res);


static const ngx_http_cms_param_t  ngx_http_cms_cdn_params[] = {
    { ngx_string("timeout="), NGX_HTTP_CMS_PARAM_MSEC,
      offsetof(ngx_http_cms_cdn_conf_t, timeout) },
    { ngx_null_string, 0, 0 }
};


/* $1 how many, $2 the lease in seconds */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_cdn_claim_sql =
    ngx_http_cms_pg_stmt(
        "SELECT id, keys FROM cms_cdn_purges_claim($1::integer,"
        " make_interval(secs => $2::float8))",
        2);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_cdn_sent_sql =
    ngx_http_cms_pg_stmt_replan(
        "DELETE FROM cdn_purges WHERE id = ANY ($1::bigint[])", 1);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_cdn_retry_sql =
    ngx_http_cms_pg_stmt(
        "SELECT cms_cdn_purges_retry($1::bigint[])", 1);


static ngx_event_t                ngx_http_cms_cdn_ev;
static ngx_http_cms_cdn_round_t  *ngx_http_cms_cdn_flight;
static ngx_uint_t                 ngx_http_cms_cdn_busy;   /* a round's
                                                              query */


/* long: the URLs, then the parameters, then the TLS context */
char *
ngx_http_cms_cdn_conf(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_cms_main_conf_t *mcf = conf;

    ngx_str_t                *value;
    ngx_uint_t                i;
    ngx_http_cms_cdn_conf_t  *ccf;

    if (mcf->cdn != NULL) {
        return "is duplicate";
    }

    ccf = ngx_pcalloc(cf->pool, sizeof(ngx_http_cms_cdn_conf_t));
    if (ccf == NULL
        || ngx_array_init(&ccf->targets, cf->pool, 2,
                          sizeof(ngx_http_cms_cdn_target_t))
           != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    ccf->timeout = NGX_CONF_UNSET_MSEC;
    value = cf->args->elts;

    for (i = 1; i < cf->args->nelts; i++) {
        if (ngx_strlchr(value[i].data, value[i].data + value[i].len, ':')
            == NULL)
        {
            break;      /* a parameter: "timeout=" */
        }

        if (ngx_http_cms_cdn_target(cf, ccf, &value[i]) != NGX_OK) {
            return NGX_CONF_ERROR;
        }
    }

    if (ccf->targets.nelts == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_cdn_purge: no http(s) URL to purge at");
        return NGX_CONF_ERROR;
    }

    if (ngx_http_cms_conf_params(cf, "cms_cdn_purge", i,
                                 ngx_http_cms_cdn_params, ccf)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    ngx_conf_init_msec_value(ccf->timeout, 5000);

    if (ngx_http_cms_cdn_tls(cf, ccf) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    mcf->cdn = ccf;

    return NGX_CONF_OK;
}


/* long: one URL, read by the strict parser (cms_url.h), into a target */
static ngx_int_t
ngx_http_cms_cdn_target(ngx_conf_t *cf, ngx_http_cms_cdn_conf_t *ccf,
    ngx_str_t *value)
{
    int                         rc;
    u_char                     *p, *s;
    size_t                      n;
    cms_url_t                   u;
    ngx_http_cms_cdn_target_t  *t;

    s = value->data;
    rc = cms_url_parse((char *) s, value->len, CMS_URL_HTTP | CMS_URL_HTTPS,
                       &u);

    if (rc != CMS_URL_OK) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_cdn_purge: \"%V\" %s", value,
                           cms_url_error(rc));
        return NGX_ERROR;
    }

    t = ngx_array_push(&ccf->targets);
    if (t == NULL) {
        return NGX_ERROR;
    }

    t->port = (in_port_t) u.port_num;
    t->https = u.https;
    t->host.len = u.host.len;
    t->host.data = ngx_pnalloc(cf->pool, u.host.len + 1);

    /* "PURGE " path "?" query " HTTP/1.1\r\nHost: " authority "\r\n" */
    n = sizeof("PURGE / HTTP/1.1\r\nHost: \r\n") + value->len
        + CMS_URL_AUTHORITY_SIZE;
    t->head.data = ngx_pnalloc(cf->pool, n);

    if (t->host.data == NULL || t->head.data == NULL) {
        return NGX_ERROR;
    }

    *ngx_cpymem(t->host.data, s + u.host.off, u.host.len) = '\0';

    p = ngx_cpymem(t->head.data, "PURGE ", 6);
    p = u.path.len ? ngx_cpymem(p, s + u.path.off, u.path.len)
                   : ngx_cpymem(p, "/", 1);

    if (u.has_query) {
        *p++ = '?';
        p = ngx_cpymem(p, s + u.query.off, u.query.len);
    }

    p = ngx_cpymem(p, " HTTP/1.1\r\nHost: ", 17);
    p += cms_url_authority((char *) s, &u, (char *) p,
                           CMS_URL_AUTHORITY_SIZE);
    p = ngx_cpymem(p, "\r\n", 2);

    t->head.len = p - t->head.data;

    return NGX_OK;
}


/* https targets: verified against the system's CAs */
static ngx_int_t
ngx_http_cms_cdn_tls(ngx_conf_t *cf, ngx_http_cms_cdn_conf_t *ccf)
{
    ngx_uint_t                  i;
    ngx_http_cms_cdn_target_t  *t;

    t = ccf->targets.elts;

    for (i = 0; i < ccf->targets.nelts; i++) {
        if (t[i].https) {
            break;
        }
    }

    if (i == ccf->targets.nelts) {
        return NGX_OK;
    }

    ccf->ssl = ngx_http_cms_crypto_tls_client(cf, NULL);

    return (ccf->ssl == NULL) ? NGX_ERROR : NGX_OK;
}


void
ngx_http_cms_cdn_init_process(ngx_cycle_t *cycle,
    ngx_http_cms_main_conf_t *mcf)
{
    if (mcf->cdn == NULL || !ngx_http_cms_jobs_here(mcf)) {
        return;
    }

    ngx_http_cms_cdn_ev.handler = ngx_http_cms_cdn_tick;
    ngx_http_cms_cdn_ev.data = mcf;
    ngx_http_cms_cdn_ev.log = cycle->log;
    ngx_http_cms_cdn_ev.cancelable = 1;

    ngx_add_timer(&ngx_http_cms_cdn_ev, mcf->events_interval);
}


/* claims due purges, unless a round is in flight */
static void
ngx_http_cms_cdn_tick(ngx_event_t *ev)
{
    ngx_http_cms_main_conf_t *mcf = ev->data;

    u_char     limit[NGX_INT_T_LEN], lease[NGX_INT_T_LEN];
    ngx_str_t  args[2];

    if (ngx_http_cms_quitting()) {
        return;                 /* nothing new: ngx_http_cms_jobs_arm() */
    }

    if (ngx_http_cms_cdn_busy || ngx_http_cms_cdn_flight != NULL) {
        return;     /* the round's end arms the timer */
    }

    args[0].data = limit;
    args[0].len = ngx_sprintf(limit, "%d", NGX_HTTP_CMS_CDN_BATCH) - limit;
    args[1].data = lease;
    args[1].len = ngx_sprintf(lease, "%M", mcf->cdn->timeout / 1000 + 60)
                  - lease;

    ngx_http_cms_cdn_busy = 1;

    if (ngx_http_cms_pg_job(&ngx_http_cms_cdn_claim_sql, args, 2,
                            ngx_http_cms_cdn_claimed, mcf)
        != NGX_OK)
    {
        ngx_http_cms_cdn_busy = 0;
        ngx_http_cms_jobs_next(&ngx_http_cms_cdn_ev, mcf->events_interval);
    }
}


static void
ngx_http_cms_cdn_claimed(void *data, PGresult *res)
{
    ngx_http_cms_main_conf_t *mcf = data;

    int  rows;

    ngx_http_cms_cdn_busy = 0;
    rows = 0;

    if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK
        || PQnfields(res) != 2)
    {
        ngx_log_error(NGX_LOG_ERR, ngx_cycle->log, 0,
                      "cms: claiming cache purges failed%s%s",
                      res ? ": " : "",
                      ngx_http_cms_pg_oneline(PQresultErrorMessage(res)));

    } else {
        rows = PQntuples(res);
    }

    /* a quitting worker starts nothing: the leases run out */
    if (rows == 0 || ngx_http_cms_quitting()) {
        ngx_http_cms_jobs_next(&ngx_http_cms_cdn_ev, mcf->events_interval);
        return;
    }

    if (ngx_http_cms_cdn_round(mcf, res, rows) != NGX_OK) {
        ngx_log_error(NGX_LOG_ALERT, ngx_cycle->log, 0,
                      "cms: a round of %d cache purges could not start; "
                      "they are sent again once their lease ends", rows);
        ngx_http_cms_jobs_next(&ngx_http_cms_cdn_ev, mcf->events_interval);
    }
}


/* long: the rows' ids and keys copied, then one send per target */
static ngx_int_t
ngx_http_cms_cdn_round(ngx_http_cms_main_conf_t *mcf, PGresult *res,
    int rows)
{
    int                         i;
    u_char                     *ids, *keys;
    size_t                      len;
    ngx_uint_t                  k;
    ngx_pool_t                 *pool;
    ngx_http_cms_cdn_round_t   *rd;
    ngx_http_cms_cdn_target_t  *t;

    pool = ngx_create_pool(4096, ngx_cycle->log);
    if (pool == NULL) {
        return NGX_ERROR;
    }

    len = 0;

    for (i = 0; i < rows; i++) {
        if ((size_t) PQgetlength(res, i, 0) > NGX_INT64_LEN
            || PQgetlength(res, i, 1) > NGX_HTTP_CMS_CDN_KEY_MAX)
        {
            goto failed;
        }

        len += PQgetlength(res, i, 1) + 1;
    }

    rd = ngx_pcalloc(pool, sizeof(ngx_http_cms_cdn_round_t));
    ids = ngx_pnalloc(pool, rows * (NGX_INT64_LEN + 1) + 2);
    keys = ngx_pnalloc(pool, len);

    if (rd == NULL || ids == NULL || keys == NULL) {
        goto failed;
    }

    rd->sends = ngx_pcalloc(pool, mcf->cdn->targets.nelts * sizeof(void *));
    if (rd->sends == NULL) {
        goto failed;
    }

    rd->pool = pool;
    rd->mcf = mcf;
    rd->full = (rows == NGX_HTTP_CMS_CDN_BATCH);
    rd->ids.data = ids;
    rd->keys.data = keys;

    *ids++ = '{';

    for (i = 0; i < rows; i++) {
        ids = ngx_sprintf(ids, "%s%s", i ? "," : "", PQgetvalue(res, i, 0));
        keys = ngx_sprintf(keys, "%s%s", i ? " " : "", PQgetvalue(res, i, 1));
    }

    *ids++ = '}';
    rd->ids.len = ids - rd->ids.data;
    rd->keys.len = keys - rd->keys.data;

    ngx_http_cms_cdn_flight = rd;
    t = mcf->cdn->targets.elts;

    for (k = 0; k < mcf->cdn->targets.nelts; k++) {
        if (ngx_http_cms_cdn_send(rd, &t[k]) != NGX_OK) {
            rd->failed = 1;
        }
    }

    if (rd->pending == 0) {
        ngx_http_cms_cdn_settle(rd);
    }

    return NGX_OK;

failed:

    ngx_destroy_pool(pool);

    return NGX_ERROR;
}


/* "PURGE" with the round's keys to one target, started */
static ngx_int_t
ngx_http_cms_cdn_send(ngx_http_cms_cdn_round_t *rd,
    ngx_http_cms_cdn_target_t *t)
{
    u_char                   *p;
    ngx_pool_t               *pool;
    ngx_http_cms_cdn_send_t  *s;

    pool = ngx_create_pool(2048, ngx_cycle->log);
    if (pool == NULL) {
        return NGX_ERROR;
    }

    s = ngx_pcalloc(pool, sizeof(ngx_http_cms_cdn_send_t));
    p = ngx_pnalloc(pool, t->head.len + rd->keys.len
                          + sizeof("User-Agent: " NGX_HTTP_CMS_CDN_UA "\r\n"
                                   "xkey: \r\nContent-Length: 0\r\n\r\n"));

    if (s == NULL || p == NULL) {
        ngx_destroy_pool(pool);
        return NGX_ERROR;
    }

    s->round = rd;
    s->cl.pool = pool;
    s->cl.host = t->host;
    s->cl.port = t->port;
    s->cl.ssl = t->https ? rd->mcf->cdn->ssl : NULL;
    s->cl.timeout = rd->mcf->cdn->timeout;
    s->cl.done = ngx_http_cms_cdn_done;
    s->cl.data = s;
    s->cl.action = "purging a cache";
    s->cl.trusted = 1;

    s->cl.request.data = p;
    p = ngx_cpymem(p, t->head.data, t->head.len);
    p = ngx_sprintf(p, "User-Agent: " NGX_HTTP_CMS_CDN_UA "\r\n"
                       "xkey: %V\r\nContent-Length: 0\r\n\r\n", &rd->keys);
    s->cl.request.len = p - s->cl.request.data;

    if (ngx_http_cms_client_start(&s->cl) != NGX_OK) {
        ngx_destroy_pool(pool);
        return NGX_ERROR;
    }

    rd->sends[rd->nsends++] = s;
    rd->pending++;

    return NGX_OK;
}


static void
ngx_http_cms_cdn_done(ngx_http_cms_client_t *cl)
{
    ngx_http_cms_cdn_send_t *s = cl->data;

    ngx_uint_t                 i;
    ngx_http_cms_cdn_round_t  *rd;

    rd = s->round;

    if (cl->error != NULL || cl->status < 200 || cl->status > 299) {
        ngx_log_error(NGX_LOG_WARN, ngx_cycle->log, 0,
                      "cms: purging \"%V\" at \"%V\" failed: %ui %s",
                      &rd->keys, &cl->host, cl->status,
                      cl->error ? cl->error : "");
        rd->failed = 1;
    }

    for (i = 0; i < rd->nsends; i++) {
        if (rd->sends[i] == s) {
            rd->sends[i] = NULL;
        }
    }

    ngx_destroy_pool(cl->pool);

    if (--rd->pending == 0) {
        ngx_http_cms_cdn_settle(rd);
    }
}


/* every target answered: the rows deleted, or waiting again */
static void
ngx_http_cms_cdn_settle(ngx_http_cms_cdn_round_t *rd)
{
    ngx_http_cms_cdn_busy = 1;

    if (ngx_http_cms_pg_job(rd->failed ? &ngx_http_cms_cdn_retry_sql
                                       : &ngx_http_cms_cdn_sent_sql,
                            &rd->ids, 1, ngx_http_cms_cdn_settled, rd)
        != NGX_OK)
    {
        /* the lease runs out: sent again */
        ngx_http_cms_cdn_settled(rd, NULL);
    }
}


static void
ngx_http_cms_cdn_settled(void *data, PGresult *res)
{
    ngx_http_cms_cdn_round_t *rd = data;

    ngx_msec_t                 after;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = rd->mcf;

    if (res == NULL
        || (PQresultStatus(res) != PGRES_COMMAND_OK
            && PQresultStatus(res) != PGRES_TUPLES_OK))
    {
        ngx_log_error(NGX_LOG_ERR, ngx_cycle->log, 0,
                      "cms: recording cache purges failed%s%s; they are "
                      "sent again once their lease ends",
                      res ? ": " : "",
                      ngx_http_cms_pg_oneline(PQresultErrorMessage(res)));
    }

    /* a full batch: more may be due now */
    after = (rd->full && !rd->failed) ? 1 : mcf->events_interval;

    ngx_http_cms_cdn_busy = 0;
    ngx_http_cms_cdn_flight = NULL;
    ngx_destroy_pool(rd->pool);

    ngx_http_cms_jobs_next(&ngx_http_cms_cdn_ev, after);
}



void
ngx_http_cms_cdn_exit_process(void)
{
    ngx_uint_t                 i;
    ngx_http_cms_cdn_round_t  *rd;

    ngx_http_cms_client_exit_process();

    rd = ngx_http_cms_cdn_flight;

    if (rd == NULL || ngx_http_cms_cdn_busy) {
        return;     /* a query's callback owns the round */
    }

    ngx_http_cms_cdn_flight = NULL;

    for (i = 0; i < rd->nsends; i++) {
        if (rd->sends[i] != NULL) {
            ngx_destroy_pool(rd->sends[i]->cl.pool);
        }
    }

    ngx_destroy_pool(rd->pool);
}
