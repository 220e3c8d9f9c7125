
/*
 * An image's variants (docs/images.md):
 *
 *   GET /v1/files/size/w{width}/{key}                 the original's format
 *   GET /v1/files/size/w{width}/format/{format}/{key} webp, avif, jpeg, png
 *
 * {key} is an upload's ("<workspace>/<asset>.<ext>", an image extension),
 * {width} one of cms_image_widths; anything else is a 404, as a missing
 * file is.  The variant lives beside its original under a derived key,
 * "<workspace>/<asset>/w<width>.<ext>", and is answered exactly as a
 * stored object (ngx_http_cms_files.c: sendfile, ETag, Range, 304,
 * immutable).  The first request makes it in the image lane
 * (ngx_http_cms_image.c); the worker's other requests for it meanwhile
 * wait for that job instead of queueing their own (a flight per variant),
 * and the other workers' jobs wait on the original's lock, then find it
 * made.  A full lane is a 503 with Retry-After.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <sys/file.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_files.h"
#include "ngx_http_cms_image.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_store.h"
#include "ngx_http_cms_store_sweep.h"
#include "ngx_http_cms_s3.h"
#include "ngx_http_cms_thread.h"
#include "cms_filekey.h"


typedef struct ngx_http_cms_flight_s  ngx_http_cms_flight_t;


/* a request for a variant, in r->pool */
typedef struct {
    ngx_http_request_t         *request;
    ngx_str_t                   key;        /* the original's */
    ngx_str_t                   vkey;       /* the variant's, NUL ended */
    cms_filekey_t               vk;
    ngx_uint_t                  width;
    ngx_uint_t                  format;
    ngx_http_cms_flight_t      *flight;     /* the one it waits for */
    ngx_queue_t                 queue;      /* in flight->waiting */
    ngx_http_cms_image_job_t    job;        /* the maker's */
    ngx_pool_t                 *fetch;      /* the bucket's original, in
                                               its client's pool */
} ngx_http_cms_variant_t;


/* a variant in the making in this worker (heap: its maker may leave) */
struct ngx_http_cms_flight_s {
    ngx_queue_t                 queue;      /* in the worker's flights */
    ngx_str_t                   vkey;
    ngx_queue_t                 waiting;    /* ngx_http_cms_variant_t */
    ngx_http_cms_variant_t     *maker;      /* NULL once done */
};


static ngx_int_t ngx_http_cms_files_variant(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_str_t *width, ngx_str_t *format,
    ngx_str_t *key);
static ngx_int_t ngx_http_cms_files_variant_key(ngx_http_request_t *r,
    ngx_http_cms_variant_t *v, cms_filekey_t *k);
static ngx_int_t ngx_http_cms_files_variant_serve(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_variant_t *v);
static ngx_int_t ngx_http_cms_files_variant_make(ngx_http_request_t *r,
    ngx_http_cms_variant_t *v);
static ngx_int_t ngx_http_cms_files_variant_wait(ngx_http_request_t *r,
    ngx_http_cms_variant_t *v, ngx_http_cms_flight_t *f);
static ngx_int_t ngx_http_cms_files_variant_job(ngx_http_request_t *r,
    ngx_http_cms_variant_t *v);
static void ngx_http_cms_files_variant_work(void *data);
static int ngx_http_cms_files_variant_folder(ngx_http_cms_image_job_t *job);
static ngx_int_t ngx_http_cms_files_variant_made(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data);
static ngx_int_t ngx_http_cms_files_variant_outcome(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_variant_t *v,
    ngx_http_cms_image_job_t *job);
static ngx_int_t ngx_http_cms_files_bucket_looked(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data, ngx_uint_t status);
static void ngx_http_cms_files_bucket_fetched(ngx_http_cms_client_t *cl);
static void ngx_http_cms_files_bucket_work(void *data);
static ngx_int_t ngx_http_cms_files_bucket_made(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data);
static ngx_int_t ngx_http_cms_files_bucket_stored(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data, ngx_uint_t status);
static ngx_int_t ngx_http_cms_files_bucket_end(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_variant_t *v, ngx_uint_t status);
static void ngx_http_cms_files_bucket_free(void *data);
static ngx_uint_t ngx_http_cms_files_bucket_mode(ngx_http_request_t *r);
static void ngx_http_cms_flight_end(ngx_http_cms_flight_t *f,
    ngx_http_cms_image_job_t *job);
