
/*
 * ngx_http_cms_module: wiring only.  Directives, configuration, the worker
 * lifetime of the pools, and the content handler that refuses a body
 * declared too long and hands the request to the router (which reads the
 * body once the credential has passed).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_public_cache.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_body.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_response_cache.h"
#include "ngx_http_cms_router.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_redis.h"
#include "ngx_http_cms_jobs.h"
#include "ngx_http_cms_deliver.h"
#include "ngx_http_cms_cdn.h"
#include "ngx_http_cms_s3.h"
#include "ngx_http_cms_store.h"
#include "ngx_http_cms_schema.h"
#include "ngx_http_cms_metrics.h"
#include "ngx_http_cms_ratelimit.h"
#include "ngx_http_cms_thread.h"
#include "ngx_http_cms_status.h"
#include "ngx_http_cms_resolve.h"
#include "ngx_http_cms_streams.h"
#include "ngx_http_cms_image.h"
#include "cms_trace.h"


static ngx_int_t ngx_http_cms_handler(ngx_http_request_t *r);
static ngx_int_t ngx_http_cms_trace_id_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_http_cms_request_id_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);

static ngx_int_t ngx_http_cms_add_variables(ngx_conf_t *cf);
static ngx_int_t ngx_http_cms_postconfiguration(ngx_conf_t *cf);
static void *ngx_http_cms_create_main_conf(ngx_conf_t *cf);
static char *ngx_http_cms_init_main_conf(ngx_conf_t *cf, void *conf);
static void *ngx_http_cms_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_cms_merge_loc_conf(ngx_conf_t *cf, void *parent,
    void *child);
static ngx_int_t ngx_http_cms_fetch_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_http_cms_init_process(ngx_cycle_t *cycle);
static void ngx_http_cms_exit_process(ngx_cycle_t *cycle);


static ngx_http_module_t  ngx_http_cms_module_ctx = {
    ngx_http_cms_add_variables,            /* preconfiguration */
    ngx_http_cms_postconfiguration,        /* postconfiguration */

    ngx_http_cms_create_main_conf,         /* create main configuration */
    ngx_http_cms_init_main_conf,           /* init main configuration */

    NULL,                                  /* create server configuration */
    NULL,                                  /* merge server configuration */

    ngx_http_cms_create_loc_conf,          /* create location configuration */
    ngx_http_cms_merge_loc_conf            /* merge location configuration */
};


