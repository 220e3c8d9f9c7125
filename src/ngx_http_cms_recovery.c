
/*
 * Account recovery and email verification, without a credential:
 *
 *   POST /v1/auth/password-reset           {email}             204
 *   POST /v1/auth/password-reset/confirm   {token, new_password} 204
 *   POST /v1/auth/verify-email/request     {email}             204
 *   POST /v1/auth/verify-email             {token}             204
 *
 * A request answers 204 whatever the address (no account, inactive,
 * already verified, asked a moment ago: nothing tells them apart).  Its
 * token (src/lib/cms_token.h, kind "pwr" or "vfy") is never stored: the
 * row keeps the token's keyed hash, and the token's random part is made
 * from the row's id (cms_token_random_for), so the mailer that holds
 * cms_secret makes the link again from the account_outbox row
 * (sql/0019_account_recovery.sql; cms-admin account-mail).  A confirmation
 * checks the token's MAC and expiry before any query, then uses the token
 * once in the database; a reset ends every session of the account.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_json.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_password.h"
#include "ngx_http_cms_pg.h"
#include "cms_fields.h"
#include "cms_password.h"
#include "cms_token.h"
#include "cms_uuid.h"
#include "cms_validate.h"


#define NGX_HTTP_CMS_RESET_KIND    "pwr"
#define NGX_HTTP_CMS_VERIFY_KIND   "vfy"
#define NGX_HTTP_CMS_RESET_TTL     3600         /* a reset link: 1 hour */
#define NGX_HTTP_CMS_VERIFY_TTL    86400        /* a verification: 1 day */


