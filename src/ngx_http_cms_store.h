
/*
 * Stored objects under cms_storage: an object's bytes written to a
 * temporary file beside its place (decoded from base64, or copied from a
 * file such as the request body's), hashed (SHA-256) and sniffed
 * (libmagic) on the way, fsynced, then renamed into place with the folder
 * fsynced; or removed.  Every file operation runs in nginx's thread pool.
 *
 * The storage key contract (shared with the files route): an object
 * lives at "<cms_storage>/<key>", its content type told by the key's
 * extension alone (cms_mime_ext()); files 0644, folders 0755.
 */


#ifndef _NGX_HTTP_CMS_STORE_H_INCLUDED_
#define _NGX_HTTP_CMS_STORE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_thread.h"
#include "ngx_http_cms_image.h"

/* Linux 5.6+: a path resolved beneath a folder, without links, at once */
#if (NGX_LINUX) && defined(__has_include)
#if __has_include(<linux/openat2.h>)
#include <sys/syscall.h>
#include <linux/openat2.h>
#if defined(SYS_openat2)
#define NGX_HTTP_CMS_STORE_OPENAT2  1
#endif
#endif
#endif


#define NGX_HTTP_CMS_STORE_SNIFF     65536   /* bytes libmagic looks at */
#define NGX_HTTP_CMS_STORE_TYPE_MAX  127


/* the outcome of a step, in ngx_http_cms_store_t.status */
typedef enum {
    NGX_HTTP_CMS_STORE_OK = 0,
    NGX_HTTP_CMS_STORE_BAD_DATA,      /* not base64 */
    NGX_HTTP_CMS_STORE_FAILED,        /* a system call; "what" and "err" */
    NGX_HTTP_CMS_STORE_UNAVAILABLE    /* the bucket refused, or no answer */
} ngx_http_cms_store_status_e;


/* what the sniffed type says of the bytes against the key's extension */
typedef enum {
    NGX_HTTP_CMS_STORE_MATCH = 0,
    NGX_HTTP_CMS_STORE_EMPTY,         /* no bytes */
    NGX_HTTP_CMS_STORE_EXECUTABLE,    /* the bytes run as script */
    NGX_HTTP_CMS_STORE_MISMATCH       /* another type than declared */
} ngx_http_cms_store_verdict_e;


typedef struct {
    /* in: the key, then the bytes as base64 text or a file to copy */
    ngx_str_t                   key;
    ngx_str_t                   base64;
    ngx_fd_t                    fd;         /* NGX_INVALID_FILE: base64 */

    /* out, after ngx_http_cms_store_write() */
    off_t                       size;
    u_char                      sha256[64];
    u_char                      type[NGX_HTTP_CMS_STORE_TYPE_MAX + 1];
    ngx_uint_t                  status;     /* ngx_http_cms_store_status_e */
    int                         err;        /* errno of a failure */
    const char                 *what;       /* the call that failed */
    ngx_int_t                   rc;         /* ngx_http_cms_store_refuse()'s
                                               answer */
    ngx_http_cms_thread_done_pt then;       /* after _store_remove() */
    ngx_http_cms_thread_done_pt done;       /* after a bucket's answer */
    ngx_uint_t                  left;       /* the staged file stayed */
    const char                 *left_what;
    ngx_http_cms_image_info_t   image;      /* an image's header (sniffed
                                               image/...), else width 0 */

    /* private */
    ngx_fd_t                    root;       /* the root's descriptor */
    u_char                     *path;       /* "<root>/<key>" */
    u_char                     *tmp;        /* its temporary name */
    u_char                     *buf;
    size_t                      buf_size;
    ngx_log_t                  *log;
    ngx_uint_t                  op;         /* ngx_http_cms_store_op_e */
    uint64_t                    max_pixels; /* cms_image_max_pixels */
    ngx_msec_t                  timeout;    /* cms_image_timeout */
    unsigned                    written:1;  /* tmp exists */
} ngx_http_cms_store_t;


/*
 * The worker's descriptor (O_PATH) of the storage root "root"
 * (cms_storage), opened at its first use in a cycle, on the event loop:
 * NGX_INVALID_FILE with errno when it cannot be opened.  Every object is
 * reached beneath it (GET /v1/files too).
 */
ngx_fd_t ngx_http_cms_store_root(ngx_str_t *root);

