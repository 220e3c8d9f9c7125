
/*
 * Credentials.  Secret keys: format and checksum first (no query for a
 * malformed key), then the HMAC of the key looked up on every request, so a
 * revocation holds on the next one.  Sessions: an HS256 JWT verified here,
 * then the Redis deny-list (logout) and the user and membership rows, asked
 * at the same time.  The router's permission for the route is checked here
 * too, so no handler can forget it.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <openssl/crypto.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_json.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_auth.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_redis.h"
#include "cms_key.h"
#include "cms_kdf.h"
#include "cms_jwt.h"
#include "cms_hex.h"
#include "cms_uuid.h"


#define NGX_HTTP_CMS_SID_LEN          32
#define NGX_HTTP_CMS_JWT_MAX          1024


typedef struct {
    unsigned                    pg_done:1;
    unsigned                    redis_done:1;
    unsigned                    revoked:1;
    unsigned                    redis_failed:1;
    ngx_int_t                   pg_rc;
} ngx_http_cms_auth_state_t;


static ngx_int_t ngx_http_cms_auth_key(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_auth_key_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_auth_session(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_auth_claims(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *token);
static ngx_int_t ngx_http_cms_auth_user_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_auth_deny_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, redisReply **replies, ngx_uint_t n);
static ngx_int_t ngx_http_cms_auth_session_checked(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_auth_user_row(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_auth_missing(ngx_http_request_t *r);
static ngx_int_t ngx_http_cms_auth_gen(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *arg);


static ngx_http_cms_pg_stmt_t  ngx_http_cms_auth_key_sql =
    ngx_http_cms_pg_stmt(NGX_HTTP_CMS_AUTH_KEY_SQL(""), 1);

/*
 * $2 is NULL for routes outside a workspace: the membership is then NULL;
 * $3 the session's generation: a password change since voids it (no row)
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_auth_user_sql =
    ngx_http_cms_pg_stmt(
        "SELECT u.active, u.email_verified, cms_user_json(u)::text,"
        " m.role, w.suspended"
        " FROM users u"
        " LEFT JOIN members m ON m.user_id = u.id AND m.workspace_id = $2"
        " LEFT JOIN workspaces w ON w.id = m.workspace_id"
        " WHERE u.id = $1 AND u.session_gen = $3",
        3);


static ngx_str_t  ngx_http_cms_scope_names[] = {
    ngx_string("articles:read"), ngx_string("articles:write"),
    ngx_string("videos:read"), ngx_string("videos:write"),
    ngx_string("categories:read"), ngx_string("categories:write"),
    ngx_string("media:read"), ngx_string("media:write"),
    ngx_string("comments:read"), ngx_string("comments:write"),
    ngx_string("custom:read"), ngx_string("custom:write"),
    ngx_string("pages:read"), ngx_string("pages:write"),
    ngx_string("webhooks:read"), ngx_string("webhooks:write"),
    ngx_string("podcasts:read"), ngx_string("podcasts:write"),
    ngx_string("subscribers:read"), ngx_string("subscribers:write"),
    ngx_null_string
};


static ngx_str_t  ngx_http_cms_role_names[] = {
    ngx_null_string,
    ngx_string("viewer"),
    ngx_string("author"),
    ngx_string("editor"),
    ngx_string("admin"),
    ngx_string("owner"),
    ngx_null_string
};


ngx_int_t
ngx_http_cms_auth_step(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ctx->principal.family = ctx->auth;

    switch (ctx->auth) {

    case NGX_HTTP_CMS_AUTH_NONE:
        return NGX_DECLINED;

    case NGX_HTTP_CMS_AUTH_SECRET_KEY:
        return ngx_http_cms_auth_key(r, ctx);

    case NGX_HTTP_CMS_AUTH_SESSION:
    case NGX_HTTP_CMS_AUTH_MEMBER:
        return ngx_http_cms_auth_session(r, ctx);

    case NGX_HTTP_CMS_AUTH_EXT_KEY:
    case NGX_HTTP_CMS_AUTH_ADMIN_KEY:
        return ngx_http_cms_auth_ext(r, ctx);

    default:
        /* the other families arrive with their issues */
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_UNAUTHORIZED, NULL);
    }
}


