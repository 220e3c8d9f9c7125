
/*
 * Extension install (POST /v1/extensions): the manifest read from the
 * cms_extensions_manifests folder ("file:NAME", in the thread pool) or
 * fetched from an https:// URL on a cms_extensions_registry host (an
 * in-memory subrequest to the internal location
 * cms_extensions_fetch_location, which proxies to $cms_fetch_url with its
 * own size limit and timeouts); then parsed, its configuration checked and
 * sealed, and the extension stored with its first live key.  An install
 * answers "installing"; worker 0 creates the extension's consumer group and
 * marks it running (ngx_http_cms_jobs.c).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_json.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_thread.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_extensions.h"
#include "cms_uuid.h"
#include "cms_manifest.h"
#include "cms_url.h"


#define NGX_HTTP_CMS_MANIFEST_MAX      (64 * 1024)


/* an install between its steps */
typedef struct {
    ngx_str_t                   url;
    ngx_str_t                   text;        /* the manifest */
    ngx_str_t                   path;        /* file: manifests */
    json_t                     *config;
    ngx_int_t                   read_rc;
} ngx_http_cms_install_t;


static ngx_int_t ngx_http_cms_extensions_source(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_install_t *in);
static ngx_int_t ngx_http_cms_extensions_file(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_install_t *in);
static void ngx_http_cms_extensions_read(void *data);
static ngx_int_t ngx_http_cms_extensions_read_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data);
static ngx_int_t ngx_http_cms_extensions_fetch(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_install_t *in);
static ngx_int_t ngx_http_cms_extensions_url(ngx_http_request_t *r,
    ngx_http_cms_install_t *in);
static ngx_int_t ngx_http_cms_extensions_url_refused(ngx_http_request_t *r,
    int rc);
static ngx_int_t ngx_http_cms_extensions_registry(ngx_http_request_t *r,
    ngx_http_cms_install_t *in, cms_url_t *u);
static ngx_int_t ngx_http_cms_extensions_fetched(ngx_http_request_t *r,
    void *data, ngx_int_t rc);
