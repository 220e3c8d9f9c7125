
/*
 * Idempotency keys (DESIGN.md, Extensions).
 *
 * Redis holds, per credential, route and key, either "P<fingerprint>"
 * (a request holds the claim; it expires after cms_idempotency_lock) or
 * "D<fingerprint><sealed answer>" (the first answer, kept for
 * cms_idempotency_ttl).  The claim is SET NX followed by GET in one
 * pipeline; on the extension surface, whose POSTs are rate limited, both
 * run in the rate limit's script, after the bucket lets the request
 * through (ngx_http_cms_ratelimit_claim(): one round trip, and a 429
 * claims nothing).  The fingerprint is the HMAC-SHA256, under a key
 * derived from cms_secret, of the SHA-256 of the method, the path and the
 * raw body, so that Redis cannot be used to test guesses of a body's
 * secrets.  The write itself also stores the scope under a UNIQUE
 * constraint in PostgreSQL, which covers a crash between the commit and
 * the Redis write.
 *
 * The answer is sealed: base64 of AES-256-GCM (nonce, ciphertext, tag)
 * under that same derived key, with the record's Redis key as associated
 * data, of "<status><flag><body>" (flag "n": Cache-Control: no-store).
 * Install and rotate answers hold a new key: whoever reads Redis (its
 * files, a replica) gets nothing usable, and a record moved to another
 * key does not open.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_error.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_response.h"
#include "ngx_http_cms_query.h"
#include "ngx_http_cms_resources.h"
#include "ngx_http_cms_idempotency.h"
#include "ngx_http_cms_redis.h"
#include "ngx_http_cms_ratelimit.h"
#include "cms_kdf.h"


#define NGX_HTTP_CMS_IDEM_KEY_MAX      255

/* "<status><flag>" before the body in a sealed answer */
#define NGX_HTTP_CMS_IDEM_HEAD         4


static ngx_int_t ngx_http_cms_idempotency_header(ngx_http_request_t *r,
    ngx_str_t *value);
static ngx_int_t ngx_http_cms_idempotency_keys(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_idem_t *idem, ngx_str_t *value);
static ngx_int_t ngx_http_cms_idempotency_fingerprint(ngx_http_request_t *r,
    ngx_http_cms_idem_t *idem);
static ngx_int_t ngx_http_cms_idempotency_seal(ngx_pool_t *pool,
    ngx_http_cms_main_conf_t *mcf, ngx_http_cms_idem_t *idem,
    ngx_str_t *plain, ngx_str_t *value);
static ngx_int_t ngx_http_cms_idempotency_open(ngx_http_request_t *r,
    ngx_http_cms_idem_t *idem, redisReply *v, ngx_str_t *plain);
static ngx_int_t ngx_http_cms_idempotency_lock(ngx_http_request_t *r,
    ngx_http_cms_idem_t *idem);
static ngx_int_t ngx_http_cms_idempotency_release(ngx_pool_t *pool,
    ngx_http_cms_redis_cmds_t *cmds, ngx_http_cms_idem_t *idem);
static ngx_int_t ngx_http_cms_idempotency_keep(ngx_http_request_t *r,
    ngx_pool_t *pool, ngx_http_cms_redis_cmds_t *cmds, ngx_uint_t status,
    ngx_str_t *body);
static ngx_int_t ngx_http_cms_idempotency_claimed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, redisReply **replies, ngx_uint_t n);
static ngx_int_t ngx_http_cms_idempotency_replay(ngx_http_request_t *r,
    ngx_http_cms_idem_t *idem, redisReply *v);
static void ngx_http_cms_idempotency_written(void *data,
    redisReply **replies, ngx_uint_t n);


