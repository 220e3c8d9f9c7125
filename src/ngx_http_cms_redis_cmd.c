
/*
 * Redis commands: a pipeline formatted by hiredis into a buffer of the
 * caller's pool, ready for ngx_http_cms_redis_run() or _job(); a Lua
 * script's first arguments.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <ngx_sha1.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_redis.h"


ngx_int_t
ngx_http_cms_redis_append(ngx_pool_t *pool, ngx_http_cms_redis_cmds_t *cmds,
    int argc, const char **argv, const size_t *argvlen)
{
    int      len;
    char    *cmd;
    u_char  *p;

    if (cmds->n == NGX_HTTP_CMS_REDIS_MAX_PIPELINE) {
        ngx_log_error(NGX_LOG_ALERT, pool->log, 0,
                      "cms: redis pipeline too long");
        return NGX_ERROR;
    }

    len = redisFormatCommandArgv(&cmd, argc, argv, argvlen);
    if (len < 0) {
        return NGX_ERROR;
    }

    p = ngx_pnalloc(pool, cmds->out.len + len);
    if (p == NULL) {
        redisFreeCommand(cmd);
        return NGX_ERROR;
    }

    if (cmds->out.len) {
        ngx_memcpy(p, cmds->out.data, cmds->out.len);
    }

    ngx_memcpy(p + cmds->out.len, cmd, len);
    redisFreeCommand(cmd);

    cmds->out.data = p;
    cmds->out.len += len;
    cmds->n++;

    return NGX_OK;
}


void
ngx_http_cms_redis_script_argv(ngx_http_cms_redis_script_t *script,
    ngx_uint_t eval, const char **argv, size_t *len)
{
    u_char      md[20];
    ngx_sha1_t  sha1;

    if (eval) {
        argv[0] = "EVAL";
        len[0] = sizeof("EVAL") - 1;
        argv[1] = (const char *) script->lua.data;
        len[1] = script->lua.len;
        return;
    }

    if (!script->hashed) {
        ngx_sha1_init(&sha1);
        ngx_sha1_update(&sha1, script->lua.data, script->lua.len);
        ngx_sha1_final(md, &sha1);

        ngx_hex_dump(script->sha, md, sizeof(md));
        script->hashed = 1;
    }

    argv[0] = "EVALSHA";
    len[0] = sizeof("EVALSHA") - 1;
    argv[1] = (const char *) script->sha;
    len[1] = sizeof(script->sha);
}


ngx_uint_t
ngx_http_cms_redis_noscript(redisReply *rp)
{
    return rp->type == REDIS_REPLY_ERROR
           && ngx_strncmp(rp->str, "NOSCRIPT", 8) == 0;
}


/* an idle connection: NGX_OK while it has nothing to read */
ngx_int_t
ngx_http_cms_redis_peek(ngx_connection_t *c)
{
    char  buf[1];
    int   n;

    if (c->ssl) {
        /*
         * OpenSSL takes the records that carry no data (the session
         * tickets a TLS 1.3 server sends after the handshake) and asks
         * for more; a byte of data or the end is what a peek would see
         */
        return c->recv(c, (u_char *) buf, 1) == NGX_AGAIN ? NGX_OK
                                                           : NGX_ERROR;
    }

    n = recv(c->fd, buf, 1, MSG_PEEK);

    if (n == -1 && ngx_socket_errno == NGX_EAGAIN) {
        return NGX_OK;
    }

    return NGX_ERROR;
}