ngx_module_t  ngx_http_cms_module = {
    NGX_MODULE_V1,
    &ngx_http_cms_module_ctx,              /* module context */
    ngx_http_cms_commands,                 /* module directives */
    NGX_HTTP_MODULE,                       /* module type */
    NULL,                                  /* init master */
    NULL,                                  /* init module */
    ngx_http_cms_init_process,             /* init process */
    NULL,                                  /* init thread */
    NULL,                                  /* exit thread */
    ngx_http_cms_exit_process,             /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


static ngx_http_variable_t  ngx_http_cms_vars[] = {

    { ngx_string("cms_request_id"), NULL, ngx_http_cms_request_id_variable,
      0, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    /* the trace-id of a valid inbound traceparent (32 hex), else empty */
    { ngx_string("cms_trace_id"), NULL, ngx_http_cms_trace_id_variable,
      0, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    /*
     * What a fetch subrequest sends (a manifest from a registry, a call to
     * the video provider's API): the URL it proxies to, the method, the
     * body, the provider's access key
     */
    { ngx_string("cms_fetch_url"), NULL, ngx_http_cms_fetch_variable,
      offsetof(ngx_http_cms_ctx_t, fetch_url), NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("cms_fetch_method"), NULL, ngx_http_cms_fetch_variable,
      offsetof(ngx_http_cms_ctx_t, fetch_method), NGX_HTTP_VAR_NOCACHEABLE,
      0 },

    { ngx_string("cms_fetch_body"), NULL, ngx_http_cms_fetch_variable,
      offsetof(ngx_http_cms_ctx_t, fetch_body), NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("cms_video_access_key"), NULL, ngx_http_cms_fetch_variable,
      offsetof(ngx_http_cms_ctx_t, fetch_key), NGX_HTTP_VAR_NOCACHEABLE, 0 },

      ngx_http_null_variable
};


/* the request path */

static ngx_int_t
ngx_http_cms_handler(ngx_http_request_t *r)
{
    ngx_int_t            rc;
    ngx_http_cms_ctx_t  *ctx;

    ctx = ngx_http_cms_ctx_create(r);
    if (ctx == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    rc = ngx_http_cms_router_match(r, ctx);

    /* a body declared over the route's limit: refused before anything */
    if (rc == NGX_OK) {
        rc = ngx_http_cms_body_precheck(r, ctx->body_file);

        if (rc != NGX_OK) {
            if (ngx_http_discard_request_body(r) != NGX_OK) {
                return NGX_HTTP_INTERNAL_SERVER_ERROR;
            }

            return ngx_http_cms_respond(r, rc);
        }
    }

    /*
     * The pipeline's own reference to the request, dropped when finish()
     * finalizes it: its steps may wait for I/O after this returns.  The
     * body is read by the pipeline's read step, after the credential and
     * the permission passed.
     */
    r->main->count++;

    if (rc == NGX_OK) {
        rc = ngx_http_cms_router_dispatch(r, ctx);
    }

    ngx_http_cms_finish(r, rc);

    return NGX_DONE;
}


static ngx_int_t
ngx_http_cms_request_id_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    ngx_http_cms_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    if (ctx == NULL) {
        v->not_found = 1;
        return NGX_OK;
    }

    v->data = ctx->request_id;
    v->len = ctx->request_id_len;
    v->valid = 1;
    v->no_cacheable = 0;
    v->not_found = 0;

    return NGX_OK;
}


static ngx_int_t
ngx_http_cms_trace_id_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    ngx_http_cms_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    if (ctx == NULL || ctx->traceparent.len == 0) {
        v->not_found = 1;
        return NGX_OK;
    }

    v->data = ctx->traceparent.data + CMS_TRACE_ID_OFFSET;
    v->len = CMS_TRACE_ID_LEN;
    v->valid = 1;
    v->no_cacheable = 0;
    v->not_found = 0;

    return NGX_OK;
}


/* "data": the offset of the ngx_str_t in the context */
static ngx_int_t
ngx_http_cms_fetch_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    ngx_str_t           *s;
    ngx_http_cms_ctx_t  *ctx;

    /* asked in the subrequest: the values are the parent's */
    ctx = r->parent ? ngx_http_get_module_ctx(r->parent, ngx_http_cms_module)
                    : NULL;

    if (ctx == NULL) {
        v->not_found = 1;
        return NGX_OK;
    }

    s = (ngx_str_t *) ((u_char *) ctx + data);

    /* an empty body is a value (Content-Length: 0), the rest is not */
    if (s->len == 0 && data != offsetof(ngx_http_cms_ctx_t, fetch_body)) {
        v->not_found = 1;
        return NGX_OK;
    }

    v->data = s->data;
    v->len = s->len;
    v->valid = 1;
    v->no_cacheable = 1;
    v->not_found = 0;

    return NGX_OK;
}


/* configuration */

/*
 * The filters, and the http{} block's resolver for host names: a host
 * name for PostgreSQL, Redis or the bucket needs one.
 */
static ngx_int_t
ngx_http_cms_postconfiguration(ngx_conf_t *cf)
{
    if (ngx_http_cms_response_init(cf) != NGX_OK
        || ngx_http_cms_body_init(cf) != NGX_OK
        || ngx_http_cms_metrics_init(cf) != NGX_OK
        || ngx_http_cms_resolve_init(cf) != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_cms_resolve_check(cf);
}


static ngx_int_t
ngx_http_cms_add_variables(ngx_conf_t *cf)
{
    ngx_http_variable_t  *var, *v;

    for (v = ngx_http_cms_vars; v->name.len; v++) {
        var = ngx_http_add_variable(cf, &v->name, v->flags);
        if (var == NULL) {
            return NGX_ERROR;
        }

        var->get_handler = v->get_handler;
        var->data = v->data;
    }

    return ngx_http_cms_s3_add_variables(cf);
}


/* long: one unset value per directive of the http{} block */
static void *
ngx_http_cms_create_main_conf(ngx_conf_t *cf)
{
    ngx_uint_t                 i;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_cms_main_conf_t));
    if (mcf == NULL) {
        return NULL;
    }

    /*
     * set by ngx_pcalloc():
     *
     *     mcf->pg = NULL;
     *     mcf->redis = NULL;
     *     mcf->secret = { 0, NULL };
     *     mcf->storage = { 0, NULL };
     *     mcf->default_plan = { 0, NULL };
     *     mcf->thread_pool = { 0, NULL };
     *     mcf->tp = NULL;
     *     mcf->video = NULL;
     *     mcf->video_fetch = { 0, NULL };
     */

    mcf->test_routes = NGX_CONF_UNSET;
    mcf->outbound_loopback = NGX_CONF_UNSET;
    mcf->public_limit = NGX_CONF_UNSET;
    mcf->session_ttl = NGX_CONF_UNSET;
    mcf->require_verified = NGX_CONF_UNSET;
    mcf->invite_ttl = NGX_CONF_UNSET;
    mcf->upload_ttl = NGX_CONF_UNSET;
    mcf->retention = NGX_CONF_UNSET;
    mcf->purge_interval = NGX_CONF_UNSET_MSEC;
    mcf->reconcile = NGX_CONF_UNSET_MSEC;
    mcf->signup = NGX_CONF_UNSET_UINT;
    mcf->ext_reload_grace = NGX_CONF_UNSET;
    mcf->ext_rotation_grace = NGX_CONF_UNSET;
    mcf->ui_token_ttl = NGX_CONF_UNSET;
    mcf->idem_ttl = NGX_CONF_UNSET_MSEC;
    mcf->idem_lock = NGX_CONF_UNSET_MSEC;
    mcf->lock_ttl = NGX_CONF_UNSET_MSEC;
    mcf->events_interval = NGX_CONF_UNSET_MSEC;
    mcf->password_jobs = NGX_CONF_UNSET_UINT;
    mcf->password_queue = NGX_CONF_UNSET_UINT;
    mcf->sanitize_jobs = NGX_CONF_UNSET_UINT;
    mcf->sanitize_queue = NGX_CONF_UNSET_UINT;
    ngx_http_cms_image_create_conf(&mcf->image);

    for (i = 0; i < NGX_HTTP_CMS_THROTTLES; i++) {
        mcf->throttle[i].burst = NGX_CONF_UNSET_UINT;
        mcf->throttle[i].interval = NGX_CONF_UNSET_MSEC;
    }

    mcf->public_site.interval = NGX_CONF_UNSET_MSEC;

    return mcf;
}


