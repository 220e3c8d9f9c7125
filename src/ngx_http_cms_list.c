
/*
 * The list engine (see the header): page parameters in, pages out.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_list.h"
#include "ngx_http_cms_query.h"
#include "ngx_http_cms_response.h"
#include "cms_uuid.h"
#include "cms_validate.h"


static u_char *ngx_http_cms_list_items(ngx_http_request_t *r,
    const ngx_http_cms_record_t *rec, PGresult *res, int rows,
    ngx_uint_t base, int hl, size_t more, ngx_str_t *body);
static u_char *ngx_http_cms_list_highlight(u_char *p, PGresult *res, int row,
    int hl);
static ngx_int_t ngx_http_cms_list_send_rows(ngx_http_request_t *r,
    const ngx_http_cms_record_t *rec, PGresult *res, int rows);
static ngx_int_t ngx_http_cms_list_bad_limit(ngx_http_request_t *r,
    ngx_uint_t max);
static ngx_int_t ngx_http_cms_list_filter_page(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, const ngx_http_cms_list_filter_t *f,
    ngx_str_t *args);


ngx_int_t
ngx_http_cms_list_page(ngx_http_request_t *r, ngx_uint_t def,
    ngx_uint_t max, ngx_http_cms_page_t *page, ngx_str_t *args)
{
    u_char      *p;
    ngx_int_t    rc;
    ngx_uint_t   n;

    page->limit = def;
    page->offset = 0;
    page->base = 0;

    rc = ngx_http_cms_query_uint(r, "limit", &n);

    if (rc == NGX_OK && n >= 1 && n <= max) {
        page->limit = n;

    } else if (rc != NGX_OK && rc != NGX_DECLINED && rc != NGX_ABORT) {
        return rc;
    }

    rc = ngx_http_cms_query_uint(r, "offset", &n);

    if (rc == NGX_OK && n > NGX_HTTP_CMS_LIST_MAX_OFFSET) {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_FIELD,
                                     "offset", "offset must be at most "
                                     NGX_HTTP_CMS_LIST_MAX_OFFSET_TEXT);
    }

    if (rc == NGX_OK) {
        page->offset = n;

    } else if (rc != NGX_DECLINED && rc != NGX_ABORT) {
        return rc;
    }

    if (args == NULL) {
        return NGX_OK;
    }

    p = ngx_pnalloc(r->pool, 2 * NGX_INT_T_LEN);
    if (p == NULL) {
        return NGX_ERROR;
    }

    args[0].data = p;
    args[0].len = ngx_sprintf(p, "%ui", page->limit) - p;
    p += args[0].len;
    args[1].data = p;
    args[1].len = ngx_sprintf(p, "%ui", page->offset) - p;

    return NGX_OK;
}


/* long: the shape checked, the items, the pagination, a search's fuzzy */
ngx_int_t
ngx_http_cms_list_send(ngx_http_request_t *r,
    const ngx_http_cms_record_t *rec, PGresult *res, ngx_http_cms_page_t *page)
{
    int        rows;
    size_t     more;
    u_char    *p;
    ngx_str_t  body;

    rows = PQntuples(res);

    if (rows < 1 || PQnfields(res) < (int) page->base + 2) {
        ngx_log_error(NGX_LOG_ALERT, r->connection->log, 0,
                      "cms: a page query returned the wrong shape");
        return NGX_ERROR;
    }

    /* a list of a parent that is not there: its statement's NULL total */
    if (PQgetisnull(res, 0, (int) page->base)) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    if (PQgetisnull(res, 0, (int) (page->base + rec->cols[0].column))) {
        rows = 0;
    }

    more = PQgetlength(res, 0, page->base) + 3 * NGX_INT_T_LEN
           + sizeof(",\"pagination\":{\"total\":,"
                    "\"limit\":,\"offset\":},\"fuzzy\":false}");

    /* a search's items: each with its highlight, the last column */
    p = ngx_http_cms_list_items(r, rec, res, rows, page->base,
                                page->search ? PQnfields(res) - 1 : -1,
                                more, &body);
    if (p == NULL) {
        return NGX_ERROR;
    }

    if (page->no_limit) {
        p = ngx_sprintf(p, ",\"pagination\":{\"total\":%s,\"offset\":%ui}",
                        PQgetvalue(res, 0, page->base), page->offset);

    } else {
        p = ngx_sprintf(p, ",\"pagination\":{\"total\":%s,\"limit\":%ui,"
                        "\"offset\":%ui}", PQgetvalue(res, 0, page->base),
                        page->limit, page->offset);
    }

    if (page->search) {
        p = ngx_sprintf(p, ",\"fuzzy\":%s",
                        PQgetvalue(res, 0, 0)[0] == 't' ? "true" : "false");
    }

    *p++ = '}';

    body.len = p - body.data;

    return ngx_http_cms_send_written(r, NGX_HTTP_OK, &body);
}


