
/*
 * Accounts and sessions: POST /v1/auth/signup, /v1/auth/login,
 * /v1/auth/logout and GET /v1/me.
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
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_password.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_ratelimit.h"
#include "ngx_http_cms_redis.h"
#include "cms_password.h"
#include "cms_validate.h"


/* what a login or signup carries between its steps */
typedef struct {
    ngx_str_t                   email;
    ngx_str_t                   password;
    ngx_str_t                   name;
    ngx_str_t                   invitation;  /* the token, or empty */
    ngx_str_t                   token_hash;  /* its hash, hex */
    ngx_str_t                   user_id;
    ngx_str_t                   user_json;
    ngx_uint_t                  gen;         /* users.session_gen */
    unsigned                    active:1;
    unsigned                    verified:1;
} ngx_http_cms_account_t;


static ngx_int_t ngx_http_cms_accounts_signup(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_accounts_hash(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_accounts_hashed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t ok, ngx_str_t *encoded);
static ngx_int_t ngx_http_cms_accounts_created(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_accounts_login(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_accounts_find(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_accounts_found(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_accounts_verified(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t ok, ngx_str_t *encoded);
static ngx_int_t ngx_http_cms_accounts_logout(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_accounts_logged_out(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, redisReply **replies, ngx_uint_t n);
static ngx_int_t ngx_http_cms_accounts_me(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_accounts_read(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t signup);
static ngx_int_t ngx_http_cms_accounts_session(ngx_http_request_t *r,
    ngx_http_cms_account_t *a, ngx_uint_t status);


/*
 * The bodies.  A login reads the same fields with no rule on their
 * values: a wrong one is only "invalid credentials".
 */
#define NGX_HTTP_CMS_ACCOUNT_FIELDS(email_check, password_check)             \
    { "email", CMS_FIELD_STRING, CMS_FIELD_REQUIRED, 1,                      \
      NGX_HTTP_CMS_ERR_EMAIL_REQUIRED, 0, 0, 254, NULL, email_check,         \
      NGX_HTTP_CMS_ERR_INVALID_EMAIL, NULL },                                \
    { "name", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 2, 0, 0, 0, 200,         \
      NULL, NULL, 0, NULL },                                                 \
    { "password", CMS_FIELD_STRING, CMS_FIELD_REQUIRED, 3,                   \
      NGX_HTTP_CMS_ERR_INVALID_REQUEST, 0, 0, CMS_PASSWORD_MAX_LEN,          \
      NULL, password_check, NGX_HTTP_CMS_ERR_PASSWORD_TOO_SHORT, NULL }

/* a signup may carry an invitation's token: the account joins its
   workspace at once (and with "cms_signup invite" must) */
static const cms_field_t  ngx_http_cms_accounts_signup_fields[] = {
    NGX_HTTP_CMS_ACCOUNT_FIELDS(cms_email_valid,
                                ngx_http_cms_password_long_enough),
    { .name = "invitation", .type = CMS_FIELD_STRING,
      .flags = CMS_FIELD_NULLABLE, .param = 4, .min = 1, .max = 512 },
    cms_fields_end
};

static const cms_field_t  ngx_http_cms_accounts_login_fields[] = {
    NGX_HTTP_CMS_ACCOUNT_FIELDS(NULL, NULL),
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_accounts_signup_input = {
    ngx_http_cms_accounts_signup_fields, NULL,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};

static const cms_fields_t  ngx_http_cms_accounts_login_input = {
    ngx_http_cms_accounts_login_fields, NULL,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};


static ngx_http_cms_pg_stmt_t  ngx_http_cms_accounts_insert_sql =
    ngx_http_cms_pg_stmt(
        "INSERT INTO users (email, name, password_hash)"
        " VALUES ($1, coalesce($2, ''), $3)"
        " ON CONFLICT ((lower(email))) DO NOTHING"
        " RETURNING id, cms_user_json(users)::text",
        3);

/* $4 the invitation token's hash (hex): the account and its membership
   in one transaction (sql/0038) */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_accounts_invited_sql =
    ngx_http_cms_pg_stmt(
        "SELECT id, user_json"
        " FROM cms_signup_invited($1, $2, $3, decode($4, 'hex'))",
        4);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_accounts_find_sql =
    ngx_http_cms_pg_stmt(
        "SELECT id, password_hash, active, email_verified,"
        " cms_user_json(users)::text, session_gen"
        " FROM users WHERE lower(email) = lower($1)",
        1);


ngx_http_cms_route_t  ngx_http_cms_accounts_routes[] = {

    { NGX_HTTP_POST, ngx_string("/auth/signup"), NGX_HTTP_CMS_AUTH_NONE, 0,
      ngx_http_cms_accounts_signup, NULL, NULL, 0 },

    { NGX_HTTP_POST, ngx_string("/auth/login"), NGX_HTTP_CMS_AUTH_NONE, 0,
      ngx_http_cms_accounts_login, NULL, NULL, 0 },

    { NGX_HTTP_POST, ngx_string("/auth/logout"), NGX_HTTP_CMS_AUTH_SESSION, 0,
      ngx_http_cms_accounts_logout, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/me"), NGX_HTTP_CMS_AUTH_SESSION, 0,
      ngx_http_cms_accounts_me, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


/* signup: validate, throttle, hash in the thread pool, insert, open a
   session */

static ngx_int_t
ngx_http_cms_accounts_signup(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t                  rc;
    ngx_http_cms_account_t    *a;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    if (mcf->signup == NGX_HTTP_CMS_SIGNUP_OFF) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_SIGNUP_DISABLED, NULL);
    }

    rc = ngx_http_cms_accounts_read(r, ctx, 1);
    if (rc != NGX_OK) {
        return rc;
    }

    a = ctx->data;

    if (a->invitation.len == 0) {
        if (mcf->signup == NGX_HTTP_CMS_SIGNUP_INVITE) {
            return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVITATION_REQUIRED,
                                     "invitation");
        }

    } else {
        /* a forged, altered or expired token: refused before any work */
        rc = ngx_http_cms_crypto_token_check(r, NGX_HTTP_CMS_INVITE_KIND,
                                             &a->invitation, &a->token_hash);
        if (rc != NGX_OK) {
            return (rc == NGX_DECLINED)
                   ? ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_INVITATION,
                                       "invitation")
                   : NGX_ERROR;
        }
    }

    /* before the hash: a throttled request costs no argon2 work */
    return ngx_http_cms_ratelimit_throttle(r, ctx, 1, &a->email,
                                           ngx_http_cms_accounts_hash);
}


static ngx_int_t
ngx_http_cms_accounts_hash(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_http_cms_account_t  *a;

    a = ctx->data;

    return ngx_http_cms_password_hash(r, &a->password,
                                      ngx_http_cms_accounts_hashed);
}


static ngx_int_t
ngx_http_cms_accounts_hashed(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_uint_t ok, ngx_str_t *encoded)
{
    ngx_str_t                args[4];
    ngx_http_cms_account_t  *a;

    if (!ok) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: password hashing failed");
        return NGX_ERROR;
    }

    a = ctx->data;

    args[0] = a->email;
    args[1] = a->name;
    args[2] = *encoded;
    args[3] = a->token_hash;

    if (a->token_hash.len) {
        return ngx_http_cms_pg_query(r, &ngx_http_cms_accounts_invited_sql,
                                     args, 4, ngx_http_cms_accounts_created);
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_accounts_insert_sql, args,
                                 3, ngx_http_cms_accounts_created);
}


static ngx_int_t
ngx_http_cms_accounts_created(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t                rc;
    ngx_http_cms_account_t  *a;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    if (PQntuples(res) == 0) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_EMAIL_TAKEN, "email");
    }

    a = ctx->data;

    a->user_id.data = (u_char *) PQgetvalue(res, 0, 0);
    a->user_id.len = PQgetlength(res, 0, 0);
    a->user_json.data = (u_char *) PQgetvalue(res, 0, 1);
    a->user_json.len = PQgetlength(res, 0, 1);

    /* the answer is written before the pool clears the result */
    return ngx_http_cms_accounts_session(r, a, NGX_HTTP_CREATED);
}


/* login: throttle, find, verify in the thread pool (also for unknown
   emails) */

static ngx_int_t
ngx_http_cms_accounts_login(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t                rc;
    ngx_http_cms_account_t  *a;

    rc = ngx_http_cms_accounts_read(r, ctx, 0);
    if (rc != NGX_OK) {
        return rc;
    }

    a = ctx->data;

    return ngx_http_cms_ratelimit_throttle(r, ctx, 0, &a->email,
                                           ngx_http_cms_accounts_find);
}


/* a place in the password queue first: a flood is refused before it
   costs a query */
static ngx_int_t
ngx_http_cms_accounts_find(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t                rc;
    ngx_http_cms_account_t  *a;

    rc = ngx_http_cms_password_reserve(r);
    if (rc != NGX_OK) {
        return rc;
    }

    a = ctx->data;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_accounts_find_sql,
                                 &a->email, 1, ngx_http_cms_accounts_found);
}


static ngx_int_t
ngx_http_cms_accounts_found(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t                rc;
    ngx_str_t                hash, *encoded;
    ngx_http_cms_account_t  *a;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    a = ctx->data;
    encoded = NULL;

    if (PQntuples(res) == 1) {
        hash.data = (u_char *) PQgetvalue(res, 0, 1);
        hash.len = PQgetlength(res, 0, 1);
        encoded = &hash;

        a->active = (PQgetvalue(res, 0, 2)[0] == 't');
        a->verified = (PQgetvalue(res, 0, 3)[0] == 't');
        a->gen = ngx_atoi((u_char *) PQgetvalue(res, 0, 5),
                          PQgetlength(res, 0, 5));

        a->user_id.len = PQgetlength(res, 0, 0);
        a->user_id.data = ngx_pnalloc(r->pool, a->user_id.len);
        a->user_json.len = PQgetlength(res, 0, 4);
        a->user_json.data = ngx_pnalloc(r->pool, a->user_json.len);

        if (a->user_id.data == NULL || a->user_json.data == NULL) {
            return NGX_ERROR;
        }

        ngx_memcpy(a->user_id.data, PQgetvalue(res, 0, 0), a->user_id.len);
        ngx_memcpy(a->user_json.data, PQgetvalue(res, 0, 4),
                   a->user_json.len);
    }

    /* the verify task copies "encoded" before the result is cleared */
    return ngx_http_cms_password_verify(r, &a->password, encoded,
                                        ngx_http_cms_accounts_verified);
}


static ngx_int_t
ngx_http_cms_accounts_verified(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_uint_t ok, ngx_str_t *encoded)
{
    ngx_http_cms_account_t    *a;
    ngx_http_cms_main_conf_t  *mcf;

    a = ctx->data;

    if (!ok || a->user_id.len == 0) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_CREDENTIALS,
                                 NULL);
    }

    /* said only to whoever knows the password */
    if (!a->active) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_ACCOUNT_INACTIVE, NULL);
    }

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    if (mcf->require_verified && !a->verified) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_EMAIL_NOT_VERIFIED,
                                 NULL);
    }

    return ngx_http_cms_accounts_session(r, a, NGX_HTTP_OK);
}


