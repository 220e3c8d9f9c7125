
/*
 * Host names resolved through nginx's own resolver (the http{} block's
 * "resolver" and "resolver_timeout"), never getaddrinfo(), and the one
 * rule for what the module may connect to on a user's behalf.
 */


#ifndef _NGX_HTTP_CMS_RESOLVE_H_INCLUDED_
#define _NGX_HTTP_CMS_RESOLVE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>


typedef struct ngx_http_cms_resolve_s  ngx_http_cms_resolve_t;

/*
 * A resolution's end: rc NGX_OK with every A and AAAA answer in addrs
 * (copies in the pool given to start), NGX_DECLINED when the name has no
 * address (NXDOMAIN or an empty answer), NGX_ERROR on a resolver error or
 * timeout.  Always called from the event loop, never from inside start.
 */
typedef void (*ngx_http_cms_resolve_done_pt)(void *data, ngx_int_t rc,
    ngx_addr_t *addrs, ngx_uint_t naddrs);


/*
 * Starts resolving "host" (a name, or an IP literal without brackets,
 * answered without the resolver).  NULL when it cannot start: no resolver
 * configured at the http{} level (logged once, naming the directive) or
 * no memory.  A cleanup on "pool" cancels a resolution still pending, so
 * a request finalized meanwhile never gets a late callback.
 */
ngx_http_cms_resolve_t *ngx_http_cms_resolve_start(ngx_pool_t *pool,
    ngx_log_t *log, ngx_str_t *host, ngx_http_cms_resolve_done_pt done,
    void *data);

/*
 * NGX_OK when the module may connect to "sa" on a user's behalf: a
 * globally reachable address (cms_ipaddr_public), or a loopback one with
 * "cms_outbound_loopback on" (tests, local development); else
 * NGX_DECLINED.
 */
ngx_int_t ngx_http_cms_outbound_allowed(ngx_cycle_t *cycle,
    struct sockaddr *sa);

/*
 * NGX_OK when there is at least one address in addrs[0 .. n) and every
 * one passes ngx_http_cms_outbound_allowed(), and, with "loopback_only",
 * is a loopback address too (plain http, allowed only to those);
 * else NGX_DECLINED.
 */
ngx_int_t ngx_http_cms_outbound_all_allowed(ngx_addr_t *addrs, ngx_uint_t n,
    ngx_uint_t loopback_only);

/* postconfiguration: keeps the http{} block's resolver for start() */
ngx_int_t ngx_http_cms_resolve_init(ngx_conf_t *cf);

/* a host name a directive resolves at run time, and where it was written */
typedef struct {
    const char                 *directive;
    ngx_str_t                   name;
    ngx_str_t                   file;
    ngx_uint_t                  line;
} ngx_http_cms_resolve_need_t;

/*
 * While a directive is read: records that "name" (nothing when empty)
 * will be resolved at run time, with the directive's file and line.
 */
ngx_int_t ngx_http_cms_resolve_need(ngx_conf_t *cf, const char *directive,
    ngx_str_t *name);

/*
 * postconfiguration, after init(): NGX_OK when nothing was recorded or the
 * http{} block has a "resolver" with a name server; else logs the first
 * directive that needs one, at its own file and line, and NGX_ERROR
 * (nginx -t refuses).
 */
ngx_int_t ngx_http_cms_resolve_check(ngx_conf_t *cf);


#endif /* _NGX_HTTP_CMS_RESOLVE_H_INCLUDED_ */