/* long: every main directive's default, then the derived settings */
static char *
ngx_http_cms_init_main_conf(ngx_conf_t *cf, void *conf)
{
    ngx_http_cms_main_conf_t *mcf = conf;

    ngx_conf_init_value(mcf->test_routes, 0);
    ngx_conf_init_value(mcf->outbound_loopback, 0);
    ngx_conf_init_value(mcf->public_limit, 1);

    if (mcf->public_cache.data == NULL) {
        ngx_str_set(&mcf->public_cache,
                    "public, max-age=60, stale-while-revalidate=600");
    }

    if (ngx_http_cms_public_private(cf, mcf) != NGX_OK) {
        return NGX_CONF_ERROR;
    }
    ngx_conf_init_value(mcf->session_ttl, 86400);
    ngx_conf_init_value(mcf->require_verified, 0);
    ngx_conf_init_value(mcf->invite_ttl, 7 * 86400);
    ngx_conf_init_value(mcf->upload_ttl, 3600);
    ngx_conf_init_value(mcf->retention, 30 * 86400);
    ngx_conf_init_msec_value(mcf->purge_interval, 3600 * 1000);
    ngx_conf_init_msec_value(mcf->reconcile, 3600 * 1000);
    ngx_conf_init_uint_value(mcf->signup, NGX_HTTP_CMS_SIGNUP_ON);
    ngx_conf_init_msec_value(mcf->idem_ttl, 86400 * 1000);
    ngx_conf_init_msec_value(mcf->idem_lock, 30 * 1000);
    ngx_conf_init_msec_value(mcf->lock_ttl, 120 * 1000);

    if (mcf->lock_ttl < 1000 || mcf->lock_ttl > 86400 * 1000) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "\"cms_lock_ttl\" must be 1s to 24h");
        return NGX_CONF_ERROR;
    }
    ngx_conf_init_msec_value(mcf->events_interval, 1000);
    ngx_conf_init_value(mcf->ext_reload_grace, 30);
    ngx_conf_init_value(mcf->ext_rotation_grace, 86400);
    ngx_conf_init_value(mcf->ui_token_ttl, 300);
    ngx_conf_init_uint_value(mcf->password_jobs, 0);
    ngx_conf_init_uint_value(mcf->password_queue, 64);
    ngx_conf_init_uint_value(mcf->sanitize_jobs, 0);
    ngx_conf_init_uint_value(mcf->sanitize_queue, 64);
    ngx_http_cms_image_init_conf(&mcf->image);
    ngx_http_cms_ratelimit_throttle_init(mcf);

    if (mcf->ext_fetch.data == NULL) {
        ngx_str_set(&mcf->ext_fetch, "/_cms_fetch");
    }

    if (mcf->video_fetch.data == NULL) {
        ngx_str_set(&mcf->video_fetch, "/_cms_video");
    }

    if (mcf->ext_manifests.data != NULL
        && ngx_conf_full_name(cf->cycle, &mcf->ext_manifests, 1) != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    if (mcf->thread_pool.data == NULL) {
        ngx_str_set(&mcf->thread_pool, "default");
    }

    /* password hashing runs there; "default" exists once it is added */
    mcf->tp = ngx_thread_pool_add(cf, &mcf->thread_pool);
    if (mcf->tp == NULL) {
        return NGX_CONF_ERROR;
    }

    if (ngx_http_cms_deliver_conf_init(cf, mcf) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    if (mcf->secret.data != NULL && ngx_http_cms_crypto_derive(mcf) != NGX_OK)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_secret: deriving keys failed");
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


static void *
ngx_http_cms_create_loc_conf(ngx_conf_t *cf)
{
    ngx_http_cms_loc_conf_t  *lcf;

    lcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_cms_loc_conf_t));
    if (lcf == NULL) {
        return NULL;
    }

    lcf->enable = NGX_CONF_UNSET;
    lcf->error_pages = NGX_CONF_UNSET;
    lcf->body_max_size = NGX_CONF_UNSET_SIZE;
    lcf->upload_max_size = NGX_CONF_UNSET_SIZE;
    lcf->avatar_max_size = NGX_CONF_UNSET_SIZE;
    lcf->json_max_depth = NGX_CONF_UNSET_UINT;

    return lcf;
}


