
/*
 * "cms_storage s3 ..." (ngx_http_cms_s3.h): the parameters, the
 * endpoint's origin, Host and root path, the credentials file, and the
 * variables the two locations read.
 *
 * The credentials come from a file in the AWS format (aws_access_key_id,
 * aws_secret_access_key, aws_session_token), read once when the
 * configuration loads, never from nginx.conf; a file others may read or
 * write is refused, and no line of it is ever logged.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <sys/stat.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_conf.h"
#include "ngx_http_cms_resolve.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_s3.h"
#include "ngx_http_cms_s3_int.h"
#include "cms_url.h"


#define NGX_HTTP_CMS_S3_CREDENTIALS_MAX  4096


static ngx_int_t ngx_http_cms_s3_endpoint(ngx_conf_t *cf,
    ngx_http_cms_s3_conf_t *scf);
static ngx_int_t ngx_http_cms_s3_peer(ngx_conf_t *cf,
    ngx_http_cms_s3_conf_t *scf, cms_url_t *u, ngx_uint_t path_style);
static ngx_int_t ngx_http_cms_s3_origin(ngx_conf_t *cf,
    ngx_http_cms_s3_conf_t *scf, cms_url_t *u, ngx_uint_t path_style);
static ngx_int_t ngx_http_cms_s3_names(ngx_conf_t *cf,
    ngx_http_cms_s3_conf_t *scf);
static ngx_int_t ngx_http_cms_s3_sizes(ngx_conf_t *cf,
    ngx_http_cms_s3_conf_t *scf);
static ngx_int_t ngx_http_cms_s3_read_credentials(ngx_conf_t *cf,
    ngx_http_cms_s3_conf_t *scf);
static ngx_int_t ngx_http_cms_s3_credential(ngx_conf_t *cf, u_char *line,
    u_char *end, ngx_http_cms_s3_conf_t *scf);
static ngx_int_t ngx_http_cms_s3_unset_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);


static const ngx_http_cms_param_t  ngx_http_cms_s3_params[] = {
    { ngx_string("endpoint="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_s3_conf_t, endpoint) },
    { ngx_string("bucket="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_s3_conf_t, bucket) },
    { ngx_string("region="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_s3_conf_t, region) },
    { ngx_string("credentials="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_s3_conf_t, credentials) },
    { ngx_string("stage="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_s3_conf_t, stage) },
    { ngx_string("path_style="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_s3_conf_t, path_style) },
    { ngx_string("prefix="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_s3_conf_t, prefix) },
    { ngx_string("base_url="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_s3_conf_t, base_url) },
    { ngx_string("multipart="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_s3_conf_t, multipart_text) },
    { ngx_string("part_size="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_s3_conf_t, part_text) },
    { ngx_string("reads="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_s3_conf_t, reads) },
    { ngx_string("expires="), NGX_HTTP_CMS_PARAM_MSEC,
      offsetof(ngx_http_cms_s3_conf_t, expires) },
    { ngx_null_string, 0, 0 }
};


static ngx_str_t  ngx_http_cms_s3_var_names[NGX_HTTP_CMS_S3_VARS] = {
    ngx_string("cms_s3_url"),
    ngx_string("cms_s3_uri"),
    ngx_string("cms_s3_host"),
    ngx_string("cms_s3_method"),
    ngx_string("cms_s3_authorization"),
    ngx_string("cms_s3_date"),
    ngx_string("cms_s3_content_sha256"),
    ngx_string("cms_s3_content_type"),
    ngx_string("cms_s3_token")
};

ngx_int_t  ngx_http_cms_s3_index[NGX_HTTP_CMS_S3_VARS];

/* long: the parameters, each checked, then the stage folder */
char *
ngx_http_cms_s3_conf(ngx_conf_t *cf, ngx_http_cms_main_conf_t *mcf)
{
    ngx_http_cms_s3_conf_t  *scf;

    scf = ngx_pcalloc(cf->pool, sizeof(ngx_http_cms_s3_conf_t));
    if (scf == NULL) {
        return NGX_CONF_ERROR;
    }

    scf->expires = NGX_CONF_UNSET_MSEC;

    if (ngx_http_cms_conf_params(cf, "cms_storage s3", 2,
                                 ngx_http_cms_s3_params, scf)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    if (scf->endpoint.len == 0 || scf->bucket.len == 0
        || scf->region.len == 0 || scf->credentials.len == 0
        || scf->stage.len == 0)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_storage s3 needs endpoint=, bucket=, "
                           "region=, credentials= and stage=");
        return NGX_CONF_ERROR;
    }

    if (ngx_http_cms_s3_names(cf, scf) != NGX_OK
        || ngx_http_cms_s3_sizes(cf, scf) != NGX_OK
        || ngx_http_cms_s3_endpoint(cf, scf) != NGX_OK
        || ngx_http_cms_s3_read_credentials(cf, scf) != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    if (scf->base_url.len
        && (!cms_url_http_valid((char *) scf->base_url.data,
                                scf->base_url.len)
            || scf->base_url.data[scf->base_url.len - 1] == '/'))
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_storage s3: \"base_url=%V\" is not an "
                           "absolute http(s) URL without a trailing \"/\"",
                           &scf->base_url);
        return NGX_CONF_ERROR;
    }

    if (ngx_http_cms_conf_folder(cf, "cms_storage s3: stage=", &scf->stage)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    if (scf->origin.data[4] == 's') {
        scf->ssl = ngx_http_cms_crypto_tls_client(cf, NULL);
        if (scf->ssl == NULL) {
            return NGX_CONF_ERROR;
        }
    }

    mcf->storage = scf->stage;
    mcf->files_base = scf->base_url;
    mcf->s3 = scf;

    return NGX_CONF_OK;
}


