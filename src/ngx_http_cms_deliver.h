
/*
 * Webhook delivery: the "cms_webhook_delivery" directive and worker 0's
 * job that claims due deliveries (sql/0029_webhook_deliveries.sql),
 * signs them (src/lib/cms_webhook.h) and posts them with the client
 * (ngx_http_cms_client.h).  Its configuration, ngx_http_cms_hooks_conf_t,
 * is in ngx_http_cms_module.h (the jobs' purge reads its retention).
 */


#ifndef _NGX_HTTP_CMS_DELIVER_H_INCLUDED_
#define _NGX_HTTP_CMS_DELIVER_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include "ngx_http_cms_module.h"


/*
 * "cms_webhook_delivery on|off [ca=FILE] [timeout=15s] [retry_scale=1]
 * [retention=30d] [concurrency=32] [ports=443]"; off (no delivery) when
 * absent
 */
char *ngx_http_cms_deliver_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);

/* init_main_conf: the defaults, and the TLS context; NGX_OK/NGX_ERROR */
ngx_int_t ngx_http_cms_deliver_conf_init(ngx_conf_t *cf,
    ngx_http_cms_main_conf_t *mcf);

/*
 * Whether an endpoint may name "port": one of ports= (443 alone by
 * default), or any with "cms_outbound_loopback on" (tests, development).
 */
ngx_uint_t ngx_http_cms_deliver_port_allowed(ngx_http_cms_main_conf_t *mcf,
    ngx_uint_t port);

/* worker 0 (ngx_http_cms_jobs_here()): arms the job */
void ngx_http_cms_deliver_init_process(ngx_cycle_t *cycle,
    ngx_http_cms_main_conf_t *mcf);

/* worker exit: closes what is still in flight (abandoned) */
void ngx_http_cms_deliver_exit_process(void);


#endif /* _NGX_HTTP_CMS_DELIVER_H_INCLUDED_ */
