
/*
 * Error catalogue: every error the API can answer, its status, its code in
 * the content shape and its type in the extension shape.
 */


#ifndef _NGX_HTTP_CMS_ERROR_H_INCLUDED_
#define _NGX_HTTP_CMS_ERROR_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <libpq-fe.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_resolve.h"


/* nginx 1.22 has no constant for 422 */
#define NGX_HTTP_CMS_UNPROCESSABLE     422


typedef enum {
    NGX_HTTP_CMS_ERR_NONE = 0,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST,
    NGX_HTTP_CMS_ERR_INVALID_JSON,
    NGX_HTTP_CMS_ERR_BODY_REQUIRED,
    NGX_HTTP_CMS_ERR_TOO_DEEP,
    NGX_HTTP_CMS_ERR_VALIDATION,
    NGX_HTTP_CMS_ERR_UNAUTHORIZED,
    NGX_HTTP_CMS_ERR_FORBIDDEN,
    NGX_HTTP_CMS_ERR_NOT_FOUND,
    NGX_HTTP_CMS_ERR_METHOD_NOT_ALLOWED,
    NGX_HTTP_CMS_ERR_CONFLICT,
    NGX_HTTP_CMS_ERR_PAYLOAD_TOO_LARGE,
    NGX_HTTP_CMS_ERR_UNSUPPORTED_MEDIA_TYPE,
    NGX_HTTP_CMS_ERR_RATE_LIMITED,
    NGX_HTTP_CMS_ERR_INTERNAL,
    NGX_HTTP_CMS_ERR_UNAVAILABLE,

    /* identity */
    NGX_HTTP_CMS_ERR_MISSING_TOKEN,
    NGX_HTTP_CMS_ERR_INVALID_TOKEN,
    NGX_HTTP_CMS_ERR_INVALID_API_KEY,
    NGX_HTTP_CMS_ERR_INVALID_CREDENTIALS,
    NGX_HTTP_CMS_ERR_MISSING_SCOPE,
    NGX_HTTP_CMS_ERR_NOT_MEMBER,
    NGX_HTTP_CMS_ERR_WORKSPACE_SUSPENDED,
    NGX_HTTP_CMS_ERR_ACCOUNT_INACTIVE,
    NGX_HTTP_CMS_ERR_EMAIL_NOT_VERIFIED,
    NGX_HTTP_CMS_ERR_EMAIL_REQUIRED,
    NGX_HTTP_CMS_ERR_INVALID_EMAIL,
    NGX_HTTP_CMS_ERR_PASSWORD_TOO_SHORT,
    NGX_HTTP_CMS_ERR_EMAIL_TAKEN,
    NGX_HTTP_CMS_ERR_NAME_REQUIRED,
    NGX_HTTP_CMS_ERR_INVALID_SCOPE,
    NGX_HTTP_CMS_ERR_INVALID_FIELD,
    NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,

    /* content */
    NGX_HTTP_CMS_ERR_TITLE_REQUIRED,
    NGX_HTTP_CMS_ERR_INVALID_SLUG,
    NGX_HTTP_CMS_ERR_INVALID_STATUS,
    NGX_HTTP_CMS_ERR_SLUG_TAKEN,
    NGX_HTTP_CMS_ERR_CANNOT_PUBLISH,
    NGX_HTTP_CMS_ERR_CANNOT_EDIT_LIVE,
    NGX_HTTP_CMS_ERR_CONTENT_TOO_LARGE,
    NGX_HTTP_CMS_ERR_INVALID_URL,

    /* comments, podcasts, subscribers */
    NGX_HTTP_CMS_ERR_CONTENT_REQUIRED,
    NGX_HTTP_CMS_ERR_COMMENT_TOO_LONG,
    NGX_HTTP_CMS_ERR_ID_REQUIRED,
    NGX_HTTP_CMS_ERR_URL_REQUIRED,
    NGX_HTTP_CMS_ERR_INVALID_UNSUBSCRIBE,

    /* custom modules, pages */
    NGX_HTTP_CMS_ERR_SLUG_REQUIRED,
    NGX_HTTP_CMS_ERR_MODULE_SLUG_TAKEN,
    NGX_HTTP_CMS_ERR_MODULE_DISABLED,
    NGX_HTTP_CMS_ERR_MODULE_NOT_ALLOWED,
    NGX_HTTP_CMS_ERR_SECTION_KEY_REQUIRED,

    /* extensions */
    NGX_HTTP_CMS_ERR_EXT_VALIDATION,
    NGX_HTTP_CMS_ERR_INVALID_STATE,
    NGX_HTTP_CMS_ERR_IDEMPOTENCY_CONFLICT,
    NGX_HTTP_CMS_ERR_IDEMPOTENCY_IN_PROGRESS,
    NGX_HTTP_CMS_ERR_IDEMPOTENCY_KEY,

    /* teams and plans */
    NGX_HTTP_CMS_ERR_INVALID_ROLE,
    NGX_HTTP_CMS_ERR_ALREADY_MEMBER,
    NGX_HTTP_CMS_ERR_MEMBER_LIMIT_REACHED,
    NGX_HTTP_CMS_ERR_LAST_OWNER,
    NGX_HTTP_CMS_ERR_INVALID_INVITATION,
    NGX_HTTP_CMS_ERR_INVITATION_EMAIL_MISMATCH,
    NGX_HTTP_CMS_ERR_STORAGE_LIMIT_EXCEEDED,
    NGX_HTTP_CMS_ERR_UPLOAD_TOO_LARGE,
    NGX_HTTP_CMS_ERR_AVATAR_TOO_LARGE,
    NGX_HTTP_CMS_ERR_SITE_LIMIT_REACHED,
    NGX_HTTP_CMS_ERR_WORKSPACE_SITE_LIMIT,
    NGX_HTTP_CMS_ERR_WEBHOOK_LIMIT_REACHED,
    NGX_HTTP_CMS_ERR_INVALID_CURRENT_PASSWORD,
    NGX_HTTP_CMS_ERR_INVALID_ACCOUNT_TOKEN,

    /* nginx's own answers */
    NGX_HTTP_CMS_ERR_REQUEST_TIMEOUT,
    NGX_HTTP_CMS_ERR_LENGTH_REQUIRED,
    NGX_HTTP_CMS_ERR_URI_TOO_LONG,
    NGX_HTTP_CMS_ERR_NOT_IMPLEMENTED,
    NGX_HTTP_CMS_ERR_BAD_GATEWAY,
    NGX_HTTP_CMS_ERR_GATEWAY_TIMEOUT,
    NGX_HTTP_CMS_ERR_VERSION_NOT_SUPPORTED,
    NGX_HTTP_CMS_ERR_RANGE_NOT_SATISFIABLE,

    /* the video provider (after nginx's own: a bare 501 or 502 is those) */
    NGX_HTTP_CMS_ERR_NOT_CONFIGURED,
    NGX_HTTP_CMS_ERR_PROVIDER_ERROR,
    NGX_HTTP_CMS_ERR_PROVIDER_UNAVAILABLE,

    /* operations */
    NGX_HTTP_CMS_ERR_SCHEMA_OUT_OF_DATE,
    NGX_HTTP_CMS_ERR_SIGNUP_DISABLED,
    NGX_HTTP_CMS_ERR_INVITATION_REQUIRED,

    NGX_HTTP_CMS_ERR_LAST
} ngx_http_cms_err_e;


