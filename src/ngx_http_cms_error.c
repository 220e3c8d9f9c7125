
/*
 * The one error catalogue of the API: a handler names a code, this file
 * decides the status, the code or type string and the default text.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <libpq-fe.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_schema.h"


/* the longest message and param an error body echoes (bytes, cut "...") */


static ngx_uint_t ngx_http_cms_error_schema(const char *state);
static ngx_uint_t ngx_http_cms_error_sqlstate(const char *state,
    const char *msg);
static void ngx_http_cms_outbound_resolved(void *data, ngx_int_t rc,
    ngx_addr_t *addrs, ngx_uint_t naddrs);
static ngx_int_t ngx_http_cms_error_refused(ngx_http_request_t *r,
    PGresult *res, ngx_uint_t code);


#define ngx_http_cms_err(status, code, type, msg)                            \
    { status, ngx_string(code), ngx_string(type), ngx_string(msg), 0 }

/* a rule a field reader's "<field> is not valid" cannot state: its text
   answers instead (ngx_http_cms_json's field tables) */
#define ngx_http_cms_err_rule(status, code, type, msg)                       \
    { status, ngx_string(code), ngx_string(type), ngx_string(msg), 1 }


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
    ngx_http_cms_err_rule(400, "password_too_short", "validation_error",
                          "The password must have at least 10 characters"),
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
    ngx_http_cms_err(400, "invalid_url", "validation_error",
                     "The URL must be an absolute http:// or https:// URL"),

    ngx_http_cms_err(400, "content_required", "invalid_request",
                     "content is required"),
    ngx_http_cms_err(400, "comment_too_long", "validation_error",
                     "content must have at most 10000 characters"),
    ngx_http_cms_err(400, "id_required", "invalid_request",
                     "An id is required"),
    ngx_http_cms_err(400, "url_required", "invalid_request",
                     "A URL is required"),
    ngx_http_cms_err(404, "not_found", "not_found",
                     "This unsubscribe link is not valid"),
    ngx_http_cms_err(400, "slug_required", "invalid_request",
                     "slug is required"),
    ngx_http_cms_err(409, "slug_taken", "conflict",
                     "A custom module with this slug exists"),
    ngx_http_cms_err(403, "module_disabled", "insufficient_scope",
                     "The custom module is disabled"),
    ngx_http_cms_err(403, "module_not_allowed", "insufficient_scope",
                     "The workspace's plan does not include custom "
                     "modules"),
    ngx_http_cms_err(400, "section_key_required", "invalid_request",
                     "section_key is required"),

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

    ngx_http_cms_err(400, "invalid_role", "validation_error",
                     "role must be owner, admin, editor, author or viewer"),
    ngx_http_cms_err(409, "already_member", "conflict",
                     "This person is a member of the workspace already"),
    ngx_http_cms_err(409, "member_limit_reached", "conflict",
                     "The workspace's plan allows no more members"),
    ngx_http_cms_err(409, "last_owner", "conflict",
                     "A workspace keeps at least one owner"),
    ngx_http_cms_err(404, "invalid_invitation", "not_found",
                     "The invitation is unknown, used, revoked or expired"),
    ngx_http_cms_err(403, "invitation_email_mismatch", "insufficient_scope",
                     "The invitation was sent to another email address"),
    ngx_http_cms_err(413, "storage_limit_exceeded", "invalid_request",
                     "The workspace's plan storage quota would be exceeded"),
    ngx_http_cms_err(413, "upload_too_large", "invalid_request",
                     "The file is over the plan's per-file upload cap"),
    ngx_http_cms_err(413, "avatar_too_large", "invalid_request",
                     "The image is over the avatar size cap"),
    ngx_http_cms_err(409, "site_limit_reached", "conflict",
                     "The workspace's plan allows no more sites"),
    ngx_http_cms_err(409, "workspace_site_limit", "conflict",
                     "The workspace already has its site"),
    ngx_http_cms_err(409, "webhook_limit_reached", "conflict",
                     "The workspace's plan allows no more webhook endpoints"),
    ngx_http_cms_err(400, "invalid_current_password", "validation_error",
                     "current_password is not the account's password"),
    ngx_http_cms_err(400, "invalid_account_token", "validation_error",
                     "The link is unknown, used, superseded or expired"),

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
    ngx_http_cms_err(416, "range_not_satisfiable", "invalid_request",
                     "The Range asks for no byte of the file"),

    /* the video provider */
    ngx_http_cms_err(501, "not_configured", "not_configured",
                     "No video provider is configured"),
    ngx_http_cms_err(502, "provider_error", "bad_gateway",
                     "The video provider refused the request or answered "
                     "badly"),
    ngx_http_cms_err(503, "provider_unavailable", "service_unavailable",
                     "The video provider is unreachable; retry later"),

    /* operations */
    ngx_http_cms_err(503, "schema_out_of_date", "service_unavailable",
                     "The database's schema is older than this server "
                     "needs; retry once it is migrated"),
    ngx_http_cms_err(403, "signup_disabled", "forbidden",
                     "Sign-up is turned off on this server; ask an "
                     "administrator for an account"),
    ngx_http_cms_err(403, "invitation_required", "forbidden",
                     "Sign-up on this server needs an invitation"),
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


