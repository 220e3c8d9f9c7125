
/*
 * The database's schema against the one this module was built for
 * (docs/operations.md, "Schema and upgrades").  Migrations are
 * sql/NNNN_name.sql, each recorded in schema_migrations(version) when
 * applied; the module needs NGX_HTTP_CMS_SCHEMA, its newest.  Every worker
 * asks the database at its first request and then now and then; while the
 * schema is behind, API calls answer 503 schema_out_of_date (the router's
 * gate) and readiness fails, with one log line saying what to run.
 */


#ifndef _NGX_HTTP_CMS_SCHEMA_H_INCLUDED_
#define _NGX_HTTP_CMS_SCHEMA_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_pg.h"


/* the newest migration in sql/ (t/005 checks it is) */
#define NGX_HTTP_CMS_SCHEMA  "0058_delivery_results_batch"


typedef enum {
    NGX_HTTP_CMS_SCHEMA_UNKNOWN = 0,  /* not asked yet, or no answer */
    NGX_HTTP_CMS_SCHEMA_CURRENT,      /* the needed migration, or newer */
    NGX_HTTP_CMS_SCHEMA_BEHIND        /* older, or none applied */
} ngx_http_cms_schema_state_e;


/* the statement that asks: one text column, the newest version applied
   ('' for none) */
extern ngx_http_cms_pg_stmt_t  ngx_http_cms_schema_sql;

/* every worker with cms_postgres: ready to ask (an idle worker asks
   nothing: no query at its start) */
void ngx_http_cms_schema_init_process(ngx_cycle_t *cycle,
    ngx_http_cms_main_conf_t *mcf);

/*
 * Whether this worker last found the schema behind (the router asks it for
 * every request); the first call starts the worker's questions
 */
ngx_uint_t ngx_http_cms_schema_behind(void);

/* the database's version as last seen ("" for none, "?" unknown) */
const char *ngx_http_cms_schema_seen(void);

/*
 * An answer of ngx_http_cms_schema_sql, from whoever asked (readiness
 * too): the state updated and logged when it changes.  Returns the state.
 */
ngx_uint_t ngx_http_cms_schema_answer(PGresult *res);

/*
 * A query failed on a relation, column or function the database lacks:
 * NGX_OK when the schema may be behind (not known to be current; the
 * database is asked again at once), NGX_DECLINED when it is current (a
 * fault of the query itself).
 */
ngx_int_t ngx_http_cms_schema_suspect(void);


#endif /* _NGX_HTTP_CMS_SCHEMA_H_INCLUDED_ */
