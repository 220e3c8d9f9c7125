
/*
 * libvips in the thread pool (docs/images.md).
 *
 * The caller (ngx_http_cms_files_size.c) opens the original and the
 * variants' folder beneath the storage root and makes sure a variant is
 * made once; here the bytes become a variant.
 *
 * What is read is bounded before anything is decoded: the loader that
 * claims the bytes must be one of the allowed (JPEG, PNG, WebP, GIF,
 * HEIF/AVIF; libvips sniffs, the extension says nothing), and the header's
 * pixels at most cms_image_max_pixels, so a small file declaring
 * 100,000 x 100,000 pixels is refused unread.  Decoding streams
 * (shrink-on-load for JPEG and WebP), a truncated file fails instead of
 * being filled in, and a job running past cms_image_timeout is killed.
 * libvips' operation cache is off (a worker would keep decoded images),
 * each job runs on its own thread (the lane bounds how many), and what is
 * written is stripped of metadata, EXIF orientation applied first: no
 * GPS position is ever served.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <sys/file.h>
#include <dirent.h>
#include <vips/vips.h>
#include <openssl/evp.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_image.h"
#include "cms_filekey.h"
#include "cms_kdf.h"


/* the loaders a stored file may be read with (libvips' class names) */
static const char  *ngx_http_cms_image_loaders[] = {
    "VipsForeignLoadJpegFile", "VipsForeignLoadJpegBuffer",
    "VipsForeignLoadPngFile", "VipsForeignLoadPngBuffer",
    "VipsForeignLoadWebpFile", "VipsForeignLoadWebpBuffer",
    "VipsForeignLoadNsgifFile", "VipsForeignLoadNsgifBuffer",
    "VipsForeignLoadHeifFile", "VipsForeignLoadHeifBuffer",
    NULL
};


typedef struct {
    const char                 *name;       /* in a path, "format/<name>" */
    const char                 *ext;        /* a variant's extension */
} ngx_http_cms_image_kind_t;

static ngx_http_cms_image_kind_t  ngx_http_cms_image_kinds[] = {
    { NULL, NULL },                         /* NGX_HTTP_CMS_IMAGE_SAME */
    { "webp", "webp" },
    { "avif", "avif" },
    { "jpeg", "jpg" },
    { "png", "png" },
    { NULL, "gif" }                         /* the original's format only */
};


/* a running job's clock, for the kill */
typedef struct {
    struct timespec             start;
    ngx_msec_t                  timeout;
    unsigned                    killed:1;
} ngx_http_cms_image_clock_t;


static int ngx_http_cms_image_allowed(const char *path, const u_char *in,
    size_t in_len, char *reason, size_t size);
static VipsImage *ngx_http_cms_image_open(const char *path,
    const u_char *in, size_t in_len, uint64_t max_pixels, char *reason,
    size_t size);
static void ngx_http_cms_image_keep(ngx_http_cms_image_job_t *job,
    void *buf, size_t len);
static int ngx_http_cms_image_unfold(int dir, const char *leaf);
static VipsImage *ngx_http_cms_image_resize(ngx_http_cms_image_job_t *job,
    const char *path);
static int ngx_http_cms_image_save(VipsImage *in, ngx_uint_t format,
    ngx_uint_t quality, void **buf, size_t *len);
static int ngx_http_cms_image_place(int dir, const char *name, void *buf,
    size_t len, const char **what);
static void ngx_http_cms_image_watch(VipsImage *im,
    ngx_http_cms_image_clock_t *clock);
static void ngx_http_cms_image_eval(VipsImage *im, VipsProgress *progress,
    void *data);
static ngx_msec_t ngx_http_cms_image_since(struct timespec *start);
static void ngx_http_cms_image_reason(char *reason, size_t size,
    const char *what);


static ngx_uint_t  ngx_http_cms_image_started;


ngx_int_t
ngx_http_cms_image_init_process(ngx_cycle_t *cycle)
{
    if (VIPS_INIT("nginx")) {
        ngx_log_error(NGX_LOG_EMERG, cycle->log, 0,
                      "cms: libvips did not start: %s", vips_error_buffer());
        vips_error_clear();
        return NGX_ERROR;
    }

    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_cache_set_max_files(0);
    vips_concurrency_set(1);
    vips_block_untrusted_set(TRUE);

    ngx_http_cms_image_started = 1;

    return NGX_OK;
}


