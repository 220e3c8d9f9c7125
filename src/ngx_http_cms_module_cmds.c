
/*
 * The module's directives: the table nginx reads them from, and the
 * handlers of the few that belong to no floor of their own (cms_default_plan,
 * cms_extensions_registry).  The rest are set by nginx's slots or by the
 * handlers of the files that own them.
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
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_redis.h"
#include "ngx_http_cms_jobs.h"
#include "ngx_http_cms_deliver.h"
#include "ngx_http_cms_cdn.h"
#include "ngx_http_cms_store.h"
#include "ngx_http_cms_ratelimit.h"
#include "ngx_http_cms_thread.h"
#include "ngx_http_cms_image.h"
#include "ngx_http_cms_status.h"
#include "ngx_http_cms_resolve.h"
#include "ngx_http_cms_streams.h"
#include "cms_url.h"


static char *ngx_http_cms_registry(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static ngx_int_t ngx_http_cms_registry_host(ngx_conf_t *cf, ngx_str_t *value,
    ngx_str_t *host);
static char *ngx_http_cms_plan_name(ngx_conf_t *cf, void *post, void *data);


static ngx_conf_num_bounds_t  ngx_http_cms_depth_bounds = {
    ngx_conf_check_num_bounds, 1, 256
};

static ngx_conf_num_bounds_t  ngx_http_cms_jobs_bounds = {
    ngx_conf_check_num_bounds, 1, 1024
};

static ngx_conf_num_bounds_t  ngx_http_cms_queue_bounds = {
    ngx_conf_check_num_bounds, 0, 65536
};

/* an image's pixels: up to a trillion (a 1,000,000-pixel square) */
static ngx_conf_num_bounds_t  ngx_http_cms_pixels_bounds = {
    ngx_conf_check_num_bounds, 1, 1000000000000LL
};


/* cms_default_plan: a plan name as sql/0016_teams.sql's plans take it */
static ngx_conf_post_handler_pt  ngx_http_cms_plan_name_p =
    ngx_http_cms_plan_name;


/* cms_signup */
static ngx_conf_enum_t  ngx_http_cms_signup_modes[] = {
    { ngx_string("off"), NGX_HTTP_CMS_SIGNUP_OFF },
    { ngx_string("on"), NGX_HTTP_CMS_SIGNUP_ON },
    { ngx_string("invite"), NGX_HTTP_CMS_SIGNUP_INVITE },
    { ngx_null_string, 0 }
};


ngx_command_t  ngx_http_cms_commands[] = {

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

    { ngx_string("cms_postgres_replica"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_1MORE,
      ngx_http_cms_pg_replica_conf,
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
      NGX_HTTP_MAIN_CONF|NGX_CONF_1MORE,
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

    { ngx_string("cms_signup"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_enum_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, signup),
      &ngx_http_cms_signup_modes },

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

    { ngx_string("cms_image_widths"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_1MORE,
      ngx_http_cms_image_widths_conf,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("cms_image_quality"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_1MORE,
      ngx_http_cms_image_quality_conf,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("cms_image_max_pixels"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_num_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, image.max_pixels),
      &ngx_http_cms_pixels_bounds },

    { ngx_string("cms_image_timeout"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_msec_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, image.timeout),
      NULL },

    { ngx_string("cms_image_jobs"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_num_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, image.jobs),
      &ngx_http_cms_jobs_bounds },

    { ngx_string("cms_image_queue"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_num_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_cms_main_conf_t, image.queue),
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

    { ngx_string("cms_storage_reconcile"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_http_cms_store_sweep_conf,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("cms_cdn_purge"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_1MORE,
      ngx_http_cms_cdn_conf,
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

