
/*
 * ngx_http_cms_module: shared types (configuration, request context).
 */


#ifndef _NGX_HTTP_CMS_MODULE_H_INCLUDED_
#define _NGX_HTTP_CMS_MODULE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <jansson.h>


#define NGX_HTTP_CMS_MAX_PARAMS        4
#define NGX_HTTP_CMS_REQUEST_ID_LEN    32   /* one the module makes */
#define NGX_HTTP_CMS_REQUEST_ID_MAX    64   /* one a client sends */
#define NGX_HTTP_CMS_HOOK_PORTS        8    /* cms_webhook_delivery ports= */

/*
 * The worker is quitting or terminating (a reload, a stop): nothing new is
 * started.  nginx still fires an exiting worker's cancelable timers while
 * it waits for its requests, so every background tick asks first; work
 * begun then would hold the worker until its timeouts.
 */
#define ngx_http_cms_quitting()        (ngx_exiting || ngx_terminate)


typedef struct ngx_http_cms_ctx_s          ngx_http_cms_ctx_t;
typedef struct ngx_http_cms_route_s        ngx_http_cms_route_t;
typedef struct ngx_http_cms_pg_conf_s      ngx_http_cms_pg_conf_t;
typedef struct ngx_http_cms_redis_conf_s   ngx_http_cms_redis_conf_t;
typedef struct ngx_http_cms_video_conf_s   ngx_http_cms_video_conf_t;
typedef struct ngx_http_cms_hooks_conf_s   ngx_http_cms_hooks_conf_t;
typedef struct ngx_http_cms_cdn_conf_s     ngx_http_cms_cdn_conf_t;
typedef struct ngx_http_cms_s3_conf_s      ngx_http_cms_s3_conf_t;


/*
 * A handler, a pipeline step or a continuation.  Handlers and
 * continuations return NGX_DONE (asynchronous work queued; its callback
 * finishes the request), NGX_OK (answer sent), an HTTP status >= 300
 * (error recorded with ngx_http_cms_fail()) or NGX_ERROR.  A pipeline step
 * returns NGX_DECLINED to let the next step run, or any of those codes;
 * a step that waits for I/O returns NGX_DONE and its callback continues
 * the pipeline with ctx->resume().
 */
typedef ngx_int_t (*ngx_http_cms_handler_pt)(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);

/* ends a request with a handler's code: ngx_http_cms_finish() */
typedef void (*ngx_http_cms_finish_pt)(ngx_http_request_t *r, ngx_int_t rc);

/* keeps the first answer of an idempotent request */
typedef void (*ngx_http_cms_record_pt)(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t status, ngx_str_t *body);


/* the credential a route takes (DESIGN.md, Credentials) */
typedef enum {
    NGX_HTTP_CMS_AUTH_NONE = 0,
    NGX_HTTP_CMS_AUTH_SECRET_KEY,
    NGX_HTTP_CMS_AUTH_PUBLISHABLE_KEY,
    NGX_HTTP_CMS_AUTH_SESSION,            /* a session, no workspace */
    NGX_HTTP_CMS_AUTH_MEMBER,             /* a session of a member of :id */
    NGX_HTTP_CMS_AUTH_ADMIN_KEY,
    NGX_HTTP_CMS_AUTH_EXT_KEY
} ngx_http_cms_auth_e;


/* which error body shape a request answers with (spec: two shapes) */
typedef enum {
    NGX_HTTP_CMS_SHAPE_CONTENT = 0,
    NGX_HTTP_CMS_SHAPE_EXT
} ngx_http_cms_shape_e;


/* who may sign up (cms_signup) */
typedef enum {
    NGX_HTTP_CMS_SIGNUP_OFF = 0,          /* nobody: cms-admin makes users */
    NGX_HTTP_CMS_SIGNUP_ON,               /* anyone */
    NGX_HTTP_CMS_SIGNUP_INVITE            /* with an invitation's token */
} ngx_http_cms_signup_e;


/* the login and signup throttles (cms_auth_throttle), per action and key */
typedef enum {
    NGX_HTTP_CMS_THROTTLE_LOGIN_EMAIL = 0,
    NGX_HTTP_CMS_THROTTLE_LOGIN_ADDRESS,
    NGX_HTTP_CMS_THROTTLE_SIGNUP_EMAIL,
    NGX_HTTP_CMS_THROTTLE_SIGNUP_ADDRESS,
    NGX_HTTP_CMS_THROTTLES
} ngx_http_cms_throttle_e;