/* bucket (S3's rules: 3 to 63 of a-z 0-9 . -), region, prefix, style */
/* long: four names, each with its message */
static ngx_int_t
ngx_http_cms_s3_names(ngx_conf_t *cf, ngx_http_cms_s3_conf_t *scf)
{
    size_t  i;
    u_char  c;

    for (i = 0; i < scf->bucket.len; i++) {
        c = scf->bucket.data[i];

        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
              || c == '.' || c == '-'))
        {
            break;
        }
    }

    if (i != scf->bucket.len || i < 3 || i > 63) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_storage s3: \"bucket=%V\" is not a bucket "
                           "name (3 to 63 of a-z 0-9 . -)", &scf->bucket);
        return NGX_ERROR;
    }

    for (i = 0; i < scf->region.len; i++) {
        c = scf->region.data[i];

        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
        {
            break;
        }
    }

    if (i != scf->region.len || i > CMS_SIGV4_REGION_MAX) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_storage s3: \"region=%V\" is not a region "
                           "(a-z 0-9 -)", &scf->region);
        return NGX_ERROR;
    }

    /* a prefix is a key's beginning: what a key may hold, "/" last */
    for (i = 0; i < scf->prefix.len; i++) {
        c = scf->prefix.data[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9') || c == '-' || c == '_'
              || (c == '/' && i > 0 && scf->prefix.data[i - 1] != '/')))
        {
            break;
        }
    }

    if (i != scf->prefix.len
        || (i && scf->prefix.data[i - 1] != '/'))
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_storage s3: \"prefix=%V\" is not folders "
                           "ending in \"/\" (a-z A-Z 0-9 - _)",
                           &scf->prefix);
        return NGX_ERROR;
    }

    if (scf->path_style.len
        && ngx_strcmp(scf->path_style.data, "on") != 0
        && ngx_strcmp(scf->path_style.data, "off") != 0)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_storage s3: \"path_style=%V\" is neither "
                           "\"on\" nor \"off\"", &scf->path_style);
        return NGX_ERROR;
    }

    return NGX_OK;
}


/*
 * reads= and expires=; multipart= (objects above it go in parts; default
 * 64m) and part_size=
 * (8m by default; S3 takes parts of 5 MiB or more, and 10,000 parts at
 * most: 80 GiB objects at 8 MiB)
 */
