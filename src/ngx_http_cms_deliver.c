
/*
 * Webhook delivery (README, Webhooks).  Worker 0 of each host claims due
 * rows of webhook_deliveries for a lease (FOR UPDATE SKIP LOCKED: two
 * hosts never hold one attempt), opens the endpoint's secrets (sealed
 * with "webhook:<id>" bound in), signs the stored body, posts it with the
 * one-shot client, and records the attempt; the database decides what
 * follows (delivered, a retry on the schedule, failed, the endpoint
 * disabled on a 410).  At most "concurrency" deliveries are in flight.
 *
 * A quitting worker starts nothing new and abandons what is in flight
 * (the client's timer is cancelable): those rows' leases run out, and a
 * sender takes them again, as after a crash.  The lease is the timeout
 * plus a minute, so it outlives every attempt that was not abandoned.
 *
 * Off unless "cms_webhook_delivery on": rows are still written (the
 * fan-out is the database's) and wait, pending, for a host that sends.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_deliver.h"
#include "ngx_http_cms_client.h"
#include "ngx_http_cms_conf.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_jobs.h"
#include "ngx_http_cms_json.h"
#include "ngx_http_cms_pg.h"
#include "cms_hex.h"
#include "cms_url.h"
#include "cms_uuid.h"
#include "cms_webhook.h"


#define NGX_HTTP_CMS_DELIVER_AAD    "webhook:"
#define NGX_HTTP_CMS_DELIVER_UA     "ngx_http_cms_module-webhooks/1"
#define NGX_HTTP_CMS_DELIVER_SECRET 128          /* a secret's text, max */
/*
 * outcomes a statement: each is written in a subtransaction of its own
 * (cms_webhook_delivery_results(), sql/0030), and a transaction with more
 * than 64 (PGPROC_MAX_CACHED_SUBXIDS) makes every other session's
 * snapshot look its xids up in pg_subtrans while it runs
 */
#define NGX_HTTP_CMS_DELIVER_BATCH  64


/* one delivery in flight; its pool holds it */
typedef struct {
    ngx_http_cms_client_t       cl;          /* first: the client's */
    ngx_queue_t                 queue;       /* in flight */
    ngx_str_t                   id;          /* the row's */
    ngx_str_t                   attempt;
} ngx_http_cms_deliver_t;


/* an attempt's outcome, waiting to be recorded with others */
typedef struct {
    u_char                      id[CMS_UUID_LEN];
    ngx_uint_t                  attempt;
    ngx_uint_t                  status;      /* 0: no answer */
    ngx_msec_t                  ms;
    const char                 *error;       /* a literal, or NULL */
} ngx_http_cms_deliver_outcome_t;


/* an attempt's signatures */
typedef struct {
    u_char                      ts[NGX_TIME_T_LEN + 1];
    size_t                      ts_len;
    char                        hex[CMS_WEBHOOK_HEX_LEN];
    char                        v1[2][CMS_WEBHOOK_V1_LEN];
    ngx_uint_t                  n;
} ngx_http_cms_deliver_sigs_t;


static ngx_http_cms_hooks_conf_t *ngx_http_cms_deliver_create(
    ngx_conf_t *cf);
static ngx_int_t ngx_http_cms_deliver_ports(ngx_conf_t *cf,
    ngx_http_cms_hooks_conf_t *hcf);
static void ngx_http_cms_deliver_tick(ngx_event_t *ev);
static void ngx_http_cms_deliver_claimed(void *data, PGresult *res);
static ngx_int_t ngx_http_cms_deliver_one(ngx_http_cms_main_conf_t *mcf,
    PGresult *res, int row);
static ngx_int_t ngx_http_cms_deliver_open(ngx_pool_t *pool,
    ngx_http_cms_main_conf_t *mcf, PGresult *res, int row, int col,
    ngx_str_t *secret);
static ngx_int_t ngx_http_cms_deliver_sign(ngx_http_cms_deliver_sigs_t *sg,
    PGresult *res, int row, ngx_str_t *secrets, ngx_uint_t n);
static ngx_int_t ngx_http_cms_deliver_request(ngx_http_cms_deliver_t *d,
    PGresult *res, int row, ngx_str_t *secrets, ngx_uint_t n);