/* a connection pool's state (PostgreSQL, Redis), for cms_status */
typedef struct {
    ngx_uint_t                  max;
    ngx_uint_t                  connections;
    ngx_uint_t                  idle;
    ngx_uint_t                  busy;
    ngx_uint_t                  queued;
    ngx_uint_t                  pipelined;    /* sent behind another */
} ngx_http_cms_pool_stats_t;


/* a GCRA bucket's setting: "burst" at once, then one every "interval" */
typedef struct {
    ngx_uint_t                  burst;        /* 0: off */
    ngx_msec_t                  interval;
} ngx_http_cms_throttle_t;


/* cms_image_* (ngx_http_cms_image.h) */
#define NGX_HTTP_CMS_IMAGE_WIDTHS_MAX  16

typedef struct {
    ngx_uint_t                  widths[NGX_HTTP_CMS_IMAGE_WIDTHS_MAX];
    ngx_uint_t                  nwidths;       /* ascending; 0: unset */
    ngx_uint_t                  webp;          /* qualities, 1 to 100 */
    ngx_uint_t                  avif;
    ngx_uint_t                  jpeg;
    ngx_int_t                   max_pixels;    /* cms_image_max_pixels */
    ngx_msec_t                  timeout;       /* cms_image_timeout */
    ngx_uint_t                  jobs;          /* 0: as many as CPUs */
    ngx_uint_t                  queue;
} ngx_http_cms_image_conf_t;


typedef struct {
    ngx_http_cms_pg_conf_t     *pg;
    ngx_array_t                *pg_replicas;   /* ngx_http_cms_pg_conf_t *,
                                                  or NULL */
    ngx_http_cms_redis_conf_t  *redis;
    ngx_str_t                   secret;        /* key bytes, from a file */
    u_char                      session_key[32];
    u_char                      api_pepper[32];
    u_char                      aead_key[32];
    u_char                      ui_key[32];
    u_char                      idem_key[32];   /* kept answers */
    u_char                      unsub_key[32];  /* unsubscribe links */
    u_char                      pk_key[32];     /* publishable keys */
    ngx_str_t                   ext_manifests;   /* file: manifests' folder */
    ngx_array_t                *ext_registries;  /* of ngx_str_t hosts */
    ngx_str_t                   ext_fetch;       /* internal location */
    ngx_http_cms_video_conf_t  *video;           /* cms_video_provider */
    ngx_http_cms_hooks_conf_t  *hooks;         /* cms_webhook_delivery */
    ngx_http_cms_cdn_conf_t    *cdn;           /* cms_cdn_purge; NULL */
    ngx_http_cms_s3_conf_t     *s3;            /* cms_storage s3; NULL */
    ngx_str_t                   video_fetch;     /* internal location */
    time_t                      ext_reload_grace;
    time_t                      ext_rotation_grace;
    time_t                      ui_token_ttl;
    ngx_str_t                   thread_pool;
    ngx_thread_pool_t          *tp;
    ngx_uint_t                  password_jobs;   /* 0: as many as CPUs */
    ngx_uint_t                  password_queue;
    ngx_uint_t                  sanitize_jobs;   /* 0: as many as CPUs */
    ngx_uint_t                  sanitize_queue;
    ngx_http_cms_image_conf_t   image;
    ngx_http_cms_throttle_t     throttle[NGX_HTTP_CMS_THROTTLES];
    time_t                      session_ttl;
    ngx_flag_t                  require_verified;
    ngx_str_t                   default_plan;  /* cms_default_plan */
    time_t                      invite_ttl;    /* cms_invitation_ttl */
    time_t                      upload_ttl;    /* cms_upload_ttl */
    time_t                      retention;     /* soft-deleted content */
    ngx_msec_t                  idem_ttl;
    ngx_msec_t                  idem_lock;
    ngx_msec_t                  lock_ttl;      /* article locks */
    ngx_msec_t                  events_interval;
    ngx_msec_t                  purge_interval;
    ngx_msec_t                  reconcile;     /* cms_storage_reconcile;
                                                  0: off */
    ngx_uint_t                  signup;        /* cms_signup:
                                                  NGX_HTTP_CMS_SIGNUP_* */
    ngx_str_t                   storage;
    ngx_str_t                   files_base;    /* cms_storage base_url= */
    ngx_flag_t                  test_routes;
    ngx_flag_t                  outbound_loopback;
    ngx_str_t                   public_cache;  /* cms_public_cache_control */
    ngx_flag_t                  public_limit;  /* cms_public_rate_limit */
    ngx_http_cms_throttle_t     public_site;   /* cms_public_site_limit */
    ngx_str_t                   public_private;  /* the Cache-Control of
                                                    a header-keyed 200 */
    ngx_shm_zone_t             *public_zone;   /* cms_public_cache */
    ngx_resolver_t             *resolver;     /* the http{} block's */
    ngx_msec_t                  resolver_timeout;
    ngx_array_t                *resolve_needs; /* of
                                                  ngx_http_cms_resolve_need_t */
    ngx_shm_zone_t             *metrics;     /* the workers' counters */
} ngx_http_cms_main_conf_t;


