
/*
 * GET /v1/files/{key}: a stored object, from the cms_storage folder, with
 * nginx's own file machinery as its static module uses it (open file
 * cache, sendfile, the range and not-modified filters).  No credential
 * and no database: the key's extension alone gives the type and whether
 * it is shown inline (cms_mime.h).  A key is checked against an
 * allow-list (cms_filekey.h) before anything touches the disk, and no
 * component of the path below the root may be a symbolic link: one open
 * beneath the worker's descriptor of the root, the store's own
 * (ngx_http_cms_store_beneath(): openat2() on Linux 5.6+, else a
 * component at a time), or, with an open_file_cache, nginx's own open
 * with "disable_symlinks on" from the root.  Whatever is refused is a plain
 * 404, like a missing file.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_store.h"
#include "ngx_http_cms_query.h"
#include "ngx_http_cms_s3.h"
#include "ngx_http_cms_files.h"
#include "cms_filekey.h"
#include "cms_mime.h"


#if !(NGX_HAVE_OPENAT)
#error "GET /v1/files needs openat(): it opens the path without links"
#endif



static ngx_int_t ngx_http_cms_files_get(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
static ngx_int_t ngx_http_cms_files_beneath(ngx_http_request_t *r,
    size_t root, ngx_open_file_info_t *of, ngx_str_t *path);
static ngx_int_t ngx_http_cms_files_stat(ngx_http_request_t *r,
    ngx_fd_t fd, ngx_open_file_info_t *of, ngx_str_t *path);
static ngx_int_t ngx_http_cms_files_failed(ngx_http_request_t *r,
    ngx_open_file_info_t *of, ngx_str_t *path);
static ngx_int_t ngx_http_cms_files_headers(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *key, cms_filekey_t *k);
static ngx_int_t ngx_http_cms_files_send(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_open_file_info_t *of, ngx_str_t *path);
static void ngx_http_cms_files_unset(ngx_http_request_t *r);
static ngx_int_t ngx_http_cms_files_disposition(ngx_http_request_t *r,
    ngx_str_t *key, cms_filekey_t *k, ngx_str_t *value);


ngx_http_cms_route_t  ngx_http_cms_files_routes[] = {

    /* HEAD too: the router answers it with the GET row; an image's
       variants first (ngx_http_cms_files_size.c) */
    { NGX_HTTP_GET, ngx_string("/files/size/:width/format/:format/*key"),
      NGX_HTTP_CMS_AUTH_NONE, 0, ngx_http_cms_files_size_format, NULL, NULL,
      0 },

    { NGX_HTTP_GET, ngx_string("/files/size/:width/*key"),
      NGX_HTTP_CMS_AUTH_NONE, 0, ngx_http_cms_files_size, NULL, NULL, 0 },

    { NGX_HTTP_GET, ngx_string("/files/*key"), NGX_HTTP_CMS_AUTH_NONE, 0,
      ngx_http_cms_files_get, NULL, NULL, 0 },

    ngx_http_cms_null_route
};


/* nginx's threshold for read-ahead (ngx_open_file_cache.c) */
#define NGX_HTTP_CMS_FILES_READ_AHEAD  (128 * 1024)


static ngx_str_t  ngx_http_cms_files_nosniff_name =
    ngx_string("X-Content-Type-Options");
static ngx_str_t  ngx_http_cms_files_nosniff = ngx_string("nosniff");
static ngx_str_t  ngx_http_cms_files_id_name = ngx_string("X-Request-Id");
static ngx_str_t  ngx_http_cms_files_cache_name =
    ngx_string("Cache-Control");
static ngx_str_t  ngx_http_cms_files_cache =
    ngx_string("public, max-age=31536000, immutable");
static ngx_str_t  ngx_http_cms_files_disposition_name =
    ngx_string("Content-Disposition");
static ngx_str_t  ngx_http_cms_files_location_name = ngx_string("Location");
static ngx_str_t  ngx_http_cms_files_no_store = ngx_string("no-store");


