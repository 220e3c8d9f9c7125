
/*
 * "cms_status": the workers' pools, lanes and jobs in the Prometheus text
 * format, for a location of its own.
 */


#ifndef _NGX_HTTP_CMS_STATUS_H_INCLUDED_
#define _NGX_HTTP_CMS_STATUS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"


/* "cms_status" in a location: its content handler, and the zone */
char *ngx_http_cms_status_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);

/*
 * Claims the worker's record in the zone (when a location has cms_status)
 * and starts sampling its states.  NGX_OK or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_status_init_process(ngx_cycle_t *cycle);


#endif /* _NGX_HTTP_CMS_STATUS_H_INCLUDED_ */