/*
 * "rel" opened beneath the folder descriptor "root" with "flags", no
 * component a symbolic link, none ".." (openat2() with RESOLVE_BENEATH
 * and RESOLVE_NO_SYMLINKS; a component at a time with O_NOFOLLOW where
 * the kernel lacks openat2()).  A plain system call: safe in a pool
 * thread.  The descriptor, or -1 with errno (ELOOP, EXDEV: refused).
 */
int ngx_http_cms_store_beneath(int root, const char *rel, int flags);

/* libmagic's database, loaded once per worker; NGX_OK or NGX_ERROR */
ngx_int_t ngx_http_cms_store_init_process(ngx_cycle_t *cycle);
void ngx_http_cms_store_exit_process(void);

/*
 * A store for "key" (copied) in r->pool; the request's end removes a
 * temporary file left behind.  NULL when cms_storage is not set (logged)
 * or memory runs out.
 */
ngx_http_cms_store_t *ngx_http_cms_store_create(ngx_http_request_t *r,
    ngx_str_t *key);

/*
 * In the thread pool: the bytes into the temporary file (folders made),
 * hashed, sniffed, fsynced, an image's header read (st->image); then
 * done(r, ctx, st) on the event loop with st->status set.  Returns
 * NGX_DONE or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_store_write(ngx_http_request_t *r,
    ngx_http_cms_store_t *st, ngx_http_cms_thread_done_pt done);

/* the written bytes' sniffed type against the key's extension */
ngx_uint_t ngx_http_cms_store_verdict(ngx_http_cms_store_t *st);

/* the storage table's extension of the written bytes' sniffed type
   (libmagic's names mapped to the table's), "bin" when it has none */
const char *ngx_http_cms_store_type_ext(ngx_http_cms_store_t *st);

/*
 * After the write, before the commit: the key (and its place) become
 * "<key>.<ext>", for a key whose extension is the sniffed type's.
 * NGX_OK or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_store_extend(ngx_http_request_t *r,
    ngx_http_cms_store_t *st, const char *ext);

/* what ngx_http_cms_store_finish() does, after a write or instead */
typedef enum {
    NGX_HTTP_CMS_STORE_COMMIT = 0,    /* the temporary file renamed into
                                         place, the folder fsynced */
    NGX_HTTP_CMS_STORE_DISCARD,       /* the temporary file removed */
    NGX_HTTP_CMS_STORE_REMOVE         /* the object at the key removed
                                         (none there is no failure) */
} ngx_http_cms_store_op_e;

/* In the thread pool: "op"; then done(r, ctx, st), st->status set */
ngx_int_t ngx_http_cms_store_finish(ngx_http_request_t *r,
    ngx_http_cms_store_t *st, ngx_uint_t op,
    ngx_http_cms_thread_done_pt done);

/*
 * A refusal "rc" (its error recorded) answered once the temporary file
 * (op NGX_HTTP_CMS_STORE_DISCARD) or the object (_REMOVE) is gone; a
 * failure to remove is logged.  Returns NGX_DONE or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_store_refuse(ngx_http_request_t *r,
    ngx_http_cms_store_t *st, ngx_uint_t op, ngx_int_t rc);

/*
 * In the thread pool: the object at "key" removed, once no row names it
 * (none there is no failure; a failure is logged, and the object stays
 * behind); then done(r, ctx, st).  Returns NGX_DONE or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_store_remove(ngx_http_request_t *r, ngx_str_t *key,
    ngx_http_cms_thread_done_pt done);

/* a failed step logged; NGX_ERROR (the caller answers 500), or 503 when
   the bucket refused or did not answer */
ngx_int_t ngx_http_cms_store_failed(ngx_http_request_t *r,
    ngx_http_cms_store_t *st);


/*
 * The absolute URL GET /v1/files/<key> answers at: cms_storage's
 * base_url=, else the request's scheme and Host, then "/v1/files/" and
 * the key; in r->pool.  NGX_OK or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_store_url(ngx_http_request_t *r, ngx_str_t *key,
    ngx_str_t *url);

char *ngx_http_cms_store_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);


/*
 * The sweeper (ngx_http_cms_store_sweep.c): queued removals retried and
 * orphans found, on worker 0.  "cms_storage_reconcile off | TIME"
 * (default 1h): how often the bucket or folder is looked through.
 */
char *ngx_http_cms_store_sweep_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
void ngx_http_cms_store_sweep_init_process(ngx_cycle_t *cycle,
    ngx_http_cms_main_conf_t *mcf);
void ngx_http_cms_store_sweep_exit_process(void);


#endif /* _NGX_HTTP_CMS_STORE_H_INCLUDED_ */
