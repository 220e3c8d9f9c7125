
/*
 * argon2id in the thread pool.
 *
 * The task lives in r->pool.  While it runs, r->main->blocked holds the
 * request: a client that leaves makes nginx defer the request's
 * termination until the task is back (ngx_http_terminate_request), so the
 * thread never writes into freed memory.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_password.h"
#include "cms_password.h"


#if !(NGX_THREADS)
#error ngx_http_cms_module needs nginx built --with-threads
#endif


#define NGX_HTTP_CMS_ENCODED_MAX       160


typedef struct {
    ngx_http_request_t             *request;
    ngx_http_cms_password_done_pt   done;
    char                           *password;     /* NUL-terminated copy */
    size_t                          len;
    char                           *encoded;
    unsigned char                   salt[CMS_PASSWORD_SALT_LEN];
    unsigned                        verify:1;
    unsigned                        ok:1;
} ngx_http_cms_password_task_t;


static ngx_thread_task_t *ngx_http_cms_password_task(ngx_http_request_t *r,
    ngx_str_t *password, ngx_http_cms_password_done_pt done);
static ngx_int_t ngx_http_cms_password_post(ngx_http_request_t *r,
    ngx_thread_task_t *task);
static void ngx_http_cms_password_thread(void *data, ngx_log_t *log);
static void ngx_http_cms_password_event(ngx_event_t *ev);


/* a valid hash of a random password nobody knows: the unknown-email case */
static char  ngx_http_cms_password_dummy[] =
    "$argon2id$v=19$m=65536,t=3,p=1$N0UWLHnyWFscnE723LW/Og"
    "$DmkSWFS2Arm9WVxS7tWt3jgNUPVbX0OBdpy2hdm5krE";


ngx_int_t
ngx_http_cms_password_hash(ngx_http_request_t *r, ngx_str_t *password,
    ngx_http_cms_password_done_pt done)
{
    ngx_thread_task_t             *task;
    ngx_http_cms_password_task_t  *t;

    task = ngx_http_cms_password_task(r, password, done);
    if (task == NULL) {
        return NGX_ERROR;
    }

    t = task->ctx;
    t->encoded = ngx_pnalloc(r->pool, NGX_HTTP_CMS_ENCODED_MAX);

    if (t->encoded == NULL
        || ngx_http_cms_crypto_random(t->salt, sizeof(t->salt)) != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_cms_password_post(r, task);
}


ngx_int_t
ngx_http_cms_password_verify(ngx_http_request_t *r, ngx_str_t *password,
    ngx_str_t *encoded, ngx_http_cms_password_done_pt done)
{
    ngx_thread_task_t             *task;
    ngx_http_cms_password_task_t  *t;

    task = ngx_http_cms_password_task(r, password, done);
    if (task == NULL) {
        return NGX_ERROR;
    }

    t = task->ctx;
    t->verify = 1;
    t->encoded = ngx_http_cms_password_dummy;

    if (encoded != NULL) {
        t->encoded = ngx_pnalloc(r->pool, encoded->len + 1);
        if (t->encoded == NULL) {
            return NGX_ERROR;
        }

        (void) ngx_cpystrn((u_char *) t->encoded, encoded->data,
                           encoded->len + 1);
    }

    return ngx_http_cms_password_post(r, task);
}


/* a task holding a NUL-terminated copy of the password */
static ngx_thread_task_t *
ngx_http_cms_password_task(ngx_http_request_t *r, ngx_str_t *password,
    ngx_http_cms_password_done_pt done)
{
    ngx_thread_task_t             *task;
    ngx_http_cms_password_task_t  *t;

    task = ngx_thread_task_alloc(r->pool,
                                 sizeof(ngx_http_cms_password_task_t));
    if (task == NULL) {
        return NULL;
    }

    t = task->ctx;
    t->request = r;
    t->done = done;
    t->len = password->len;
    t->password = ngx_pnalloc(r->pool, password->len + 1);

    if (t->password == NULL) {
        return NULL;
    }

    (void) ngx_cpystrn((u_char *) t->password, password->data,
                       password->len + 1);

    task->handler = ngx_http_cms_password_thread;
    task->event.handler = ngx_http_cms_password_event;
    task->event.data = t;

    return task;
}


static ngx_int_t
ngx_http_cms_password_post(ngx_http_request_t *r, ngx_thread_task_t *task)
{
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    if (mcf->tp == NULL || ngx_thread_task_post(mcf->tp, task) != NGX_OK) {
        return NGX_ERROR;
    }

    r->main->blocked++;

    return NGX_DONE;
}


/* runs in a pool thread: no nginx calls, no logging, no pool allocation */
static void
ngx_http_cms_password_thread(void *data, ngx_log_t *log)
{
    ngx_http_cms_password_task_t *t = data;

    if (t->verify) {
        t->ok = cms_password_verify(t->encoded, t->password, t->len) == 1;
        return;
    }

    t->ok = cms_password_hash(t->password, t->len, t->salt, t->encoded,
                              NGX_HTTP_CMS_ENCODED_MAX) == 0;
}


/* back on the event loop */
static void
ngx_http_cms_password_event(ngx_event_t *ev)
{
    ngx_http_cms_password_task_t *t = ev->data;

    ngx_int_t            rc;
    ngx_str_t            encoded;
    ngx_connection_t    *c;
    ngx_http_request_t  *r;

    r = t->request;
    c = r->connection;

    r->main->blocked--;

    ngx_explicit_memzero(t->password, t->len);

    if (c->error) {
        /* the client left: nginx deferred its termination until now */
        ngx_http_cms_finish(r, NGX_ERROR);
        ngx_http_run_posted_requests(c);
        return;
    }

    encoded.data = (u_char *) t->encoded;
    encoded.len = (t->ok && !t->verify) ? ngx_strlen(t->encoded) : 0;

    rc = t->done(r, ngx_http_get_module_ctx(r, ngx_http_cms_module), t->ok,
                 &encoded);

    ngx_http_cms_finish(r, rc);
    ngx_http_run_posted_requests(c);
}
