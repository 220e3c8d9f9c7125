
/*
 * The public surface's cache in shared memory (see
 * ngx_http_cms_public_cache.h): a red-black tree of entries ordered by a
 * CRC32 of their kind and key (then the key itself), and a queue from
 * the most to the least recently used, from whose end entries go when
 * the zone is full.  Every call holds the zone's mutex for a lookup or
 * an insert and copies what it returns, so an entry may go the moment
 * the call returns.
 *
 * The zone is new with every configuration (noreuse): a reload starts
 * with an empty cache, never with entries of an older layout.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_public_cache.h"


#define NGX_HTTP_CMS_PCACHE_SITE       'k'
#define NGX_HTTP_CMS_PCACHE_BODY       'b'
#define NGX_HTTP_CMS_PCACHE_BODY_MAX   (256 * 1024)
#define NGX_HTTP_CMS_PCACHE_EVICT      16


typedef struct {
    ngx_rbtree_node_t           node;       /* key: CRC32 of kind + key */
    ngx_queue_t                 queue;
    ngx_msec_t                  stored;
    ngx_atomic_uint_t           gen;        /* the zone's, when stored */
    uint64_t                    version;
    u_char                      kind;
    u_short                     key_len;
    /* a site's three strings; a body's surrogate keys in len[0] */
    u_short                     len[3];
    uint32_t                    body_len;
    u_char                      data[1];    /* the key, then the values */
} ngx_http_cms_pcache_node_t;


typedef struct {
    ngx_rbtree_t                rbtree;
    ngx_rbtree_node_t           sentinel;
    ngx_queue_t                 queue;      /* most recently used first */
    ngx_atomic_t                gen;        /* raised by every write */
} ngx_http_cms_pcache_shm_t;


typedef struct {
    ngx_http_cms_pcache_shm_t  *sh;
    ngx_slab_pool_t            *shpool;
    ngx_msec_t                  valid;
} ngx_http_cms_pcache_t;


static ngx_int_t ngx_http_cms_pcache_zone_arg(ngx_conf_t *cf,
    ngx_str_t *arg, ngx_str_t *name, ssize_t *size);
static ngx_int_t ngx_http_cms_pcache_init_zone(ngx_shm_zone_t *zone,
    void *data);
static ngx_http_cms_pcache_t *ngx_http_cms_pcache(ngx_http_request_t *r);
static ngx_int_t ngx_http_cms_pcache_cmp(u_char kind, ngx_str_t *key,
    ngx_http_cms_pcache_node_t *n);
static void ngx_http_cms_pcache_insert_value(ngx_rbtree_node_t *temp,
    ngx_rbtree_node_t *node, ngx_rbtree_node_t *sentinel);
static ngx_http_cms_pcache_node_t *ngx_http_cms_pcache_find(
    ngx_http_cms_pcache_t *c, u_char kind, ngx_str_t *key);
static ngx_http_cms_pcache_node_t *ngx_http_cms_pcache_new(
    ngx_http_cms_pcache_t *c, u_char kind, ngx_str_t *key, size_t size);
static void ngx_http_cms_pcache_free(ngx_http_cms_pcache_t *c,
    ngx_http_cms_pcache_node_t *n);
static uint32_t ngx_http_cms_pcache_hash(u_char kind, ngx_str_t *key);


/* zone=NAME:SIZE: the name and a size of at least eight pages */
static ngx_int_t
ngx_http_cms_pcache_zone_arg(ngx_conf_t *cf, ngx_str_t *arg, ngx_str_t *name,
    ssize_t *size)
{
    u_char     *colon;
    ngx_str_t   s;

    name->data = arg->data + 5;
    colon = (u_char *) ngx_strlchr(name->data, arg->data + arg->len, ':');

    if (colon != NULL) {
        name->len = colon - name->data;
        s.data = colon + 1;
        s.len = arg->data + arg->len - s.data;
        *size = ngx_parse_size(&s);
    }

    if (colon == NULL || name->len == 0 || *size == NGX_ERROR
        || *size < (ssize_t) (8 * ngx_pagesize))
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_public_cache: bad \"%V\" (zone=NAME:SIZE,"
                           " at least %uz bytes)", arg, 8 * ngx_pagesize);
        return NGX_ERROR;
    }

    return NGX_OK;
}


