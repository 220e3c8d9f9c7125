
/*
 * The store's configuration (cms_storage: the folder, or the bucket by
 * way of ngx_http_cms_s3_conf()) and the absolute URL a stored object is
 * served at.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_store.h"
#include "ngx_http_cms_s3.h"
#include "ngx_http_cms_conf.h"
#include "cms_url.h"


ngx_int_t
ngx_http_cms_store_url(ngx_http_request_t *r, ngx_str_t *key, ngx_str_t *url)
{
    u_char                    *p;
    ngx_str_t                  host;
    ngx_http_cms_main_conf_t  *mcf;

    static ngx_str_t  files = ngx_string("/v1/files/");

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    ngx_str_null(&host);

    if (mcf->files_base.len == 0 && r->headers_in.host != NULL) {
        host = r->headers_in.host->value;
    }

    url->data = ngx_pnalloc(r->pool, mcf->files_base.len + sizeof("https://")
                                     + host.len + files.len + key->len);
    if (url->data == NULL) {
        return NGX_ERROR;
    }

    if (mcf->files_base.len) {
        p = ngx_cpymem(url->data, mcf->files_base.data, mcf->files_base.len);

    } else {
        p = ngx_sprintf(url->data, "http%s://%V",
#if (NGX_HTTP_SSL)
                        r->connection->ssl ? "s" :
#endif
                        "", &host);
    }

    p = ngx_cpymem(p, files.data, files.len);
    p = ngx_cpymem(p, key->data, key->len);
    url->len = p - url->data;

    return NGX_OK;
}


/*
 * "cms_storage path [base_url=URL]" (or "cms_storage s3 ...": _s3.c):
 * the folder stored objects live in, and the absolute URL their
 * /v1/files/<key> addresses start with (an http(s) origin, maybe with a
 * path, no trailing "/": a CDN in front); without it, the scheme and
 * Host of the request that stored the object
 */
/* long: the backend, the parameters, then the folder checked */
char *
ngx_http_cms_store_conf(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_cms_main_conf_t *mcf = conf;

    ngx_str_t  *value;

    if (mcf->storage.data != NULL) {
        return "is duplicate";
    }

    value = cf->args->elts;

    if (ngx_strcmp(value[1].data, "s3") == 0) {
        return ngx_http_cms_s3_conf(cf, mcf);
    }

    if (cf->args->nelts > 3) {
        return "has too many parameters";
    }

    mcf->storage = value[1];

    if (cf->args->nelts == 3) {
        if (value[2].len <= 9
            || ngx_strncmp(value[2].data, "base_url=", 9) != 0
            || !cms_url_http_valid((char *) value[2].data + 9,
                                   value[2].len - 9)
            || value[2].data[value[2].len - 1] == '/')
        {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "cms_storage: \"%V\" is not base_url= and an "
                               "absolute http(s) URL without a trailing "
                               "\"/\"", &value[2]);
            return NGX_CONF_ERROR;
        }

        mcf->files_base.data = value[2].data + 9;
        mcf->files_base.len = value[2].len - 9;
    }

    if (ngx_http_cms_conf_folder(cf, "cms_storage", &mcf->storage)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}
