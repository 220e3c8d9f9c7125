
/*
 * The workers' counters in shared memory (see ngx_http_cms_metrics.h).
 *
 * The zone is new with every configuration (noreuse): workers of an old
 * configuration still finishing their requests after a reload keep
 * writing to the old zone, never to a record a new worker with the same
 * number has claimed.  A scrape therefore shows the workers of the
 * running configuration, whose counters start at zero (a reset
 * Prometheus' rate() expects).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_metrics.h"


typedef struct {
    ngx_uint_t                      workers;
    ngx_http_cms_metrics_worker_t  *records;
} ngx_http_cms_metrics_shm_t;


static ngx_int_t ngx_http_cms_metrics_init_zone(ngx_shm_zone_t *zone,
    void *data);
static ngx_int_t ngx_http_cms_metrics_log(ngx_http_request_t *r);
static ngx_uint_t ngx_http_cms_metrics_family(ngx_str_t *uri);
static ngx_uint_t ngx_http_cms_metrics_method(ngx_uint_t method);
static ngx_http_cms_metrics_shm_t *ngx_http_cms_metrics_shm(void);


const char  *ngx_http_cms_metrics_families[NGX_HTTP_CMS_RQ_FAMILIES] = {
    "api", "public", "studio", "account", "files", "extensions", "ext",
    "feeds", "health", "docs", "other"
};

const char  *ngx_http_cms_metrics_methods[NGX_HTTP_CMS_RQ_METHODS] = {
    "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other"
};

const ngx_msec_t  ngx_http_cms_metrics_bounds[NGX_HTTP_CMS_RQ_BUCKETS - 1] =
    NGX_HTTP_CMS_RQ_BOUNDS;

/* the first segment below /v1/ of each family but "other" */
static ngx_str_t  ngx_http_cms_metrics_segments[][4] = {
    { ngx_string("api") },
    { ngx_string("public") },
    { ngx_string("workspaces") },
    { ngx_string("auth"), ngx_string("me"), ngx_string("invitations"),
      ngx_string("unsubscribe") },
    { ngx_string("files") },
    { ngx_string("extensions") },
    { ngx_string("ext") },
    { ngx_string("feeds") },
    { ngx_string("health") },
    { ngx_string("docs"), ngx_string("openapi.json") }
};


/* counts of a process without a record of its own go nowhere */
static ngx_http_cms_metrics_worker_t  ngx_http_cms_metrics_none;

ngx_http_cms_metrics_worker_t  *ngx_http_cms_metrics_mine =
    &ngx_http_cms_metrics_none;


ngx_int_t
ngx_http_cms_metrics_zone(ngx_conf_t *cf)
{
    size_t                     size;
    ngx_str_t                  name;
    ngx_shm_zone_t            *zone;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_cms_module);

    if (mcf->metrics != NULL) {
        return NGX_OK;
    }

    /*
     * room for as many workers as nginx can have: worker_processes may
     * come later in the file; pages past the real number stay untouched
     */
    size = 8 * ngx_pagesize + sizeof(ngx_http_cms_metrics_shm_t)
           + NGX_MAX_PROCESSES * sizeof(ngx_http_cms_metrics_worker_t);

    ngx_str_set(&name, "cms_metrics");

    zone = ngx_shared_memory_add(cf, &name, size, &ngx_http_cms_module);
    if (zone == NULL) {
        return NGX_ERROR;
    }

    zone->init = ngx_http_cms_metrics_init_zone;
    zone->data = cf->cycle;
    zone->noreuse = 1;

    mcf->metrics = zone;

    return NGX_OK;
}