/* {token, user} and the cookie */
static ngx_int_t
ngx_http_cms_accounts_session(ngx_http_request_t *r,
    ngx_http_cms_account_t *a, ngx_uint_t status)
{
    u_char              *p;
    ngx_str_t            token, body;
    ngx_http_cms_ctx_t  *ctx;

    if (ngx_http_cms_auth_issue(r, &a->user_id, a->gen, &token) != NGX_OK) {
        return NGX_ERROR;
    }

    /* whose writes these are: the session's reads see them (replicas) */
    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);
    ctx->principal.user_id.len = a->user_id.len;
    ctx->principal.user_id.data = ngx_pstrdup(r->pool, &a->user_id);

    if (ctx->principal.user_id.data == NULL) {
        return NGX_ERROR;
    }

    body.len = sizeof("{\"token\":\"\",\"user\":}") - 1 + token.len
               + a->user_json.len;
    body.data = ngx_pnalloc(r->pool, body.len);

    if (body.data == NULL) {
        return NGX_ERROR;
    }

    p = ngx_sprintf(body.data, "{\"token\":\"%V\",\"user\":%V}", &token,
                    &a->user_json);
    body.len = p - body.data;

    return ngx_http_cms_send(r, status, &body);
}


/* the body of signup and login: $1 email, $2 name, $3 password, $4 a
   signup's invitation */
