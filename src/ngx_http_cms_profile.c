
/*
 * The caller's own account: PATCH /v1/me (the name) and
 * POST /v1/me/password (the current password, then a new one; every other
 * session ends).  GET /v1/me is _accounts.c's.
 *
 * A password change moves users.session_gen: every session signed with
 * the old generation is refused from the next request on (_auth.c
 * compares the token's "gen" claim), and the answer carries a new session
 * for the caller, as login does.  The current password is checked like a
 * login (the login throttle, keyed by the user id, then argon2 in the
 * thread pool), and the new hash is written only if the stored one is
 * still the one checked.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_json.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_auth.h"
#include "ngx_http_cms_password.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_ratelimit.h"
#include "cms_fields.h"
#include "cms_password.h"


/* what a password change carries between its steps */
typedef struct {
    ngx_str_t                   current;
    ngx_str_t                   fresh;
    ngx_str_t                   stored;      /* the hash checked */
} ngx_http_cms_profile_pw_t;


static ngx_int_t ngx_http_cms_profile_update(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_profile_updated(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_profile_password(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_profile_find(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_profile_found(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_profile_checked(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t ok, ngx_str_t *encoded);
static ngx_int_t ngx_http_cms_profile_hashed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t ok, ngx_str_t *encoded);
static ngx_int_t ngx_http_cms_profile_changed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);


/* PATCH /me: $2 name; what the user record shows besides is ignored */
static const char *const  ngx_http_cms_profile_ignored[] = {
    "id", "email", "email_verified", "created_at", "updated_at", NULL
};

static const cms_field_t  ngx_http_cms_profile_fields[] = {
    { "name", CMS_FIELD_STRING, 0, 2, 0, 0, 0, 200, NULL, NULL, 0, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_profile_input = {
    ngx_http_cms_profile_fields, ngx_http_cms_profile_ignored,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};

/* POST /me/password: $1 current_password, $2 new_password */
static const cms_field_t  ngx_http_cms_profile_pw_fields[] = {
    { "current_password", CMS_FIELD_STRING, CMS_FIELD_REQUIRED, 1,
      NGX_HTTP_CMS_ERR_INVALID_REQUEST, 0, 0, CMS_PASSWORD_MAX_LEN,
      NULL, NULL, 0, NULL },
    { "new_password", CMS_FIELD_STRING, CMS_FIELD_REQUIRED, 2,
      NGX_HTTP_CMS_ERR_INVALID_REQUEST, 0, 0, CMS_PASSWORD_MAX_LEN,
      NULL, ngx_http_cms_password_long_enough,
      NGX_HTTP_CMS_ERR_PASSWORD_TOO_SHORT, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_profile_pw_input = {
    ngx_http_cms_profile_pw_fields, NULL,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};


/* $1 user, $2 name (NULL: unchanged) */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_profile_update_sql =
    ngx_http_cms_pg_stmt(
        "UPDATE users SET name = coalesce($2, name), updated_at = now()"
        " WHERE id = $1 RETURNING cms_user_json(users)::text",
        2);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_profile_hash_sql =
    ngx_http_cms_pg_stmt(
        "SELECT password_hash FROM users WHERE id = $1 AND active", 1);

/* $1 user, $2 the hash checked, $3 the new hash: the new generation */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_profile_change_sql =
    ngx_http_cms_pg_stmt(
        "SELECT cms_user_password_change($1, $2, $3)", 3);


ngx_http_cms_route_t  ngx_http_cms_profile_routes[] = {

    { NGX_HTTP_PATCH, ngx_string("/me"), NGX_HTTP_CMS_AUTH_SESSION, 0,
      ngx_http_cms_profile_update, NULL, NULL, 0 },

    { NGX_HTTP_POST, ngx_string("/me/password"), NGX_HTTP_CMS_AUTH_SESSION,
      0, ngx_http_cms_profile_password, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


static ngx_int_t
ngx_http_cms_profile_update(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[2];

    rc = ngx_http_cms_json_read(r, ctx->body, &ngx_http_cms_profile_input,
                                CMS_FIELDS_PATCH, args, 2);
    if (rc != NGX_OK) {
        return rc;
    }

    args[0] = ctx->principal.user_id;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_profile_update_sql, args,
                                 2, ngx_http_cms_profile_updated);
}


static ngx_int_t
ngx_http_cms_profile_updated(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_send_wrapped(r, NGX_HTTP_OK, "user", res);
}


/* password: read, throttle, look up, verify, hash, write, new session */

static ngx_int_t
ngx_http_cms_profile_password(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t                   rc;
    ngx_str_t                   args[2];
    ngx_http_cms_profile_pw_t  *pw;

    pw = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_profile_pw_t));
    if (pw == NULL) {
        return NGX_ERROR;
    }

    rc = ngx_http_cms_json_read(r, ctx->body, &ngx_http_cms_profile_pw_input,
                                CMS_FIELDS_CREATE, args, 2);
    if (rc != NGX_OK) {
        return rc;
    }

    pw->current = args[0];
    pw->fresh = args[1];
    ctx->data = pw;

    /* guessing the current password is a login: the same throttle */
    return ngx_http_cms_ratelimit_throttle(r, ctx, 0, &ctx->principal.user_id,
                                           ngx_http_cms_profile_find);
}


static ngx_int_t
ngx_http_cms_profile_find(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_password_reserve(r);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_profile_hash_sql,
                                 &ctx->principal.user_id, 1,
                                 ngx_http_cms_profile_found);
}


static ngx_int_t
ngx_http_cms_profile_found(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t                   rc;
    ngx_http_cms_profile_pw_t  *pw;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    if (PQntuples(res) != 1) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_TOKEN, NULL);
    }

    pw = ctx->data;

    /* kept for the write: the result dies when this returns */
    pw->stored.len = PQgetlength(res, 0, 0);
    pw->stored.data = ngx_pnalloc(r->pool, pw->stored.len + 1);
    if (pw->stored.data == NULL) {
        return NGX_ERROR;
    }

    ngx_memcpy(pw->stored.data, PQgetvalue(res, 0, 0), pw->stored.len + 1);

    return ngx_http_cms_password_verify(r, &pw->current, &pw->stored,
                                        ngx_http_cms_profile_checked);
}


static ngx_int_t
ngx_http_cms_profile_checked(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_uint_t ok, ngx_str_t *encoded)
{
    ngx_http_cms_profile_pw_t  *pw;

    if (!ok) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_CURRENT_PASSWORD,
                                 "current_password");
    }

    pw = ctx->data;

    return ngx_http_cms_password_hash(r, &pw->fresh,
                                      ngx_http_cms_profile_hashed);
}


static ngx_int_t
ngx_http_cms_profile_hashed(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_uint_t ok, ngx_str_t *encoded)
{
    ngx_str_t                   args[3];
    ngx_http_cms_profile_pw_t  *pw;

    if (!ok) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: password hashing failed");
        return NGX_ERROR;
    }

    pw = ctx->data;

    args[0] = ctx->principal.user_id;
    args[1] = pw->stored;
    args[2] = *encoded;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_profile_change_sql, args,
                                 3, ngx_http_cms_profile_changed);
}


/* {token, user}: the caller's new session, as login answers */
static ngx_int_t
ngx_http_cms_profile_changed(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    u_char     *p;
    ngx_int_t   rc, gen;
    ngx_str_t   token, body, *user;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    /* NULL: another change came first; this one checked a stale hash */
    if (PQntuples(res) != 1 || PQgetisnull(res, 0, 0)) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_CONFLICT, NULL);
    }

    gen = ngx_atoi((u_char *) PQgetvalue(res, 0, 0), PQgetlength(res, 0, 0));

    if (gen == NGX_ERROR
        || ngx_http_cms_auth_issue(r, &ctx->principal.user_id,
                                   (ngx_uint_t) gen, &token)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    user = &ctx->principal.user_json;

    body.len = sizeof("{\"token\":\"\",\"user\":}") - 1 + token.len
               + user->len;
    body.data = ngx_pnalloc(r->pool, body.len);
    if (body.data == NULL) {
        return NGX_ERROR;
    }

    p = ngx_sprintf(body.data, "{\"token\":\"%V\",\"user\":%V}", &token,
                    user);
    body.len = p - body.data;

    return ngx_http_cms_send(r, NGX_HTTP_OK, &body);
}

