
/*
 * Answers made of a database row (ngx_http_cms_response.h): a row's JSON
 * column wrapped or sent as it is, the common "done" continuations of
 * reads, writes and deletes, and a path's id checked.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_json.h"
#include "ngx_http_cms_response.h"
#include "cms_uuid.h"


static ngx_int_t ngx_http_cms_send_row_base(ngx_http_request_t *r,
    ngx_uint_t status, const ngx_http_cms_record_t *rec, PGresult *res,
    ngx_uint_t base, ngx_keyval_t *extra);


ngx_int_t
ngx_http_cms_send_row(ngx_http_request_t *r, ngx_uint_t status,
    const ngx_http_cms_record_t *rec, PGresult *res)
{
    return ngx_http_cms_send_row_with(r, status, rec, res, NULL);
}


ngx_int_t
ngx_http_cms_send_row_with(ngx_http_request_t *r, ngx_uint_t status,
    const ngx_http_cms_record_t *rec, PGresult *res, ngx_keyval_t *extra)
{
    return ngx_http_cms_send_row_base(r, status, rec, res, 0, extra);
}


ngx_int_t
ngx_http_cms_send_row_at(ngx_http_request_t *r, ngx_uint_t status,
    const ngx_http_cms_record_t *rec, PGresult *res, ngx_uint_t base)
{
    if (PQntuples(res) == 0
        || PQnfields(res) < (int) (base + rec->ncols)
        || PQgetisnull(res, 0, (int) (base + rec->cols[0].column)))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    return ngx_http_cms_send_row_base(r, status, rec, res, base, NULL);
}


/* row 0 of "res", the record's columns counted from "base" */
static ngx_int_t
ngx_http_cms_send_row_base(ngx_http_request_t *r, ngx_uint_t status,
    const ngx_http_cms_record_t *rec, PGresult *res, ngx_uint_t base,
    ngx_keyval_t *extra)
{
    u_char     *p;
    size_t      len;
    ngx_str_t   body;

    if (PQntuples(res) == 0) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    len = sizeof("{\"\":}")
          + ngx_http_cms_json_row_len(res, 0, base, rec->cols, rec->ncols);

    if (rec->name) {
        len += ngx_strlen(rec->name);
    }

    if (extra) {
        len += extra->key.len + sizeof(",\"\":")
               + ngx_http_cms_json_escaped_len(extra->value.data,
                                               extra->value.len);
    }

    p = ngx_pnalloc(r->pool, len);
    if (p == NULL) {
        return NGX_ERROR;
    }

    body.data = p;

    if (rec->name) {
        p = ngx_sprintf(p, "{\"%s\":", rec->name);
    }

    p = ngx_http_cms_json_row(p, res, 0, base, rec->cols, rec->ncols);

    if (rec->name == NULL) {
        /* the row's members are the answer's: reopen its object */
        p--;
    }

    if (extra) {
        p = ngx_sprintf(p, ",\"%V\":", &extra->key);
        p = ngx_http_cms_json_escape(p, extra->value.data, extra->value.len);
    }

    *p++ = '}';
    body.len = p - body.data;

    return ngx_http_cms_send_written(r, status, &body);
}


static ngx_int_t
ngx_http_cms_row_answer(ngx_http_request_t *r, ngx_uint_t status,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_send_row(r, status, ctx->data, res);
}


ngx_int_t
ngx_http_cms_row_done(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    return ngx_http_cms_row_answer(r, r->method == NGX_HTTP_POST
                                      ? NGX_HTTP_CREATED : NGX_HTTP_OK,
                                   ctx, res);
}


/* an action on a record (POST .../rotate): 200 with the record, never 201 */
ngx_int_t
ngx_http_cms_row_ok_done(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    return ngx_http_cms_row_answer(r, NGX_HTTP_OK, ctx, res);
}


ngx_int_t
ngx_http_cms_deleted_done(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    return ngx_http_cms_send_done(r, res, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
}


ngx_int_t
ngx_http_cms_send_done(ngx_http_request_t *r, PGresult *res, ngx_uint_t err,
    const char *param)
{
    ngx_int_t  rc;
    ngx_str_t  empty = ngx_null_string;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    if (PQntuples(res) != 1 || PQnfields(res) < 1 || PQgetisnull(res, 0, 0)
        || (PQgetlength(res, 0, 0) == 1 && PQgetvalue(res, 0, 0)[0] == 'f'))
    {
        return ngx_http_cms_fail(r, err, param);
    }

    return ngx_http_cms_send(r, NGX_HTTP_NO_CONTENT, &empty);
}


ngx_int_t
ngx_http_cms_path_id(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_str_t *args)
{
    if (ctx->nparams == 0
        || !cms_uuid_valid((char *) ctx->params[0].data, ctx->params[0].len))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    args[0] = ctx->principal.workspace_id;
    args[1] = ctx->params[0];

    return NGX_OK;
}
