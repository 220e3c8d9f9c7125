
/*
 * The one error catalogue of the API: a handler names a code, this file
 * decides the status, the code or type string and the default text.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_json.h"


/* the longest message and param an error body echoes (bytes, cut "...") */
#define NGX_HTTP_CMS_ERROR_MESSAGE_MAX  200
#define NGX_HTTP_CMS_ERROR_PARAM_MAX    64


static ngx_int_t ngx_http_cms_error_cut(ngx_pool_t *pool, ngx_str_t *s,
    size_t max);


#define ngx_http_cms_err(status, code, type, msg)                            \
    { status, ngx_string(code), ngx_string(type), ngx_string(msg) }


static ngx_http_cms_error_t  ngx_http_cms_errors[] = {

    /* NGX_HTTP_CMS_ERR_NONE */
    ngx_http_cms_err(500, "internal_error", "internal_error",
                     "Internal error"),

    ngx_http_cms_err(400, "invalid_request", "invalid_request",
                     "The request is not valid"),
    ngx_http_cms_err(400, "invalid_request", "invalid_request",
                     "The request body is not valid JSON"),
    ngx_http_cms_err(400, "invalid_request", "invalid_request",
                     "A JSON request body is required"),
    ngx_http_cms_err(400, "invalid_request", "invalid_request",
                     "The JSON body is nested too deeply"),
    ngx_http_cms_err(422, "validation_error", "validation_error",
                     "A value failed validation"),
    ngx_http_cms_err(401, "unauthorized", "unauthenticated",
                     "Authentication required"),
    ngx_http_cms_err(403, "forbidden", "insufficient_scope",
                     "Not permitted"),
    ngx_http_cms_err(404, "not_found", "not_found",
                     "Not found"),
    ngx_http_cms_err(405, "method_not_allowed", "invalid_request",
                     "Method not allowed on this resource"),
    ngx_http_cms_err(409, "conflict", "conflict",
                     "The request conflicts with the current state"),
    ngx_http_cms_err(413, "payload_too_large", "invalid_request",
                     "The request body is too large"),
    ngx_http_cms_err(415, "unsupported_media_type", "invalid_request",
                     "The request body must be application/json"),
    ngx_http_cms_err(429, "rate_limited", "rate_limited",
                     "Too many requests"),
    ngx_http_cms_err(500, "internal_error", "internal_error",
                     "Internal error; safe to retry"),
    ngx_http_cms_err(503, "service_unavailable", "service_unavailable",
                     "Service temporarily unavailable; retry later"),

    ngx_http_cms_err(401, "missing_token", "unauthenticated",
                     "No credential was sent"),
    ngx_http_cms_err(401, "invalid_token", "unauthenticated",
                     "The session token is invalid or expired"),
    ngx_http_cms_err(401, "invalid_api_key", "unauthenticated",
                     "The API key is invalid or revoked"),
    ngx_http_cms_err(401, "invalid_credentials", "unauthenticated",
                     "Email or password is wrong"),
    ngx_http_cms_err(403, "missing_scope", "insufficient_scope",
                     "The API key lacks the scope this route needs"),
    ngx_http_cms_err(403, "not_workspace_member", "insufficient_scope",
                     "Not a member of this workspace"),
    ngx_http_cms_err(403, "workspace_suspended", "insufficient_scope",
                     "The workspace is suspended"),
    ngx_http_cms_err(403, "account_inactive", "insufficient_scope",
                     "The account is inactive"),
    ngx_http_cms_err(403, "email_not_verified", "insufficient_scope",
                     "The email address is not verified"),
    ngx_http_cms_err(400, "email_required", "invalid_request",
                     "email is required"),
    ngx_http_cms_err(400, "invalid_email", "validation_error",
                     "email is not a valid address"),
    ngx_http_cms_err(400, "password_too_short", "validation_error",
                     "password must have at least 10 characters"),
    ngx_http_cms_err(409, "email_taken", "conflict",
                     "An account with this email exists"),
    ngx_http_cms_err(400, "name_required", "invalid_request",
                     "name is required"),
    ngx_http_cms_err(400, "invalid_scope", "validation_error",
                     "Unknown scope"),
    ngx_http_cms_err(400, "invalid_field_value", "validation_error",
                     "A field has a value of the wrong type or form"),
    ngx_http_cms_err(400, "invalid_request", "invalid_request",
                     "The body has a field this route does not take"),

    ngx_http_cms_err(400, "title_required", "invalid_request",
                     "title is required"),
    ngx_http_cms_err(400, "invalid_slug", "validation_error",
                     "slug must be lowercase letters, digits and single "
                     "dashes"),
    ngx_http_cms_err(400, "invalid_status", "validation_error",
                     "Unknown status"),
    ngx_http_cms_err(409, "slug_taken", "conflict",
                     "The slug is taken in this language"),
    ngx_http_cms_err(403, "cannot_publish", "insufficient_scope",
                     "Publishing needs the owner, admin, editor or author "
                     "role"),
    ngx_http_cms_err(403, "cannot_edit_live", "insufficient_scope",
                     "Changing live content needs publish rights"),
    ngx_http_cms_err(400, "invalid_field_value", "validation_error",
                     "The HTML is too large or nested too deeply"),

    ngx_http_cms_err(422, "validation_error", "validation_error",
                     "A value failed validation"),
    ngx_http_cms_err(409, "invalid_state", "invalid_state",
                     "The invoice is not in a state that allows this"),
    ngx_http_cms_err(409, "idempotency_conflict", "idempotency_conflict",
                     "This Idempotency-Key was used with a different "
                     "request"),
    ngx_http_cms_err(409, "idempotency_in_progress",
                     "idempotency_in_progress",
                     "A request with this Idempotency-Key is in progress; "
                     "retry later"),
    ngx_http_cms_err(400, "invalid_request", "invalid_request",
                     "Idempotency-Key must be 1 to 255 printable ASCII "
                     "characters"),

    /* what nginx answers by itself, before or around the module */
    ngx_http_cms_err(408, "request_timeout", "request_timeout",
                     "The request was not received in time"),
    ngx_http_cms_err(411, "length_required", "invalid_request",
                     "The request needs a Content-Length"),
    ngx_http_cms_err(414, "uri_too_long", "invalid_request",
                     "The request URI is too long"),
    ngx_http_cms_err(501, "not_implemented", "invalid_request",
                     "The request uses a transfer coding or method this "
                     "server does not implement"),
    ngx_http_cms_err(502, "bad_gateway", "bad_gateway",
                     "An upstream server answered badly"),
    ngx_http_cms_err(504, "gateway_timeout", "gateway_timeout",
                     "An upstream server did not answer in time"),
    ngx_http_cms_err(505, "http_version_not_supported", "invalid_request",
                     "The HTTP version is not supported"),
};


