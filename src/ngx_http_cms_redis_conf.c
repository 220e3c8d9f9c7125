
/*
 * The "cms_redis" directive: an IP address with a port, a unix socket, or
 * a host name with a port (resolved through nginx's resolver at every
 * connect, never here: ngx_http_cms_redis_conn.c), the pool's limits, the
 * credential: an ACL user and a password read from a file (never written
 * in nginx.conf), sent as AUTH before any other command on every new
 * connection, and TLS on nginx's own SSL helpers, with the server's
 * certificate verified against a CA and a name.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_conf.h"
#include "ngx_http_cms_redis.h"
#include "ngx_http_cms_resolve.h"


static ngx_int_t ngx_http_cms_redis_address(ngx_conf_t *cf,
    ngx_http_cms_redis_conf_t *rcf, ngx_str_t *value);
static ngx_int_t ngx_http_cms_redis_name(ngx_conf_t *cf,
    ngx_http_cms_redis_conf_t *rcf, ngx_str_t *value);
static ngx_int_t ngx_http_cms_redis_auth(ngx_conf_t *cf,
    ngx_http_cms_redis_conf_t *rcf);
static ngx_int_t ngx_http_cms_redis_tls(ngx_conf_t *cf,
    ngx_http_cms_redis_conf_t *rcf);
static ngx_int_t ngx_http_cms_redis_tls_ctx(ngx_conf_t *cf,
    ngx_http_cms_redis_conf_t *rcf);


#define NGX_HTTP_CMS_REDIS_PASSWORD_MAX  1024


static const ngx_http_cms_param_t  ngx_http_cms_redis_params[] = {
    { ngx_string("max="), NGX_HTTP_CMS_PARAM_POSITIVE,
      offsetof(ngx_http_cms_redis_conf_t, max) },
    { ngx_string("queue="), NGX_HTTP_CMS_PARAM_COUNT,
      offsetof(ngx_http_cms_redis_conf_t, queue) },
    { ngx_string("timeout="), NGX_HTTP_CMS_PARAM_MSEC,
      offsetof(ngx_http_cms_redis_conf_t, timeout) },
    { ngx_string("user="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_redis_conf_t, user) },
    { ngx_string("password_file="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_redis_conf_t, password_file) },
    { ngx_string("tls="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_redis_conf_t, tls) },
    { ngx_string("tls_ca="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_redis_conf_t, tls_ca) },
    { ngx_string("tls_name="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_redis_conf_t, tls_name) },
    { ngx_string("tls_cert="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_redis_conf_t, tls_cert) },
    { ngx_string("tls_key="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_redis_conf_t, tls_key) },
    { ngx_null_string, 0, 0 }
};


char *
ngx_http_cms_redis_conf(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_cms_main_conf_t *mcf = conf;

    ngx_str_t                  *value;
    ngx_http_cms_redis_conf_t  *rcf;

    if (mcf->redis != NULL) {
        return "is duplicate";
    }

    rcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_cms_redis_conf_t));
    if (rcf == NULL) {
        return NGX_CONF_ERROR;
    }

    rcf->max = 8;
    rcf->queue = 256;
    rcf->timeout = 3000;

    value = cf->args->elts;

    if (ngx_http_cms_redis_address(cf, rcf, &value[1]) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    if (ngx_http_cms_conf_params(cf, "cms_redis", 2,
                                 ngx_http_cms_redis_params, rcf)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    if (ngx_http_cms_redis_auth(cf, rcf) != NGX_OK
        || ngx_http_cms_redis_tls(cf, rcf) != NGX_OK
        || ngx_http_cms_resolve_need(cf, "cms_redis", &rcf->host) != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    mcf->redis = rcf;

    return NGX_CONF_OK;
}


/* "unix:/path", "ip:port" or "name:port"; logs why not */
static ngx_int_t
ngx_http_cms_redis_address(ngx_conf_t *cf, ngx_http_cms_redis_conf_t *rcf,
    ngx_str_t *value)
{
    ngx_url_t  u;

    rcf->addr.name = *value;

    if (ngx_strncmp(value->data, "unix:", 5) == 0) {
        ngx_memzero(&u, sizeof(ngx_url_t));
        u.url = *value;

        if (ngx_parse_url(cf->pool, &u) != NGX_OK || u.naddrs == 0) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "cms_redis: invalid socket \"%V\"", value);
            return NGX_ERROR;
        }

        rcf->addr.sockaddr = u.addrs[0].sockaddr;
        rcf->addr.socklen = u.addrs[0].socklen;

        return NGX_OK;
    }

    if (ngx_parse_addr_port(cf->pool, &rcf->addr, value->data, value->len)
        == NGX_OK)
    {
        rcf->addr.name = *value;

        if (ngx_inet_get_port(rcf->addr.sockaddr) != 0) {
            return NGX_OK;
        }

    } else if (ngx_http_cms_redis_name(cf, rcf, value) == NGX_OK) {
        return NGX_OK;
    }

    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                       "cms_redis: \"%V\" is not an IP address, or a host "
                       "name, with a port, nor a \"unix:\" path", value);
    return NGX_ERROR;
}


