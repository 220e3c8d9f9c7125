
/*
 * The "name=value" parameters that follow a directive's first argument
 * (cms_postgres ... max=16 queue_timeout=5s), read from a table.
 */


#ifndef _NGX_HTTP_CMS_CONF_H_INCLUDED_
#define _NGX_HTTP_CMS_CONF_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


typedef enum {
    NGX_HTTP_CMS_PARAM_COUNT = 0,   /* ngx_uint_t, 0 and up */
    NGX_HTTP_CMS_PARAM_POSITIVE,    /* ngx_uint_t, 1 and up */
    NGX_HTTP_CMS_PARAM_MSEC,        /* ngx_msec_t, a time above 0 ("5s") */
    NGX_HTTP_CMS_PARAM_STRING       /* ngx_str_t, not empty */
} ngx_http_cms_param_kind_e;


typedef struct {
    ngx_str_t                   name;      /* with its "=": "max=" */
    ngx_uint_t                  kind;      /* ngx_http_cms_param_kind_e */
    size_t                      offset;    /* of the field in "conf" */
} ngx_http_cms_param_t;


/*
 * Reads cf->args from index "first" on against "params" (ended by a row
 * with an empty name) into "conf".  An unknown name or a bad value is
 * logged naming the parameter and "directive"; returns NGX_OK or
 * NGX_ERROR.
 */
ngx_int_t ngx_http_cms_conf_params(ngx_conf_t *cf, const char *directive,
    ngx_uint_t first, const ngx_http_cms_param_t *params, void *conf);

/*
 * Reads a secret from the file at "path" (relative to the prefix) into
 * cf->pool, without the whitespace that ends it, at most max - 1 bytes.
 * A file that cannot be read, that others may read or write, or that
 * holds nothing or too much, is logged naming "directive"; returns NGX_OK
 * or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_conf_secret_file(ngx_conf_t *cf, const char *directive,
    ngx_str_t *path, size_t max, ngx_str_t *secret);

/*
 * Makes "path" absolute (relative to the prefix) and checks that it is a
 * folder the workers' user may write and search in: the user "user"
 * names (a "user" directive before http{}), nginx's default for a master
 * started as root, or the master's own; by the owner's, the group's
 * (supplementary groups included) or others' mode bits.  Logs naming
 * "directive" and returns NGX_ERROR when not.
 */
ngx_int_t ngx_http_cms_conf_folder(ngx_conf_t *cf, const char *directive,
    ngx_str_t *path);

/*
 * NGX_OK when "len" bytes at "p" may be a host name or an IP address as a
 * directive gives them: 1 to 253 of letters, digits, "-", "_", "." and
 * ":"; else NGX_DECLINED.
 */
ngx_int_t ngx_http_cms_conf_host(u_char *p, size_t len);


#endif /* _NGX_HTTP_CMS_CONF_H_INCLUDED_ */
