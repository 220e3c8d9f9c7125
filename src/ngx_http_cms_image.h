
/*
 * Responsive images (docs/images.md): libvips reads an uploaded image's
 * header when it is stored (width, height, an average colour) and makes
 * its variants, GET /v1/files/size/w{width}[/format/{fmt}]/{key}
 * (ngx_http_cms_files_size.c), in the image lane of nginx's thread pool.
 * The functions that take a job run in a pool thread: plain system calls
 * and libvips, no nginx call, no pool, no log.
 */


#ifndef _NGX_HTTP_CMS_IMAGE_H_INCLUDED_
#define _NGX_HTTP_CMS_IMAGE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"


#define NGX_HTTP_CMS_IMAGE_WIDTH_MAX   10000


/* a variant's format; SAME is the original's */
typedef enum {
    NGX_HTTP_CMS_IMAGE_SAME = 0,
    NGX_HTTP_CMS_IMAGE_WEBP,
    NGX_HTTP_CMS_IMAGE_AVIF,
    NGX_HTTP_CMS_IMAGE_JPEG,
    NGX_HTTP_CMS_IMAGE_PNG,
    NGX_HTTP_CMS_IMAGE_GIF,
    NGX_HTTP_CMS_IMAGE_FORMATS
} ngx_http_cms_image_format_e;


/* what a job came to */
typedef enum {
    NGX_HTTP_CMS_IMAGE_OK = 0,        /* made, or found made */
    NGX_HTTP_CMS_IMAGE_MISSING,       /* no original */
    NGX_HTTP_CMS_IMAGE_REFUSED,       /* not an image libvips may read, too
                                         many pixels, or undecodable */
    NGX_HTTP_CMS_IMAGE_TIMEDOUT,      /* over cms_image_timeout */
    NGX_HTTP_CMS_IMAGE_FAILED         /* a system call: "what", "err" */
} ngx_http_cms_image_status_e;


/* a variant to make: the original at "src" beneath the root, the variant
   at "dir"/"name" (the folder made when missing) */
typedef struct {
    int                         root;        /* the storage root's fd */
    const char                 *src;
    const char                 *dir;
    const char                 *name;
    ngx_uint_t                  width;
    ngx_uint_t                  format;      /* never _SAME */
    ngx_uint_t                  quality;
    uint64_t                    max_pixels;
    ngx_msec_t                  timeout;

    const u_char               *in;          /* the original in memory
                                                (a bucket's), or NULL */
    size_t                      in_len;

    ngx_uint_t                  status;      /* _image_status_e */
    ngx_uint_t                  made;        /* 0: another worker had */
    int                         err;
    const char                 *what;
    char                        reason[128]; /* a refusal's, for the log */
    size_t                      size;        /* the variant's bytes */
    void                       *out;         /* dir -1: them (g_free()) */
    u_char                      sha256[65];  /* and their hash, in hex */
    ngx_msec_t                  took;
} ngx_http_cms_image_job_t;

/*
 * In a pool thread: the original open at "fd" (or job->in) checked
 * (loader, pixels), resized to job->width (never enlarged, orientation
 * applied), encoded in job->format without metadata, and written as
 * job->name in the folder "dir" (a temporary name, fsync, rename), or,
 * with dir -1, kept in job->out with its SHA-256; job->status says how it
 * went.
 */
void ngx_http_cms_image_variant(ngx_http_cms_image_job_t *job, int fd,
    int dir);


/* a job's variant bytes (job->out) given back */
void ngx_http_cms_image_free(ngx_http_cms_image_job_t *job);


/*
 * In a pool thread: the original "name" ("<asset>.<ext>") in the folder
 * "dir" removed with its variants and their folder "<asset>", under the
 * original's lock (no variant is being made meanwhile, none after); 0
 * (also when none was there), or -1 with errno (what could be removed
 * is; the original stays when its variants could not all go).
 */
int ngx_http_cms_image_forget(int dir, const char *name);


/* what the header of a stored image tells, for its media record */
typedef struct {
    ngx_uint_t                  width;       /* 0: not an image read */
    ngx_uint_t                  height;
    u_char                      color[8];    /* "#rrggbb", or "" */
} ngx_http_cms_image_info_t;

/*
 * In a pool thread: the file "fd" read by libvips when its loader is one
 * of the allowed (JPEG, PNG, WebP, GIF, HEIF/AVIF): the size as shown
 * (EXIF orientation applied), and the average colour when it holds at
 * most "max_pixels"; info->width 0 otherwise.
 */
void ngx_http_cms_image_probe(int fd, uint64_t max_pixels,
    ngx_msec_t timeout, ngx_http_cms_image_info_t *info);

/* the format a name takes ("webp", "avif", "jpeg", "png"), or -1 */
ngx_int_t ngx_http_cms_image_format(ngx_str_t *name);

/* the format of a key's extension (jpg, jpeg, png, webp, gif, avif), or
   -1: not an image a variant is made of */
ngx_int_t ngx_http_cms_image_ext_format(u_char *ext, size_t len);

/* the extension a format's variants are stored with ("jpg" for JPEG) */
const char *ngx_http_cms_image_format_ext(ngx_uint_t format);

/* libvips started in a worker (its cache off, one thread a job) */
ngx_int_t ngx_http_cms_image_init_process(ngx_cycle_t *cycle);
void ngx_http_cms_image_exit_process(void);

/* the quality of a format's variants (cms_image_quality) */
ngx_uint_t ngx_http_cms_image_quality(ngx_http_cms_image_conf_t *icf,
    ngx_uint_t format);

/* cms_image_* (ngx_http_cms_image_conf.c): unset, then defaults */
void ngx_http_cms_image_create_conf(ngx_http_cms_image_conf_t *icf);
void ngx_http_cms_image_init_conf(ngx_http_cms_image_conf_t *icf);
char *ngx_http_cms_image_widths_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
char *ngx_http_cms_image_quality_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);


#endif /* _NGX_HTTP_CMS_IMAGE_H_INCLUDED_ */
