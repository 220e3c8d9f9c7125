
/*
 * Periodic jobs.  One worker (number 0) runs them, on a cancelable timer,
 * through the pool like any query: never a blocking call.  Several nginx
 * hosts may run them at once; each job is safe to repeat.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_jobs.h"
#include "ngx_http_cms_pg.h"


static void ngx_http_cms_jobs_purge(ngx_event_t *ev);
static void ngx_http_cms_jobs_purged(void *data, PGresult *res);


static ngx_http_cms_pg_stmt_t  ngx_http_cms_jobs_purge_sql =
    ngx_http_cms_pg_stmt(
        "SELECT cms_articles_purge(make_interval(secs => $1::float8))", 1);


static ngx_event_t  ngx_http_cms_jobs_purge_ev;


ngx_int_t
ngx_http_cms_jobs_init_process(ngx_cycle_t *cycle,
    ngx_http_cms_main_conf_t *mcf)
{
    ngx_event_t  *ev;

    if (ngx_process != NGX_PROCESS_WORKER || ngx_worker != 0
        || mcf->pg == NULL)
    {
        return NGX_OK;
    }

    ev = &ngx_http_cms_jobs_purge_ev;
    ev->handler = ngx_http_cms_jobs_purge;
    ev->data = mcf;
    ev->log = cycle->log;
    ev->cancelable = 1;

    ngx_add_timer(ev, mcf->purge_interval);

    return NGX_OK;
}


/* soft-deleted articles older than the retention go for good */
static void
ngx_http_cms_jobs_purge(ngx_event_t *ev)
{
    ngx_http_cms_main_conf_t *mcf = ev->data;

    u_char     buf[NGX_TIME_T_LEN];
    ngx_str_t  arg;

    arg.data = buf;
    arg.len = ngx_sprintf(buf, "%T", mcf->retention) - buf;

    if (ngx_http_cms_pg_job(&ngx_http_cms_jobs_purge_sql, &arg, 1,
                            ngx_http_cms_jobs_purged, mcf)
        != NGX_OK)
    {
        ngx_add_timer(ev, mcf->purge_interval);
    }
}


static void
ngx_http_cms_jobs_purged(void *data, PGresult *res)
{
    ngx_http_cms_main_conf_t *mcf = data;

    if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
        ngx_log_error(NGX_LOG_ERR, ngx_cycle->log, 0,
                      "cms: purging deleted articles failed%s%s",
                      res ? ": " : "",
                      res ? PQresultErrorMessage(res) : "");

    } else if (ngx_atoi((u_char *) PQgetvalue(res, 0, 0),
                        PQgetlength(res, 0, 0)) > 0)
    {
        ngx_log_error(NGX_LOG_INFO, ngx_cycle->log, 0,
                      "cms: purged %s deleted articles",
                      PQgetvalue(res, 0, 0));
    }

    if (!ngx_exiting && !ngx_terminate) {
        ngx_add_timer(&ngx_http_cms_jobs_purge_ev, mcf->purge_interval);
    }
}
