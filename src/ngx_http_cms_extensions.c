
/*
 * Extension management (/v1/extensions) for admin credentials of one
 * facility: list, configuration, reload, key rotation.  The route table
 * is here; installing (the manifest fetched or read, parsed and stored) is
 * in ngx_http_cms_extensions_install.c, the UI token for a user session in
 * ngx_http_cms_extensions_ui.c.
 *
 * Secret configuration fields are stored sealed with AES-256-GCM, bound
 * to the extension id and field name.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_json.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_list.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_auth.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_query.h"
#include "ngx_http_cms_extensions.h"


static ngx_int_t ngx_http_cms_extensions_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_extensions_listed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_extensions_configure(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_extensions_config_found(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_extensions_configured(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_extensions_reload(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_extensions_reloaded(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_extensions_rotate(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_extensions_rotated(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_extensions_rows(ngx_http_request_t *r,
    ngx_http_cms_extensions_values_t *vals, json_t *out, json_t *names);
static ngx_int_t ngx_http_cms_extensions_join(ngx_http_request_t *r,
    json_t *names, ngx_str_t *out);
static ngx_int_t ngx_http_cms_extensions_value(ngx_http_request_t *r,
    const char *name, json_t *field, json_t *v, ngx_str_t *ext_id,
    json_t *row);
static ngx_int_t ngx_http_cms_extensions_plain(json_t *row, json_t *v);


/* an extension as the list answers it */
static const ngx_http_cms_col_t  ngx_http_cms_extension_cols[] = {
    { "name", 0, NGX_HTTP_CMS_COL_STRING },
    { "version", 1, NGX_HTTP_CMS_COL_STRING },
    { "category", 2, NGX_HTTP_CMS_COL_STRING },
    { "is_enabled", 3, NGX_HTTP_CMS_COL_BOOL },
    { "status", 4, NGX_HTTP_CMS_COL_STRING },
    { "updated_at", 5, NGX_HTTP_CMS_COL_TIME },
};

static const ngx_http_cms_record_t  ngx_http_cms_extension = {
    "extension", "extensions", ngx_http_cms_extension_cols,
    sizeof(ngx_http_cms_extension_cols) / sizeof(ngx_http_cms_col_t)
};

/* what reload answers: name and status, or NULLs and whether it exists */
static const ngx_http_cms_col_t  ngx_http_cms_extension_reload_cols[] = {
    { "name", 0, NGX_HTTP_CMS_COL_STRING },
    { "status", 1, NGX_HTTP_CMS_COL_STRING },
};

static const ngx_http_cms_record_t  ngx_http_cms_extension_reload = {
    NULL, NULL, ngx_http_cms_extension_reload_cols,
    sizeof(ngx_http_cms_extension_reload_cols) / sizeof(ngx_http_cms_col_t)
};

/* what rotation answers (with the new key's secret) */
static const ngx_http_cms_col_t  ngx_http_cms_extension_rotated_cols[] = {
    { "name", 0, NGX_HTTP_CMS_COL_STRING },
    { "api_key_id", 1, NGX_HTTP_CMS_COL_STRING },
    { "previous_keys_expire_at", 2, NGX_HTTP_CMS_COL_STRING },
};

static const ngx_http_cms_record_t  ngx_http_cms_extension_rotated = {
    NULL, NULL, ngx_http_cms_extension_rotated_cols,
    sizeof(ngx_http_cms_extension_rotated_cols) / sizeof(ngx_http_cms_col_t)
};


/* $1 facility, $2 category, $3 enabled, $4 starting_after, $5 limit + 1 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_extensions_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT e.name, e.version, e.category, e.is_enabled, e.status,"
        " e.updated_at FROM extensions e"
        " WHERE e.facility_id = $1"
        "  AND ($2::text IS NULL OR e.category = $2)"
        "  AND ($3::boolean IS NULL OR e.is_enabled = $3)"
        "  AND ($4::text IS NULL OR e.name > $4)"
        " ORDER BY e.name LIMIT $5::integer",
        5);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_extensions_manifest_sql =
    ngx_http_cms_pg_stmt(
        "SELECT id, manifest::text FROM extensions"
        " WHERE facility_id = $1 AND name = $2",
        2);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_extensions_config_sql =
    ngx_http_cms_pg_stmt(
        "SELECT cms_extension_config_put($1, $2::jsonb,"
        " string_to_array($3, ' '))::text",
        3);

static ngx_http_cms_pg_stmt_t  ngx_http_cms_extensions_reload_sql =
    ngx_http_cms_pg_stmt(
        "WITH u AS ("
        "  UPDATE extensions SET status = 'reloading',"
        "   reload_deadline = now() + make_interval(secs => $3::float8),"
        "   updated_at = now()"
        "  WHERE facility_id = $1 AND name = $2 AND status = 'running'"
        "  RETURNING name, status)"
        " SELECT u.name, u.status, EXISTS (SELECT 1 FROM extensions"
        "   WHERE facility_id = $1 AND name = $2)"
        " FROM (VALUES (1)) v LEFT JOIN u ON true",
        3);

/* $1 facility, $2 name, $3 livemode, $4 prefix, $5 hash, $6 grace */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_extensions_rotate_sql =
    ngx_http_cms_pg_stmt(
        "SELECT name, api_key_id, previous_keys_expire_at"
        " FROM cms_extension_key_rotate_row($1, $2, $3 = 'live', $4,"
        "  decode($5, 'hex'), make_interval(secs => $6::float8))",
        6);