static void ngx_http_cms_extensions_resume(ngx_http_request_t *r);
static ngx_int_t ngx_http_cms_extensions_manifest(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_extensions_parse(ngx_http_request_t *r,
    ngx_http_cms_install_t *in, cms_manifest_t *m);
static ngx_int_t ngx_http_cms_extensions_config(ngx_http_request_t *r,
    ngx_http_cms_install_t *in, json_t *desc, ngx_str_t *args);
static ngx_int_t ngx_http_cms_extensions_columns(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, cms_manifest_t *m, ngx_str_t *args);
static ngx_int_t ngx_http_cms_extensions_installed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static json_t *ngx_http_cms_extensions_describe(cms_manifest_t *m);
static void ngx_http_cms_extensions_describe_fields(cms_manifest_t *m,
    json_t *config);
static json_t *ngx_http_cms_extensions_default(const cms_toml_node_t *def);


/* what install answers (with the new key's secret) */
static const ngx_http_cms_col_t  ngx_http_cms_extension_installed_cols[] = {
    { "name", 0, NGX_HTTP_CMS_COL_STRING },
    { "version", 1, NGX_HTTP_CMS_COL_STRING },
    { "status", 2, NGX_HTTP_CMS_COL_STRING },
    { "api_key_id", 3, NGX_HTTP_CMS_COL_STRING },
};

static const ngx_http_cms_record_t  ngx_http_cms_extension_installed = {
    NULL, NULL, ngx_http_cms_extension_installed_cols,
    sizeof(ngx_http_cms_extension_installed_cols) / sizeof(ngx_http_cms_col_t)
};


/* $1 id, $2 facility, $3 name, $4 version, $5 category, $6 manifest,
   $7 required privilege, $8 privileges, $9 url, $10 config rows,
   $11 key prefix, $12 key hash */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_extensions_install_sql =
    ngx_http_cms_pg_stmt(
        "WITH e AS ("
        "  INSERT INTO extensions (id, facility_id, name, version, category,"
        "   status, manifest, required_privilege, privileges, manifest_url)"
        "  VALUES ($1, $2, $3, $4, $5, 'installing', $6::jsonb, $7,"
        "   string_to_array($8, ' '), $9) RETURNING *),"
        " c AS ("
        "  INSERT INTO extension_configs (extension_id, name, value,"
        "   ciphertext)"
        "  SELECT e.id, x.name, x.value, decode(x.cipher, 'hex')"
        "  FROM e, jsonb_to_recordset($10::jsonb)"
        "   AS x(name text, value text, cipher text)),"
        " k AS ("
        "  INSERT INTO extension_keys (extension_id, facility_id, livemode,"
        "   privileges, key_prefix, secret_hash)"
        "  SELECT e.id, e.facility_id, true, e.privileges, $11,"
        "   decode($12, 'hex') FROM e RETURNING id)"
        " SELECT e.name, e.version, e.status, k.id FROM e, k",
        12);


/*
 * The body: $1 manifest_url (its scheme and host are checked by the
 * source it names), config (an object, read as such afterwards).
 * Missing: 400 invalid_request; present but bad: 422 validation_error.
 */
static const cms_field_t  ngx_http_cms_install_fields[] = {
    { "manifest_url", CMS_FIELD_STRING, CMS_FIELD_REQUIRED, 1, 0, 0,
      0, 2048, NULL, NULL, 0, NULL },
    { "config", CMS_FIELD_OBJECT, 0, 0, 0, 0, 0, NGX_HTTP_CMS_MANIFEST_MAX,
      NULL, NULL, 0, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_install_input = {
    ngx_http_cms_install_fields, NULL,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_EXT_VALIDATION
};


/* the route's handler: the body checked, then the manifest read or fetched */
ngx_int_t
ngx_http_cms_extensions_install(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t                rc;
    ngx_http_cms_install_t  *in;

    in = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_install_t));
    if (in == NULL) {
        return NGX_ERROR;
    }

    ctx->data = in;

    rc = ngx_http_cms_json_read(r, ctx->body, &ngx_http_cms_install_input,
                                CMS_FIELDS_CREATE, &in->url, 1);
    if (rc != NGX_OK) {
        return rc;
    }

    /* checked as an object by the table; the manifest says its fields */
    in->config = json_object_get(ctx->body, "config");

    return ngx_http_cms_extensions_source(r, ctx, in);
}


/* manifest_url's scheme says where the manifest comes from */
static ngx_int_t
ngx_http_cms_extensions_source(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_install_t *in)
{
    if (in->url.len > 5 && ngx_strncmp(in->url.data, "file:", 5) == 0) {
        return ngx_http_cms_extensions_file(r, ctx, in);
    }

    return ngx_http_cms_extensions_fetch(r, ctx, in);
}


/* "file:NAME": development manifests only, from the configured folder */
static ngx_int_t
ngx_http_cms_extensions_file(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_install_t *in)
{
    u_char                    *p;
    size_t                     i, len;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    if (mcf->ext_manifests.data == NULL) {
        return ngx_http_cms_extensions_invalid(r, "manifest_url",
                                               "file: manifests are not "
                                               "enabled on this server");
    }

    p = in->url.data + 5;
    len = in->url.len - 5;

    /* a plain file name: no folder, no way out of the folder */
    for (i = 0; i < len; i++) {
        if (!isalnum(p[i]) && p[i] != '.' && p[i] != '-' && p[i] != '_') {
            break;
        }
    }

    if (i != len || len > 128 || p[0] == '.') {
        return ngx_http_cms_extensions_invalid(r, "manifest_url",
                                               "file: takes a plain file "
                                               "name");
    }

    in->path.len = mcf->ext_manifests.len + 1 + len;
    in->path.data = ngx_pnalloc(r->pool, in->path.len + 1);
    in->text.data = ngx_pnalloc(r->pool, NGX_HTTP_CMS_MANIFEST_MAX + 1);

    if (in->path.data == NULL || in->text.data == NULL) {
        return NGX_ERROR;
    }

    ngx_sprintf(in->path.data, "%V/%*s%Z", &mcf->ext_manifests, len, p);

    /* a file read is I/O: the thread pool does it */
    return ngx_http_cms_thread_run(r, ngx_http_cms_extensions_read, in,
                                   ngx_http_cms_extensions_read_done);
}


/* in a pool thread: plain POSIX calls only */
static void
ngx_http_cms_extensions_read(void *data)
{
    ngx_http_cms_install_t *in = data;

    int          fd;
    size_t       got;
    ssize_t      n;
    struct stat  st;

    in->read_rc = NGX_ERROR;

    /* O_NONBLOCK: a FIFO must not hold the thread; only files are read */
    fd = open((char *) in->path.data, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    if (fd == -1) {
        return;
    }

    if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
        close(fd);
        return;
    }

    got = 0;

    while (got <= NGX_HTTP_CMS_MANIFEST_MAX) {
        n = read(fd, in->text.data + got, NGX_HTTP_CMS_MANIFEST_MAX + 1 - got);

        if (n <= 0) {
            break;
        }

        got += n;
    }

    close(fd);

    in->text.len = got;
    in->read_rc = (n == 0 && got <= NGX_HTTP_CMS_MANIFEST_MAX)
                  ? NGX_OK : NGX_DECLINED;
}


static ngx_int_t
ngx_http_cms_extensions_read_done(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data)
{
    ngx_http_cms_install_t *in = data;

    if (in->read_rc != NGX_OK) {
        return ngx_http_cms_extensions_invalid(r, "manifest_url",
                                               in->read_rc == NGX_DECLINED
                                               ? "the manifest is too large"
                                               : "no such manifest");
    }

    return ngx_http_cms_extensions_manifest(r, ctx);
}


/* https://host/...: an allowed registry, fetched by an in-memory
   subrequest through the internal fetch location */
static ngx_int_t
ngx_http_cms_extensions_fetch(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_install_t *in)
{
    ngx_int_t                     rc;
    ngx_http_request_t           *sr;
    ngx_http_cms_main_conf_t     *mcf;
    ngx_http_post_subrequest_t   *ps;

    rc = ngx_http_cms_extensions_url(r, in);
    if (rc != NGX_OK) {
        return rc;
    }

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    ctx->fetch_url = in->url;

    ps = ngx_palloc(r->pool, sizeof(ngx_http_post_subrequest_t));
    if (ps == NULL) {
        return NGX_ERROR;
    }

    ps->handler = ngx_http_cms_extensions_fetched;
    ps->data = in;

    if (ngx_http_subrequest(r, &mcf->ext_fetch, NULL, &sr, ps,
                            NGX_HTTP_SUBREQUEST_IN_MEMORY
                            | NGX_HTTP_SUBREQUEST_WAITED)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* the parent goes on when the subrequest is done */
    r->write_event_handler = ngx_http_cms_extensions_resume;

    return NGX_DONE;
}


/*
 * manifest_url parsed strictly (cms_url.h: https only, no userinfo, no
 * fragment, a DNS name without punycode or a plain address, path and query
 * percent-encoded), its host:port allow-listed, then replaced by the URL
 * rebuilt from the parts: that is what is fetched and stored, never the
 * raw text.  422 naming manifest_url otherwise.
 */
static ngx_int_t
ngx_http_cms_extensions_url(ngx_http_request_t *r, ngx_http_cms_install_t *in)
{
    int         rc;
    u_char     *p;
    size_t      n;
    cms_url_t   u;

    rc = cms_url_parse((char *) in->url.data, in->url.len,
                       CMS_URL_HTTPS | CMS_URL_NO_IDN, &u);

    if (rc != CMS_URL_OK) {
        return ngx_http_cms_extensions_url_refused(r, rc);
    }

    if (ngx_http_cms_extensions_registry(r, in, &u) != NGX_OK) {
        return ngx_http_cms_extensions_invalid(r, "manifest_url",
                                               "the URL's host is not an "
                                               "allowed registry");
    }

    p = ngx_pnalloc(r->pool, CMS_URL_BUILD_SIZE(in->url.len));
    if (p == NULL) {
        return NGX_ERROR;
    }

    n = cms_url_build((char *) in->url.data, &u, 0, (char *) p,
                      CMS_URL_BUILD_SIZE(in->url.len));
    if (n == 0) {
        return NGX_ERROR;
    }

    in->url.data = p;
    in->url.len = n;

    return NGX_OK;
}


/* 422 naming manifest_url and the URL rule it broke */
static ngx_int_t
ngx_http_cms_extensions_url_refused(ngx_http_request_t *r, int rc)
{
    u_char  *p;

    if (rc == CMS_URL_E_SCHEME || rc == CMS_URL_E_LENGTH) {
        return ngx_http_cms_extensions_invalid(r, "manifest_url",
                                               "manifest_url must be an "
                                               "https:// URL on an allowed "
                                               "registry");
    }

    p = ngx_pnalloc(r->pool, sizeof("manifest_url ")
                             + ngx_strlen(cms_url_error(rc)));
    if (p == NULL) {
        return NGX_ERROR;
    }

    ngx_sprintf(p, "manifest_url %s%Z", cms_url_error(rc));

    return ngx_http_cms_extensions_invalid(r, "manifest_url", (char *) p);
}


/* the URL's host:port is one of the cms_extensions_registry entries,
   normalized the same way at configuration time: NGX_OK, else
   NGX_DECLINED */
static ngx_int_t
ngx_http_cms_extensions_registry(ngx_http_request_t *r,
    ngx_http_cms_install_t *in, cms_url_t *u)
{
    u_char                     auth[CMS_URL_AUTHORITY_SIZE];
    size_t                     n;
    ngx_str_t                 *reg;
    ngx_uint_t                 i;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    if (mcf->ext_registries == NULL) {
        return NGX_DECLINED;
    }

    n = cms_url_authority((char *) in->url.data, u, (char *) auth,
                          sizeof(auth));
    reg = mcf->ext_registries->elts;

    for (i = 0; n > 0 && i < mcf->ext_registries->nelts; i++) {
        if (reg[i].len == n && ngx_memcmp(reg[i].data, auth, n) == 0) {
            return NGX_OK;
        }
    }

    return NGX_DECLINED;
}


/* the subrequest is done: keep what it got for the parent */
static ngx_int_t
ngx_http_cms_extensions_fetched(ngx_http_request_t *r, void *data,
    ngx_int_t rc)
{
    ngx_http_cms_install_t *in = data;

    in->read_rc = NGX_ERROR;

    if (rc != NGX_OK) {
        /*
         * unreachable, timed out, or over subrequest_output_buffer_size:
         * the install is answered with a 422, the client request lives on
         */
        ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                      "cms: fetching a manifest failed");
        return NGX_OK;
    }

    if (r->headers_out.status == NGX_HTTP_OK
        && r->out && r->out->buf)
    {
        in->text.data = r->out->buf->pos;
        in->text.len = r->out->buf->last - r->out->buf->pos;
        in->read_rc = in->text.len <= NGX_HTTP_CMS_MANIFEST_MAX ? NGX_OK
                                                                : NGX_DECLINED;

    } else {
        ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                      "cms: fetching a manifest failed (status %ui)",
                      r->headers_out.status);
    }

    return rc;
}


