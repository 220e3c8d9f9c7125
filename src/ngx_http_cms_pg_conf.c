
/*
 * The "cms_postgres" directive: the conninfo checked and completed at load
 * time, so that nothing is read on the request path and nothing is
 * resolved by libpq: host names without "hostaddr=" are resolved through
 * nginx's resolver at each connect (ngx_http_cms_pg_conn.c).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_conf.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_resolve.h"


#define NGX_HTTP_CMS_PG_GENERIC  "-c plan_cache_mode=force_generic_plan"
/* how alike a search's words and a title's must be for the fallback
   (docs/search.md); pg_trgm's default, 0.6, misses "wheather" */
#define NGX_HTTP_CMS_PG_TRGM                                                 \
    "-c pg_trgm.word_similarity_threshold=0.4"
/* how times read in text: the module writes a timestamptz column's text
   itself (NGX_HTTP_CMS_COL_TIME), so its form is fixed, whatever the
   server's or the conninfo's settings */
#define NGX_HTTP_CMS_PG_TIME  "-c DateStyle=ISO,YMD -c TimeZone=UTC"


static ngx_int_t ngx_http_cms_pg_refuse(ngx_conf_t *cf,
    ngx_http_cms_pg_conf_t *pcf, PQconninfoOption *opts);
static ngx_int_t ngx_http_cms_pg_hosts(ngx_conf_t *cf,
    ngx_http_cms_pg_conf_t *pcf, const char *host);
static ngx_int_t ngx_http_cms_pg_tls(ngx_conf_t *cf, PQconninfoOption *opts,
    ngx_uint_t addr, const char *host);
static ngx_int_t ngx_http_cms_pg_tls_files(ngx_conf_t *cf,
    PQconninfoOption *opts, ngx_uint_t tls);
static const char *ngx_http_cms_pg_option(PQconninfoOption *opts,
    const char *keyword);
static char *ngx_http_cms_pg_options(ngx_conf_t *cf,
    ngx_http_cms_pg_conf_t *pcf, const char *options);
static ngx_int_t ngx_http_cms_pg_complete(ngx_conf_t *cf,
    ngx_http_cms_pg_conf_t *pcf, PQconninfoOption *opts);
static char *ngx_http_cms_pg_conninfo(ngx_conf_t *cf,
    ngx_http_cms_pg_conf_t *pcf, ngx_str_t *conninfo);
static char *ngx_http_cms_pg_strdup(ngx_pool_t *pool, const char *s);


#define ngx_http_cms_pg_common_params                                       \
    { ngx_string("max="), NGX_HTTP_CMS_PARAM_POSITIVE,                      \
      offsetof(ngx_http_cms_pg_conf_t, max) },                              \
    { ngx_string("depth="), NGX_HTTP_CMS_PARAM_POSITIVE,                    \
      offsetof(ngx_http_cms_pg_conf_t, depth) },                            \
    { ngx_string("queue="), NGX_HTTP_CMS_PARAM_COUNT,                       \
      offsetof(ngx_http_cms_pg_conf_t, queue) },                            \
    { ngx_string("queue_timeout="), NGX_HTTP_CMS_PARAM_MSEC,                \
      offsetof(ngx_http_cms_pg_conf_t, queue_timeout) },                    \
    { ngx_string("query_timeout="), NGX_HTTP_CMS_PARAM_MSEC,                \
      offsetof(ngx_http_cms_pg_conf_t, query_timeout) },                    \
    { ngx_string("connect_timeout="), NGX_HTTP_CMS_PARAM_MSEC,              \
      offsetof(ngx_http_cms_pg_conf_t, connect_timeout) }

static const ngx_http_cms_param_t  ngx_http_cms_pg_params[] = {
    ngx_http_cms_pg_common_params,
    { ngx_null_string, 0, 0 }
};

static const ngx_http_cms_param_t  ngx_http_cms_pg_replica_params[] = {
    ngx_http_cms_pg_common_params,
    { ngx_string("max_lag="), NGX_HTTP_CMS_PARAM_MSEC,
      offsetof(ngx_http_cms_pg_conf_t, max_lag) },
    { ngx_null_string, 0, 0 }
};


