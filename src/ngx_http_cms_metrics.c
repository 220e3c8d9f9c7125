
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
static ngx_http_cms_metrics_shm_t *ngx_http_cms_metrics_shm(void);


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
    w->pid = ngx_pid;

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