static void ngx_http_cms_flight_maker_gone(void *data);
static void ngx_http_cms_flight_waiter_gone(void *data);


static ngx_queue_t  ngx_http_cms_flights;
static ngx_uint_t   ngx_http_cms_flights_ready;


static ngx_http_cms_thread_job_t  ngx_http_cms_files_variant_lane = {
    ngx_http_cms_files_variant_work, NULL, ngx_http_cms_files_variant_made
};

static ngx_http_cms_thread_job_t  ngx_http_cms_files_bucket_lane = {
    ngx_http_cms_files_bucket_work, NULL, ngx_http_cms_files_bucket_made
};


/* the most bytes of an original fetched from the bucket to be resized */
#define NGX_HTTP_CMS_FILES_FETCH_MAX  (64 * 1024 * 1024)


ngx_int_t
ngx_http_cms_files_size(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_files_variant(r, ctx, &ctx->params[0], NULL,
                                      &ctx->params[1]);
}


ngx_int_t
ngx_http_cms_files_size_format(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx)
{
    return ngx_http_cms_files_variant(r, ctx, &ctx->params[0],
                                      &ctx->params[1], &ctx->params[2]);
}


/* long: the width, the format and the key checked, then served or made */
static ngx_int_t
ngx_http_cms_files_variant(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_str_t *width, ngx_str_t *format, ngx_str_t *key)
{
    ngx_int_t                  rc, w, f;
    ngx_uint_t                 i;
    cms_filekey_t              k;
    ngx_http_cms_variant_t    *v;
    ngx_http_cms_main_conf_t  *mcf;

    rc = ngx_http_cms_files_key(r, key, &k);
    if (rc != NGX_OK) {
        return rc;
    }

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    /* "w<width>", a width of the list */
    w = (width->len > 1 && width->data[0] == 'w' && width->data[1] != '0')
        ? ngx_atoi(width->data + 1, width->len - 1) : NGX_ERROR;

    for (i = 0; i < mcf->image.nwidths; i++) {
        if ((ngx_uint_t) w == mcf->image.widths[i]) {
            break;
        }
    }

    /* an upload's key with an image's extension; the format named */
    f = cms_filekey_upload((char *) key->data, key->len)
        ? ngx_http_cms_image_ext_format(key->data + k.ext, k.ext_len)
        : NGX_ERROR;

    if (format != NULL && f != NGX_ERROR) {
        f = ngx_http_cms_image_format(format);
    }

    if (w == NGX_ERROR || i == mcf->image.nwidths || f == NGX_ERROR
        || mcf->storage.len == 0)
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);
    }

    v = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_variant_t));
    if (v == NULL) {
        return NGX_ERROR;
    }

    v->request = r;
    v->key = *key;
    v->width = w;
    v->format = f;

    if (ngx_http_cms_files_variant_key(r, v, &k) != NGX_OK) {
        return NGX_ERROR;
    }

    /* the bucket is asked whether it has the variant by the maker */
    rc = (mcf->s3 != NULL) ? NGX_DECLINED
                           : ngx_http_cms_files_variant_serve(r, ctx, v);

    if (rc != NGX_DECLINED) {
        return rc;
    }

    return ngx_http_cms_files_variant_make(r, v);
}


/* "<workspace>/<asset>/w<width>.<ext>" from "<workspace>/<asset>.<ext>" */
static ngx_int_t
ngx_http_cms_files_variant_key(ngx_http_request_t *r,
    ngx_http_cms_variant_t *v, cms_filekey_t *k)
{
    u_char      *p;
    size_t       base;
    const char  *ext;

    base = k->ext - 1;
    ext = ngx_http_cms_image_format_ext(v->format);

    v->vkey.data = ngx_pnalloc(r->pool, base + sizeof("/w.") - 1
                                        + NGX_INT_T_LEN + ngx_strlen(ext) + 1);
    if (v->vkey.data == NULL) {
        return NGX_ERROR;
    }

    p = ngx_cpymem(v->vkey.data, v->key.data, base);
    p = ngx_sprintf(p, "/w%ui.%s", v->width, ext);
    *p = '\0';

    v->vkey.len = p - v->vkey.data;

    if (!cms_filekey_parse((char *) v->vkey.data, v->vkey.len, &v->vk)) {
        return NGX_ERROR;
    }

    return NGX_OK;
}