/* long: two pairs of parameters, each pair with its message */
static ngx_int_t
ngx_http_cms_s3_sizes(ngx_conf_t *cf, ngx_http_cms_s3_conf_t *scf)
{
    scf->multipart = 64 * 1024 * 1024;
    scf->part_size = 8 * 1024 * 1024;

    if (scf->multipart_text.len) {
        scf->multipart = ngx_parse_offset(&scf->multipart_text);
    }

    if (scf->part_text.len) {
        scf->part_size = ngx_parse_offset(&scf->part_text);
    }

    /* reads=proxy (through @cms_s3) or redirect (to a presigned URL,
       valid expires=, 5m by default, 7 days at most) */
    scf->redirect = (scf->reads.len == 8
                     && ngx_strncmp(scf->reads.data, "redirect", 8) == 0);
    ngx_conf_init_msec_value(scf->expires, 300000);

    if ((scf->reads.len && !scf->redirect
         && (scf->reads.len != 5
             || ngx_strncmp(scf->reads.data, "proxy", 5) != 0))
        || scf->expires < 1000
        || scf->expires > (ngx_msec_t) CMS_SIGV4_EXPIRES_MAX * 1000)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_storage s3: \"reads=\" is \"proxy\" or "
                           "\"redirect\", and \"expires=\" a time of 1s to "
                           "7d");
        return NGX_ERROR;
    }

    if (scf->multipart == NGX_ERROR || scf->part_size == NGX_ERROR
        || scf->part_size < 5 * 1024 * 1024
        || scf->multipart < scf->part_size)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_storage s3: \"part_size=\" is a size of "
                           "5m or more, and \"multipart=\" one of at least "
                           "part_size=");
        return NGX_ERROR;
    }

    return NGX_OK;
}


/*
 * endpoint= through the strict URL parser: the origin requests go to,
 * the Host they carry (the bucket's name first unless path_style=on),
 * and the path every key is under
 */
