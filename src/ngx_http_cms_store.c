
/*
 * Stored objects (see the header).  The thread functions make no nginx
 * call that allocates or logs: plain system calls on paths and buffers
 * made in r->pool before the job was posted, their failure kept in the
 * store for the event loop to log.
 *
 * libmagic: one database per worker, loaded in init_process; a magic_t
 * is not safe in two threads at once, so its calls take a mutex (they
 * look at NGX_HTTP_CMS_STORE_SNIFF bytes at most: well under a
 * millisecond).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <magic.h>
#include <pthread.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_thread.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_store.h"
#include "ngx_http_cms_s3.h"
#include "cms_mime.h"
#include "cms_filekey.h"


#define NGX_HTTP_CMS_STORE_BUF  65536

/* the longest path walked a component at a time (a key, a temporary
   name: CMS_FILEKEY_MAX and a little) */
#define NGX_HTTP_CMS_STORE_REL_MAX  1024


static void ngx_http_cms_store_write_work(void *data);
static int ngx_http_cms_store_fill(ngx_http_cms_store_t *st, int fd,
    void *hash);
static int ngx_http_cms_store_put(ngx_http_cms_store_t *st, int fd,
    void *hash, u_char *p, size_t n);
static void ngx_http_cms_store_sniff(ngx_http_cms_store_t *st, u_char *p,
    size_t n);
static int ngx_http_cms_store_folder(ngx_http_cms_store_t *st,
    ngx_uint_t create);
static int ngx_http_cms_store_mkdir(int root, u_char *rel);
static int ngx_http_cms_store_walk(int root, const char *rel, int flags);
static void ngx_http_cms_store_close(int fd);
static ngx_int_t ngx_http_cms_store_gone(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data);
static void ngx_http_cms_store_finish_work(void *data);
static void ngx_http_cms_store_fail(ngx_http_cms_store_t *st,
    const char *what);
static void ngx_http_cms_store_cleanup(void *data);
static ngx_int_t ngx_http_cms_store_sent(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data, ngx_uint_t status);
static void ngx_http_cms_store_unstage(void *data);
static ngx_int_t ngx_http_cms_store_unstaged(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data);


/*
 * Names libmagic gives types that the storage table (cms_mime.c) knows
 * by their registered names.
 */
static const char *const  ngx_http_cms_store_aliases[][2] = {
    { "audio/x-wav", "audio/wav" },
    { "audio/x-flac", "audio/flac" },
    { "audio/x-m4a", "audio/mp4" },
    { "image/x-ms-bmp", "image/bmp" },
    { "image/vnd.microsoft.icon", "image/x-icon" },
    { NULL, NULL }
};


static magic_t          ngx_http_cms_store_magic;

/* the worker's descriptor of the storage root (O_PATH), opened at its
   first use in a cycle */
static ngx_fd_t         ngx_http_cms_store_root_fd = NGX_INVALID_FILE;
static ngx_cycle_t     *ngx_http_cms_store_root_cycle;
static pthread_mutex_t  ngx_http_cms_store_mutex = PTHREAD_MUTEX_INITIALIZER;


ngx_int_t
ngx_http_cms_store_init_process(ngx_cycle_t *cycle)
{
    ngx_http_cms_store_magic = magic_open(MAGIC_MIME_TYPE | MAGIC_ERROR);

    if (ngx_http_cms_store_magic == NULL
        || magic_load(ngx_http_cms_store_magic, NULL) != 0)
    {
        ngx_log_error(NGX_LOG_EMERG, cycle->log, 0,
                      "cms: libmagic's database did not load: %s",
                      ngx_http_cms_store_magic
                      ? magic_error(ngx_http_cms_store_magic) : "no memory");
        return NGX_ERROR;
    }

    return NGX_OK;
}


void
ngx_http_cms_store_exit_process(void)
{
    if (ngx_http_cms_store_magic != NULL) {
        magic_close(ngx_http_cms_store_magic);
        ngx_http_cms_store_magic = NULL;
    }
}