ngx_int_t
ngx_http_cms_list_send_all(ngx_http_request_t *r,
    const ngx_http_cms_record_t *rec, PGresult *res)
{
    return ngx_http_cms_list_send_rows(r, rec, res, PQntuples(res));
}


ngx_int_t
ngx_http_cms_list_send_under(ngx_http_request_t *r,
    const ngx_http_cms_record_t *rec, PGresult *res)
{
    int  rows;

    rows = PQntuples(res);

    if (rows < 1 || PQnfields(res) <= (int) rec->cols[0].column) {
        ngx_log_error(NGX_LOG_ALERT, r->connection->log, 0,
                      "cms: a list query returned the wrong shape");
        return NGX_ERROR;
    }

    if (PQgetisnull(res, 0, 0)) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    if (PQgetisnull(res, 0, (int) rec->cols[0].column)) {
        rows = 0;
    }

    return ngx_http_cms_list_send_rows(r, rec, res, rows);
}


/* {"<list>": [the first "rows" rows]} */
static ngx_int_t
ngx_http_cms_list_send_rows(ngx_http_request_t *r,
    const ngx_http_cms_record_t *rec, PGresult *res, int rows)
{
    u_char     *p;
    ngx_str_t   body;

    p = ngx_http_cms_list_items(r, rec, res, rows, 0, -1, 1, &body);
    if (p == NULL) {
        return NGX_ERROR;
    }

    *p++ = '}';
    body.len = p - body.data;

    return ngx_http_cms_send_written(r, NGX_HTTP_OK, &body);
}


/* "{"<list>":[items]" into a buffer with "more" bytes to spare after it,
   each item with the member "highlight" from column "hl" unless it is
   -1; returns where the rest goes, or NULL */
static u_char *
ngx_http_cms_list_items(ngx_http_request_t *r,
    const ngx_http_cms_record_t *rec, PGresult *res, int rows,
    ngx_uint_t base, int hl, size_t more, ngx_str_t *body)
{
    int      row;
    size_t   len;
    u_char  *p;

    len = ngx_strlen(rec->list) + sizeof("{\"\":[]") + more;

    for (row = 0; row < rows; row++) {
        len += ngx_http_cms_json_row_len(res, row, base, rec->cols,
                                         rec->ncols) + 1;

        if (hl >= 0) {
            len += sizeof(",\"highlight\":null")
                   + ngx_http_cms_json_escaped_len(
                         (u_char *) PQgetvalue(res, row, hl),
                         PQgetlength(res, row, hl));
        }
    }

    p = ngx_pnalloc(r->pool, len);
    if (p == NULL) {
        return NULL;
    }

    body->data = p;
    p = ngx_sprintf(p, "{\"%s\":[", rec->list);

    for (row = 0; row < rows; row++) {
        if (row) {
            *p++ = ',';
        }

        p = ngx_http_cms_json_row(p, res, row, base, rec->cols, rec->ncols);

        if (hl >= 0) {
            p = ngx_http_cms_list_highlight(p, res, row, hl);
        }
    }

    *p++ = ']';

    return p;
}


/* the member "highlight" from column "hl" put inside the item just
   written before "p" (over its closing brace); returns where it ends */
static u_char *
ngx_http_cms_list_highlight(u_char *p, PGresult *res, int row, int hl)
{
    p = ngx_cpymem(p - 1, ",\"highlight\":", sizeof(",\"highlight\":") - 1);

    if (PQgetisnull(res, row, hl)) {
        p = ngx_cpymem(p, "null", 4);

    } else {
        p = ngx_http_cms_json_escape(p, (u_char *) PQgetvalue(res, row, hl),
                                     PQgetlength(res, row, hl));
    }

    *p++ = '}';

    return p;
}