/* cms_webhook_delivery (ngx_http_cms_deliver.h) */
struct ngx_http_cms_hooks_conf_s {
    ngx_flag_t                  enable;       /* on: worker 0 delivers */
    ngx_str_t                   ca;           /* ca=: empty, the system's */
    ngx_msec_t                  timeout;      /* timeout=, a delivery's */
    ngx_str_t                   scale;        /* retry_scale=, as text */
    ngx_msec_t                  retention;    /* retention=, settled rows */
    ngx_uint_t                  concurrency;  /* concurrency=, in flight */
    ngx_str_t                   ports_text;   /* ports=, as written */
    in_port_t                   ports[NGX_HTTP_CMS_HOOK_PORTS];
    ngx_uint_t                  nports;       /* ports=: 443 alone */
    ngx_ssl_t                  *ssl;          /* verifies endpoints */
};


typedef struct {
    ngx_flag_t                  enable;
    ngx_flag_t                  error_pages;  /* cms_error_pages */
    size_t                      body_max_size;
    size_t                      upload_max_size;  /* a raw upload's */
    size_t                      avatar_max_size;  /* an avatar's */
    ngx_uint_t                  json_max_depth;
} ngx_http_cms_loc_conf_t;


/* who is calling, filled by _auth.c */
typedef struct {
    ngx_uint_t                  family;       /* ngx_http_cms_auth_e */
    ngx_str_t                   user_id;
    ngx_str_t                   workspace_id;
    ngx_str_t                   key_id;       /* secret keys; a site */
    ngx_str_t                   site_id;      /* publishable keys */
    u_char                     *key_hmac;     /* secret keys: the hex
                                                 HMAC looked up */
    ngx_str_t                   session_id;   /* sessions: "sid" claim */
    time_t                      expires;      /* sessions: "exp" claim */
    ngx_uint_t                  session_gen;  /* sessions: "gen" claim */
    ngx_str_t                   user_json;    /* sessions: the user record */
    ngx_uint_t                  role;         /* ngx_http_cms_role_e */
    ngx_uint_t                  scopes;       /* bit mask of scopes */
    ngx_str_t                   facility_id;  /* extension keys */
    ngx_str_t                   extension_id;
    ngx_uint_t                  livemode;
} ngx_http_cms_principal_t;


/* one recorded error: an index into the catalogue and the offending field */
typedef struct {
    ngx_uint_t                  code;
    ngx_str_t                   param;
    const char                 *message;      /* overrides the default */
} ngx_http_cms_err_t;


struct ngx_http_cms_ctx_s {
    u_char                      request_id[NGX_HTTP_CMS_REQUEST_ID_MAX];
    size_t                      request_id_len;
    ngx_str_t                   traceparent;   /* a valid inbound one's
                                                  55 bytes, in headers_in */
    ngx_http_cms_shape_e        shape;

    ngx_http_cms_route_t       *route;
    ngx_uint_t                  auth;          /* ngx_http_cms_auth_e */
    ngx_uint_t                  perm;          /* scope, role, privilege */
    ngx_uint_t                  step;          /* the running step */
    ngx_http_cms_principal_t    principal;
    ngx_str_t                   params[NGX_HTTP_CMS_MAX_PARAMS];
    ngx_uint_t                  nparams;

    ngx_str_t                   raw_body;
    off_t                       body_size;     /* the bytes read so far */
    json_t                     *body;          /* owned by r->pool cleanup */

    ngx_http_cms_err_t          err;
    ngx_http_cms_err_t          early_err;     /* an answer recorded before
                                                  the rate limit counted
                                                  its request, and its */
    ngx_int_t                   early_rc;      /* code (_router.c) */

    ngx_int_t                   out_rc;        /* rc of the output filter */
    ngx_uint_t                  pending;       /* async operations in flight */

    void                       *data;          /* the handler's own state */
    void                       *idem;          /* a claimed idempotency key */
    void                       *fused;         /* PGresult of a fused read,
                                                  during its callback only */
    void                       *lane_hold;     /* a place held in a thread
                                                  lane (_thread.c) */

