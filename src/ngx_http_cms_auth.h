
/*
 * Credentials -> ctx->principal.  Never sends a response: it records an
 * error and returns its status, or resumes the pipeline.
 */


#ifndef _NGX_HTTP_CMS_AUTH_H_INCLUDED_
#define _NGX_HTTP_CMS_AUTH_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_pg.h"


typedef enum {
    NGX_HTTP_CMS_ROLE_NONE = 0,
    NGX_HTTP_CMS_ROLE_VIEWER,
    NGX_HTTP_CMS_ROLE_AUTHOR,
    NGX_HTTP_CMS_ROLE_EDITOR,
    NGX_HTTP_CMS_ROLE_ADMIN,
    NGX_HTTP_CMS_ROLE_OWNER
} ngx_http_cms_role_e;


/* one bit per scope; a route's "perm" for secret keys is one of them */
#define NGX_HTTP_CMS_SCOPE_ARTICLES_READ       0x00001
#define NGX_HTTP_CMS_SCOPE_ARTICLES_WRITE      0x00002
#define NGX_HTTP_CMS_SCOPE_VIDEOS_READ         0x00004
#define NGX_HTTP_CMS_SCOPE_VIDEOS_WRITE        0x00008
#define NGX_HTTP_CMS_SCOPE_CATEGORIES_READ     0x00010
#define NGX_HTTP_CMS_SCOPE_CATEGORIES_WRITE    0x00020
#define NGX_HTTP_CMS_SCOPE_MEDIA_READ          0x00040
#define NGX_HTTP_CMS_SCOPE_MEDIA_WRITE         0x00080
#define NGX_HTTP_CMS_SCOPE_COMMENTS_READ       0x00100
#define NGX_HTTP_CMS_SCOPE_COMMENTS_WRITE      0x00200
#define NGX_HTTP_CMS_SCOPE_CUSTOM_READ         0x00400
#define NGX_HTTP_CMS_SCOPE_CUSTOM_WRITE        0x00800
#define NGX_HTTP_CMS_SCOPE_PAGES_READ          0x01000
#define NGX_HTTP_CMS_SCOPE_PAGES_WRITE         0x02000
#define NGX_HTTP_CMS_SCOPE_WEBHOOKS_READ       0x04000
#define NGX_HTTP_CMS_SCOPE_WEBHOOKS_WRITE      0x08000
#define NGX_HTTP_CMS_SCOPE_PODCASTS_READ       0x10000
#define NGX_HTTP_CMS_SCOPE_PODCASTS_WRITE      0x20000
#define NGX_HTTP_CMS_SCOPE_SUBSCRIBERS_READ     0x40000
#define NGX_HTTP_CMS_SCOPE_SUBSCRIBERS_WRITE    0x80000


/* extension privileges; a /v1/ext route's "perm" is one of them */
#define NGX_HTTP_CMS_PRIV_BILLING_READ         0x0001
#define NGX_HTTP_CMS_PRIV_BILLING_WRITE        0x0002
#define NGX_HTTP_CMS_PRIV_CONTROL_WRITE        0x0004

/* admin credential privileges; managing implies viewing */
#define NGX_HTTP_CMS_ADMIN_VIEW                0x0001
#define NGX_HTTP_CMS_ADMIN_MANAGE              0x0002


/*
 * The key lookup: columns 0-6 are the key id, workspace, creator, the
 * creator's role, the scopes, whether the workspace is suspended and the
 * stored hash; "extra" adds columns after them (a fused read's record).
 * One probe: the key's row carries its creator's current role (NULL when
 * the creator is not an active member) and its workspace's suspension,
 * kept by triggers on members, users and workspaces
 * (sql/0045_key_principals.sql).
 */
#define NGX_HTTP_CMS_AUTH_KEY_SQL(extra)                                     \
    "SELECT k.id, k.workspace_id, k.created_by, k.principal_role,"           \
    " array_to_string(k.scopes, ' '), k.workspace_suspended,"                \
    " encode(k.secret_hash, 'hex')" extra                                    \
    " FROM api_keys k"                                                       \
    " WHERE k.secret_hash = decode($1, 'hex') AND k.revoked_at IS NULL"      \
    "  AND k.principal_role IS NOT NULL"

