
/*
 * The router: a linear walk over the resources' route tables, then the
 * pipeline.  Patterns are matched segment by segment below "/v1"; ":name"
 * takes one non-empty segment as a parameter, "*name" (the pattern's last
 * part) the rest of the path, slashes included, when not empty.  A route
 * family (the error shape its URL prefix gives) runs its steps in order;
 * each step continues (NGX_DECLINED), answers, or waits for I/O and
 * continues through ctx->resume.  No step or service calls back into the
 * router.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_body.h"
#include "ngx_http_cms_router.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_auth.h"
#include "ngx_http_cms_ext.h"
#include "ngx_http_cms_ratelimit.h"
#include "ngx_http_cms_idempotency.h"
#include "ngx_http_cms_public.h"
#include "ngx_http_cms_schema.h"


#define NGX_HTTP_CMS_PREFIX      "/v1"


static ngx_int_t ngx_http_cms_router_path(ngx_http_request_t *r,
    ngx_str_t *path);
static ngx_int_t ngx_http_cms_router_preflight(ngx_http_cms_ctx_t *ctx);
static ngx_uint_t ngx_http_cms_router_file(ngx_uint_t t);
static ngx_uint_t ngx_http_cms_router_row(ngx_http_cms_route_t *rt,
    ngx_str_t *path, ngx_str_t *studio, ngx_http_cms_ctx_t *ctx);
static void ngx_http_cms_router_studio(ngx_str_t *path, ngx_str_t *studio);
static ngx_int_t ngx_http_cms_route_matches(ngx_str_t *pattern,
    ngx_str_t *path, ngx_str_t *params, ngx_uint_t *nparams);
static ngx_int_t ngx_http_cms_router_allow(ngx_http_request_t *r,
    ngx_uint_t methods);

static ngx_int_t ngx_http_cms_router_run(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_router_resume(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_router_permit(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_router_read(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static void ngx_http_cms_router_read_done(ngx_http_request_t *r);
static ngx_int_t ngx_http_cms_router_body(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_router_ratelimit(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_router_ext_limit(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_router_count(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_int_t rc);
static ngx_int_t ngx_http_cms_router_counted(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_router_idempotency(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_router_handler(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);


/*
 * The route families and their steps, indexed by the error shape their
 * prefix gives (ngx_http_cms_error_shape()):
 *
 *   /v1/api, /v1/workspaces, /v1/accounts, /v1/health  content shape
 *   /v1/ext, /v1/extensions                            extension shape
 *
 * The credential and the permission come first, so that nothing of a
 * refused request is read or parsed (its body is discarded); the rate
 * limit runs before the idempotency claim, so that a 429 is never kept as
 * a request's answer.
 */
static ngx_http_cms_handler_pt  ngx_http_cms_content_steps[] = {
    ngx_http_cms_auth_step,
    ngx_http_cms_router_permit,
    ngx_http_cms_router_read,
    ngx_http_cms_router_body,
    ngx_http_cms_router_handler,
    NULL
};

/*
 * The extension surface: the rate limit right after the key, so that
 * every answer to a known key (a 400, a 403 too) carries its RateLimit
 * headers and counts; a 401 has no key, so no bucket to describe.  A
 * POST is counted by its idempotency claim, in the same Redis script, or
 * as it is answered before it (ngx_http_cms_router_ext_limit()).
 */
static ngx_http_cms_handler_pt  ngx_http_cms_ext_steps[] = {
    ngx_http_cms_auth_step,
    ngx_http_cms_router_ext_limit,
    ngx_http_cms_ext_version,
    ngx_http_cms_router_permit,
    ngx_http_cms_router_read,
    ngx_http_cms_router_body,
    ngx_http_cms_router_idempotency,
    ngx_http_cms_router_handler,
    NULL
};

/*
 * The publishable-key surface (/v1/public, routes whose credential is a
 * publishable key): read-only, so no body is read; CORS before anything,
 * so that a refusal can be read by the page that asked.
 */
