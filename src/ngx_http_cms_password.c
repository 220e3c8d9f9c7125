
/*
 * argon2id in the thread pool.  An unknown email is checked against a
 * dummy hash so that it costs the same time as a wrong password.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_password.h"
#include "ngx_http_cms_thread.h"
#include "cms_password.h"


#define NGX_HTTP_CMS_ENCODED_MAX       160


typedef struct {
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
static ngx_int_t ngx_http_cms_password_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data);


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
 * caches the event loop needs.  The password lane runs as many as the
 * worker has CPUs (cms_password_jobs) and keeps cms_password_queue
 * waiting; beyond that the request is refused at once with 503 and
 * Retry-After, so a flood of logins never makes real ones wait minutes.
 */
static ngx_int_t
ngx_http_cms_password_submit(ngx_http_request_t *r,
    ngx_http_cms_password_job_t *job)
{
    ngx_int_t  rc;

    static ngx_http_cms_thread_job_t  lane_job = {
        ngx_http_cms_password_work, NULL, ngx_http_cms_password_done
    };

    rc = ngx_http_cms_thread_queue(r, NGX_HTTP_CMS_LANE_PASSWORD, &lane_job,
                                   job);

    if (rc == NGX_BUSY) {
        ngx_explicit_memzero(job->password, job->len);
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_UNAVAILABLE, NULL);
    }

    return rc;
}


ngx_int_t
ngx_http_cms_password_reserve(ngx_http_request_t *r)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_thread_reserve(r, NGX_HTTP_CMS_LANE_PASSWORD);

    if (rc == NGX_BUSY) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_UNAVAILABLE, NULL);
    }

    return rc;
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

    ngx_explicit_memzero(job->password, job->len);

    encoded.data = (u_char *) job->encoded;
    encoded.len = (job->ok && !job->verify) ? ngx_strlen(job->encoded) : 0;

    return job->done(r, ctx, job->ok, &encoded);
}


int
ngx_http_cms_password_long_enough(const char *p, size_t len)
{
    return len >= CMS_PASSWORD_MIN_LEN;
}