static ngx_int_t ngx_http_cms_recovery_reset(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_recovery_verify_request(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_recovery_request(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, const char *kind, time_t ttl);
static ngx_int_t ngx_http_cms_recovery_requested(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_recovery_confirm(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_recovery_hashed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t ok, ngx_str_t *encoded);
static ngx_int_t ngx_http_cms_recovery_verify(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_recovery_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_recovery_check(ngx_http_request_t *r,
    const char *kind, ngx_str_t *token, ngx_str_t *hex);


/* {email}: $1 */
static const cms_field_t  ngx_http_cms_recovery_email_fields[] = {
    { "email", CMS_FIELD_STRING, CMS_FIELD_REQUIRED, 1,
      NGX_HTTP_CMS_ERR_EMAIL_REQUIRED, 0, 0, 254, NULL, cms_email_valid,
      NGX_HTTP_CMS_ERR_INVALID_EMAIL, NULL },
    cms_fields_end
};

/* {token, new_password}: $1, $2; the verification reads {token} alone */
#define NGX_HTTP_CMS_RECOVERY_TOKEN                                          \
    { "token", CMS_FIELD_STRING, CMS_FIELD_REQUIRED, 1,                      \
      NGX_HTTP_CMS_ERR_INVALID_REQUEST, 0, 0, CMS_TOKEN_MAX_LEN,             \
      NULL, NULL, 0, NULL }

static const cms_field_t  ngx_http_cms_recovery_reset_fields[] = {
    NGX_HTTP_CMS_RECOVERY_TOKEN,
    { "new_password", CMS_FIELD_STRING, CMS_FIELD_REQUIRED, 2,
      NGX_HTTP_CMS_ERR_INVALID_REQUEST, 0, 0, CMS_PASSWORD_MAX_LEN,
      NULL, ngx_http_cms_password_long_enough,
      NGX_HTTP_CMS_ERR_PASSWORD_TOO_SHORT, NULL },
    cms_fields_end
};

static const cms_field_t  ngx_http_cms_recovery_verify_fields[] = {
    NGX_HTTP_CMS_RECOVERY_TOKEN,
    cms_fields_end
};

#define ngx_http_cms_recovery_input(fields)                                  \
    { fields, NULL,                                                          \
      NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,      \
      NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD }

static const cms_fields_t  ngx_http_cms_recovery_email_input =
    ngx_http_cms_recovery_input(ngx_http_cms_recovery_email_fields);

static const cms_fields_t  ngx_http_cms_recovery_reset_input =
    ngx_http_cms_recovery_input(ngx_http_cms_recovery_reset_fields);

static const cms_fields_t  ngx_http_cms_recovery_verify_input =
    ngx_http_cms_recovery_input(ngx_http_cms_recovery_verify_fields);


/*
 * $1 email, $2 kind, $3 the row's id, $4 the token's hash (hex), $5 its
 * expiry; true whether or not it applied (the answer is the same)
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_recovery_request_sql =
    ngx_http_cms_pg_stmt(
        "SELECT cms_account_token_request($1, $2, $3::uuid,"
        " decode($4, 'hex'), to_timestamp($5::bigint)) IS NOT NULL", 5);

/* $1 the token's hash (hex), $2 the new password's hash */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_recovery_reset_sql =
    ngx_http_cms_pg_stmt(
        "SELECT cms_account_password_reset(decode($1, 'hex'), $2)", 2);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_recovery_verify_sql =
    ngx_http_cms_pg_stmt(
        "SELECT cms_account_email_verify(decode($1, 'hex'))", 1);


ngx_http_cms_route_t  ngx_http_cms_recovery_routes[] = {

    { NGX_HTTP_POST, ngx_string("/auth/password-reset"),
      NGX_HTTP_CMS_AUTH_NONE, 0, ngx_http_cms_recovery_reset, NULL, NULL, 0 },

    { NGX_HTTP_POST, ngx_string("/auth/password-reset/confirm"),
      NGX_HTTP_CMS_AUTH_NONE, 0, ngx_http_cms_recovery_confirm, NULL, NULL,
      0 },

    { NGX_HTTP_POST, ngx_string("/auth/verify-email/request"),
      NGX_HTTP_CMS_AUTH_NONE, 0, ngx_http_cms_recovery_verify_request, NULL,
      NULL, 0 },

    { NGX_HTTP_POST, ngx_string("/auth/verify-email"),
      NGX_HTTP_CMS_AUTH_NONE, 0, ngx_http_cms_recovery_verify, NULL, NULL,
      0 },

    ngx_http_cms_null_route
};


static ngx_int_t
ngx_http_cms_recovery_reset(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_recovery_request(r, ctx, NGX_HTTP_CMS_RESET_KIND,
                                         NGX_HTTP_CMS_RESET_TTL);
}


static ngx_int_t
ngx_http_cms_recovery_verify_request(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_recovery_request(r, ctx, NGX_HTTP_CMS_VERIFY_KIND,
                                         NGX_HTTP_CMS_VERIFY_TTL);
}


/* a new row id, the token made from it, its hash; stored if it applies */
static ngx_int_t
ngx_http_cms_recovery_request(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    const char *kind, time_t ttl)
{
    time_t     expires;
    ngx_int_t  rc;
    ngx_str_t  args[5], token;
    u_char     rnd[CMS_UUID7_RAND_LEN];

    rc = ngx_http_cms_json_read(r, ctx->body,
                                &ngx_http_cms_recovery_email_input,
                                CMS_FIELDS_CREATE, args, 1);
    if (rc != NGX_OK) {
        return rc;
    }

    expires = ngx_time() + ttl;

    args[1].data = (u_char *) kind;
    args[1].len = ngx_strlen(kind);
    args[2].data = ngx_pnalloc(r->pool, CMS_UUID_LEN);
    args[4].data = ngx_pnalloc(r->pool, NGX_TIME_T_LEN);

    if (args[2].data == NULL || args[4].data == NULL
        || ngx_http_cms_crypto_random(rnd, sizeof(rnd)) != NGX_OK)
    {
        return NGX_ERROR;
    }

    cms_uuid7_format((uint64_t) ngx_time() * 1000, rnd, (char *) args[2].data);
    args[2].len = CMS_UUID_LEN;
    args[4].len = ngx_sprintf(args[4].data, "%T", expires) - args[4].data;

    /* only the hash is stored; the mailer makes the token again */
    if (ngx_http_cms_crypto_token_make(r, kind, expires, &args[2], &token,
                                       &args[3])
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    ngx_explicit_memzero(token.data, token.len);

    return ngx_http_cms_pg_query(r, &ngx_http_cms_recovery_request_sql, args,
                                 5, ngx_http_cms_recovery_requested);
}


/* whatever the database decided: nothing tells an address apart */
static ngx_int_t
ngx_http_cms_recovery_requested(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    return ngx_http_cms_send_done(r, res, NGX_HTTP_CMS_ERR_INTERNAL, NULL);
}


/* reset: the token checked, the new password hashed, both written */
static ngx_int_t
ngx_http_cms_recovery_confirm(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t   rc;
    ngx_str_t   args[2], *keep;

    rc = ngx_http_cms_json_read(r, ctx->body,
                                &ngx_http_cms_recovery_reset_input,
                                CMS_FIELDS_CREATE, args, 2);
    if (rc != NGX_OK) {
        return rc;
    }

    keep = ngx_palloc(r->pool, sizeof(ngx_str_t));
    if (keep == NULL) {
        return NGX_ERROR;
    }

    rc = ngx_http_cms_recovery_check(r, NGX_HTTP_CMS_RESET_KIND, &args[0],
                                     keep);
    if (rc != NGX_OK) {
        return rc;
    }

    ctx->data = keep;

    return ngx_http_cms_password_hash(r, &args[1],
                                      ngx_http_cms_recovery_hashed);
}


static ngx_int_t
ngx_http_cms_recovery_hashed(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_uint_t ok, ngx_str_t *encoded)
{
    ngx_str_t  args[2];

    if (!ok) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: password hashing failed");
        return NGX_ERROR;
    }

    args[0] = *(ngx_str_t *) ctx->data;
    args[1] = *encoded;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_recovery_reset_sql, args,
                                 2, ngx_http_cms_recovery_done);
}


static ngx_int_t
ngx_http_cms_recovery_verify(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[1], hex;

    rc = ngx_http_cms_json_read(r, ctx->body,
                                &ngx_http_cms_recovery_verify_input,
                                CMS_FIELDS_CREATE, args, 1);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_cms_recovery_check(r, NGX_HTTP_CMS_VERIFY_KIND, &args[0],
                                     &hex);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_recovery_verify_sql, &hex,
                                 1, ngx_http_cms_recovery_done);
}


/* true: the token was open and is used now */
static ngx_int_t
ngx_http_cms_recovery_done(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    return ngx_http_cms_send_done(r, res,
                                  NGX_HTTP_CMS_ERR_INVALID_ACCOUNT_TOKEN,
                                  "token");
}


/* a forged, altered, expired or other-kind token: refused before a query */
static ngx_int_t
ngx_http_cms_recovery_check(ngx_http_request_t *r, const char *kind,
    ngx_str_t *token, ngx_str_t *hex)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_crypto_token_check(r, kind, token, hex);

    return (rc == NGX_DECLINED)
           ? ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_ACCOUNT_TOKEN,
                               "token")
           : rc;
}