static void
ngx_http_cms_extensions_resume(ngx_http_request_t *r)
{
    ngx_int_t                rc;
    ngx_http_cms_ctx_t      *ctx;
    ngx_http_cms_install_t  *in;

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);
    in = ctx->data;

    r->write_event_handler = ngx_http_request_empty_handler;

    if (in->read_rc != NGX_OK) {
        rc = ngx_http_cms_extensions_invalid(r, "manifest_url",
                                             in->read_rc == NGX_DECLINED
                                             ? "the manifest is too large"
                                             : "the manifest could not be "
                                               "fetched");

    } else {
        rc = ngx_http_cms_extensions_manifest(r, ctx);
    }

    ngx_http_cms_finish(r, rc);
}


/* the manifest's text is in: parse, check the config, seal, store */
static ngx_int_t
ngx_http_cms_extensions_manifest(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx)
{
    json_t                  *desc;
    ngx_int_t                rc;
    ngx_str_t                args[12], secret;
    cms_manifest_t           m;
    ngx_http_cms_install_t  *in;

    in = ctx->data;

    rc = ngx_http_cms_extensions_parse(r, in, &m);
    if (rc != NGX_OK) {
        return rc;
    }

    desc = ngx_http_cms_extensions_describe(&m);
    if (desc == NULL || ngx_http_cms_json_pool(r, desc) != NGX_OK) {
        return NGX_ERROR;
    }

    rc = ngx_http_cms_extensions_config(r, in, desc, args);
    if (rc != NGX_OK) {
        return rc;
    }

    if (ngx_http_cms_crypto_mint_key(r, "sk_live_", &secret, &args[10],
                                     &args[11])
        != NGX_OK
        || ngx_http_cms_extensions_columns(r, ctx, &m, args) != NGX_OK
        || ngx_http_cms_json_dump(r, desc, &args[5]) != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* the secret is answered once; only its hash goes to the database */
    in->path = secret;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_extensions_install_sql,
                                 args, 12, ngx_http_cms_extensions_installed);
}