/* POST .../keys/rotate: no body, {} or {"mode": "live" | "sandbox"} */
static const char *const  ngx_http_cms_extensions_modes[] = {
    "live", "sandbox", NULL
};

static const cms_field_t  ngx_http_cms_extensions_rotate_fields[] = {
    { "mode", CMS_FIELD_STRING, 0, 3, 0, 0, 4, 7,
      ngx_http_cms_extensions_modes, NULL, 0, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_extensions_rotate_input = {
    ngx_http_cms_extensions_rotate_fields, NULL,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_REQUEST,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_EXT_VALIDATION
};


ngx_http_cms_route_t  ngx_http_cms_extensions_routes[] = {

    { NGX_HTTP_GET, ngx_string("/extensions"), NGX_HTTP_CMS_AUTH_ADMIN_KEY,
      NGX_HTTP_CMS_ADMIN_VIEW, ngx_http_cms_extensions_list, NULL, NULL, 0 },

    { NGX_HTTP_POST, ngx_string("/extensions"), NGX_HTTP_CMS_AUTH_ADMIN_KEY,
      NGX_HTTP_CMS_ADMIN_MANAGE, ngx_http_cms_extensions_install, NULL,
      NULL, 0 },

    { NGX_HTTP_PUT, ngx_string("/extensions/:name/config"),
      NGX_HTTP_CMS_AUTH_ADMIN_KEY, NGX_HTTP_CMS_ADMIN_MANAGE,
      ngx_http_cms_extensions_configure, NULL, NULL, 0 },

    { NGX_HTTP_POST, ngx_string("/extensions/:name/reload"),
      NGX_HTTP_CMS_AUTH_ADMIN_KEY, NGX_HTTP_CMS_ADMIN_MANAGE,
      ngx_http_cms_extensions_reload, NULL, NULL, 0 },

    { NGX_HTTP_POST, ngx_string("/extensions/:name/keys/rotate"),
      NGX_HTTP_CMS_AUTH_ADMIN_KEY, NGX_HTTP_CMS_ADMIN_MANAGE,
      ngx_http_cms_extensions_rotate, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/extensions/:name/ui-token"),
      NGX_HTTP_CMS_AUTH_SESSION, 0, ngx_http_cms_extensions_ui_token, NULL,
      NULL, 0 },

    ngx_http_cms_null_route
};


/* list: cursor pages by name */

static ngx_int_t
ngx_http_cms_extensions_list(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t               rc;
    ngx_str_t               args[5], v;
    ngx_http_cms_cursor_t  *cur;

    args[0] = ctx->principal.facility_id;
    ngx_str_null(&args[1]);
    ngx_str_null(&args[2]);

    rc = ngx_http_cms_query_arg(r, "category", 64, &args[1]);
    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return rc;
    }

    rc = ngx_http_cms_query_arg(r, "enabled", 5, &v);

    if (rc == NGX_OK) {
        if ((v.len != 4 || ngx_strncmp(v.data, "true", 4) != 0)
            && (v.len != 5 || ngx_strncmp(v.data, "false", 5) != 0))
        {
            return ngx_http_cms_extensions_invalid(r, "enabled",
                                                   "enabled must be true or "
                                                   "false");
        }

        args[2] = v;

    } else if (rc != NGX_DECLINED) {
        return rc;
    }

    cur = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_cursor_t));
    if (cur == NULL) {
        return NGX_ERROR;
    }

    rc = ngx_http_cms_list_cursor(r, 20, 100, cur, &args[3]);
    if (rc != NGX_OK) {
        return rc;
    }

    ctx->data = cur;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_extensions_list_sql, args, 5,
                                 ngx_http_cms_extensions_listed);
}


