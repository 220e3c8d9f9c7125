
/*
 * Orphans: objects no row names (sql/0036_object_removals.sql), found by
 * worker 0 every cms_storage_reconcile.  The bucket is listed (pages of
 * 1,000 keys over HTTP/1.0, so that a listing ends with its connection and
 * is never chunked) or the folder walked (pages of 1,000, in the thread
 * pool); the keys the module makes (cms_filekey_ours()) whose object is
 * older than cms_upload_ttl plus an hour go to cms_object_orphans(),
 * which queues those no row names for the sweeper
 * (ngx_http_cms_store_sweep.c), due now.  Another kind of key under the
 * storage root is never touched.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <dirent.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_client.h"
#include "ngx_http_cms_jobs.h"
#include "ngx_http_cms_pg.h"
#include "ngx_http_cms_s3_int.h"
#include "ngx_http_cms_store.h"
#include "ngx_http_cms_store_sweep.h"
#include "cms_filekey.h"


#define NGX_HTTP_CMS_SWEEP_PAGE     1000        /* keys a listing page */
#define NGX_HTTP_CMS_SWEEP_LISTING  (1024 * 1024)  /* a page's XML */
#define NGX_HTTP_CMS_SWEEP_TOKEN    1024        /* a continuation token */
#define NGX_HTTP_CMS_SWEEP_DEPTH    3           /* "users/<id>/<name>" */


/* an orphans pass: its pages, one at a time */
typedef struct {
    ngx_pool_t                 *pool;
    ngx_http_cms_main_conf_t   *mcf;
    time_t                      cutoff;      /* objects older: looked at */
    ngx_str_t                   keys;        /* a page's, a text[] */
    ngx_uint_t                  nkeys;
    ngx_uint_t                  more;        /* another page follows */
    ngx_uint_t                  failed;
    ngx_uint_t                  queued;      /* orphans, the whole pass */

    /* the bucket's listing */
    ngx_http_cms_client_t      *cl;          /* in flight */
    u_char                     *token;       /* the next page's */
    size_t                      token_len;

    /* the folder's walk, a level per open folder */
    ngx_int_t                   root;
    DIR                        *dirs[NGX_HTTP_CMS_SWEEP_DEPTH];
    size_t                      ends[NGX_HTTP_CMS_SWEEP_DEPTH];
    ngx_uint_t                  depth;
    u_char                      path[CMS_FILEKEY_MAX + 2];
    int                         err;
} ngx_http_cms_sweep_pass_t;


static void ngx_http_cms_sweep_reconcile(ngx_event_t *ev);
static void ngx_http_cms_sweep_turn(void *data, PGresult *res);
static void ngx_http_cms_sweep_begin(ngx_http_cms_main_conf_t *mcf);
static ngx_int_t ngx_http_cms_sweep_page(ngx_http_cms_sweep_pass_t *ps);
static ngx_int_t ngx_http_cms_sweep_list(ngx_http_cms_sweep_pass_t *ps);
static void ngx_http_cms_sweep_listed(ngx_http_cms_client_t *cl);
static void ngx_http_cms_sweep_listing(ngx_http_cms_sweep_pass_t *ps,
    ngx_str_t *xml);
static void ngx_http_cms_sweep_walk(void *data, ngx_log_t *log);
static void ngx_http_cms_sweep_walked(ngx_event_t *ev);
static void ngx_http_cms_sweep_paged(ngx_http_cms_sweep_pass_t *ps);
static void ngx_http_cms_sweep_queued(void *data, PGresult *res);
static void ngx_http_cms_sweep_passed(ngx_http_cms_sweep_pass_t *ps);
static ngx_uint_t ngx_http_cms_sweep_add(ngx_http_cms_sweep_pass_t *ps,
    u_char *key, size_t len, time_t mtime);


static ngx_http_cms_pg_stmt_t  ngx_http_cms_sweep_orphans_sql =
    ngx_http_cms_pg_stmt("SELECT cms_object_orphans($1::text[])", 1);

static ngx_str_t  ngx_http_cms_sweep_get = ngx_string("GET");
static ngx_str_t  ngx_http_cms_sweep_empty = ngx_string("");

static ngx_event_t                 ngx_http_cms_sweep_pass_ev;

/* whether this host lists the bucket this interval; $2 the interval (s) */
static ngx_http_cms_pg_stmt_t  ngx_http_cms_sweep_turn_sql =
    ngx_http_cms_pg_stmt(
        "SELECT cms_job_turn($1, make_interval(secs => $2::float8))", 2);