static ngx_int_t
ngx_http_cms_s3_endpoint(ngx_conf_t *cf, ngx_http_cms_s3_conf_t *scf)
{
    int         rc;
    u_char     *s;
    ngx_str_t   name;
    cms_url_t   u;
    ngx_uint_t  path_style;

    s = scf->endpoint.data;
    rc = cms_url_parse((char *) s, scf->endpoint.len,
                       CMS_URL_HTTP | CMS_URL_HTTPS, &u);

    if (rc == CMS_URL_OK && ((u.path.len > 1) || u.has_query)) {
        rc = CMS_URL_E_PATH;
    }

    if (rc != CMS_URL_OK) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_storage s3: \"endpoint=%V\" %s (an http(s) "
                           "origin, no path)", &scf->endpoint,
                           cms_url_error(rc));
        return NGX_ERROR;
    }

    path_style = (scf->path_style.len && scf->path_style.data[1] == 'n');

    if (!path_style && u.host_type != CMS_URL_HOST_NAME) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_storage s3: \"endpoint=%V\" is an address: "
                           "the bucket cannot go in front of it "
                           "(path_style=on)", &scf->endpoint);
        return NGX_ERROR;
    }

    /* objects are read through proxy_pass, the sweeper's requests on the
       module's client: both resolve a name through http{}'s resolver */
    if (u.host_type == CMS_URL_HOST_NAME) {
        name.data = s + u.host.off;
        name.len = u.host.len;

        if (ngx_http_cms_resolve_need(cf, "cms_storage s3: endpoint=", &name)
            != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return ngx_http_cms_s3_origin(cf, scf, &u, path_style);
}


/* the origin, the Host header and the root path of every key */
/* long: three strings, byte by byte */
static ngx_int_t
ngx_http_cms_s3_origin(ngx_conf_t *cf, ngx_http_cms_s3_conf_t *scf,
    cms_url_t *u, ngx_uint_t path_style)
{
    u_char      *s, *p;
    size_t       n;
    ngx_uint_t   v6;

    s = scf->endpoint.data;
    v6 = (u->host_type == CMS_URL_HOST_IPV6);

    /* "[v6]" or "bucket." name, ":port" when given */
    n = scf->bucket.len + 1 + u->host.len + 2 + 6;

    scf->host.data = ngx_pnalloc(cf->pool, n);
    scf->origin.data = ngx_pnalloc(cf->pool, sizeof("https://") + n);
    scf->root.data = ngx_pnalloc(cf->pool,
                                 2 + scf->bucket.len + scf->prefix.len);

    if (scf->host.data == NULL || scf->origin.data == NULL
        || scf->root.data == NULL)
    {
        return NGX_ERROR;
    }

    p = scf->host.data;

    if (!path_style) {
        p = ngx_cpymem(p, scf->bucket.data, scf->bucket.len);
        *p++ = '.';
    }

    if (v6) {
        *p++ = '[';
    }

    p = ngx_cpymem(p, s + u->host.off, u->host.len);

    if (v6) {
        *p++ = ']';
    }

    if (u->has_port) {
        p = ngx_sprintf(p, ":%ui", (ngx_uint_t) u->port_num);
    }

    scf->host.len = p - scf->host.data;
    ngx_strlow(scf->host.data, scf->host.data, scf->host.len);

    if (ngx_http_cms_s3_peer(cf, scf, u, path_style) != NGX_OK) {
        return NGX_ERROR;
    }

    p = ngx_cpymem(scf->origin.data, u->https ? "https://" : "http://",
                   u->https ? 8 : 7);
    p = ngx_cpymem(p, scf->host.data, scf->host.len);
    scf->origin.len = p - scf->origin.data;

    p = scf->root.data;
    *p++ = '/';

    if (path_style) {
        p = ngx_cpymem(p, scf->bucket.data, scf->bucket.len);
        *p++ = '/';
    }

    scf->bucket_root.data = scf->root.data;
    scf->bucket_root.len = p - scf->root.data;

    if (scf->prefix.len) {
        p = ngx_cpymem(p, scf->prefix.data, scf->prefix.len);
    }

    scf->root.len = p - scf->root.data;

    return NGX_OK;
}


/* the name and port the sweeper connects to: the Host without [] nor
   port (ngx_http_cms_client.h) */
static ngx_int_t
ngx_http_cms_s3_peer(ngx_conf_t *cf, ngx_http_cms_s3_conf_t *scf,
    cms_url_t *u, ngx_uint_t path_style)
{
    u_char  *p;

    scf->peer.data = ngx_pnalloc(cf->pool, scf->host.len + 1);
    if (scf->peer.data == NULL) {
        return NGX_ERROR;
    }

    p = scf->peer.data;

    if (!path_style) {
        p = ngx_cpymem(p, scf->host.data, scf->bucket.len + 1);
    }

    p = ngx_cpymem(p, scf->endpoint.data + u->host.off, u->host.len);
    scf->peer.len = p - scf->peer.data;
    *p = '\0';
    ngx_strlow(scf->peer.data, scf->peer.data, scf->peer.len);
    scf->port = (in_port_t) u->port_num;

    return NGX_OK;
}


/*
 * The credentials file: "name = value" lines of the AWS format (a
 * "[profile]" line and "#" comments skipped), the file neither readable
 * nor writable by others
 */
/* long: the file checked, read, then its lines */
static ngx_int_t
ngx_http_cms_s3_read_credentials(ngx_conf_t *cf, ngx_http_cms_s3_conf_t *scf)
{
    u_char          *p, *last, *nl;
    ngx_str_t        text;
    struct stat      sb;

    if (ngx_conf_full_name(cf->cycle, &scf->credentials, 1) != NGX_OK) {
        return NGX_ERROR;
    }

    if (stat((char *) scf->credentials.data, &sb) == -1) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, ngx_errno,
                           "cms_storage s3: cannot read \"credentials=%V\"",
                           &scf->credentials);
        return NGX_ERROR;
    }

    if (sb.st_mode & (S_IROTH | S_IWOTH)) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_storage s3: \"credentials=%V\" is open to "
                           "others (mode %04uo; chmod o-rw)",
                           &scf->credentials,
                           (ngx_uint_t) (sb.st_mode & 07777));
        return NGX_ERROR;
    }

    if (ngx_http_cms_conf_secret_file(cf, "cms_storage s3",
                                      &scf->credentials,
                                      NGX_HTTP_CMS_S3_CREDENTIALS_MAX, &text)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    p = text.data;
    last = p + text.len;

    while (p < last) {
        nl = ngx_strlchr(p, last, '\n');
        if (nl == NULL) {
            nl = last;
        }

        if (ngx_http_cms_s3_credential(cf, p, nl, scf) != NGX_OK) {
            return NGX_ERROR;
        }

        p = nl + 1;
    }

    if (scf->key_id.len == 0 || scf->secret.len == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_storage s3: \"credentials=%V\" has no "
                           "aws_access_key_id and aws_secret_access_key",
                           &scf->credentials);
        return NGX_ERROR;
    }

    return NGX_OK;
}


