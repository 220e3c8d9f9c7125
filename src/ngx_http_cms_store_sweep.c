
/*
 * The store's sweeper (sql/0036_object_removals.sql, docs/object-storage.md
 * "Deletes and orphans"), on worker 0 of each host with cms_storage:
 *
 *   removals  due keys claimed for a lease (FOR UPDATE SKIP LOCKED: one
 *             host takes each), each object removed (the bucket: a signed
 *             DELETE on the client, all at once; the folder: one job in
 *             the thread pool), then in one statement the removed keys'
 *             rows deleted and the others left to wait again;
 *
 *   orphans   every cms_storage_reconcile, the bucket or the folder looked
 *             through for objects no row names
 *             (ngx_http_cms_store_orphans.c).
 *
 * One round of each at a time.  A quitting worker starts nothing new and
 * abandons a round in flight: the claim's lease runs out, a pass starts
 * over at the next worker 0's turn.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_client.h"
#include "ngx_http_cms_jobs.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_s3_int.h"
#include "ngx_http_cms_store.h"
#include "ngx_http_cms_store_sweep.h"
#include "cms_filekey.h"
#include "cms_sigv4.h"


#define NGX_HTTP_CMS_SWEEP_BATCH    32          /* keys a removal round */

/* how often the queue is looked at: the jobs' interval, 5 s at least */
#define ngx_http_cms_sweep_every(mcf)  ngx_max((mcf)->events_interval, 5000)
#define NGX_HTTP_CMS_SWEEP_UA       "ngx_http_cms_module-sweep/1"

/* the removal round while its claim is in flight */
#define NGX_HTTP_CMS_SWEEP_CLAIMING  ((ngx_http_cms_sweep_rm_t *) -1)


typedef struct ngx_http_cms_sweep_rm_s  ngx_http_cms_sweep_rm_t;

/* one key's DELETE; a pool of its own, gone when it is done */
typedef struct {
    ngx_http_cms_client_t       cl;          /* first: the client's */
    ngx_http_cms_sweep_rm_t    *rm;
    ngx_uint_t                  i;
} ngx_http_cms_sweep_send_t;

/* a removal round: the claimed keys and what became of each */
struct ngx_http_cms_sweep_rm_s {
    ngx_pool_t                 *pool;
    ngx_http_cms_main_conf_t   *mcf;
    ngx_str_t                  *keys;
    u_char                     *removed;     /* per key: 1 removed */
    ngx_http_cms_sweep_send_t **sends;       /* the bucket's, in flight */
    ngx_uint_t                  n;
    ngx_uint_t                  pending;
    ngx_int_t                   root;        /* the folder's descriptor */
};



static void ngx_http_cms_sweep_tick(ngx_event_t *ev);
static void ngx_http_cms_sweep_claimed(void *data, PGresult *res);
static ngx_int_t ngx_http_cms_sweep_round(ngx_http_cms_main_conf_t *mcf,
    PGresult *res, int rows);
static ngx_int_t ngx_http_cms_sweep_delete(ngx_http_cms_sweep_rm_t *rm,
    ngx_uint_t i);
static void ngx_http_cms_sweep_deleted(ngx_http_cms_client_t *cl);
static void ngx_http_cms_sweep_unlink(void *data, ngx_log_t *log);
static void ngx_http_cms_sweep_unlinked(ngx_event_t *ev);
static void ngx_http_cms_sweep_settle(ngx_http_cms_sweep_rm_t *rm);
static void ngx_http_cms_sweep_settled(void *data, PGresult *res);



/* $1 how many, $2 the lease in seconds */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_sweep_claim_sql =
    ngx_http_cms_pg_stmt(
        "SELECT storage_key FROM cms_object_removals_claim($1::integer,"
        " make_interval(secs => $2::float8))",
        2);

/* $1 the removed keys, $2 the others */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_sweep_settle_sql =
    ngx_http_cms_pg_stmt(
        "SELECT cms_object_removals_settle($1::text[], $2::text[])", 2);

static ngx_event_t                 ngx_http_cms_sweep_ev;
static ngx_http_cms_sweep_rm_t    *ngx_http_cms_sweep_flight;