static ngx_http_cms_handler_pt  ngx_http_cms_public_steps[] = {
    ngx_http_cms_public_begin,
    ngx_http_cms_public_auth,
    ngx_http_cms_router_ratelimit,
    ngx_http_cms_router_handler,
    NULL
};

static ngx_http_cms_handler_pt  *ngx_http_cms_families[] = {
    ngx_http_cms_content_steps,         /* NGX_HTTP_CMS_SHAPE_CONTENT */
    ngx_http_cms_ext_steps              /* NGX_HTTP_CMS_SHAPE_EXT */
};


/*
 * The stored files first: the hottest route, served from disk.  The
 * first three tables answer whatever the database's schema (an old one
 * refuses every other route: ngx_http_cms_schema.h).
 */
#define NGX_HTTP_CMS_ROUTER_SCHEMA_FREE  3

static ngx_http_cms_route_t  *ngx_http_cms_tables[] = {
    ngx_http_cms_files_routes,
    ngx_http_cms_health_routes,
    ngx_http_cms_docs_routes,
    ngx_http_cms_accounts_routes,
    ngx_http_cms_workspaces_routes,
    ngx_http_cms_api_keys_routes,
    ngx_http_cms_categories_routes,
    ngx_http_cms_articles_routes,
    ngx_http_cms_videos_routes,
    ngx_http_cms_streams_routes,
    ngx_http_cms_media_routes,
    ngx_http_cms_uploads_routes,
    ngx_http_cms_uploads_file_routes,
    ngx_http_cms_billing_routes,
    ngx_http_cms_control_routes,
    ngx_http_cms_extensions_routes,
    ngx_http_cms_comments_routes,
    ngx_http_cms_subscribers_routes,
    ngx_http_cms_podcasts_routes,
    ngx_http_cms_podcasts_feed_routes,
    ngx_http_cms_custom_modules_routes,
    ngx_http_cms_entries_routes,
    ngx_http_cms_members_routes,
    ngx_http_cms_plans_routes,
    ngx_http_cms_profile_routes,
    ngx_http_cms_avatar_routes,
    ngx_http_cms_avatar_file_routes,
    ngx_http_cms_recovery_routes,
    ngx_http_cms_sites_routes,
    ngx_http_cms_sections_routes,
    ngx_http_cms_locks_routes,
    ngx_http_cms_seo_routes,
    ngx_http_cms_public_routes,
    ngx_http_cms_webhooks_routes,
    ngx_http_cms_deliveries_routes,
    ngx_http_cms_testing_routes,
    NULL
};


/* the tables whose bodies are files, and of which kind */
static struct {
    ngx_http_cms_route_t       *table;
    ngx_uint_t                  kind;
} ngx_http_cms_file_tables[] = {
    { ngx_http_cms_uploads_file_routes, NGX_HTTP_CMS_BODY_FILE },
    { ngx_http_cms_avatar_file_routes, NGX_HTTP_CMS_BODY_AVATAR },
    { NULL, NGX_HTTP_CMS_BODY_JSON }
};


static struct {
    ngx_uint_t                  method;
    ngx_str_t                   name;
} ngx_http_cms_methods[] = {
    { NGX_HTTP_GET,     ngx_string("GET") },
    { NGX_HTTP_HEAD,    ngx_string("HEAD") },
    { NGX_HTTP_POST,    ngx_string("POST") },
    { NGX_HTTP_PUT,     ngx_string("PUT") },
    { NGX_HTTP_PATCH,   ngx_string("PATCH") },
    { NGX_HTTP_DELETE,  ngx_string("DELETE") },
    { NGX_HTTP_OPTIONS, ngx_string("OPTIONS") },
};