ngx_int_t
ngx_http_cms_idempotency_claim(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_http_cms_handler_pt next)
{
    ngx_int_t             rc;
    ngx_str_t             value;
    ngx_http_cms_idem_t  *idem;

    rc = ngx_http_cms_idempotency_header(r, &value);
    if (rc != NGX_OK) {
        return rc;
    }

    idem = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_idem_t));
    if (idem == NULL) {
        return NGX_ERROR;
    }

    idem->next = next;

    if (ngx_http_cms_idempotency_keys(r, ctx, idem, &value) != NGX_OK) {
        return NGX_ERROR;
    }

    ctx->idem = idem;
    ctx->record = ngx_http_cms_idempotency_record;

    /* the rate limit the router left to the claim */
    idem->fused = ctx->limit_deferred;
    ctx->limit_deferred = 0;

    rc = ngx_http_cms_idempotency_lock(r, idem);

    if (rc == NGX_DONE || rc == NGX_ERROR) {
        return rc;
    }

    /* Redis cannot be asked: an unprotected write is not made */
    return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INTERNAL, NULL);
}


/*
 * The key's scope (the credential, the route, not its ids, and the key),
 * its Redis key, and the request's fingerprint (method, path and the
 * exact body).
 */
static ngx_int_t
ngx_http_cms_idempotency_keys(ngx_http_request_t *r, ngx_http_cms_ctx_t *ctx,
    ngx_http_cms_idem_t *idem, ngx_str_t *value)
{
    u_char     *p;
    ngx_str_t   parts[4];

    p = ngx_pnalloc(r->pool, 2 * (ctx->principal.key_id.len + 96));
    if (p == NULL) {
        return NGX_ERROR;
    }

    parts[0] = r->method_name;
    parts[1] = ctx->route->pattern;
    ngx_str_set(&parts[2], "\n");
    parts[3] = *value;

    idem->scope.data = p;
    p = ngx_cpymem(p, ctx->principal.key_id.data, ctx->principal.key_id.len);
    *p++ = ':';

    if (ngx_http_cms_crypto_sha256_hex(parts, 4, p) != NGX_OK) {
        return NGX_ERROR;
    }

    p += NGX_HTTP_CMS_IDEM_HEX;
    idem->scope.len = p - idem->scope.data;

    /* the hash tag keeps a credential's keys on one cluster slot */
    idem->key.data = p;
    idem->key.len = ngx_sprintf(p, "cms:idem:{%V}:%*s",
                                &ctx->principal.key_id,
                                (size_t) NGX_HTTP_CMS_IDEM_HEX,
                                idem->scope.data + idem->scope.len
                                - NGX_HTTP_CMS_IDEM_HEX)
                    - p;

    return ngx_http_cms_idempotency_fingerprint(r, idem);
}


/* idem->fp: hex HMAC(idem key, hex SHA-256(method, path, "\n", body)) */
static ngx_int_t
ngx_http_cms_idempotency_fingerprint(ngx_http_request_t *r,
    ngx_http_cms_idem_t *idem)
{
    ngx_str_t                  parts[4];
    ngx_http_cms_ctx_t        *ctx;
    ngx_http_cms_main_conf_t  *mcf;
    u_char                     hex[NGX_HTTP_CMS_IDEM_HEX];
    u_char                     mac[NGX_HTTP_CMS_IDEM_HEX / 2];

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);
    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    parts[0] = r->method_name;
    parts[1] = r->uri;
    ngx_str_set(&parts[2], "\n");
    parts[3] = ctx->raw_body;

    if (ngx_http_cms_crypto_sha256_hex(parts, 4, hex) != NGX_OK
        || cms_hmac_sha256(mcf->idem_key, sizeof(mcf->idem_key), hex,
                           sizeof(hex), mac)
           != 0)
    {
        return NGX_ERROR;
    }

    ngx_hex_dump(idem->fp, mac, sizeof(mac));

    return NGX_OK;
}


/* SET key P<fingerprint> NX PX <lock>, then GET key (or both in the rate
   limit's script): NGX_DONE, NGX_ERROR, or another code when Redis cannot
   be asked */
