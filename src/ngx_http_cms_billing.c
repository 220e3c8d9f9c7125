
/*
 * Billing on the extension surface: GET /v1/ext/billing/invoices/{id},
 * POST /v1/ext/billing/payments/{id}/record and .../fail.  An extension
 * key sees its facility's invoices of its own mode only (sandbox keys
 * never see live ones).  Payments are applied by cms_payment_apply()
 * (sql/0004_extensions.sql) in one transaction with the outbox event and
 * the idempotency key's row.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_json.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_auth.h"
#include "ngx_http_cms_query.h"
#include "ngx_http_cms_idempotency.h"
#include "ngx_http_cms_pg.h"
#include "cms_fields.h"
#include "cms_uuid.h"


#define NGX_HTTP_CMS_PAYMENT_ARGS      11


static ngx_int_t ngx_http_cms_billing_invoice(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_billing_invoice_got(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_billing_invoice_got_fused(
    ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_billing_record(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_billing_fail(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_billing_apply(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *args);
static ngx_int_t ngx_http_cms_billing_applied(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_billing_args(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, const char *kind, ngx_str_t *args);
static int ngx_http_cms_billing_positive(const char *p, size_t len);
static int ngx_http_cms_billing_token(const char *p, size_t len);
#if (NGX_HTTP_CMS_FAULTS)
static ngx_uint_t ngx_http_cms_fault(ngx_http_request_t *r,
    const char *point);
#endif


/* an invoice, the object of cms_invoice_json() (sql/0004) from its columns */
#define NGX_HTTP_CMS_INVOICE_COLUMNS                                         \
    " i.id, i.patient_id, i.amount, i.currency, i.status,"                   \
    " i.reference, i.last_failure, i.livemode, i.created_at, i.updated_at"

static ngx_http_cms_pg_stmt_t  ngx_http_cms_billing_invoice_sql =
    ngx_http_cms_pg_stmt(
        "SELECT" NGX_HTTP_CMS_INVOICE_COLUMNS " FROM invoices i"
        " WHERE i.id = $1 AND i.facility_id = $2 AND i.livemode = $3",
        3);

/*
 * The key and the invoice in one round trip: $1 the key's hash, $2 its
 * mode, $3 the invoice id (NULL when malformed); the key's columns, then
 * the invoice's, NULL when the key's facility has none of that id in the
 * key's mode.
 */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_billing_invoice_fused_sql =
    ngx_http_cms_pg_stmt(
        "SELECT k.*, i.* FROM (" NGX_HTTP_CMS_AUTH_EXT_SQL("") ") k"
        " LEFT JOIN LATERAL (SELECT" NGX_HTTP_CMS_INVOICE_COLUMNS
        "  FROM invoices i WHERE i.id = $3 AND i.facility_id = k.facility_id"
        "   AND i.livemode = $2) i ON true",
        3);

static ngx_http_cms_fused_t  ngx_http_cms_billing_invoice_fused = {
    &ngx_http_cms_billing_invoice_fused_sql, NULL
};

static const ngx_http_cms_col_t  ngx_http_cms_invoice_cols[] = {
    { "id", 0, NGX_HTTP_CMS_COL_STRING },
    { "patient_id", 1, NGX_HTTP_CMS_COL_STRING },
    { "amount", 2, NGX_HTTP_CMS_COL_NUMBER },
    { "currency", 3, NGX_HTTP_CMS_COL_STRING },
    { "status", 4, NGX_HTTP_CMS_COL_STRING },
    { "reference", 5, NGX_HTTP_CMS_COL_STRING },
    { "last_failure", 6, NGX_HTTP_CMS_COL_STRING },
    { "livemode", 7, NGX_HTTP_CMS_COL_BOOL },
    { "created_at", 8, NGX_HTTP_CMS_COL_TIME },
    { "updated_at", 9, NGX_HTTP_CMS_COL_TIME },
};

/* the invoice object itself, not wrapped (extensions-api.md) */
static const ngx_http_cms_record_t  ngx_http_cms_invoice = {
    NULL, "invoices", ngx_http_cms_invoice_cols,
    sizeof(ngx_http_cms_invoice_cols) / sizeof(ngx_http_cms_col_t)
};

static ngx_http_cms_pg_stmt_t  ngx_http_cms_billing_apply_sql =
    ngx_http_cms_pg_stmt(
        "SELECT status, body, replayed FROM cms_payment_apply($1, $2, $3,"
        " $4, $5, $6, $7, $8::numeric, $9, $10,"
        " make_interval(secs => $11::float8 / 1000))",
        11);