ngx_int_t
ngx_http_cms_outbound_resolve(ngx_http_request_t *r, ngx_str_t *host)
{
    if (ngx_http_cms_resolve_start(r->pool, r->connection->log, host,
                                   ngx_http_cms_outbound_resolved, r)
        == NULL)
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_UNAVAILABLE, NULL);
    }

    return NGX_DONE;
}


/* every address the host has must be allowed */
static void
ngx_http_cms_outbound_resolved(void *data, ngx_int_t rc, ngx_addr_t *addrs,
    ngx_uint_t naddrs)
{
    ngx_http_request_t       *r = data;
    ngx_connection_t         *c;
    ngx_http_cms_ctx_t       *ctx;
    ngx_http_cms_outbound_t  *o;

    c = r->connection;
    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);
    o = ctx->data;

    if (rc == NGX_OK) {
        rc = ngx_http_cms_outbound_all_allowed(addrs, naddrs,
                                               o->loopback_only);
    }

    if (rc == NGX_OK) {
        rc = o->next(r, ctx);

    } else if (rc == NGX_DECLINED) {
        rc = ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_URL, o->param,
                                   o->message);

    } else {
        rc = ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_UNAVAILABLE, NULL);
    }

    ctx->finish(r, rc);
    ngx_http_run_posted_requests(c);
}


ngx_int_t
ngx_http_cms_fail_copy(ngx_http_request_t *r, ngx_uint_t code,
    const char *param, const char *message)
{
    u_char  *p, *m;
    size_t   n;

    n = ngx_strlen(param) + 1;
    p = ngx_pnalloc(r->pool, n + ngx_strlen(message) + 1);
    if (p == NULL) {
        return NGX_ERROR;
    }

    m = ngx_cpymem(p, param, n);
    ngx_memcpy(m, message, ngx_strlen(message) + 1);

    return ngx_http_cms_fail_msg(r, code, (char *) p, (char *) m);
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


ngx_http_cms_shape_e
ngx_http_cms_error_shape(ngx_str_t *uri)
{
    static ngx_str_t  ext = ngx_string("/v1/ext");

    /* "/v1/ext..." covers both /v1/ext/ and /v1/extensions */
    if (uri->len >= ext.len
        && ngx_strncmp(uri->data, ext.data, ext.len) == 0
        && (uri->len == ext.len || uri->data[ext.len] == '/'
            || ngx_strncmp(uri->data + ext.len, "ensions",
                           ngx_min(uri->len - ext.len, 7)) == 0))
    {
        return NGX_HTTP_CMS_SHAPE_EXT;
    }

    return NGX_HTTP_CMS_SHAPE_CONTENT;
}


/* the database's answers */

ngx_int_t
ngx_http_cms_error_check(ngx_http_request_t *r, PGresult *res,
    ExecStatusType expect)
{
    char        *state, *msg;
    size_t       len;
    ngx_uint_t   code;

    if (res == NULL) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_UNAVAILABLE, NULL);
    }

    if (PQresultStatus(res) == expect) {
        return NGX_OK;
    }

    state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
    msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

    code = ngx_http_cms_error_sqlstate(state, msg);

    if (code != NGX_HTTP_CMS_ERR_NONE) {
        return ngx_http_cms_error_refused(r, res, code);
    }

    if (ngx_http_cms_error_schema(state)) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_SCHEMA_OUT_OF_DATE,
                                 NULL);
    }

    /* data exceptions: a client's value the checks let through */
    if (state != NULL && state[0] == '2' && state[1] == '2') {
        /* the server's message may quote the value: 48 bytes of it */
        len = msg ? ngx_min(ngx_strlen(msg), 48) : 0;

        ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                      "cms: a value reached the database unchecked: %*s "
                      "(SQLSTATE %s)", len, msg ? msg : "", state);
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_REQUEST, NULL);
    }

    ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                  "cms: query failed: %s (%s, SQLSTATE %s)",
                  msg ? msg : "", PQresStatus(PQresultStatus(res)),
                  state ? state : "none");

    return NGX_ERROR;
}