/* the text parsed into *m, whose strings point into r->pool; 422 with the
   parser's message */
static ngx_int_t
ngx_http_cms_extensions_parse(ngx_http_request_t *r,
    ngx_http_cms_install_t *in, cms_manifest_t *m)
{
    u_char  *p, *arena, err[CMS_MANIFEST_ERR_SIZE];

    arena = ngx_palloc(r->pool, cms_manifest_arena_size(in->text.len));
    if (arena == NULL) {
        return NGX_ERROR;
    }

    if (cms_manifest_parse((char *) in->text.data, in->text.len, arena,
                           cms_manifest_arena_size(in->text.len), m,
                           (char *) err, sizeof(err))
        == 0)
    {
        return NGX_OK;
    }

    p = ngx_pnalloc(r->pool, sizeof(err) + 16);
    if (p == NULL) {
        return NGX_ERROR;
    }

    ngx_sprintf(p, "manifest: %s%Z", err);

    return ngx_http_cms_extensions_invalid(r, "manifest_url", (char *) p);
}


/* $1, a new id, and $10, the configuration checked against the manifest
   with its secrets sealed to that id */
static ngx_int_t
ngx_http_cms_extensions_config(ngx_http_request_t *r,
    ngx_http_cms_install_t *in, json_t *desc, ngx_str_t *args)
{
    ngx_int_t                          rc;
    ngx_http_cms_extensions_values_t   vals;

    /* the id first: sealed secrets are bound to it */
    if (ngx_http_cms_crypto_uuid7(r->pool, &args[0]) != NGX_OK) {
        return NGX_ERROR;
    }

    vals.fields = json_object_get(desc, "config");
    vals.config = in->config;
    vals.ext_id = &args[0];
    vals.install = 1;

    rc = ngx_http_cms_extensions_values(r, &vals);
    if (rc != NGX_OK) {
        return rc;
    }

    args[9] = vals.rows;

    return NGX_OK;
}