/* "cms_storage_reconcile off | TIME" */
char *
ngx_http_cms_store_sweep_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_cms_main_conf_t *mcf = conf;

    ngx_str_t  *value;

    if (mcf->reconcile != NGX_CONF_UNSET_MSEC) {
        return "is duplicate";
    }

    value = cf->args->elts;

    if (ngx_strcmp(value[1].data, "off") == 0) {
        mcf->reconcile = 0;
        return NGX_CONF_OK;
    }

    mcf->reconcile = ngx_parse_time(&value[1], 0);

    if (mcf->reconcile == (ngx_msec_t) NGX_ERROR || mcf->reconcile == 0) {
        return "takes \"off\" or a time";
    }

    return NGX_CONF_OK;
}


void
ngx_http_cms_store_sweep_init_process(ngx_cycle_t *cycle,
    ngx_http_cms_main_conf_t *mcf)
{
    if (mcf->storage.data == NULL || !ngx_http_cms_jobs_here(mcf)) {
        return;
    }

    ngx_http_cms_sweep_ev.handler = ngx_http_cms_sweep_tick;
    ngx_http_cms_sweep_ev.data = mcf;
    ngx_http_cms_sweep_ev.log = cycle->log;
    ngx_http_cms_sweep_ev.cancelable = 1;

    ngx_add_timer(&ngx_http_cms_sweep_ev, ngx_http_cms_sweep_every(mcf));

    ngx_http_cms_store_orphans_init_process(cycle, mcf);
}



/* removals */

static void
ngx_http_cms_sweep_tick(ngx_event_t *ev)
{
    ngx_http_cms_main_conf_t *mcf = ev->data;

    u_char     limit[NGX_INT_T_LEN], lease[NGX_INT_T_LEN];
    ngx_str_t  args[2];

    if (ngx_http_cms_quitting()) {
        return;                 /* nothing new: ngx_http_cms_jobs_arm() */
    }

    if (ngx_http_cms_sweep_flight != NULL) {
        return;     /* the round's end arms the timer */
    }

    args[0].data = limit;
    args[0].len = ngx_sprintf(limit, "%d", NGX_HTTP_CMS_SWEEP_BATCH) - limit;
    args[1].data = lease;
    args[1].len = ngx_sprintf(lease, "%d",
                              NGX_HTTP_CMS_SWEEP_TIMEOUT / 1000 + 60)
                  - lease;

    /* a marker: the claim's answer owns the next step */
    ngx_http_cms_sweep_flight = NGX_HTTP_CMS_SWEEP_CLAIMING;

    if (ngx_http_cms_pg_job(&ngx_http_cms_sweep_claim_sql, args, 2,
                            ngx_http_cms_sweep_claimed, mcf)
        != NGX_OK)
    {
        ngx_http_cms_sweep_flight = NULL;
        ngx_http_cms_jobs_next(ev, ngx_http_cms_sweep_every(mcf));
    }
}


static void
ngx_http_cms_sweep_claimed(void *data, PGresult *res)
{
    ngx_http_cms_main_conf_t *mcf = data;

    int  rows;

    ngx_http_cms_sweep_flight = NULL;
    rows = 0;

    if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK
        || PQnfields(res) != 1)
    {
        ngx_log_error(NGX_LOG_ERR, ngx_cycle->log, 0,
                      "cms: claiming object removals failed%s%s",
                      res ? ": " : "",
                      ngx_http_cms_pg_oneline(PQresultErrorMessage(res)));

    } else {
        rows = PQntuples(res);
    }

    if (rows == 0 || ngx_http_cms_quitting()) {
        ngx_http_cms_jobs_next(&ngx_http_cms_sweep_ev,
                                ngx_http_cms_sweep_every(mcf));
        return;
    }

    if (ngx_http_cms_sweep_round(mcf, res, rows) != NGX_OK) {
        ngx_log_error(NGX_LOG_ALERT, ngx_cycle->log, 0,
                      "cms: a round of %d object removals could not start; "
                      "they are taken again once their lease ends", rows);
        ngx_http_cms_jobs_next(&ngx_http_cms_sweep_ev,
                                ngx_http_cms_sweep_every(mcf));
    }
}