/* long: the walk over the tables, then 404, a preflight or 405 */
ngx_int_t
ngx_http_cms_router_match(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t                  path, studio[2];
    ngx_uint_t                 t, methods, method, files;
    ngx_http_cms_route_t      *rt;
    ngx_http_cms_main_conf_t  *mcf;

    static ngx_str_t  nosniff_name = ngx_string("X-Content-Type-Options");
    static ngx_str_t  nosniff = ngx_string("nosniff");

    if (ngx_http_cms_router_path(r, &path) != NGX_OK) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    /* "/workspaces/:ws/<rest>": what a studio mirror would match */
    ngx_http_cms_router_studio(&path, studio);

    /* HEAD is answered by the GET route, without a body */
    method = (r->method == NGX_HTTP_HEAD) ? NGX_HTTP_GET : r->method;
    methods = 0;
    files = 0;

    for (t = 0; ngx_http_cms_tables[t] != NULL; t++) {
        rt = ngx_http_cms_tables[t];

        if (rt == ngx_http_cms_testing_routes && !mcf->test_routes) {
            continue;
        }

        for ( /* void */ ; rt->handler; rt++) {
            if (!ngx_http_cms_router_row(rt, &path, studio, ctx)) {
                continue;
            }

            if (rt->method == method) {
                ctx->route = rt;
                ctx->body_file = ngx_http_cms_router_file(t);
                ctx->schema_free = (t < NGX_HTTP_CMS_ROUTER_SCHEMA_FREE);
                return NGX_OK;
            }

            methods |= rt->method;
            files |= (ngx_http_cms_tables[t] == ngx_http_cms_files_routes);
        }
    }

    if (methods == 0) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    /* a browser's preflight of a public route (the last row matched) */
    if (r->method == NGX_HTTP_OPTIONS
        && ctx->auth == NGX_HTTP_CMS_AUTH_PUBLISHABLE_KEY)
    {
        return ngx_http_cms_router_preflight(ctx);
    }

    /* the 405 keeps the path's headers: a page can read a public one, and
       no stored file's path answers without nosniff */
    if (ctx->auth == NGX_HTTP_CMS_AUTH_PUBLISHABLE_KEY) {
        ngx_str_set(&ctx->cors, "*");
    }

    if (ngx_http_cms_router_allow(r, methods) != NGX_OK
        || (files && ngx_http_cms_header_add(r, &nosniff_name, &nosniff)
                     != NGX_OK))
    {
        return NGX_ERROR;
    }

    return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_METHOD_NOT_ALLOWED, NULL);
}


/* the kind of body the table numbered t takes (NGX_HTTP_CMS_BODY_*) */
static ngx_uint_t
ngx_http_cms_router_file(ngx_uint_t t)
{
    ngx_uint_t  i;

    for (i = 0; ngx_http_cms_file_tables[i].table != NULL; i++) {
        if (ngx_http_cms_tables[t] == ngx_http_cms_file_tables[i].table) {
            return ngx_http_cms_file_tables[i].kind;
        }
    }

    return NGX_HTTP_CMS_BODY_JSON;
}


/* OPTIONS on a public route: its preflight, without a credential */
static ngx_int_t
ngx_http_cms_router_preflight(ngx_http_cms_ctx_t *ctx)
{
    ctx->route = &ngx_http_cms_public_preflight_route;
    ctx->auth = NGX_HTTP_CMS_AUTH_NONE;
    ctx->perm = 0;

    return NGX_OK;
}


/*
 * Whether a row matches the path, directly or as its studio mirror
 * (studio[0] the path after the workspace, studio[1] the workspace); sets
 * ctx->auth, ctx->perm and the parameters (the workspace first for the
 * mirror) when it does.
 */