/* $2-$5 and $7-$9 of the insert: the facility, the manifest's names and
   privileges (space-separated for string_to_array), the URL */
static ngx_int_t
ngx_http_cms_extensions_columns(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, cms_manifest_t *m, ngx_str_t *args)
{
    u_char                  *p;
    ngx_str_t                privs;
    ngx_uint_t               i;
    ngx_http_cms_install_t  *in;

    in = ctx->data;

    privs.data = ngx_pnalloc(r->pool, m->nprivileges * 65 + 1);
    if (privs.data == NULL) {
        return NGX_ERROR;
    }

    p = privs.data;

    for (i = 0; i < m->nprivileges; i++) {
        if (i) {
            *p++ = ' ';
        }

        p = ngx_cpymem(p, m->privileges[i].data, m->privileges[i].len);
    }

    privs.len = p - privs.data;

    args[1] = ctx->principal.facility_id;
    args[2].data = (u_char *) m->name.data;
    args[2].len = m->name.len;
    args[3].data = (u_char *) m->version.data;
    args[3].len = m->version.len;
    args[4].data = (u_char *) m->category.data;
    args[4].len = m->category.len;
    args[6].data = (u_char *) m->required_privilege.data;
    args[6].len = m->required_privilege.len;
    args[7] = privs;
    args[8] = in->url;

    return NGX_OK;
}


