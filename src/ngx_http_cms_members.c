
/*
 * Members and invitations of a workspace, under /v1/workspaces/{id}:
 * members listed (any member), a role changed (owners and admins), a
 * member removed (owners and admins; anyone leaves); invitations made,
 * listed and revoked (owners and admins) and accepted by the invited
 * user's session (POST /v1/invitations/{token}/accept).  The owner rules,
 * the member limit and the locking that keeps both exact under
 * concurrency are sql/0016_teams.sql's; the router checks the minimum
 * role first.
 *
 * An invitation's token is signed and expiring (src/lib/cms_token.c),
 * answered once at creation; the database keeps only its keyed hash, so
 * a forged or expired token is refused before any query and a dump of
 * the table accepts nothing.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_json.h"
#include "ngx_http_cms_list.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_auth.h"
#include "ngx_http_cms_pg.h"
#include "cms_fields.h"
#include "cms_validate.h"
#include "cms_uuid.h"


static ngx_int_t ngx_http_cms_members_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_members_update(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_members_delete(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_members_row(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_members_gone(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_members_target(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *args);

static ngx_int_t ngx_http_cms_invitations_create(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_invitations_created(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_invitations_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_invitations_delete(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_invitations_accept(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);


/* the member record: column 0 a list's total (0 for one record) */
#define NGX_HTTP_CMS_MEMBER_COLUMNS                                          \
    " m.workspace_id, m.user_id, u.name, u.email, m.role,"                   \
    " m.created_at"

