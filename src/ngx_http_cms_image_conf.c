
/*
 * The image directives (docs/images.md):
 *
 *   cms_image_widths 320 640 960 1280 1920 2560;   the widths served
 *   cms_image_quality webp=80 avif=50 jpeg=82;     per format, 1 to 100
 *   cms_image_max_pixels 50000000;                 originals beyond: 415
 *   cms_image_timeout 20s;                         a job's time
 *   cms_image_jobs 0;  cms_image_queue 64;         the image lane
 *
 * The last four take nginx's own slots (ngx_http_cms_module_cmds.c).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_image.h"


static ngx_uint_t  ngx_http_cms_image_default_widths[] = {
    320, 640, 960, 1280, 1920, 2560
};


void
ngx_http_cms_image_create_conf(ngx_http_cms_image_conf_t *icf)
{
    icf->nwidths = 0;
    icf->webp = NGX_CONF_UNSET_UINT;
    icf->avif = NGX_CONF_UNSET_UINT;
    icf->jpeg = NGX_CONF_UNSET_UINT;
    icf->max_pixels = NGX_CONF_UNSET;
    icf->timeout = NGX_CONF_UNSET_MSEC;
    icf->jobs = NGX_CONF_UNSET_UINT;
    icf->queue = NGX_CONF_UNSET_UINT;
}


void
ngx_http_cms_image_init_conf(ngx_http_cms_image_conf_t *icf)
{
    ngx_uint_t  i, n;

    if (icf->nwidths == 0) {
        n = sizeof(ngx_http_cms_image_default_widths) / sizeof(ngx_uint_t);

        for (i = 0; i < n; i++) {
            icf->widths[i] = ngx_http_cms_image_default_widths[i];
        }

        icf->nwidths = n;
    }

    ngx_conf_init_uint_value(icf->webp, 80);
    ngx_conf_init_uint_value(icf->avif, 50);
    ngx_conf_init_uint_value(icf->jpeg, 82);
    ngx_conf_init_value(icf->max_pixels, 50000000);
    ngx_conf_init_msec_value(icf->timeout, 20000);
    ngx_conf_init_uint_value(icf->jobs, 0);
    ngx_conf_init_uint_value(icf->queue, 64);
}


ngx_uint_t
ngx_http_cms_image_quality(ngx_http_cms_image_conf_t *icf, ngx_uint_t format)
{
    switch (format) {

    case NGX_HTTP_CMS_IMAGE_WEBP:
        return icf->webp;

    case NGX_HTTP_CMS_IMAGE_AVIF:
        return icf->avif;

    case NGX_HTTP_CMS_IMAGE_JPEG:
        return icf->jpeg;

    default:
        return 0;
    }
}


/* ascending, each 1 to NGX_HTTP_CMS_IMAGE_WIDTH_MAX, at most 16 */
char *
ngx_http_cms_image_widths_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_cms_main_conf_t *mcf = conf;

    ngx_int_t   w;
    ngx_str_t  *value;
    ngx_uint_t  i;

    if (mcf->image.nwidths) {
        return "is duplicate";
    }

    value = cf->args->elts;

    if (cf->args->nelts - 1 > NGX_HTTP_CMS_IMAGE_WIDTHS_MAX) {
        return "takes at most 16 widths";
    }

    for (i = 1; i < cf->args->nelts; i++) {
        w = ngx_atoi(value[i].data, value[i].len);

        if (w < 1 || w > NGX_HTTP_CMS_IMAGE_WIDTH_MAX) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "cms_image_widths: \"%V\" is not a width "
                               "from 1 to %d", &value[i],
                               NGX_HTTP_CMS_IMAGE_WIDTH_MAX);
            return NGX_CONF_ERROR;
        }

        if (i > 1 && (ngx_uint_t) w <= mcf->image.widths[i - 2]) {
            return "takes widths in ascending order, each once";
        }

        mcf->image.widths[i - 1] = w;
    }

    mcf->image.nwidths = cf->args->nelts - 1;

    return NGX_CONF_OK;
}


/* "webp=N", "avif=N", "jpeg=N", N from 1 to 100 */
/* long: each parameter's name, then its number */
char *
ngx_http_cms_image_quality_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_cms_main_conf_t *mcf = conf;

    ngx_int_t    q;
    ngx_str_t   *value, name, n;
    ngx_uint_t   i, *slot;
    u_char      *eq;

    value = cf->args->elts;

    for (i = 1; i < cf->args->nelts; i++) {
        eq = ngx_strlchr(value[i].data, value[i].data + value[i].len, '=');

        if (eq == NULL) {
            goto invalid;
        }

        name.data = value[i].data;
        name.len = eq - value[i].data;
        n.data = eq + 1;
        n.len = value[i].data + value[i].len - n.data;

        if (name.len == 4 && ngx_strncmp(name.data, "webp", 4) == 0) {
            slot = &mcf->image.webp;

        } else if (name.len == 4 && ngx_strncmp(name.data, "avif", 4) == 0) {
            slot = &mcf->image.avif;

        } else if (name.len == 4 && ngx_strncmp(name.data, "jpeg", 4) == 0) {
            slot = &mcf->image.jpeg;

        } else {
            goto invalid;
        }

        q = ngx_atoi(n.data, n.len);

        if (q < 1 || q > 100 || *slot != NGX_CONF_UNSET_UINT) {
            goto invalid;
        }

        *slot = q;
    }

    return NGX_CONF_OK;

invalid:

    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                       "cms_image_quality: \"%V\" is not webp=, avif= or "
                       "jpeg= a quality from 1 to 100, each once",
                       &value[i]);

    return NGX_CONF_ERROR;
}