static void ngx_http_cms_deliver_done(ngx_http_cms_client_t *cl);
static void ngx_http_cms_deliver_wake(ngx_http_cms_main_conf_t *mcf);
static void ngx_http_cms_deliver_record(ngx_http_cms_main_conf_t *mcf);
static void ngx_http_cms_deliver_recorded(void *data, PGresult *res);
static ngx_str_t *ngx_http_cms_deliver_copy(ngx_pool_t *pool, ngx_str_t *s,
    PGresult *res, int row, int col);


static const ngx_http_cms_param_t  ngx_http_cms_deliver_params[] = {
    { ngx_string("ca="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_hooks_conf_t, ca) },
    { ngx_string("timeout="), NGX_HTTP_CMS_PARAM_MSEC,
      offsetof(ngx_http_cms_hooks_conf_t, timeout) },
    { ngx_string("retry_scale="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_hooks_conf_t, scale) },
    { ngx_string("retention="), NGX_HTTP_CMS_PARAM_MSEC,
      offsetof(ngx_http_cms_hooks_conf_t, retention) },
    { ngx_string("concurrency="), NGX_HTTP_CMS_PARAM_POSITIVE,
      offsetof(ngx_http_cms_hooks_conf_t, concurrency) },
    { ngx_string("ports="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_hooks_conf_t, ports_text) },
    { ngx_null_string, 0, 0 }
};


/* $1 how many, $2 the lease in seconds */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_deliver_claim_sql =
    ngx_http_cms_pg_stmt(
        "SELECT id, webhook_id, event_id, event_type, payload, attempt, url,"
        " secret, previous_secret FROM cms_webhook_deliveries_claim("
        "$1::integer, make_interval(secs => $2::float8))",
        2);

/* $1 the outcomes, [{id, attempt, code, ms, error}], $2 the scale */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_deliver_results_sql =
    ngx_http_cms_pg_stmt(
        "SELECT cms_webhook_delivery_results($1::jsonb, $2::float8)",
        2);


static ngx_event_t  ngx_http_cms_deliver_ev;
static ngx_queue_t  ngx_http_cms_deliver_flight;
static ngx_uint_t   ngx_http_cms_deliver_busy;      /* in flight */
static ngx_uint_t   ngx_http_cms_deliver_claiming;
static ngx_uint_t   ngx_http_cms_deliver_asked;     /* the claim's limit */
static ngx_uint_t   ngx_http_cms_deliver_more;      /* the last claim full */
static ngx_array_t  ngx_http_cms_deliver_outcomes;  /* to be recorded */
static ngx_uint_t   ngx_http_cms_deliver_recording;


/* long: on or off, the parameters, then retry_scale= checked */
char *
ngx_http_cms_deliver_conf(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_cms_main_conf_t *mcf = conf;

    ngx_int_t                   n;
    ngx_str_t                  *value;
    ngx_http_cms_hooks_conf_t  *hcf;

    if (mcf->hooks != NULL) {
        return "is duplicate";
    }

    hcf = ngx_http_cms_deliver_create(cf);
    if (hcf == NULL) {
        return NGX_CONF_ERROR;
    }

    value = cf->args->elts;

    if (ngx_strcmp(value[1].data, "on") == 0) {
        hcf->enable = 1;

    } else if (ngx_strcmp(value[1].data, "off") != 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_webhook_delivery: \"%V\" is neither "
                           "\"on\" nor \"off\"", &value[1]);
        return NGX_CONF_ERROR;
    }

    if (ngx_http_cms_conf_params(cf, "cms_webhook_delivery", 2,
                                 ngx_http_cms_deliver_params, hcf)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    if (hcf->scale.len) {
        /* a decimal above 0, at most 1, six places kept */
        n = ngx_atofp(hcf->scale.data, hcf->scale.len, 6);

        if (n <= 0 || n > 1000000) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "cms_webhook_delivery: \"retry_scale=%V\" "
                               "is not a decimal above 0, at most 1",
                               &hcf->scale);
            return NGX_CONF_ERROR;
        }
    }

    if (ngx_http_cms_deliver_ports(cf, hcf) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    mcf->hooks = hcf;

    return NGX_CONF_OK;
}


