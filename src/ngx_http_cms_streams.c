
/*
 * The video provider's routes (studio, session of a member):
 *
 *   POST /v1/workspaces/{id}/videos/upload-credentials
 *       creates a video at the provider and answers what a client needs to
 *       upload its file straight to the provider (TUS for Bunny Stream);
 *       the provider's video is recorded as the workspace's (video_streams,
 *       sql/0026_video_streams.sql);
 *   GET /v1/workspaces/{id}/videos/stream/{streamId}/status
 *       polls the provider for a video the workspace created, answers
 *       {status, duration_seconds, ...} and keeps them on the workspace's
 *       video rows naming that stream (best effort).
 *
 * The provider is called through an in-memory subrequest to the internal
 * location cms_video_fetch_location (a proxy_pass to $cms_fetch_url), so
 * the worker never blocks on it.  Without cms_video_provider both answer
 * 501 not_configured; a provider that cannot be reached, times out or
 * answers 5xx gives 503 provider_unavailable, any other refusal or an
 * answer that cannot be read 502 provider_error.
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
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_conf.h"
#include "ngx_http_cms_streams.h"


#define NGX_HTTP_CMS_STREAMS_KEY_MAX     1024
#define NGX_HTTP_CMS_STREAMS_TTL         (3600 * 1000)
#define NGX_HTTP_CMS_STREAMS_TITLE       "Untitled video"


/* a request between its steps */
typedef struct {
    ngx_http_cms_video_conf_t  *vcf;
    ngx_http_cms_video_call_t   call;
    ngx_uint_t                  status;      /* the provider's; 0: none */
    ngx_str_t                   answer;      /* the provider's body */
    ngx_str_t                   title;
    ngx_http_cms_video_state_t  state;
    ngx_int_t                 (*read)(ngx_http_request_t *r,
                                      ngx_str_t *answer,
                                      ngx_http_cms_video_state_t *st);
    ngx_http_cms_handler_pt     next;        /* once the answer is read */
    unsigned                    poll:1;      /* 404 is the stream's */
} ngx_http_cms_stream_t;