/*
 * "name:port": a DNS name (letters, digits, "-", "_" and dots, at most
 * 253 bytes) resolved through the "resolver" at each connect, and a port
 * from 1 to 65535.  NGX_OK, or NGX_DECLINED (the caller says why).
 */
static ngx_int_t
ngx_http_cms_redis_name(ngx_conf_t *cf, ngx_http_cms_redis_conf_t *rcf,
    ngx_str_t *value)
{
    u_char     *colon;
    ngx_int_t   port;

    colon = ngx_strlchr(value->data, value->data + value->len, ':');

    if (colon == NULL
        || ngx_http_cms_conf_host(value->data, colon - value->data) != NGX_OK)
    {
        return NGX_DECLINED;
    }

    port = ngx_atoi(colon + 1, value->data + value->len - colon - 1);

    if (port < 1 || port > 65535) {
        return NGX_DECLINED;
    }

    rcf->host.len = colon - value->data;
    rcf->host.data = value->data;
    rcf->port = (in_port_t) port;

    return NGX_OK;
}


/* "AUTH [user] password" formatted once, from password_file= */
/* long: the checks of the two parameters, then the command's arguments */
static ngx_int_t
ngx_http_cms_redis_auth(ngx_conf_t *cf, ngx_http_cms_redis_conf_t *rcf)
{
    int                         argc;
    size_t                      len[3];
    ngx_int_t                   rc;
    ngx_str_t                   password;
    const char                 *argv[3];
    ngx_http_cms_redis_cmds_t   cmds;

    if (rcf->password_file.len == 0) {
        if (rcf->user.len) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "cms_redis: \"user=\" needs "
                               "\"password_file=\"");
            return NGX_ERROR;
        }

        return NGX_OK;
    }

    if (ngx_http_cms_conf_secret_file(cf, "cms_redis", &rcf->password_file,
                                      NGX_HTTP_CMS_REDIS_PASSWORD_MAX,
                                      &password)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (password.len == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_redis: \"%V\" must hold a password of 1 "
                           "to %d bytes", &rcf->password_file,
                           NGX_HTTP_CMS_REDIS_PASSWORD_MAX - 1);
        return NGX_ERROR;
    }

    argc = 0;
    argv[argc] = "AUTH";
    len[argc++] = 4;

    if (rcf->user.len) {
        argv[argc] = (const char *) rcf->user.data;
        len[argc++] = rcf->user.len;
    }

    argv[argc] = (const char *) password.data;
    len[argc++] = password.len;

    ngx_memzero(&cmds, sizeof(ngx_http_cms_redis_cmds_t));

    rc = ngx_http_cms_redis_append(cf->pool, &cmds, argc, argv, len);

    /* the formatted command is the one copy kept */
    ngx_explicit_memzero(password.data, password.len);

    rcf->auth = cmds.out;

    return rc;
}


ngx_int_t
ngx_http_cms_redis_auth_check(ngx_http_cms_redis_conf_t *rcf, ngx_log_t *log,
    redisReply *reply)
{
    ngx_str_t  user;

    ngx_str_set(&user, "default");

    if (rcf->user.len) {
        user = rcf->user;
    }

    if (reply->type == REDIS_REPLY_STATUS && reply->len == 2
        && ngx_strncmp(reply->str, "OK", 2) == 0)
    {
        return NGX_OK;
    }

    /* WRONGPASS, NOAUTH, ... : Redis' words name the cause, not the secret */
    if (reply->type == REDIS_REPLY_ERROR) {
        ngx_log_error(NGX_LOG_ERR, log, 0,
                      "cms: redis at \"%V\" refused AUTH as user \"%V\": %*s",
                      &rcf->addr.name, &user, (size_t) reply->len,
                      reply->str);

    } else {
        ngx_log_error(NGX_LOG_ERR, log, 0,
                      "cms: redis at \"%V\" answered AUTH as user \"%V\" "
                      "with a reply of type %d", &rcf->addr.name, &user,
                      reply->type);
    }

    return NGX_ERROR;
}


