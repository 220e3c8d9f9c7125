
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
#include "ngx_http_cms_store.h"
#include "ngx_http_cms_ratelimit.h"
#include "cms_url.h"
#include "ngx_http_cms_thread.h"
#include "ngx_http_cms_status.h"
#include "ngx_http_cms_resolve.h"
#include "ngx_http_cms_streams.h"


static ngx_int_t ngx_http_cms_handler(ngx_http_request_t *r);
static ngx_int_t ngx_http_cms_request_id_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);

static ngx_int_t ngx_http_cms_add_variables(ngx_conf_t *cf);
static ngx_int_t ngx_http_cms_postconfiguration(ngx_conf_t *cf);
static void *ngx_http_cms_create_main_conf(ngx_conf_t *cf);
static char *ngx_http_cms_init_main_conf(ngx_conf_t *cf, void *conf);
static void *ngx_http_cms_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_cms_merge_loc_conf(ngx_conf_t *cf, void *parent,
    void *child);
static char *ngx_http_cms(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static char *ngx_http_cms_registry(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static ngx_int_t ngx_http_cms_registry_host(ngx_conf_t *cf, ngx_str_t *value,
    ngx_str_t *host);
static ngx_int_t ngx_http_cms_fetch_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);

static char *ngx_http_cms_plan_name(ngx_conf_t *cf, void *post, void *data);
static ngx_int_t ngx_http_cms_init_process(ngx_cycle_t *cycle);
static void ngx_http_cms_exit_process(ngx_cycle_t *cycle);


static ngx_conf_num_bounds_t  ngx_http_cms_depth_bounds = {
    ngx_conf_check_num_bounds, 1, 256
};

static ngx_conf_num_bounds_t  ngx_http_cms_jobs_bounds = {
    ngx_conf_check_num_bounds, 1, 1024
};

static ngx_conf_num_bounds_t  ngx_http_cms_queue_bounds = {
    ngx_conf_check_num_bounds, 0, 65536
};


/* cms_default_plan: a plan name as sql/0016_teams.sql's plans take it */
static ngx_conf_post_handler_pt  ngx_http_cms_plan_name_p =
    ngx_http_cms_plan_name;


static ngx_command_t  ngx_http_cms_commands[] = {

    { ngx_string("cms"),
      NGX_HTTP_LOC_CONF|NGX_CONF_NOARGS,
      ngx_http_cms,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    /* every error nginx answers by itself here, in the API's JSON shape */
    /* the workers' counters, in the Prometheus text format */
    { ngx_string("cms_status"),
      NGX_HTTP_LOC_CONF|NGX_CONF_NOARGS,
      ngx_http_cms_status_conf,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("cms_error_pages"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_cms_loc_conf_t, error_pages),
      NULL },

    { ngx_string("cms_postgres"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_1MORE,
      ngx_http_cms_pg_conf,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("cms_redis"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_1MORE,
      ngx_http_cms_redis_conf,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("cms_secret"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_http_cms_crypto_secret_conf,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("cms_storage"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE12,
      ngx_http_cms_store_conf,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("cms_session_ttl"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_sec_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, session_ttl),
      NULL },

    { ngx_string("cms_require_verified_email"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, require_verified),
      NULL },

    { ngx_string("cms_default_plan"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_str_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, default_plan),
      &ngx_http_cms_plan_name_p },

    { ngx_string("cms_invitation_ttl"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_sec_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, invite_ttl),
      NULL },

    { ngx_string("cms_upload_ttl"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_sec_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, upload_ttl),
      NULL },

    { ngx_string("cms_thread_pool"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_str_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, thread_pool),
      NULL },

    { ngx_string("cms_password_jobs"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_num_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, password_jobs),
      &ngx_http_cms_jobs_bounds },

    { ngx_string("cms_password_queue"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_num_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, password_queue),
      &ngx_http_cms_queue_bounds },

    { ngx_string("cms_sanitize_jobs"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_num_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, sanitize_jobs),
      &ngx_http_cms_jobs_bounds },

    { ngx_string("cms_sanitize_queue"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_num_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, sanitize_queue),
      &ngx_http_cms_queue_bounds },

    { ngx_string("cms_auth_throttle"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE3|NGX_CONF_TAKE4,
      ngx_http_cms_ratelimit_throttle_conf,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("cms_retention"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_sec_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, retention),
      NULL },

    { ngx_string("cms_purge_interval"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_msec_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, purge_interval),
      NULL },

    { ngx_string("cms_idempotency_ttl"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_msec_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, idem_ttl),
      NULL },

    { ngx_string("cms_idempotency_lock"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_msec_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, idem_lock),
      NULL },

    { ngx_string("cms_lock_ttl"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_msec_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, lock_ttl),
      NULL },

    { ngx_string("cms_events_interval"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_msec_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, events_interval),
      NULL },

    { ngx_string("cms_extensions_manifests"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_str_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, ext_manifests),
      NULL },

    { ngx_string("cms_extensions_registry"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_1MORE,
      ngx_http_cms_registry,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("cms_extensions_fetch_location"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_str_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, ext_fetch),
      NULL },

    { ngx_string("cms_video_provider"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_2MORE,
      ngx_http_cms_streams_conf,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("cms_video_fetch_location"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_str_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, video_fetch),
      NULL },

    { ngx_string("cms_extensions_reload_grace"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_sec_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, ext_reload_grace),
      NULL },

    { ngx_string("cms_extensions_rotation_grace"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_sec_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, ext_rotation_grace),
      NULL },

    { ngx_string("cms_ui_token_ttl"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_sec_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, ui_token_ttl),
      NULL },

    { ngx_string("cms_test_routes"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, test_routes),
      NULL },

    { ngx_string("cms_public_cache_control"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_str_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, public_cache),
      NULL },

    { ngx_string("cms_public_cache"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE12,
      ngx_http_cms_public_cache_conf,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("cms_public_rate_limit"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, public_limit),
      NULL },

    { ngx_string("cms_public_site_limit"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE12,
      ngx_http_cms_ratelimit_site_conf,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("cms_webhook_delivery"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_1MORE,
      ngx_http_cms_deliver_conf,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("cms_outbound_loopback"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, outbound_loopback),
      NULL },

    { ngx_string("cms_body_max_size"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_size_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_cms_loc_conf_t, body_max_size),
      NULL },

    { ngx_string("cms_upload_max_size"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_size_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_cms_loc_conf_t, upload_max_size),
      NULL },

    { ngx_string("cms_avatar_max_size"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_size_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_cms_loc_conf_t, avatar_max_size),
      NULL },

    { ngx_string("cms_json_max_depth"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_num_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_cms_loc_conf_t, json_max_depth),
      &ngx_http_cms_depth_bounds },

      ngx_null_command
};


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
    v->len = NGX_HTTP_CMS_REQUEST_ID_LEN;
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
 * name for PostgreSQL or Redis needs one.
 */
static ngx_int_t
ngx_http_cms_postconfiguration(ngx_conf_t *cf)
{
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_cms_module);

    if (ngx_http_cms_response_init(cf) != NGX_OK
        || ngx_http_cms_body_init(cf) != NGX_OK
        || ngx_http_cms_resolve_init(cf) != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (mcf->pg != NULL
        && ngx_http_cms_resolve_required(cf, "cms_postgres", &mcf->pg->name)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (mcf->redis != NULL
        && ngx_http_cms_resolve_required(cf, "cms_redis", &mcf->redis->host)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    return NGX_OK;
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

    return NGX_OK;
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


static char *
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


/*
 * "cms_extensions_registry host[:port] ...": hosts https manifests may
 * come from, each read by the URL parser manifests go through (cms_url.h)
 * and kept as the "host:port" it gives (lowercase, 443 when no port), the
 * form a manifest URL's host is compared in.
 */
static char *
ngx_http_cms_registry(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_cms_main_conf_t *mcf = conf;

    ngx_str_t   *value, *host;
    ngx_uint_t   i;

    if (mcf->ext_registries == NULL) {
        mcf->ext_registries = ngx_array_create(cf->pool, 4, sizeof(ngx_str_t));
        if (mcf->ext_registries == NULL) {
            return NGX_CONF_ERROR;
        }
    }

    value = cf->args->elts;

    for (i = 1; i < cf->args->nelts; i++) {
        host = ngx_array_push(mcf->ext_registries);
        if (host == NULL) {
            return NGX_CONF_ERROR;
        }

        if (ngx_http_cms_registry_host(cf, &value[i], host) != NGX_OK) {
            return NGX_CONF_ERROR;
        }
    }

    return NGX_CONF_OK;
}


/* one cms_extensions_registry value into "host:port"; NGX_ERROR logged */
static ngx_int_t
ngx_http_cms_registry_host(ngx_conf_t *cf, ngx_str_t *value, ngx_str_t *host)
{
    int        rc;
    u_char     url[sizeof("https://") + CMS_URL_AUTHORITY_SIZE];
    cms_url_t  u;

    rc = CMS_URL_E_LENGTH;

    if (value->len < CMS_URL_AUTHORITY_SIZE) {
        ngx_memcpy(ngx_cpymem(url, "https://", 8), value->data, value->len);
        rc = cms_url_parse((char *) url, 8 + value->len,
                           CMS_URL_HTTPS | CMS_URL_NO_IDN, &u);
    }

    if (rc != CMS_URL_OK || u.path.len != 0 || u.has_query) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_extensions_registry: \"%V\" is not "
                           "a host[:port] (%s)", value,
                           rc == CMS_URL_OK ? "has a path or query"
                                            : cms_url_error(rc));
        return NGX_ERROR;
    }

    host->data = ngx_pnalloc(cf->pool, CMS_URL_AUTHORITY_SIZE);
    if (host->data == NULL) {
        return NGX_ERROR;
    }

    host->len = cms_url_authority((char *) url, &u, (char *) host->data,
                                  CMS_URL_AUTHORITY_SIZE);

    return NGX_OK;
}


/* [a-z0-9][a-z0-9_-]{0,62}: whether the plan exists is the database's */
static char *
ngx_http_cms_plan_name(ngx_conf_t *cf, void *post, void *data)
{
    ngx_uint_t   i;
    ngx_str_t   *name;

    name = data;

    for (i = 0; i < name->len; i++) {
        if (!((name->data[i] >= 'a' && name->data[i] <= 'z')
              || (name->data[i] >= '0' && name->data[i] <= '9')
              || (i > 0 && (name->data[i] == '_' || name->data[i] == '-'))))
        {
            break;
        }
    }

    if (name->len == 0 || name->len > 63 || i != name->len) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_default_plan: \"%V\" is not a plan name "
                           "(a-z 0-9 _ -, at most 63)", name);
        return NGX_CONF_ERROR;
    }

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
        && ngx_http_cms_pg_init_process(cycle, mcf->pg) != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (mcf->redis != NULL
        && ngx_http_cms_redis_init_process(cycle, mcf->redis) != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (mcf->storage.len
        && ngx_http_cms_store_init_process(cycle) != NGX_OK)
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

    return NGX_OK;
}


static void
ngx_http_cms_exit_process(ngx_cycle_t *cycle)
{
    ngx_http_cms_pg_exit_process();
    ngx_http_cms_redis_exit_process();
    ngx_http_cms_store_exit_process();
    ngx_http_cms_deliver_exit_process();
}