static ngx_http_cms_pg_conf_t *ngx_http_cms_pg_conf_make(ngx_conf_t *cf,
    const char *name, const ngx_http_cms_param_t *params);


char *
ngx_http_cms_pg_conf(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_cms_main_conf_t *mcf = conf;

    if (mcf->pg != NULL) {
        return "is duplicate";
    }

    mcf->pg = ngx_http_cms_pg_conf_make(cf, "cms_postgres",
                                        ngx_http_cms_pg_params);

    return mcf->pg != NULL ? NGX_CONF_OK : NGX_CONF_ERROR;
}


/*
 * "cms_postgres_replica": a streaming replica that GET and HEAD requests
 * may read from (ngx_http_cms_pg_replica.c); as many as wanted.
 */
char *
ngx_http_cms_pg_replica_conf(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_cms_main_conf_t *mcf = conf;

    ngx_http_cms_pg_conf_t  **pcf;

    if (mcf->pg_replicas == NULL) {
        mcf->pg_replicas = ngx_array_create(cf->pool, 2,
                                            sizeof(ngx_http_cms_pg_conf_t *));
        if (mcf->pg_replicas == NULL) {
            return NGX_CONF_ERROR;
        }
    }

    pcf = ngx_array_push(mcf->pg_replicas);
    if (pcf == NULL) {
        return NGX_CONF_ERROR;
    }

    *pcf = ngx_http_cms_pg_conf_make(cf, "cms_postgres_replica",
                                     ngx_http_cms_pg_replica_params);

    return *pcf != NULL ? NGX_CONF_OK : NGX_CONF_ERROR;
}


/* a pool's settings from the directive's arguments, or NULL (logged) */
static ngx_http_cms_pg_conf_t *
ngx_http_cms_pg_conf_make(ngx_conf_t *cf, const char *name,
    const ngx_http_cms_param_t *params)
{
    ngx_str_t               *value;
    ngx_http_cms_pg_conf_t  *pcf;

    pcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_cms_pg_conf_t));
    if (pcf == NULL) {
        return NULL;
    }

    pcf->max = 16;
    pcf->depth = 1;
    pcf->queue = 256;
    pcf->queue_timeout = 5000;
    pcf->query_timeout = 10000;
    pcf->connect_timeout = 3000;
    pcf->max_lag = 10000;

    value = cf->args->elts;

    if (ngx_http_cms_conf_params(cf, name, 2, params, pcf) != NGX_OK) {
        return NULL;
    }

    if (pcf->depth > NGX_HTTP_CMS_PG_MAX_DEPTH) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "\"%s\" depth= is at most %d", name,
                           NGX_HTTP_CMS_PG_MAX_DEPTH);
        return NULL;
    }

    if (ngx_http_cms_pg_conninfo(cf, pcf, &value[1]) != NGX_CONF_OK
        || ngx_http_cms_resolve_need(cf, name, &pcf->name) != NGX_OK)
    {
        return NULL;
    }

    return pcf;
}


/*
 * Parses the conninfo with libpq's own (pure) parser and refuses what
 * would block a worker (a host name: libpq resolves it with a blocking
 * name lookup; a service file) and the TLS settings that could end in
 * plain text or in a failure at every connect.  Adds what non-blocking
 * operation needs.
 */
static char *
ngx_http_cms_pg_conninfo(ngx_conf_t *cf, ngx_http_cms_pg_conf_t *pcf,
    ngx_str_t *conninfo)
{
    char               *err, *ci;
    ngx_int_t           rc;
    PQconninfoOption   *opts;

    ci = (char *) ngx_pnalloc(cf->pool, conninfo->len + 1);
    if (ci == NULL) {
        return NGX_CONF_ERROR;
    }

    (void) ngx_cpystrn((u_char *) ci, conninfo->data, conninfo->len + 1);

    err = NULL;
    opts = PQconninfoParse(ci, &err);

    if (opts == NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_postgres: invalid conninfo: %s",
                           err ? err : "out of memory");
        PQfreemem(err);
        return NGX_CONF_ERROR;
    }

    rc = ngx_http_cms_pg_refuse(cf, pcf, opts);

    if (rc == NGX_OK) {
        rc = ngx_http_cms_pg_complete(cf, pcf, opts);
    }

    PQconninfoFree(opts);

    return rc == NGX_OK ? NGX_CONF_OK : NGX_CONF_ERROR;
}