/* long: either way's arguments */
static ngx_int_t
ngx_http_cms_idempotency_lock(ngx_http_request_t *r,
    ngx_http_cms_idem_t *idem)
{
    u_char                     *p, *lock;
    size_t                      len[7];
    ngx_str_t                   claim;
    const char                 *argv[7];
    ngx_http_cms_ctx_t         *ctx;
    ngx_http_cms_main_conf_t   *mcf;
    ngx_http_cms_redis_cmds_t  *cmds;

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);
    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    p = ngx_pnalloc(r->pool, 1 + NGX_HTTP_CMS_IDEM_HEX);
    lock = ngx_pnalloc(r->pool, NGX_INT_T_LEN);
    cmds = ngx_pcalloc(r->pool, sizeof(ngx_http_cms_redis_cmds_t));

    if (p == NULL || lock == NULL || cmds == NULL) {
        return NGX_ERROR;
    }

    p[0] = 'P';
    ngx_memcpy(p + 1, idem->fp, NGX_HTTP_CMS_IDEM_HEX);

    if (idem->fused) {
        claim.data = p;
        claim.len = 1 + NGX_HTTP_CMS_IDEM_HEX;

        if (ngx_http_cms_ratelimit_claim(r, ctx, cmds, &idem->key, &claim,
                                         mcf->idem_lock, idem->eval)
            != NGX_OK)
        {
            return NGX_ERROR;
        }

        return ngx_http_cms_redis_run(r, cmds,
                                      ngx_http_cms_idempotency_claimed);
    }

    argv[0] = "SET";                len[0] = 3;
    argv[1] = (char *) idem->key.data; len[1] = idem->key.len;
    argv[2] = (char *) p;           len[2] = 1 + NGX_HTTP_CMS_IDEM_HEX;
    argv[3] = "NX";                 len[3] = 2;
    argv[4] = "PX";                 len[4] = 2;
    argv[5] = (char *) lock;
    len[5] = ngx_sprintf(lock, "%M", mcf->idem_lock) - lock;

    if (ngx_http_cms_redis_append(r->pool, cmds, 6, argv, len) != NGX_OK) {
        return NGX_ERROR;
    }

    argv[0] = "GET";                len[0] = 3;

    if (ngx_http_cms_redis_append(r->pool, cmds, 2, argv, len) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_redis_run(r, cmds, ngx_http_cms_idempotency_claimed);
}


/* long: the claim's outcomes, and the rate limit's when it is fused */
static ngx_int_t
ngx_http_cms_idempotency_claimed(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, redisReply **replies, ngx_uint_t n)
{
    ngx_int_t             rc;
    redisReply           *v;
    ngx_http_cms_idem_t  *idem;

    static ngx_str_t  retry_name = ngx_string("Retry-After");
    static ngx_str_t  one = ngx_string("1");

    idem = ctx->idem;
    rc = NGX_DECLINED;
    v = NULL;

    if (replies == NULL || n != (idem->fused ? 1 : 2)) {
        rc = NGX_ERROR;

    } else if (idem->fused) {
        rc = ngx_http_cms_ratelimit_claimed(r, ctx, replies[0], &v);

        if (rc == NGX_AGAIN && !idem->eval) {
            /* NOSCRIPT: nothing was counted or claimed; the script whole */
            idem->eval = 1;
            rc = ngx_http_cms_idempotency_lock(r, idem);

            if (rc == NGX_DONE || rc == NGX_ERROR) {
                return rc;
            }

            rc = NGX_AGAIN;
        }

    } else if (replies[0]->type == REDIS_REPLY_ERROR) {
        rc = NGX_ERROR;

    } else if (replies[0]->type != REDIS_REPLY_STATUS) {
        v = replies[1];
    }

    if (rc != NGX_DECLINED) {
        ctx->idem = NULL;

        if (rc >= NGX_HTTP_SPECIAL_RESPONSE) {
            /* the 429: nothing was claimed, nothing is kept */
            return rc;
        }

        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: idempotency claim failed in redis");
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_INTERNAL, NULL);
    }

    if (v == NULL) {
        /* ours; the answer of next() is recorded by _response.c */
        idem->claimed = 1;
        return idem->next(r, ctx);
    }

    ctx->idem = NULL;

    if (v->type == REDIS_REPLY_STRING && v->len > NGX_HTTP_CMS_IDEM_HEX
        && ngx_memcmp(v->str + 1, idem->fp, NGX_HTTP_CMS_IDEM_HEX) != 0)
    {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_IDEMPOTENCY_CONFLICT,
                                 "Idempotency-Key");
    }

    if (v->type == REDIS_REPLY_STRING && v->str[0] == 'D') {
        return ngx_http_cms_idempotency_replay(r, idem, v);
    }

    /* held by a request in flight (or gone between SET and GET) */
    if (ngx_http_cms_header_add(r, &retry_name, &one) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_IDEMPOTENCY_IN_PROGRESS,
                             "Idempotency-Key");
}


