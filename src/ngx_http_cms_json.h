
/*
 * JSON in and out: typed field getters for request bodies and response
 * serialisation into request-pool memory.
 */


#ifndef _NGX_HTTP_CMS_JSON_H_INCLUDED_
#define _NGX_HTTP_CMS_JSON_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <jansson.h>


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
 * Reads string field "key" of the request body object into "out" (bytes
 * owned by the body, which lives as long as the request).  Absent or null:
 * out->data is NULL and NGX_OK, unless "missing" names an error code, which
 * is then recorded and its status returned.  A non-string, or a string over
 * "max" bytes, records invalid_field_value naming the field.
 */
ngx_int_t ngx_http_cms_json_string(ngx_http_request_t *r, json_t *obj,
    const char *key, ngx_uint_t missing, size_t max, ngx_str_t *out);

/*
 * For routes that take no fields: NGX_OK when "body" is NULL (no body) or
 * {}, else 400 invalid_request recorded ("This route takes no body").
 */
ngx_int_t ngx_http_cms_json_no_body(ngx_http_request_t *r, json_t *body);

/*
 * Checks that the body is a JSON object whose keys are all in "fields"
 * (NULL-terminated) or in "ignored" (read-only fields the API returns,
 * accepted and dropped so that a client can send back what it read).
 * Returns NGX_OK or 400 recorded, naming the first unknown field.
 */
ngx_int_t ngx_http_cms_json_fields(ngx_http_request_t *r, json_t *obj,
    const char **fields, const char **ignored);


/*
 * A slug: "slug" as given must match the slug rule (else invalid_slug is
 * recorded); absent, it is derived from "from" when that is given
 * ("untitled" when nothing usable remains).  Returns NGX_OK, 400 or
 * NGX_ERROR.
 */
ngx_int_t ngx_http_cms_json_slug(ngx_http_request_t *r, ngx_str_t *slug,
    ngx_str_t *from);


#endif /* _NGX_HTTP_CMS_JSON_H_INCLUDED_ */