static ngx_http_cms_sweep_pass_t  *ngx_http_cms_sweep_pass;


void
ngx_http_cms_store_orphans_init_process(ngx_cycle_t *cycle,
    ngx_http_cms_main_conf_t *mcf)
{
    if (mcf->reconcile == 0) {
        return;
    }

    ngx_http_cms_sweep_pass_ev.handler = ngx_http_cms_sweep_reconcile;
    ngx_http_cms_sweep_pass_ev.data = mcf;
    ngx_http_cms_sweep_pass_ev.log = cycle->log;
    ngx_http_cms_sweep_pass_ev.cancelable = 1;

    /* the first pass soon after a start, then every interval */
    ngx_add_timer(&ngx_http_cms_sweep_pass_ev,
                  ngx_min(mcf->reconcile, 60000));
}


/*
 * A bucket is shared by every host: one of them lists it each interval
 * (cms_job_turn(), sql/0039_fleet_jobs.sql).  A folder is one host's.
 */
static void
ngx_http_cms_sweep_reconcile(ngx_event_t *ev)
{
    ngx_http_cms_main_conf_t *mcf = ev->data;

    u_char     every[NGX_INT_T_LEN];
    ngx_str_t  args[2];

    if (ngx_http_cms_quitting()) {
        return;                 /* nothing new: ngx_http_cms_jobs_arm() */
    }

    if (mcf->s3 == NULL) {
        ngx_http_cms_sweep_begin(mcf);
        return;
    }

    ngx_str_set(&args[0], "orphans");
    args[1].data = every;
    args[1].len = ngx_sprintf(every, "%M", mcf->reconcile / 1000) - every;

    if (ngx_http_cms_pg_job(&ngx_http_cms_sweep_turn_sql, args, 2,
                            ngx_http_cms_sweep_turn, mcf)
        != NGX_OK)
    {
        ngx_http_cms_jobs_next(ev, mcf->reconcile);
    }
}


static void
ngx_http_cms_sweep_turn(void *data, PGresult *res)
{
    ngx_http_cms_main_conf_t *mcf = data;

    if (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK
        && PQntuples(res) == 1 && PQgetvalue(res, 0, 0)[0] == 't')
    {
        ngx_http_cms_sweep_begin(mcf);
        return;
    }

    /* another host's turn, or no answer: the next interval */
    ngx_http_cms_jobs_next(&ngx_http_cms_sweep_pass_ev, mcf->reconcile);
}


/* long: the pass's memory, the folder's descriptor, then the first page */
static void
ngx_http_cms_sweep_begin(ngx_http_cms_main_conf_t *mcf)
{
    ngx_event_t                *ev;
    ngx_pool_t                 *pool;
    ngx_http_cms_sweep_pass_t  *ps;

    ev = &ngx_http_cms_sweep_pass_ev;

    pool = ngx_create_pool(4096, ngx_cycle->log);
    if (pool == NULL) {
        ngx_http_cms_jobs_next(ev, mcf->reconcile);
        return;
    }

    ps = ngx_pcalloc(pool, sizeof(ngx_http_cms_sweep_pass_t));
    if (ps == NULL) {
        ngx_destroy_pool(pool);
        ngx_http_cms_jobs_next(ev, mcf->reconcile);
        return;
    }

    ps->pool = pool;
    ps->mcf = mcf;
    ps->cutoff = ngx_time() - mcf->upload_ttl - 3600;
    ps->more = 1;
    ps->keys.data = ngx_pnalloc(pool, NGX_HTTP_CMS_SWEEP_PAGE
                                      * (CMS_FILEKEY_MAX + 3) + 2);
    ps->token = ngx_pnalloc(pool, NGX_HTTP_CMS_SWEEP_TOKEN);

    if (ps->keys.data == NULL || ps->token == NULL) {
        ngx_destroy_pool(pool);
        ngx_http_cms_jobs_next(ev, mcf->reconcile);
        return;
    }

    if (mcf->s3 == NULL) {
        ps->root = ngx_http_cms_store_root(&mcf->storage);

        if (ps->root == NGX_INVALID_FILE) {
            ngx_log_error(NGX_LOG_ERR, ngx_cycle->log, ngx_errno,
                          "cms: looking for orphans in \"%V\" failed",
                          &mcf->storage);
            ngx_destroy_pool(pool);
            ngx_http_cms_jobs_next(ev, mcf->reconcile);
            return;
        }
    }

    ngx_http_cms_sweep_pass = ps;

    if (ngx_http_cms_sweep_page(ps) != NGX_OK) {
        ps->failed = 1;
        ngx_http_cms_sweep_passed(ps);
    }
}