/* "D<fp><sealed answer>": the first answer, byte for byte */
static ngx_int_t
ngx_http_cms_idempotency_replay(ngx_http_request_t *r,
    ngx_http_cms_idem_t *idem, redisReply *v)
{
    ngx_str_t            plain, body;
    ngx_int_t            status;
    ngx_http_cms_ctx_t  *ctx;

    static ngx_str_t  replayed_name = ngx_string("Idempotent-Replayed");
    static ngx_str_t  yes = ngx_string("true");

    if (ngx_http_cms_idempotency_open(r, idem, v, &plain) != NGX_OK) {
        return NGX_ERROR;
    }

    status = ngx_atoi(plain.data, 3);

    if (status < 200 || status > 599) {
        ngx_log_error(NGX_LOG_ALERT, r->connection->log, 0,
                      "cms: a kept idempotent answer is corrupt");
        return NGX_ERROR;
    }

    if (plain.data[3] == 'n') {
        ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);
        ctx->no_store = 1;
    }

    body.data = plain.data + NGX_HTTP_CMS_IDEM_HEAD;
    body.len = plain.len - NGX_HTTP_CMS_IDEM_HEAD;

    if (ngx_http_cms_header_add(r, &replayed_name, &yes) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_cms_send(r, status, &body);
}


/*
 * The kept answer's plaintext, in r->pool (the reply is freed after the
 * callback returns).  NGX_OK, or NGX_ERROR once logged: a record that
 * does not open was sealed under another cms_secret or altered.
 */
static ngx_int_t
ngx_http_cms_idempotency_open(ngx_http_request_t *r,
    ngx_http_cms_idem_t *idem, redisReply *v, ngx_str_t *plain)
{
    ngx_int_t                  rc;
    ngx_str_t                  b64, sealed;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    b64.data = (u_char *) v->str + 1 + NGX_HTTP_CMS_IDEM_HEX;
    b64.len = v->len - (1 + NGX_HTTP_CMS_IDEM_HEX);

    sealed.data = ngx_pnalloc(r->pool, ngx_base64_decoded_length(b64.len));
    if (sealed.data == NULL) {
        return NGX_ERROR;
    }

    /* not base64: not a record of ours (one kept before sealing, say) */
    rc = ngx_decode_base64(&sealed, &b64) == NGX_OK ? NGX_OK : NGX_DECLINED;

    if (rc == NGX_OK) {
        rc = ngx_http_cms_crypto_open(r->pool, mcf->idem_key, &idem->key,
                                      &sealed, plain);
    }

    if (rc == NGX_OK && plain->len >= NGX_HTTP_CMS_IDEM_HEAD) {
        return NGX_OK;
    }

    if (rc != NGX_ERROR) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: a kept idempotent answer does not open "
                      "(cms_secret changed, or the record was altered)");
    }

    return NGX_ERROR;
}