void
ngx_http_cms_image_exit_process(void)
{
    /* the process ends: the threads and what they hold go with it */
    ngx_http_cms_image_started = 0;
}


ngx_int_t
ngx_http_cms_image_format(ngx_str_t *name)
{
    ngx_uint_t  i;

    for (i = 1; i < NGX_HTTP_CMS_IMAGE_FORMATS; i++) {
        if (ngx_http_cms_image_kinds[i].name != NULL
            && name->len == ngx_strlen(ngx_http_cms_image_kinds[i].name)
            && ngx_strncmp(name->data, ngx_http_cms_image_kinds[i].name,
                           name->len)
               == 0)
        {
            return i;
        }
    }

    return -1;
}


ngx_int_t
ngx_http_cms_image_ext_format(u_char *ext, size_t len)
{
    static const struct {
        const char  *ext;
        ngx_uint_t   format;
    } exts[] = {
        { "jpg", NGX_HTTP_CMS_IMAGE_JPEG },
        { "jpeg", NGX_HTTP_CMS_IMAGE_JPEG },
        { "png", NGX_HTTP_CMS_IMAGE_PNG },
        { "webp", NGX_HTTP_CMS_IMAGE_WEBP },
        { "gif", NGX_HTTP_CMS_IMAGE_GIF },
        { "avif", NGX_HTTP_CMS_IMAGE_AVIF },
    };

    ngx_uint_t  i;

    for (i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
        if (len == ngx_strlen(exts[i].ext)
            && ngx_strncmp(ext, exts[i].ext, len) == 0)
        {
            return exts[i].format;
        }
    }

    return -1;
}


const char *
ngx_http_cms_image_format_ext(ngx_uint_t format)
{
    return ngx_http_cms_image_kinds[format].ext;
}


/* long: resized, watched, encoded, placed, each with its failure */
void
ngx_http_cms_image_variant(ngx_http_cms_image_job_t *job, int fd, int dir)
{
    int                          rc;
    char                         path[32];
    void                        *buf;
    size_t                       len;
    VipsImage                   *out;
    ngx_http_cms_image_clock_t   clock;

    (void) clock_gettime(CLOCK_MONOTONIC, &clock.start);
    clock.timeout = job->timeout;
    clock.killed = 0;

    (void) snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

    out = ngx_http_cms_image_resize(job, job->in ? NULL : path);
    if (out == NULL) {
        job->status = NGX_HTTP_CMS_IMAGE_REFUSED;
        return;
    }

    ngx_http_cms_image_watch(out, &clock);

    buf = NULL;
    rc = ngx_http_cms_image_save(out, job->format, job->quality, &buf, &len);

    g_object_unref(out);

    if (rc != 0) {
        ngx_http_cms_image_reason(job->reason, sizeof(job->reason),
                                  clock.killed
                                  ? "the job ran out of time"
                                  : "the image could not be decoded");
        job->status = clock.killed ? NGX_HTTP_CMS_IMAGE_TIMEDOUT
                                   : NGX_HTTP_CMS_IMAGE_REFUSED;
        g_free(buf);
        return;
    }

    if (dir == -1) {
        ngx_http_cms_image_keep(job, buf, len);
        return;
    }

    if (ngx_http_cms_image_place(dir, job->name, buf, len, &job->what)
        != 0)
    {
        job->err = errno;
        job->status = NGX_HTTP_CMS_IMAGE_FAILED;

    } else {
        job->made = 1;
        job->size = len;
    }

    g_free(buf);
}


void
ngx_http_cms_image_free(ngx_http_cms_image_job_t *job)
{
    g_free(job->out);
    job->out = NULL;
}


/* the variant's bytes kept for the bucket, with their SHA-256 in hex */
static void
ngx_http_cms_image_keep(ngx_http_cms_image_job_t *job, void *buf, size_t len)
{
    u_char        md[EVP_MAX_MD_SIZE];
    unsigned int  n;

    if (EVP_Digest(buf, len, md, &n, cms_sha256(), NULL) != 1 || n != 32) {
        g_free(buf);
        errno = 0;
        job->what = "SHA-256 of a variant";
        job->status = NGX_HTTP_CMS_IMAGE_FAILED;
        return;
    }

    *ngx_hex_dump(job->sha256, md, 32) = '\0';
    job->out = buf;
    job->size = len;
    job->made = 1;
}