static char *
ngx_http_cms_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
    ngx_http_cms_loc_conf_t *prev = parent;
    ngx_http_cms_loc_conf_t *conf = child;

    ngx_http_core_loc_conf_t  *clcf;

    /* only where "cms" is written: nested locations do not inherit it */
    if (conf->enable == NGX_CONF_UNSET) {
        conf->enable = 0;
    }
    ngx_conf_merge_value(conf->error_pages, prev->error_pages, 0);
    ngx_conf_merge_size_value(conf->body_max_size, prev->body_max_size,
                              1024 * 1024);
    ngx_conf_merge_size_value(conf->upload_max_size, prev->upload_max_size,
                              50 * 1024 * 1024);
    ngx_conf_merge_size_value(conf->avatar_max_size, prev->avatar_max_size,
                              2 * 1024 * 1024);
    ngx_conf_merge_uint_value(conf->json_max_depth, prev->json_max_depth, 32);

    /*
     * nginx refuses a body over client_max_body_size with a 413 that
     * cannot tell which limit it was: ours are the limits that count,
     * each route's own (a declared length checked before the body is
     * read, the bytes as they come by the request body filter:
     * ngx_http_cms_body.c), each with its own error code.  (The core
     * module's merge has run for this location already.)
     */
    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);

    if (conf->enable == 1) {
        clcf->client_max_body_size = 0;
    }

    return NGX_CONF_OK;
}


/* "cms": the location's content handler */
char *
ngx_http_cms(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_cms_loc_conf_t *lcf = conf;

    ngx_http_core_loc_conf_t  *clcf;
    ngx_http_cms_main_conf_t  *mcf;

    if (lcf->enable != NGX_CONF_UNSET) {
        return "is duplicate";
    }

    mcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_cms_module);

    if (mcf->pg == NULL || mcf->redis == NULL || mcf->secret.data == NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "\"cms\" needs \"cms_postgres\", \"cms_redis\" "
                           "and \"cms_secret\" earlier in the http block");
        return NGX_CONF_ERROR;
    }

    lcf->enable = 1;

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    clcf->handler = ngx_http_cms_handler;

    return NGX_CONF_OK;
}



static ngx_int_t
ngx_http_cms_init_process(ngx_cycle_t *cycle)
{
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_cms_module);

    if (mcf == NULL) {
        return NGX_OK;
    }

    if (mcf->pg != NULL
        && ngx_http_cms_pg_init_process(cycle, mcf->pg,
                                        mcf->pg_replicas) != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (mcf->redis != NULL
        && ngx_http_cms_redis_init_process(cycle, mcf->redis) != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (mcf->storage.len
        && (ngx_http_cms_store_init_process(cycle) != NGX_OK
            || ngx_http_cms_image_init_process(cycle) != NGX_OK))
    {
        return NGX_ERROR;
    }

    if (ngx_http_cms_ratelimit_init_process(cycle) != NGX_OK
        || ngx_http_cms_thread_init_process(cycle, mcf) != NGX_OK
        || ngx_http_cms_status_init_process(cycle) != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (ngx_http_cms_jobs_init_process(cycle, mcf) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_http_cms_deliver_init_process(cycle, mcf);
    ngx_http_cms_cdn_init_process(cycle, mcf);
    ngx_http_cms_store_sweep_init_process(cycle, mcf);
    ngx_http_cms_schema_init_process(cycle, mcf);

    return NGX_OK;
}


static void
ngx_http_cms_exit_process(ngx_cycle_t *cycle)
{
    ngx_http_cms_pg_exit_process();
    ngx_http_cms_redis_exit_process();
    ngx_http_cms_store_exit_process();
    ngx_http_cms_image_exit_process();
    ngx_http_cms_deliver_exit_process();
    ngx_http_cms_cdn_exit_process();
    ngx_http_cms_store_sweep_exit_process();
}
