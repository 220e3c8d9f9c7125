
/*
 * The "cms_redis" directive: an IP address with a port, or a unix socket,
 * checked at load time (a host name would need a blocking lookup), the
 * pool's limits, and the credential: an ACL user and a password read
 * from a file (never written in nginx.conf), sent as AUTH before any
 * other command on every new connection.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_conf.h"
#include "ngx_http_cms_redis.h"


static ngx_int_t ngx_http_cms_redis_address(ngx_conf_t *cf,
    ngx_http_cms_redis_conf_t *rcf, ngx_str_t *value);
static ngx_int_t ngx_http_cms_redis_auth(ngx_conf_t *cf,
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

    if (ngx_http_cms_redis_auth(cf, rcf) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    mcf->redis = rcf;

    return NGX_CONF_OK;
}


/* "unix:/path" or "ip:port"; logs why not */
static ngx_int_t
ngx_http_cms_redis_address(ngx_conf_t *cf, ngx_http_cms_redis_conf_t *rcf,
    ngx_str_t *value)
{
    ngx_url_t  u;

    if (ngx_strncmp(value->data, "unix:", 5) == 0) {
        ngx_memzero(&u, sizeof(ngx_url_t));
        u.url = *value;

        if (ngx_parse_url(cf->pool, &u) != NGX_OK || u.naddrs == 0) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "cms_redis: invalid socket \"%V\"", value);
            return NGX_ERROR;
        }

        rcf->addr = u.addrs[0];

    } else if (ngx_parse_addr_port(cf->pool, &rcf->addr, value->data,
                                   value->len)
               != NGX_OK
               || ngx_inet_get_port(rcf->addr.sockaddr) == 0)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_redis: \"%V\" is not an IP address with a "
                           "port or a \"unix:\" path; a host name would "
                           "need a blocking lookup", value);
        return NGX_ERROR;
    }

    rcf->addr.name = *value;

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