static ngx_int_t ngx_http_cms_streams_begin(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_stream_t **stp);
static ngx_int_t ngx_http_cms_streams_credentials(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_streams_created(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_streams_recorded(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_streams_status(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_streams_owned(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_streams_polled(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_streams_kept(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, PGresult *res);
static ngx_int_t ngx_http_cms_streams_call(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_stream_t *st);
static ngx_int_t ngx_http_cms_streams_fetched(ngx_http_request_t *r,
    void *data, ngx_int_t rc);
static void ngx_http_cms_streams_resume(ngx_http_request_t *r);
static ngx_int_t ngx_http_cms_streams_answered(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_stream_t *st);
static void ngx_http_cms_streams_args(ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_stream_t *st, ngx_str_t *args);
static ngx_int_t ngx_http_cms_streams_send(ngx_http_request_t *r,
    json_t *out);

static const ngx_http_cms_video_provider_t *ngx_http_cms_streams_provider(
    ngx_conf_t *cf, ngx_str_t *name);
static ngx_int_t ngx_http_cms_streams_conf_check(ngx_conf_t *cf,
    ngx_http_cms_video_conf_t *vcf);
static ngx_int_t ngx_http_cms_streams_conf_api(ngx_conf_t *cf,
    ngx_http_cms_video_conf_t *vcf);


/* the providers cms_video_provider knows, by name */
static const ngx_http_cms_video_provider_t  *ngx_http_cms_streams_providers[] =
{
    &ngx_http_cms_streams_bunny,
    NULL
};


static const ngx_http_cms_param_t  ngx_http_cms_streams_params[] = {
    { ngx_string("library="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_video_conf_t, library) },
    { ngx_string("api_key_file="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_video_conf_t, key_file) },
    { ngx_string("api="), NGX_HTTP_CMS_PARAM_STRING,
      offsetof(ngx_http_cms_video_conf_t, api) },
    { ngx_string("upload_ttl="), NGX_HTTP_CMS_PARAM_MSEC,
      offsetof(ngx_http_cms_video_conf_t, upload_ttl) },
    { ngx_null_string, 0, 0 }
};


/* the body of upload-credentials: $1 title */
static const cms_field_t  ngx_http_cms_streams_fields[] = {
    { "title", CMS_FIELD_STRING, CMS_FIELD_NONEMPTY | CMS_FIELD_NULLABLE, 1,
      NGX_HTTP_CMS_ERR_TITLE_REQUIRED, 0, 1, 500, NULL, NULL, 0, NULL },
    cms_fields_end
};

static const cms_fields_t  ngx_http_cms_streams_input = {
    ngx_http_cms_streams_fields, NULL,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_UNKNOWN_FIELD,
    NGX_HTTP_CMS_ERR_INVALID_REQUEST, NGX_HTTP_CMS_ERR_INVALID_FIELD
};


/* $1 workspace, $2 library, $3 the provider's video id, $4 title,
   $5 the member who asked */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_streams_record_sql =
    ngx_http_cms_pg_stmt(
        "INSERT INTO video_streams (workspace_id, library_id,"
        " stream_video_id, title, created_by)"
        " VALUES ($1, $2, $3, $4, $5)", 5);

/* $1 workspace, $2 library, $3 stream id: one row when it is the
   workspace's */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_streams_owned_sql =
    ngx_http_cms_pg_stmt(
        "SELECT 1 FROM video_streams WHERE workspace_id = $1"
        " AND library_id = $2 AND stream_video_id = $3", 3);

/*
 * $1 workspace, $2 library, $3 stream id, $4 status, $5 duration (NULL:
 * not known yet, the rows keep theirs): the stream's last state, and the
 * workspace's video rows naming the stream (in this library, or in none
 * given), changed only where they differ.
 */
/* a GET's write: on the primary, never a replica */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_streams_keep_sql =
    ngx_http_cms_pg_stmt_primary(
        "WITH s AS ("
        "  UPDATE video_streams SET stream_status = $4,"
        "   duration_seconds = coalesce($5::float8, duration_seconds),"
        "   polled_at = now()"
        "  WHERE workspace_id = $1 AND library_id = $2"
        "   AND stream_video_id = $3),"
        " v AS ("
        "  UPDATE videos SET stream_status = $4,"
        "   duration_seconds = coalesce($5::float8, duration_seconds),"
        "   updated_at = now()"
        "  WHERE workspace_id = $1 AND stream_video_id = $3"
        "   AND (stream_library_id IS NULL OR stream_library_id = $2)"
        "   AND (stream_status IS DISTINCT FROM $4"
        "    OR ($5::float8 IS NOT NULL"
        "        AND duration_seconds IS DISTINCT FROM $5::float8))"
        "  RETURNING 1)"
        " SELECT count(*) FROM v", 5);


/*
 * Editors and up create videos (as for POST /videos); any member polls a
 * video the workspace created.
 */
ngx_http_cms_route_t  ngx_http_cms_streams_routes[] = {

    { NGX_HTTP_POST, ngx_string("/workspaces/:id/videos/upload-credentials"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_EDITOR,
      ngx_http_cms_streams_credentials, NULL, NULL, 0 },

    { NGX_HTTP_GET,
      ngx_string("/workspaces/:id/videos/stream/:stream/status"),
      NGX_HTTP_CMS_AUTH_MEMBER, NGX_HTTP_CMS_ROLE_VIEWER,
      ngx_http_cms_streams_status, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


/* the request's state in *stp: NGX_OK, 501 not_configured, NGX_ERROR */
static ngx_int_t
ngx_http_cms_streams_begin(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_stream_t **stp)
{
    ngx_http_cms_stream_t     *st;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    if (mcf->video == NULL) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_CONFIGURED, NULL);
    }

    st = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_stream_t));
    if (st == NULL) {
        return NGX_ERROR;
    }

    st->vcf = mcf->video;
    ctx->data = st;
    *stp = st;

    return NGX_OK;
}


/* upload credentials */

static ngx_int_t
ngx_http_cms_streams_credentials(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t               rc;
    ngx_str_t               args[1];
    ngx_http_cms_stream_t  *st;

    rc = ngx_http_cms_streams_begin(r, ctx, &st);
    if (rc != NGX_OK) {
        return rc;
    }

    ngx_str_null(&args[0]);

    /* every field is optional: no body at all is fine */
    if (ctx->body != NULL) {
        rc = ngx_http_cms_json_read(r, ctx->body,
                                    &ngx_http_cms_streams_input,
                                    CMS_FIELDS_PATCH, args, 1);
        if (rc != NGX_OK) {
            return rc;
        }
    }

    st->title = args[0];

    if (st->title.data == NULL) {
        ngx_str_set(&st->title, NGX_HTTP_CMS_STREAMS_TITLE);
    }

    if (st->vcf->provider->create(r, st->vcf, &st->title, &st->call)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    st->read = st->vcf->provider->created;
    st->next = ngx_http_cms_streams_created;

    return ngx_http_cms_streams_call(r, ctx, st);
}


/* the provider made the video: it is recorded as the workspace's */
static ngx_int_t
ngx_http_cms_streams_created(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t               args[5];
    ngx_http_cms_stream_t  *st;

    st = ctx->data;

    ngx_http_cms_streams_args(ctx, st, args);
    args[3] = st->title;
    args[4] = ctx->principal.user_id;

    return ngx_http_cms_pg_query(r, &ngx_http_cms_streams_record_sql, args, 5,
                                 ngx_http_cms_streams_recorded);
}


static ngx_int_t
ngx_http_cms_streams_recorded(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    json_t                 *out;
    ngx_int_t               rc;
    ngx_http_cms_stream_t  *st;

    rc = ngx_http_cms_error_check(r, res, PGRES_COMMAND_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    st = ctx->data;

    out = json_pack("{s:s%,s:s%,s:s%,s:s%}",
                    "provider", st->vcf->provider->name.data,
                    st->vcf->provider->name.len,
                    "stream_video_id", st->state.id.data, st->state.id.len,
                    "stream_library_id", st->vcf->library.data,
                    st->vcf->library.len,
                    "title", st->title.data, st->title.len);

    if (out != NULL
        && st->vcf->provider->credentials(r, st->vcf, &st->state.id, out)
           != NGX_OK)
    {
        json_decref(out);
        return NGX_ERROR;
    }

    /* a signature to upload with: nobody on the way keeps it */
    ctx->no_store = 1;

    return ngx_http_cms_streams_send(r, out);
}


/* a stream's status */

static ngx_int_t
ngx_http_cms_streams_status(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t               rc;
    ngx_str_t               args[3];
    ngx_http_cms_stream_t  *st;

    rc = ngx_http_cms_streams_begin(r, ctx, &st);
    if (rc != NGX_OK) {
        return rc;
    }

    /* an id of another form is simply not found */
    if (st->vcf->provider->id_valid(&ctx->params[0]) != NGX_OK) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    st->state.id = ctx->params[0];

    ngx_http_cms_streams_args(ctx, st, args);

    return ngx_http_cms_pg_query(r, &ngx_http_cms_streams_owned_sql, args, 3,
                                 ngx_http_cms_streams_owned);
}


/* the workspace created that video: the provider is asked */
static ngx_int_t
ngx_http_cms_streams_owned(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    ngx_int_t               rc;
    ngx_http_cms_stream_t  *st;

    rc = ngx_http_cms_error_check(r, res, PGRES_TUPLES_OK);
    if (rc != NGX_OK) {
        return rc;
    }

    if (PQntuples(res) != 1) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    st = ctx->data;

    if (st->vcf->provider->poll(r, st->vcf, &st->state.id, &st->call)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    st->read = st->vcf->provider->polled;
    st->next = ngx_http_cms_streams_polled;
    st->poll = 1;

    return ngx_http_cms_streams_call(r, ctx, st);
}


static ngx_int_t
ngx_http_cms_streams_polled(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    u_char                 *p;
    ngx_str_t               args[5];
    ngx_http_cms_stream_t  *st;

    st = ctx->data;

    ngx_http_cms_streams_args(ctx, st, args);
    args[3] = st->state.status;
    ngx_str_null(&args[4]);

    if (st->state.duration > 0) {
        p = ngx_pnalloc(r->pool, NGX_INT64_LEN + 8);
        if (p == NULL) {
            return NGX_ERROR;
        }

        args[4].data = p;
        args[4].len = ngx_sprintf(p, "%.3f", st->state.duration) - p;
    }

    return ngx_http_cms_pg_query(r, &ngx_http_cms_streams_keep_sql, args, 5,
                                 ngx_http_cms_streams_kept);
}


/* kept or not (best effort), the provider's answer is the answer */
static ngx_int_t
ngx_http_cms_streams_kept(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    PGresult *res)
{
    json_t                 *out, *duration;
    ngx_http_cms_stream_t  *st;

    if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
        ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                      "cms: keeping a video's stream status failed: %s",
                      res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY)
                          : "no answer from postgres");
    }

    st = ctx->data;

    if (st->state.duration == (double) (int64_t) st->state.duration) {
        duration = json_integer((json_int_t) st->state.duration);

    } else {
        duration = json_real(st->state.duration);
    }

    out = json_pack("{s:s%,s:o,s:s%,s:s%}",
                    "status", st->state.status.data, st->state.status.len,
                    "duration_seconds", duration,
                    "stream_video_id", st->state.id.data, st->state.id.len,
                    "stream_library_id", st->vcf->library.data,
                    st->vcf->library.len);

    return ngx_http_cms_streams_send(r, out);
}


/* the provider's API, through the fetch location */

static ngx_int_t
ngx_http_cms_streams_call(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_stream_t *st)
{
    ngx_http_request_t           *sr;
    ngx_http_cms_main_conf_t     *mcf;
    ngx_http_post_subrequest_t   *ps;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    /* what the fetch location's variables give the subrequest */
    ctx->fetch_url = st->call.url;
    ctx->fetch_method = st->call.method;
    ctx->fetch_body = st->call.body;
    ctx->fetch_key = st->vcf->key;

    ps = ngx_palloc(r->pool, sizeof(ngx_http_post_subrequest_t));
    if (ps == NULL) {
        return NGX_ERROR;
    }

    ps->handler = ngx_http_cms_streams_fetched;
    ps->data = st;

    if (ngx_http_subrequest(r, &mcf->video_fetch, NULL, &sr, ps,
                            NGX_HTTP_SUBREQUEST_IN_MEMORY
                            | NGX_HTTP_SUBREQUEST_WAITED)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* the parent goes on when the subrequest is done */
    r->write_event_handler = ngx_http_cms_streams_resume;

    return NGX_DONE;
}


/* the subrequest is done: keep what it got for the parent */
static ngx_int_t
ngx_http_cms_streams_fetched(ngx_http_request_t *r, void *data, ngx_int_t rc)
{
    ngx_http_cms_stream_t *st = data;

    st->status = 0;
    ngx_str_null(&st->answer);

    if (rc != NGX_OK) {
        /*
         * unreachable, timed out, or over subrequest_output_buffer_size:
         * the client's request lives on, answered 503
         */
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: the video provider did not answer \"%V %V\"",
                      &st->call.method, &st->call.url);
        return NGX_OK;
    }

    st->status = r->headers_out.status;

    if (r->out && r->out->buf) {
        st->answer.data = r->out->buf->pos;
        st->answer.len = r->out->buf->last - r->out->buf->pos;
    }

    return rc;
}


static void
ngx_http_cms_streams_resume(ngx_http_request_t *r)
{
    ngx_http_cms_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    r->write_event_handler = ngx_http_request_empty_handler;

    ngx_http_cms_finish(r, ngx_http_cms_streams_answered(r, ctx, ctx->data));
}


/* the provider's status decides what goes on */
static ngx_int_t
ngx_http_cms_streams_answered(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_stream_t *st)
{
    ngx_int_t  rc;

    ngx_str_null(&ctx->fetch_key);

    if (st->status >= 200 && st->status < 300) {
        rc = st->read(r, &st->answer, &st->state);

        if (rc == NGX_DECLINED) {
            return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_PROVIDER_ERROR,
                                     NULL);
        }

        return rc == NGX_OK ? st->next(r, ctx) : NGX_ERROR;
    }

    if (st->status == NGX_HTTP_NOT_FOUND && st->poll) {
        /* the workspace's video is gone at the provider */
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    if (st->status == 0 || st->status >= 500) {
        if (st->status) {
            ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                          "cms: the video provider answered \"%V %V\" "
                          "with %ui", &st->call.method, &st->call.url,
                          st->status);
        }

        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_PROVIDER_UNAVAILABLE,
                                 NULL);
    }

    /* a refused key or library is the operator's to fix: logged */
    ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                  "cms: the video provider refused \"%V %V\" with %ui",
                  &st->call.method, &st->call.url, st->status);

    return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_PROVIDER_ERROR, NULL);
}


/* $1 workspace, $2 library, $3 the provider's video id */
static void
ngx_http_cms_streams_args(ngx_http_cms_ctx_t *ctx, ngx_http_cms_stream_t *st,
    ngx_str_t *args)
{
    args[0] = ctx->principal.workspace_id;
    args[1] = st->vcf->library;
    args[2] = st->state.id;
}


/* a 200 with "out" (a new reference, NULL when making it failed) */
static ngx_int_t
ngx_http_cms_streams_send(ngx_http_request_t *r, json_t *out)
{
    if (out == NULL) {
        return NGX_ERROR;
    }

    /* on failure, the pool drops the reference itself */
    if (ngx_http_cms_json_pool(r, out) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_send_json(r, NGX_HTTP_OK, out);
}


/* configuration */

/* long: the provider, its parameters, the key file, then the checks */
char *
ngx_http_cms_streams_conf(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_cms_main_conf_t *mcf = conf;

    ngx_str_t                   *value;
    ngx_http_cms_video_conf_t   *vcf;

    if (mcf->video != NULL) {
        return "is duplicate";
    }

    vcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_cms_video_conf_t));
    if (vcf == NULL) {
        return NGX_CONF_ERROR;
    }

    /*
     * set by ngx_pcalloc():
     *
     *     vcf->library = { 0, NULL };
     *     vcf->key_file = { 0, NULL };
     *     vcf->key = { 0, NULL };
     *     vcf->api = { 0, NULL };
     */

    vcf->upload_ttl = NGX_CONF_UNSET_MSEC;

    value = cf->args->elts;

    vcf->provider = ngx_http_cms_streams_provider(cf, &value[1]);
    if (vcf->provider == NULL) {
        return NGX_CONF_ERROR;
    }

    if (ngx_http_cms_conf_params(cf, "cms_video_provider", 2,
                                 ngx_http_cms_streams_params, vcf)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    if (vcf->library.len == 0 || vcf->key_file.len == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_video_provider: \"library=\" and "
                           "\"api_key_file=\" are required");
        return NGX_CONF_ERROR;
    }

    if (ngx_http_cms_conf_secret_file(cf, "cms_video_provider",
                                      &vcf->key_file,
                                      NGX_HTTP_CMS_STREAMS_KEY_MAX, &vcf->key)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    ngx_conf_init_msec_value(vcf->upload_ttl, NGX_HTTP_CMS_STREAMS_TTL);

    if (vcf->api.len == 0) {
        vcf->api = vcf->provider->api;
    }

    if (ngx_http_cms_streams_conf_check(cf, vcf) != NGX_OK
        || ngx_http_cms_streams_conf_api(cf, vcf) != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    mcf->video = vcf;

    return NGX_CONF_OK;
}


/* the provider named "name", or NULL logged */
static const ngx_http_cms_video_provider_t *
ngx_http_cms_streams_provider(ngx_conf_t *cf, ngx_str_t *name)
{
    ngx_uint_t                            i;
    const ngx_http_cms_video_provider_t  *p;

    for (i = 0; ngx_http_cms_streams_providers[i] != NULL; i++) {
        p = ngx_http_cms_streams_providers[i];

        if (p->name.len == name->len
            && ngx_strncmp(p->name.data, name->data, name->len) == 0)
        {
            return p;
        }
    }

    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                       "cms_video_provider: unknown provider \"%V\" "
                       "(known: bunny)", name);

    return NULL;
}


/*
 * What goes into URLs and headers: a library id of letters, digits, "-"
 * and "_"; a key of visible ASCII (a CR or LF would split the header it
 * is sent in).
 */
static ngx_int_t
ngx_http_cms_streams_conf_check(ngx_conf_t *cf, ngx_http_cms_video_conf_t *vcf)
{
    u_char      c;
    ngx_uint_t  i;

    for (i = 0; i < vcf->library.len; i++) {
        c = vcf->library.data[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9') || c == '-' || c == '_')
            || i >= 64)
        {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "cms_video_provider: \"library=%V\" must be "
                               "up to 64 letters, digits, \"-\" or \"_\"",
                               &vcf->library);
            return NGX_ERROR;
        }
    }

    for (i = 0; i < vcf->key.len; i++) {
        if (vcf->key.data[i] <= 0x20 || vcf->key.data[i] >= 0x7f) {
            break;
        }
    }

    if (vcf->key.len == 0 || i != vcf->key.len) {
        /* the key itself is never written out */
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_video_provider: \"%V\" must hold the API key "
                           "(visible ASCII characters, no spaces)",
                           &vcf->key_file);
        return NGX_ERROR;
    }

    return NGX_OK;
}


/* an http(s) API address with no query, fragment or space, kept without
   its trailing "/" */
static ngx_int_t
ngx_http_cms_streams_conf_api(ngx_conf_t *cf, ngx_http_cms_video_conf_t *vcf)
{
    u_char      c;
    ngx_uint_t  i;

    while (vcf->api.len > 0 && vcf->api.data[vcf->api.len - 1] == '/') {
        vcf->api.len--;
    }

    for (i = 0; i < vcf->api.len; i++) {
        c = vcf->api.data[i];

        if (c <= 0x20 || c >= 0x7f || c == '?' || c == '#') {
            break;
        }
    }

    if (i != vcf->api.len
        || !((vcf->api.len > 7
              && ngx_strncasecmp(vcf->api.data, (u_char *) "http://", 7)
                 == 0)
             || (vcf->api.len > 8
                 && ngx_strncasecmp(vcf->api.data, (u_char *) "https://", 8)
                    == 0)))
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_video_provider: \"api=%V\" must be an "
                           "http:// or https:// address with no query",
                           &vcf->api);
        return NGX_ERROR;
    }

    return NGX_OK;
}