/* cms_public_cache zone=NAME:SIZE [valid=TIME] */
/* long: a directive's arguments, each with its refusal */
char *
ngx_http_cms_public_cache_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_cms_main_conf_t  *mcf = conf;

    ssize_t                 size;
    ngx_str_t              *value, name, s;
    ngx_uint_t              i;
    ngx_msec_t              valid;
    ngx_shm_zone_t         *zone;
    ngx_http_cms_pcache_t  *c;

    if (mcf->public_zone != NULL) {
        return "is duplicate";
    }

    value = cf->args->elts;
    size = 0;
    valid = 500;
    ngx_str_null(&name);

    for (i = 1; i < cf->args->nelts; i++) {

        if (ngx_strncmp(value[i].data, "zone=", 5) == 0) {
            if (ngx_http_cms_pcache_zone_arg(cf, &value[i], &name, &size)
                != NGX_OK)
            {
                return NGX_CONF_ERROR;
            }

            continue;
        }

        if (ngx_strncmp(value[i].data, "valid=", 6) == 0) {
            s.data = value[i].data + 6;
            s.len = value[i].len - 6;
            valid = ngx_parse_time(&s, 0);

            if (valid == (ngx_msec_t) NGX_ERROR || valid == 0) {
                return "has a bad valid= time";
            }

            continue;
        }

        return "has an unknown parameter (zone=NAME:SIZE [valid=TIME])";
    }

    if (name.len == 0) {
        return "needs zone=NAME:SIZE";
    }

    c = ngx_pcalloc(cf->pool, sizeof(ngx_http_cms_pcache_t));
    zone = ngx_shared_memory_add(cf, &name, size, &ngx_http_cms_module);

    if (c == NULL || zone == NULL) {
        return NGX_CONF_ERROR;
    }

    if (zone->data != NULL) {
        return "names a zone already used";
    }

    c->valid = valid;

    zone->init = ngx_http_cms_pcache_init_zone;
    zone->data = c;
    zone->noreuse = 1;

    mcf->public_zone = zone;

    (void) cmd;

    return NGX_CONF_OK;
}


