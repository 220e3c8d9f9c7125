
/*
 * Purging a shared cache on publish: the "cms_cdn_purge" directive and
 * worker 0's job that claims queued purges (sql/0034_cdn_purges.sql) and
 * sends "PURGE" with "xkey: <surrogate keys>" to every target with the
 * client (ngx_http_cms_client.h).  Targets are the operator's (a Varnish
 * beside nginx, usually on loopback or the private network), so the
 * outbound rule that guards users' webhook URLs does not apply to them.
 */


#ifndef _NGX_HTTP_CMS_CDN_H_INCLUDED_
#define _NGX_HTTP_CMS_CDN_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include "ngx_http_cms_module.h"


/* "cms_cdn_purge URL ... [timeout=5s]": no purge sent when absent */
char *ngx_http_cms_cdn_conf(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);

/* worker 0 (ngx_http_cms_jobs_here()): arms the job */
void ngx_http_cms_cdn_init_process(ngx_cycle_t *cycle,
    ngx_http_cms_main_conf_t *mcf);

/* worker exit: abandons a round in flight (its lease runs out) */
void ngx_http_cms_cdn_exit_process(void);


#endif /* _NGX_HTTP_CMS_CDN_H_INCLUDED_ */
