
/*
 * The route tables of the resource files: the only thing each exports.
 */


#ifndef _NGX_HTTP_CMS_RESOURCES_H_INCLUDED_
#define _NGX_HTTP_CMS_RESOURCES_H_INCLUDED_


#include "ngx_http_cms_router.h"


extern ngx_http_cms_route_t  ngx_http_cms_health_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_accounts_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_workspaces_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_api_keys_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_categories_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_articles_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_billing_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_control_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_extensions_routes[];

/* only with "cms_test_routes on" */
extern ngx_http_cms_route_t  ngx_http_cms_testing_routes[];


#endif /* _NGX_HTTP_CMS_RESOURCES_H_INCLUDED_ */