ngx_int_t
ngx_http_cms_list_cursor(ngx_http_request_t *r, ngx_uint_t def,
    ngx_uint_t max, ngx_http_cms_cursor_t *cur, ngx_str_t *args)
{
    u_char      *p;
    ngx_int_t    rc;
    ngx_uint_t   n;

    /* in the order the extension list read them before: a request with
       two bad values names the same one */
    rc = ngx_http_cms_query_arg(r, "starting_after", 64, &cur->after);
    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return rc;
    }

    cur->limit = def;

    rc = ngx_http_cms_query_uint(r, "limit", &n);

    if (rc == NGX_ABORT || (rc == NGX_OK && (n < 1 || n > max))) {
        return ngx_http_cms_list_bad_limit(r, max);
    }

    if (rc == NGX_OK) {
        cur->limit = n;

    } else if (rc != NGX_DECLINED) {
        return rc;
    }

    if (args == NULL) {
        return NGX_OK;
    }

    p = ngx_pnalloc(r->pool, NGX_INT_T_LEN);
    if (p == NULL) {
        return NGX_ERROR;
    }

    args[0] = cur->after;
    args[1].data = p;
    args[1].len = ngx_sprintf(p, "%ui", cur->limit + 1) - p;

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_list_send_cursor(ngx_http_request_t *r,
    const ngx_http_cms_record_t *rec, PGresult *res,
    ngx_http_cms_cursor_t *cur)
{
    int                     rows;
    u_char                 *p;
    ngx_str_t               body;
    ngx_uint_t              more;
    ngx_http_cms_record_t   data;

    rows = PQntuples(res);
    more = ((ngx_uint_t) rows > cur->limit);

    if (more) {
        rows = (int) cur->limit;
    }

    /* the same items under the extension API's name for a page */
    data = *rec;
    data.list = "data";

    p = ngx_http_cms_list_items(r, &data, res, rows, 0, -1,
                                sizeof(",\"has_more\":false}"), &body);
    if (p == NULL) {
        return NGX_ERROR;
    }

    p = ngx_sprintf(p, ",\"has_more\":%s}", more ? "true" : "false");
    body.len = p - body.data;

    return ngx_http_cms_send_written(r, NGX_HTTP_OK, &body);
}


/* 422 validation_error naming limit, with its range */
static ngx_int_t
ngx_http_cms_list_bad_limit(ngx_http_request_t *r, ngx_uint_t max)
{
    u_char  *p;

    p = ngx_pnalloc(r->pool, sizeof("limit must be an integer from 1 to ")
                             + NGX_INT_T_LEN);
    if (p == NULL) {
        return NGX_ERROR;
    }

    ngx_sprintf(p, "limit must be an integer from 1 to %ui%Z", max);

    return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_EXT_VALIDATION, "limit",
                                 (char *) p);
}


ngx_int_t
ngx_http_cms_list_query(ngx_http_request_t *r, ngx_http_cms_pg_stmt_t *stmt,
    ngx_str_t *args, ngx_uint_t n, const ngx_http_cms_record_t *rec)
{
    ngx_int_t             rc;
    ngx_http_cms_ctx_t   *ctx;
    ngx_http_cms_page_t  *page;

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    /* zeroed: members added to the page later default to nothing */
    page = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_page_t));
    if (ctx == NULL || page == NULL || n < 2) {
        return NGX_ERROR;
    }

    rc = ngx_http_cms_list_page(r, NGX_HTTP_CMS_LIST_DEFAULT,
                                NGX_HTTP_CMS_LIST_MAX, page, &args[n - 2]);
    if (rc != NGX_OK) {
        return rc;
    }

    page->rec = rec;
    ctx->data = page;

    return ngx_http_cms_pg_query(r, stmt, args, n, ngx_http_cms_list_done);
}


ngx_int_t
ngx_http_cms_list_done(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t             rc;
    ngx_http_cms_page_t  *page;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    page = ctx->data;

    return ngx_http_cms_list_send(r, page->rec, res, page);
}