ngx_uint_t
ngx_http_cms_auth_scope(ngx_str_t *name)
{
    ngx_uint_t  i;

    for (i = 0; ngx_http_cms_scope_names[i].len; i++) {
        if (name->len == ngx_http_cms_scope_names[i].len
            && ngx_strncmp(name->data, ngx_http_cms_scope_names[i].data,
                           name->len) == 0)
        {
            return (ngx_uint_t) 1 << i;
        }
    }

    return 0;
}


ngx_uint_t
ngx_http_cms_auth_role(ngx_str_t *name)
{
    ngx_uint_t  i;

    for (i = 1; ngx_http_cms_role_names[i].len; i++) {
        if (name->len == ngx_http_cms_role_names[i].len
            && ngx_strncmp(name->data, ngx_http_cms_role_names[i].data,
                           name->len) == 0)
        {
            return i;
        }
    }

    return NGX_HTTP_CMS_ROLE_NONE;
}


/* secret keys */

static ngx_int_t
ngx_http_cms_auth_key(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  arg;

    rc = ngx_http_cms_auth_hash(r, ctx, NULL, CMS_KEY_KIND_SVC_LIVE,
                                CMS_KEY_KIND_SVC_LIVE, &arg);
    if (rc != NGX_OK) {
        return rc;
    }

    if (ctx->route->fused != NULL) {
        /* the route reads its record in the key's statement */
        return ngx_http_cms_auth_fused(r, ctx, &arg, 1,
                                       &ngx_http_cms_auth_key_sql,
                                       ngx_http_cms_auth_key_done);
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_auth_key_sql, &arg, 1,
                                 ngx_http_cms_auth_key_done);
}


ngx_int_t
ngx_http_cms_auth_hash(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_str_t *given, ngx_uint_t live, ngx_uint_t sandbox, ngx_str_t *hex)
{
    cms_key_t                  k;
    ngx_str_t                  token;
    unsigned char              hash[32];
    ngx_http_cms_main_conf_t  *mcf;

    if (given != NULL) {
        token = *given;

    } else if (ngx_http_cms_auth_bearer(r, &token) != NGX_OK) {
        return ngx_http_cms_auth_missing(r);
    }

    /* the checksum refuses typos and forgeries before any query */
    if (cms_key_parse((char *) token.data, token.len, &k) != CMS_KEY_OK
        || (k.kind != live && k.kind != sandbox))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_API_KEY, NULL);
    }

    ctx->principal.livemode = (k.kind == live);

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    if (cms_key_hash(mcf->api_pepper, (char *) token.data, token.len, hash)
        != 0)
    {
        return NGX_ERROR;
    }

    hex->data = ngx_pnalloc(r->pool, 2 * sizeof(hash));
    if (hex->data == NULL) {
        return NGX_ERROR;
    }

    cms_hex_encode(hash, sizeof(hash), (char *) hex->data);
    hex->len = 2 * sizeof(hash);

    ctx->principal.key_hmac = hex->data;

    return NGX_OK;
}


/*
 * The key and the record in one statement: the key's arguments ("lead":
 * the hash, and an extension key's mode), then the ids, or what the
 * route's fused_args() gives; when it declines, the key alone ("alone").
 */
ngx_int_t
ngx_http_cms_auth_fused(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_str_t *lead, ngx_uint_t nlead, ngx_http_cms_pg_stmt_t *alone,
    ngx_http_cms_pg_done_pt done)
{
    ngx_int_t   rc;
    ngx_str_t   args[NGX_HTTP_CMS_MAX_PARAMS + 2];
    ngx_uint_t  i, n;

    for (i = 0; i < nlead; i++) {
        args[i] = lead[i];
    }

    n = ctx->nparams;

    for (i = 0; i < n; i++) {
        args[nlead + i] = ctx->params[i];

        /* a malformed id finds nothing, after the key is checked */
        if (!cms_uuid_valid((char *) args[nlead + i].data,
                            args[nlead + i].len))
        {
            ngx_str_null(&args[nlead + i]);
        }
    }

    if (ctx->route->fused->args != NULL) {
        rc = ctx->route->fused->args(r, ctx, &args[nlead], &n);

        if (rc == NGX_DECLINED) {
            return ngx_http_cms_pg_query(r, alone, lead, nlead, done);
        }

        if (rc != NGX_OK) {
            return rc;
        }
    }

    ctx->fused_read = 1;

    return ngx_http_cms_pg_query(r, ctx->route->fused->stmt, args,
                                 n + nlead, done);
}