/* the catalogue and the enum must not drift apart */
typedef char ngx_http_cms_errors_complete[
    (sizeof(ngx_http_cms_errors) / sizeof(ngx_http_cms_errors[0])
     == NGX_HTTP_CMS_ERR_LAST) ? 1 : -1];


ngx_int_t
ngx_http_cms_fail(ngx_http_request_t *r, ngx_uint_t code, const char *param)
{
    return ngx_http_cms_fail_msg(r, code, param, NULL);
}


ngx_int_t
ngx_http_cms_fail_msg(ngx_http_request_t *r, ngx_uint_t code,
    const char *param, const char *message)
{
    ngx_http_cms_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    if (code >= NGX_HTTP_CMS_ERR_LAST) {
        code = NGX_HTTP_CMS_ERR_INTERNAL;
    }

    if (ctx != NULL) {
        ctx->has_err = 1;
        ctx->err.code = code;
        ctx->err.message = message;

        if (param != NULL) {
            ctx->err.param.data = (u_char *) param;
            ctx->err.param.len = ngx_strlen(param);

        } else {
            ngx_str_null(&ctx->err.param);
        }
    }

    return ngx_http_cms_errors[code].status;
}


const ngx_http_cms_error_t *
ngx_http_cms_error_get(ngx_uint_t code)
{
    if (code >= NGX_HTTP_CMS_ERR_LAST) {
        code = NGX_HTTP_CMS_ERR_INTERNAL;
    }

    return &ngx_http_cms_errors[code];
}