/* the next page: the bucket's listing or the folder's walk */
static ngx_int_t
ngx_http_cms_sweep_page(ngx_http_cms_sweep_pass_t *ps)
{
    ps->keys.len = 0;
    ps->nkeys = 0;

    if (ps->mcf->s3 != NULL) {
        return ngx_http_cms_sweep_list(ps);
    }

    return ngx_http_cms_sweep_post(ps->mcf, ps->pool,
                                   ngx_http_cms_sweep_walk,
                                   ngx_http_cms_sweep_walked, ps);
}


/* long: the query (prefix, page size, token), signed, then sent */
static ngx_int_t
ngx_http_cms_sweep_list(ngx_http_cms_sweep_pass_t *ps)
{
    u_char                  *p;
    ngx_str_t                query;
    ngx_pool_t              *pool;
    ngx_http_cms_s3_conf_t  *scf;
    ngx_http_cms_client_t   *cl;

    scf = ps->mcf->s3;

    pool = ngx_create_pool(4096, ngx_cycle->log);
    if (pool == NULL) {
        return NGX_ERROR;
    }

    cl = ngx_pcalloc(pool, sizeof(ngx_http_cms_client_t));
    query.data = ngx_pnalloc(pool, sizeof("list-type=2&max-keys=1000"
                                          "&prefix=&continuation-token=")
                                   + 3 * (scf->prefix.len + ps->token_len));
    if (cl == NULL || query.data == NULL) {
        ngx_destroy_pool(pool);
        return NGX_ERROR;
    }

    p = ngx_sprintf(query.data, "list-type=2&max-keys=%d",
                    NGX_HTTP_CMS_SWEEP_PAGE);
    p = ngx_http_cms_s3_param(p, "&prefix=", scf->prefix.data,
                              scf->prefix.len);

    if (ps->token_len) {
        p = ngx_http_cms_s3_param(p, "&continuation-token=", ps->token,
                                  ps->token_len);
    }

    query.len = p - query.data;

    cl->pool = pool;
    cl->done = ngx_http_cms_sweep_listed;
    cl->data = ps;
    cl->action = "listing the bucket";
    cl->keep_body = NGX_HTTP_CMS_SWEEP_LISTING;

    if (ngx_http_cms_sweep_start(cl, scf, &ngx_http_cms_sweep_get,
                                 &scf->bucket_root, &ngx_http_cms_sweep_empty,
                                 &query, "1.0")
        != NGX_OK)
    {
        ngx_destroy_pool(pool);
        return NGX_ERROR;
    }

    ps->cl = cl;

    return NGX_OK;
}


static void
ngx_http_cms_sweep_listed(ngx_http_cms_client_t *cl)
{
    ngx_http_cms_sweep_pass_t *ps = cl->data;

    ps->cl = NULL;
    ps->more = 0;

    if (cl->error != NULL || cl->status != 200
        || cl->answer.len == NGX_HTTP_CMS_SWEEP_LISTING)
    {
        ngx_log_error(NGX_LOG_ERR, ngx_cycle->log, 0,
                      "cms: listing the bucket failed: %ui %s",
                      cl->status, cl->error ? cl->error
                      : (cl->status == 200 ? "the listing is over 1 MiB"
                                           : ""));
        ps->failed = 1;

    } else {
        ngx_http_cms_sweep_listing(ps, &cl->answer);
    }

    ngx_destroy_pool(cl->pool);

    ngx_http_cms_sweep_paged(ps);
}


/*
 * A ListObjectsV2 answer: each <Contents>' <Key> and <LastModified>
 * (ISO 8601, UTC), <IsTruncated> and <NextContinuationToken>.  A key with
 * an entity is not one of ours (ours are plain ASCII), nor one outside
 * the prefix.
 */