/* long: the keys copied, then each DELETE sent or the folder's job posted */
static ngx_int_t
ngx_http_cms_sweep_round(ngx_http_cms_main_conf_t *mcf, PGresult *res,
    int rows)
{
    int                       i;
    ngx_pool_t               *pool;
    ngx_http_cms_sweep_rm_t  *rm;

    pool = ngx_create_pool(4096, ngx_cycle->log);
    if (pool == NULL) {
        return NGX_ERROR;
    }

    rm = ngx_pcalloc(pool, sizeof(ngx_http_cms_sweep_rm_t));
    if (rm == NULL) {
        goto failed;
    }

    rm->pool = pool;
    rm->mcf = mcf;
    rm->n = rows;
    rm->keys = ngx_palloc(pool, rows * sizeof(ngx_str_t));
    rm->removed = ngx_pcalloc(pool, rows);
    rm->sends = ngx_pcalloc(pool, rows * sizeof(void *));

    if (rm->keys == NULL || rm->removed == NULL || rm->sends == NULL) {
        goto failed;
    }

    for (i = 0; i < rows; i++) {
        rm->keys[i].len = PQgetlength(res, i, 0);
        rm->keys[i].data = ngx_pnalloc(pool, rm->keys[i].len + 1);

        if (rm->keys[i].data == NULL) {
            goto failed;
        }

        ngx_memcpy(rm->keys[i].data, PQgetvalue(res, i, 0),
                   rm->keys[i].len + 1);
    }

    ngx_http_cms_sweep_flight = rm;

    if (mcf->s3 == NULL) {
        rm->root = ngx_http_cms_store_root(&mcf->storage);

        if (rm->root == NGX_INVALID_FILE
            || ngx_http_cms_sweep_post(mcf, pool, ngx_http_cms_sweep_unlink,
                                       ngx_http_cms_sweep_unlinked, rm)
               != NGX_OK)
        {
            ngx_http_cms_sweep_settle(rm);      /* all failed */
        }

        return NGX_OK;
    }

    for (i = 0; i < rows; i++) {
        (void) ngx_http_cms_sweep_delete(rm, i);
    }

    if (rm->pending == 0) {
        ngx_http_cms_sweep_settle(rm);
    }

    return NGX_OK;

failed:

    ngx_destroy_pool(pool);

    return NGX_ERROR;
}


/* one key's DELETE from the bucket, started */
static ngx_int_t
ngx_http_cms_sweep_delete(ngx_http_cms_sweep_rm_t *rm, ngx_uint_t i)
{
    ngx_pool_t                 *pool;
    cms_filekey_t               k;
    ngx_http_cms_s3_conf_t     *scf;
    ngx_http_cms_sweep_send_t  *s;

    scf = rm->mcf->s3;

    if (!cms_filekey_parse((char *) rm->keys[i].data, rm->keys[i].len,
                           &k))
    {
        /* no object can be there: the row goes */
        rm->removed[i] = 1;
        return NGX_OK;
    }

    pool = ngx_create_pool(2048, ngx_cycle->log);
    if (pool == NULL) {
        return NGX_ERROR;
    }

    s = ngx_pcalloc(pool, sizeof(ngx_http_cms_sweep_send_t));
    if (s == NULL) {
        ngx_destroy_pool(pool);
        return NGX_ERROR;
    }

    s->rm = rm;
    s->i = i;
    s->cl.pool = pool;
    s->cl.done = ngx_http_cms_sweep_deleted;
    s->cl.data = s;
    s->cl.action = "removing an object from the bucket";

    if (ngx_http_cms_sweep_start(&s->cl, scf, &ngx_http_cms_s3_delete, NULL,
                                 &rm->keys[i], NULL, "1.1")
        != NGX_OK)
    {
        ngx_destroy_pool(pool);
        return NGX_ERROR;
    }

    rm->sends[i] = s;
    rm->pending++;

    return NGX_OK;
}


static void
ngx_http_cms_sweep_deleted(ngx_http_cms_client_t *cl)
{
    ngx_http_cms_sweep_send_t *s = cl->data;

    ngx_http_cms_sweep_rm_t  *rm;

    rm = s->rm;

    /* 204, or 404 from a server that says so of a missing key */
    if (cl->error == NULL
        && ((cl->status >= 200 && cl->status <= 299) || cl->status == 404))
    {
        rm->removed[s->i] = 1;

    } else {
        ngx_log_error(NGX_LOG_WARN, ngx_cycle->log, 0,
                      "cms: removing \"%V\" from the bucket failed: %ui %s; "
                      "tried again later", &rm->keys[s->i], cl->status,
                      cl->error ? cl->error : "");
    }

    rm->sends[s->i] = NULL;
    ngx_destroy_pool(cl->pool);

    if (--rm->pending == 0) {
        ngx_http_cms_sweep_settle(rm);
    }
}


/* in a pool thread: each key's file removed beneath the root, its folder
   fsynced; an absent file is removed already */