/* "ports=443,8443": the ports endpoints may name, at most eight */
static ngx_int_t
ngx_http_cms_deliver_ports(ngx_conf_t *cf, ngx_http_cms_hooks_conf_t *hcf)
{
    u_char     *p, *last, *comma;
    ngx_int_t   port;

    if (hcf->ports_text.len == 0) {
        return NGX_OK;
    }

    p = hcf->ports_text.data;
    last = p + hcf->ports_text.len;

    for ( ;; ) {
        comma = ngx_strlchr(p, last, ',');
        port = ngx_atoi(p, (comma ? comma : last) - p);

        if (port < 1 || port > 65535
            || hcf->nports == NGX_HTTP_CMS_HOOK_PORTS)
        {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "cms_webhook_delivery: \"ports=%V\" is not "
                               "a list of at most %d ports, comma-separated",
                               &hcf->ports_text, NGX_HTTP_CMS_HOOK_PORTS);
            return NGX_ERROR;
        }

        hcf->ports[hcf->nports++] = (in_port_t) port;

        if (comma == NULL) {
            return NGX_OK;
        }

        p = comma + 1;
    }
}


ngx_uint_t
ngx_http_cms_deliver_port_allowed(ngx_http_cms_main_conf_t *mcf,
    ngx_uint_t port)
{
    ngx_uint_t  i;

    /* tests and local development: receivers on any loopback port */
    if (mcf->outbound_loopback == 1) {
        return 1;
    }

    if (mcf->hooks == NULL || mcf->hooks->nports == 0) {
        return port == 443;
    }

    for (i = 0; i < mcf->hooks->nports; i++) {
        if (mcf->hooks->ports[i] == port) {
            return 1;
        }
    }

    return 0;
}


static ngx_http_cms_hooks_conf_t *
ngx_http_cms_deliver_create(ngx_conf_t *cf)
{
    ngx_http_cms_hooks_conf_t  *hcf;

    hcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_cms_hooks_conf_t));
    if (hcf == NULL) {
        return NULL;
    }

    hcf->timeout = NGX_CONF_UNSET_MSEC;
    hcf->retention = NGX_CONF_UNSET_MSEC;
    hcf->concurrency = NGX_CONF_UNSET_UINT;

    return hcf;
}


/* the defaults, then the TLS context and its trusted CAs */
ngx_int_t
ngx_http_cms_deliver_conf_init(ngx_conf_t *cf, ngx_http_cms_main_conf_t *mcf)
{
    ngx_ssl_t                  *ssl;
    ngx_http_cms_hooks_conf_t  *hcf;

    if (mcf->hooks == NULL) {
        mcf->hooks = ngx_http_cms_deliver_create(cf);
        if (mcf->hooks == NULL) {
            return NGX_ERROR;
        }
    }

    hcf = mcf->hooks;

    ngx_conf_init_msec_value(hcf->timeout, 15000);
    ngx_conf_init_msec_value(hcf->retention, (ngx_msec_t) 30 * 86400000);
    ngx_conf_init_uint_value(hcf->concurrency, 32);

    if (hcf->scale.len == 0) {
        ngx_str_set(&hcf->scale, "1");
    }

    if (!hcf->enable) {
        return NGX_OK;
    }

    ssl = ngx_http_cms_crypto_tls_client(cf, &hcf->ca);
    if (ssl == NULL) {
        return NGX_ERROR;
    }

    hcf->ssl = ssl;

    return NGX_OK;
}


void
ngx_http_cms_deliver_init_process(ngx_cycle_t *cycle,
    ngx_http_cms_main_conf_t *mcf)
{
    if (!mcf->hooks->enable || !ngx_http_cms_jobs_here(mcf)) {
        return;
    }

    ngx_queue_init(&ngx_http_cms_deliver_flight);

    if (ngx_array_init(&ngx_http_cms_deliver_outcomes, cycle->pool,
                       mcf->hooks->concurrency * 2,
                       sizeof(ngx_http_cms_deliver_outcome_t))
        != NGX_OK)
    {
        return;
    }

    ngx_http_cms_deliver_ev.handler = ngx_http_cms_deliver_tick;
    ngx_http_cms_deliver_ev.data = mcf;
    ngx_http_cms_deliver_ev.log = cycle->log;
    ngx_http_cms_deliver_ev.cancelable = 1;

    ngx_add_timer(&ngx_http_cms_deliver_ev, mcf->events_interval);
}