/* long: the key row's columns copied and checked in turn */
static ngx_int_t
ngx_http_cms_auth_key_done(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    char                      *v;
    ngx_int_t                  rc;
    ngx_str_t                  role;
    ngx_http_cms_principal_t  *p;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    /* one row, or a fused list's rows: the key's columns on each */
    if (PQntuples(res) < 1
        || (!ctx->fused_read && PQntuples(res) != 1)
        || ngx_strlen(PQgetvalue(res, 0, 6)) != 64
        || CRYPTO_memcmp(PQgetvalue(res, 0, 6), ctx->principal.key_hmac, 64)
           != 0)
    {
        if (ngx_http_cms_pg_missed(r)) {
            /* a key made a moment ago (any kind) may not be there yet */
            return ngx_http_cms_auth_key(r, ctx);
        }

        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_API_KEY, NULL);
    }

    p = &ctx->principal;

    if (ngx_http_cms_auth_copy(r, res, 0, &p->key_id) != NGX_OK
        || ngx_http_cms_auth_copy(r, res, 1, &p->workspace_id) != NGX_OK
        || ngx_http_cms_auth_copy(r, res, 2, &p->user_id) != NGX_OK)
    {
        return NGX_ERROR;
    }

    role.data = (u_char *) PQgetvalue(res, 0, 3);
    role.len = ngx_strlen(role.data);
    p->role = ngx_http_cms_auth_role(&role);

    v = PQgetvalue(res, 0, 4);
    p->scopes = ngx_http_cms_auth_names(ngx_http_cms_scope_names, (u_char *) v,
                                        (u_char *) v + ngx_strlen(v));

    if (PQgetvalue(res, 0, 5)[0] == 't') {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_WORKSPACE_SUSPENDED,
                                 NULL);
    }

    if (!ctx->fused_read) {
        return ctx->resume(r, ctx);
    }

    /* the rest of the pipeline runs while the result is alive */
    ctx->fused = res;
    rc = ctx->resume(r, ctx);
    ctx->fused = NULL;

    return rc;
}


/* "articles:read articles:write" -> bits; unknown names count for nothing */
ngx_uint_t
ngx_http_cms_auth_names(ngx_str_t *names, u_char *p, u_char *last)
{
    u_char      *s;
    ngx_uint_t   bits, i;

    bits = 0;

    while (p < last) {
        s = p;

        while (p < last && *p != ' ') {
            p++;
        }

        for (i = 0; names[i].len; i++) {
            if ((size_t) (p - s) == names[i].len
                && ngx_strncmp(s, names[i].data, names[i].len) == 0)
            {
                bits |= (ngx_uint_t) 1 << i;
                break;
            }
        }

        p++;
    }

    return bits;
}


/* sessions */

