
/*
 * JSON in and out: request bodies read through field tables (cms_fields)
 * and response serialisation into request-pool memory.
 */


#ifndef _NGX_HTTP_CMS_JSON_H_INCLUDED_
#define _NGX_HTTP_CMS_JSON_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <jansson.h>
#include <libpq-fe.h>
#include "cms_fields.h"


/* the most statement parameters a field table may fill */
#define NGX_HTTP_CMS_JSON_MAX_ARGS  32


/* how a result column is written by ngx_http_cms_json_row() */
typedef enum {
    NGX_HTTP_CMS_COL_STRING = 0,   /* a JSON string, escaped */
    NGX_HTTP_CMS_COL_NUMBER,       /* PostgreSQL's text of a number, as is */
    NGX_HTTP_CMS_COL_BOOL,         /* "t" / "f" -> true / false */
    NGX_HTTP_CMS_COL_JSON,         /* a json column, written through */
    NGX_HTTP_CMS_COL_PUBLISHABLE,  /* "site id:nonce" -> the site's key */
    NGX_HTTP_CMS_COL_SRCSET,       /* "<width> <url of a stored image>" ->
                                      its srcset (docs/images.md) */
    NGX_HTTP_CMS_COL_TIME,         /* a timestamptz -> cms_ts()'s form */
    NGX_HTTP_CMS_COL_TEXT_ARRAY    /* a text[] -> an array of strings */
} ngx_http_cms_col_kind_e;


/* one member of an object written from a result row; SQL NULL is null */
typedef struct {
    const char                 *name;
    ngx_uint_t                  column;    /* PQgetvalue() column number */
    ngx_uint_t                  kind;      /* ngx_http_cms_col_kind_e */
} ngx_http_cms_col_t;


/*
 * A record as the API writes it: its name in a single answer ("category")
 * and in a list ("categories"), and its members from result columns.
 */
typedef struct {
    const char                 *name;
    const char                 *list;
    const ngx_http_cms_col_t   *cols;
    ngx_uint_t                  ncols;
} ngx_http_cms_record_t;


/*
 * Serialises "json" (compact, keys in insertion order) into memory from
 * r->pool.  The caller keeps its reference to "json".  Returns NGX_OK or
 * NGX_ERROR (allocation or encoding failure, logged).
 */
ngx_int_t ngx_http_cms_json_dump(ngx_http_request_t *r, json_t *json,
    ngx_str_t *out);

/*
 * Hands "json" to r->pool: it is released when the request ends.  On
 * failure the reference is dropped at once and NGX_ERROR returned.
 */
ngx_int_t ngx_http_cms_json_pool(ngx_http_request_t *r, json_t *json);

/*
 * Appends "s" to "buf" as a JSON string literal (quotes included), escaping
 * per RFC 8259; "buf" must have room for ngx_http_cms_json_escaped_len(s).
 * For pages written straight from result columns, with no json_t tree.
 */
u_char *ngx_http_cms_json_escape(u_char *buf, const u_char *s, size_t len);
size_t ngx_http_cms_json_escaped_len(const u_char *s, size_t len);

/*
 * Row "row" of "res" as a compact JSON object of the members "cols" (n of
 * them, terminated by nothing: n counts them), their column numbers counted
 * from column "base" (0, or where a fused statement's record begins):
 * ngx_http_cms_json_row_len()
 * is the exact length, ngx_http_cms_json_row() writes it at "p" and
 * returns the end.  The caller checked the result's shape: every column
 * named exists.  Numbers and json columns come from PostgreSQL and are
 * written as they are.
 */
size_t ngx_http_cms_json_row_len(PGresult *res, int row, ngx_uint_t base,
    const ngx_http_cms_col_t *cols, ngx_uint_t n);
u_char *ngx_http_cms_json_row(u_char *p, PGresult *res, int row,
    ngx_uint_t base, const ngx_http_cms_col_t *cols, ngx_uint_t n);


/*
 * For routes that take no fields: NGX_OK when "body" is NULL (no body) or
 * {}, else 400 invalid_request recorded ("This route takes no body").
 */
ngx_int_t ngx_http_cms_json_no_body(ngx_http_request_t *r, json_t *body);

/*
 * A slug: "slug" as given must match the slug rule (else invalid_slug is
 * recorded); absent, it is derived from "from" when that is given
 * ("untitled" when nothing usable remains).  Returns NGX_OK, 400 or
 * NGX_ERROR.
 */
ngx_int_t ngx_http_cms_json_slug(ngx_http_request_t *r, ngx_str_t *slug,
    ngx_str_t *from);


/*
 * The bytes a derived slug may take: "-" and nine digits more fit the
 * slug's limit (CMS_SLUG_MAX), for the database's "-2", "-3"... when the
 * slug is taken (cms_slug_next(), sql/0012_derived_slugs.sql).
 */
#define NGX_HTTP_CMS_SLUG_DERIVED_MAX  190

/*
 * For records whose slug keeps every script (cms_slug.h): when the patch
 * has no "slug", sets it to the slug of its string member "from"
 * ("untitled" when nothing usable remains) and "slug_derived" to true, so
 * that the statement takes the first free one instead of answering
 * slug_taken.  Nothing happens when "from" is absent.  Returns NGX_OK or
 * NGX_ERROR.
 */
ngx_int_t ngx_http_cms_json_slug_derive(ngx_http_request_t *r,
    json_t *patch, const char *from);

/*
 * The same for a record read into statement arguments: *slug is the slug
 * of "from" in every script ("untitled" when nothing usable remains).
 * NGX_OK or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_json_slug_text(ngx_http_request_t *r,
    ngx_str_t *from, ngx_str_t *slug);

/*
 * Reads the request body against the field table "t" (cms_fields.h) in
 * "mode" (CMS_FIELDS_CREATE or CMS_FIELDS_PATCH) into the statement
 * arguments args[0 .. nargs) ($1 ..): a field's value, or data NULL when
 * it is absent or set to null; slots the table does not name keep what
 * the caller put there.  Values live as long as the request.  Returns
 * NGX_OK, the spec's error recorded (the table's code, the field as param,
 * a message naming it), or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_json_read(ngx_http_request_t *r, json_t *body,
    const cms_fields_t *t, int mode, ngx_str_t *args, ngx_uint_t nargs);

/*
 * For statements that take the fields as one JSON patch (jsonb): reads
 * the body against "t" in "mode" as ngx_http_cms_json_read() does, then
 * sets *patch to a JSON object of the fields given (cms_fields_object():
 * named as the table names them, typed, null where a field is set to
 * null), owned by r->pool.  Fields with no $n are checked, not written.
 * Returns NGX_OK, the spec's error recorded, or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_json_patch(ngx_http_request_t *r, json_t *body,
    const cms_fields_t *t, int mode, json_t **patch);


#endif /* _NGX_HTTP_CMS_JSON_H_INCLUDED_ */