static ngx_int_t
ngx_http_cms_extensions_installed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    ngx_int_t                rc;
    ngx_http_cms_install_t  *in;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);

    if (rc == NGX_HTTP_CONFLICT) {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_CONFLICT, "name",
                                     "An extension of this name is "
                                     "installed");
    }

    if (rc != NGX_OK) {
        return rc;
    }

    in = ctx->data;

    return ngx_http_cms_extensions_send_key(r, NGX_HTTP_CREATED,
                                            &ngx_http_cms_extension_installed,
                                            res, &in->path);
}


/* a manifest default (string, number or boolean) as JSON */
static json_t *
ngx_http_cms_extensions_default(const cms_toml_node_t *def)
{
    switch (def->type) {

    case CMS_TOML_STRING:
        return json_stringn(def->str, def->str_len);

    case CMS_TOML_INTEGER:
        return json_integer(def->integer);

    case CMS_TOML_FLOAT:
        return json_real(def->number);

    case CMS_TOML_BOOLEAN:
        return json_boolean(def->boolean);

    default:
        return json_null();
    }
}


/* the parsed manifest as JSON, kept with the extension */
static json_t *
ngx_http_cms_extensions_describe(cms_manifest_t *m)
{
    json_t      *desc, *config, *privs;
    ngx_uint_t   i;

    desc = json_object();
    config = json_object();
    privs = json_array();

    if (desc == NULL || config == NULL || privs == NULL) {
        json_decref(desc);
        json_decref(config);
        json_decref(privs);
        return NULL;
    }

    json_object_set_new(desc, "name", json_stringn(m->name.data,
                                                   m->name.len));
    json_object_set_new(desc, "version", json_stringn(m->version.data,
                                                      m->version.len));
    json_object_set_new(desc, "category", json_stringn(m->category.data,
                                                       m->category.len));
    json_object_set_new(desc, "required_privilege",
                        json_stringn(m->required_privilege.data,
                                     m->required_privilege.len));

    for (i = 0; i < m->nprivileges; i++) {
        json_array_append_new(privs, json_stringn(m->privileges[i].data,
                                                  m->privileges[i].len));
    }

    json_object_set_new(desc, "privileges", privs);

    ngx_http_cms_extensions_describe_fields(m, config);

    json_object_set_new(desc, "config", config);

    return desc;
}


/* the configuration fields: {name: {type, required[, default]}} */
static void
ngx_http_cms_extensions_describe_fields(cms_manifest_t *m, json_t *config)
{
    json_t      *f;
    ngx_uint_t   i;

    for (i = 0; i < m->nfields; i++) {
        f = json_pack("{s:s, s:b}",
                      "type", cms_manifest_type_name(m->fields[i].type),
                      "required", m->fields[i].required);

        if (f != NULL && m->fields[i].has_default && m->fields[i].def) {
            json_object_set_new(f, "default",
                                ngx_http_cms_extensions_default(
                                    m->fields[i].def));
        }

        json_object_setn_new(config, m->fields[i].name.data,
                             m->fields[i].name.len, f);
    }
}
