
/*
 * Name resolution through nginx's resolver, and the outbound address
 * rule (ngx_http_cms_resolve.h).  The state lives in the caller's pool;
 * its cleanup cancels what is still pending: a resolver query
 * (ngx_resolve_name_done) or the posted event that delivers an answer.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_resolve.h"
#include "cms_ipaddr.h"


struct ngx_http_cms_resolve_s {
    ngx_resolver_ctx_t            *ctx;       /* pending, or NULL */
    ngx_event_t                    ev;        /* delivers the answer */
    ngx_pool_t                    *pool;
    ngx_http_cms_resolve_done_pt   done;
    void                          *data;
    ngx_int_t                      rc;
    ngx_addr_t                    *addrs;
    ngx_uint_t                     naddrs;
};


static ngx_int_t ngx_http_cms_resolve_literal(ngx_http_cms_resolve_t *s,
    ngx_str_t *host);
static void ngx_http_cms_resolve_handler(ngx_resolver_ctx_t *ctx);
static ngx_int_t ngx_http_cms_resolve_copy(ngx_http_cms_resolve_t *s,
    ngx_resolver_ctx_t *ctx);
static void ngx_http_cms_resolve_deliver(ngx_event_t *ev);
static void ngx_http_cms_resolve_cleanup(void *data);


ngx_int_t
ngx_http_cms_resolve_init(ngx_conf_t *cf)
{
    ngx_http_core_loc_conf_t  *clcf;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_cms_module);
    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);

    /* unset, nginx leaves a resolver without name servers here */
    mcf->resolver = clcf->resolver;

    /*
     * nginx merges its 30 s default into the servers' and locations'
     * configurations, never into the http{} block's own: unset, it is
     * NGX_CONF_UNSET_MSEC here, a timer that would fire at once
     */
    mcf->resolver_timeout = (clcf->resolver_timeout == NGX_CONF_UNSET_MSEC)
                            ? 30000 : clcf->resolver_timeout;

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_resolve_need(ngx_conf_t *cf, const char *directive,
    ngx_str_t *name)
{
    ngx_http_cms_main_conf_t     *mcf;
    ngx_http_cms_resolve_need_t  *need;

    if (name->len == 0) {
        return NGX_OK;
    }

    mcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_cms_module);

    if (mcf->resolve_needs == NULL) {
        mcf->resolve_needs = ngx_array_create(cf->pool, 2,
                                          sizeof(ngx_http_cms_resolve_need_t));
        if (mcf->resolve_needs == NULL) {
            return NGX_ERROR;
        }
    }

    need = ngx_array_push(mcf->resolve_needs);
    if (need == NULL) {
        return NGX_ERROR;
    }

    need->directive = directive;
    need->name = *name;
    need->file = cf->conf_file->file.name;
    need->line = cf->conf_file->line;

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_resolve_check(ngx_conf_t *cf)
{
    ngx_http_cms_main_conf_t     *mcf;
    ngx_http_cms_resolve_need_t  *need;

    mcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_cms_module);

    if (mcf->resolve_needs == NULL
        || (mcf->resolver != NULL && mcf->resolver->connections.nelts > 0))
    {
        return NGX_OK;
    }

    /* the directive's own line, not the end of http{} where this runs */
    need = mcf->resolve_needs->elts;

    ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                  "%s: \"%V\" is a host name, resolved through nginx's "
                  "resolver at run time, and the http{} block has no "
                  "\"resolver\" directive in %V:%ui", need->directive,
                  &need->name, &need->file, need->line);

    return NGX_ERROR;
}


/* long: literal, resolver, or why neither; the cleanup before any wait */
ngx_http_cms_resolve_t *
ngx_http_cms_resolve_start(ngx_pool_t *pool, ngx_log_t *log,
    ngx_str_t *host, ngx_http_cms_resolve_done_pt done, void *data)
{
    ngx_int_t                  rc;
    ngx_pool_cleanup_t        *cln;
    ngx_resolver_ctx_t        *ctx;
    ngx_http_cms_resolve_t    *s;
    ngx_http_cms_main_conf_t  *mcf;

    s = ngx_pcalloc(pool, sizeof(ngx_http_cms_resolve_t));
    cln = ngx_pool_cleanup_add(pool, 0);

    if (s == NULL || cln == NULL) {
        return NULL;
    }

    s->pool = pool;
    s->done = done;
    s->data = data;
    s->ev.handler = ngx_http_cms_resolve_deliver;
    s->ev.data = s;
    s->ev.log = log;

    cln->handler = ngx_http_cms_resolve_cleanup;
    cln->data = s;

    rc = ngx_http_cms_resolve_literal(s, host);

    if (rc != NGX_DECLINED) {
        if (rc != NGX_OK) {
            return NULL;
        }

        ngx_post_event(&s->ev, &ngx_posted_events);
        return s;
    }

    mcf = ngx_http_cycle_get_module_main_conf(ngx_cycle, ngx_http_cms_module);

    ctx = (mcf->resolver != NULL) ? ngx_resolve_start(mcf->resolver, NULL)
                                  : NGX_NO_RESOLVER;

    if (ctx == NGX_NO_RESOLVER) {
        ngx_log_error(NGX_LOG_ERR, log, 0,
                      "cms: cannot resolve \"%V\": no \"resolver\" in the "
                      "http{} block", host);
        return NULL;
    }

    if (ctx == NULL) {
        return NULL;
    }

    ctx->name.len = host->len;
    ctx->name.data = ngx_pstrdup(pool, host);
    if (ctx->name.data == NULL) {
        ngx_resolve_name_done(ctx);
        return NULL;
    }

    ctx->handler = ngx_http_cms_resolve_handler;
    ctx->data = s;
    ctx->timeout = mcf->resolver_timeout;

    s->ctx = ctx;

    /* an answer nginx has cached comes back inside: it is then posted */
    if (ngx_resolve_name(ctx) != NGX_OK) {
        s->ctx = NULL;              /* freed by the resolver */
        return NULL;
    }

    return s;
}