/* long: keep or release, and the job owning the pool */
void
ngx_http_cms_idempotency_record(ngx_http_request_t *r,
    ngx_http_cms_ctx_t *ctx, ngx_uint_t status, ngx_str_t *body)
{
    ngx_int_t                   rc;
    ngx_pool_t                 *pool;
    ngx_http_cms_idem_t        *idem;
    ngx_http_cms_redis_cmds_t  *cmds;

    idem = ctx->idem;

    if (idem == NULL || !idem->claimed || idem->recorded) {
        return;
    }

    idem->recorded = 1;

    /*
     * A job of its own: the request may be gone when Redis answers.  The
     * size is a multiple of the pool alignment: with an unaligned end, an
     * aligned allocation can start past it, and nginx's room check (end
     * minus start, unsigned) wraps into a heap overflow.
     */
    pool = ngx_create_pool(ngx_align(1024 + ngx_min(4 * body->len,
                                                    NGX_DEFAULT_POOL_SIZE),
                                     NGX_POOL_ALIGNMENT),
                           ngx_cycle->log);
    if (pool == NULL) {
        return;
    }

    cmds = ngx_pcalloc(pool, sizeof(ngx_http_cms_redis_cmds_t));
    if (cmds == NULL) {
        ngx_destroy_pool(pool);
        return;
    }

    if (status >= NGX_HTTP_INTERNAL_SERVER_ERROR
        || (ctx->has_err
            && ctx->err.code == NGX_HTTP_CMS_ERR_IDEMPOTENCY_CONFLICT))
    {
        /*
         * nothing was kept by a failed write: the retry runs again; and a
         * conflict the database found (its record outlived Redis's) must
         * not take the key over from the request it belongs to
         */
        rc = ngx_http_cms_idempotency_release(pool, cmds, idem);

    } else {
        rc = ngx_http_cms_idempotency_keep(r, pool, cmds, status, body);
    }

    if (rc != NGX_OK) {
        ngx_destroy_pool(pool);
        return;
    }

    /* the job owns the pool from here, also when it cannot be sent */
    if (ngx_http_cms_redis_job(pool, cmds, ngx_http_cms_idempotency_written,
                               NULL)
        != NGX_OK)
    {
        ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                      "cms: an idempotent answer could not be kept; "
                      "the database still refuses a second write");
    }
}


/* DEL key */
static ngx_int_t
ngx_http_cms_idempotency_release(ngx_pool_t *pool,
    ngx_http_cms_redis_cmds_t *cmds, ngx_http_cms_idem_t *idem)
{
    size_t       len[2];
    const char  *argv[2];

    argv[0] = "DEL";
    len[0] = 3;
    argv[1] = (char *) idem->key.data;
    len[1] = idem->key.len;

    return ngx_http_cms_redis_append(pool, cmds, 2, argv, len);
}


/* SET key D<fingerprint><sealed answer> PX <ttl> */
static ngx_int_t
ngx_http_cms_idempotency_keep(ngx_http_request_t *r, ngx_pool_t *pool,
    ngx_http_cms_redis_cmds_t *cmds, ngx_uint_t status, ngx_str_t *body)
{
    u_char                    *ttl;
    size_t                     len[5];
    ngx_int_t                  rc;
    ngx_str_t                  plain, value;
    const char                *argv[5];
    ngx_http_cms_ctx_t        *ctx;
    ngx_http_cms_idem_t       *idem;
    ngx_http_cms_main_conf_t  *mcf;

    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);
    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);
    idem = ctx->idem;

    plain.len = NGX_HTTP_CMS_IDEM_HEAD + body->len;
    plain.data = ngx_pnalloc(pool, plain.len);
    ttl = ngx_pnalloc(pool, NGX_INT_T_LEN);

    if (plain.data == NULL || ttl == NULL) {
        return NGX_ERROR;
    }

    ngx_sprintf(plain.data, "%03ui%c%V", status, ctx->no_store ? 'n' : '-',
                body);

    rc = ngx_http_cms_idempotency_seal(pool, mcf, idem, &plain, &value);

    /* the job's pool lives on until Redis answers: no clear copy in it */
    ngx_explicit_memzero(plain.data, plain.len);

    if (rc != NGX_OK) {
        return NGX_ERROR;
    }

    argv[0] = "SET";
    len[0] = 3;
    argv[1] = (char *) idem->key.data;
    len[1] = idem->key.len;
    argv[2] = (char *) value.data;
    len[2] = value.len;
    argv[3] = "PX";
    len[3] = 2;
    argv[4] = (char *) ttl;
    len[4] = ngx_sprintf(ttl, "%M", mcf->idem_ttl) - ttl;

    return ngx_http_cms_redis_append(pool, cmds, 5, argv, len);
}