/* long: deny-list and user lookups started side by side */
static ngx_int_t
ngx_http_cms_auth_session(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t                   rc;
    ngx_str_t                   token, args[3], key;
    ngx_http_cms_redis_cmds_t  *cmds;
    const char                 *argv[2];
    size_t                      argvlen[2];

    static ngx_str_t  cookie = ngx_string("cms_session");

    if (ngx_http_cms_auth_bearer(r, &token) != NGX_OK
        && ngx_http_parse_multi_header_lines(&r->headers_in.cookies, &cookie,
                                             &token)
           == NGX_DECLINED)
    {
        return ngx_http_cms_auth_missing(r);
    }

    rc = ngx_http_cms_auth_claims(r, ctx, &token);
    if (rc != NGX_OK) {
        return rc;
    }

    ctx->data = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_auth_state_t));
    cmds = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_redis_cmds_t));
    key.data = ngx_pnalloc(r->pool, NGX_HTTP_CMS_SID_LEN + 16);

    if (ctx->data == NULL || cmds == NULL || key.data == NULL
        || ngx_http_cms_auth_gen(r, ctx, &args[2]) != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* the hash tag keeps each session's keys on one cluster slot */
    key.len = ngx_sprintf(key.data, "cms:deny:{%V}", &ctx->principal.session_id)
              - key.data;

    argv[0] = "EXISTS";
    argvlen[0] = 6;
    argv[1] = (char *) key.data;
    argvlen[1] = key.len;

    if (ngx_http_cms_redis_append(r->pool, cmds, 2, argv, argvlen) != NGX_OK) {
        return NGX_ERROR;
    }

    args[0] = ctx->principal.user_id;
    ngx_str_null(&args[1]);

    if (ctx->auth == NGX_HTTP_CMS_AUTH_MEMBER) {
        /* any malformed id is simply not a workspace one belongs to */
        if (!cms_uuid_valid((char *) ctx->params[0].data, ctx->params[0].len))
        {
            return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_MEMBER, NULL);
        }

        args[1] = ctx->params[0];
    }

    rc = ngx_http_cms_redis_run(r, cmds, ngx_http_cms_auth_deny_done);
    if (rc != NGX_DONE) {
        /* logout must hold: without the deny-list no session is trusted */
        return rc;
    }

    ctx->pending++;

    rc = ngx_http_cms_pg_query(r, &ngx_http_cms_auth_user_sql, args, 3,
                               ngx_http_cms_auth_user_done);
    if (rc != NGX_DONE) {
        /* the Redis reply still comes: it answers with this code */
        ((ngx_http_cms_auth_state_t *) ctx->data)->pg_done = 1;
        ((ngx_http_cms_auth_state_t *) ctx->data)->pg_rc = rc;
        return NGX_DONE;
    }

    ctx->pending++;

    return NGX_DONE;
}


/* verifies the JWT and reads its claims into the principal */
/* long: each claim checked; the token refused on any */
static ngx_int_t
ngx_http_cms_auth_claims(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_str_t *token)
{
    json_t                    *claims, *sub, *sid, *exp, *gen;
    size_t                     len;
    ngx_int_t                  rc;
    ngx_http_cms_main_conf_t  *mcf;
    u_char                     payload[NGX_HTTP_CMS_JWT_MAX];

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    if (token->len > NGX_HTTP_CMS_JWT_MAX
        || cms_jwt_verify(mcf->session_key, (char *) token->data, token->len,
                          payload, sizeof(payload), &len)
           != CMS_JWT_OK)
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_TOKEN, NULL);
    }

    claims = json_loadb((char *) payload, len, JSON_REJECT_DUPLICATES, NULL);
    if (claims == NULL || ngx_http_cms_json_pool(r, claims) != NGX_OK) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_TOKEN, NULL);
    }

    sub = json_object_get(claims, "sub");
    sid = json_object_get(claims, "sid");
    exp = json_object_get(claims, "exp");
    gen = json_object_get(claims, "gen");      /* absent: 0 */

    rc = ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_TOKEN, NULL);

    if (!json_is_string(sub) || !json_is_string(sid) || !json_is_integer(exp)
        || !cms_uuid_valid(json_string_value(sub), json_string_length(sub))
        || json_string_length(sid) != NGX_HTTP_CMS_SID_LEN
        || json_integer_value(exp) <= ngx_time()
        || (gen != NULL
            && (!json_is_integer(gen) || json_integer_value(gen) < 0
                || json_integer_value(gen) > NGX_MAX_INT32_VALUE)))
    {
        return rc;
    }

    ctx->principal.session_gen = gen ? (ngx_uint_t) json_integer_value(gen)
                                     : 0;

    ctx->has_err = 0;

    ctx->principal.user_id.data = (u_char *) json_string_value(sub);
    ctx->principal.user_id.len = json_string_length(sub);
    ctx->principal.session_id.data = (u_char *) json_string_value(sid);
    ctx->principal.session_id.len = NGX_HTTP_CMS_SID_LEN;
    ctx->principal.expires = (time_t) json_integer_value(exp);

    for (len = 0; len < NGX_HTTP_CMS_SID_LEN; len++) {
        if (!ngx_strchr("0123456789abcdef",
                        ctx->principal.session_id.data[len]))
        {
            return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_TOKEN, NULL);
        }
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_cms_auth_deny_done(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    redisReply **replies, ngx_uint_t n)
{
    ngx_http_cms_auth_state_t *st = ctx->data;

    st->redis_done = 1;

    if (replies == NULL || replies[0]->type != REDIS_REPLY_INTEGER) {
        st->redis_failed = 1;

    } else {
        st->revoked = (replies[0]->integer != 0);
    }

    ctx->pending--;

    return ngx_http_cms_auth_session_checked(r, ctx);
}


