
/*
 * The rate limits' directives: cms_auth_throttle (the login and signup
 * throttles) and cms_public_site_limit, and their defaults.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_ratelimit.h"
#include "cms_gcra.h"


static char *ngx_http_cms_ratelimit_setting(ngx_conf_t *cf,
    ngx_str_t *value, ngx_uint_t n, ngx_http_cms_throttle_t *th);
static ngx_int_t ngx_http_cms_ratelimit_rate(ngx_str_t *v,
    ngx_msec_t *period);


/*
 * "cms_auth_throttle login|signup email|address <rate>|off [burst=<n>]":
 * the rate as nginx writes it ("10r/m"; r/s, r/m and r/h), the burst by
 * default as many as the rate's count (10r/m: ten at once, then one
 * every 6 s).
 */
/* long: the directive's words, each checked in turn */
char *
ngx_http_cms_ratelimit_throttle_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_cms_main_conf_t *mcf = conf;

    ngx_str_t                *value;
    ngx_uint_t                which;
    ngx_http_cms_throttle_t  *th;

    value = cf->args->elts;

    if (ngx_strcmp(value[1].data, "login") == 0) {
        which = NGX_HTTP_CMS_THROTTLE_LOGIN_EMAIL;

    } else if (ngx_strcmp(value[1].data, "signup") == 0) {
        which = NGX_HTTP_CMS_THROTTLE_SIGNUP_EMAIL;

    } else {
        return "takes \"login\" or \"signup\" first";
    }

    if (ngx_strcmp(value[2].data, "address") == 0) {
        which++;

    } else if (ngx_strcmp(value[2].data, "email") != 0) {
        return "takes \"email\" or \"address\" second";
    }

    th = &mcf->throttle[which];

    return ngx_http_cms_ratelimit_setting(cf, &value[3], cf->args->nelts - 3,
                                          th);
}


/* "cms_public_site_limit <rate>|off [burst=<n>]" */
char *
ngx_http_cms_ratelimit_site_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_cms_main_conf_t *mcf = conf;

    ngx_str_t  *value;

    value = cf->args->elts;

    return ngx_http_cms_ratelimit_setting(cf, &value[1], cf->args->nelts - 1,
                                          &mcf->public_site);
}


/* "<rate>|off [burst=<n>]" ("n" words) into a bucket's setting */
static char *
ngx_http_cms_ratelimit_setting(ngx_conf_t *cf, ngx_str_t *value,
    ngx_uint_t n, ngx_http_cms_throttle_t *th)
{
    ngx_int_t   count, burst;
    ngx_msec_t  period;

    if (th->interval != NGX_CONF_UNSET_MSEC) {
        return "is duplicate";
    }

    if (ngx_strcmp(value[0].data, "off") == 0 && n == 1) {
        th->burst = 0;
        th->interval = 0;
        return NGX_CONF_OK;
    }

    count = ngx_http_cms_ratelimit_rate(&value[0], &period);

    if (count == NGX_ERROR) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid rate \"%V\" (e.g. 10r/m, at most "
                           "1000r/s)", &value[0]);
        return NGX_CONF_ERROR;
    }

    burst = count;

    if (n == 2) {
        burst = NGX_ERROR;

        if (value[1].len > 6
            && ngx_strncmp(value[1].data, "burst=", 6) == 0)
        {
            burst = ngx_atoi(value[1].data + 6, value[1].len - 6);
        }

        if (burst <= 0 || burst > CMS_GCRA_BURST_MAX) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid burst \"%V\"", &value[1]);
            return NGX_CONF_ERROR;
        }
    }

    th->burst = (ngx_uint_t) burst;
    th->interval = period / (ngx_msec_t) count;

    return NGX_CONF_OK;
}


void
ngx_http_cms_ratelimit_throttle_init(ngx_http_cms_main_conf_t *mcf)
{
    ngx_uint_t  i;

    /* README.md, "Login and signup throttles": why these */
    static ngx_http_cms_throttle_t  defaults[] = {
        { 50, 3600 * 1000 / 50 },         /* login email: 50r/h */
        { 20, 60 * 1000 / 20 },           /* login address: 20r/m */
        { 5, 3600 * 1000 / 5 },           /* signup email: 5r/h */
        { 10, 3600 * 1000 / 10 }          /* signup address: 10r/h */
    };

    /* README.md, "The public rate limit": a site's ceiling, 100r/s */
    static ngx_http_cms_throttle_t  site = { 1000, 1000 / 100 };

    for (i = 0; i < NGX_HTTP_CMS_THROTTLES; i++) {
        if (mcf->throttle[i].interval == NGX_CONF_UNSET_MSEC) {
            mcf->throttle[i] = defaults[i];
        }
    }

    if (mcf->public_site.interval == NGX_CONF_UNSET_MSEC) {
        mcf->public_site = site;
    }
}


/* "<n>r/s", "r/m" or "r/h": n, and the period in ms; NGX_ERROR when it
   is none of these or faster than one a ms */
static ngx_int_t
ngx_http_cms_ratelimit_rate(ngx_str_t *v, ngx_msec_t *period)
{
    u_char     *last;
    ngx_int_t   n;

    last = v->data + v->len;
    *period = 0;

    if (v->len > 3 && last[-3] == 'r' && last[-2] == '/') {
        *period = last[-1] == 's' ? 1000
                  : last[-1] == 'm' ? 60 * 1000
                  : last[-1] == 'h' ? 3600 * 1000 : 0;
    }

    if (*period == 0) {
        return NGX_ERROR;
    }

    n = ngx_atoi(v->data, v->len - 3);

    if (n <= 0 || (ngx_msec_t) n > *period) {
        return NGX_ERROR;
    }

    return n;
}