static ngx_uint_t
ngx_http_cms_router_row(ngx_http_cms_route_t *rt, ngx_str_t *path,
    ngx_str_t *studio, ngx_http_cms_ctx_t *ctx)
{
    ngx_str_t  api;

    ctx->nparams = NGX_HTTP_CMS_MAX_PARAMS;

    if (ngx_http_cms_route_matches(&rt->pattern, path, ctx->params,
                                   &ctx->nparams)
        == NGX_OK)
    {
        ctx->auth = rt->auth;
        ctx->perm = rt->perm;
        return 1;
    }

    if (rt->role == 0 || studio[0].len == 0 || rt->pattern.len < 5
        || ngx_strncmp(rt->pattern.data, "/api/", 5) != 0)
    {
        return 0;
    }

    api.data = rt->pattern.data + 4;
    api.len = rt->pattern.len - 4;

    ctx->nparams = NGX_HTTP_CMS_MAX_PARAMS - 1;

    if (ngx_http_cms_route_matches(&api, &studio[0], ctx->params + 1,
                                   &ctx->nparams)
        != NGX_OK)
    {
        return 0;
    }

    ctx->params[0] = studio[1];
    ctx->nparams++;
    ctx->auth = NGX_HTTP_CMS_AUTH_MEMBER;
    ctx->perm = rt->role;

    return 1;
}


/* "/workspaces/<ws>/<rest>" -> studio[0] "/<rest>", studio[1] the
   workspace; studio[0] empty for other paths */
static void
ngx_http_cms_router_studio(ngx_str_t *path, ngx_str_t *studio)
{
    u_char  *p, *last;

    static ngx_str_t  prefix = ngx_string("/workspaces/");

    studio[0].len = 0;

    if (path->len <= prefix.len
        || ngx_strncmp(path->data, prefix.data, prefix.len) != 0)
    {
        return;
    }

    p = path->data + prefix.len;
    last = path->data + path->len;

    studio[1].data = p;

    while (p < last && *p != '/') {
        p++;
    }

    studio[1].len = p - studio[1].data;

    if (studio[1].len == 0 || last - p < 2) {
        return;
    }

    studio[0].data = p;
    studio[0].len = last - p;
}


ngx_int_t
ngx_http_cms_router_dispatch(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ctx->step = 0;
    ctx->resume = ngx_http_cms_router_resume;

    if (!ctx->schema_free
        && ngx_http_cms_schema_behind())
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_SCHEMA_OUT_OF_DATE,
                                 NULL);
    }

    return ngx_http_cms_router_run(r, ctx);
}


/* the steps from ctx->step on, until one answers or waits */
static ngx_int_t
ngx_http_cms_router_run(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t                 rc;
    ngx_http_cms_handler_pt  *steps;

    steps = (ctx->route->auth == NGX_HTTP_CMS_AUTH_PUBLISHABLE_KEY)
            ? ngx_http_cms_public_steps : ngx_http_cms_families[ctx->shape];

    for ( ;; ) {
        rc = steps[ctx->step](r, ctx);

        if (rc != NGX_DECLINED) {
            break;
        }

        /* the handler, the last step, never declines */
        ctx->step++;
    }

    if (ctx->limit_deferred && ctx->has_err && rc != NGX_DONE
        && rc != NGX_ERROR)
    {
        return ngx_http_cms_router_count(r, ctx, rc);
    }

    return rc;
}


/* a step that waited is done: the pipeline goes on after it */
static ngx_int_t
ngx_http_cms_router_resume(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ctx->step++;

    return ngx_http_cms_router_run(r, ctx);
}


/*
 * The route's permission: a scope or privilege for keys, a minimum role
 * for members.  A secret key acts for its creator, so it needs both its
 * scope and, on a row with a studio role, its creator's current role
 * (the key lookup reads it on every request): a key outlives no demotion.
 */
