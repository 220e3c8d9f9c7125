
/*
 * Directive parameters from a table (see the header).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include "ngx_http_cms_conf.h"


static ngx_int_t ngx_http_cms_conf_param(ngx_str_t *value,
    const ngx_http_cms_param_t *params, void *conf);


ngx_int_t
ngx_http_cms_conf_params(ngx_conf_t *cf, const char *directive,
    ngx_uint_t first, const ngx_http_cms_param_t *params, void *conf)
{
    ngx_str_t   *value;
    ngx_uint_t   i;

    value = cf->args->elts;

    for (i = first; i < cf->args->nelts; i++) {
        if (ngx_http_cms_conf_param(&value[i], params, conf) != NGX_OK) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid parameter \"%V\" in \"%s\"",
                               &value[i], directive);
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_cms_conf_param(ngx_str_t *value, const ngx_http_cms_param_t *params,
    void *conf)
{
    ngx_int_t                    n;
    ngx_str_t                    s;
    ngx_msec_t                   ms;
    const ngx_http_cms_param_t  *p;

    for (p = params; p->name.len; p++) {
        if (value->len > p->name.len
            && ngx_strncmp(value->data, p->name.data, p->name.len) == 0)
        {
            break;
        }
    }

    if (p->name.len == 0) {
        return NGX_ERROR;
    }

    s.data = value->data + p->name.len;
    s.len = value->len - p->name.len;

    if (p->kind == NGX_HTTP_CMS_PARAM_STRING) {
        *(ngx_str_t *) ((u_char *) conf + p->offset) = s;
        return NGX_OK;
    }

    if (p->kind == NGX_HTTP_CMS_PARAM_MSEC) {
        ms = ngx_parse_time(&s, 0);

        if (ms == (ngx_msec_t) NGX_ERROR || ms == 0) {
            return NGX_ERROR;
        }

        *(ngx_msec_t *) ((u_char *) conf + p->offset) = ms;
        return NGX_OK;
    }

    n = ngx_atoi(s.data, s.len);

    if (n == NGX_ERROR || (n == 0 && p->kind == NGX_HTTP_CMS_PARAM_POSITIVE))
    {
        return NGX_ERROR;
    }

    *(ngx_uint_t *) ((u_char *) conf + p->offset) = (ngx_uint_t) n;

    return NGX_OK;
}


/* long: open, read, close, each failure logged, then the trimming */
ngx_int_t
ngx_http_cms_conf_secret_file(ngx_conf_t *cf, const char *directive,
    ngx_str_t *path, size_t max, ngx_str_t *secret)
{
    u_char      *buf;
    ssize_t      n;
    ngx_fd_t     fd;
    ngx_file_t   file;

    if (ngx_conf_full_name(cf->cycle, path, 1) != NGX_OK) {
        return NGX_ERROR;
    }

    fd = ngx_open_file(path->data, NGX_FILE_RDONLY, NGX_FILE_OPEN, 0);

    if (fd == NGX_INVALID_FILE) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, ngx_errno,
                           "%s: cannot open \"%V\"", directive, path);
        return NGX_ERROR;
    }

    buf = ngx_pnalloc(cf->pool, max);

    ngx_memzero(&file, sizeof(ngx_file_t));
    file.fd = fd;
    file.name = *path;
    file.log = cf->log;

    n = (buf == NULL) ? NGX_ERROR : ngx_read_file(&file, buf, max, 0);

    ngx_close_file(fd);

    if (n == NGX_ERROR) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, ngx_errno,
                           "%s: cannot read \"%V\"", directive, path);
        return NGX_ERROR;
    }

    /* a file that fills the buffer is too long, whatever it ends with */
    if ((size_t) n == max) {
        n = 0;
    }

    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'
                     || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
    {
        n--;
    }

    secret->data = buf;
    secret->len = n;

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_conf_host(u_char *p, size_t len)
{
    u_char  *last, c;

    if (len == 0 || len > 253) {
        return NGX_DECLINED;
    }

    for (last = p + len; p < last; p++) {
        c = (u_char) (*p | 0x20);

        if ((c >= 'a' && c <= 'z') || (*p >= '0' && *p <= '9')
            || *p == '-' || *p == '_' || *p == '.' || *p == ':')
        {
            continue;
        }

        return NGX_DECLINED;
    }

    return NGX_OK;
}