/*
 * The bodies: $7 reference, $8 amount, $9 method (record); $10 reason
 * (fail).  Missing: 400 invalid_request; present but bad, null included:
 * 422 validation_error, as the spec's errors say.
 */
static const char *const  ngx_http_cms_billing_methods[] = {
    "mobile_money", "card", "cash", NULL
};

static const cms_field_t  ngx_http_cms_billing_record_fields[] = {
    { "reference", CMS_FIELD_STRING,
      CMS_FIELD_REQUIRED | CMS_FIELD_NULL_INVALID, 7, 0, 0, 1, 255,
      NULL, NULL, 0, NULL },
    { "amount", CMS_FIELD_NUMBER, CMS_FIELD_REQUIRED, 8, 0, 0,
      0, 1000000000000000LL, NULL, ngx_http_cms_billing_positive, 0, NULL },
    { "method", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 9, 0, 0, 0, 20,
      ngx_http_cms_billing_methods, NULL, 0, NULL },
    cms_fields_end
};

static const cms_field_t  ngx_http_cms_billing_fail_fields[] = {
    { "reason", CMS_FIELD_STRING,
      CMS_FIELD_REQUIRED | CMS_FIELD_NULL_INVALID, 10, 0, 0, 1, 64,
      NULL, ngx_http_cms_billing_token, 0, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_billing_record_in = {
    ngx_http_cms_billing_record_fields, NULL,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_EXT_VALIDATION
};

static const cms_fields_t  ngx_http_cms_billing_fail_in = {
    ngx_http_cms_billing_fail_fields, NULL,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_EXT_VALIDATION
};


ngx_http_cms_route_t  ngx_http_cms_billing_routes[] = {

    { NGX_HTTP_GET, ngx_string("/ext/billing/invoices/:id"),
      NGX_HTTP_CMS_AUTH_EXT_KEY, NGX_HTTP_CMS_PRIV_BILLING_READ,
      ngx_http_cms_billing_invoice, &ngx_http_cms_billing_invoice_fused,
      ngx_http_cms_billing_invoice_got_fused, 0 },

    { NGX_HTTP_POST, ngx_string("/ext/billing/payments/:id/record"),
      NGX_HTTP_CMS_AUTH_EXT_KEY, NGX_HTTP_CMS_PRIV_BILLING_WRITE,
      ngx_http_cms_billing_record, NULL, NULL, 0 },

    { NGX_HTTP_POST, ngx_string("/ext/billing/payments/:id/fail"),
      NGX_HTTP_CMS_AUTH_EXT_KEY, NGX_HTTP_CMS_PRIV_BILLING_WRITE,
      ngx_http_cms_billing_fail, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


static ngx_int_t
ngx_http_cms_billing_invoice(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  args[3];

    if (!cms_uuid_valid((char *) ctx->params[0].data, ctx->params[0].len)) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    args[0] = ctx->params[0];
    args[1] = ctx->principal.facility_id;
    ngx_str_set(&args[2], "f");

    if (ctx->principal.livemode) {
        ngx_str_set(&args[2], "t");
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_billing_invoice_sql, args,
                                 3, ngx_http_cms_billing_invoice_got);
}


static ngx_int_t
ngx_http_cms_billing_invoice_got(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    ngx_int_t  rc;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_send_row(r, NGX_HTTP_OK, &ngx_http_cms_invoice,
                                 res);
}


/* the invoice came with the key: its columns after the key's */
static ngx_int_t
ngx_http_cms_billing_invoice_got_fused(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res)
{
    return ngx_http_cms_send_row_at(r, NGX_HTTP_OK, &ngx_http_cms_invoice,
                                    res, NGX_HTTP_CMS_AUTH_EXT_COLUMNS);
}


/* reference (required), amount (required, > 0, covers the invoice), method */
static ngx_int_t
ngx_http_cms_billing_record(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[NGX_HTTP_CMS_PAYMENT_ARGS];

    rc = ngx_http_cms_billing_args(r, ctx, "completed", args);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_cms_json_read(r, ctx->body, &ngx_http_cms_billing_record_in,
                                CMS_FIELDS_CREATE, args,
                                NGX_HTTP_CMS_PAYMENT_ARGS);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_billing_apply(r, ctx, args);
}


/* reason (required): short and machine-readable, like insufficient_funds */
static ngx_int_t
ngx_http_cms_billing_fail(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;
    ngx_str_t  args[NGX_HTTP_CMS_PAYMENT_ARGS];

    rc = ngx_http_cms_billing_args(r, ctx, "failed", args);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_cms_json_read(r, ctx->body, &ngx_http_cms_billing_fail_in,
                                CMS_FIELDS_CREATE, args,
                                NGX_HTTP_CMS_PAYMENT_ARGS);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_billing_apply(r, ctx, args);
}


/* $1 kind, $2 facility, $3 livemode, $4 invoice, $5 scope, $6 fingerprint */
static ngx_int_t
ngx_http_cms_billing_args(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    const char *kind, ngx_str_t *args)
{
    ngx_uint_t                 i;
    ngx_http_cms_idem_t       *idem;
    ngx_http_cms_main_conf_t  *mcf;

    if (!cms_uuid_valid((char *) ctx->params[0].data, ctx->params[0].len)) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    idem = ctx->idem;

    if (idem == NULL) {
        ngx_log_error(NGX_LOG_ALERT, r->connection->log, 0,
                      "cms: a payment route ran without a claimed key");
        return NGX_ERROR;
    }

    for (i = 0; i < NGX_HTTP_CMS_PAYMENT_ARGS; i++) {
        ngx_str_null(&args[i]);
    }

    args[0].data = (u_char *) kind;
    args[0].len = ngx_strlen(kind);
    args[1] = ctx->principal.facility_id;
    ngx_str_set(&args[2], "f");

    if (ctx->principal.livemode) {
        ngx_str_set(&args[2], "t");
    }

    args[3] = ctx->params[0];
    args[4] = idem->scope;
    args[5].data = idem->fp;
    args[5].len = NGX_HTTP_CMS_IDEM_HEX;

    /* the database keeps the key as long as Redis keeps the answer */
    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    args[10].data = ngx_pnalloc(r->pool, NGX_INT_T_LEN);
    if (args[10].data == NULL) {
        return NGX_ERROR;
    }

    args[10].len = ngx_sprintf(args[10].data, "%M", mcf->idem_ttl)
                   - args[10].data;

    return NGX_OK;
}


static ngx_int_t
ngx_http_cms_billing_apply(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_str_t *args)
{
    return ngx_http_cms_pg_query(r, &ngx_http_cms_billing_apply_sql, args,
                                 NGX_HTTP_CMS_PAYMENT_ARGS,
                                 ngx_http_cms_billing_applied);
}


static ngx_int_t
ngx_http_cms_billing_applied(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t  rc, status;
    ngx_str_t  body;

    static ngx_str_t  replayed_name = ngx_string("Idempotent-Replayed");
    static ngx_str_t  yes = ngx_string("true");

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

#if (NGX_HTTP_CMS_FAULTS)
    /* the test-only fault point: the worker dies after the commit, before
       the answer is kept in Redis */
    if (ngx_http_cms_fault(r, "after-commit")) {
        ngx_log_error(NGX_LOG_NOTICE, r->connection->log, 0,
                      "cms: fault point \"after-commit\": exiting");
        raise(SIGKILL);
    }
#endif

    status = ngx_atoi((u_char *) PQgetvalue(res, 0, 0),
                      PQgetlength(res, 0, 0));

    body.len = PQgetlength(res, 0, 1);
    body.data = ngx_pnalloc(r->pool, body.len);

    if (status == NGX_ERROR || body.data == NULL) {
        return NGX_ERROR;
    }

    ngx_memcpy(body.data, PQgetvalue(res, 0, 1), body.len);

    /* kept in the database, lost in Redis: the retry rebuilt the answer */
    if (PQgetvalue(res, 0, 2)[0] == 't'
        && ngx_http_cms_header_add(r, &replayed_name, &yes) != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_cms_send(r, status, &body);
}


/* amount: more than 0 (the table's bounds are inclusive) */
static int
ngx_http_cms_billing_positive(const char *p, size_t len)
{
    return strtod(p, NULL) > 0;
}


/* reason: [a-z0-9_]+ (the table bounds its length) */
static int
ngx_http_cms_billing_token(const char *p, size_t len)
{
    size_t  i;

    for (i = 0; i < len; i++) {
        if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9')
              || p[i] == '_'))
        {
            return 0;
        }
    }

    return 1;
}


#if (NGX_HTTP_CMS_FAULTS)

/* "X-Cms-Fault: <point>": only in builds for the test suite */
static ngx_uint_t
ngx_http_cms_fault(ngx_http_request_t *r, const char *point)
{
    ngx_str_t  *v;

    static ngx_str_t  name = ngx_string("X-Cms-Fault");

    v = ngx_http_cms_query_header(r, &name, NULL);

    return v != NULL && v->len == ngx_strlen(point)
           && ngx_strncmp(v->data, point, v->len) == 0;
}

#endif