static ngx_int_t
ngx_http_cms_router_permit(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_uint_t                 i;
    ngx_http_cms_principal_t  *p;

    p = &ctx->principal;

    switch (ctx->auth) {

    case NGX_HTTP_CMS_AUTH_SECRET_KEY:
    case NGX_HTTP_CMS_AUTH_EXT_KEY:
    case NGX_HTTP_CMS_AUTH_ADMIN_KEY:
        if ((p->scopes & ctx->perm) != ctx->perm) {
            return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_MISSING_SCOPE, NULL);
        }

        if (ctx->auth == NGX_HTTP_CMS_AUTH_SECRET_KEY
            && p->role < ctx->route->role)
        {
            return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_FORBIDDEN, NULL);
        }

        break;

    case NGX_HTTP_CMS_AUTH_MEMBER:
        if (p->role < ctx->perm) {
            return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_FORBIDDEN, NULL);
        }

        /* handlers see the same parameters as under /v1/api */
        for (i = 1; i < ctx->nparams; i++) {
            ctx->params[i - 1] = ctx->params[i];
        }

        ctx->nparams--;
        break;

    default:
        break;
    }

    return NGX_DECLINED;
}


/*
 * The body is read now, not before: a client learns that its credential
 * is refused before it sends a megabyte, and a server does not receive
 * megabytes for unauthenticated requests.  Reading holds the request:
 * nginx's reference replaces the pipeline's (nginx finalizes the request
 * itself when reading fails later, a client timeout say).  A body already
 * in goes on at once (NGX_DECLINED): nothing is finalized inside a step.
 */
static ngx_int_t
ngx_http_cms_router_read(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;

    r->main->count--;

    /* a file's bytes go to nginx's temporary file as they come */
    if (ctx->body_file) {
        r->request_body_in_file_only = 1;
        r->request_body_file_log_level = NGX_LOG_INFO;
    }

    ctx->reading = 1;
    ctx->body_in = 0;

    rc = ngx_http_read_client_request_body(r, ngx_http_cms_router_read_done);

    ctx->reading = 0;

    if (rc >= NGX_HTTP_SPECIAL_RESPONSE) {
        /* nginx dropped its reference: the pipeline holds the request */
        r->main->count++;

        /* what is left of the body is unknown: the connection closes */
        r->keepalive = 0;
        r->lingering_close = 1;

        return rc;
    }

    return ctx->body_in ? NGX_DECLINED : NGX_DONE;
}


/* the body is in: within the call above, the read step goes on; later,
   the pipeline resumes here */
static void
ngx_http_cms_router_read_done(ngx_http_request_t *r)
{
    ngx_http_cms_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    ctx->body_in = 1;

    if (ctx->reading) {
        return;
    }

    ngx_http_cms_finish(r, ctx->resume(r, ctx));
}


static ngx_int_t
ngx_http_cms_router_body(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t  rc;

    if (ctx->body_file) {
        return NGX_DECLINED;
    }

    rc = ngx_http_cms_body_parse(r, ctx);

    return rc == NGX_OK ? NGX_DECLINED : rc;
}


static ngx_int_t
ngx_http_cms_router_ratelimit(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_ratelimit_check(r, ctx, ctx->resume);
}


/*
 * An extension POST leaves its rate limit to its idempotency claim, which
 * counts the request in the claim's own Redis script (one round trip
 * instead of two); an answer recorded before the claim (a 400, a 403) is
 * counted as it goes out (ngx_http_cms_router_run()).
 */
static ngx_int_t
ngx_http_cms_router_ext_limit(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    if (r->method == NGX_HTTP_POST) {
        ctx->limit_deferred = 1;
        return NGX_DECLINED;
    }

    return ngx_http_cms_ratelimit_check(r, ctx, ctx->resume);
}


/* the request is counted, with its RateLimit headers, before the answer
   "rc" recorded goes out; a 429 takes its place */
static ngx_int_t
ngx_http_cms_router_count(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_int_t rc)
{
    ctx->limit_deferred = 0;
    ctx->early_rc = rc;
    ctx->early_err = ctx->err;

    return ngx_http_cms_ratelimit_check(r, ctx, ngx_http_cms_router_counted);
}


static ngx_int_t
ngx_http_cms_router_counted(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    /* a Redis that could not be asked recorded its own error meanwhile */
    ctx->has_err = 1;
    ctx->err = ctx->early_err;

    return ctx->early_rc;
}