/* claims as many due rows as there is room for in flight */
static void
ngx_http_cms_deliver_tick(ngx_event_t *ev)
{
    ngx_http_cms_main_conf_t *mcf = ev->data;

    u_char                      limit[NGX_INT_T_LEN], lease[NGX_INT_T_LEN];
    ngx_str_t                   args[2];
    ngx_http_cms_hooks_conf_t  *hcf;

    if (ngx_http_cms_quitting()) {
        return;                 /* nothing new: ngx_http_cms_jobs_arm() */
    }

    hcf = mcf->hooks;

    if (ngx_http_cms_deliver_busy >= hcf->concurrency
        || ngx_http_cms_deliver_claiming)
    {
        ngx_add_timer(ev, mcf->events_interval);
        return;
    }

    ngx_http_cms_deliver_asked = hcf->concurrency - ngx_http_cms_deliver_busy;

    args[0].data = limit;
    args[0].len = ngx_sprintf(limit, "%ui", ngx_http_cms_deliver_asked)
                  - limit;
    /*
     * the lease outlasts the claim's own statement, a delivery and its
     * outcome's recording (waiting for a connection, then running), so
     * that another host never sends a live host's delivery again
     */
    args[1].data = lease;
    args[1].len = ngx_sprintf(lease, "%M",
                              (hcf->timeout + 2 * mcf->pg->queue_timeout
                               + 3 * mcf->pg->query_timeout) / 1000 + 10)
                  - lease;

    ngx_http_cms_deliver_claiming = 1;

    if (ngx_http_cms_pg_job(&ngx_http_cms_deliver_claim_sql, args, 2,
                            ngx_http_cms_deliver_claimed, mcf)
        != NGX_OK)
    {
        ngx_http_cms_deliver_claiming = 0;
        ngx_add_timer(ev, mcf->events_interval);
    }
}


static void
ngx_http_cms_deliver_claimed(void *data, PGresult *res)
{
    ngx_http_cms_main_conf_t *mcf = data;

    int  i, rows;

    ngx_http_cms_deliver_claiming = 0;
    rows = 0;

    if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK
        || PQnfields(res) != 9)
    {
        ngx_log_error(NGX_LOG_ERR, ngx_cycle->log, 0,
                      "cms: claiming webhook deliveries failed%s%s",
                      res ? ": " : "",
                      ngx_http_cms_pg_oneline(PQresultErrorMessage(res)));

    } else {
        rows = PQntuples(res);
    }

    /* a quitting worker starts nothing: the leases run out, others send */
    for (i = 0; i < rows && !ngx_http_cms_quitting(); i++) {
        if (ngx_http_cms_deliver_one(mcf, res, i) != NGX_OK) {
            ngx_log_error(NGX_LOG_ALERT, ngx_cycle->log, 0,
                          "cms: webhook delivery %s could not start; it "
                          "is tried again once its lease ends",
                          PQgetvalue(res, i, 0));
        }
    }

    /* as many as asked for: more may be waiting */
    ngx_http_cms_deliver_more = (rows > 0
                                 && (ngx_uint_t) rows
                                    == ngx_http_cms_deliver_asked);

    if (!ngx_http_cms_quitting()) {
        ngx_add_timer(&ngx_http_cms_deliver_ev, mcf->events_interval);
        ngx_http_cms_deliver_wake(mcf);
    }
}


