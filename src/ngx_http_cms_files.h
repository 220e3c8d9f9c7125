
/*
 * GET /v1/files: stored objects (ngx_http_cms_files.c) and an image's
 * variants (ngx_http_cms_files_size.c), which answer as the objects do.
 */


#ifndef _NGX_HTTP_CMS_FILES_H_INCLUDED_
#define _NGX_HTTP_CMS_FILES_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "cms_filekey.h"


/*
 * X-Content-Type-Options: nosniff set (on every answer, the 404s too),
 * then the key checked against the allow-list and the raw path (an
 * escaped or dotted path is refused): NGX_OK with k filled in, 404
 * recorded, or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_files_key(ngx_http_request_t *r, ngx_str_t *key,
    cms_filekey_t *k);

/*
 * Opens <root>/<key>.  With an open_file_cache in the location, as the
 * static module does, every component below the root with O_NOFOLLOW
 * (nginx's "disable_symlinks on from=<root>"); else, or when "fresh" (a
 * file just made, which the cache may remember missing), beneath the
 * worker's descriptor of the root.  Either way no symbolic link below the
 * root, to a file or a folder, is followed.  NGX_OK with "of" and "path"
 * set; NGX_DECLINED when no file is there (nothing answered); a refused
 * link, a folder or an escape is a 404 recorded; or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_files_open(ngx_http_request_t *r, ngx_str_t *key,
    ngx_uint_t fresh, ngx_open_file_info_t *of, ngx_str_t *path);

/* the opened file answered: type, disposition, caching, the request id,
   then the status, length, Last-Modified, ETag and the file (sendfile;
   nginx's filters answer Range, 304 and HEAD) */
ngx_int_t ngx_http_cms_files_answer(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *key, cms_filekey_t *k,
    ngx_open_file_info_t *of, ngx_str_t *path);

/* from the bucket (cms_storage s3): through "@cms_s3" (NGX_DONE), or a
   redirect to a presigned URL (reads=redirect) */
ngx_int_t ngx_http_cms_files_bucket(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *key, cms_filekey_t *k);

/* GET /v1/files/size/w{width}/{key}, .../format/{format}/{key} */
ngx_int_t ngx_http_cms_files_size(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);
ngx_int_t ngx_http_cms_files_size_format(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx);


#endif /* _NGX_HTTP_CMS_FILES_H_INCLUDED_ */