/* POSTs claim their Idempotency-Key */
static ngx_int_t
ngx_http_cms_router_idempotency(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx)
{
    if (r->method != NGX_HTTP_POST) {
        return NGX_DECLINED;
    }

    return ngx_http_cms_idempotency_claim(r, ctx, ctx->resume);
}


/* the last step: a fused read answers from its result */
static ngx_int_t
ngx_http_cms_router_handler(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    if (ctx->fused != NULL) {
        return ctx->route->fused_done(r, ctx, ctx->fused);
    }

    return ctx->route->handler(r, ctx);
}


/* r->uri below "/v1", e.g. "/health"; nginx has already normalised it */
static ngx_int_t
ngx_http_cms_router_path(ngx_http_request_t *r, ngx_str_t *path)
{
    size_t  n;

    n = sizeof(NGX_HTTP_CMS_PREFIX) - 1;

    if (r->uri.len <= n + 1
        || ngx_strncmp(r->uri.data, NGX_HTTP_CMS_PREFIX, n) != 0
        || r->uri.data[n] != '/')
    {
        return NGX_DECLINED;
    }

    path->data = r->uri.data + n;
    path->len = r->uri.len - n;

    return NGX_OK;
}


/* *nparams: how many parameters fit on the way in, how many were found
   on the way out */
/* long: the segment walk with its parameters inline */
static ngx_int_t
ngx_http_cms_route_matches(ngx_str_t *pattern, ngx_str_t *path,
    ngx_str_t *params, ngx_uint_t *nparams)
{
    u_char      *p, *pe, *s, *se, *seg;
    ngx_uint_t   n;

    p = pattern->data;
    pe = p + pattern->len;
    s = path->data;
    se = s + path->len;
    n = 0;

    while (p < pe && s < se) {

        if (*p == '*') {
            /* the rest of the path (s < se: not empty) */
            if (n == *nparams) {
                return NGX_DECLINED;
            }

            params[n].data = s;
            params[n].len = se - s;
            n++;

            p = pe;
            s = se;

            break;
        }

        if (*p == ':') {
            /* a parameter: one non-empty segment */
            while (p < pe && *p != '/') {
                p++;
            }

            seg = s;

            while (s < se && *s != '/') {
                s++;
            }

            if (s == seg || n == *nparams) {
                return NGX_DECLINED;
            }

            params[n].data = seg;
            params[n].len = s - seg;
            n++;

            continue;
        }

        if (*p != *s) {
            return NGX_DECLINED;
        }

        p++;
        s++;
    }

    if (p != pe || s != se) {
        return NGX_DECLINED;
    }

    *nparams = n;

    return NGX_OK;
}


static ngx_int_t
ngx_http_cms_router_allow(ngx_http_request_t *r, ngx_uint_t methods)
{
    u_char      *p;
    size_t       len;
    ngx_str_t    value;
    ngx_uint_t   i;

    static ngx_str_t  allow = ngx_string("Allow");

    if (methods & NGX_HTTP_GET) {
        methods |= NGX_HTTP_HEAD;
    }

    len = 0;

    for (i = 0; i < sizeof(ngx_http_cms_methods)
                    / sizeof(ngx_http_cms_methods[0]); i++)
    {
        len += ngx_http_cms_methods[i].name.len + 2;
    }

    p = ngx_pnalloc(r->pool, len);

    if (p == NULL) {
        return NGX_ERROR;
    }

    value.data = p;

    for (i = 0; i < sizeof(ngx_http_cms_methods)
                    / sizeof(ngx_http_cms_methods[0]); i++)
    {
        if (!(methods & ngx_http_cms_methods[i].method)) {
            continue;
        }

        if (p != value.data) {
            *p++ = ','; *p++ = ' ';
        }

        p = ngx_cpymem(p, ngx_http_cms_methods[i].name.data,
                       ngx_http_cms_methods[i].name.len);
    }

    value.len = p - value.data;

    return ngx_http_cms_header_add(r, &allow, &value);
}