/* long: the row copied, the secrets opened, the request made, started */
static ngx_int_t
ngx_http_cms_deliver_one(ngx_http_cms_main_conf_t *mcf, PGresult *res,
    int row)
{
    ngx_int_t                rc;
    ngx_uint_t               n;
    ngx_str_t                secrets[2];
    ngx_pool_t              *pool;
    ngx_http_cms_deliver_t  *d;

    pool = ngx_create_pool(4096, ngx_cycle->log);
    if (pool == NULL) {
        return NGX_ERROR;
    }

    d = ngx_pcalloc(pool, sizeof(ngx_http_cms_deliver_t));
    if (d == NULL) {
        goto failed;
    }

    d->cl.pool = pool;
    d->cl.timeout = mcf->hooks->timeout;
    d->cl.done = ngx_http_cms_deliver_done;
    d->cl.data = mcf;

    if (ngx_http_cms_deliver_copy(pool, &d->id, res, row, 0) == NULL
        || ngx_http_cms_deliver_copy(pool, &d->attempt, res, row, 5) == NULL)
    {
        goto failed;
    }

    n = 0;

    if (ngx_http_cms_deliver_open(pool, mcf, res, row, 7, &secrets[n])
        == NGX_OK)
    {
        n++;
    }

    if (!PQgetisnull(res, row, 8)
        && ngx_http_cms_deliver_open(pool, mcf, res, row, 8, &secrets[n])
           == NGX_OK)
    {
        n++;
    }

    rc = (n == 0) ? NGX_DECLINED
                  : ngx_http_cms_deliver_request(d, res, row, secrets, n);

    while (n--) {
        ngx_explicit_memzero(secrets[n].data, secrets[n].len);
    }

    if (rc != NGX_OK) {
        /* recorded as a failed attempt, retried on the schedule */
        d->cl.error = (rc == NGX_DECLINED)
                      ? "the endpoint's secret does not open"
                      : (rc == NGX_ABORT)
                      ? "the endpoint's port is not allowed"
                      : "the request could not be made";
        ngx_http_cms_deliver_busy++;
        d->cl.finished = 1;
        ngx_http_cms_deliver_done(&d->cl);
        return NGX_OK;
    }

    if (ngx_http_cms_client_start(&d->cl) != NGX_OK) {
        goto failed;
    }

    ngx_queue_insert_tail(&ngx_http_cms_deliver_flight, &d->queue);
    ngx_http_cms_deliver_busy++;

    return NGX_OK;

failed:

    ngx_destroy_pool(pool);

    return NGX_ERROR;
}


/* the sealed secret (hex) of column col into its text, "whsec_..." */
static ngx_int_t
ngx_http_cms_deliver_open(ngx_pool_t *pool, ngx_http_cms_main_conf_t *mcf,
    PGresult *res, int row, int col, ngx_str_t *secret)
{
    size_t     len;
    u_char    *p;
    ngx_str_t  sealed, aad;

    len = PQgetlength(res, row, col);

    sealed.len = len / 2;
    sealed.data = ngx_pnalloc(pool, sealed.len + 1);
    aad.len = sizeof(NGX_HTTP_CMS_DELIVER_AAD) - 1 + PQgetlength(res, row, 1);
    aad.data = ngx_pnalloc(pool, aad.len);

    if (sealed.data == NULL || aad.data == NULL
        || cms_hex_decode(PQgetvalue(res, row, col), len, sealed.data) != 0)
    {
        return NGX_ERROR;
    }

    p = ngx_cpymem(aad.data, NGX_HTTP_CMS_DELIVER_AAD,
                   sizeof(NGX_HTTP_CMS_DELIVER_AAD) - 1);
    ngx_memcpy(p, PQgetvalue(res, row, 1), PQgetlength(res, row, 1));

    if (ngx_http_cms_crypto_open(pool, mcf->aead_key, &aad, &sealed, secret)
        != NGX_OK
        || secret->len > NGX_HTTP_CMS_DELIVER_SECRET)
    {
        ngx_log_error(NGX_LOG_ALERT, ngx_cycle->log, 0,
                      "cms: the secret of webhook %s does not open under "
                      "this cms_secret", PQgetvalue(res, row, 1));
        return NGX_ERROR;
    }

    return NGX_OK;
}


/*
 * The signatures of the row's body: x-service-signature with the current
 * secret (secrets[0]), a webhook-signature v1 entry with each of the n
 * secrets (the previous one while it still signs), over the attempt's
 * timestamp.
 */
