
/*
 * The publishable-key surface (/v1/public): the steps of its route family
 * and the preflight route the router answers OPTIONS with.
 */


#ifndef _NGX_HTTP_CMS_PUBLIC_H_INCLUDED_
#define _NGX_HTTP_CMS_PUBLIC_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"


/* the family's first step: CORS ("*" until the key names a site) and
   cacheable answers (ETag, Cache-Control, Surrogate-Key); declines */
ngx_int_t ngx_http_cms_public_begin(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);

/*
 * The credential step for publishable keys (ngx_http_cms_auth_step()):
 * fills principal.site_id, workspace_id and key_id (the site: the rate
 * limit's bucket) and ctx->cors, then ctx->resume().  The step's codes.
 */
ngx_int_t ngx_http_cms_public_auth(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);

/*
 * A page's published sections in a locale ($3, else the workspace's
 * default, pg.locale), ordered by key: the one read of the public surface
 * and of the studio's published view; "page" is the SQL naming the page.
 */
#define NGX_HTTP_CMS_PUBLISHED_SECTIONS(page)                                 \
    " LEFT JOIN LATERAL (SELECT s.id, s.page_id, s.section_key,"            \
    "  s.locale, s.published_data, s.published_version,"                     \
    "  s.published_at FROM sections s"                                       \
    "  WHERE s.page_id = " page " AND s.locale = coalesce($3, pg.locale)"    \
    "   AND s.published_version IS NOT NULL"                                 \
    "  ORDER BY s.section_key LIMIT 1000) s"

/* OPTIONS on a public path: 204 with the CORS preflight headers */
extern ngx_http_cms_route_t  ngx_http_cms_public_preflight_route;


#endif /* _NGX_HTTP_CMS_PUBLIC_H_INCLUDED_ */