/* a relation, column or function the database lacks: a schema behind
   the module's, unless it is known to be current */
static ngx_uint_t
ngx_http_cms_error_schema(const char *state)
{
    return state != NULL
           && (ngx_strcmp(state, "42P01") == 0
               || ngx_strcmp(state, "42703") == 0
               || ngx_strcmp(state, "42883") == 0)
           && ngx_http_cms_schema_suspect() == NGX_OK;
}


/* what a client did wrong, told by the server: an API error code */
static ngx_uint_t
ngx_http_cms_error_sqlstate(const char *state, const char *msg)
{
    if (state == NULL) {
        return NGX_HTTP_CMS_ERR_NONE;
    }

    /* raised by cms_raise() in sql/ with the API's code as the message */
    if (ngx_strcmp(state, "P0001") == 0 && msg != NULL) {
        return ngx_http_cms_error_find(msg);
    }

    if (ngx_strcmp(state, "23505") == 0) {
        return NGX_HTTP_CMS_ERR_CONFLICT;
    }

    /* a date-time the server cannot read, a reference that is not there */
    if (ngx_strcmp(state, "22007") == 0 || ngx_strcmp(state, "22008") == 0
        || ngx_strcmp(state, "23503") == 0)
    {
        return NGX_HTTP_CMS_ERR_INVALID_FIELD;
    }

    return NGX_HTTP_CMS_ERR_NONE;
}


/*
 * unique constraints whose violation is a named error on a field; the
 * message, when set, says what the key's scope is where the catalogue's
 * text ("in this language") would not fit
 */
typedef struct {
    const char  *constraint;
    ngx_uint_t   code;
    const char  *param;
    const char  *message;
} ngx_http_cms_unique_t;

static ngx_http_cms_unique_t  ngx_http_cms_error_unique[] = {
    { "users_email_key", NGX_HTTP_CMS_ERR_EMAIL_TAKEN, "email", NULL },
    { "categories_slug_key", NGX_HTTP_CMS_ERR_SLUG_TAKEN, "slug", NULL },
    { "articles_slug_key", NGX_HTTP_CMS_ERR_SLUG_TAKEN, "slug", NULL },
    { "podcast_shows_slug_key", NGX_HTTP_CMS_ERR_SLUG_TAKEN, "slug", NULL },
    { "custom_modules_slug_key", NGX_HTTP_CMS_ERR_MODULE_SLUG_TAKEN,
      "slug", NULL },
    { "videos_slug_key", NGX_HTTP_CMS_ERR_SLUG_TAKEN, "slug", NULL },
    { "sites_workspace_key", NGX_HTTP_CMS_ERR_WORKSPACE_SITE_LIMIT, NULL,
      NULL },
    /* a page's slug is its site's path: pages have no language */
    { "pages_slug_key", NGX_HTTP_CMS_ERR_SLUG_TAKEN, "slug",
      "The slug is taken on this site" },
};

#define NGX_HTTP_CMS_UNIQUE_N                                                 \
    (sizeof(ngx_http_cms_error_unique) / sizeof(ngx_http_cms_unique_t))


/* records "code" with the field the server named; results die early */
static ngx_int_t
ngx_http_cms_error_refused(ngx_http_request_t *r, PGresult *res,
    ngx_uint_t code)
{
    char                   *field, *param;
    size_t                  len;
    ngx_uint_t              i;
    ngx_http_cms_unique_t  *u;

    field = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);

    if (code == NGX_HTTP_CMS_ERR_CONFLICT) {
        field = PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME);

        for (i = 0; field && i < NGX_HTTP_CMS_UNIQUE_N; i++) {
            u = &ngx_http_cms_error_unique[i];

            if (ngx_strcmp(field, u->constraint) == 0) {
                return ngx_http_cms_fail_msg(r, u->code, u->param,
                                             u->message);
            }
        }

        field = NULL;
    }

    param = NULL;
    len = field ? ngx_strlen(field) : 0;

    if (len && len < 64) {
        param = ngx_pnalloc(r->pool, len + 1);
        if (param == NULL) {
            return NGX_ERROR;
        }

        ngx_memcpy(param, field, len + 1);
    }

    ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                  "cms: refused by the database: %s",
                  ngx_http_cms_error_get(code)->code.data);

    return ngx_http_cms_fail(r, code, param);
}