/* "D<fingerprint><base64 of the sealed plain>", bound to the record's
   Redis key */
static ngx_int_t
ngx_http_cms_idempotency_seal(ngx_pool_t *pool,
    ngx_http_cms_main_conf_t *mcf, ngx_http_cms_idem_t *idem,
    ngx_str_t *plain, ngx_str_t *value)
{
    ngx_str_t  sealed, b64;

    if (ngx_http_cms_crypto_seal_raw(pool, mcf->idem_key, &idem->key, plain,
                                     &sealed)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    value->data = ngx_pnalloc(pool, 1 + NGX_HTTP_CMS_IDEM_HEX
                                    + ngx_base64_encoded_length(sealed.len));
    if (value->data == NULL) {
        return NGX_ERROR;
    }

    value->data[0] = 'D';
    ngx_memcpy(value->data + 1, idem->fp, NGX_HTTP_CMS_IDEM_HEX);

    b64.data = value->data + 1 + NGX_HTTP_CMS_IDEM_HEX;
    ngx_encode_base64(&b64, &sealed);

    value->len = 1 + NGX_HTTP_CMS_IDEM_HEX + b64.len;

    return NGX_OK;
}


static void
ngx_http_cms_idempotency_written(void *data, redisReply **replies,
    ngx_uint_t n)
{
    if (replies == NULL || replies[0]->type == REDIS_REPLY_ERROR) {
        ngx_log_error(NGX_LOG_WARN, ngx_cycle->log, 0,
                      "cms: an idempotent answer could not be kept; "
                      "the database still refuses a second write");
    }
}


/*
 * "Idempotency-Key": 1 to 255 printable ASCII characters, given once.
 * NGX_OK with *value, else the refusal recorded (400 invalid_request):
 * none sent is told apart from one that breaks the rule.
 */
static ngx_int_t
ngx_http_cms_idempotency_header(ngx_http_request_t *r, ngx_str_t *value)
{
    size_t       i;
    ngx_str_t   *v;
    ngx_uint_t   n;

    static ngx_str_t  name = ngx_string("Idempotency-Key");

    v = ngx_http_cms_query_header(r, &name, &n);

    if (n > 1) {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_INVALID_REQUEST,
                                     "Idempotency-Key",
                                     "Idempotency-Key is given twice");
    }

    if (v == NULL) {
        return ngx_http_cms_fail_msg(r, NGX_HTTP_CMS_ERR_IDEMPOTENCY_KEY,
                                     "Idempotency-Key",
                                     "The Idempotency-Key header is "
                                     "required");
    }

    /* a key over the limit is not read: i stays short of its length */
    for (i = 0; v->len <= NGX_HTTP_CMS_IDEM_KEY_MAX && i < v->len; i++) {
        if (v->data[i] < 0x20 || v->data[i] > 0x7e) {
            break;
        }
    }

    if (v->len == 0 || i < v->len) {
        return ngx_http_cms_fail(r, NGX_HTTP_CMS_ERR_IDEMPOTENCY_KEY,
                                 "Idempotency-Key");
    }

    *value = *v;

    return NGX_OK;
}