/* long: the two paths spelled out byte by byte */
ngx_http_cms_store_t *
ngx_http_cms_store_create(ngx_http_request_t *r, ngx_str_t *key)
{
    u_char                    *p, *slash;
    u_char                     rnd[8];
    ngx_str_t                 *root;
    ngx_pool_cleanup_t        *cln;
    ngx_http_cms_store_t      *st;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);
    root = &mcf->storage;

    if (root->len == 0) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: an upload needs \"cms_storage\"");
        return NULL;
    }

    st = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_store_t));
    cln = ngx_pool_cleanup_add(r->pool, 0);

    if (st == NULL || cln == NULL
        || ngx_http_cms_crypto_random(rnd, sizeof(rnd)) != NGX_OK)
    {
        return NULL;
    }

    st->root = ngx_http_cms_store_root(root);

    if (st->root == NGX_INVALID_FILE) {
        ngx_log_error(NGX_LOG_CRIT, r->connection->log, ngx_errno,
                      "cms: open(\"%V\") failed", root);
        return NULL;
    }

    st->fd = NGX_INVALID_FILE;
    st->log = r->connection->log;
    st->max_pixels = mcf->image.max_pixels;
    st->timeout = mcf->image.timeout;
    st->key.len = key->len;
    st->key.data = ngx_pstrdup(r->pool, key);

    /* "<root>/<key>" and "<root>/<folder>/.<name>.<16 hex>.tmp" */
    st->path = ngx_pnalloc(r->pool, root->len + 1 + key->len + 1);
    st->tmp = ngx_pnalloc(r->pool, root->len + key->len + 24);

    if (st->key.data == NULL || st->path == NULL || st->tmp == NULL) {
        return NULL;
    }

    p = ngx_cpymem(st->path, root->data, root->len);
    *p++ = '/';
    p = ngx_cpymem(p, key->data, key->len);
    *p = '\0';

    /* the key has a folder: the last slash is within it */
    slash = (u_char *) strrchr((char *) st->path, '/');

    p = ngx_cpymem(st->tmp, st->path, slash + 1 - st->path);
    *p++ = '.';
    p = ngx_cpymem(p, slash + 1, ngx_strlen(slash + 1));
    *p++ = '.';
    p = ngx_hex_dump(p, rnd, sizeof(rnd));
    p = ngx_cpymem(p, ".tmp", 4);
    *p = '\0';

    cln->handler = ngx_http_cms_store_cleanup;
    cln->data = st;

    return st;
}


ngx_int_t
ngx_http_cms_store_write(ngx_http_request_t *r, ngx_http_cms_store_t *st,
    ngx_http_cms_thread_done_pt done)
{
    st->buf_size = NGX_HTTP_CMS_STORE_BUF;

    if (st->fd == NGX_INVALID_FILE) {
        /* the decoded bytes whole: the body that carried them is bounded */
        st->buf_size = ngx_max(ngx_base64_decoded_length(st->base64.len),
                               1);
    }

    st->buf = ngx_pnalloc(r->pool, st->buf_size);
    if (st->buf == NULL) {
        return NGX_ERROR;
    }

    st->written = 1;

    return ngx_http_cms_thread_run(r, ngx_http_cms_store_write_work, st,
                                   done);
}


