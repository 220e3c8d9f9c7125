
/*
 * argon2id in the thread pool.  An unknown email is checked against a
 * dummy hash so that it costs the same time as a wrong password.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_password.h"
#include "ngx_http_cms_thread.h"
#include "cms_password.h"


#define NGX_HTTP_CMS_ENCODED_MAX       160


typedef struct {
    ngx_http_request_t             *request;
    ngx_queue_t                     queue;       /* waiting for a turn */
    unsigned                        queued:1;
    unsigned                        running:1;
    ngx_http_cms_password_done_pt   done;
    char                           *password;     /* NUL-terminated copy */
    size_t                          len;
    char                           *encoded;
    unsigned char                   salt[CMS_PASSWORD_SALT_LEN];
    unsigned                        verify:1;
    unsigned                        ok:1;
} ngx_http_cms_password_job_t;


static ngx_http_cms_password_job_t *ngx_http_cms_password_job(
    ngx_http_request_t *r, ngx_str_t *password,
    ngx_http_cms_password_done_pt done);
static void ngx_http_cms_password_work(void *data);
static ngx_int_t ngx_http_cms_password_submit(ngx_http_request_t *r,
    ngx_http_cms_password_job_t *job);
static ngx_int_t ngx_http_cms_password_start(
    ngx_http_cms_password_job_t *job);
static void ngx_http_cms_password_next(void);
static void ngx_http_cms_password_cleanup(void *data);
static ngx_int_t ngx_http_cms_password_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data);


static ngx_queue_t  ngx_http_cms_password_waiting;
static ngx_uint_t   ngx_http_cms_password_running;
static ngx_uint_t   ngx_http_cms_password_init;


/* a valid hash of a random password nobody knows: the unknown-email case */
static char  ngx_http_cms_password_dummy[] =
    "$argon2id$v=19$m=65536,t=3,p=1$N0UWLHnyWFscnE723LW/Og"
    "$DmkSWFS2Arm9WVxS7tWt3jgNUPVbX0OBdpy2hdm5krE";


ngx_int_t
ngx_http_cms_password_hash(ngx_http_request_t *r, ngx_str_t *password,
    ngx_http_cms_password_done_pt done)
{
    ngx_http_cms_password_job_t  *job;

    job = ngx_http_cms_password_job(r, password, done);
    if (job == NULL) {
        return NGX_ERROR;
    }

    job->encoded = ngx_pnalloc(r->pool, NGX_HTTP_CMS_ENCODED_MAX);

    if (job->encoded == NULL
        || ngx_http_cms_crypto_random(job->salt, sizeof(job->salt)) != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_cms_password_submit(r, job);
}


ngx_int_t
ngx_http_cms_password_verify(ngx_http_request_t *r, ngx_str_t *password,
    ngx_str_t *encoded, ngx_http_cms_password_done_pt done)
{
    ngx_http_cms_password_job_t  *job;

    job = ngx_http_cms_password_job(r, password, done);
    if (job == NULL) {
        return NGX_ERROR;
    }

    job->verify = 1;
    job->encoded = ngx_http_cms_password_dummy;

    if (encoded != NULL) {
        job->encoded = ngx_pnalloc(r->pool, encoded->len + 1);
        if (job->encoded == NULL) {
            return NGX_ERROR;
        }

        (void) ngx_cpystrn((u_char *) job->encoded, encoded->data,
                           encoded->len + 1);
    }

    return ngx_http_cms_password_submit(r, job);
}


/*
 * argon2id is memory-hard (64 MiB a hash): twenty at once would thrash the
 * caches the event loop needs.  A worker runs as many as it has CPUs and
 * queues the rest, first come first served.
 */
static ngx_int_t
ngx_http_cms_password_submit(ngx_http_request_t *r,
    ngx_http_cms_password_job_t *job)
{
    ngx_pool_cleanup_t  *cln;

    if (!ngx_http_cms_password_init) {
        ngx_queue_init(&ngx_http_cms_password_waiting);
        ngx_http_cms_password_init = 1;
    }

    job->request = r;

    cln = ngx_pool_cleanup_add(r->pool, 0);
    if (cln == NULL) {
        return NGX_ERROR;
    }

    cln->handler = ngx_http_cms_password_cleanup;
    cln->data = job;

    if (ngx_http_cms_password_running < (ngx_uint_t) ngx_max(ngx_ncpu, 1)) {
        return ngx_http_cms_password_start(job);
    }

    /* a client that leaves meanwhile is noticed; the cleanup unqueues it */
    r->read_event_handler = ngx_http_test_reading;

    ngx_queue_insert_tail(&ngx_http_cms_password_waiting, &job->queue);
    job->queued = 1;

    return NGX_DONE;
}


static ngx_int_t
ngx_http_cms_password_start(ngx_http_cms_password_job_t *job)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_thread_run(job->request, ngx_http_cms_password_work,
                                 job, ngx_http_cms_password_done);

    if (rc == NGX_DONE) {
        job->running = 1;
        ngx_http_cms_password_running++;
    }

    return rc;
}