static ngx_int_t
ngx_http_cms_accounts_read(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_uint_t signup)
{
    ngx_int_t                rc;
    ngx_str_t                args[4];
    ngx_http_cms_account_t  *a;

    a = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_account_t));
    if (a == NULL) {
        return NGX_ERROR;
    }

    ctx->data = a;

    rc = ngx_http_cms_json_read(r, ctx->body,
                                signup ? &ngx_http_cms_accounts_signup_input
                                       : &ngx_http_cms_accounts_login_input,
                                CMS_FIELDS_CREATE, args, signup ? 4 : 3);
    if (rc != NGX_OK) {
        return rc;
    }

    a->email = args[0];
    a->name = args[1];
    a->password = args[2];
    if (signup) {
        a->invitation = args[3];
    }

    return NGX_OK;
}



/* logout: deny the session id in Redis until the token would expire */

static ngx_int_t
ngx_http_cms_accounts_logout(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    time_t                      ttl;
    ngx_str_t                   key, ex;
    const char                 *argv[5];
    size_t                      argvlen[5];
    ngx_http_cms_redis_cmds_t  *cmds;

    ttl = ctx->principal.expires - ngx_time();
    ttl = ngx_max(ttl, 1);

    cmds = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_redis_cmds_t));
    key.data = ngx_pnalloc(r->pool, 64);
    ex.data = ngx_pnalloc(r->pool, NGX_TIME_T_LEN);

    if (cmds == NULL || key.data == NULL || ex.data == NULL) {
        return NGX_ERROR;
    }

    key.len = ngx_sprintf(key.data, "cms:deny:{%V}",
                          &ctx->principal.session_id) - key.data;
    ex.len = ngx_sprintf(ex.data, "%T", ttl) - ex.data;

    argv[0] = "SET";           argvlen[0] = 3;
    argv[1] = (char *) key.data; argvlen[1] = key.len;
    argv[2] = "1";             argvlen[2] = 1;
    argv[3] = "EX";            argvlen[3] = 2;
    argv[4] = (char *) ex.data;  argvlen[4] = ex.len;

    if (ngx_http_cms_redis_append(r->pool, cmds, 5, argv, argvlen) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_redis_run(r, cmds, ngx_http_cms_accounts_logged_out);
}


static ngx_int_t
ngx_http_cms_accounts_logged_out(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, redisReply **replies, ngx_uint_t n)
{
    ngx_str_t  empty = ngx_null_string;

    if (replies == NULL || replies[0]->type != REDIS_REPLY_STATUS) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: could not record the logout in redis");
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_UNAVAILABLE, NULL);
    }

    if (ngx_http_cms_auth_clear_cookie(r) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_send(r, NGX_HTTP_NO_CONTENT, &empty);
}


static ngx_int_t
ngx_http_cms_accounts_me(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    u_char     *p;
    ngx_str_t   body;

    body.data = ngx_pnalloc(r->pool, ctx->principal.user_json.len + 16);
    if (body.data == NULL) {
        return NGX_ERROR;
    }

    p = ngx_sprintf(body.data, "{\"user\":%V}", &ctx->principal.user_json);
    body.len = p - body.data;

    return ngx_http_cms_send(r, NGX_HTTP_OK, &body);
}