/* long: the key's checks, then the bucket or the folder */
static ngx_int_t
ngx_http_cms_files_get(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    ngx_int_t                  rc;
    ngx_str_t                 *key, path;
    cms_filekey_t              k;
    ngx_open_file_info_t       of;
    ngx_http_cms_main_conf_t  *mcf;

    key = &ctx->params[0];

    rc = ngx_http_cms_files_key(r, key, &k);
    if (rc != NGX_OK) {
        return rc;
    }

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    if (mcf->s3 != NULL) {
        return ngx_http_cms_files_bucket(r, ctx, key, &k);
    }

    rc = ngx_http_cms_files_open(r, key, 0, &of, &path);

    if (rc == NGX_DECLINED) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_files_answer(r, ctx, key, &k, &of, &path);
}


ngx_int_t
ngx_http_cms_files_key(ngx_http_request_t *r, ngx_str_t *key,
    cms_filekey_t *k)
{
    /* on every answer, the 404s included */
    if (ngx_http_cms_header_add(r, &ngx_http_cms_files_nosniff_name,
                                &ngx_http_cms_files_nosniff)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    /*
     * r->uri is what nginx made of the request's path: percent-escapes
     * decoded, dot segments resolved, slashes merged.  It is the raw
     * path itself (the same bytes) only when there was nothing to do, so
     * an escaped, double-escaped or dotted path is refused whatever it
     * decodes to, as is a path another module rewrote.
     */
    if (r->uri.data != r->unparsed_uri.data
        || !cms_filekey_parse((char *) key->data, key->len, k))
    {
        ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                      "cms: file key refused");
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_files_answer(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_str_t *key, cms_filekey_t *k, ngx_open_file_info_t *of,
    ngx_str_t *path)
{
    if (ngx_http_cms_files_headers(r, ctx, key, k) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_files_send(r, ctx, of, path);
}


/* long: the path, then the static module's open */
ngx_int_t
ngx_http_cms_files_open(ngx_http_request_t *r, ngx_str_t *key,
    ngx_uint_t fresh, ngx_open_file_info_t *of, ngx_str_t *path)
{
    u_char                    *p;
    ngx_str_t                  root;
    ngx_http_core_loc_conf_t  *clcf;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);
    root = mcf->storage;

    if (root.len == 0) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    while (root.len > 1 && root.data[root.len - 1] == '/') {
        root.len--;
    }

    path->len = root.len + 1 + key->len;
    path->data = ngx_pnalloc(r->pool, path->len + 1);
    if (path->data == NULL) {
        return NGX_ERROR;
    }

    p = ngx_cpymem(path->data, root.data, root.len);
    *p++ = '/';
    p = ngx_cpymem(p, key->data, key->len);
    *p = '\0';

    clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);

    ngx_memzero(of, sizeof(ngx_open_file_info_t));

    of->read_ahead = clcf->read_ahead;
    of->directio = clcf->directio;
    of->valid = clcf->open_file_cache_valid;
    of->min_uses = clcf->open_file_cache_min_uses;
    of->errors = clcf->open_file_cache_errors;
    of->events = clcf->open_file_cache_events;

    if (clcf->open_file_cache == NULL || fresh) {
        return ngx_http_cms_files_beneath(r, root.len, of, path);
    }

    of->disable_symlinks = NGX_DISABLE_SYMLINKS_ON;
    of->disable_symlinks_from = root.len;

    if (ngx_open_cached_file(clcf->open_file_cache, path, of, r->pool)
        != NGX_OK)
    {
        return ngx_http_cms_files_failed(r, of, path);
    }

    if (!of->is_file) {
        /* a folder, a fifo, a device */
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    return NGX_OK;
}


/*
 * One open beneath the worker's descriptor of the root (path[0 .. root)
 * names the root, path[root] is the '/' before the key), no component a
 * symbolic link (ngx_http_cms_store_beneath()), what disable_symlinks
 * does with a system call a component; the descriptor is closed with the
 * request's pool.
 */
static ngx_int_t
ngx_http_cms_files_beneath(ngx_http_request_t *r, size_t root,
    ngx_open_file_info_t *of, ngx_str_t *path)
{
    ngx_fd_t                  fd, dir;
    ngx_str_t                 name;
    ngx_pool_cleanup_t       *cln;
    ngx_pool_cleanup_file_t  *clnf;

    name.data = path->data;
    name.len = root;

    path->data[root] = '\0';
    dir = ngx_http_cms_store_root(&name);
    path->data[root] = '/';

    if (dir == NGX_INVALID_FILE) {
        of->err = ngx_errno;
        of->failed = "open()";
        return ngx_http_cms_files_failed(r, of, path);
    }

    cln = ngx_pool_cleanup_add(r->pool, sizeof(ngx_pool_cleanup_file_t));
    if (cln == NULL) {
        return NGX_ERROR;
    }

    fd = ngx_http_cms_store_beneath(dir, (char *) path->data + root + 1,
                                    O_RDONLY | O_NONBLOCK);

    if (fd == NGX_INVALID_FILE) {
        of->err = ngx_errno;
#if (NGX_HTTP_CMS_STORE_OPENAT2)
        of->failed = "openat2()";
#else
        of->failed = "openat()";
#endif
        return ngx_http_cms_files_failed(r, of, path);
    }

    cln->handler = ngx_pool_cleanup_file;
    clnf = cln->data;
    clnf->fd = fd;
    clnf->name = path->data;
    clnf->log = r->pool->log;

    return ngx_http_cms_files_stat(r, fd, of, path);
}


/* the opened file's facts, then as ngx_open_and_stat_file() after its
   open: directio or read-ahead */
static ngx_int_t
ngx_http_cms_files_stat(ngx_http_request_t *r, ngx_fd_t fd,
    ngx_open_file_info_t *of, ngx_str_t *path)
{
    ngx_file_info_t  fi;

    if (ngx_fd_info(fd, &fi) == NGX_FILE_ERROR) {
        ngx_log_error(NGX_LOG_CRIT, r->connection->log, ngx_errno,
                      ngx_fd_info_n " \"%V\" failed", path);
        return NGX_ERROR;
    }

    if (!ngx_is_file(&fi)) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    of->fd = fd;
    of->size = ngx_file_size(&fi);
    of->mtime = ngx_file_mtime(&fi);
    of->is_file = 1;

    if (of->directio <= of->size) {
        if (ngx_directio_on(fd) == NGX_FILE_ERROR) {
            ngx_log_error(NGX_LOG_ALERT, r->connection->log, ngx_errno,
                          ngx_directio_on_n " \"%V\" failed", path);

        } else {
            of->is_directio = 1;
        }

    } else if (of->read_ahead && of->size > NGX_HTTP_CMS_FILES_READ_AHEAD) {
        (void) ngx_read_ahead(fd, of->read_ahead);
    }

    return NGX_OK;
}


/* a failed open: missing (NGX_DECLINED, nothing answered), a link
   refused or an escape is a 404 */
static ngx_int_t
ngx_http_cms_files_failed(ngx_http_request_t *r, ngx_open_file_info_t *of,
    ngx_str_t *path)
{
    switch (of->err) {

    case 0:
        return NGX_ERROR;

    case NGX_ENOENT:
    case NGX_ENOTDIR:
        ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, of->err,
                       "cms file: %s \"%s\" failed", of->failed, path->data);
        return NGX_DECLINED;

    case NGX_ENAMETOOLONG:
    case NGX_ELOOP:
    case NGX_EMLINK:
    case NGX_EXDEV:
        ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, of->err,
                       "cms file: %s \"%s\" failed", of->failed, path->data);
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);

    case NGX_EACCES:
        /* the storage's permissions are wrong: say so, answer nothing */
        ngx_log_error(NGX_LOG_ERR, r->connection->log, of->err,
                      "cms: %s \"%s\" failed", of->failed, path->data);
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);

    default:
        ngx_log_error(NGX_LOG_CRIT, r->connection->log, of->err,
                      "cms: %s \"%s\" failed", of->failed, path->data);
        return NGX_ERROR;
    }
}