/* the records, as many as worker_processes says (known by now) */
static ngx_int_t
ngx_http_cms_metrics_init_zone(ngx_shm_zone_t *zone, void *data)
{
    ngx_uint_t                   n;
    ngx_cycle_t                 *cycle;
    ngx_core_conf_t             *ccf;
    ngx_slab_pool_t             *shpool;
    ngx_http_cms_metrics_shm_t  *shm;

    cycle = zone->data;
    ccf = (ngx_core_conf_t *) ngx_get_conf(cycle->conf_ctx, ngx_core_module);

    n = ccf->worker_processes > 0 ? (ngx_uint_t) ccf->worker_processes : 1;
    n = ngx_min(n, NGX_MAX_PROCESSES);

    shpool = (ngx_slab_pool_t *) zone->shm.addr;

    shm = ngx_slab_calloc(shpool, sizeof(ngx_http_cms_metrics_shm_t));
    if (shm == NULL) {
        return NGX_ERROR;
    }

    shm->records = ngx_slab_calloc(shpool,
                                   n * sizeof(ngx_http_cms_metrics_worker_t));
    if (shm->records == NULL) {
        return NGX_ERROR;
    }

    shm->workers = n;
    zone->data = shm;

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_metrics_init_process(ngx_cycle_t *cycle)
{
    ngx_http_cms_metrics_shm_t     *shm;
    ngx_http_cms_metrics_worker_t  *w;

    shm = ngx_http_cms_metrics_shm();

    if (shm == NULL
        || (ngx_process != NGX_PROCESS_WORKER
            && ngx_process != NGX_PROCESS_SINGLE)
        || ngx_worker >= shm->workers)
    {
        return NGX_OK;
    }

    /* a worker started again after a crash begins from zero as well */
    w = &shm->records[ngx_worker];
    ngx_memzero(w, sizeof(ngx_http_cms_metrics_worker_t));

    w->started = ngx_time();

    /* the record is shown once its pid is set: by the status module, after
       the first sample (a scrape never sees a worker without its gauges) */
    ngx_http_cms_metrics_mine = w;

    return NGX_OK;
}


ngx_http_cms_metrics_worker_t *
ngx_http_cms_metrics_worker(ngx_uint_t n, ngx_uint_t *workers)
{
    ngx_http_cms_metrics_shm_t  *shm;

    shm = ngx_http_cms_metrics_shm();

    *workers = shm ? shm->workers : 0;

    if (shm == NULL || n >= shm->workers) {
        return NULL;
    }

    return &shm->records[n];
}


/* the running configuration's zone, or NULL */
static ngx_http_cms_metrics_shm_t *
ngx_http_cms_metrics_shm(void)
{
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_cycle_get_module_main_conf(ngx_cycle, ngx_http_cms_module);

    if (mcf == NULL || mcf->metrics == NULL) {
        return NULL;
    }

    return mcf->metrics->data;
}


ngx_int_t
ngx_http_cms_metrics_init(ngx_conf_t *cf)
{
    ngx_http_handler_pt        *h;
    ngx_http_core_main_conf_t  *cmcf;
    ngx_http_cms_main_conf_t   *mcf;

    mcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_cms_module);

    if (mcf->metrics == NULL) {
        return NGX_OK;
    }

    cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module);

    h = ngx_array_push(&cmcf->phases[NGX_HTTP_LOG_PHASE].handlers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    *h = ngx_http_cms_metrics_log;

    return NGX_OK;
}


/*
 * The log phase of a request below /v1/: counted by family, method and
 * status class, its time ($request_time's, in ms) into its family's
 * histogram.  Plain increments of the worker's own record.
 */
static ngx_int_t
ngx_http_cms_metrics_log(ngx_http_request_t *r)
{
    ngx_uint_t                        f, c, b, status;
    ngx_msec_int_t                    ms;
    ngx_time_t                       *tp;
    ngx_http_cms_metrics_requests_t  *rq;

    if (r->uri.len < 4 || ngx_strncmp(r->uri.data, "/v1/", 4) != 0) {
        return NGX_OK;
    }

    status = r->err_status ? r->err_status : r->headers_out.status;
    c = (status >= 100 && status < 600) ? status / 100 - 1 : 4;

    tp = ngx_timeofday();
    ms = (ngx_msec_int_t) ((tp->sec - r->start_sec) * 1000
                           + (tp->msec - r->start_msec));
    ms = ngx_max(ms, 0);

    for (b = 0; b < NGX_HTTP_CMS_RQ_BUCKETS - 1; b++) {
        if ((ngx_msec_t) ms <= ngx_http_cms_metrics_bounds[b]) {
            break;
        }
    }

    f = ngx_http_cms_metrics_family(&r->uri);
    rq = &ngx_http_cms_metrics_mine->requests;

    rq->count[f][ngx_http_cms_metrics_method(r->method)][c]++;
    rq->bucket[f][b]++;
    rq->ms[f] += ms;

    return NGX_OK;
}


/* the family of "/v1/<segment>[/...]" */
static ngx_uint_t
ngx_http_cms_metrics_family(ngx_str_t *uri)
{
    u_char      *p, *end;
    size_t       len;
    ngx_uint_t   f, k;
    ngx_str_t   *seg;

    p = uri->data + 4;
    end = ngx_strlchr(p, uri->data + uri->len, '/');
    len = (end ? end : uri->data + uri->len) - p;

    for (f = 0; f < NGX_HTTP_CMS_RQ_FAMILIES - 1; f++) {
        for (k = 0; k < 4; k++) {
            seg = &ngx_http_cms_metrics_segments[f][k];

            if (seg->len && seg->len == len
                && ngx_strncmp(seg->data, p, len) == 0)
            {
                return f;
            }
        }
    }

    return NGX_HTTP_CMS_RQ_FAMILIES - 1;
}


static ngx_uint_t
ngx_http_cms_metrics_method(ngx_uint_t method)
{
    switch (method) {
    case NGX_HTTP_GET:     return 0;
    case NGX_HTTP_HEAD:    return 1;
    case NGX_HTTP_POST:    return 2;
    case NGX_HTTP_PUT:     return 3;
    case NGX_HTTP_PATCH:   return 4;
    case NGX_HTTP_DELETE:  return 5;
    case NGX_HTTP_OPTIONS: return 6;
    default:               return 7;
    }
}