/* in a pool thread */
/* long: the folder, the file, then the steps each with its failure */
static void
ngx_http_cms_store_write_work(void *data)
{
    ngx_http_cms_store_t *st = data;

    int    fd, dir;
    void  *hash;

    dir = ngx_http_cms_store_folder(st, 1);

    if (dir == -1) {
        st->written = 0;
        return;
    }

    /* read and write: an image's header is read back through it */
    fd = openat(dir, strrchr((char *) st->tmp, '/') + 1,
                O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);

    if (fd == -1) {
        /* none made: not ours to remove */
        st->written = 0;
        ngx_http_cms_store_fail(st, "openat()");
        ngx_http_cms_store_close(dir);
        return;
    }

    ngx_http_cms_store_close(dir);

    hash = ngx_http_cms_crypto_sha256_begin();

    if (hash == NULL) {
        ngx_http_cms_store_fail(st, "SHA-256");

    } else if (fchmod(fd, 0644) == -1) {
        ngx_http_cms_store_fail(st, "fchmod()");

    } else if (ngx_http_cms_store_fill(st, fd, hash) == 0) {

        if (fsync(fd) == -1) {
            ngx_http_cms_store_fail(st, "fsync()");

        } else if (ngx_http_cms_crypto_sha256_end(hash, st->sha256)
                   != NGX_OK)
        {
            ngx_http_cms_store_fail(st, "SHA-256");

        } else if (ngx_strncmp(st->type, "image/", 6) == 0) {
            ngx_http_cms_image_probe(fd, st->max_pixels, st->timeout,
                                     &st->image);
        }

        hash = NULL;
    }

    if (hash != NULL) {
        (void) ngx_http_cms_crypto_sha256_end(hash, NULL);
    }

    if (close(fd) == -1 && st->status == NGX_HTTP_CMS_STORE_OK) {
        ngx_http_cms_store_fail(st, "close()");
    }
}


/* the bytes into fd, hashed, the first ones sniffed; 0 or -1 (status) */
static int
ngx_http_cms_store_fill(ngx_http_cms_store_t *st, int fd, void *hash)
{
    ssize_t    n;
    ngx_str_t  out;

    if (st->fd == NGX_INVALID_FILE) {
        out.data = st->buf;

        if (ngx_decode_base64(&out, &st->base64) != NGX_OK) {
            st->status = NGX_HTTP_CMS_STORE_BAD_DATA;
            return -1;
        }

        ngx_http_cms_store_sniff(st, out.data,
                                 ngx_min(out.len, NGX_HTTP_CMS_STORE_SNIFF));

        return ngx_http_cms_store_put(st, fd, hash, out.data, out.len);
    }

    for ( ;; ) {
        n = pread(st->fd, st->buf, st->buf_size, st->size);

        if (n == -1 && errno == EINTR) {
            continue;
        }

        if (n == -1) {
            ngx_http_cms_store_fail(st, "pread()");
            return -1;
        }

        if (n == 0) {
            return 0;
        }

        if (st->size == 0) {
            ngx_http_cms_store_sniff(st, st->buf, n);
        }

        if (ngx_http_cms_store_put(st, fd, hash, st->buf, n) != 0) {
            return -1;
        }
    }
}


static int
ngx_http_cms_store_put(ngx_http_cms_store_t *st, int fd, void *hash,
    u_char *p, size_t n)
{
    ssize_t  w;

    if (ngx_http_cms_crypto_sha256_update(hash, p, n) != NGX_OK) {
        ngx_http_cms_store_fail(st, "SHA-256");
        return -1;
    }

    while (n) {
        w = write(fd, p, n);

        if (w == -1 && errno == EINTR) {
            continue;
        }

        if (w == -1) {
            ngx_http_cms_store_fail(st, "write()");
            return -1;
        }

        p += w;
        n -= w;
        st->size += w;
    }

    return 0;
}


/* the media type libmagic reads in the first bytes; "" when none */
static void
ngx_http_cms_store_sniff(ngx_http_cms_store_t *st, u_char *p, size_t n)
{
    size_t       len;
    const char  *type;

    st->type[0] = '\0';

    if (n == 0 || ngx_http_cms_store_magic == NULL) {
        return;
    }

    pthread_mutex_lock(&ngx_http_cms_store_mutex);

    type = magic_buffer(ngx_http_cms_store_magic, p, n);

    if (type != NULL) {
        len = ngx_min(strlen(type), NGX_HTTP_CMS_STORE_TYPE_MAX);
        ngx_memcpy(st->type, type, len);
        st->type[len] = '\0';
    }

    pthread_mutex_unlock(&ngx_http_cms_store_mutex);
}