static ngx_int_t
ngx_http_cms_deliver_sign(ngx_http_cms_deliver_sigs_t *sg, PGresult *res,
    int row, ngx_str_t *secrets, ngx_uint_t n)
{
    u_char      *body;
    size_t       blen, key_len;
    ngx_int_t    rc;
    ngx_uint_t   i;
    u_char       key[CMS_WEBHOOK_KEY_MAX];

    body = (u_char *) PQgetvalue(res, row, 4);
    blen = PQgetlength(res, row, 4);

    sg->n = n;
    sg->ts_len = ngx_sprintf(sg->ts, "%T", ngx_time()) - sg->ts;

    if (cms_webhook_sign_hex((char *) secrets[0].data, secrets[0].len, body,
                             blen, sg->hex) != 0)
    {
        return NGX_ERROR;
    }

    rc = NGX_OK;

    for (i = 0; i < n && rc == NGX_OK; i++) {
        if (cms_webhook_key((char *) secrets[i].data, secrets[i].len, key,
                            &key_len) != 0
            || cms_webhook_sign_v1(key, key_len, PQgetvalue(res, row, 2),
                                   PQgetlength(res, row, 2),
                                   (char *) sg->ts, sg->ts_len, body, blen,
                                   sg->v1[i]) != 0)
        {
            rc = NGX_ERROR;
        }
    }

    ngx_explicit_memzero(key, sizeof(key));

    return rc;
}


/*
 * The POST: request line and Host from the endpoint's URL (stored
 * normalized), the headers with the signatures, the stored body.
 */
/* long: the URL's parts, then one buffer written, header by header */
static ngx_int_t
ngx_http_cms_deliver_request(ngx_http_cms_deliver_t *d, PGresult *res,
    int row, ngx_str_t *secrets, ngx_uint_t n)
{
    u_char                       *p, *url;
    size_t                        blen;
    ngx_uint_t                    i, v6;
    cms_url_t                     u;
    ngx_http_cms_deliver_sigs_t   sg;

    url = (u_char *) PQgetvalue(res, row, 6);
    blen = PQgetlength(res, row, 4);

    if (cms_url_parse((char *) url, PQgetlength(res, row, 6),
                      CMS_URL_HTTP | CMS_URL_HTTPS, &u) != CMS_URL_OK
        || ngx_http_cms_deliver_sign(&sg, res, row, secrets, n) != NGX_OK)
    {
        return NGX_ERROR;
    }

    d->cl.host.len = u.host.len;
    d->cl.host.data = ngx_pnalloc(d->cl.pool, u.host.len + 1);
    d->cl.request.data = ngx_pnalloc(d->cl.pool,
                                     PQgetlength(res, row, 6) + blen
                                     + PQgetlength(res, row, 3) + 1024
                                     + 2 * CMS_WEBHOOK_V1_LEN);

    if (d->cl.host.data == NULL || d->cl.request.data == NULL) {
        return NGX_ERROR;
    }

    *ngx_cpymem(d->cl.host.data, url + u.host.off, u.host.len) = '\0';
    d->cl.port = (in_port_t) u.port_num;

    /* an endpoint stored before its port was refused (ports=) */
    if (!ngx_http_cms_deliver_port_allowed(d->cl.data, u.port_num)) {
        return NGX_ABORT;
    }
    d->cl.ssl = u.https ? ((ngx_http_cms_main_conf_t *) d->cl.data)->hooks->ssl
                        : NULL;
    v6 = (u.host_type == CMS_URL_HOST_IPV6);

    p = ngx_sprintf(d->cl.request.data, "POST %*s%s%*s HTTP/1.1\r\n"
                    "Host: %s%V%s",
                    u.path.len ? u.path.len : 1,
                    u.path.len ? url + u.path.off : (u_char *) "/",
                    u.has_query ? "?" : "", u.has_query ? u.query.len : 0,
                    url + u.query.off, v6 ? "[" : "", &d->cl.host,
                    v6 ? "]" : "");

    if (u.has_port) {
        p = ngx_sprintf(p, ":%ui", (ngx_uint_t) u.port_num);
    }

    p = ngx_sprintf(p, "\r\nContent-Type: application/json\r\n"
                    "User-Agent: " NGX_HTTP_CMS_DELIVER_UA "\r\n"
                    "Content-Length: %uz\r\n"
                    "x-service-signature: %*s\r\n"
                    "x-service-event: %*s\r\n"
                    "webhook-id: %*s\r\nwebhook-timestamp: %*s\r\n"
                    "webhook-signature: %*s",
                    blen, (size_t) CMS_WEBHOOK_HEX_LEN, sg.hex,
                    (size_t) PQgetlength(res, row, 3), PQgetvalue(res, row, 3),
                    (size_t) PQgetlength(res, row, 2), PQgetvalue(res, row, 2),
                    sg.ts_len, sg.ts, (size_t) CMS_WEBHOOK_V1_LEN, sg.v1[0]);

    for (i = 1; i < sg.n; i++) {
        p = ngx_sprintf(p, " %*s", (size_t) CMS_WEBHOOK_V1_LEN, sg.v1[i]);
    }

    p = ngx_cpymem(p, "\r\n\r\n", 4);
    p = ngx_cpymem(p, PQgetvalue(res, row, 4), blen);

    d->cl.request.len = p - d->cl.request.data;

    return NGX_OK;
}


