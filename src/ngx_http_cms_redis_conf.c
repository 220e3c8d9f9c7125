
/*
 * The "cms_redis" directive: an IP address with a port, or a unix socket,
 * checked at load time (a host name would need a blocking lookup), and
 * the pool's limits.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_conf.h"
#include "ngx_http_cms_redis.h"


static ngx_int_t ngx_http_cms_redis_address(ngx_conf_t *cf,
    ngx_http_cms_redis_conf_t *rcf, ngx_str_t *value);


static const ngx_http_cms_param_t  ngx_http_cms_redis_params[] = {
    { ngx_string("max="), NGX_HTTP_CMS_PARAM_POSITIVE,
      offsetof(ngx_http_cms_redis_conf_t, max) },
    { ngx_string("queue="), NGX_HTTP_CMS_PARAM_COUNT,
      offsetof(ngx_http_cms_redis_conf_t, queue) },
    { ngx_string("timeout="), NGX_HTTP_CMS_PARAM_MSEC,
      offsetof(ngx_http_cms_redis_conf_t, timeout) },
    { ngx_null_string, 0, 0 }
};


char *
ngx_http_cms_redis_conf(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_cms_main_conf_t *mcf = conf;

    ngx_str_t                  *value;
    ngx_http_cms_redis_conf_t  *rcf;

    if (mcf->redis != NULL) {
        return "is duplicate";
    }

    rcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_cms_redis_conf_t));
    if (rcf == NULL) {
        return NGX_CONF_ERROR;
    }

    rcf->max = 8;
    rcf->queue = 256;
    rcf->timeout = 3000;

    value = cf->args->elts;

    if (ngx_http_cms_redis_address(cf, rcf, &value[1]) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    if (ngx_http_cms_conf_params(cf, "cms_redis", 2,
                                 ngx_http_cms_redis_params, rcf)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    mcf->redis = rcf;

    return NGX_CONF_OK;
}


/* "unix:/path" or "ip:port"; logs why not */
static ngx_int_t
ngx_http_cms_redis_address(ngx_conf_t *cf, ngx_http_cms_redis_conf_t *rcf,
    ngx_str_t *value)
{
    ngx_url_t  u;

    if (ngx_strncmp(value->data, "unix:", 5) == 0) {
        ngx_memzero(&u, sizeof(ngx_url_t));
        u.url = *value;

        if (ngx_parse_url(cf->pool, &u) != NGX_OK || u.naddrs == 0) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "cms_redis: invalid socket \"%V\"", value);
            return NGX_ERROR;
        }

        rcf->addr = u.addrs[0];

    } else if (ngx_parse_addr_port(cf->pool, &rcf->addr, value->data,
                                   value->len)
               != NGX_OK
               || ngx_inet_get_port(rcf->addr.sockaddr) == 0)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_redis: \"%V\" is not an IP address with a "
                           "port or a \"unix:\" path; a host name would "
                           "need a blocking lookup", value);
        return NGX_ERROR;
    }

    rcf->addr.name = *value;

    return NGX_OK;
}