ngx_uint_t
ngx_http_cms_error_find(const char *code)
{
    size_t      len;
    ngx_uint_t  i;

    len = ngx_strlen(code);

    for (i = 1; i < NGX_HTTP_CMS_ERR_LAST; i++) {
        if (ngx_http_cms_errors[i].code.len == len
            && ngx_strncmp(ngx_http_cms_errors[i].code.data, code, len) == 0)
        {
            return i;
        }
    }

    return NGX_HTTP_CMS_ERR_NONE;
}


ngx_uint_t
ngx_http_cms_error_for_status(ngx_uint_t status)
{
    ngx_uint_t  i;

    for (i = 1; i < NGX_HTTP_CMS_ERR_LAST; i++) {
        if (ngx_http_cms_errors[i].status == status) {
            return i;
        }
    }

    return status >= 500 ? NGX_HTTP_CMS_ERR_INTERNAL
                         : NGX_HTTP_CMS_ERR_INVALID_REQUEST;
}


ngx_int_t
ngx_http_cms_error_body(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_uint_t *status, ngx_str_t *body)
{
    json_t                      *root, *inner, *param;
    ngx_int_t                    rc;
    ngx_str_t                    msg, pm;
    ngx_uint_t                   code;
    const ngx_http_cms_error_t  *e;

    code = ctx->has_err ? ctx->err.code
                        : ngx_http_cms_error_for_status(*status);
    e = ngx_http_cms_error_get(code);

    *status = e->status;

    if (ctx->has_err && ctx->err.message) {
        msg.data = (u_char *) ctx->err.message;
        msg.len = ngx_strlen(ctx->err.message);

    } else {
        msg = e->message;
    }

    pm = ctx->has_err ? ctx->err.param : (ngx_str_t) ngx_null_string;

    /* echoes are bounded: a client's 100 KB field name is not sent back */
    if (ngx_http_cms_error_cut(r->pool, &msg, NGX_HTTP_CMS_ERROR_MESSAGE_MAX)
        != NGX_OK
        || ngx_http_cms_error_cut(r->pool, &pm, NGX_HTTP_CMS_ERROR_PARAM_MAX)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (ctx->shape == NGX_HTTP_CMS_SHAPE_EXT) {
        param = pm.len ? json_stringn((char *) pm.data, pm.len) : json_null();

        inner = json_pack("{s:s%, s:s%, s:o}",
                          "type", e->type.data, e->type.len,
                          "message", msg.data, msg.len, "param", param);
        root = inner ? json_pack("{s:o}", "error", inner) : NULL;

    } else {
        root = json_pack("{s:s%, s:s%}", "error", msg.data, msg.len,
                         "code", e->code.data, e->code.len);
    }

    if (root == NULL) {
        return NGX_ERROR;
    }

    rc = ngx_http_cms_json_dump(r, root, body);
    json_decref(root);

    return rc;
}


/*
 * Cuts "s" to at most "max" bytes, ending in "..." when cut, at a UTF-8
 * character boundary, and with control characters (which JSON escapes
 * six bytes each) replaced by "?", so the escaped text stays near "max".
 */
static ngx_int_t
ngx_http_cms_error_cut(ngx_pool_t *pool, ngx_str_t *s, size_t max)
{
    u_char  *p;
    size_t   i, len;

    len = s->len;

    if (len > max) {
        len = max - 3;

        while (len > 0 && (s->data[len] & 0xc0) == 0x80) {
            len--;
        }
    }

    for (i = 0; i < len && s->data[i] >= 0x20 && s->data[i] != 0x7f; i++) {
        /* void */
    }

    if (len == s->len && i == len) {
        return NGX_OK;
    }

    p = ngx_pnalloc(pool, len + 3);
    if (p == NULL) {
        return NGX_ERROR;
    }

    for (i = 0; i < len; i++) {
        p[i] = (s->data[i] < 0x20 || s->data[i] == 0x7f) ? '?' : s->data[i];
    }

    if (len < s->len) {
        p[len++] = '.'; p[len++] = '.'; p[len++] = '.';
    }

    s->data = p;
    s->len = len;

    return NGX_OK;
}