/* a turn ended: the next waiting job starts */
static void
ngx_http_cms_password_next(void)
{
    ngx_queue_t                  *q;
    ngx_connection_t             *c;
    ngx_http_request_t           *r;
    ngx_http_cms_ctx_t           *ctx;
    ngx_http_cms_password_job_t  *job;

    while (!ngx_queue_empty(&ngx_http_cms_password_waiting)
           && ngx_http_cms_password_running
              < (ngx_uint_t) ngx_max(ngx_ncpu, 1))
    {
        q = ngx_queue_head(&ngx_http_cms_password_waiting);
        ngx_queue_remove(q);

        job = ngx_queue_data(q, ngx_http_cms_password_job_t, queue);
        job->queued = 0;

        if (ngx_http_cms_password_start(job) == NGX_DONE) {
            continue;
        }

        r = job->request;
        c = r->connection;

        ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);
        ctx->finish(r, NGX_ERROR);
        ngx_http_run_posted_requests(c);
    }
}


/* the request ends: a waiting job leaves the queue, a running one (its
   client gone) gives its turn back */
static void
ngx_http_cms_password_cleanup(void *data)
{
    ngx_http_cms_password_job_t *job = data;

    if (job->queued) {
        ngx_queue_remove(&job->queue);
        job->queued = 0;
    }

    if (job->running) {
        job->running = 0;
        ngx_http_cms_password_running--;
        ngx_http_cms_password_next();
    }
}


/* a job holding a NUL-terminated copy of the password */
static ngx_http_cms_password_job_t *
ngx_http_cms_password_job(ngx_http_request_t *r, ngx_str_t *password,
    ngx_http_cms_password_done_pt done)
{
    ngx_http_cms_password_job_t  *job;

    job = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_password_job_t));
    if (job == NULL) {
        return NULL;
    }

    job->done = done;
    job->len = password->len;
    job->password = ngx_pnalloc(r->pool, password->len + 1);

    if (job->password == NULL) {
        return NULL;
    }

    /* the body getter refuses NUL in strings; copy the length anyway */
    ngx_memcpy(job->password, password->data, password->len);
    job->password[password->len] = '\0';

    return job;
}


static void
ngx_http_cms_password_work(void *data)
{
    ngx_http_cms_password_job_t *job = data;

    if (job->verify) {
        job->ok = cms_password_verify(job->encoded, job->password, job->len)
                  == 1;
        return;
    }

    job->ok = cms_password_hash(job->password, job->len, job->salt,
                                job->encoded, NGX_HTTP_CMS_ENCODED_MAX) == 0;
}


static ngx_int_t
ngx_http_cms_password_done(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    void *data)
{
    ngx_http_cms_password_job_t *job = data;

    ngx_str_t  encoded;

    if (job->running) {
        job->running = 0;
        ngx_http_cms_password_running--;
        ngx_http_cms_password_next();
    }

    ngx_explicit_memzero(job->password, job->len);

    encoded.data = (u_char *) job->encoded;
    encoded.len = (job->ok && !job->verify) ? ngx_strlen(job->encoded) : 0;

    return job->done(r, ctx, job->ok, &encoded);
}