/* the type and disposition from the key's extension, caching, the id */
static ngx_int_t
ngx_http_cms_files_headers(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_str_t *key, cms_filekey_t *k)
{
    ngx_str_t    id, value;
    const char  *type;

    type = cms_mime_ext_type((const char *) key->data + k->ext, k->ext_len);

    r->headers_out.content_type.data = (u_char *) type;
    r->headers_out.content_type.len = ngx_strlen(type);
    r->headers_out.content_type_len = r->headers_out.content_type.len;
    r->headers_out.content_type_lowcase = NULL;

    id.data = ctx->request_id;
    id.len = ctx->request_id_len;

    if (ngx_http_cms_header_add(r, &ngx_http_cms_files_id_name, &id)
        != NGX_OK
        || ngx_http_cms_header_add(r, &ngx_http_cms_files_cache_name,
                                   &ngx_http_cms_files_cache)
           != NGX_OK
        || ngx_http_cms_files_disposition(r, key, k, &value) != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (value.len == 0) {
        return NGX_OK;
    }

    return ngx_http_cms_header_add(r, &ngx_http_cms_files_disposition_name,
                                   &value);
}


/* "attachment; filename=..." for a type not shown inline, else empty */
static ngx_int_t
ngx_http_cms_files_disposition(ngx_http_request_t *r, ngx_str_t *key,
    cms_filekey_t *k, ngx_str_t *value)
{
    u_char     *p;
    ngx_str_t   name;

    ngx_str_null(value);

    if (cms_mime_ext_inline((const char *) key->data + k->ext, k->ext_len)) {
        return NGX_OK;
    }

    /* the name holds only allow-listed bytes: nothing to quote */
    name.data = key->data + k->name;
    name.len = key->len - k->name;

    value->len = sizeof("attachment; filename=\"\"") - 1 + name.len;
    value->data = ngx_pnalloc(r->pool, value->len);
    if (value->data == NULL) {
        return NGX_ERROR;
    }

    p = ngx_cpymem(value->data, "attachment; filename=\"",
                   sizeof("attachment; filename=\"") - 1);
    p = ngx_cpymem(p, name.data, name.len);
    *p = '"';

    return NGX_OK;
}


/*
 * From the bucket (cms_storage s3): the request jumps to "@cms_s3" with
 * the id, or (reads=redirect) is redirected to a presigned URL; the type,
 * caching and disposition go as the bucket's response-* overrides, so
 * that they come on its 200, 206 and 304 alone (a 404 or a 503 must not
 * be kept for a year).
 */
/* long: the headers, the read, then a redirect's answer */
ngx_int_t
ngx_http_cms_files_bucket(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_str_t *key, cms_filekey_t *k)
{
    ngx_int_t         rc;
    ngx_str_t         id, disposition, location, empty = ngx_null_string;
    const char       *type;
    ngx_table_elt_t  *h;

    type = cms_mime_ext_type((const char *) key->data + k->ext, k->ext_len);

    id.data = ctx->request_id;
    id.len = ctx->request_id_len;

    if (ngx_http_cms_header_add(r, &ngx_http_cms_files_id_name, &id)
        != NGX_OK
        || ngx_http_cms_files_disposition(r, key, k, &disposition) != NGX_OK)
    {
        return NGX_ERROR;
    }

    rc = ngx_http_cms_s3_read(r, key, type, &ngx_http_cms_files_cache,
                              &disposition, &location);

    if (rc != NGX_OK) {
        return rc;
    }

    /* the answer's own X-Request-Id comes with it */
    h = ngx_http_cms_query_find(&r->headers_out.headers,
                                &ngx_http_cms_files_id_name, NULL);
    if (h != NULL) {
        h->hash = 0;
    }

    /* reads=redirect: to the bucket (its CDN), for as long as the URL
       lives, no longer; HEAD alike */
    if (ngx_http_cms_header_add(r, &ngx_http_cms_files_location_name,
                                &location)
        != NGX_OK
        || ngx_http_cms_header_add(r, &ngx_http_cms_files_cache_name,
                                   &ngx_http_cms_files_no_store)
           != NGX_OK)
    {
        return NGX_ERROR;
    }

    return ngx_http_cms_send(r, NGX_HTTP_TEMPORARY_REDIRECT, &empty);
}


/*
 * The status, length, Last-Modified and strong ETag, then the file as a
 * file buffer (sendfile).  nginx's filters answer Range (206, 416) and
 * the conditional headers (304) from what is set here, and HEAD.
 */
/* long: the static module's send, with the answer recorded in ctx */
static ngx_int_t
ngx_http_cms_files_send(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_open_file_info_t *of, ngx_str_t *path)
{
    ngx_int_t     rc;
    ngx_buf_t    *b;
    ngx_chain_t   out;

    r->headers_out.status = NGX_HTTP_OK;
    r->headers_out.content_length_n = of->size;
    r->headers_out.last_modified_time = of->mtime;

    if (ngx_http_set_etag(r) != NGX_OK) {
        return NGX_ERROR;
    }

    r->allow_ranges = 1;

    /* all allocated before the header goes */
    b = ngx_calloc_buf(r->pool);
    if (b == NULL) {
        return NGX_ERROR;
    }

    b->file = ngx_pcalloc(r->pool, sizeof(ngx_file_t));
    if (b->file == NULL) {
        return NGX_ERROR;
    }

    rc = ngx_http_send_header(r);

    ctx->sent = 1;
    ctx->out_rc = rc;

    if (rc == NGX_ERROR) {
        return NGX_ERROR;
    }

    if (rc > NGX_OK) {
        /*
         * the range filter's 416: finalizing with it sends nginx's own
         * answer, which the error filter writes in our shape; what
         * described the file goes
         */
        ngx_http_cms_files_unset(r);
        return NGX_OK;
    }

    if (r->header_only) {
        return NGX_OK;
    }

    b->file_pos = 0;
    b->file_last = of->size;

    b->in_file = b->file_last ? 1 : 0;
    b->last_buf = (r == r->main) ? 1 : 0;
    b->last_in_chain = 1;

    b->file->fd = of->fd;
    b->file->name = *path;
    b->file->log = r->connection->log;
    b->file->directio = of->is_directio;

    out.buf = b;
    out.next = NULL;

    rc = ngx_http_output_filter(r, &out);

    ctx->out_rc = rc;

    return rc == NGX_ERROR ? NGX_ERROR : NGX_OK;
}


/* drops the headers of a file answer from an error answer (hash 0: not
   sent), X-Content-Type-Options aside; the error filter adds its own id */
static void
ngx_http_cms_files_unset(ngx_http_request_t *r)
{
    ngx_uint_t        i;
    ngx_list_part_t  *part;
    ngx_table_elt_t  *h;

    part = &r->headers_out.headers.part;
    h = part->elts;

    for (i = 0; /* void */ ; i++) {

        if (i >= part->nelts) {
            if (part->next == NULL) {
                break;
            }

            part = part->next;
            h = part->elts;
            i = 0;
        }

        if (h[i].key.data == ngx_http_cms_files_id_name.data
            || h[i].key.data == ngx_http_cms_files_cache_name.data
            || h[i].key.data == ngx_http_cms_files_disposition_name.data)
        {
            h[i].hash = 0;
        }
    }
}
