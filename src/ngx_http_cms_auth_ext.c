
/*
 * Extension keys (sk_live_, sk_sandbox_) and admin credentials (sk_admin_):
 * the same lookup in other tables, on every request, so a revocation or an
 * expiry holds on the next one.  A route of the extension surface may read
 * its record in the key's statement (ngx_http_cms_auth_fused()); its
 * pipeline then waits for the rate limit before the handler, so the
 * record is kept for the request's lifetime.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <openssl/crypto.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_auth.h"
#include "ngx_http_cms_pg.h"
#include "cms_key.h"


static ngx_int_t ngx_http_cms_auth_ext_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_auth_keep(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static void ngx_http_cms_auth_clear(void *data);
static ngx_uint_t ngx_http_cms_auth_ext_kind(ngx_http_request_t *r);


static ngx_http_cms_pg_stmt_t  ngx_http_cms_auth_ext_sql =
    ngx_http_cms_pg_stmt(NGX_HTTP_CMS_AUTH_EXT_SQL(""), 2);


/* admin credentials: the same columns, extension id and mode left empty */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_auth_admin_sql =
    ngx_http_cms_pg_stmt(
        "SELECT a.id, a.facility_id, '', true,"
        " array_to_string(a.privileges, ' '), encode(a.secret_hash, 'hex')"
        " FROM admin_credentials a"
        " WHERE a.secret_hash = decode($1, 'hex') AND a.revoked_at IS NULL"
        "  AND $2::boolean",
        2);


static ngx_str_t  ngx_http_cms_admin_names[] = {
    ngx_string("admin:extensions:view"),
    ngx_string("admin:extensions:manage"),
    ngx_null_string
};


static ngx_str_t  ngx_http_cms_priv_names[] = {
    ngx_string("ext:billing:read"),
    ngx_string("ext:billing:write"),
    ngx_string("ext:control:write"),
    ngx_null_string
};


/* extension keys and admin credentials: the same lookup, other tables */
ngx_int_t
ngx_http_cms_auth_ext(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t   rc;
    ngx_str_t   args[2];
    ngx_uint_t  admin;

    /* an extension key where an admin credential is needed is looked up
       as one: a live one is told it lacks the scope (ext_done()) */
    admin = (ctx->auth == NGX_HTTP_CMS_AUTH_ADMIN_KEY
             && !ngx_http_cms_auth_ext_kind(r));

    rc = admin ? ngx_http_cms_auth_hash(r, ctx, NULL, CMS_KEY_KIND_SK_ADMIN,
                                        CMS_KEY_KIND_SK_ADMIN, &args[0])
               : ngx_http_cms_auth_hash(r, ctx, NULL, CMS_KEY_KIND_SK_LIVE,
                                        CMS_KEY_KIND_SK_SANDBOX, &args[0]);
    if (rc != NGX_OK) {
        return rc;
    }

    ngx_str_set(&args[1], "f");

    if (ctx->principal.livemode) {
        ngx_str_set(&args[1], "t");
    }

    if (!admin && ctx->route->fused != NULL) {
        /* the route reads its record in the key's statement */
        return ngx_http_cms_auth_fused(r, ctx, args, 2,
                                       &ngx_http_cms_auth_ext_sql,
                                       ngx_http_cms_auth_ext_done);
    }

    return ngx_http_cms_pg_query(r, admin ? &ngx_http_cms_auth_admin_sql
                                          : &ngx_http_cms_auth_ext_sql,
                                 args, 2, ngx_http_cms_auth_ext_done);
}


/* long: the key's checks, the wrong family, then its principal */
static ngx_int_t
ngx_http_cms_auth_ext_done(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    char                      *v;
    ngx_int_t                  rc;
    ngx_http_cms_principal_t  *p;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    if (PQntuples(res) != 1
        || PQgetlength(res, 0, 5) != 64
        || CRYPTO_memcmp(PQgetvalue(res, 0, 5), ctx->principal.key_hmac, 64)
           != 0)
    {
        return ngx_http_cms_pg_missed(r) ? ngx_http_cms_auth_ext(r, ctx)
               : ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_API_KEY, NULL);
    }

    /* an extension key (it has an extension) on an admin route */
    if (ctx->auth == NGX_HTTP_CMS_AUTH_ADMIN_KEY && PQgetlength(res, 0, 2)) {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_FORBIDDEN, NULL,
                                     "An extension key cannot manage "
                                     "extensions: use an admin credential "
                                     "(sk_admin_)");
    }

    p = &ctx->principal;

    if (ngx_http_cms_auth_copy(r, res, 0, &p->key_id) != NGX_OK
        || ngx_http_cms_auth_copy(r, res, 1, &p->facility_id) != NGX_OK
        || ngx_http_cms_auth_copy(r, res, 2, &p->extension_id) != NGX_OK)
    {
        return NGX_ERROR;
    }

    v = PQgetvalue(res, 0, 4);

    if (ctx->auth == NGX_HTTP_CMS_AUTH_ADMIN_KEY) {
        p->scopes = ngx_http_cms_auth_names(ngx_http_cms_admin_names,
                                            (u_char *) v,
                                            (u_char *) v + ngx_strlen(v));

        if (p->scopes & NGX_HTTP_CMS_ADMIN_MANAGE) {
            p->scopes |= NGX_HTTP_CMS_ADMIN_VIEW;
        }

    } else {
        p->scopes = ngx_http_cms_auth_names(ngx_http_cms_priv_names,
                                            (u_char *) v,
                                            (u_char *) v + ngx_strlen(v));
    }

    if (ctx->fused_read && ngx_http_cms_auth_keep(r, ctx, res) != NGX_OK) {
        return NGX_ERROR;
    }

    return ctx->resume(r, ctx);
}


/*
 * A fused read whose pipeline waits again before its handler (the
 * extension surface's rate limit asks Redis): the record is kept, a copy
 * of the result, for the request's lifetime.
 */
static ngx_int_t
ngx_http_cms_auth_keep(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    PGresult            *copy;
    ngx_pool_cleanup_t  *cln;

    cln = ngx_pool_cleanup_add(r->pool, 0);
    if (cln == NULL) {
        return NGX_ERROR;
    }

    copy = PQcopyResult(res, PG_COPYRES_ATTRS | PG_COPYRES_TUPLES);
    if (copy == NULL) {
        return NGX_ERROR;
    }

    cln->handler = ngx_http_cms_auth_clear;
    cln->data = copy;
    ctx->fused = copy;

    return NGX_OK;
}


static void
ngx_http_cms_auth_clear(void *data)
{
    PQclear(data);
}


/* whether the Bearer token is an extension key by its form and checksum */
static ngx_uint_t
ngx_http_cms_auth_ext_kind(ngx_http_request_t *r)
{
    cms_key_t  k;
    ngx_str_t  token;

    return ngx_http_cms_auth_bearer(r, &token) == NGX_OK
           && cms_key_parse((char *) token.data, token.len, &k) == CMS_KEY_OK
           && (k.kind == CMS_KEY_KIND_SK_LIVE
               || k.kind == CMS_KEY_KIND_SK_SANDBOX);
}