/* a service file, an address libpq would resolve, or TLS settings refused:
   logged, NGX_ERROR */
/* long: one pass over the options, one refusal each */
static ngx_int_t
ngx_http_cms_pg_refuse(ngx_conf_t *cf, ngx_http_cms_pg_conf_t *pcf,
    PQconninfoOption *opts)
{
    const char        *host;
    ngx_uint_t         addr;
    PQconninfoOption  *o;

    addr = 0;
    host = NULL;

    for (o = opts; o->keyword; o++) {
        if (o->val == NULL) {
            continue;
        }

        if (ngx_strcmp(o->keyword, "hostaddr") == 0) {
            addr = 1;

            /* libpq resolves "host" for an empty element: blocking */
            if (o->val[0] == '\0' || o->val[0] == ','
                || o->val[ngx_strlen(o->val) - 1] == ','
                || ngx_strstr(o->val, ",,") != NULL)
            {
                ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                                   "cms_postgres: \"hostaddr=\" has an "
                                   "empty element; libpq would resolve "
                                   "the host name with a blocking lookup");
                return NGX_ERROR;
            }

        } else if (ngx_strcmp(o->keyword, "host") == 0) {
            host = o->val;

        } else if (ngx_strcmp(o->keyword, "service") == 0) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "cms_postgres: \"service\" is not supported");
            return NGX_ERROR;
        }
    }

    if (!addr && host != NULL && host[0] != '/') {
        if (ngx_http_cms_pg_hosts(cf, pcf, host) != NGX_OK) {
            return NGX_ERROR;
        }

    } else if (!addr && (host == NULL || ngx_strchr(host, ','))) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_postgres: use \"host=\" with host names "
                           "or IP addresses, \"hostaddr=\" with IP "
                           "addresses, or \"host=\" with one socket "
                           "folder");
        return NGX_ERROR;
    }

    return ngx_http_cms_pg_tls(cf, opts, addr || pcf->hosts != NULL, host);
}


/*
 * host= without hostaddr=: names or IP addresses, comma-separated as
 * libpq takes them, kept to be resolved at every connect through nginx's
 * resolver; libpq then gets hostaddr= and keeps host= (the name TLS
 * verifies).  A socket folder does not mix with them.
 */
/* long: the list split, each element checked and kept */
static ngx_int_t
ngx_http_cms_pg_hosts(ngx_conf_t *cf, ngx_http_cms_pg_conf_t *pcf,
    const char *host)
{
    size_t      len;
    u_char     *start, *end, *p;
    ngx_str_t  *h;
    ngx_addr_t  addr;

    pcf->hosts = ngx_array_create(cf->pool, 2, sizeof(ngx_str_t));
    if (pcf->hosts == NULL) {
        return NGX_ERROR;
    }

    start = (u_char *) host;
    end = start + ngx_strlen(host);

    for ( ;; ) {
        p = ngx_strlchr(start, end, ',');
        p = (p != NULL) ? p : end;
        len = p - start;

        if (ngx_http_cms_conf_host(start, len) != NGX_OK) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "cms_postgres: \"host=%s\": each element "
                               "must be a host name or an IP address (a "
                               "socket folder does not mix with them)",
                               host);
            return NGX_ERROR;
        }

        h = ngx_array_push(pcf->hosts);
        if (h == NULL) {
            return NGX_ERROR;
        }

        h->len = len;
        h->data = ngx_pnalloc(cf->pool, len + 1);
        if (h->data == NULL) {
            return NGX_ERROR;
        }

        (void) ngx_cpystrn(h->data, start, len + 1);

        if (pcf->name.len == 0
            && ngx_parse_addr(cf->pool, &addr, h->data, len) == NGX_DECLINED)
        {
            pcf->name = *h;
        }

        if (p == end) {
            return NGX_OK;
        }

        start = p + 1;
    }
}


/*
 * TLS: "disable" (what we add when no sslmode is given), "require",
 * "verify-ca" and "verify-full".  "prefer" and "allow" are refused: each
 * may end in plain text without a word in any log.  Verification needs
 * sslrootcert=, since a worker has no ~/.postgresql/root.crt to fall back
 * on, and verify-full needs host= naming the certificate's name: libpq
 * checks the certificate against host= and connects to hostaddr= (no
 * lookup).  libpq never uses TLS over a unix socket, so a socket folder
 * with TLS asked for is refused rather than silently plain.
 */