/* the image at "path" (or job->in) checked, then resized (lazily: the
   save decodes); NULL with job->reason set */
/* long: checked, resized from a file or memory, then flattened */
static VipsImage *
ngx_http_cms_image_resize(ngx_http_cms_image_job_t *job, const char *path)
{
    int               rc;
    VipsImage        *in, *out, *flat;
    VipsArrayDouble  *bg;

    static double  white[] = { 255.0, 255.0, 255.0 };

    in = ngx_http_cms_image_open(path, job->in, job->in_len,
                                 job->max_pixels, job->reason,
                                 sizeof(job->reason));
    if (in == NULL) {
        return NULL;
    }

    g_object_unref(in);

    /* the width asked for, or the original's when it is narrower; the
       EXIF orientation applied (libvips' default) */
    rc = (path != NULL)
         ? vips_thumbnail(path, &out, (int) job->width,
                          "height", VIPS_MAX_COORD, "size", VIPS_SIZE_DOWN,
                          "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL)
         : vips_thumbnail_buffer((void *) job->in, job->in_len, &out,
                                 (int) job->width,
                                 "height", VIPS_MAX_COORD,
                                 "size", VIPS_SIZE_DOWN,
                                 "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL);
    if (rc != 0) {
        ngx_http_cms_image_reason(job->reason, sizeof(job->reason),
                                  "the image could not be decoded");
        return NULL;
    }

    /* JPEG has no transparency: what was transparent becomes white */
    if (job->format != NGX_HTTP_CMS_IMAGE_JPEG || !vips_image_hasalpha(out)) {
        return out;
    }

    bg = vips_array_double_new(white, 3);
    rc = vips_flatten(out, &flat, "background", bg, NULL);
    vips_area_unref(VIPS_AREA(bg));
    g_object_unref(out);

    if (rc != 0) {
        ngx_http_cms_image_reason(job->reason, sizeof(job->reason),
                                  "the image could not be flattened");
        return NULL;
    }

    return flat;
}


/* the file at "path" (or the bytes "in") when an allowed loader claims
   it, its header read and its pixels within bounds; else NULL and the
   reason */
static VipsImage *
ngx_http_cms_image_open(const char *path, const u_char *in_buf,
    size_t in_len, uint64_t max_pixels, char *reason, size_t size)
{
    uint64_t    pixels;
    VipsImage  *in;

    if (!ngx_http_cms_image_allowed(path, in_buf, in_len, reason, size)) {
        return NULL;
    }

    in = (path != NULL)
         ? vips_image_new_from_file(path, "access", VIPS_ACCESS_SEQUENTIAL,
                                    "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL)
         : vips_image_new_from_buffer(in_buf, in_len, "",
                                      "access", VIPS_ACCESS_SEQUENTIAL,
                                      "fail_on", VIPS_FAIL_ON_TRUNCATED,
                                      NULL);
    if (in == NULL) {
        ngx_http_cms_image_reason(reason, size,
                                  "the image's header could not be read");
        return NULL;
    }

    pixels = (uint64_t) vips_image_get_width(in)
             * (uint64_t) vips_image_get_height(in);

    if (pixels > max_pixels) {
        (void) snprintf(reason, size, "the image has %llu pixels, over %llu",
                        (unsigned long long) pixels,
                        (unsigned long long) max_pixels);
        g_object_unref(in);
        return NULL;
    }

    return in;
}


/* whether the loader libvips would read "path" (or "in") with is
   allowed */
static int
ngx_http_cms_image_allowed(const char *path, const u_char *in, size_t in_len,
    char *reason, size_t size)
{
    ngx_uint_t   i;
    const char  *loader;

    loader = (path != NULL) ? vips_foreign_find_load(path)
                            : vips_foreign_find_load_buffer(in, in_len);

    if (loader == NULL) {
        ngx_http_cms_image_reason(reason, size, "not an image");
        return 0;
    }

    g_free(vips_error_buffer_copy());

    for (i = 0; ngx_http_cms_image_loaders[i] != NULL; i++) {
        if (ngx_strcmp(loader, ngx_http_cms_image_loaders[i]) == 0) {
            return 1;
        }
    }

    (void) snprintf(reason, size, "not an image type served (%s)", loader);

    return 0;
}


static int
ngx_http_cms_image_save(VipsImage *in, ngx_uint_t format, ngx_uint_t quality,
    void **buf, size_t *len)
{
    int  q;

    q = (int) quality;

    switch (format) {

    case NGX_HTTP_CMS_IMAGE_WEBP:
        return vips_webpsave_buffer(in, buf, len, "Q", q, "strip", TRUE,
                                    NULL);

    case NGX_HTTP_CMS_IMAGE_AVIF:
        return vips_heifsave_buffer(in, buf, len, "Q", q, "strip", TRUE,
                                    "compression",
                                    VIPS_FOREIGN_HEIF_COMPRESSION_AV1,
                                    NULL);

    case NGX_HTTP_CMS_IMAGE_JPEG:
        return vips_jpegsave_buffer(in, buf, len, "Q", q, "strip", TRUE,
                                    "optimize_coding", TRUE, NULL);

    case NGX_HTTP_CMS_IMAGE_PNG:
        return vips_pngsave_buffer(in, buf, len, "strip", TRUE, NULL);

    default: /* NGX_HTTP_CMS_IMAGE_GIF */
        return vips_gifsave_buffer(in, buf, len, "strip", TRUE, NULL);
    }
}


/* the bytes written to a temporary name, fsynced, renamed into place */
/* long: each step with its failure */
static int
ngx_http_cms_image_place(int dir, const char *name, void *buf, size_t len,
    const char **what)
{
    int       fd;
    char      tmp[64];
    size_t    done;
    ssize_t   n;

    (void) snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", name,
                    (long) syscall(SYS_gettid));

    fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC
                          | O_NOFOLLOW, 0644);
    if (fd == -1) {
        *what = "open() of a variant";
        return -1;
    }

    for (done = 0; done < len; done += n) {
        n = write(fd, (u_char *) buf + done, len - done);

        if (n == -1 && errno == EINTR) {
            n = 0;
            continue;
        }

        if (n <= 0) {
            *what = "write() of a variant";
            goto failed;
        }
    }

    if (fsync(fd) == -1) {
        *what = "fsync() of a variant";
        goto failed;
    }

    if (close(fd) == -1) {
        fd = -1;
        *what = "close() of a variant";
        goto failed;
    }

    fd = -1;

    if (renameat(dir, tmp, dir, name) == -1) {
        *what = "rename() of a variant";
        goto failed;
    }

    return 0;

failed:

    n = errno;

    if (fd != -1) {
        (void) close(fd);
    }

    (void) unlinkat(dir, tmp, 0);
    errno = n;

    return -1;
}


/* long: the original locked, its variants removed, then the original */
int
ngx_http_cms_image_forget(int dir, const char *name)
{
    int          orig, err;
    char         leaf[CMS_FILEKEY_MAX + 1];
    size_t       n;
    const char  *dot;

    dot = strrchr(name, '.');
    n = (dot != NULL) ? (size_t) (dot - name) : ngx_strlen(name);

    if (n == 0 || n >= sizeof(leaf)) {
        errno = EINVAL;
        return -1;
    }

    ngx_memcpy(leaf, name, n);
    leaf[n] = '\0';

    /* a maker holds the original's lock while it writes a variant: taken
       here, no variant is being made; unlinked under it, none is begun
       (a maker checks the original is still linked once it has it) */
    orig = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

    if (orig == -1 && errno != ENOENT) {
        return -1;
    }

    if (orig != -1 && flock(orig, LOCK_EX) == -1) {
        err = errno;
        (void) close(orig);
        errno = err;
        return -1;
    }

    err = ngx_http_cms_image_unfold(dir, leaf);

    if (!err && orig != -1 && unlinkat(dir, name, 0) == -1
        && errno != ENOENT)
    {
        err = errno;
    }

    if (orig != -1) {
        (void) close(orig);
    }

    errno = err;

    return err ? -1 : 0;
}


/* the variants' folder "leaf" in "dir" read through and removed: 0, or
   the errno of what failed */
static int
ngx_http_cms_image_unfold(int dir, const char *leaf)
{
    int             fd, err;
    DIR            *d;
    struct dirent  *de;

    fd = openat(dir, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd == -1) {
        return (errno == ENOENT || errno == ENOTDIR) ? 0 : errno;
    }

    d = fdopendir(fd);
    if (d == NULL) {
        err = errno;
        (void) close(fd);
        return err;
    }

    err = 0;

    /* the variants and a maker's temporary files; nothing else is made
       there */
    while ((de = readdir(d)) != NULL) {
        if (ngx_strcmp(de->d_name, ".") != 0
            && ngx_strcmp(de->d_name, "..") != 0
            && unlinkat(fd, de->d_name, 0) == -1 && errno != ENOENT)
        {
            err = errno;
        }
    }

    (void) closedir(d);

    if (unlinkat(dir, leaf, AT_REMOVEDIR) == -1 && errno != ENOENT && !err) {
        err = errno;
    }

    return err;
}


/* long: the header, then the colour's own small pipeline */
void
ngx_http_cms_image_probe(int fd, uint64_t max_pixels, ngx_msec_t timeout,
    ngx_http_cms_image_info_t *info)
{
    int                          swap, n;
    char                         path[32], reason[128];
    double                      *px;
    VipsImage                   *in, *dot, *srgb;
    ngx_uint_t                   w, h;
    ngx_http_cms_image_clock_t   clock;

    info->width = 0;
    info->height = 0;
    info->color[0] = '\0';

    (void) snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

    in = ngx_http_cms_image_open(path, NULL, 0, UINT64_MAX, reason,
                                 sizeof(reason));
    if (in == NULL) {
        vips_error_clear();
        return;
    }

    w = vips_image_get_width(in);
    h = vips_image_get_height(in);
    swap = vips_image_get_orientation_swap(in);

    g_object_unref(in);

    info->width = swap ? h : w;
    info->height = swap ? w : h;

    if ((uint64_t) w * h > max_pixels) {
        return;
    }

    /* the average colour: the image shrunk to one pixel, in sRGB */
    if (vips_thumbnail(path, &dot, 1, "height", 1, "size", VIPS_SIZE_FORCE,
                       "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL)
        != 0)
    {
        vips_error_clear();
        return;
    }

    (void) clock_gettime(CLOCK_MONOTONIC, &clock.start);
    clock.timeout = timeout;
    clock.killed = 0;

    srgb = NULL;
    px = NULL;

    if (vips_colourspace(dot, &srgb, VIPS_INTERPRETATION_sRGB, NULL) == 0) {
        ngx_http_cms_image_watch(srgb, &clock);

        if (vips_getpoint(srgb, &px, &n, 0, 0, NULL) == 0 && n >= 3) {
            (void) snprintf((char *) info->color, sizeof(info->color),
                            "#%02x%02x%02x",
                            (unsigned) ngx_min(ngx_max(px[0], 0), 255),
                            (unsigned) ngx_min(ngx_max(px[1], 0), 255),
                            (unsigned) ngx_min(ngx_max(px[2], 0), 255));
        }
    }

    g_free(px);

    if (srgb != NULL) {
        g_object_unref(srgb);
    }

    g_object_unref(dot);
    vips_error_clear();
}


/* a running evaluation of "im" killed once the clock ran out */
static void
ngx_http_cms_image_watch(VipsImage *im, ngx_http_cms_image_clock_t *clock)
{
    vips_image_set_progress(im, TRUE);
    g_signal_connect(im, "eval", G_CALLBACK(ngx_http_cms_image_eval),
                     clock);
}


static void
ngx_http_cms_image_eval(VipsImage *im, VipsProgress *progress, void *data)
{
    ngx_http_cms_image_clock_t *clock = data;

    if (ngx_http_cms_image_since(&clock->start) > clock->timeout) {
        clock->killed = 1;
        vips_image_set_kill(im, TRUE);
    }
}


static ngx_msec_t
ngx_http_cms_image_since(struct timespec *start)
{
    struct timespec  now;

    (void) clock_gettime(CLOCK_MONOTONIC, &now);

    return (ngx_msec_t) ((now.tv_sec - start->tv_sec) * 1000
                         + (now.tv_nsec - start->tv_nsec) / 1000000);
}


/* "what", then libvips' first line of error, its buffer cleared */
static void
ngx_http_cms_image_reason(char *reason, size_t size, const char *what)
{
    char    *err;
    size_t   n;

    /* copied and cleared under libvips' lock: other jobs write there */
    err = vips_error_buffer_copy();
    n = (err != NULL) ? strcspn(err, "\n") : 0;

    (void) snprintf(reason, size, "%s%s%.*s", what, n ? ": " : "", (int) n,
                    n ? err : "");

    g_free(err);
}