/* the variant answered when it is there; NGX_DECLINED when it is not */
static ngx_int_t
ngx_http_cms_files_variant_serve(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_variant_t *v)
{
    ngx_int_t                  rc;
    ngx_str_t                  path;
    ngx_open_file_info_t       of;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    if (mcf->s3 != NULL) {
        return ngx_http_cms_files_bucket(r, ctx, &v->vkey, &v->vk);
    }

    rc = ngx_http_cms_files_open(r, &v->vkey, v->job.made, &of, &path);

    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_cms_files_answer(r, ctx, &v->vkey, &v->vk, &of, &path);
}


/* the worker's flight for the variant joined, or a job queued for it */
/* long: a flight found or begun, then the job queued */
static ngx_int_t
ngx_http_cms_files_variant_make(ngx_http_request_t *r,
    ngx_http_cms_variant_t *v)
{
    ngx_int_t               rc;
    ngx_queue_t            *q;
    ngx_pool_cleanup_t     *cln;
    ngx_http_cms_flight_t  *f;

    if (!ngx_http_cms_flights_ready) {
        ngx_queue_init(&ngx_http_cms_flights);
        ngx_http_cms_flights_ready = 1;
    }

    for (q = ngx_queue_head(&ngx_http_cms_flights);
         q != ngx_queue_sentinel(&ngx_http_cms_flights);
         q = ngx_queue_next(q))
    {
        f = ngx_queue_data(q, ngx_http_cms_flight_t, queue);

        /* the same variant of the same original (a key naming another
           extension of the asset is another original) */
        if (f->vkey.len == v->vkey.len
            && ngx_strncmp(f->vkey.data, v->vkey.data, v->vkey.len) == 0
            && f->maker != NULL && f->maker->key.len == v->key.len
            && ngx_strncmp(f->maker->key.data, v->key.data, v->key.len) == 0)
        {
            return ngx_http_cms_files_variant_wait(r, v, f);
        }
    }

    f = ngx_alloc(sizeof(ngx_http_cms_flight_t) + v->vkey.len,
                  r->connection->log);
    cln = ngx_pool_cleanup_add(r->pool, 0);

    if (f == NULL || cln == NULL || ngx_http_cms_files_variant_job(r, v)
                                    != NGX_OK)
    {
        if (f != NULL) {
            ngx_free(f);
        }

        return NGX_ERROR;
    }

    f->vkey.data = (u_char *) f + sizeof(ngx_http_cms_flight_t);
    f->vkey.len = v->vkey.len;
    ngx_memcpy(f->vkey.data, v->vkey.data, v->vkey.len);
    ngx_queue_init(&f->waiting);
    f->maker = v;
    v->flight = f;

    /* the flight ends with its maker whatever happens to the job */
    cln->handler = ngx_http_cms_flight_maker_gone;
    cln->data = v;

    ngx_queue_insert_tail(&ngx_http_cms_flights, &f->queue);

    if (v->job.root == NGX_INVALID_FILE) {
        /* the bucket: is the variant there? */
        return ngx_http_cms_s3_head(r, &v->vkey,
                                    ngx_http_cms_files_bucket_looked, v);
    }

    rc = ngx_http_cms_thread_queue(r, NGX_HTTP_CMS_LANE_IMAGE,
                                   &ngx_http_cms_files_variant_lane, v);

    if (rc == NGX_BUSY) {
        ngx_http_cms_flight_end(f, NULL);
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_UNAVAILABLE, NULL);
    }

    return rc;
}


/* the job's strings (each NUL-terminated) and settings */
static ngx_int_t
ngx_http_cms_files_variant_job(ngx_http_request_t *r,
    ngx_http_cms_variant_t *v)
{
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    /* the bucket's variants are made in memory: no root */
    v->job.root = (mcf->s3 != NULL) ? NGX_INVALID_FILE
                                    : ngx_http_cms_store_root(&mcf->storage);

    if (v->job.root == NGX_INVALID_FILE && mcf->s3 == NULL) {
        ngx_log_error(NGX_LOG_CRIT, r->connection->log, ngx_errno,
                      "cms: open() of \"%V\" failed", &mcf->storage);
        return NGX_ERROR;
    }

    /* the original's key, the variants' folder and the variant's name */
    v->job.src = (char *) ngx_pnalloc(r->pool, v->key.len + 1);
    v->job.dir = (char *) ngx_pnalloc(r->pool, v->vk.name);

    if (v->job.src == NULL || v->job.dir == NULL) {
        return NGX_ERROR;
    }

    (void) ngx_cpystrn((u_char *) v->job.src, v->key.data, v->key.len + 1);
    (void) ngx_cpystrn((u_char *) v->job.dir, v->vkey.data, v->vk.name);
    v->job.name = (char *) v->vkey.data + v->vk.name;
    v->job.width = v->width;
    v->job.format = v->format;
    v->job.quality = ngx_http_cms_image_quality(&mcf->image, v->format);
    v->job.max_pixels = mcf->image.max_pixels;
    v->job.timeout = mcf->image.timeout;

    return NGX_OK;
}


