
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
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_auth.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_query.h"
#include "ngx_http_cms_extensions.h"


static ngx_int_t ngx_http_cms_extensions_list(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_extensions_limit(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *arg);
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


static ngx_http_cms_pg_stmt_t  ngx_http_cms_extensions_list_sql =
    ngx_http_cms_pg_stmt(
        "SELECT cms_extension_json(e)::text FROM extensions e"
        " WHERE e.facility_id = $1"
        "  AND ($2::text IS NULL OR e.category = $2)"
        "  AND ($3::boolean IS NULL OR e.is_enabled = $3)"
        "  AND ($4::text IS NULL OR e.name > $4)"
        " ORDER BY e.name LIMIT $5::integer + 1",
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
        " SELECT (SELECT json_build_object('name', u.name,"
        "   'status', u.status)::text FROM u),"
        "  EXISTS (SELECT 1 FROM extensions"
        "   WHERE facility_id = $1 AND name = $2)",
        3);

/* $1 facility, $2 name, $3 livemode, $4 prefix, $5 hash, $6 grace */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_extensions_rotate_sql =
    ngx_http_cms_pg_stmt(
        "SELECT cms_extension_key_rotate($1, $2, $3 = 'live', $4,"
        " decode($5, 'hex'), make_interval(secs => $6::float8))::text",
        6);


/* POST .../keys/rotate: no body, {} or {"mode": "live" | "sandbox"} */
static const char *const  ngx_http_cms_extensions_modes[] = {
    "live", "sandbox", NULL
};

static const cms_field_t  ngx_http_cms_extensions_rotate_fields[] = {
    { "mode", CMS_FIELD_STRING, 0, 3, 0, 0, 4, 7,
      ngx_http_cms_extensions_modes, NULL },
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
    ngx_int_t  rc;
    ngx_str_t  args[5], v;

    args[0] = ctx->principal.facility_id;
    ngx_str_null(&args[1]);
    ngx_str_null(&args[2]);
    ngx_str_null(&args[3]);

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

    rc = ngx_http_cms_query_arg(r, "starting_after", 64, &args[3]);
    if (rc != NGX_OK && rc != NGX_DECLINED) {
        return rc;
    }

    rc = ngx_http_cms_extensions_limit(r, ctx, &args[4]);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_extensions_list_sql, args, 5,
                                 ngx_http_cms_extensions_listed);
}


/* ?limit= (1 to 100, else 20) as the query's $5, and in ctx->data the
   page size the rows are cut to */
static ngx_int_t
ngx_http_cms_extensions_limit(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_str_t *arg)
{
    ngx_int_t    rc;
    ngx_uint_t   n, *limit;

    ngx_str_set(arg, "20");

    rc = ngx_http_cms_query_uint(r, "limit", &n);

    if (rc == NGX_ABORT || (rc == NGX_OK && (n < 1 || n > 100))) {
        return ngx_http_cms_extensions_invalid(r, "limit",
                                               "limit must be an integer "
                                               "from 1 to 100");
    }

    if (rc == NGX_OK) {
        arg->data = ngx_pnalloc(r->pool, NGX_INT_T_LEN);
        if (arg->data == NULL) {
            return NGX_ERROR;
        }

        arg->len = ngx_sprintf(arg->data, "%ui", n) - arg->data;

    } else if (rc != NGX_DECLINED) {
        return rc;
    }

    limit = ngx_palloc(r->pool, sizeof(ngx_uint_t));
    if (limit == NULL) {
        return NGX_ERROR;
    }

    *limit = ngx_atoi(arg->data, arg->len);
    ctx->data = limit;

    return NGX_OK;
}


/* the page written from the rows: {data: [...], has_more} */
static ngx_int_t
ngx_http_cms_extensions_listed(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    int         i, rows;
    u_char     *p;
    size_t      len;
    ngx_int_t   rc;
    ngx_str_t   body;
    ngx_uint_t  limit;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    limit = *(ngx_uint_t *) ctx->data;
    rows = ngx_min(PQntuples(res), (int) limit);
    len = sizeof("{\"data\":[],\"has_more\":false}");

    for (i = 0; i < rows; i++) {
        len += PQgetlength(res, i, 0) + 1;
    }

    body.data = ngx_pnalloc(r->pool, len);
    if (body.data == NULL) {
        return NGX_ERROR;
    }

    p = ngx_cpymem(body.data, "{\"data\":[", 9);

    for (i = 0; i < rows; i++) {
        if (i) {
            *p++ = ',';
        }

        p = ngx_cpymem(p, PQgetvalue(res, i, 0), PQgetlength(res, i, 0));
    }

    p = ngx_sprintf(p, "],\"has_more\":%s}",
                    PQntuples(res) > (int) limit ? "true" : "false");
    body.len = p - body.data;

    return ngx_http_cms_send(r, NGX_HTTP_OK, &body);
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
        return ngx_http_cms_fail_msg(r, PQgetvalue(res, 0, 1)[0] == 't'
                                        ? NGX_HTTP_CMS_ERR_INVALID_STATE
                                        : NGX_HTTP_CMS_ERR_NOT_FOUND,
                                     NULL,
                                     PQgetvalue(res, 0, 1)[0] == 't'
                                     ? "Only a running extension reloads"
                                     : NULL);
    }

    return ngx_http_cms_send_column(r, NGX_HTTP_OK, NULL, res, 0);
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

    return ngx_http_cms_extensions_send_key(r, NGX_HTTP_OK, res, ctx->data);
}


/* the row's JSON object with "api_key": the secret, answered this once */
ngx_int_t
ngx_http_cms_extensions_send_key(ngx_http_request_t *r, ngx_uint_t status,
    PGresult *res, ngx_str_t *secret)
{
    json_t  *json;

    json = json_loadb(PQgetvalue(res, 0, 0), PQgetlength(res, 0, 0), 0, NULL);
    if (json == NULL || ngx_http_cms_json_pool(r, json) != NGX_OK
        || json_object_set_new(json, "api_key",
                               json_stringn((char *) secret->data,
                                            secret->len))
           != 0)
    {
        return NGX_ERROR;
    }

    return ngx_http_cms_send_json(r, status, json);
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