/*
 * The attempt's outcome, kept to be recorded (the database decides what
 * follows); recorded at once when no batch is being written, else with
 * the next batch.
 */
static void
ngx_http_cms_deliver_done(ngx_http_cms_client_t *cl)
{
    ngx_http_cms_main_conf_t *mcf = cl->data;

    ngx_int_t                        attempt;
    ngx_http_cms_deliver_t          *d;
    ngx_http_cms_deliver_outcome_t  *o;

    d = (ngx_http_cms_deliver_t *) cl;

    if (cl->error != NULL || cl->status < 200 || cl->status > 299) {
        ngx_log_error(NGX_LOG_INFO, ngx_cycle->log, 0,
                      "cms: webhook delivery %V attempt %V to \"%V\" "
                      "failed: %ui %s", &d->id, &d->attempt, &cl->host,
                      cl->status, cl->error ? cl->error : "");
    }

    attempt = ngx_atoi(d->attempt.data, d->attempt.len);
    o = ngx_array_push(&ngx_http_cms_deliver_outcomes);

    if (o == NULL || attempt == NGX_ERROR || d->id.len != CMS_UUID_LEN) {
        ngx_log_error(NGX_LOG_WARN, ngx_cycle->log, 0,
                      "cms: the outcome of webhook delivery %V could not "
                      "be kept; it is sent again once its lease ends",
                      &d->id);
        if (o != NULL) {
            ngx_http_cms_deliver_outcomes.nelts--;
        }

    } else {
        ngx_memcpy(o->id, d->id.data, CMS_UUID_LEN);
        o->attempt = attempt;
        o->status = cl->status;
        o->ms = cl->elapsed;
        o->error = cl->error;
    }

    if (d->queue.next != NULL) {
        ngx_queue_remove(&d->queue);
    }

    ngx_destroy_pool(cl->pool);

    ngx_http_cms_deliver_busy--;

    ngx_http_cms_deliver_record(mcf);

    ngx_http_cms_deliver_wake(mcf);
}


/*
 * While rows wait (the last claim was full), claims again as soon as half
 * the room is free: claims of a few rows each would cost a statement a
 * delivery.  The tick's timer is replaced, not added to: nginx keeps a
 * timer that would move by less than 300 ms.
 */
static void
ngx_http_cms_deliver_wake(ngx_http_cms_main_conf_t *mcf)
{
    if (!ngx_http_cms_deliver_more || ngx_http_cms_deliver_claiming
        || ngx_http_cms_deliver_busy > mcf->hooks->concurrency / 2
        || ngx_http_cms_quitting())
    {
        return;
    }

    if (ngx_http_cms_deliver_ev.timer_set) {
        ngx_del_timer(&ngx_http_cms_deliver_ev);
    }

    ngx_add_timer(&ngx_http_cms_deliver_ev, 1);
}


/*
 * The oldest kept outcomes, NGX_HTTP_CMS_DELIVER_BATCH at most, as one
 * JSON array, one statement; the rest go with the next (the statement's
 * time stays bounded however many came while the last one ran).
 */