/*
 * tls=on: a TCP address (Redis has no TLS over a unix socket), the CA
 * certificates to verify the server with (tls_ca=) and the name its
 * certificate must carry (tls_name=, or the host name of the address);
 * a client certificate is tls_cert= with tls_key=.  Without tls=on, any
 * tls_*= is refused, as a sign of a forgotten tls=on.
 */
/* long: one refusal each, with its reason */
static ngx_int_t
ngx_http_cms_redis_tls(ngx_conf_t *cf, ngx_http_cms_redis_conf_t *rcf)
{
    u_char  *p;

    if (rcf->tls.len == 0
        || (rcf->tls.len == 3 && ngx_strncmp(rcf->tls.data, "off", 3) == 0))
    {
        if (rcf->tls_ca.len || rcf->tls_name.len || rcf->tls_cert.len
            || rcf->tls_key.len)
        {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "cms_redis: \"tls_ca=\", \"tls_name=\", "
                               "\"tls_cert=\" and \"tls_key=\" need "
                               "\"tls=on\"");
            return NGX_ERROR;
        }

        return NGX_OK;
    }

    if (rcf->tls.len != 2 || ngx_strncmp(rcf->tls.data, "on", 2) != 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_redis: invalid value \"tls=%V\": use \"on\" "
                           "or \"off\"", &rcf->tls);
        return NGX_ERROR;
    }

    if (rcf->addr.sockaddr != NULL
        && rcf->addr.sockaddr->sa_family == AF_UNIX)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_redis: \"tls=on\" needs a TCP address: "
                           "Redis does not use TLS over a unix socket");
        return NGX_ERROR;
    }

    if (rcf->tls_ca.len == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_redis: \"tls=on\" needs \"tls_ca=\" (the CA "
                           "certificates the server's certificate is "
                           "verified with)");
        return NGX_ERROR;
    }

    if (rcf->tls_name.len == 0) {
        if (rcf->host.len == 0) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "cms_redis: \"tls=on\" with an IP address "
                               "needs \"tls_name=\" (the name the server's "
                               "certificate carries)");
            return NGX_ERROR;
        }

        rcf->tls_name = rcf->host;
    }

    if ((rcf->tls_cert.len == 0) != (rcf->tls_key.len == 0)) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_redis: \"tls_cert=\" and \"tls_key=\" go "
                           "together");
        return NGX_ERROR;
    }

    /* SNI and the name check want a C string */
    p = ngx_pnalloc(cf->pool, rcf->tls_name.len + 1);
    if (p == NULL) {
        return NGX_ERROR;
    }

    (void) ngx_cpystrn(p, rcf->tls_name.data, rcf->tls_name.len + 1);
    rcf->tls_name.data = p;

    return ngx_http_cms_redis_tls_ctx(cf, rcf);
}


/* the SSL context, as the proxy module makes its upstream's */
static ngx_int_t
ngx_http_cms_redis_tls_ctx(ngx_conf_t *cf, ngx_http_cms_redis_conf_t *rcf)
{
    ngx_ssl_t           *ssl;
    ngx_pool_cleanup_t  *cln;

    ssl = ngx_pcalloc(cf->pool, sizeof(ngx_ssl_t));
    if (ssl == NULL) {
        return NGX_ERROR;
    }

    ssl->log = cf->log;

    if (ngx_ssl_create(ssl, NGX_SSL_TLSv1_2|NGX_SSL_TLSv1_3, NULL) != NGX_OK)
    {
        return NGX_ERROR;
    }

    cln = ngx_pool_cleanup_add(cf->pool, 0);
    if (cln == NULL) {
        ngx_ssl_cleanup_ctx(ssl);
        return NGX_ERROR;
    }

    cln->handler = ngx_ssl_cleanup_ctx;
    cln->data = ssl;

    if (rcf->tls_cert.len
        && ngx_ssl_certificate(cf, ssl, &rcf->tls_cert, &rcf->tls_key, NULL)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (ngx_ssl_trusted_certificate(cf, ssl, &rcf->tls_ca, 4) != NGX_OK) {
        return NGX_ERROR;
    }

    rcf->ssl = ssl;

    return NGX_OK;
}