static ngx_int_t
ngx_http_cms_pcache_init_zone(ngx_shm_zone_t *zone, void *data)
{
    ngx_http_cms_pcache_t  *c = zone->data;

    (void) data;

    c->shpool = (ngx_slab_pool_t *) zone->shm.addr;

    c->sh = ngx_slab_calloc(c->shpool, sizeof(ngx_http_cms_pcache_shm_t));
    if (c->sh == NULL) {
        return NGX_ERROR;
    }

    ngx_rbtree_init(&c->sh->rbtree, &c->sh->sentinel,
                    ngx_http_cms_pcache_insert_value);
    ngx_queue_init(&c->sh->queue);

    c->shpool->log_nomem = 0;

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_public_cache_site(ngx_http_request_t *r, ngx_str_t *hash,
    ngx_http_cms_public_site_t *site)
{
    u_char                      *p;
    ngx_uint_t                   i, fresh;
    ngx_str_t                   *out[3];
    ngx_http_cms_pcache_t       *c;
    ngx_http_cms_pcache_node_t  *n;

    c = ngx_http_cms_pcache(r);
    if (c == NULL) {
        return NGX_DECLINED;
    }

    out[0] = &site->site_id;
    out[1] = &site->workspace_id;
    out[2] = &site->origin;

    ngx_shmtx_lock(&c->shpool->mutex);

    n = ngx_http_cms_pcache_find(c, NGX_HTTP_CMS_PCACHE_SITE, hash);

    fresh = n != NULL && n->gen == c->sh->gen
            && ngx_current_msec - n->stored < c->valid;

    if (!fresh) {
        ngx_shmtx_unlock(&c->shpool->mutex);
        return NGX_DECLINED;
    }

    p = ngx_pnalloc(r->pool, n->len[0] + n->len[1] + n->len[2] + 1);

    if (p != NULL) {
        site->version = n->version;
        ngx_memcpy(p, n->data + n->key_len,
                   n->len[0] + n->len[1] + n->len[2]);

        for (i = 0; i < 3; i++) {
            out[i]->data = p;
            out[i]->len = n->len[i];
            p += n->len[i];
        }
    }

    ngx_shmtx_unlock(&c->shpool->mutex);

    return p == NULL ? NGX_ERROR : NGX_OK;
}


ngx_atomic_uint_t
ngx_http_cms_public_cache_gen(ngx_http_request_t *r)
{
    ngx_http_cms_pcache_t  *c;

    c = ngx_http_cms_pcache(r);

    return c ? c->sh->gen : 0;
}


void
ngx_http_cms_public_cache_site_put(ngx_http_request_t *r, ngx_str_t *hash,
    ngx_http_cms_public_site_t *site, ngx_atomic_uint_t gen)
{
    u_char                      *p;
    size_t                       len;
    ngx_http_cms_pcache_t       *c;
    ngx_http_cms_pcache_node_t  *n;

    c = ngx_http_cms_pcache(r);
    if (c == NULL || site->site_id.len > 64 || site->workspace_id.len > 64
        || site->origin.len > 1024 || hash->len > 128)
    {
        return;
    }

    len = site->site_id.len + site->workspace_id.len + site->origin.len;

    ngx_shmtx_lock(&c->shpool->mutex);

    n = ngx_http_cms_pcache_find(c, NGX_HTTP_CMS_PCACHE_SITE, hash);

    if (n != NULL) {
        ngx_http_cms_pcache_free(c, n);
    }

    n = ngx_http_cms_pcache_new(c, NGX_HTTP_CMS_PCACHE_SITE, hash, len);

    if (n != NULL) {
        /* read before a write that came since: old at once */
        n->gen = gen;
        n->version = site->version;
        n->len[0] = (u_short) site->site_id.len;
        n->len[1] = (u_short) site->workspace_id.len;
        n->len[2] = (u_short) site->origin.len;

        p = n->data + n->key_len;
        p = ngx_cpymem(p, site->site_id.data, site->site_id.len);
        p = ngx_cpymem(p, site->workspace_id.data, site->workspace_id.len);
        ngx_memcpy(p, site->origin.data, site->origin.len);
    }

    ngx_shmtx_unlock(&c->shpool->mutex);
}


void
ngx_http_cms_public_cache_site_drop(ngx_http_request_t *r, ngx_str_t *hash)
{
    ngx_http_cms_pcache_t       *c;
    ngx_http_cms_pcache_node_t  *n;

    c = ngx_http_cms_pcache(r);
    if (c == NULL) {
        return;
    }

    ngx_shmtx_lock(&c->shpool->mutex);

    n = ngx_http_cms_pcache_find(c, NGX_HTTP_CMS_PCACHE_SITE, hash);

    if (n != NULL) {
        ngx_http_cms_pcache_free(c, n);
    }

    ngx_shmtx_unlock(&c->shpool->mutex);
}


/* a body entry: the key, its surrogate keys (len[0] bytes), the body */
ngx_int_t
ngx_http_cms_public_cache_body(ngx_http_request_t *r, ngx_str_t *key,
    ngx_str_t *surrogate, ngx_str_t *body)
{
    u_char                      *p;
    ngx_http_cms_pcache_t       *c;
    ngx_http_cms_pcache_node_t  *n;

    c = ngx_http_cms_pcache(r);
    if (c == NULL) {
        return NGX_DECLINED;
    }

    ngx_shmtx_lock(&c->shpool->mutex);

    n = ngx_http_cms_pcache_find(c, NGX_HTTP_CMS_PCACHE_BODY, key);

    if (n == NULL) {
        ngx_shmtx_unlock(&c->shpool->mutex);
        return NGX_DECLINED;
    }

    surrogate->len = n->len[0];
    body->len = n->body_len;
    p = ngx_pnalloc(r->pool, surrogate->len + body->len + 1);

    if (p != NULL) {
        ngx_memcpy(p, n->data + n->key_len, surrogate->len + body->len);
        surrogate->data = p;
        body->data = p + surrogate->len;
    }

    ngx_shmtx_unlock(&c->shpool->mutex);

    return p == NULL ? NGX_ERROR : NGX_OK;
}


void
ngx_http_cms_public_cache_body_put(ngx_http_request_t *r, ngx_str_t *key,
    ngx_str_t *surrogate, ngx_str_t *body)
{
    u_char                      *p;
    ngx_http_cms_pcache_t       *c;
    ngx_http_cms_pcache_node_t  *n;

    c = ngx_http_cms_pcache(r);
    if (c == NULL || body->len > NGX_HTTP_CMS_PCACHE_BODY_MAX
        || key->len > 4096 || surrogate->len > 1024)
    {
        return;
    }

    ngx_shmtx_lock(&c->shpool->mutex);

    /* the key names the version: an entry there has these bytes */
    n = ngx_http_cms_pcache_find(c, NGX_HTTP_CMS_PCACHE_BODY, key);

    if (n == NULL) {
        n = ngx_http_cms_pcache_new(c, NGX_HTTP_CMS_PCACHE_BODY, key,
                                    surrogate->len + body->len);
        if (n != NULL) {
            n->len[0] = (u_short) surrogate->len;
            n->body_len = (uint32_t) body->len;
            p = ngx_cpymem(n->data + n->key_len, surrogate->data,
                           surrogate->len);
            ngx_memcpy(p, body->data, body->len);
        }
    }

    ngx_shmtx_unlock(&c->shpool->mutex);
}


void
ngx_http_cms_public_cache_touch(ngx_http_request_t *r)
{
    ngx_http_cms_pcache_t  *c;

    c = ngx_http_cms_pcache(r);

    if (c != NULL) {
        (void) ngx_atomic_fetch_add(&c->sh->gen, 1);
    }
}


static ngx_http_cms_pcache_t *
ngx_http_cms_pcache(ngx_http_request_t *r)
{
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    if (mcf->public_zone == NULL) {
        return NULL;
    }

    return mcf->public_zone->data;
}


/* the order of the tree among entries of one CRC32: kind, length, bytes */
static ngx_int_t
ngx_http_cms_pcache_cmp(u_char kind, ngx_str_t *key,
    ngx_http_cms_pcache_node_t *n)
{
    if (kind != n->kind) {
        return kind < n->kind ? -1 : 1;
    }

    if (key->len != n->key_len) {
        return key->len < n->key_len ? -1 : 1;
    }

    return ngx_memcmp(key->data, n->data, key->len);
}


static void
ngx_http_cms_pcache_insert_value(ngx_rbtree_node_t *temp,
    ngx_rbtree_node_t *node, ngx_rbtree_node_t *sentinel)
{
    ngx_str_t                    key;
    ngx_rbtree_node_t          **p;
    ngx_http_cms_pcache_node_t  *n;

    n = (ngx_http_cms_pcache_node_t *) node;
    key.data = n->data;
    key.len = n->key_len;

    for ( ;; ) {

        if (node->key != temp->key) {
            p = (node->key < temp->key) ? &temp->left : &temp->right;

        } else {
            p = (ngx_http_cms_pcache_cmp(n->kind, &key,
                     (ngx_http_cms_pcache_node_t *) temp) < 0)
                ? &temp->left : &temp->right;
        }

        if (*p == sentinel) {
            break;
        }

        temp = *p;
    }

    *p = node;
    node->parent = temp;
    node->left = sentinel;
    node->right = sentinel;
    ngx_rbt_red(node);
}


/* the entry of kind and key, moved to the front of the queue; locked */
static ngx_http_cms_pcache_node_t *
ngx_http_cms_pcache_find(ngx_http_cms_pcache_t *c, u_char kind,
    ngx_str_t *key)
{
    uint32_t                     hash;
    ngx_int_t                    rc;
    ngx_rbtree_node_t           *node, *sentinel;
    ngx_http_cms_pcache_node_t  *n;

    hash = ngx_http_cms_pcache_hash(kind, key);

    node = c->sh->rbtree.root;
    sentinel = c->sh->rbtree.sentinel;

    while (node != sentinel) {

        if (hash != node->key) {
            node = (hash < node->key) ? node->left : node->right;
            continue;
        }

        n = (ngx_http_cms_pcache_node_t *) node;
        rc = ngx_http_cms_pcache_cmp(kind, key, n);

        if (rc == 0) {
            ngx_queue_remove(&n->queue);
            ngx_queue_insert_head(&c->sh->queue, &n->queue);
            return n;
        }

        node = (rc < 0) ? node->left : node->right;
    }

    return NULL;
}


/* a new entry with "size" bytes after its key, the oldest making room */
static ngx_http_cms_pcache_node_t *
ngx_http_cms_pcache_new(ngx_http_cms_pcache_t *c, u_char kind,
    ngx_str_t *key, size_t size)
{
    size_t                       n;
    ngx_uint_t                   i;
    ngx_queue_t                 *q;
    ngx_http_cms_pcache_node_t  *e;

    n = offsetof(ngx_http_cms_pcache_node_t, data) + key->len + size;

    for (i = 0; i <= NGX_HTTP_CMS_PCACHE_EVICT; i++) {
        e = ngx_slab_alloc_locked(c->shpool, n);

        if (e != NULL) {
            break;
        }

        if (ngx_queue_empty(&c->sh->queue)) {
            return NULL;
        }

        q = ngx_queue_last(&c->sh->queue);
        ngx_http_cms_pcache_free(c,
            ngx_queue_data(q, ngx_http_cms_pcache_node_t, queue));
    }

    if (e == NULL) {
        return NULL;
    }

    ngx_memzero(e, offsetof(ngx_http_cms_pcache_node_t, data));
    e->kind = kind;
    e->key_len = (u_short) key->len;
    e->stored = ngx_current_msec;
    e->gen = c->sh->gen;
    e->node.key = ngx_http_cms_pcache_hash(kind, key);
    ngx_memcpy(e->data, key->data, key->len);

    ngx_rbtree_insert(&c->sh->rbtree, &e->node);
    ngx_queue_insert_head(&c->sh->queue, &e->queue);

    return e;
}


static uint32_t
ngx_http_cms_pcache_hash(u_char kind, ngx_str_t *key)
{
    uint32_t  hash;

    ngx_crc32_init(hash);
    ngx_crc32_update(&hash, &kind, 1);
    ngx_crc32_update(&hash, key->data, key->len);
    ngx_crc32_final(hash);

    return hash;
}


static void
ngx_http_cms_pcache_free(ngx_http_cms_pcache_t *c,
    ngx_http_cms_pcache_node_t *n)
{
    ngx_queue_remove(&n->queue);
    ngx_rbtree_delete(&c->sh->rbtree, &n->node);
    ngx_slab_free_locked(c->shpool, n);
}