/*
 * In a pool thread: the descriptor (O_RDONLY) of the key's folder beneath
 * the root, its folders made (0755) first when "create", each level
 * opened with ngx_http_cms_store_beneath(): a link anywhere below the
 * root is refused, never followed.  -1 with the failure kept.
 */
static int
ngx_http_cms_store_folder(ngx_http_cms_store_t *st, ngx_uint_t create)
{
    int      fd;
    u_char  *rel, *p, *last;

    rel = st->path + ngx_strlen(st->path) - st->key.len;

    /* the key has a folder: its last slash */
    last = (u_char *) strrchr((char *) rel, '/');

    for (p = rel; create && p <= last; p++) {
        if (*p != '/') {
            continue;
        }

        *p = '\0';
        fd = ngx_http_cms_store_mkdir(st->root, rel);
        *p = '/';

        if (fd == -1) {
            ngx_http_cms_store_fail(st, "mkdirat()");
            return -1;
        }
    }

    *last = '\0';
    fd = ngx_http_cms_store_beneath(st->root, (char *) rel,
                                    O_RDONLY | O_DIRECTORY);
    *last = '/';

    if (fd == -1) {
        ngx_http_cms_store_fail(st, "opening the folder beneath the root");
    }

    return fd;
}


/* the folder "rel" made beneath the root, in its parent opened beneath
   it; 0 (made, or there) or -1 */
static int
ngx_http_cms_store_mkdir(int root, u_char *rel)
{
    int      dir, rc, err;
    u_char  *slash;

    slash = (u_char *) strrchr((char *) rel, '/');

    if (slash == NULL) {
        dir = root;

    } else {
        *slash = '\0';
        dir = ngx_http_cms_store_beneath(root, (char *) rel,
                                         O_RDONLY | O_DIRECTORY);
        *slash = '/';

        if (dir == -1) {
            return -1;
        }
    }

    rc = mkdirat(dir, (char *) (slash ? slash + 1 : rel), 0755);
    rc = (rc == -1 && errno != EEXIST) ? -1 : 0;

    if (dir != root) {
        err = errno;
        ngx_http_cms_store_close(dir);
        errno = err;
    }

    return rc;
}


ngx_fd_t
ngx_http_cms_store_root(ngx_str_t *root)
{
    if (ngx_http_cms_store_root_cycle != ngx_cycle) {
        /* a new configuration (a single process reloaded): its root */
        if (ngx_http_cms_store_root_fd != NGX_INVALID_FILE) {
            (void) ngx_close_file(ngx_http_cms_store_root_fd);
            ngx_http_cms_store_root_fd = NGX_INVALID_FILE;
        }

        ngx_http_cms_store_root_cycle = (ngx_cycle_t *) ngx_cycle;
    }

    if (ngx_http_cms_store_root_fd == NGX_INVALID_FILE) {
        /* cms_storage is a full name, NUL-terminated */
        ngx_http_cms_store_root_fd = open((char *) root->data,
                                          O_PATH | O_DIRECTORY | O_CLOEXEC);
    }

    return ngx_http_cms_store_root_fd;
}


int
ngx_http_cms_store_beneath(int root, const char *rel, int flags)
{
#if (NGX_HTTP_CMS_STORE_OPENAT2)
    int              fd;
    struct open_how  how;

    ngx_memzero(&how, sizeof(struct open_how));
    how.flags = flags | O_NOFOLLOW | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS
                  | RESOLVE_NO_MAGICLINKS;

    fd = syscall(SYS_openat2, root, rel, &how, sizeof(struct open_how));

    if (fd != -1 || errno != ENOSYS) {
        return fd;
    }
#endif

    return ngx_http_cms_store_walk(root, rel, flags);
}