#define NGX_HTTP_CMS_AUTH_KEY_COLUMNS  7

/*
 * The extension key lookup: columns 0-5 are the key id, facility,
 * extension, mode, privileges and the stored hash; "extra" adds columns
 * after them (a fused read's record).  $1 the hash, $2 the key's mode
 * (sk_live_ keys see live records only, sk_sandbox_ keys sandbox ones).
 */
#define NGX_HTTP_CMS_AUTH_EXT_SQL(extra)                                     \
    "SELECT k.id, k.facility_id, k.extension_id, k.livemode,"                \
    " array_to_string(k.privileges, ' '), encode(k.secret_hash, 'hex')"      \
    extra                                                                    \
    " FROM extension_keys k JOIN extensions e ON e.id = k.extension_id"      \
    " WHERE k.secret_hash = decode($1, 'hex') AND k.revoked_at IS NULL"      \
    "  AND (k.expires_at IS NULL OR k.expires_at > now())"                   \
    "  AND k.livemode = $2"

#define NGX_HTTP_CMS_AUTH_EXT_COLUMNS  6


/*
 * Between the credential files (ngx_http_cms_auth.c, _auth_ext.c): the
 * extension keys' step; a fused read's statement ("lead": the key's
 * arguments, then the path's ids; "alone": the key's statement when the
 * route's args() declines); a result value copied into the request pool;
 * space-separated names to bits (unknown names count for nothing); the
 * Bearer token (NGX_DECLINED: none).
 */
ngx_int_t ngx_http_cms_auth_ext(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
ngx_int_t ngx_http_cms_auth_fused(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *lead, ngx_uint_t nlead,
    ngx_http_cms_pg_stmt_t *alone, ngx_http_cms_pg_done_pt done);
ngx_int_t ngx_http_cms_auth_copy(ngx_http_request_t *r, PGresult *res,
    int col, ngx_str_t *out);
ngx_uint_t ngx_http_cms_auth_names(ngx_str_t *names, u_char *p,
    u_char *last);
ngx_int_t ngx_http_cms_auth_bearer(ngx_http_request_t *r, ngx_str_t *token);


/*
 * The pipeline's credential step: authenticates the request for the
 * route's credential family (ctx->auth) and fills ctx->principal.  Returns
 * NGX_DECLINED for a route without a credential; NGX_DONE while a lookup
 * is in flight, whose callback continues with ctx->resume() once the
 * principal is known (with ctx->fused holding the result of a fused read
 * meanwhile); or an error status recorded.  The permission is the
 * router's to check.
 */
ngx_int_t ngx_http_cms_auth_step(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);

/*
 * A key ("given", or the Bearer token when NULL), if its format and
 * checksum hold and it is of kind "live" or "sandbox" (cms_key.h), as the
 * hex of its keyed hash to look up (also kept in principal.key_hmac for a
 * constant-time comparison).  Sets principal.livemode.  NGX_OK, 401
 * missing_token or invalid_api_key recorded, or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_auth_hash(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *given, ngx_uint_t live,
    ngx_uint_t sandbox, ngx_str_t *hex);

/* The bit for a scope name, or 0 for an unknown one. */
ngx_uint_t ngx_http_cms_auth_scope(ngx_str_t *name);

/* The role for a role name, or NGX_HTTP_CMS_ROLE_NONE. */
ngx_uint_t ngx_http_cms_auth_role(ngx_str_t *name);

/*
 * Signs a session for "user_id" of session generation "gen" (the user
 * row's session_gen: a password change moves it and voids the others)
 * and sets the session cookie.  "token" receives the JWT (pool memory).
 * Returns NGX_OK or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_auth_issue(ngx_http_request_t *r, ngx_str_t *user_id,
    ngx_uint_t gen, ngx_str_t *token);

/* Expires the session cookie in the browser. */
ngx_int_t ngx_http_cms_auth_clear_cookie(ngx_http_request_t *r);


#endif /* _NGX_HTTP_CMS_AUTH_H_INCLUDED_ */
