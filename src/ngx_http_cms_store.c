
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
#include "cms_mime.h"


#define NGX_HTTP_CMS_STORE_BUF  65536


static void ngx_http_cms_store_write_work(void *data);
static int ngx_http_cms_store_fill(ngx_http_cms_store_t *st, int fd,
    void *hash);
static int ngx_http_cms_store_put(ngx_http_cms_store_t *st, int fd,
    void *hash, u_char *p, size_t n);
static void ngx_http_cms_store_sniff(ngx_http_cms_store_t *st, u_char *p,
    size_t n);
static int ngx_http_cms_store_mkdirs(ngx_http_cms_store_t *st);
static int ngx_http_cms_store_sync_dir(u_char *path);
static ngx_int_t ngx_http_cms_store_gone(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, void *data);
static void ngx_http_cms_store_finish_work(void *data);
static void ngx_http_cms_store_fail(ngx_http_cms_store_t *st,
    const char *what);
static void ngx_http_cms_store_cleanup(void *data);


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

    st->fd = NGX_INVALID_FILE;
    st->log = r->connection->log;
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
static void
ngx_http_cms_store_write_work(void *data)
{
    ngx_http_cms_store_t *st = data;

    int    fd;
    void  *hash;

    if (ngx_http_cms_store_mkdirs(st) != 0) {
        return;
    }

    fd = open((char *) st->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
              0644);

    if (fd == -1) {
        ngx_http_cms_store_fail(st, "open()");
        return;
    }

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


/* the folders of the key below the root, 0755; 0 or -1 */
static int
ngx_http_cms_store_mkdirs(ngx_http_cms_store_t *st)
{
    u_char  *p, *start;

    start = st->path + ngx_strlen(st->path) - st->key.len;

    for (p = start; *p; p++) {
        if (*p != '/') {
            continue;
        }

        *p = '\0';

        if (mkdir((char *) st->path, 0755) == -1 && errno != EEXIST) {
            *p = '/';
            ngx_http_cms_store_fail(st, "mkdir()");
            return -1;
        }

        *p = '/';
    }

    return 0;
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
    st->op = op;
    st->status = NGX_HTTP_CMS_STORE_OK;
    st->what = NULL;

    return ngx_http_cms_thread_run(r, ngx_http_cms_store_finish_work, st,
                                   done);
}


/* in a pool thread: the temporary file into place or away, or the object
   away; a rename or removal made lasting by the folder's fsync */
static void
ngx_http_cms_store_finish_work(void *data)
{
    ngx_http_cms_store_t *st = data;

    switch (st->op) {

    case NGX_HTTP_CMS_STORE_COMMIT:
        if (rename((char *) st->tmp, (char *) st->path) == -1) {
            ngx_http_cms_store_fail(st, "rename()");
            return;
        }

        st->written = 0;
        break;

    case NGX_HTTP_CMS_STORE_DISCARD:
        if (unlink((char *) st->tmp) == -1 && errno != ENOENT) {
            ngx_http_cms_store_fail(st, "unlink()");
            return;
        }

        st->written = 0;
        return;

    default: /* NGX_HTTP_CMS_STORE_REMOVE */
        if (unlink((char *) st->path) == -1) {
            if (errno != ENOENT) {
                ngx_http_cms_store_fail(st, "unlink()");
            }

            return;
        }

        break;
    }

    if (ngx_http_cms_store_sync_dir(st->path) != 0) {
        ngx_http_cms_store_fail(st, "fsync() of the folder");
    }
}


/* the folder holding "path" fsynced, so a rename or unlink lasts */
static int
ngx_http_cms_store_sync_dir(u_char *path)
{
    int      fd, rc;
    u_char  *slash;

    slash = (u_char *) strrchr((char *) path, '/');

    *slash = '\0';
    fd = open((char *) path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    *slash = '/';

    if (fd == -1) {
        return -1;
    }

    rc = fsync(fd);

    (void) close(fd);

    return rc;
}


ngx_int_t
ngx_http_cms_store_failed(ngx_http_request_t *r, ngx_http_cms_store_t *st)
{
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

    if (st->written && unlink((char *) st->tmp) == -1 && errno != ENOENT) {
        ngx_log_error(NGX_LOG_ALERT, st->log, ngx_errno,
                      "cms: unlink(\"%s\") failed", st->tmp);
    }
}
