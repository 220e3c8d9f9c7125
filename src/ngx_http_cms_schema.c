
/*
 * The schema check (ngx_http_cms_schema.h): each worker asks at its
 * first request (which goes on meanwhile: a query on a relation the
 * database lacks is a 503 too, ngx_http_cms_schema_suspect()), then every
 * 5 s while the schema is behind or the database did not answer, every
 * minute once it is current.  A state change is logged
 * once per worker: an [error] naming the versions and the command while
 * the schema is behind, a [notice] when it is current again.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_schema.h"


#define NGX_HTTP_CMS_SCHEMA_SOON   5000      /* ms: behind, or no answer */
#define NGX_HTTP_CMS_SCHEMA_LATER  60000     /* ms: current */
#define NGX_HTTP_CMS_SCHEMA_TEXT   64        /* a version's bytes kept */


static void ngx_http_cms_schema_tick(ngx_event_t *ev);
static void ngx_http_cms_schema_done(void *data, PGresult *res);
static void ngx_http_cms_schema_next(ngx_uint_t state);


ngx_http_cms_pg_stmt_t  ngx_http_cms_schema_sql =
    ngx_http_cms_pg_stmt_primary(
        "SELECT coalesce(max(version), '') FROM schema_migrations", 0);


static ngx_event_t  ngx_http_cms_schema_ev;
static ngx_uint_t   ngx_http_cms_schema_now;        /* the state */
static ngx_uint_t   ngx_http_cms_schema_asking;
static ngx_uint_t   ngx_http_cms_schema_started;     /* the timer armed */
static u_char       ngx_http_cms_schema_version[NGX_HTTP_CMS_SCHEMA_TEXT
                                                + 1] = "?";


void
ngx_http_cms_schema_init_process(ngx_cycle_t *cycle,
    ngx_http_cms_main_conf_t *mcf)
{
    if (mcf->pg == NULL) {
        return;
    }

    ngx_http_cms_schema_ev.handler = ngx_http_cms_schema_tick;
    ngx_http_cms_schema_ev.data = mcf;
    ngx_http_cms_schema_ev.log = cycle->log;
    ngx_http_cms_schema_ev.cancelable = 1;
}


ngx_uint_t
ngx_http_cms_schema_behind(void)
{
    if (!ngx_http_cms_schema_started) {
        (void) ngx_http_cms_schema_suspect();   /* the first question now */
    }

    return ngx_http_cms_schema_now == NGX_HTTP_CMS_SCHEMA_BEHIND;
}


const char *
ngx_http_cms_schema_seen(void)
{
    return (const char *) ngx_http_cms_schema_version;
}


static void
ngx_http_cms_schema_tick(ngx_event_t *ev)
{
    if (ngx_http_cms_quitting()) {
        return;                 /* nothing new: ngx_http_cms_jobs_arm() */
    }

    if (ngx_http_cms_schema_asking) {
        return;                     /* the answer arms the timer */
    }

    ngx_http_cms_schema_asking = 1;

    if (ngx_http_cms_pg_job(&ngx_http_cms_schema_sql, NULL, 0,
                            ngx_http_cms_schema_done, NULL)
        != NGX_OK)
    {
        ngx_http_cms_schema_asking = 0;
        ngx_http_cms_schema_next(NGX_HTTP_CMS_SCHEMA_UNKNOWN);
    }
}


static void
ngx_http_cms_schema_done(void *data, PGresult *res)
{
    ngx_http_cms_schema_asking = 0;

    (void) ngx_http_cms_schema_answer(res);
}


/* the next question: soon while behind or unknown, later once current */
static void
ngx_http_cms_schema_next(ngx_uint_t state)
{
    if (ngx_http_cms_schema_ev.handler == NULL || ngx_http_cms_schema_asking
        || ngx_http_cms_quitting())
    {
        return;
    }

    if (ngx_http_cms_schema_ev.timer_set) {
        ngx_del_timer(&ngx_http_cms_schema_ev);
    }

    ngx_add_timer(&ngx_http_cms_schema_ev,
                  state == NGX_HTTP_CMS_SCHEMA_CURRENT
                  ? NGX_HTTP_CMS_SCHEMA_LATER : NGX_HTTP_CMS_SCHEMA_SOON);

    ngx_http_cms_schema_started = 1;
}


/* long: the answer read (no table: none applied), compared, logged */
ngx_uint_t
ngx_http_cms_schema_answer(PGresult *res)
{
    u_char      *v;
    char        *state;
    size_t       len, i;
    ngx_uint_t   now;

    state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

    if (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK
        && PQntuples(res) == 1 && PQnfields(res) == 1)
    {
        len = ngx_min((size_t) PQgetlength(res, 0, 0),
                      NGX_HTTP_CMS_SCHEMA_TEXT);
        v = (u_char *) PQgetvalue(res, 0, 0);

        /* kept as a name: what readiness may write into its JSON */
        for (i = 0; i < len; i++) {
            ngx_http_cms_schema_version[i] =
                ((v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'z')
                 || (v[i] >= 'A' && v[i] <= 'Z') || v[i] == '-') ? v[i]
                                                                 : '_';
        }

    } else if (state != NULL && ngx_strcmp(state, "42P01") == 0) {
        len = 0;                    /* no schema_migrations: none applied */

    } else {
        /* no answer: as it was, asked again soon */
        ngx_http_cms_schema_next(NGX_HTTP_CMS_SCHEMA_UNKNOWN);
        return ngx_http_cms_schema_now;
    }

    ngx_http_cms_schema_version[len] = '\0';

    /* "NNNN_name": the four digits order the versions */
    now = (len >= 4
           && ngx_strncmp(ngx_http_cms_schema_version, NGX_HTTP_CMS_SCHEMA, 4)
              >= 0)
          ? NGX_HTTP_CMS_SCHEMA_CURRENT : NGX_HTTP_CMS_SCHEMA_BEHIND;

    if (now != ngx_http_cms_schema_now) {
        if (now == NGX_HTTP_CMS_SCHEMA_BEHIND) {
            ngx_log_error(NGX_LOG_ERR, ngx_cycle->log, 0,
                          "cms: the database's schema is at \"%s\", this "
                          "module needs \"%s\": API calls answer 503 "
                          "schema_out_of_date until the migrations are "
                          "applied (cms-admin migrate)",
                          len ? (char *) ngx_http_cms_schema_version
                              : "none", NGX_HTTP_CMS_SCHEMA);

        } else if (ngx_http_cms_schema_now == NGX_HTTP_CMS_SCHEMA_BEHIND) {
            ngx_log_error(NGX_LOG_NOTICE, ngx_cycle->log, 0,
                          "cms: the database's schema is at \"%s\": "
                          "current", ngx_http_cms_schema_version);
        }

        ngx_http_cms_schema_now = now;
    }

    /* any answer (readiness's too) sets when the worker asks next */
    ngx_http_cms_schema_next(now);

    return now;
}


ngx_int_t
ngx_http_cms_schema_suspect(void)
{
    if (ngx_http_cms_schema_now == NGX_HTTP_CMS_SCHEMA_CURRENT) {
        return NGX_DECLINED;
    }

    if (ngx_http_cms_schema_ev.handler != NULL
        && !ngx_http_cms_schema_asking && !ngx_http_cms_quitting())
    {
        if (ngx_http_cms_schema_ev.timer_set) {
            ngx_del_timer(&ngx_http_cms_schema_ev);
        }

        ngx_add_timer(&ngx_http_cms_schema_ev, 1);
        ngx_http_cms_schema_started = 1;
    }

    return NGX_OK;
}