typedef struct {
    ngx_uint_t                  status;
    ngx_str_t                   code;          /* content shape "code" */
    ngx_str_t                   type;          /* extension shape "type" */
    ngx_str_t                   message;
    ngx_uint_t                  states_rule;   /* message over a field's */
} ngx_http_cms_error_t;


/*
 * Records error "code" (and the offending field, may be NULL) in the
 * request context and returns the catalogue's status for it, so a handler
 * writes "return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_X, NULL);".
 */
ngx_int_t ngx_http_cms_fail(ngx_http_request_t *r, ngx_uint_t code,
    const char *param);

/* Same, with a message that replaces the catalogue's default text. */
ngx_int_t ngx_http_cms_fail_msg(ngx_http_request_t *r, ngx_uint_t code,
    const char *param, const char *message);

/*
 * Same, with "param" and "message" (a field's name and a sentence naming
 * it, from a validator's buffer) copied into r->pool first.
 */
ngx_int_t ngx_http_cms_fail_copy(ngx_http_request_t *r, ngx_uint_t code,
    const char *param, const char *message);

/*
 * A request's outbound host check (a site's origin, a webhook's URL): the
 * first member of what ctx->data points to while the host resolves.
 */
typedef struct {
    ngx_http_cms_handler_pt     next;           /* run once it passed */
    ngx_uint_t                  loopback_only;  /* plain http */
    const char                 *param;          /* the field refused */
    const char                 *message;
} ngx_http_cms_outbound_t;

/*
 * Starts resolving "host" for the check in ctx->data: once every address
 * passes ngx_http_cms_outbound_all_allowed() it runs next(r, ctx); no
 * address or one refused records invalid_url (param, message); a resolver
 * failure records 503 unavailable; the outcome then goes to ctx->finish().
 * Returns NGX_DONE, or 503 unavailable recorded when no resolution can
 * start (no resolver configured).
 */
ngx_int_t ngx_http_cms_outbound_resolve(ngx_http_request_t *r,
    ngx_str_t *host);

/* The catalogue entry for "code"; unknown codes give the internal error. */
const ngx_http_cms_error_t *ngx_http_cms_error_get(ngx_uint_t code);

/*
 * The entry whose content-shape code is "code" (as a SQL function raises
 * it), or NGX_HTTP_CMS_ERR_NONE.
 */
ngx_uint_t ngx_http_cms_error_find(const char *code);

/* The generic code for an HTTP status when a handler named none. */
ngx_uint_t ngx_http_cms_error_for_status(ngx_uint_t status);


/*
 * Checks a query's result.  Returns NGX_OK when "res" has status
 * "expect"; 503 when res is NULL (no answer came); the API's code for
 * what the server refused (a unique violation -> 409 with the resource's
 * code, cms_raise() codes, bad dates, missing references, other data
 * exceptions -> 400), recorded; NGX_ERROR otherwise, with the server's
 * message logged.
 */
ngx_int_t ngx_http_cms_error_check(ngx_http_request_t *r, PGresult *res,
    ExecStatusType expect);

/*
 * The error shape a path answers with: the extension routes (/v1/ext,
 * /v1/extensions) their own, every other path the content API's.
 */
ngx_http_cms_shape_e ngx_http_cms_error_shape(ngx_str_t *uri);


#endif /* _NGX_HTTP_CMS_ERROR_H_INCLUDED_ */