/* without openat2(): a component at a time, none a link or ".." */
static int
ngx_http_cms_store_walk(int root, const char *rel, int flags)
{
    int     dir, fd, err;
    char    buf[NGX_HTTP_CMS_STORE_REL_MAX], *p, *slash;
    size_t  len;

    len = ngx_strlen(rel);

    if (len >= sizeof(buf)) {
        errno = ENAMETOOLONG;
        return -1;
    }

    ngx_memcpy(buf, rel, len + 1);

    dir = root;
    p = buf;

    for ( ;; ) {
        slash = strchr(p, '/');

        if (slash != NULL) {
            *slash = '\0';
        }

        if (ngx_strcmp(p, "..") == 0) {
            fd = -1;
            errno = EXDEV;

        } else {
            fd = openat(dir, p, (slash ? O_PATH | O_DIRECTORY : flags)
                                | O_NOFOLLOW | O_CLOEXEC);
        }

        if (dir != root) {
            err = errno;
            ngx_http_cms_store_close(dir);
            errno = err;
        }

        if (fd == -1 || slash == NULL) {
            return fd;
        }

        dir = fd;
        p = slash + 1;
    }
}


/* a descriptor closed, errno kept */
static void
ngx_http_cms_store_close(int fd)
{
    int  err;

    err = errno;
    (void) close(fd);
    errno = err;
}


ngx_uint_t
ngx_http_cms_store_verdict(ngx_http_cms_store_t *st)
{
    u_char      *dot;
    const char  *ext;

    if (st->size == 0) {
        return NGX_HTTP_CMS_STORE_EMPTY;
    }

    if (cms_mime_executable((char *) st->type, ngx_strlen(st->type))) {
        return NGX_HTTP_CMS_STORE_EXECUTABLE;
    }

    dot = st->key.data + st->key.len;

    while (dot > st->key.data && dot[-1] != '.') {
        dot--;
    }

    /* an unknown type is served as octet-stream, an attachment: any */
    if (st->key.data + st->key.len - dot == 3
        && ngx_strncmp(dot, "bin", 3) == 0)
    {
        return NGX_HTTP_CMS_STORE_MATCH;
    }

    ext = ngx_http_cms_store_type_ext(st);

    if (ngx_strlen(ext) != (size_t) (st->key.data + st->key.len - dot)
        || ngx_strncmp(ext, dot, ngx_strlen(ext)) != 0)
    {
        return NGX_HTTP_CMS_STORE_MISMATCH;
    }

    return NGX_HTTP_CMS_STORE_MATCH;
}


const char *
ngx_http_cms_store_type_ext(ngx_http_cms_store_t *st)
{
    ngx_uint_t   i;
    const char  *type;

    type = (const char *) st->type;

    for (i = 0; ngx_http_cms_store_aliases[i][0]; i++) {
        if (ngx_strcmp(type, ngx_http_cms_store_aliases[i][0]) == 0) {
            type = ngx_http_cms_store_aliases[i][1];
            break;
        }
    }

    return cms_mime_ext(type, ngx_strlen(type));
}