static const ngx_http_cms_col_t  ngx_http_cms_member_cols[] = {
    { "workspace_id", 1, NGX_HTTP_CMS_COL_STRING },
    { "user_id", 2, NGX_HTTP_CMS_COL_STRING },
    { "name", 3, NGX_HTTP_CMS_COL_STRING },
    { "email", 4, NGX_HTTP_CMS_COL_STRING },
    { "role", 5, NGX_HTTP_CMS_COL_STRING },
    { "joined_at", 6, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_member = {
    "member", "members", ngx_http_cms_member_cols,
    sizeof(ngx_http_cms_member_cols) / sizeof(ngx_http_cms_col_t)
};


/* the invitation record, the same way; never its token or hash */
#define NGX_HTTP_CMS_INVITATION_COLUMNS                                      \
    " i.id, i.workspace_id, i.email, i.role, cms_invitation_status(i),"      \
    " i.invited_by, i.created_at, i.expires_at,"             \
    " i.accepted_at, i.revoked_at"

static const ngx_http_cms_col_t  ngx_http_cms_invitation_cols[] = {
    { "id", 1, NGX_HTTP_CMS_COL_STRING },
    { "workspace_id", 2, NGX_HTTP_CMS_COL_STRING },
    { "email", 3, NGX_HTTP_CMS_COL_STRING },
    { "role", 4, NGX_HTTP_CMS_COL_STRING },
    { "status", 5, NGX_HTTP_CMS_COL_STRING },
    { "invited_by", 6, NGX_HTTP_CMS_COL_STRING },
    { "created_at", 7, NGX_HTTP_CMS_COL_TIME },
    { "expires_at", 8, NGX_HTTP_CMS_COL_TIME },
    { "accepted_at", 9, NGX_HTTP_CMS_COL_TIME },
    { "revoked_at", 10, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_invitation = {
    "invitation", "invitations", ngx_http_cms_invitation_cols,
    sizeof(ngx_http_cms_invitation_cols) / sizeof(ngx_http_cms_col_t)
};


/* $1 workspace, $2 limit, $3 offset; oldest member first */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_members_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT t.total, p.* FROM"
        " (SELECT cms_record_total('members', $1, NULL) AS total OFFSET 0) t"
        " LEFT JOIN LATERAL (SELECT" NGX_HTTP_CMS_MEMBER_COLUMNS
        "  FROM members m JOIN users u ON u.id = m.user_id"
        "  WHERE m.workspace_id = $1"
        "  ORDER BY m.created_at, m.user_id LIMIT $2 OFFSET $3) p ON true",
        3);

/* $1 workspace, $2 actor, $3 member, $4 role */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_members_role_sql =
    ngx_http_cms_pg_stmt(
        "SELECT 0," NGX_HTTP_CMS_MEMBER_COLUMNS
        " FROM cms_member_set_role($1, $2, $3, $4) m"
        " JOIN users u ON u.id = m.user_id",
        4);

/* $1 workspace, $2 actor, $3 member */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_members_remove_sql =
    ngx_http_cms_pg_stmt("SELECT cms_member_remove($1, $2, $3)", 3);

/* $1 workspace, $2 actor, $3 email, $4 role, $5 hash (hex), $6 expiry */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_invitations_insert_sql =
    ngx_http_cms_pg_stmt(
        "SELECT 0," NGX_HTTP_CMS_INVITATION_COLUMNS
        " FROM cms_invitation_create($1, $2, $3, $4, decode($5, 'hex'),"
        "  to_timestamp($6)) i",
        6);

/* $1 workspace, $2 limit, $3 offset; newest first */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_invitations_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT t.total, p.* FROM"
        " (SELECT count(*) AS total FROM invitations"
        "  WHERE workspace_id = $1) t"
        " LEFT JOIN LATERAL (SELECT" NGX_HTTP_CMS_INVITATION_COLUMNS
        "  FROM invitations i WHERE i.workspace_id = $1"
        "  ORDER BY i.created_at DESC, i.id DESC LIMIT $2 OFFSET $3) p"
        " ON true",
        3);

/* $1 workspace, $2 actor, $3 invitation */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_invitations_revoke_sql =
    ngx_http_cms_pg_stmt("SELECT cms_invitation_revoke($1, $2, $3)", 3);

/* $1 the token's hash (hex), $2 the accepting user */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_invitations_accept_sql =
    ngx_http_cms_pg_stmt(
        "SELECT 0," NGX_HTTP_CMS_MEMBER_COLUMNS
        " FROM cms_invitation_accept(decode($1, 'hex'), $2) m"
        " JOIN users u ON u.id = m.user_id",
        2);


static const char *const  ngx_http_cms_member_roles[] = {
    "owner", "admin", "editor", "author", "viewer", NULL
};

/* PATCH a member: $4 role (read-only members of the record ignored) */
static const char *const  ngx_http_cms_members_ignored[] = {
    "workspace_id", "user_id", "name", "email", "joined_at", NULL
};

static const cms_field_t  ngx_http_cms_members_fields[] = {
    { "role", CMS_FIELD_STRING, CMS_FIELD_REQUIRED, 4,
      NGX_HTTP_CMS_ERR_INVALID_ROLE, NGX_HTTP_CMS_ERR_INVALID_ROLE, 1, 20,
      ngx_http_cms_member_roles, NULL, NGX_HTTP_CMS_ERR_INVALID_ROLE, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_members_input = {
    ngx_http_cms_members_fields, ngx_http_cms_members_ignored,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};

/* POST an invitation: $3 email, $4 role */
static const cms_field_t  ngx_http_cms_invitations_fields[] = {
    { "email", CMS_FIELD_STRING, CMS_FIELD_REQUIRED, 3,
      NGX_HTTP_CMS_ERR_EMAIL_REQUIRED, NGX_HTTP_CMS_ERR_INVALID_EMAIL, 0, 254,
      NULL, cms_email_valid, NGX_HTTP_CMS_ERR_INVALID_EMAIL, NULL },
    { "role", CMS_FIELD_STRING, CMS_FIELD_REQUIRED, 4,
      NGX_HTTP_CMS_ERR_INVALID_ROLE, NGX_HTTP_CMS_ERR_INVALID_ROLE, 1, 20,
      ngx_http_cms_member_roles, NULL, NGX_HTTP_CMS_ERR_INVALID_ROLE, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_invitations_input = {
    ngx_http_cms_invitations_fields, NULL,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};


ngx_http_cms_route_t  ngx_http_cms_members_routes[] = {

    { NGX_HTTP_GET, ngx_string("/workspaces/:id/members"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_VIEWER,
      ngx_http_cms_members_list, NULL, NULL, 0 },

    { NGX_HTTP_PATCH, ngx_string("/workspaces/:id/members/:user"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_ADMIN,
      ngx_http_cms_members_update, NULL, NULL, 0 },

    /* any member may leave; removing another needs admin (the SQL's) */
    { NGX_HTTP_DELETE, ngx_string("/workspaces/:id/members/:user"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_VIEWER,
      ngx_http_cms_members_delete, NULL, NULL, 0 },

    { NGX_HTTP_POST, ngx_string("/workspaces/:id/invitations"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_ADMIN,
      ngx_http_cms_invitations_create, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/workspaces/:id/invitations"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_ADMIN,
      ngx_http_cms_invitations_list, NULL, NULL, 0 },

    { NGX_HTTP_DELETE, ngx_string("/workspaces/:id/invitations/:inv"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_ADMIN,
      ngx_http_cms_invitations_delete, NULL, NULL, 0 },

    { NGX_HTTP_POST, ngx_string("/invitations/:token/accept"),
      NGX_HTTP_CMS_AUTH_SESSION, 0,
      ngx_http_cms_invitations_accept, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


/* members */

static ngx_int_t
ngx_http_cms_members_list(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[3];

    args[0] = ctx->principal.workspace_id;

    return ngx_http_cms_list_query(r, &ngx_http_cms_members_list_sql, args,
                                   3, &ngx_http_cms_member);
}


static ngx_int_t
ngx_http_cms_members_update(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[4];

    rc = ngx_http_cms_members_target(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_cms_json_read(r, ctx->body, &ngx_http_cms_members_input,
                                CMS_FIELDS_CREATE, args, 4);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_members_role_sql, args, 4,
                                 ngx_http_cms_members_row);
}


static ngx_int_t
ngx_http_cms_members_delete(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[3];

    rc = ngx_http_cms_members_target(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_members_remove_sql, args,
                                 3, ngx_http_cms_members_gone);
}


/* one member row: a role changed, an invitation accepted */
static ngx_int_t
ngx_http_cms_members_row(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_send_row(r, NGX_HTTP_OK, &ngx_http_cms_member, res);
}


/* a removal or a revocation: true 204, false 404 */
static ngx_int_t
ngx_http_cms_members_gone(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    return ngx_http_cms_send_done(r, res, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
}


/* $1 workspace, $2 the caller, $3 the id after the workspace's (the
   router took that one away; a malformed id names nothing: 404) */
static ngx_int_t
ngx_http_cms_members_target(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_str_t *args)
{
    if (ctx->nparams < 1
        || !cms_uuid_valid((char *) ctx->params[0].data, ctx->params[0].len))
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    args[0] = ctx->principal.workspace_id;
    args[1] = ctx->principal.user_id;
    args[2] = ctx->params[0];

    return NGX_OK;
}


/* invitations */

static ngx_int_t
ngx_http_cms_invitations_create(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx)
{
    time_t                     expires;
    ngx_int_t                  rc;
    ngx_str_t                  args[6], *token;
    ngx_http_cms_main_conf_t  *mcf;

    rc = ngx_http_cms_json_read(r, ctx->body, &ngx_http_cms_invitations_input,
                                CMS_FIELDS_CREATE, args, 6);
    if (rc != NGX_OK) {
        return rc;
    }

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);
    expires = ngx_time() + mcf->invite_ttl;

    token = ngx_palloc(r->pool, sizeof(ngx_str_t));
    args[5].data = ngx_pnalloc(r->pool, NGX_TIME_T_LEN + 1);

    if (token == NULL || args[5].data == NULL
        || ngx_http_cms_crypto_token_make(r, NGX_HTTP_CMS_INVITE_KIND,
                                          expires, NULL, token, &args[4])
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    args[5].len = ngx_sprintf(args[5].data, "%T%Z", expires)
                  - args[5].data - 1;

    /* the token is answered once: no cache may keep it */
    ctx->no_store = 1;
    ctx->data = token;

    args[0] = ctx->principal.workspace_id;
    args[1] = ctx->principal.user_id;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_invitations_insert_sql,
                                 args, 6, ngx_http_cms_invitations_created);
}


static ngx_int_t
ngx_http_cms_invitations_created(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    ngx_int_t     rc;
    ngx_keyval_t  token;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    ngx_str_set(&token.key, "token");
    token.value = *(ngx_str_t *) ctx->data;

    return ngx_http_cms_send_row_with(r, NGX_HTTP_CREATED,
                                      &ngx_http_cms_invitation, res, &token);
}


static ngx_int_t
ngx_http_cms_invitations_list(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[3];

    args[0] = ctx->principal.workspace_id;

    return ngx_http_cms_list_query(r, &ngx_http_cms_invitations_list_sql,
                                   args, 3, &ngx_http_cms_invitation);
}


static ngx_int_t
ngx_http_cms_invitations_delete(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[3];

    rc = ngx_http_cms_members_target(r, ctx, args);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_invitations_revoke_sql,
                                 args, 3, ngx_http_cms_members_gone);
}


/* a forged, altered or expired token is refused before any query */
static ngx_int_t
ngx_http_cms_invitations_accept(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[2];

    rc = ngx_http_cms_json_no_body(r, ctx->body);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_cms_crypto_token_check(r, NGX_HTTP_CMS_INVITE_KIND,
                                         &ctx->params[0], &args[0]);
    if (rc != NGX_OK) {
        return (rc == NGX_DECLINED)
               ? ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INVALID_INVITATION,
                                   NULL)
               : NGX_ERROR;
    }

    args[1] = ctx->principal.user_id;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_invitations_accept_sql,
                                 args, 2, ngx_http_cms_members_row);
}