/* one line of the credentials file; an unknown name is refused */
/* long: the line trimmed, split, then matched */
static ngx_int_t
ngx_http_cms_s3_credential(ngx_conf_t *cf, u_char *line, u_char *end,
    ngx_http_cms_s3_conf_t *scf)
{
    u_char     *eq, *v, *n;
    ngx_str_t  *to;

    while (line < end && (*line == ' ' || *line == '\t')) {
        line++;
    }

    while (end > line && (end[-1] == '\r' || end[-1] == ' '
                          || end[-1] == '\t'))
    {
        end--;
    }

    if (line == end || *line == '#' || *line == ';' || *line == '[') {
        return NGX_OK;
    }

    eq = ngx_strlchr(line, end, '=');
    if (eq == NULL) {
        goto bad;
    }

    for (n = eq; n > line && (n[-1] == ' ' || n[-1] == '\t'); n--) {
        /* void */
    }

    for (v = eq + 1; v < end && (*v == ' ' || *v == '\t'); v++) {
        /* void */
    }

#define ngx_http_cms_s3_is(name)                                              \
    ((size_t) (n - line) == sizeof(name) - 1                                  \
     && ngx_strncmp(line, name, sizeof(name) - 1) == 0)

    to = ngx_http_cms_s3_is("aws_access_key_id") ? &scf->key_id
         : ngx_http_cms_s3_is("aws_secret_access_key") ? &scf->secret
         : ngx_http_cms_s3_is("aws_session_token") ? &scf->token
         : NULL;

    if (to == NULL || v == end
        || (size_t) (end - v) > ((to == &scf->token) ? 2048
                                 : CMS_SIGV4_SECRET_MAX))
    {
        goto bad;
    }

    to->data = v;
    to->len = end - v;

    return NGX_OK;

bad:

    /* the line may hold a secret: never in the log */
    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                       "cms_storage s3: \"credentials=%V\" has a line that "
                       "is not aws_access_key_id, aws_secret_access_key or "
                       "aws_session_token = value", &scf->credentials);
    return NGX_ERROR;
}


ngx_int_t
ngx_http_cms_s3_add_variables(ngx_conf_t *cf)
{
    ngx_uint_t            i;
    ngx_http_variable_t  *var;

    for (i = 0; i < NGX_HTTP_CMS_S3_VARS; i++) {
        var = ngx_http_add_variable(cf, &ngx_http_cms_s3_var_names[i], 0);
        if (var == NULL) {
            return NGX_ERROR;
        }

        var->get_handler = ngx_http_cms_s3_unset_variable;

        if (i == NGX_HTTP_CMS_S3_AUTHORIZATION || i == NGX_HTTP_CMS_S3_DATE) {
            /* a read's: signed when first asked for */
            var->get_handler = ngx_http_cms_s3_signed_variable;
            var->data = i;
        }

        ngx_http_cms_s3_index[i] =
            ngx_http_get_variable_index(cf, &ngx_http_cms_s3_var_names[i]);

        if (ngx_http_cms_s3_index[i] == NGX_ERROR) {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/* set by the module on the request before it runs, or none */
static ngx_int_t
ngx_http_cms_s3_unset_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    v->not_found = 1;

    return NGX_OK;
}