/* the request waits for the worker's job making the same variant */
static ngx_int_t
ngx_http_cms_files_variant_wait(ngx_http_request_t *r,
    ngx_http_cms_variant_t *v, ngx_http_cms_flight_t *f)
{
    ngx_pool_cleanup_t  *cln;

    cln = ngx_pool_cleanup_add(r->pool, 0);
    if (cln == NULL) {
        return NGX_ERROR;
    }

    cln->handler = ngx_http_cms_flight_waiter_gone;
    cln->data = v;

    v->flight = f;
    ngx_queue_insert_tail(&f->waiting, &v->queue);

    /* a client that leaves meanwhile is noticed; the cleanup unqueues it */
    r->read_event_handler = ngx_http_test_reading;

    return NGX_DONE;
}


/*
 * In a pool thread: the original opened beneath the root and locked
 * (flock(): one maker a variant on this host; another worker's job for it
 * waits here, in its thread, then finds it made), the variants' folder
 * opened or made, then the variant found or made.
 */
/* long: the original, the lock, the folder, each with its failure */
static void
ngx_http_cms_files_variant_work(void *data)
{
    ngx_http_cms_variant_t *v = data;

    int                        fd, dir;
    struct stat                st;
    struct timespec            start, end;
    ngx_http_cms_image_job_t  *job;

    job = &v->job;
    (void) clock_gettime(CLOCK_MONOTONIC, &start);

    fd = ngx_http_cms_store_beneath(job->root, job->src,
                                    O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        job->err = errno;
        job->what = "open() of the original";
        job->status = (errno == ENOENT || errno == ENOTDIR || errno == ELOOP
                       || errno == EXDEV)
                      ? NGX_HTTP_CMS_IMAGE_MISSING
                      : NGX_HTTP_CMS_IMAGE_FAILED;
        return;
    }

    dir = -1;

    if (flock(fd, LOCK_EX) == -1) {
        job->err = errno;
        job->what = "flock() of the original";
        job->status = NGX_HTTP_CMS_IMAGE_FAILED;

    } else if (fstat(fd, &st) == 0 && st.st_nlink == 0) {
        /* removed while this job waited for it: no variant of it now */
        job->status = NGX_HTTP_CMS_IMAGE_MISSING;

    } else {
        dir = ngx_http_cms_files_variant_folder(job);
    }

    if (dir != -1) {
        if (fstatat(dir, job->name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
            job->size = st.st_size;

        } else {
            ngx_http_cms_image_variant(job, fd, dir);
        }

        (void) close(dir);
    }

    /* the lock goes with the descriptor */
    (void) close(fd);

    (void) clock_gettime(CLOCK_MONOTONIC, &end);
    job->took = (end.tv_sec - start.tv_sec) * 1000
                + (end.tv_nsec - start.tv_nsec) / 1000000;
}


/* the variants' folder ("<workspace>/<asset>") beneath the root, made
   when missing: its descriptor, or -1 (the job's failure set) */
static int
ngx_http_cms_files_variant_folder(ngx_http_cms_image_job_t *job)
{
    int          parent, fd;
    char        *slash;
    const char  *what;

    fd = ngx_http_cms_store_beneath(job->root, job->dir,
                                    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    what = "open() of the variants' folder";

    if (fd == -1 && errno == ENOENT) {
        /* job->dir is ours: its last slash parts the workspace's folder */
        slash = strrchr(job->dir, '/');
        *slash = '\0';
        parent = ngx_http_cms_store_beneath(job->root, job->dir,
                                            O_RDONLY | O_DIRECTORY
                                            | O_CLOEXEC);
        *slash = '/';

        if (parent == -1) {
            what = "open() of the workspace's folder";

        } else if (mkdirat(parent, slash + 1, 0755) == -1 && errno != EEXIST) {
            what = "mkdir() of the variants' folder";

        } else {
            fd = openat(parent, slash + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW
                                           | O_CLOEXEC);
        }

        if (parent != -1) {
            job->err = errno;
            (void) close(parent);
            errno = job->err;
        }
    }

    if (fd == -1) {
        job->err = errno;
        job->what = what;
        job->status = NGX_HTTP_CMS_IMAGE_FAILED;
    }

    return fd;
}


/* the maker's job is back: the flight ends, then the maker answers */
static ngx_int_t
ngx_http_cms_files_variant_made(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data)
{
    ngx_http_cms_variant_t *v = data;

    ngx_http_cms_image_job_t  *job;

    job = &v->job;

    if (job->made) {
        ngx_log_error(NGX_LOG_NOTICE, r->connection->log, 0,
                      "cms: image variant \"%V\" made, %uz bytes, %M ms",
                      &v->vkey, job->size, job->took);
    }

    if (v->flight != NULL) {
        ngx_http_cms_flight_end(v->flight, job);
    }

    return ngx_http_cms_files_variant_outcome(r, ctx, v, job);
}


/* what a request answers once the variant's job is back */
static ngx_int_t
ngx_http_cms_files_variant_outcome(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_variant_t *v,
    ngx_http_cms_image_job_t *job)
{
    ngx_int_t  rc;

    switch (job->status) {

    case NGX_HTTP_CMS_IMAGE_OK:
        v->job.made = 1;        /* opened fresh, not from the cache */

        rc = ngx_http_cms_files_variant_serve(r, ctx, v);

        return (rc == NGX_DECLINED)
               ? ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL)
               : rc;

    case NGX_HTTP_CMS_IMAGE_MISSING:
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_NOT_FOUND, NULL);

    case NGX_HTTP_CMS_IMAGE_REFUSED:
        ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                      "cms: image \"%V\" refused: %s", &v->key, job->reason);
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_UNSUPPORTED_MEDIA_TYPE,
                                     NULL, "The stored file is not an image "
                                     "that variants can be made of.");

    case NGX_HTTP_CMS_IMAGE_TIMEDOUT:
        ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                      "cms: image \"%V\": %s", &v->key, job->reason);
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_UNAVAILABLE, NULL);

    default: /* NGX_HTTP_CMS_IMAGE_FAILED */
        ngx_log_error(NGX_LOG_CRIT, r->connection->log, job->err,
                      "cms: image variant \"%V\": %s failed", &v->vkey,
                      job->what);
        return NGX_ERROR;
    }
}