/* long: the outcomes' length, then the array written, then sent */
static void
ngx_http_cms_deliver_record(ngx_http_cms_main_conf_t *mcf)
{
    size_t                           len;
    u_char                          *json, *p;
    ngx_str_t                        args[2];
    ngx_uint_t                       i, n, rest;
    ngx_http_cms_deliver_outcome_t  *o;

    n = ngx_min(ngx_http_cms_deliver_outcomes.nelts,
                NGX_HTTP_CMS_DELIVER_BATCH);

    if (ngx_http_cms_deliver_recording || n == 0) {
        return;
    }

    o = ngx_http_cms_deliver_outcomes.elts;
    len = 2;

    for (i = 0; i < n; i++) {
        len += sizeof("{\"id\":\"\",\"attempt\":,\"code\":,\"ms\":,"
                      "\"error\":\"\"},") - 1
               + CMS_UUID_LEN + 3 * NGX_INT_T_LEN
               + (o[i].error ? ngx_http_cms_json_escaped_len(
                                   (u_char *) o[i].error,
                                   ngx_strlen(o[i].error))
                             : 4);
    }

    json = ngx_alloc(len, ngx_cycle->log);
    if (json == NULL) {
        return;                       /* kept: tried with the next outcome */
    }

    p = ngx_cpymem(json, "[", 1);

    for (i = 0; i < n; i++) {
        p = ngx_sprintf(p, "%s{\"id\":\"%*s\",\"attempt\":%ui,\"code\":",
                        i ? "," : "", (size_t) CMS_UUID_LEN, o[i].id,
                        o[i].attempt);
        p = o[i].status ? ngx_sprintf(p, "%ui", o[i].status)
                        : ngx_cpymem(p, "null", 4);
        p = ngx_sprintf(p, ",\"ms\":%M,\"error\":", o[i].ms);

        if (o[i].error == NULL) {
            p = ngx_cpymem(p, "null}", 5);
            continue;
        }

        p = ngx_http_cms_json_escape(p, (u_char *) o[i].error,
                                     ngx_strlen(o[i].error));
        *p++ = '}';
    }

    *p++ = ']';

    args[0].data = json;
    args[0].len = p - json;
    args[1] = mcf->hooks->scale;

    /* the statement copies its arguments */
    if (ngx_http_cms_pg_job(&ngx_http_cms_deliver_results_sql, args, 2,
                            ngx_http_cms_deliver_recorded, mcf)
        != NGX_OK)
    {
        /* all of them: the next statement would most likely fail too */
        n = ngx_http_cms_deliver_outcomes.nelts;
        ngx_log_error(NGX_LOG_WARN, ngx_cycle->log, 0,
                      "cms: the outcomes of %ui webhook deliveries could "
                      "not be recorded; they are sent again once their "
                      "leases end", n);

    } else {
        ngx_http_cms_deliver_recording = 1;
    }

    ngx_free(json);

    rest = ngx_http_cms_deliver_outcomes.nelts - n;
    ngx_memmove(o, o + n, rest * sizeof(ngx_http_cms_deliver_outcome_t));
    ngx_http_cms_deliver_outcomes.nelts = rest;
}


static void
ngx_http_cms_deliver_recorded(void *data, PGresult *res)
{
    ngx_http_cms_main_conf_t *mcf = data;

    ngx_http_cms_deliver_recording = 0;

    if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
        ngx_log_error(NGX_LOG_WARN, ngx_cycle->log, 0,
                      "cms: recording webhook deliveries failed%s%s; they "
                      "are sent again once their leases end",
                      res ? ": " : "",
                      ngx_http_cms_pg_oneline(PQresultErrorMessage(res)));
    }

    ngx_http_cms_deliver_record(mcf);
}


/* column col of the row, copied into pool as *s (terminated) */
static ngx_str_t *
ngx_http_cms_deliver_copy(ngx_pool_t *pool, ngx_str_t *s, PGresult *res,
    int row, int col)
{
    s->len = PQgetlength(res, row, col);
    s->data = ngx_pnalloc(pool, s->len + 1);

    if (s->data == NULL) {
        return NULL;
    }

    *ngx_cpymem(s->data, PQgetvalue(res, row, col), s->len) = '\0';

    return s;
}


/*
 * The worker exits: what is still in flight is abandoned, its connection
 * closed with its pool (the client's cleanup); the leases make the rows
 * due again.
 */
void
ngx_http_cms_deliver_exit_process(void)
{
    ngx_queue_t             *q;
    ngx_http_cms_deliver_t  *d;

    if (ngx_http_cms_deliver_flight.next == NULL) {
        return;
    }

    while (!ngx_queue_empty(&ngx_http_cms_deliver_flight)) {
        q = ngx_queue_head(&ngx_http_cms_deliver_flight);
        ngx_queue_remove(q);

        d = ngx_queue_data(q, ngx_http_cms_deliver_t, queue);
        ngx_destroy_pool(d->cl.pool);
    }

    ngx_http_cms_client_exit_process();
}
