
/*
 * The one reader of what a request asks in its URL and headers: every
 * route reads its query string through it, so every text that reaches a
 * handler (and PostgreSQL) from a query string was percent-decoded, is
 * valid UTF-8 without NUL, has a bounded length and was given once.
 */


#ifndef _NGX_HTTP_CMS_QUERY_H_INCLUDED_
#define _NGX_HTTP_CMS_QUERY_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>


/*
 * Reads query parameter "name" (exact, case-sensitive) into *value,
 * decoded into r->pool ("+" is a space).  Returns NGX_OK (found, maybe
 * empty), NGX_DECLINED (absent: *value is null), NGX_ERROR (no memory),
 * or 400 with invalid_request recorded, naming the parameter, when it is
 * repeated, has a malformed escape, decodes to invalid UTF-8 or a NUL, or
 * is longer than "max" bytes once decoded.  Never finalizes the request.
 */
ngx_int_t ngx_http_cms_query_arg(ngx_http_request_t *r, const char *name,
    size_t max, ngx_str_t *value);

/*
 * Reads a whole number parameter into *n.  Same returns as
 * ngx_http_cms_query_arg(), and NGX_ABORT when the value is present and
 * clean text but not a number in [0, 10^9]: the caller decides whether
 * that falls back to a default (content API) or is an error.
 */
ngx_int_t ngx_http_cms_query_uint(ngx_http_request_t *r, const char *name,
    ngx_uint_t *n);


/*
 * The value of request header "name" (case-insensitive), the first when
 * it is given more than once, or NULL when the request has none.  *n (if
 * n is not NULL) is set to how many times it is given.
 */
ngx_str_t *ngx_http_cms_query_header(ngx_http_request_t *r, ngx_str_t *name,
    ngx_uint_t *n);

/* the same in any header list (an answer's too): the first element named
   "name" that is not dropped (hash 0), or NULL; *n how many */
ngx_table_elt_t *ngx_http_cms_query_find(ngx_list_t *headers, ngx_str_t *name,
    ngx_uint_t *n);


#endif /* _NGX_HTTP_CMS_QUERY_H_INCLUDED_ */