static ngx_int_t
ngx_http_cms_auth_user_done(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_http_cms_auth_state_t *st = ctx->data;

    st->pg_done = 1;
    st->pg_rc = ngx_http_cms_auth_user_row(r, ctx, res);

    ctx->pending--;

    return ngx_http_cms_auth_session_checked(r, ctx);
}


/* both answers are in: decide, in an order that leaks nothing */
static ngx_int_t
ngx_http_cms_auth_session_checked(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx)
{
    ngx_http_cms_auth_state_t *st = ctx->data;

    if (ctx->pending) {
        return NGX_DONE;
    }

    if (st->redis_failed) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: session deny-list unavailable");
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_UNAVAILABLE, NULL);
    }

    if (st->revoked) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_TOKEN, NULL);
    }

    if (st->pg_rc != NGX_OK) {
        return st->pg_rc;
    }

    ctx->has_err = 0;
    ctx->data = NULL;

    return ctx->resume(r, ctx);
}


/* the user row: active, verified, the record, and the membership */
/* long: active, verified, member, suspended: a code each */
static ngx_int_t
ngx_http_cms_auth_user_row(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t                  rc;
    ngx_str_t                  role;
    ngx_http_cms_main_conf_t  *mcf;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    if (PQntuples(res) != 1) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_TOKEN, NULL);
    }

    if (PQgetvalue(res, 0, 0)[0] != 't') {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_ACCOUNT_INACTIVE, NULL);
    }

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    if (mcf->require_verified && PQgetvalue(res, 0, 1)[0] != 't') {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_EMAIL_NOT_VERIFIED,
                                 NULL);
    }

    if (ngx_http_cms_auth_copy(r, res, 2, &ctx->principal.user_json)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (ctx->auth != NGX_HTTP_CMS_AUTH_MEMBER) {
        return NGX_OK;
    }

    if (PQgetisnull(res, 0, 3)) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_MEMBER, NULL);
    }

    if (PQgetvalue(res, 0, 4)[0] == 't') {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_WORKSPACE_SUSPENDED,
                                 NULL);
    }

    role.data = (u_char *) PQgetvalue(res, 0, 3);
    role.len = ngx_strlen(role.data);

    ctx->principal.role = ngx_http_cms_auth_role(&role);
    ctx->principal.workspace_id = ctx->params[0];

    return NGX_OK;
}


/* the session's generation as the user lookup's parameter (text) */
static ngx_int_t
ngx_http_cms_auth_gen(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_str_t *arg)
{
    arg->data = ngx_pnalloc(r->pool, NGX_INT_T_LEN);
    if (arg->data == NULL) {
        return NGX_ERROR;
    }

    arg->len = ngx_sprintf(arg->data, "%ui", ctx->principal.session_gen)
               - arg->data;

    return NGX_OK;
}


/* "Authorization: Bearer <token>" */
ngx_int_t
ngx_http_cms_auth_bearer(ngx_http_request_t *r, ngx_str_t *token)
{
    u_char           *p, *last;
    ngx_table_elt_t  *h;

    h = r->headers_in.authorization;

    if (h == NULL || h->value.len < 7
        || ngx_strncasecmp(h->value.data, (u_char *) "Bearer ", 7) != 0)
    {
        return NGX_DECLINED;
    }

    p = h->value.data + 7;
    last = h->value.data + h->value.len;

    while (p < last && *p == ' ') {
        p++;
    }

    while (last > p && last[-1] == ' ') {
        last--;
    }

    if (p == last) {
        return NGX_DECLINED;
    }

    token->data = p;
    token->len = last - p;

    return NGX_OK;
}