/*
 * The bucket (cms_storage s3): the maker asks for the variant (HEAD);
 * when it is missing, the original is fetched whole into memory (at most
 * 64 MiB), the variant made from it in the image lane and stored (PUT);
 * then the maker and its waiters read it from the bucket as any object.
 * Each worker makes a variant at most once; another worker or host may
 * make it too (the same bytes, stored again).
 */
/* long: found, or the original's fetch begun with its memory's owner */
static ngx_int_t
ngx_http_cms_files_bucket_looked(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data, ngx_uint_t status)
{
    ngx_http_cms_variant_t *v = data;

    ngx_int_t                  rc;
    ngx_pool_t                *pool;
    ngx_pool_cleanup_t        *cln;
    ngx_http_cms_client_t     *cl;
    ngx_http_cms_main_conf_t  *mcf;

    static ngx_str_t  get = ngx_string("GET");

    if (status != 404) {
        return ngx_http_cms_files_bucket_end(r, ctx, v, status);
    }

    /* a place in the image lane before the original is read: at most the
       lane's jobs and queue hold originals in memory */
    rc = ngx_http_cms_thread_reserve(r, NGX_HTTP_CMS_LANE_IMAGE);

    if (rc != NGX_OK) {
        return (rc == NGX_BUSY) ? ngx_http_cms_files_bucket_end(r, ctx, v, 503)
                                : NGX_ERROR;
    }

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    pool = ngx_create_pool(4096, r->connection->log);
    cln = ngx_pool_cleanup_add(r->pool, 0);

    if (pool == NULL || cln == NULL) {
        if (pool != NULL) {
            ngx_destroy_pool(pool);
        }

        return NGX_ERROR;
    }

    /* the original's bytes live as long as the request, at most */
    v->fetch = pool;
    cln->handler = ngx_http_cms_files_bucket_free;
    cln->data = v;

    cl = ngx_pcalloc(pool, sizeof(ngx_http_cms_client_t));
    if (cl == NULL) {
        return NGX_ERROR;
    }

    cl->pool = pool;
    cl->done = ngx_http_cms_files_bucket_fetched;
    cl->data = v;
    cl->action = "reading an image from the bucket";
    cl->keep_body = NGX_HTTP_CMS_FILES_FETCH_MAX + 1;

    if (ngx_http_cms_sweep_start(cl, mcf->s3, &get, NULL, &v->key, NULL,
                                 "1.1")
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* a client that leaves meanwhile: its end waits for the fetch */
    r->main->blocked++;

    return NGX_DONE;
}


/* the original's bytes came (or not): the variant made from them */
static void
ngx_http_cms_files_bucket_fetched(ngx_http_cms_client_t *cl)
{
    ngx_http_cms_variant_t *v = cl->data;

    ngx_int_t            rc;
    ngx_connection_t    *c;
    ngx_http_request_t  *r;
    ngx_http_cms_ctx_t  *ctx;

    r = v->request;
    c = r->connection;
    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

    r->main->blocked--;

    if (c->error) {
        rc = NGX_HTTP_CLIENT_CLOSED_REQUEST;

    } else if (cl->error != NULL || cl->status != 200 || cl->body > 0) {
        ngx_log_error(NGX_LOG_ERR, c->log, 0,
                      "cms: reading \"%V\" from the bucket failed: %ui %s",
                      &v->key, cl->status, cl->error ? cl->error : "");
        rc = ngx_http_cms_files_bucket_end(r, ctx, v,
                                           cl->status == 404 ? 404 : 0);

    } else if (cl->answer.len > NGX_HTTP_CMS_FILES_FETCH_MAX) {
        v->job.status = NGX_HTTP_CMS_IMAGE_REFUSED;
        (void) ngx_cpystrn((u_char *) v->job.reason,
                           (u_char *) "the original is over 64 MiB",
                           sizeof(v->job.reason));
        rc = ngx_http_cms_files_bucket_end(r, ctx, v, 415);

    } else {
        v->job.in = cl->answer.data;
        v->job.in_len = cl->answer.len;

        rc = ngx_http_cms_thread_queue(r, NGX_HTTP_CMS_LANE_IMAGE,
                                       &ngx_http_cms_files_bucket_lane, v);
        if (rc == NGX_BUSY) {
            rc = ngx_http_cms_files_bucket_end(r, ctx, v, 503);
        }
    }

    ctx->finish(r, rc);
    ngx_http_run_posted_requests(c);
}


static void
ngx_http_cms_files_bucket_work(void *data)
{
    ngx_http_cms_variant_t *v = data;

    ngx_http_cms_image_variant(&v->job, -1, -1);
}


/* the variant made in memory: stored in the bucket */
static ngx_int_t
ngx_http_cms_files_bucket_made(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data)
{
    ngx_http_cms_variant_t *v = data;

    ngx_str_t  body;

    /* the original's bytes are not needed any more */
    ngx_destroy_pool(v->fetch);
    v->fetch = NULL;
    v->job.in = NULL;

    if (v->job.status != NGX_HTTP_CMS_IMAGE_OK) {
        return ngx_http_cms_files_bucket_end(r, ctx, v, 0);
    }

    body.len = v->job.size;
    body.data = ngx_pnalloc(r->pool, body.len);

    if (body.data != NULL) {
        ngx_memcpy(body.data, v->job.out, body.len);
    }

    ngx_http_cms_image_free(&v->job);

    if (body.data == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_cms_s3_put_bytes(r, &v->vkey, &body, v->job.sha256,
                                     ngx_http_cms_files_bucket_stored, v);
}


static ngx_int_t
ngx_http_cms_files_bucket_stored(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data, ngx_uint_t status)
{
    ngx_http_cms_variant_t *v = data;

    if (status >= 200 && status <= 299) {
        ngx_log_error(NGX_LOG_NOTICE, r->connection->log, 0,
                      "cms: image variant \"%V\" made, %uz bytes, %M ms",
                      &v->vkey, v->job.size, v->job.took);
        status = 200;

    } else {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: storing the variant \"%V\" failed: %ui",
                      &v->vkey, status);
        status = 503;
    }

    return ngx_http_cms_files_bucket_end(r, ctx, v, status);
}


/*
 * The maker's end on the bucket: what it came to as the job's status
 * (200 found or stored, 404 no original, 415 refused, 503 or 0 the
 * bucket or the lane failed; a job's own status kept), then the flight
 * ended and the maker's answer, as after a folder's job.
 */
static ngx_int_t
ngx_http_cms_files_bucket_end(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_variant_t *v, ngx_uint_t status)
{
    ngx_http_cms_image_job_t  *job;

    job = &v->job;

    if (status == 200) {
        job->status = NGX_HTTP_CMS_IMAGE_OK;

    } else if (status == 404) {
        job->status = NGX_HTTP_CMS_IMAGE_MISSING;

    } else if (status == 415) {
        job->status = NGX_HTTP_CMS_IMAGE_REFUSED;

    } else if (status != 0 || job->status == NGX_HTTP_CMS_IMAGE_OK) {
        /* the bucket or the lane: unavailable, not the image */
        job->status = NGX_HTTP_CMS_IMAGE_TIMEDOUT;
        (void) ngx_cpystrn((u_char *) job->reason,
                           (u_char *) "the bucket or the image lane failed",
                           sizeof(job->reason));
    }

    if (v->flight != NULL) {
        ngx_http_cms_flight_end(v->flight, job);
    }

    return ngx_http_cms_files_variant_outcome(r, ctx, v, job);
}


/* the request ends: the fetched original's memory and the variant's
   bytes given back, if a job that did not come back left them */
static void
ngx_http_cms_files_bucket_free(void *data)
{
    ngx_http_cms_variant_t *v = data;

    if (v->fetch != NULL) {
        ngx_destroy_pool(v->fetch);
        v->fetch = NULL;
        v->job.in = NULL;
    }

    ngx_http_cms_image_free(&v->job);
}


static ngx_uint_t
ngx_http_cms_files_bucket_mode(ngx_http_request_t *r)
{
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    return mcf->s3 != NULL;
}


/*
 * The flight ends: its waiters answer with the job's outcome, or, when
 * the maker left before its job came back (job NULL), start again (one
 * of them makes it).
 */
static void
ngx_http_cms_flight_end(ngx_http_cms_flight_t *f,
    ngx_http_cms_image_job_t *job)
{
    ngx_int_t                rc;
    ngx_queue_t             *q;
    ngx_connection_t        *c;
    ngx_http_request_t      *r;
    ngx_http_cms_ctx_t      *ctx;
    ngx_http_cms_variant_t  *v;

    ngx_queue_remove(&f->queue);

    if (f->maker != NULL) {
        f->maker->flight = NULL;
        f->maker = NULL;
    }

    while (!ngx_queue_empty(&f->waiting)) {
        q = ngx_queue_head(&f->waiting);
        ngx_queue_remove(q);

        v = ngx_queue_data(q, ngx_http_cms_variant_t, queue);
        v->flight = NULL;

        r = v->request;
        c = r->connection;
        ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);

        r->read_event_handler = ngx_http_block_reading;

        if (job != NULL) {
            rc = ngx_http_cms_files_variant_outcome(r, ctx, v, job);

        } else if (ngx_http_cms_files_bucket_mode(r)) {
            /* the bucket: its maker asks it again */
            rc = ngx_http_cms_files_variant_make(r, v);

        } else {
            rc = ngx_http_cms_files_variant_serve(r, ctx, v);

            if (rc == NGX_DECLINED) {
                rc = ngx_http_cms_files_variant_make(r, v);
            }
        }

        ctx->finish(r, rc);
        ngx_http_run_posted_requests(c);
    }

    ngx_free(f);
}


/* the maker's request ends: its flight, if its job never came back */
static void
ngx_http_cms_flight_maker_gone(void *data)
{
    ngx_http_cms_variant_t *v = data;

    if (v->flight != NULL) {
        ngx_http_cms_flight_end(v->flight, NULL);
    }
}


/* a waiter's request ends (its client left): it leaves the flight */
static void
ngx_http_cms_flight_waiter_gone(void *data)
{
    ngx_http_cms_variant_t *v = data;

    if (v->flight != NULL) {
        ngx_queue_remove(&v->queue);
        v->flight = NULL;
    }
}