/* long: one refusal each, with its reason */
static ngx_int_t
ngx_http_cms_pg_tls(ngx_conf_t *cf, PQconninfoOption *opts, ngx_uint_t addr,
    const char *host)
{
    const char  *mode;

    /* libpq's parser turns "requiressl" into "require" or "prefer" */
    mode = ngx_http_cms_pg_option(opts, "sslmode");

    if (mode == NULL || ngx_strcmp(mode, "disable") == 0) {
        return ngx_http_cms_pg_tls_files(cf, opts, 0);
    }

    if (ngx_strcmp(mode, "require") != 0
        && ngx_strcmp(mode, "verify-ca") != 0
        && ngx_strcmp(mode, "verify-full") != 0)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_postgres: sslmode \"%s\" is not supported: "
                           "use \"disable\", \"require\", \"verify-ca\" or "
                           "\"verify-full\" (\"prefer\" and \"allow\" may "
                           "fall back to plain text)", mode);
        return NGX_ERROR;
    }

    if (!addr) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_postgres: sslmode \"%s\" needs \"hostaddr=\": "
                           "libpq does not use TLS over a unix socket", mode);
        return NGX_ERROR;
    }

    if (mode[0] == 'v'
        && ngx_http_cms_pg_option(opts, "sslrootcert") == NULL)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_postgres: sslmode \"%s\" needs "
                           "\"sslrootcert=\" (the CA certificates to verify "
                           "the server with; a worker has no "
                           "~/.postgresql/root.crt)", mode);
        return NGX_ERROR;
    }

    if (ngx_strcmp(mode, "verify-full") == 0 && host == NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_postgres: sslmode \"verify-full\" needs "
                           "\"host=\" with the name the server's certificate "
                           "carries (the address stays in \"hostaddr=\")");
        return NGX_ERROR;
    }

    return ngx_http_cms_pg_tls_files(cf, opts, 1);
}


/*
 * The files libpq reads at every TLS connect, in the worker: absolute
 * (a worker's working folder is not the configuration's) and present
 * now, so that a typo fails nginx -t rather than every connect.  Without
 * TLS they would be ignored: refused, as a sign of a missing sslmode.
 */
static ngx_int_t
ngx_http_cms_pg_tls_files(ngx_conf_t *cf, PQconninfoOption *opts,
    ngx_uint_t tls)
{
    ngx_uint_t        i;
    const char       *path;
    ngx_file_info_t   fi;

    static const char  *files[] = {
        "sslrootcert", "sslcert", "sslkey", "sslcrl", "sslcrldir", NULL
    };

    for (i = 0; files[i] != NULL; i++) {
        path = ngx_http_cms_pg_option(opts, files[i]);

        if (path == NULL) {
            continue;
        }

        if (!tls) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "cms_postgres: \"%s=\" needs \"sslmode=\" "
                               "\"require\", \"verify-ca\" or "
                               "\"verify-full\"", files[i]);
            return NGX_ERROR;
        }

        if (path[0] != '/') {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "cms_postgres: \"%s=\" must be an absolute "
                               "path", files[i]);
            return NGX_ERROR;
        }

        if (ngx_file_info((u_char *) path, &fi) == NGX_FILE_ERROR) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, ngx_errno,
                               "cms_postgres: %s \"%s\" cannot be read",
                               files[i], path);
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/* the value given to "keyword", or NULL */
static const char *
ngx_http_cms_pg_option(PQconninfoOption *opts, const char *keyword)
{
    PQconninfoOption  *o;

    for (o = opts; o->keyword; o++) {
        if (o->val != NULL && ngx_strcmp(o->keyword, keyword) == 0) {
            return o->val;
        }
    }

    return NULL;
}


/* the given keywords copied, then options with the statement timeout,
   hostaddr (for host names), gssencmode, the application name and
   sslmode (unless given) */