/* long: the elements found one after the other */
static void
ngx_http_cms_sweep_listing(ngx_http_cms_sweep_pass_t *ps, ngx_str_t *xml)
{
    u_char                  *p, *last, *end, *k, *ke, *t, *te;
    struct tm                tm;
    ngx_http_cms_s3_conf_t  *scf;

#define ngx_http_cms_sweep_element(from, to, name, s, e)                      \
    ((s = ngx_strlcasestrn(from, to, (u_char *) "<" name ">",                 \
                           sizeof("<" name ">") - 2)) != NULL                 \
     && (s += sizeof("<" name ">") - 1,                                       \
         e = ngx_strlcasestrn(s, to, (u_char *) "</" name ">",                \
                              sizeof("</" name ">") - 2)) != NULL)

    scf = ps->mcf->s3;
    p = xml->data;
    last = xml->data + xml->len;

    while (ngx_http_cms_sweep_element(p, last, "Contents", p, end)) {
        if (ngx_http_cms_sweep_element(p, end, "Key", k, ke)
            && ngx_http_cms_sweep_element(p, end, "LastModified", t, te)
            && (size_t) (ke - k) > scf->prefix.len
            && (scf->prefix.len == 0
                || ngx_strncmp(k, scf->prefix.data, scf->prefix.len) == 0)
            && te - t >= 19)
        {
            ngx_memzero(&tm, sizeof(struct tm));
            tm.tm_year = ngx_atoi(t, 4) - 1900;
            tm.tm_mon = ngx_atoi(t + 5, 2) - 1;
            tm.tm_mday = ngx_atoi(t + 8, 2);
            tm.tm_hour = ngx_atoi(t + 11, 2);
            tm.tm_min = ngx_atoi(t + 14, 2);
            tm.tm_sec = ngx_atoi(t + 17, 2);

            (void) ngx_http_cms_sweep_add(ps, k + scf->prefix.len,
                                          ke - k - scf->prefix.len,
                                          timegm(&tm));
        }

        p = end;
    }

    p = xml->data;

    if (ngx_http_cms_sweep_element(p, last, "IsTruncated", t, te)
        && te - t == 4 && ngx_strncasecmp(t, (u_char *) "true", 4) == 0
        && ngx_http_cms_sweep_element(p, last, "NextContinuationToken",
                                      k, ke)
        && ke > k && (size_t) (ke - k) <= NGX_HTTP_CMS_SWEEP_TOKEN
        && ngx_strlchr(k, ke, '&') == NULL)
    {
        ngx_memcpy(ps->token, k, ke - k);
        ps->token_len = ke - k;
        ps->more = 1;
    }

#undef ngx_http_cms_sweep_element
}


/*
 * In a pool thread: the folder walked on from where the last page
 * stopped, depth first, at most three levels, until a page is full or
 * the walk ends; every regular file's key tried by _add().
 */
/* long: a folder opened, read, or closed at each turn */
static void
ngx_http_cms_sweep_walk(void *data, ngx_log_t *log)
{
    ngx_http_cms_sweep_pass_t *ps = data;

    int             fd;
    DIR            *dir;
    size_t          n, at;
    struct stat     sb;
    struct dirent  *de;

    if (ps->depth == 0 && ps->dirs[0] == NULL) {
        fd = openat(ps->root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd == -1 || (ps->dirs[0] = fdopendir(fd)) == NULL) {
            ps->err = errno;
            ps->more = 0;
            return;
        }

        ps->depth = 1;
        ps->ends[0] = 0;
    }

    while (ps->depth > 0 && ps->nkeys < NGX_HTTP_CMS_SWEEP_PAGE) {
        dir = ps->dirs[ps->depth - 1];
        at = ps->ends[ps->depth - 1];

        errno = 0;
        de = readdir(dir);

        if (de == NULL) {
            (void) closedir(dir);
            ps->dirs[--ps->depth] = NULL;
            continue;
        }

        n = ngx_strlen(de->d_name);

        if (de->d_name[0] == '.' || at + n + 1 > CMS_FILEKEY_MAX
            || fstatat(dirfd(dir), de->d_name, &sb, AT_SYMLINK_NOFOLLOW)
               == -1)
        {
            continue;
        }

        ngx_memcpy(ps->path + at, de->d_name, n);

        if (S_ISREG(sb.st_mode)) {
            (void) ngx_http_cms_sweep_add(ps, ps->path, at + n, sb.st_mtime);
            continue;
        }

        if (!S_ISDIR(sb.st_mode) || ps->depth == NGX_HTTP_CMS_SWEEP_DEPTH) {
            continue;
        }

        fd = openat(dirfd(dir), de->d_name,
                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd == -1) {
            continue;
        }

        ps->dirs[ps->depth] = fdopendir(fd);
        if (ps->dirs[ps->depth] == NULL) {
            (void) close(fd);
            continue;
        }

        ps->path[at + n] = '/';
        ps->ends[ps->depth++] = at + n + 1;
    }

    ps->more = (ps->depth > 0);
}