/* an IP literal: NGX_OK (one address), NGX_DECLINED (a name), NGX_ERROR */
static ngx_int_t
ngx_http_cms_resolve_literal(ngx_http_cms_resolve_t *s, ngx_str_t *host)
{
    ngx_int_t  rc;

    s->addrs = ngx_pcalloc(s->pool, sizeof(ngx_addr_t));
    if (s->addrs == NULL) {
        return NGX_ERROR;
    }

    rc = ngx_parse_addr(s->pool, s->addrs, host->data, host->len);

    if (rc == NGX_OK) {
        s->naddrs = 1;
        s->rc = NGX_OK;
    }

    return rc;
}


static void
ngx_http_cms_resolve_handler(ngx_resolver_ctx_t *ctx)
{
    ngx_http_cms_resolve_t  *s = ctx->data;

    if (ctx->state == NGX_OK && ctx->naddrs > 0) {
        s->rc = ngx_http_cms_resolve_copy(s, ctx);

    } else if (ctx->state == NGX_OK || ctx->state == NGX_RESOLVE_NXDOMAIN) {
        s->rc = NGX_DECLINED;

    } else {
        ngx_log_error(NGX_LOG_WARN, s->ev.log, 0,
                      "cms: resolving \"%V\" failed: %i: %s",
                      &ctx->name, ctx->state,
                      ngx_resolver_strerror(ctx->state));
        s->rc = NGX_ERROR;
    }

    s->ctx = NULL;
    ngx_resolve_name_done(ctx);

    ngx_post_event(&s->ev, &ngx_posted_events);
}


/* the answers into the caller's pool: the resolver frees its own */
static ngx_int_t
ngx_http_cms_resolve_copy(ngx_http_cms_resolve_t *s, ngx_resolver_ctx_t *ctx)
{
    ngx_uint_t   i;
    ngx_addr_t  *a;

    s->addrs = ngx_pcalloc(s->pool, ctx->naddrs * sizeof(ngx_addr_t));
    if (s->addrs == NULL) {
        return NGX_ERROR;
    }

    for (i = 0; i < ctx->naddrs; i++) {
        a = &s->addrs[i];

        a->sockaddr = ngx_palloc(s->pool, ctx->addrs[i].socklen);
        if (a->sockaddr == NULL) {
            return NGX_ERROR;
        }

        ngx_memcpy(a->sockaddr, ctx->addrs[i].sockaddr,
                   ctx->addrs[i].socklen);
        a->socklen = ctx->addrs[i].socklen;
    }

    s->naddrs = ctx->naddrs;

    return NGX_OK;
}


static void
ngx_http_cms_resolve_deliver(ngx_event_t *ev)
{
    ngx_http_cms_resolve_t  *s = ev->data;

    /* done() may destroy s->pool, and s with it */
    s->done(s->data, s->rc, s->addrs, s->rc == NGX_OK ? s->naddrs : 0);
}


static void
ngx_http_cms_resolve_cleanup(void *data)
{
    ngx_http_cms_resolve_t  *s = data;

    if (s->ctx != NULL) {
        ngx_resolve_name_done(s->ctx);
        s->ctx = NULL;
    }

    if (s->ev.posted) {
        ngx_delete_posted_event(&s->ev);
    }
}


ngx_int_t
ngx_http_cms_outbound_allowed(ngx_cycle_t *cycle, struct sockaddr *sa)
{
    ngx_http_cms_main_conf_t  *mcf;

    if (cms_ipaddr_public(sa)) {
        return NGX_OK;
    }

    mcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_cms_module);

    if (mcf->outbound_loopback == 1 && cms_ipaddr_loopback(sa)) {
        return NGX_OK;
    }

    return NGX_DECLINED;
}


ngx_int_t
ngx_http_cms_outbound_all_allowed(ngx_addr_t *addrs, ngx_uint_t n,
    ngx_uint_t loopback_only)
{
    ngx_uint_t  i;

    if (n == 0) {
        return NGX_DECLINED;
    }

    for (i = 0; i < n; i++) {
        if (ngx_http_cms_outbound_allowed((ngx_cycle_t *) ngx_cycle,
                                          addrs[i].sockaddr)
            != NGX_OK
            || (loopback_only && !cms_ipaddr_loopback(addrs[i].sockaddr)))
        {
            return NGX_DECLINED;
        }
    }

    return NGX_OK;
}