/* long: the conninfo copied, then what we add to it */
static ngx_int_t
ngx_http_cms_pg_complete(ngx_conf_t *cf, ngx_http_cms_pg_conf_t *pcf,
    PQconninfoOption *opts)
{
    char              *p;
    ngx_uint_t         n, i;
    const char        *options;
    PQconninfoOption  *o;

    n = 0;
    options = ngx_http_cms_pg_option(opts, "options");

    for (o = opts; o->keyword; o++) {
        n += (o->val != NULL);
    }

    pcf->keywords = ngx_pcalloc(cf->pool, (n + 6) * sizeof(char *));
    pcf->values = ngx_pcalloc(cf->pool, (n + 6) * sizeof(char *));

    if (pcf->keywords == NULL || pcf->values == NULL) {
        return NGX_ERROR;
    }

    i = 0;

    for (o = opts; o->keyword; o++) {
        if (o->val == NULL || ngx_strcmp(o->keyword, "options") == 0) {
            continue;
        }

        pcf->keywords[i] = ngx_http_cms_pg_strdup(cf->pool, o->keyword);
        pcf->values[i++] = ngx_http_cms_pg_strdup(cf->pool, o->val);

        if (pcf->keywords[i - 1] == NULL || pcf->values[i - 1] == NULL) {
            return NGX_ERROR;
        }
    }

    p = ngx_http_cms_pg_options(cf, pcf, options);
    if (p == NULL) {
        return NGX_ERROR;
    }

    pcf->keywords[i] = "options";
    pcf->values[i++] = p;

    if (pcf->hosts != NULL) {
        /* filled at each connect, from the resolver's answers */
        pcf->hostaddr = i;
        pcf->keywords[i++] = "hostaddr";
    }

    pcf->keywords[i] = "gssencmode";
    pcf->values[i++] = "disable";
    pcf->keywords[i] = "fallback_application_name";
    pcf->values[i++] = "ngx_http_cms";

    if (ngx_http_cms_pg_option(opts, "sslmode") == NULL) {
        pcf->keywords[i] = "sslmode";
        pcf->values[i] = "disable";
    }

    return NGX_OK;
}


/* the options a connection starts with: the conninfo's, then the
   statement timeout, generic plans and pg_trgm's threshold; or NULL */
static char *
ngx_http_cms_pg_options(ngx_conf_t *cf, ngx_http_cms_pg_conf_t *pcf,
    const char *options)
{
    char        *p;
    ngx_uint_t   timeout;

    /* the server gives up a little before the module does */
    timeout = pcf->query_timeout > 1000 ? pcf->query_timeout - 500
                                        : pcf->query_timeout * 9 / 10;

    p = ngx_pnalloc(cf->pool, (options ? ngx_strlen(options) : 0)
                              + sizeof(NGX_HTTP_CMS_PG_GENERIC)
                              + sizeof(NGX_HTTP_CMS_PG_TRGM)
                              + sizeof(NGX_HTTP_CMS_PG_TIME) + 64);
    if (p == NULL) {
        return NULL;
    }

    /*
     * Every statement is prepared once per connection and run many times:
     * planned once (a generic plan), not again at every execution (a
     * custom plan costs more than the run of a page read, and a LIMIT $n
     * keeps PostgreSQL choosing one).  Options given in the conninfo that
     * name plan_cache_mode (or pg_trgm's threshold) win; the time settings
     * come last, so that they win.
     */
    ngx_sprintf((u_char *) p, "%s%s-c statement_timeout=%ui%s%s "
                NGX_HTTP_CMS_PG_TIME "%Z",
                options ? options : "", options ? " " : "", timeout,
                (options && ngx_strstr(options, "plan_cache_mode"))
                ? "" : " " NGX_HTTP_CMS_PG_GENERIC,
                (options && ngx_strstr(options, "pg_trgm."))
                ? "" : " " NGX_HTTP_CMS_PG_TRGM);

    return p;
}


/* libpq's parsed values die with PQconninfoFree(): keep copies */
static char *
ngx_http_cms_pg_strdup(ngx_pool_t *pool, const char *s)
{
    size_t   len;
    u_char  *p;

    len = ngx_strlen(s) + 1;
    p = ngx_pnalloc(pool, len);

    if (p != NULL) {
        ngx_memcpy(p, s, len);
    }

    return (char *) p;
}