ngx_int_t
ngx_http_cms_store_extend(ngx_http_request_t *r, ngx_http_cms_store_t *st,
    const char *ext)
{
    u_char  *p;
    size_t   len, path_len;

    len = ngx_strlen(ext);
    path_len = ngx_strlen(st->path);

    p = ngx_pnalloc(r->pool, st->key.len + 1 + len);
    if (p == NULL) {
        return NGX_ERROR;
    }

    ngx_memcpy(p, st->key.data, st->key.len);
    p[st->key.len] = '.';
    ngx_memcpy(p + st->key.len + 1, ext, len);
    st->key.data = p;
    st->key.len += 1 + len;

    p = ngx_pnalloc(r->pool, path_len + 1 + len + 1);
    if (p == NULL) {
        return NGX_ERROR;
    }

    ngx_sprintf(p, "%s.%s%Z", st->path, ext);
    st->path = p;

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_store_refuse(ngx_http_request_t *r, ngx_http_cms_store_t *st,
    ngx_uint_t op, ngx_int_t rc)
{
    st->rc = rc;
    st->then = NULL;

    return ngx_http_cms_store_finish(r, st, op, ngx_http_cms_store_gone);
}


ngx_int_t
ngx_http_cms_store_remove(ngx_http_request_t *r, ngx_str_t *key,
    ngx_http_cms_thread_done_pt done)
{
    ngx_http_cms_store_t  *st;

    st = ngx_http_cms_store_create(r, key);
    if (st == NULL) {
        return NGX_ERROR;
    }

    st->then = done;

    return ngx_http_cms_store_finish(r, st, NGX_HTTP_CMS_STORE_REMOVE,
                                     ngx_http_cms_store_gone);
}


/* a refusal's or a removal's file gone (or left behind, logged): the
   refusal answered, or the removal's caller goes on */
static ngx_int_t
ngx_http_cms_store_gone(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    void *data)
{
    ngx_http_cms_store_t *st = data;

    if (st->status != NGX_HTTP_CMS_STORE_OK) {
        (void) ngx_http_cms_store_failed(r, st);
    }

    return st->then ? st->then(r, ctx, st) : st->rc;
}


ngx_int_t
ngx_http_cms_store_finish(ngx_http_request_t *r, ngx_http_cms_store_t *st,
    ngx_uint_t op, ngx_http_cms_thread_done_pt done)
{
    ngx_http_cms_main_conf_t  *mcf;

    st->op = op;
    st->status = NGX_HTTP_CMS_STORE_OK;
    st->what = NULL;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    if (mcf->s3 != NULL && op != NGX_HTTP_CMS_STORE_DISCARD) {
        /* the bucket: the staged file sent (then removed), or the object
           deleted */
        st->done = done;

        return ngx_http_cms_s3_send(r, &st->key,
                                    op == NGX_HTTP_CMS_STORE_COMMIT
                                    ? st->tmp : NULL,
                                    st->size,
                                    op == NGX_HTTP_CMS_STORE_COMMIT
                                    ? st->sha256 : NULL,
                                    ngx_http_cms_store_sent, st);
    }

    return ngx_http_cms_thread_run(r, ngx_http_cms_store_finish_work, st,
                                   done);
}


/* the bucket's answer to a commit or a removal */
static ngx_int_t
ngx_http_cms_store_sent(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    void *data, ngx_uint_t status)
{
    ngx_http_cms_store_t *st = data;

    if (status < 200 || status > 299) {
        st->status = NGX_HTTP_CMS_STORE_UNAVAILABLE;
        st->what = (st->op == NGX_HTTP_CMS_STORE_COMMIT)
                   ? "the bucket's PUT" : "the bucket's DELETE";
        st->err = 0;
    }

    if (st->op == NGX_HTTP_CMS_STORE_REMOVE) {
        return st->done(r, ctx, st);
    }

    /* the staged file goes either way; a failed PUT stays the outcome */
    st->op = NGX_HTTP_CMS_STORE_DISCARD;

    if (ngx_http_cms_thread_run(r, ngx_http_cms_store_unstage, st,
                                ngx_http_cms_store_unstaged)
        != NGX_DONE)
    {
        return NGX_ERROR;
    }

    return NGX_DONE;
}


/* in a pool thread: the staged file removed, the outcome kept */
static void
ngx_http_cms_store_unstage(void *data)
{
    ngx_http_cms_store_t *st = data;

    ngx_uint_t   status;
    const char  *what;

    status = st->status;
    what = st->what;
    st->status = NGX_HTTP_CMS_STORE_OK;

    ngx_http_cms_store_finish_work(st);

    /* logged back on the event loop (a pool thread logs nothing) */
    st->left = (st->status != NGX_HTTP_CMS_STORE_OK);
    st->left_what = st->what;

    st->status = status;
    st->what = what;
}


static ngx_int_t
ngx_http_cms_store_unstaged(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    void *data)
{
    ngx_http_cms_store_t *st = data;

    if (st->left) {
        ngx_log_error(NGX_LOG_ALERT, r->connection->log, st->err,
                      "cms: removing the staged \"%s\": %s failed",
                      st->tmp, st->left_what);
    }

    return st->done(r, ctx, st);
}


/* in a pool thread: the temporary file into place or away, or the object
   away, in the key's folder opened beneath the root; a rename or removal
   made lasting by the folder's fsync */
/* long: the three operations, each with its failure */
static void
ngx_http_cms_store_finish_work(void *data)
{
    ngx_http_cms_store_t *st = data;

    int    dir;
    char  *tmp, *name;

    tmp = strrchr((char *) st->tmp, '/') + 1;
    name = strrchr((char *) st->path, '/') + 1;

    dir = ngx_http_cms_store_folder(st, 0);

    if (dir == -1) {
        if (st->op == NGX_HTTP_CMS_STORE_REMOVE && st->err == ENOENT) {
            /* no folder: no object */
            st->status = NGX_HTTP_CMS_STORE_OK;
        }

        return;
    }

    switch (st->op) {

    case NGX_HTTP_CMS_STORE_COMMIT:
        if (renameat(dir, tmp, dir, name) == -1) {
            ngx_http_cms_store_fail(st, "renameat()");
            goto done;
        }

        st->written = 0;
        break;

    case NGX_HTTP_CMS_STORE_DISCARD:
        if (unlinkat(dir, tmp, 0) == -1 && errno != ENOENT) {
            ngx_http_cms_store_fail(st, "unlinkat()");
            goto done;
        }

        st->written = 0;
        goto done;

    default: /* NGX_HTTP_CMS_STORE_REMOVE */
        if (cms_filekey_upload((char *) st->key.data, st->key.len)) {
            /* an upload goes with its image variants */
            if (ngx_http_cms_image_forget(dir, name) == -1) {
                ngx_http_cms_store_fail(st, "removing an upload");
                goto done;
            }

        } else if (unlinkat(dir, name, 0) == -1) {
            if (errno != ENOENT) {
                ngx_http_cms_store_fail(st, "unlinkat()");
            }

            goto done;
        }

        break;
    }

    if (fsync(dir) == -1) {
        ngx_http_cms_store_fail(st, "fsync() of the folder");
    }

done:

    ngx_http_cms_store_close(dir);
}


ngx_int_t
ngx_http_cms_store_failed(ngx_http_request_t *r, ngx_http_cms_store_t *st)
{
    if (st->status == NGX_HTTP_CMS_STORE_UNAVAILABLE) {
        /* the bucket said why (logged with its answer): 503 */
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: storing \"%V\": %s failed", &st->key, st->what);
        return NGX_HTTP_SERVICE_UNAVAILABLE;
    }

    ngx_log_error(NGX_LOG_CRIT, r->connection->log, st->err,
                  "cms: storing \"%V\": %s failed", &st->key,
                  st->what ? st->what : "a step");

    return NGX_ERROR;
}


static void
ngx_http_cms_store_fail(ngx_http_cms_store_t *st, const char *what)
{
    st->status = NGX_HTTP_CMS_STORE_FAILED;
    st->err = errno;
    st->what = what;
}


/* a temporary file no step committed or discarded (a client gone) */
static void
ngx_http_cms_store_cleanup(void *data)
{
    ngx_http_cms_store_t *st = data;

    if (!st->written) {
        return;
    }

    st->op = NGX_HTTP_CMS_STORE_DISCARD;
    st->status = NGX_HTTP_CMS_STORE_OK;

    ngx_http_cms_store_finish_work(st);

    if (st->status != NGX_HTTP_CMS_STORE_OK) {
        ngx_log_error(NGX_LOG_ALERT, st->log, st->err,
                      "cms: removing \"%s\": %s failed", st->tmp, st->what);
    }
}