/*
 * No Bearer token came: 401 missing_token, the spec's code either way, but
 * an Authorization of another scheme (Basic, say) is told apart from none
 */
static ngx_int_t
ngx_http_cms_auth_missing(ngx_http_request_t *r)
{
    u_char           *p, *last;
    ngx_table_elt_t  *h;

    h = r->headers_in.authorization;

    if (h == NULL || h->value.len == 0) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_MISSING_TOKEN, NULL);
    }

    p = h->value.data;
    last = ngx_strlchr(p, p + h->value.len, ' ');
    last = last ? last : p + h->value.len;

    if (last - p == 6 && ngx_strncasecmp(p, (u_char *) "Bearer", 6) == 0) {
        /* the scheme with no token after it */
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_MISSING_TOKEN, NULL);
    }

    return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_MISSING_TOKEN, NULL,
                                 "Only Bearer credentials are accepted");
}


/* copies a result value into the request pool: results die early */
ngx_int_t
ngx_http_cms_auth_copy(ngx_http_request_t *r, PGresult *res, int col,
    ngx_str_t *out)
{
    out->len = PQgetlength(res, 0, col);
    out->data = ngx_pnalloc(r->pool, out->len + 1);

    if (out->data == NULL) {
        return NGX_ERROR;
    }

    ngx_memcpy(out->data, PQgetvalue(res, 0, col), out->len + 1);

    return NGX_OK;
}


/* long: the claims, the signature and the cookie */
ngx_int_t
ngx_http_cms_auth_issue(ngx_http_request_t *r, ngx_str_t *user_id,
    ngx_uint_t gen, ngx_str_t *token)
{
    size_t                     len;
    u_char                    *p;
    time_t                     now;
    ngx_str_t                  cookie;
    ngx_http_cms_ctx_t        *ctx;
    ngx_http_cms_main_conf_t  *mcf;
    u_char                     sid[NGX_HTTP_CMS_SID_LEN / 2];
    u_char                     payload[256];

    static ngx_str_t  set_cookie = ngx_string("Set-Cookie");

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    /* the answer carries the session: no cache keeps it */
    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);
    ctx->no_store = 1;

    if (user_id->len != 36
        || ngx_http_cms_crypto_random(sid, sizeof(sid)) != NGX_OK)
    {
        return NGX_ERROR;
    }

    now = ngx_time();

    p = ngx_sprintf(payload, "{\"sub\":\"%V\",\"sid\":\"", user_id);
    p = ngx_hex_dump(p, sid, sizeof(sid));
    p = ngx_sprintf(p, "\",\"iat\":%T,\"exp\":%T,\"gen\":%ui}", now,
                    now + mcf->session_ttl, gen);

    token->data = ngx_pnalloc(r->pool, NGX_HTTP_CMS_JWT_MAX);
    if (token->data == NULL) {
        return NGX_ERROR;
    }

    len = cms_jwt_sign(mcf->session_key, (char *) payload, p - payload,
                       (char *) token->data, NGX_HTTP_CMS_JWT_MAX);
    if (len == 0) {
        return NGX_ERROR;
    }

    token->len = len;

    cookie.data = ngx_pnalloc(r->pool, len + 128);
    if (cookie.data == NULL) {
        return NGX_ERROR;
    }

    cookie.len = ngx_sprintf(cookie.data,
                             "cms_session=%V; Path=/; Max-Age=%T; HttpOnly; "
                             "Secure; SameSite=Lax", token, mcf->session_ttl)
                 - cookie.data;

    return ngx_http_cms_header_add(r, &set_cookie, &cookie);
}


ngx_int_t
ngx_http_cms_auth_clear_cookie(ngx_http_request_t *r)
{
    static ngx_str_t  set_cookie = ngx_string("Set-Cookie");
    static ngx_str_t  cookie = ngx_string("cms_session=; Path=/; Max-Age=0; "
                                          "HttpOnly; Secure; SameSite=Lax");

    return ngx_http_cms_header_add(r, &set_cookie, &cookie);
}