ngx_int_t
ngx_http_cms_list_filter(ngx_http_request_t *r, const char *name,
    const char *const *one_of, ngx_uint_t code, ngx_str_t *value)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_query_arg(r, name, 64, value);
    if (rc != NGX_OK) {
        return rc;
    }

    if (one_of != NULL
        && !cms_str_one_of((char *) value->data, value->len, one_of))
    {
        return ngx_http_cms_fail(r, code, name);
    }

    if (one_of == NULL
        && !cms_uuid_valid((char *) value->data, value->len))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_FIELD, name);
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_list_filtered(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    const ngx_http_cms_list_filter_t *f, ngx_http_cms_pg_stmt_t *stmt)
{
    ngx_int_t             rc;
    ngx_str_t             args[5];
    ngx_http_cms_page_t  *page;

    args[0] = ctx->principal.workspace_id;

    rc = ngx_http_cms_list_filter_page(r, ctx, f, &args[1]);
    if (rc != NGX_OK) {
        return rc;
    }

    if (f->search != NULL) {
        rc = ngx_http_cms_list_search_arg(r, &args[4]);

        if (rc == NGX_OK) {
            page = ctx->data;
            page->search = 1;
            page->base = 1;

            return ngx_http_cms_pg_query(r, f->search, args, 5,
                                         ngx_http_cms_list_done);
        }

        if (rc != NGX_DECLINED) {
            return rc;
        }
    }

    return ngx_http_cms_pg_query(r, stmt, args, 4, ngx_http_cms_list_done);
}


ngx_int_t
ngx_http_cms_list_search_arg(ngx_http_request_t *r, ngx_str_t *q)
{
    size_t     i;
    ngx_int_t  rc;

    rc = ngx_http_cms_query_arg(r, "q", NGX_HTTP_CMS_SEARCH_MAX, q);
    if (rc != NGX_OK) {
        return rc;
    }

    for (i = 0; i < q->len; i++) {
        if (q->data[i] != ' ' && q->data[i] != '\t') {
            return NGX_OK;
        }
    }

    return NGX_DECLINED;
}


ngx_int_t
ngx_http_cms_list_search(ngx_http_request_t *r, ngx_http_cms_pg_stmt_t *stmt,
    ngx_str_t *args, ngx_uint_t n, const ngx_http_cms_record_t *rec,
    ngx_str_t *q)
{
    ngx_int_t             rc;
    ngx_http_cms_ctx_t   *ctx;
    ngx_http_cms_page_t  *page;

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    page = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_page_t));
    if (ctx == NULL || page == NULL || n < 3) {
        return NGX_ERROR;
    }

    rc = ngx_http_cms_list_page(r, NGX_HTTP_CMS_LIST_DEFAULT,
                                NGX_HTTP_CMS_LIST_MAX, page, &args[n - 3]);
    if (rc != NGX_OK) {
        return rc;
    }

    args[n - 1] = *q;
    page->rec = rec;
    page->search = 1;
    page->base = 1;
    ctx->data = page;

    return ngx_http_cms_pg_query(r, stmt, args, n, ngx_http_cms_list_done);
}


ngx_int_t
ngx_http_cms_list_filtered_fused(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, const ngx_http_cms_list_filter_t *f,
    ngx_uint_t base, ngx_str_t *args, ngx_uint_t *nargs)
{
    ngx_int_t             rc;
    ngx_str_t             q;
    ngx_http_cms_page_t  *page;

    rc = ngx_http_cms_list_filter_page(r, ctx, f, args);

    if (rc == NGX_ERROR) {
        return NGX_ERROR;
    }

    /* a search (or a bad "q") once the key is checked */
    if (rc == NGX_OK && f->search != NULL
        && ngx_http_cms_list_search_arg(r, &q) != NGX_DECLINED)
    {
        rc = NGX_DECLINED;
    }

    if (rc != NGX_OK) {
        ctx->has_err = 0;
        return NGX_DECLINED;
    }

    page = ctx->data;
    page->base = base;
    *nargs = 3;

    return NGX_OK;
}


/* the filter's value, limit and offset into args[0 .. 2]; the page in
   ctx->data */
static ngx_int_t
ngx_http_cms_list_filter_page(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, const ngx_http_cms_list_filter_t *f,
    ngx_str_t *args)
{
    ngx_int_t             rc;
    ngx_http_cms_page_t  *page;

    rc = ngx_http_cms_list_filter(r, f->name, f->allowed, f->code, &args[0]);

    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return rc;
    }

    /* zeroed: members added to the page later default to nothing */
    page = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_page_t));
    if (page == NULL) {
        return NGX_ERROR;
    }

    ctx->data = page;

    rc = ngx_http_cms_list_page(r, NGX_HTTP_CMS_LIST_DEFAULT,
                                NGX_HTTP_CMS_LIST_MAX, page, &args[1]);
    page->rec = f->rec;

    return rc;
}