    /*
     * Set by the layers above, so that the layers below never call up:
     * finish by ngx_http_cms_ctx_create() (what the pools' callbacks end
     * a request with), resume by the router (what a step that waited
     * continues the pipeline with), record by the idempotency step (what
     * ngx_http_cms_send() hands the first answer to).
     */
    ngx_http_cms_finish_pt      finish;
    ngx_http_cms_handler_pt     resume;
    ngx_http_cms_record_pt      record;

    ngx_str_t                   replacement;   /* for nginx's own errors */
    ngx_str_t                   cors;          /* Access-Control-Allow-
                                                  Origin, when set */
    ngx_str_t                   surrogate;     /* Surrogate-Key, Cache-Tag */
    ngx_str_t                   etag;          /* a public 200's, when
                                                  known before its body */
    ngx_str_t                   public_key;    /* the public cache's key
                                                  of this body */
    uint64_t                    public_version;  /* the site's content
                                                    version */
    ngx_atomic_uint_t           public_gen;    /* _public_cache_gen() */
    ngx_str_t                   fetch_url;     /* $cms_fetch_url */
    ngx_str_t                   fetch_method;  /* $cms_fetch_method */
    ngx_str_t                   fetch_body;    /* $cms_fetch_body */
    ngx_str_t                   fetch_key;     /* $cms_video_access_key */
    void                       *outbound;      /* a bucket's exchange in
                                                  flight (_s3.c) */
    void                       *held;          /* an answer waiting for
                                                  its write's position
                                                  (_response.c) */
    void                       *pg_wait;       /* a query waiting for its
                                                  route, or a position
                                                  being kept
                                                  (_pg_replica.c) */
    ngx_uint_t                  pg_route;      /* 0: not chosen, 1: the
                                                  primary, 2 + i: replica
                                                  i */

    unsigned                    sent:1;
    unsigned                    pg_wrote:1;    /* a write ran a statement */
    unsigned                    pg_marked:1;   /* its position is kept */
    unsigned                    traced:1;      /* traceparent echoed */
    unsigned                    answering:1;
    unsigned                    replace:1;
    unsigned                    replaced:1;
    unsigned                    finalized:1;
    unsigned                    has_err:1;
    unsigned                    fused_read:1;  /* the key came with the
                                                  route's record */
    unsigned                    reading:1;     /* within the read step */
    unsigned                    schema_free:1; /* a route that answers
                                                  whatever the schema
                                                  (files, health, docs) */
    unsigned                    body_in:1;

    /* the extension POST's rate limit is left to its idempotency claim */
    unsigned                    limit_deferred:1;
    unsigned                    body_file:2;   /* the route's body is a
                                                  file: its kind
                                                  (_resources.h) */

    /* the answer carries a credential: Cache-Control: no-store; set where
       one is made (a key minted, a session or UI token signed) */
    unsigned                    no_store:1;

    /* a 200 gets a strong ETag (If-None-Match: 304), the public
       Cache-Control and the surrogate keys (the public surface) */
    unsigned                    cacheable:1;

    /* the publishable key came in a header, not the URL: a shared cache
       must not keep the answer (private, Vary: Authorization) */
    unsigned                    key_in_header:1;

    /* counted against the route's own limit (a site's public ceiling, a
       workspace's hand-queued webhook sends): the handler runs again */
    unsigned                    counted:1;
};


extern ngx_module_t  ngx_http_cms_module;

/* the directives (ngx_http_cms_module_cmds.c) */
extern ngx_command_t  ngx_http_cms_commands[];

/* "cms": the location's content handler (ngx_http_cms_module.c) */
char *ngx_http_cms(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);


/*
 * Whether a pooled idle connection is still sound, known without a system
 * call: NGX_OK sound, NGX_ERROR closed by the peer, NGX_DECLINED cannot
 * tell (ask the socket).  nginx's epoll module marks a read event
 * pending_eof when the kernel reports EPOLLRDHUP, which a FIN or a reset
 * raises in the same wakeup as any bytes before it; anything that comes
 * while the connection is idle is an edge its idle handler sees.  Over
 * TLS, or with another event method, only the socket can tell.
 */
static ngx_inline ngx_int_t
ngx_http_cms_idle_sound(ngx_connection_t *c)
{
#if (NGX_HAVE_EPOLLRDHUP)
    if ((ngx_event_flags & NGX_USE_EPOLL_EVENT) && ngx_use_epoll_rdhup
        && c->ssl == NULL)
    {
        return (c->read->pending_eof || c->read->eof || c->read->error)
               ? NGX_ERROR : NGX_OK;
    }
#endif

    return NGX_DECLINED;
}


#endif /* _NGX_HTTP_CMS_MODULE_H_INCLUDED_ */
