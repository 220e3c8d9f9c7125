
/*
 * The list engine: which page a list asks for, and the page written from
 * result columns (no json_agg: PostgreSQL reads the page, C writes it).
 */


#ifndef _NGX_HTTP_CMS_LIST_H_INCLUDED_
#define _NGX_HTTP_CMS_LIST_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <libpq-fe.h>
#include "ngx_http_cms_json.h"


/*
 * The deepest page an offset reaches (README, Pagination): the database
 * walks every row an offset skips, so a deeper one is refused (400).
 */
#define NGX_HTTP_CMS_LIST_MAX_OFFSET       100000
#define NGX_HTTP_CMS_LIST_MAX_OFFSET_TEXT  "100000"


typedef struct {
    ngx_uint_t                  limit;
    ngx_uint_t                  offset;
    ngx_uint_t                  base;      /* where the total's column is:
                                              0, or after a fused key's */
} ngx_http_cms_page_t;


/*
 * The page a content-API list asks for: "limit" (default "def", 1..max;
 * anything else falls back to the default) and "offset" (default 0; not a
 * whole number: 0): the spec asks for fallbacks, not errors.  An offset
 * beyond NGX_HTTP_CMS_LIST_MAX_OFFSET is 400 invalid_field_value (a
 * fallback to the first page would loop a client walking the pages).
 * page->base is 0.  With "args" (room for two), also limit and offset as
 * statement arguments.  Returns NGX_OK, the error recorded (also the query
 * reader's 400 for text that is not clean: repeated, bad escape, invalid
 * UTF-8, NUL), or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_list_page(ngx_http_request_t *r, ngx_uint_t def,
    ngx_uint_t max, ngx_http_cms_page_t *page, ngx_str_t *args);

/*
 * Sends {"<list>": [items], "pagination": {"total", "limit", "offset"}}
 * from "res", whose every row holds the total in column page->base and
 * one item in the record's columns (counted from there); a page past the
 * end is one row whose first item column is NULL (the item query LEFT
 * JOINed to the count).  Returns the handler contract's codes (NGX_OK once
 * sent).
 */
ngx_int_t ngx_http_cms_list_send(ngx_http_request_t *r,
    const ngx_http_cms_record_t *rec, PGresult *res, ngx_http_cms_page_t *page);

/*
 * Sends {"<list>": [items]}, one item a row of "res": the lists the spec
 * does not paginate (their statements bound the row count).  Returns the
 * handler contract's codes.
 */
ngx_int_t ngx_http_cms_list_send_all(ngx_http_request_t *r,
    const ngx_http_cms_record_t *rec, PGresult *res);


#endif /* _NGX_HTTP_CMS_LIST_H_INCLUDED_ */
