
/*
 * The route row and the route tables of the resource files: the only
 * thing each resource exports.  The router reads the tables; a resource
 * never includes the router.
 */


#ifndef _NGX_HTTP_CMS_RESOURCES_H_INCLUDED_
#define _NGX_HTTP_CMS_RESOURCES_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_json.h"


typedef ngx_int_t (*ngx_http_cms_args_pt)(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *args, ngx_uint_t *nargs);


/*
 * A secret-key read in one statement with the key (see fused below).  A
 * statement that takes more than the path parameters (a list's filters
 * and page) names what fills $2.. (at most NGX_HTTP_CMS_MAX_PARAMS):
 * args() answers NGX_OK with *nargs set, NGX_DECLINED to check the key
 * alone and run the handler (which then answers the query's error), or
 * NGX_ERROR.
 */
typedef struct {
    ngx_http_cms_pg_stmt_t     *stmt;
    ngx_http_cms_args_pt        args;
} ngx_http_cms_fused_t;


struct ngx_http_cms_route_s {
    ngx_uint_t                  method;     /* NGX_HTTP_GET, ... */
    ngx_str_t                   pattern;    /* below /v1, ":x" = one segment,
                                               "*x" = the rest */
    ngx_uint_t                  auth;       /* ngx_http_cms_auth_e */
    ngx_uint_t                  perm;       /* scope, role or privilege */
    ngx_http_cms_handler_pt     handler;

    /*
     * Key reads may name one statement that authenticates the key and
     * fetches the record in one round trip: $1 is the key's HMAC, then
     * (extension keys) $2 the key's mode, then the path parameters
     * (malformed uuids as NULL); its first columns are those of
     * NGX_HTTP_CMS_AUTH_KEY_SQL or NGX_HTTP_CMS_AUTH_EXT_SQL.
     * fused_done() then answers from the same result instead of handler().
     */
    ngx_http_cms_fused_t       *fused;
    ngx_http_cms_pg_done_pt     fused_done;

    /*
     * The studio mirror: a secret-key route "/api/<rest>" given a role is
     * also served as "/workspaces/:ws/<rest>" to a session of a member of
     * :ws with at least that role, by the same handler with the same
     * parameters (the workspace taken from the path, not from a key).
     * The same role bounds the secret key on the row: a key acts for its
     * creator, whose current role must reach it too (403 "forbidden").
     */
    ngx_uint_t                  role;       /* ngx_http_cms_role_e */
};


/*
 * What a route's body is: JSON (parsed by the body step), or the raw
 * bytes of a file, for the rows of the file tables below: nginx writes
 * them to its temporary file as they come, never whole in memory, up to
 * the kind's cap instead of cms_body_max_size (ngx_http_cms_body_cap()),
 * and the handler reads r->request_body->temp_file.
 */
#define NGX_HTTP_CMS_BODY_JSON    0
#define NGX_HTTP_CMS_BODY_FILE    1    /* a media upload's bytes */
#define NGX_HTTP_CMS_BODY_AVATAR  2    /* an avatar's bytes */


#define ngx_http_cms_null_route                                              \
    { 0, ngx_null_string, 0, 0, NULL, NULL, NULL, 0 }


extern ngx_http_cms_route_t  ngx_http_cms_files_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_health_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_docs_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_accounts_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_workspaces_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_api_keys_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_categories_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_articles_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_videos_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_streams_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_media_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_uploads_routes[];

/* routes whose body is a file (NGX_HTTP_CMS_BODY_FILE, _AVATAR) */
extern ngx_http_cms_route_t  ngx_http_cms_uploads_file_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_avatar_file_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_billing_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_control_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_extensions_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_comments_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_subscribers_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_podcasts_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_podcasts_feed_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_custom_modules_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_entries_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_members_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_plans_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_profile_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_avatar_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_recovery_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_sites_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_sections_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_locks_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_seo_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_public_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_webhooks_routes[];
extern ngx_http_cms_route_t  ngx_http_cms_deliveries_routes[];

/*
 * A media asset (ngx_http_cms_media.c; the uploads answer with it too):
 * its columns from "m", written by ngx_http_cms_media_record, whose
 * column numbers count from 1 (column 0 a page's total, or 1 in a
 * statement that returns one asset: NGX_HTTP_CMS_MEDIA_ONE); the last,
 * "<width> <url>" of an image stored here, becomes its srcset.
 */
#define NGX_HTTP_CMS_MEDIA_COLUMNS                                           \
    " m.id, m.type, m.title, m.url, m.thumbnail_url, m.mime_type,"           \
    " m.size_bytes, m.width, m.height, m.folder, m.status,"                  \
    " m.created_at, m.color,"                                                \
    " CASE WHEN m.width > 0 AND m.storage_key"                               \
    "  ~ '^[-0-9a-f]{36}/[-0-9a-f]{36}[.](jpg|jpeg|png|webp|gif|avif)$'"     \
    "  THEN m.width || ' ' || m.url END"

#define NGX_HTTP_CMS_MEDIA_ONE  " 1," NGX_HTTP_CMS_MEDIA_COLUMNS

extern const ngx_http_cms_record_t  ngx_http_cms_media_record;

/* a page section's published view (content-api.md), columns from 1 */
extern const ngx_http_cms_record_t  ngx_http_cms_section_published;

/* only with "cms_test_routes on" */
extern ngx_http_cms_route_t  ngx_http_cms_testing_routes[];


#endif /* _NGX_HTTP_CMS_RESOURCES_H_INCLUDED_ */