static ngx_int_t
ngx_http_cms_extensions_listed(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_list_send_cursor(r, &ngx_http_cms_extension, res,
                                         ctx->data);
}


/* config: PUT replaces the values; secrets given are replaced, others kept */

static ngx_int_t
ngx_http_cms_extensions_configure(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[2];

    rc = ngx_http_cms_extensions_name(r, ctx);
    if (rc != NGX_OK) {
        return rc;
    }

    if (ctx->body == NULL || !json_is_object(ctx->body)) {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_REQUEST,
                                     NULL, "The body must be a JSON object "
                                           "of configuration values");
    }

    args[0] = ctx->principal.facility_id;
    args[1] = ctx->params[0];

    return ngx_http_cms_pg_query(r, &ngx_http_cms_extensions_manifest_sql,
                                 args, 2,
                                 ngx_http_cms_extensions_config_found);
}


static ngx_int_t
ngx_http_cms_extensions_config_found(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    json_t                            *desc;
    ngx_int_t                          rc;
    ngx_str_t                          args[3], id;
    ngx_http_cms_extensions_values_t   vals;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    if (PQntuples(res) != 1) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    desc = json_loadb(PQgetvalue(res, 0, 1), PQgetlength(res, 0, 1), 0, NULL);
    if (desc == NULL || ngx_http_cms_json_pool(r, desc) != NGX_OK) {
        return NGX_ERROR;
    }

    id.len = PQgetlength(res, 0, 0);
    id.data = ngx_pnalloc(r->pool, id.len);
    if (id.data == NULL) {
        return NGX_ERROR;
    }

    ngx_memcpy(id.data, PQgetvalue(res, 0, 0), id.len);

    vals.fields = json_object_get(desc, "config");
    vals.config = ctx->body;
    vals.ext_id = &id;
    vals.install = 0;

    rc = ngx_http_cms_extensions_values(r, &vals);
    if (rc != NGX_OK) {
        return rc;
    }

    args[0] = id;
    args[1] = vals.rows;
    args[2] = vals.secrets;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_extensions_config_sql,
                                 args, 3,
                                 ngx_http_cms_extensions_configured);
}


static ngx_int_t
ngx_http_cms_extensions_configured(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    ngx_int_t  rc;
    ngx_str_t  body;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    body.len = PQgetlength(res, 0, 0);
    body.data = ngx_pnalloc(r->pool, body.len);
    if (body.data == NULL) {
        return NGX_ERROR;
    }

    ngx_memcpy(body.data, PQgetvalue(res, 0, 0), body.len);

    return ngx_http_cms_send(r, NGX_HTTP_OK, &body);
}


/*
 * The values of "config" checked against the manifest's fields into
 * "rows", a JSON array of {name, value} or {name, cipher} for SQL, and
 * "secrets", the names of the secret fields given (updates).  Missing
 * required fields: those with a default take it; at install a missing
 * required secret is an error, at update it keeps its stored value.
 */
ngx_int_t
ngx_http_cms_extensions_values(ngx_http_request_t *r,
    ngx_http_cms_extensions_values_t *vals)
{
    json_t      *out, *names, *v;
    ngx_int_t    rc;
    const char  *name;

    out = json_array();
    names = json_array();

    if (out == NULL || names == NULL
        || ngx_http_cms_json_pool(r, out) != NGX_OK
        || ngx_http_cms_json_pool(r, names) != NGX_OK)
    {
        return NGX_ERROR;
    }

    json_object_foreach(vals->config, name, v) {
        if (json_object_get(vals->fields, name) == NULL) {
            return ngx_http_cms_extensions_invalid(r, name,
                                                   "not a configuration field "
                                                   "of this extension");
        }
    }

    rc = ngx_http_cms_extensions_rows(r, vals, out, names);
    if (rc != NGX_OK) {
        return rc;
    }

    if (ngx_http_cms_json_dump(r, out, &vals->rows) != NGX_OK) {
        return NGX_ERROR;
    }

    if (vals->install) {
        return NGX_OK;
    }

    return ngx_http_cms_extensions_join(r, names, &vals->secrets);
}


/* a row in "out" for each field given or defaulted; the names of the
   secrets among them in "names" */