static void
ngx_http_cms_sweep_walked(ngx_event_t *ev)
{
    ngx_http_cms_sweep_pass_t *ps = ev->data;

    if (ps->err) {
        ngx_log_error(NGX_LOG_ERR, ngx_cycle->log, ps->err,
                      "cms: looking for orphans in \"%V\" failed",
                      &ps->mcf->storage);
        ps->failed = 1;
    }

    ngx_http_cms_sweep_paged(ps);
}


/* a page's candidates to the database, or the next page, or the end */
static void
ngx_http_cms_sweep_paged(ngx_http_cms_sweep_pass_t *ps)
{
    if (ngx_http_cms_quitting()) {
        ngx_http_cms_sweep_passed(ps);
        return;
    }

    if (ps->nkeys == 0) {
        if (!ps->more || ps->failed
            || ngx_http_cms_sweep_page(ps) != NGX_OK)
        {
            ngx_http_cms_sweep_passed(ps);
        }

        return;
    }

    ps->keys.data[ps->keys.len++] = '}';

    if (ngx_http_cms_pg_job(&ngx_http_cms_sweep_orphans_sql, &ps->keys, 1,
                            ngx_http_cms_sweep_queued, ps)
        != NGX_OK)
    {
        ps->failed = 1;
        ngx_http_cms_sweep_passed(ps);
    }
}


static void
ngx_http_cms_sweep_queued(void *data, PGresult *res)
{
    ngx_http_cms_sweep_pass_t *ps = data;

    if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK
        || PQntuples(res) != 1)
    {
        ngx_log_error(NGX_LOG_ERR, ngx_cycle->log, 0,
                      "cms: queueing orphan objects failed%s%s",
                      res ? ": " : "",
                      ngx_http_cms_pg_oneline(PQresultErrorMessage(res)));
        ps->failed = 1;
        ngx_http_cms_sweep_passed(ps);
        return;
    }

    ps->queued += ngx_atoi((u_char *) PQgetvalue(res, 0, 0),
                           PQgetlength(res, 0, 0));
    ps->nkeys = 0;

    ngx_http_cms_sweep_paged(ps);
}


static void
ngx_http_cms_sweep_passed(ngx_http_cms_sweep_pass_t *ps)
{
    ngx_uint_t                 i;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ps->mcf;

    if (ps->queued) {
        ngx_log_error(NGX_LOG_NOTICE, ngx_cycle->log, 0,
                      "cms: %ui orphan objects queued for removal",
                      ps->queued);
    }

    for (i = 0; i < NGX_HTTP_CMS_SWEEP_DEPTH; i++) {
        if (ps->dirs[i] != NULL) {
            (void) closedir(ps->dirs[i]);
        }
    }

    ngx_http_cms_sweep_pass = NULL;
    ngx_destroy_pool(ps->pool);

    ngx_http_cms_jobs_next(&ngx_http_cms_sweep_pass_ev, mcf->reconcile);
}


/* a key the module makes, older than the cutoff: into the page's array;
   1 when taken */
static ngx_uint_t
ngx_http_cms_sweep_add(ngx_http_cms_sweep_pass_t *ps, u_char *key,
    size_t len, time_t mtime)
{
    u_char  *p;

    if (mtime >= ps->cutoff || !cms_filekey_ours((char *) key, len)) {
        return 0;
    }

    p = ps->keys.data + ps->keys.len;
    *p++ = ps->nkeys ? ',' : '{';
    *p++ = '"';
    p = ngx_cpymem(p, key, len);
    *p++ = '"';

    ps->keys.len = p - ps->keys.data;
    ps->nkeys++;

    return 1;
}


void
ngx_http_cms_store_orphans_exit_process(void)
{
    ngx_http_cms_sweep_pass_t  *ps;

    ps = ngx_http_cms_sweep_pass;

    /* a listing in flight is abandoned; a query or a walk owns the pass */
    if (ps != NULL && ps->cl != NULL) {
        ngx_destroy_pool(ps->cl->pool);
        ngx_http_cms_sweep_passed(ps);
    }
}
