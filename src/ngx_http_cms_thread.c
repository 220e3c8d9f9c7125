
/*
 * The thread pool glue.
 *
 * The task lives in r->pool.  While it runs, r->main->blocked holds the
 * request: a client that leaves makes nginx defer the request's
 * termination until the task is back (ngx_http_terminate_request()), so a
 * thread never writes into freed memory.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_thread.h"

#if (NGX_LINUX)
#include <sys/resource.h>
#include <sys/syscall.h>
#endif


#if !(NGX_THREADS)
#error ngx_http_cms_module needs nginx built --with-threads
#endif


typedef struct {
    ngx_http_request_t             *request;
    ngx_http_cms_thread_work_pt     work;
    ngx_http_cms_thread_done_pt     done;
    void                           *data;
} ngx_http_cms_thread_task_t;


static void ngx_http_cms_thread_handler(void *data, ngx_log_t *log);
static void ngx_http_cms_thread_event(ngx_event_t *ev);


ngx_int_t
ngx_http_cms_thread_run(ngx_http_request_t *r,
    ngx_http_cms_thread_work_pt work, void *data,
    ngx_http_cms_thread_done_pt done)
{
    ngx_thread_task_t           *task;
    ngx_http_cms_main_conf_t    *mcf;
    ngx_http_cms_thread_task_t  *t;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    task = ngx_thread_task_alloc(r->pool, sizeof(ngx_http_cms_thread_task_t));
    if (task == NULL) {
        return NGX_ERROR;
    }

    t = task->ctx;
    t->request = r;
    t->work = work;
    t->done = done;
    t->data = data;

    task->handler = ngx_http_cms_thread_handler;
    task->event.handler = ngx_http_cms_thread_event;
    task->event.data = t;

    if (mcf->tp == NULL || ngx_thread_task_post(mcf->tp, task) != NGX_OK) {
        return NGX_ERROR;
    }

    r->main->blocked++;

    return NGX_DONE;
}


static void
ngx_http_cms_thread_handler(void *data, ngx_log_t *log)
{
    ngx_http_cms_thread_task_t *t = data;

#if (NGX_LINUX)
    static __thread int  niced;

    /*
     * Linux schedules threads on their own: a pool thread doing seconds of
     * hashing yields to the event loop's thread, which answers requests.
     */
    if (!niced) {
        niced = 1;
        (void) setpriority(PRIO_PROCESS, (id_t) syscall(SYS_gettid), 19);
    }
#endif

    t->work(t->data);
}


static void
ngx_http_cms_thread_event(ngx_event_t *ev)
{
    ngx_http_cms_thread_task_t *t = ev->data;

    ngx_int_t            rc;
    ngx_connection_t    *c;
    ngx_http_request_t  *r;
    ngx_http_cms_ctx_t  *ctx;

    r = t->request;
    c = r->connection;
    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    r->main->blocked--;

    if (c->error) {
        /* the client left: nginx deferred its termination until now */
        rc = NGX_ERROR;

    } else {
        rc = t->done(r, ctx, t->data);
    }

    ctx->finish(r, rc);
    ngx_http_run_posted_requests(c);
}