static void
ngx_http_cms_sweep_unlink(void *data, ngx_log_t *log)
{
    ngx_http_cms_sweep_rm_t *rm = data;

    int             dir;
    u_char         *slash;
    ngx_uint_t      i;
    cms_filekey_t   k;

    for (i = 0; i < rm->n; i++) {
        if (!cms_filekey_parse((char *) rm->keys[i].data, rm->keys[i].len,
                               &k))
        {
            rm->removed[i] = 1;     /* no object can be there */
            continue;
        }

        slash = (u_char *) strrchr((char *) rm->keys[i].data, '/');
        if (slash == NULL) {
            rm->removed[i] = (unlinkat(rm->root, (char *) rm->keys[i].data,
                                       0) == 0 || errno == ENOENT);
            continue;
        }

        *slash = '\0';
        dir = ngx_http_cms_store_beneath(rm->root, (char *) rm->keys[i].data,
                                         O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        *slash = '/';

        if (dir == -1) {
            rm->removed[i] = (errno == ENOENT);
            continue;
        }

        if (cms_filekey_upload((char *) rm->keys[i].data, rm->keys[i].len)) {
            /* an upload goes with its image variants */
            rm->removed[i] = (ngx_http_cms_image_forget(dir,
                                                         (char *) slash + 1)
                              == 0 && fsync(dir) == 0);

        } else if (unlinkat(dir, (char *) slash + 1, 0) == 0) {
            rm->removed[i] = (fsync(dir) == 0);

        } else {
            rm->removed[i] = (errno == ENOENT);
        }

        (void) close(dir);
    }
}


static void
ngx_http_cms_sweep_unlinked(ngx_event_t *ev)
{
    ngx_http_cms_sweep_rm_t *rm = ev->data;

    ngx_uint_t  i;

    for (i = 0; i < rm->n; i++) {
        if (!rm->removed[i]) {
            ngx_log_error(NGX_LOG_WARN, ngx_cycle->log, 0,
                          "cms: removing \"%V\" from \"%V\" failed; tried "
                          "again later", &rm->keys[i], &rm->mcf->storage);
        }
    }

    ngx_http_cms_sweep_settle(rm);
}


/* long: the two arrays' text, then the statement */
static void
ngx_http_cms_sweep_settle(ngx_http_cms_sweep_rm_t *rm)
{
    u_char      *p[2];
    size_t       len;
    ngx_str_t    args[2];
    ngx_uint_t   i, k;

    len = 2;

    for (i = 0; i < rm->n; i++) {
        len += rm->keys[i].len + 3;
    }

    for (k = 0; k < 2; k++) {
        args[k].data = ngx_pnalloc(rm->pool, len);
        if (args[k].data == NULL) {
            ngx_http_cms_sweep_settled(rm, NULL);
            return;
        }

        p[k] = args[k].data;
        *p[k]++ = '{';
    }

    /* keys hold no '"' nor '\\' (cms_filekey_parse()): quoted as they are */
    for (i = 0; i < rm->n; i++) {
        k = rm->removed[i] ? 0 : 1;
        p[k] = ngx_sprintf(p[k], "%s\"%V\"",
                           p[k] - args[k].data > 1 ? "," : "", &rm->keys[i]);
    }

    for (k = 0; k < 2; k++) {
        *p[k]++ = '}';
        args[k].len = p[k] - args[k].data;
    }

    if (ngx_http_cms_pg_job(&ngx_http_cms_sweep_settle_sql, args, 2,
                            ngx_http_cms_sweep_settled, rm)
        != NGX_OK)
    {
        ngx_http_cms_sweep_settled(rm, NULL);
    }
}


static void
ngx_http_cms_sweep_settled(void *data, PGresult *res)
{
    ngx_http_cms_sweep_rm_t *rm = data;

    ngx_uint_t                 full;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = rm->mcf;

    if (res == NULL
        || (PQresultStatus(res) != PGRES_COMMAND_OK
            && PQresultStatus(res) != PGRES_TUPLES_OK))
    {
        ngx_log_error(NGX_LOG_ERR, ngx_cycle->log, 0,
                      "cms: recording object removals failed%s%s; they are "
                      "taken again once their lease ends",
                      res ? ": " : "",
                      ngx_http_cms_pg_oneline(PQresultErrorMessage(res)));
    }

    /* a full batch: more may be due now */
    full = (rm->n == NGX_HTTP_CMS_SWEEP_BATCH);

    ngx_http_cms_sweep_flight = NULL;
    ngx_destroy_pool(rm->pool);

    ngx_http_cms_jobs_next(&ngx_http_cms_sweep_ev,
                            full ? 1 : ngx_http_cms_sweep_every(mcf));
}




/* long: the request's bytes written, then the client's fields */
ngx_int_t
ngx_http_cms_sweep_start(ngx_http_cms_client_t *cl,
    ngx_http_cms_s3_conf_t *scf, ngx_str_t *method, ngx_str_t *root,
    ngx_str_t *key, ngx_str_t *query, const char *version)
{
    u_char     *p;
    size_t      len;
    ngx_str_t   v[NGX_HTTP_CMS_S3_VARS], *out;

    if (ngx_http_cms_s3_sign(cl->pool, ngx_cycle->log, scf, root, method,
                             key, query, NULL, NULL, v)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    out = &cl->request;

    len = sizeof(" HTTP/1.1\r\nHost: \r\nx-amz-date: \r\n"
                 "x-amz-content-sha256: \r\nx-amz-security-token: \r\n"
                 "Authorization: \r\nUser-Agent: " NGX_HTTP_CMS_SWEEP_UA
                 "\r\nContent-Length: 0\r\n\r\n")
          + method->len + v[NGX_HTTP_CMS_S3_URI].len
          + v[NGX_HTTP_CMS_S3_HOST].len + v[NGX_HTTP_CMS_S3_DATE].len
          + v[NGX_HTTP_CMS_S3_SHA256].len + v[NGX_HTTP_CMS_S3_TOKEN].len
          + v[NGX_HTTP_CMS_S3_AUTHORIZATION].len;

    out->data = ngx_pnalloc(cl->pool, len);
    if (out->data == NULL) {
        return NGX_ERROR;
    }

    p = ngx_sprintf(out->data, "%V %V HTTP/%s\r\nHost: %V\r\n"
                    "x-amz-date: %V\r\nx-amz-content-sha256: %V\r\n",
                    method, &v[NGX_HTTP_CMS_S3_URI], version,
                    &v[NGX_HTTP_CMS_S3_HOST], &v[NGX_HTTP_CMS_S3_DATE],
                    &v[NGX_HTTP_CMS_S3_SHA256]);

    if (v[NGX_HTTP_CMS_S3_TOKEN].len) {
        p = ngx_sprintf(p, "x-amz-security-token: %V\r\n",
                        &v[NGX_HTTP_CMS_S3_TOKEN]);
    }

    p = ngx_sprintf(p, "Authorization: %V\r\nUser-Agent: "
                    NGX_HTTP_CMS_SWEEP_UA "\r\nContent-Length: 0\r\n\r\n",
                    &v[NGX_HTTP_CMS_S3_AUTHORIZATION]);

    out->len = p - out->data;

    cl->host = scf->peer;
    cl->port = scf->port;
    cl->ssl = scf->ssl;
    cl->timeout = NGX_HTTP_CMS_SWEEP_TIMEOUT;
    cl->trusted = 1;

    return ngx_http_cms_client_start(cl);
}


/* work(data) in nginx's thread pool, then done(ev) on the event loop */
ngx_int_t
ngx_http_cms_sweep_post(ngx_http_cms_main_conf_t *mcf, ngx_pool_t *pool,
    ngx_http_cms_sweep_work_pt work, ngx_event_handler_pt done, void *data)
{
    ngx_thread_task_t  *task;

    if (mcf->tp == NULL) {
        return NGX_ERROR;
    }

    task = ngx_thread_task_alloc(pool, 0);
    if (task == NULL) {
        return NGX_ERROR;
    }

    task->ctx = data;
    task->handler = work;
    task->event.handler = done;
    task->event.data = data;
    task->event.log = ngx_cycle->log;

    if (ngx_thread_task_post(mcf->tp, task) != NGX_OK) {
        return NGX_ERROR;
    }

    return NGX_OK;
}


void
ngx_http_cms_store_sweep_exit_process(void)
{
    ngx_uint_t                i;
    ngx_http_cms_sweep_rm_t  *rm;

    rm = ngx_http_cms_sweep_flight;

    /* a query's callback or a thread's job owns what it was given */
    if (rm != NULL && rm != NGX_HTTP_CMS_SWEEP_CLAIMING && rm->pending != 0)
    {
        ngx_http_cms_sweep_flight = NULL;

        for (i = 0; i < rm->n; i++) {
            if (rm->sends[i] != NULL) {
                ngx_destroy_pool(rm->sends[i]->cl.pool);
            }
        }

        ngx_destroy_pool(rm->pool);
    }

    ngx_http_cms_store_orphans_exit_process();
}
