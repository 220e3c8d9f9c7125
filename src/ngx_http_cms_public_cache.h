
/*
 * The public surface's cache (cms_public_cache zone=NAME:SIZE
 * [valid=TIME]): one shared-memory zone per host, for every worker.
 *
 * It keeps two kinds of entries, both dropped least recently used first
 * when the zone is full:
 *
 * - sites, by their publishable key's hash: the site, its workspace, its
 *   origin and its content_version, as PostgreSQL gave them at most
 *   "valid" ago (default 500 ms).  A fresh entry answers the key without the
 *   database; an older one is checked again.  Any write this host
 *   answers (a POST, PUT, PATCH or DELETE with a 2xx) makes every site
 *   entry old at once, so that a rotated key, a disabled site or a
 *   publish is seen here immediately and on every other host within
 *   "valid".
 * - bodies, by site, content_version and request line: a section read's
 *   200 and its surrogate keys, answered again without the database while
 *   the version holds.
 *
 * Without the directive nothing is kept and every call below declines.
 */


#ifndef _NGX_HTTP_CMS_PUBLIC_CACHE_H_INCLUDED_
#define _NGX_HTTP_CMS_PUBLIC_CACHE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"


/* a site as a publishable key resolves to; strings in the request pool */
typedef struct {
    ngx_str_t   site_id;
    ngx_str_t   workspace_id;
    ngx_str_t   origin;          /* len 0: none (any origin) */
    uint64_t    version;         /* sites.content_version */
} ngx_http_cms_public_site_t;


/* the directive's handler (main conf) */
char *ngx_http_cms_public_cache_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);

/*
 * The fresh site entry of the key hash "hash": NGX_OK and *site filled,
 * NGX_DECLINED when there is none (or no zone), NGX_ERROR (no memory).
 */
ngx_int_t ngx_http_cms_public_cache_site(ngx_http_request_t *r,
    ngx_str_t *hash, ngx_http_cms_public_site_t *site);

/*
 * The zone's write generation, to be taken before the database is asked
 * about a key and handed to _site_put(): an entry read before a write
 * that came in the meantime is old as soon as it is kept.
 */
ngx_atomic_uint_t ngx_http_cms_public_cache_gen(ngx_http_request_t *r);

/* keeps (or replaces) the site entry of "hash"; best effort */
void ngx_http_cms_public_cache_site_put(ngx_http_request_t *r,
    ngx_str_t *hash, ngx_http_cms_public_site_t *site,
    ngx_atomic_uint_t gen);

/* drops the site entry of "hash" (its key no longer resolves) */
void ngx_http_cms_public_cache_site_drop(ngx_http_request_t *r,
    ngx_str_t *hash);

/*
 * The body kept under "key": NGX_OK and copies (r->pool) in *body and in
 * *surrogate (the Surrogate-Key it was first answered with, which may be
 * empty), NGX_DECLINED when there is none, NGX_ERROR (no memory).
 */
ngx_int_t ngx_http_cms_public_cache_body(ngx_http_request_t *r,
    ngx_str_t *key, ngx_str_t *surrogate, ngx_str_t *body);

/*
 * Keeps "body" under "key" with its Surrogate-Key "surrogate", so that it
 * is answered again as it was; best effort, bodies over 256 KiB are not.
 */
void ngx_http_cms_public_cache_body_put(ngx_http_request_t *r,
    ngx_str_t *key, ngx_str_t *surrogate, ngx_str_t *body);

/* a write answered here: every site entry is old from now on */
void ngx_http_cms_public_cache_touch(ngx_http_request_t *r);


#endif /* _NGX_HTTP_CMS_PUBLIC_CACHE_H_INCLUDED_ */