static ngx_int_t
ngx_http_cms_extensions_rows(ngx_http_request_t *r,
    ngx_http_cms_extensions_values_t *vals, json_t *out, json_t *names)
{
    json_t      *row, *field, *v;
    ngx_int_t    rc;
    const char  *name;

    json_object_foreach(vals->fields, name, field) {
        v = vals->config ? json_object_get(vals->config, name) : NULL;

        if (v == NULL || json_is_null(v)) {
            v = json_object_get(field, "default");
        }

        if (v == NULL) {
            if (json_is_true(json_object_get(field, "required"))
                && (vals->install
                    || ngx_strcmp(json_string_value(
                                      json_object_get(field, "type")),
                                  "secret") != 0))
            {
                return ngx_http_cms_extensions_invalid(r, name,
                                                       "a required field has "
                                                       "no value");
            }

            continue;
        }

        row = json_object();
        if (row == NULL || json_array_append_new(out, row) != 0) {
            return NGX_ERROR;
        }

        rc = ngx_http_cms_extensions_value(r, name, field, v, vals->ext_id,
                                           row);
        if (rc != NGX_OK) {
            return rc;
        }

        if (json_object_get(row, "cipher") != NULL
            && json_array_append_new(names, json_string(name)) != 0)
        {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/* the names, space-separated: field names are [a-z0-9_] */
static ngx_int_t
ngx_http_cms_extensions_join(ngx_http_request_t *r, json_t *names,
    ngx_str_t *out)
{
    size_t   i;
    json_t  *v;

    out->len = 0;
    out->data = ngx_pnalloc(r->pool, 66 * json_array_size(names) + 1);

    if (out->data == NULL) {
        return NGX_ERROR;
    }

    json_array_foreach(names, i, v) {
        out->len = ngx_sprintf(out->data + out->len, "%s%s",
                               out->len ? " " : "", json_string_value(v))
                   - out->data;
    }

    return NGX_OK;
}


/* one value: its type checked, a secret sealed to (extension, field) */
static ngx_int_t
ngx_http_cms_extensions_value(ngx_http_request_t *r, const char *name,
    json_t *field, json_t *v, ngx_str_t *ext_id, json_t *row)
{
    u_char      *p;
    ngx_str_t    plain, aad, sealed;
    const char  *type;

    type = json_string_value(json_object_get(field, "type"));

    if (json_object_set_new(row, "name", json_string(name)) != 0) {
        return NGX_ERROR;
    }

    if ((ngx_strcmp(type, "number") == 0 && !json_is_number(v))
        || (ngx_strcmp(type, "boolean") == 0 && !json_is_boolean(v))
        || ((ngx_strcmp(type, "string") == 0
             || ngx_strcmp(type, "secret") == 0)
            && (!json_is_string(v) || json_string_length(v) > 4096)))
    {
        p = ngx_pnalloc(r->pool, 64);
        if (p == NULL) {
            return NGX_ERROR;
        }

        ngx_sprintf(p, "must be of type %s%Z", type);

        return ngx_http_cms_extensions_invalid(r, name, (char *) p);
    }

    if (ngx_strcmp(type, "secret") != 0) {
        return ngx_http_cms_extensions_plain(row, v);
    }

    plain.data = (u_char *) json_string_value(v);
    plain.len = json_string_length(v);

    aad.len = ext_id->len + 1 + ngx_strlen(name);
    aad.data = ngx_pnalloc(r->pool, aad.len);
    if (aad.data == NULL) {
        return NGX_ERROR;
    }

    ngx_sprintf(aad.data, "%V:%s", ext_id, name);

    if (ngx_http_cms_crypto_seal(r, &aad, &plain, &sealed) != NGX_OK) {
        return NGX_ERROR;
    }

    return json_object_set_new(row, "cipher",
                               json_stringn((char *) sealed.data, sealed.len))
           == 0 ? NGX_OK : NGX_ERROR;
}


/* a value stored in the clear: strings as they are, numbers and booleans
   as their JSON text */
static ngx_int_t
ngx_http_cms_extensions_plain(json_t *row, json_t *v)
{
    u_char  *p;

    if (json_is_string(v)) {
        return json_object_set(row, "value", v) == 0 ? NGX_OK : NGX_ERROR;
    }

    p = (u_char *) json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
    if (p == NULL) {
        return NGX_ERROR;
    }

    if (json_object_set_new(row, "value", json_string((char *) p)) != 0) {
        free(p);
        return NGX_ERROR;
    }

    free(p);

    return NGX_OK;
}


/* reload: running -> reloading until drain-complete or the grace ends */

static ngx_int_t
ngx_http_cms_extensions_reload(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    u_char                    *p;
    ngx_int_t                  rc;
    ngx_str_t                  args[3];
    ngx_http_cms_main_conf_t  *mcf;

    rc = ngx_http_cms_json_no_body(r, ctx->body);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_cms_extensions_name(r, ctx);
    if (rc != NGX_OK) {
        return rc;
    }

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    p = ngx_pnalloc(r->pool, NGX_TIME_T_LEN);
    if (p == NULL) {
        return NGX_ERROR;
    }

    args[0] = ctx->principal.facility_id;
    args[1] = ctx->params[0];
    args[2].data = p;
    args[2].len = ngx_sprintf(p, "%T", mcf->ext_reload_grace) - p;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_extensions_reload_sql, args,
                                 3, ngx_http_cms_extensions_reloaded);
}


static ngx_int_t
ngx_http_cms_extensions_reloaded(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    if (PQgetisnull(res, 0, 0)) {
        return ngx_http_cms_fail_msg(r, PQgetvalue(res, 0, 2)[0] == 't'
                                        ? NGX_HTTP_CMS_ERR_INVALID_STATE
                                        : NGX_HTTP_CMS_ERR_NOT_FOUND,
                                     NULL,
                                     PQgetvalue(res, 0, 2)[0] == 't'
                                     ? "Only a running extension reloads"
                                     : NULL);
    }

    return ngx_http_cms_send_row(r, NGX_HTTP_OK,
                                 &ngx_http_cms_extension_reload, res);
}


/* rotation: a new key of the mode asked for (live unless "mode" says
   sandbox); the mode's old keys keep working for the grace */

static ngx_int_t
ngx_http_cms_extensions_rotate(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    u_char                    *p;
    ngx_int_t                  rc;
    ngx_str_t                  args[6], *secret;
    ngx_http_cms_main_conf_t  *mcf;

    rc = ngx_http_cms_extensions_name(r, ctx);
    if (rc != NGX_OK) {
        return rc;
    }

    ngx_str_set(&args[2], "live");

    if (ctx->body != NULL) {
        rc = ngx_http_cms_json_read(r, ctx->body,
                                    &ngx_http_cms_extensions_rotate_input,
                                    CMS_FIELDS_PATCH, args, 6);
        if (rc != NGX_OK) {
            return rc;
        }

        if (args[2].data == NULL) {
            ngx_str_set(&args[2], "live");
        }
    }

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    secret = ngx_palloc(r->pool, sizeof(ngx_str_t));
    p = ngx_pnalloc(r->pool, NGX_TIME_T_LEN);

    if (secret == NULL || p == NULL
        || ngx_http_cms_crypto_mint_key(r, args[2].len == 4 ? "sk_live_"
                                                            : "sk_sandbox_",
                                        secret, &args[3], &args[4])
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    ctx->data = secret;

    args[0] = ctx->principal.facility_id;
    args[1] = ctx->params[0];
    args[5].data = p;
    args[5].len = ngx_sprintf(p, "%T", mcf->ext_rotation_grace) - p;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_extensions_rotate_sql, args,
                                 6, ngx_http_cms_extensions_rotated);
}


static ngx_int_t
ngx_http_cms_extensions_rotated(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    if (PQgetisnull(res, 0, 0)) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    return ngx_http_cms_extensions_send_key(r, NGX_HTTP_OK,
                                            &ngx_http_cms_extension_rotated,
                                            res, ctx->data);
}


/* the row's members with "api_key": the secret, answered this once */
ngx_int_t
ngx_http_cms_extensions_send_key(ngx_http_request_t *r, ngx_uint_t status,
    const ngx_http_cms_record_t *rec, PGresult *res, ngx_str_t *secret)
{
    ngx_keyval_t  key;

    ngx_str_set(&key.key, "api_key");
    key.value = *secret;

    return ngx_http_cms_send_row_with(r, status, rec, res, &key);
}


/* the :name of the path: an extension name, else not found */
ngx_int_t
ngx_http_cms_extensions_name(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    size_t      i;
    ngx_str_t  *name;

    name = &ctx->params[0];

    for (i = 0; i < name->len; i++) {
        if (!((name->data[i] >= 'a' && name->data[i] <= 'z')
              || (name->data[i] >= '0' && name->data[i] <= '9')
              || name->data[i] == '-'))
        {
            return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
        }
    }

    return name->len <= 64 ? NGX_OK
                           : ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND,
                                               NULL);
}


/* 422 validation_error naming the field */
ngx_int_t
ngx_http_cms_extensions_invalid(ngx_http_request_t *r, const char *param,
    const char *message)
{
    return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_EXT_VALIDATION, param,
                                 message);
}
