
/*
 * Cryptography, all of it through OpenSSL 3.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <openssl/rand.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_conf.h"
#include "cms_kdf.h"
#include "cms_key.h"
#include "cms_hex.h"
#include "cms_token.h"
#include "cms_uuid.h"


#define NGX_HTTP_CMS_SECRET_MAX        4096


/*
 * The key file holds at least 32 bytes of secret (trailing white space is
 * not part of it).  It is read once, as root, when the configuration
 * loads: workers never open it.
 */
char *
ngx_http_cms_crypto_secret_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_cms_main_conf_t *mcf = conf;

    ngx_str_t  *value, path;

    if (mcf->secret.data != NULL) {
        return "is duplicate";
    }

    value = cf->args->elts;
    path = value[1];

    if (ngx_http_cms_conf_secret_file(cf, "cms_secret", &path,
                                      NGX_HTTP_CMS_SECRET_MAX, &mcf->secret)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    if (mcf->secret.len < NGX_HTTP_CMS_SECRET_MIN) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "cms_secret: \"%V\" must hold between %d and %d "
                           "bytes of secret", &path, NGX_HTTP_CMS_SECRET_MIN,
                           NGX_HTTP_CMS_SECRET_MAX - 1);
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


ngx_int_t
ngx_http_cms_crypto_random(u_char *buf, size_t n)
{
    if (RAND_bytes(buf, (int) n) != 1) {
        return NGX_ERROR;
    }

    return NGX_OK;
}


/*
 * Random bytes for identifiers that must be unique and unguessable but
 * are not secrets (request ids): drawn from OpenSSL a few kilobytes at a
 * time, since every RAND_bytes() call costs a getpid() (OpenSSL's fork
 * check) and that was one system call in seven on the files route.  The
 * pool belongs to the process that filled it: a fork draws anew.
 */
ngx_int_t
ngx_http_cms_crypto_random_id(u_char *buf, size_t n)
{
    static u_char      pool[4096];
    static size_t      left;
    static ngx_pid_t   owner;

    if (n > sizeof(pool)) {
        return ngx_http_cms_crypto_random(buf, n);
    }

    if (left < n || owner != ngx_pid) {
        if (ngx_http_cms_crypto_random(pool, sizeof(pool)) != NGX_OK) {
            return NGX_ERROR;
        }

        left = sizeof(pool);
        owner = ngx_pid;
    }

    ngx_memcpy(buf, pool + sizeof(pool) - left, n);
    ngx_explicit_memzero(pool + sizeof(pool) - left, n);
    left -= n;

    return NGX_OK;
}


size_t
ngx_http_cms_crypto_tls_pending(void *ssl)
{
    int  n;

    if (ssl == NULL) {
        return 0;
    }

    /* processed records only: a partial record needs the socket anyway */
    n = SSL_pending(ssl);

    return n > 0 ? (size_t) n : 0;
}


ngx_int_t
ngx_http_cms_crypto_tls_sni(ngx_connection_t *c, ngx_str_t *name)
{
    /* as per RFC 6066, no IP literal as a server name */
    if (ngx_inet_addr(name->data, name->len) != INADDR_NONE
        || ngx_strlchr(name->data, name->data + name->len, ':') != NULL)
    {
        return NGX_OK;
    }

    if (SSL_set_tlsext_host_name(c->ssl->connection, (char *) name->data)
        == 0)
    {
        ngx_ssl_error(NGX_LOG_ERR, c->log, 0,
                      "SSL_set_tlsext_host_name(\"%V\") failed", name);
        return NGX_ERROR;
    }

    return NGX_OK;
}


void
ngx_http_cms_crypto_tls_close(ngx_connection_t *c)
{
    if (c->ssl) {
        /* as the upstream module: close_notify, no wait for the peer's */
        c->ssl->no_wait_shutdown = 1;
        (void) ngx_ssl_shutdown(c);
    }

    if (c->ssl) {
        /* it could not be sent now: a quiet shutdown frees the SSL */
        c->ssl->no_send_shutdown = 1;
        (void) ngx_ssl_shutdown(c);
    }
}


ngx_int_t
ngx_http_cms_crypto_tls_system_ca(ngx_ssl_t *ssl, ngx_log_t *log)
{
    if (SSL_CTX_set_default_verify_paths(ssl->ctx) != 1) {
        ngx_ssl_error(NGX_LOG_EMERG, log, 0,
                      "SSL_CTX_set_default_verify_paths() failed");
        return NGX_ERROR;
    }

    return NGX_OK;
}


ngx_ssl_t *
ngx_http_cms_crypto_tls_client(ngx_conf_t *cf, ngx_str_t *ca)
{
    ngx_ssl_t           *ssl;
    ngx_pool_cleanup_t  *cln;

    ssl = ngx_pcalloc(cf->pool, sizeof(ngx_ssl_t));
    cln = ngx_pool_cleanup_add(cf->pool, 0);

    if (ssl == NULL || cln == NULL) {
        return NULL;
    }

    ssl->log = cf->log;

    if (ngx_ssl_create(ssl, NGX_SSL_TLSv1_2|NGX_SSL_TLSv1_3, NULL) != NGX_OK) {
        return NULL;
    }

    cln->handler = ngx_ssl_cleanup_ctx;
    cln->data = ssl;

    if (ca == NULL || ca->len == 0) {
        if (ngx_http_cms_crypto_tls_system_ca(ssl, cf->log) != NGX_OK) {
            return NULL;
        }

    } else if (ngx_ssl_trusted_certificate(cf, ssl, ca, 4) != NGX_OK) {
        return NULL;
    }

    return ssl;
}


ngx_int_t
ngx_http_cms_crypto_tls_verify(ngx_connection_t *c, ngx_str_t *name,
    const char *service, ngx_str_t *addr)
{
    long  rc;

    rc = SSL_get_verify_result(c->ssl->connection);

    if (rc != X509_V_OK) {
        ngx_log_error(NGX_LOG_ERR, c->log, 0,
                      "cms: the TLS certificate of %s at \"%V\" is not "
                      "trusted: (%l:%s)", service, addr, rc,
                      X509_verify_cert_error_string(rc));
        return NGX_ERROR;
    }

    /* no certificate at all fails here too */
    if (ngx_ssl_check_host(c, name) != NGX_OK) {
        ngx_log_error(NGX_LOG_ERR, c->log, 0,
                      "cms: the TLS certificate of %s at \"%V\" does not "
                      "match \"%V\"", service, addr, name);
        return NGX_ERROR;
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_crypto_derive(ngx_http_cms_main_conf_t *mcf)
{
    if (cms_kdf_derive(mcf->secret.data, mcf->secret.len, CMS_KDF_SESSION,
                       mcf->session_key) != 0
        || cms_kdf_derive(mcf->secret.data, mcf->secret.len, CMS_KDF_API_KEY,
                          mcf->api_pepper) != 0
        || cms_kdf_derive(mcf->secret.data, mcf->secret.len, CMS_KDF_AEAD,
                          mcf->aead_key) != 0
        || cms_kdf_derive(mcf->secret.data, mcf->secret.len, CMS_KDF_UI_TOKEN,
                          mcf->ui_key) != 0
        || cms_kdf_derive(mcf->secret.data, mcf->secret.len, CMS_KDF_IDEM,
                          mcf->idem_key) != 0
        || cms_kdf_derive(mcf->secret.data, mcf->secret.len,
                          CMS_KDF_UNSUBSCRIBE, mcf->unsub_key) != 0
        || cms_kdf_derive(mcf->secret.data, mcf->secret.len,
                          CMS_KDF_PUBLISHABLE, mcf->pk_key) != 0)
    {
        return NGX_ERROR;
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_crypto_sha256_hex(ngx_str_t *parts, ngx_uint_t n, u_char *hex)
{
    ngx_uint_t     i;
    EVP_MD_CTX    *md;
    unsigned int   len;
    u_char         digest[EVP_MAX_MD_SIZE];

    md = EVP_MD_CTX_new();
    if (md == NULL) {
        return NGX_ERROR;
    }

    if (EVP_DigestInit_ex(md, cms_sha256(), NULL) != 1) {
        goto failed;
    }

    for (i = 0; i < n; i++) {
        if (parts[i].len
            && EVP_DigestUpdate(md, parts[i].data, parts[i].len) != 1)
        {
            goto failed;
        }
    }

    if (EVP_DigestFinal_ex(md, digest, &len) != 1) {
        goto failed;
    }

    EVP_MD_CTX_free(md);
    ngx_hex_dump(hex, digest, len);

    return NGX_OK;

failed:

    EVP_MD_CTX_free(md);

    return NGX_ERROR;
}


void *
ngx_http_cms_crypto_sha256_begin(void)
{
    EVP_MD_CTX  *md;

    md = EVP_MD_CTX_new();
    if (md == NULL) {
        return NULL;
    }

    if (EVP_DigestInit_ex(md, cms_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(md);
        return NULL;
    }

    return md;
}


ngx_int_t
ngx_http_cms_crypto_sha256_update(void *state, const u_char *p, size_t n)
{
    if (n && EVP_DigestUpdate((EVP_MD_CTX *) state, p, n) != 1) {
        return NGX_ERROR;
    }

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_crypto_sha256_end(void *state, u_char *hex)
{
    unsigned int   len;
    EVP_MD_CTX    *md;
    u_char         digest[EVP_MAX_MD_SIZE];

    md = state;

    if (hex == NULL) {
        EVP_MD_CTX_free(md);
        return NGX_OK;
    }

    if (EVP_DigestFinal_ex(md, digest, &len) != 1) {
        EVP_MD_CTX_free(md);
        return NGX_ERROR;
    }

    EVP_MD_CTX_free(md);
    ngx_hex_dump(hex, digest, len);

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_crypto_seal(ngx_http_request_t *r, ngx_str_t *aad,
    ngx_str_t *plain, ngx_str_t *out)
{
    ngx_str_t                  raw;
    ngx_http_cms_main_conf_t  *mcf;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    if (ngx_http_cms_crypto_seal_raw(r->pool, mcf->aead_key, aad, plain,
                                     &raw)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    out->data = ngx_pnalloc(r->pool, 2 * raw.len);
    if (out->data == NULL) {
        return NGX_ERROR;
    }

    out->len = ngx_hex_dump(out->data, raw.data, raw.len) - out->data;

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_crypto_seal_raw(ngx_pool_t *pool, u_char *key, ngx_str_t *aad,
    ngx_str_t *plain, ngx_str_t *out)
{
    int              len, n;
    u_char          *buf;
    EVP_CIPHER_CTX  *cx;

    /* nonce, ciphertext, tag */
    buf = ngx_pnalloc(pool, NGX_HTTP_CMS_SEAL_NONCE + plain->len
                            + NGX_HTTP_CMS_SEAL_TAG);

    if (buf == NULL
        || plain->len > NGX_MAX_INT32_VALUE || aad->len > NGX_MAX_INT32_VALUE
        || ngx_http_cms_crypto_random(buf, NGX_HTTP_CMS_SEAL_NONCE) != NGX_OK)
    {
        return NGX_ERROR;
    }

    cx = EVP_CIPHER_CTX_new();
    if (cx == NULL) {
        return NGX_ERROR;
    }

    len = 0;

    if (EVP_EncryptInit_ex(cx, cms_aes_256_gcm(), NULL, key, buf) != 1
        || EVP_EncryptUpdate(cx, NULL, &n, aad->data, (int) aad->len) != 1
        || EVP_EncryptUpdate(cx, buf + NGX_HTTP_CMS_SEAL_NONCE, &len,
                             plain->data, (int) plain->len) != 1
        || EVP_EncryptFinal_ex(cx, buf + NGX_HTTP_CMS_SEAL_NONCE + len, &n)
           != 1
        || EVP_CIPHER_CTX_ctrl(cx, EVP_CTRL_GCM_GET_TAG,
                               NGX_HTTP_CMS_SEAL_TAG,
                               buf + NGX_HTTP_CMS_SEAL_NONCE + plain->len)
           != 1)
    {
        EVP_CIPHER_CTX_free(cx);
        return NGX_ERROR;
    }

    EVP_CIPHER_CTX_free(cx);

    out->data = buf;
    out->len = NGX_HTTP_CMS_SEAL_NONCE + plain->len + NGX_HTTP_CMS_SEAL_TAG;

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_crypto_open(ngx_pool_t *pool, u_char *key, ngx_str_t *aad,
    ngx_str_t *sealed, ngx_str_t *out)
{
    int              len, n, ok;
    size_t           clen;
    u_char          *ct;
    EVP_CIPHER_CTX  *cx;

    if (sealed->len < NGX_HTTP_CMS_SEAL_NONCE + NGX_HTTP_CMS_SEAL_TAG
        || sealed->len > NGX_MAX_INT32_VALUE || aad->len > NGX_MAX_INT32_VALUE)
    {
        return NGX_DECLINED;
    }

    ct = sealed->data + NGX_HTTP_CMS_SEAL_NONCE;
    clen = sealed->len - NGX_HTTP_CMS_SEAL_NONCE - NGX_HTTP_CMS_SEAL_TAG;

    /* one byte more: a zero-length plaintext still gets a buffer */
    out->data = ngx_pnalloc(pool, clen + 1);
    if (out->data == NULL) {
        return NGX_ERROR;
    }

    cx = EVP_CIPHER_CTX_new();
    if (cx == NULL) {
        return NGX_ERROR;
    }

    len = 0;

    ok = EVP_DecryptInit_ex(cx, cms_aes_256_gcm(), NULL, key, sealed->data)
             == 1
         && EVP_DecryptUpdate(cx, NULL, &n, aad->data, (int) aad->len) == 1
         && EVP_DecryptUpdate(cx, out->data, &len, ct, (int) clen) == 1
         && EVP_CIPHER_CTX_ctrl(cx, EVP_CTRL_GCM_SET_TAG,
                                NGX_HTTP_CMS_SEAL_TAG, ct + clen) == 1;

    /* the tag is checked here: a wrong key, aad or byte fails */
    ok = ok && EVP_DecryptFinal_ex(cx, out->data + len, &n) == 1;

    EVP_CIPHER_CTX_free(cx);

    if (!ok) {
        ngx_explicit_memzero(out->data, clen);
        return NGX_DECLINED;
    }

    out->len = clen;

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_crypto_mint_key(ngx_http_request_t *r, const char *prefix,
    ngx_str_t *secret, ngx_str_t *visible, ngx_str_t *hash)
{
    cms_key_t                  k;
    ngx_http_cms_ctx_t        *ctx;
    ngx_http_cms_main_conf_t  *mcf;
    unsigned char              raw[32], mac[32];

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    /* the secret is answered once: no cache may keep that answer */
    ctx = ngx_http_get_module_ctx(r, ngx_http_cms_module);
    ctx->no_store = 1;

    secret->data = ngx_pnalloc(r->pool, CMS_KEY_MAX_LEN);
    visible->data = ngx_pnalloc(r->pool, CMS_KEY_VISIBLE_MAX);
    hash->data = ngx_pnalloc(r->pool, 2 * sizeof(mac));

    if (secret->data == NULL || visible->data == NULL || hash->data == NULL
        || ngx_http_cms_crypto_random(raw, sizeof(raw)) != NGX_OK)
    {
        return NGX_ERROR;
    }

    secret->len = cms_key_format(prefix, raw, (char *) secret->data,
                                 CMS_KEY_MAX_LEN);
    ngx_explicit_memzero(raw, sizeof(raw));

    if (secret->len == 0
        || cms_key_parse((char *) secret->data, secret->len, &k) != CMS_KEY_OK
        || cms_key_hash(mcf->api_pepper, (char *) secret->data, secret->len,
                        mac) != 0)
    {
        return NGX_ERROR;
    }

    visible->len = cms_key_visible_prefix(&k, (char *) visible->data,
                                          CMS_KEY_VISIBLE_MAX);

    cms_hex_encode(mac, sizeof(mac), (char *) hash->data);
    hash->len = 2 * sizeof(mac);

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_crypto_token_make(ngx_http_request_t *r, const char *kind,
    time_t expires, ngx_str_t *id, ngx_str_t *token, ngx_str_t *hex)
{
    int                        rc;
    ngx_http_cms_main_conf_t  *mcf;
    u_char                     key[CMS_TOKEN_KEY_LEN];
    u_char                     rnd[CMS_TOKEN_RANDOM_LEN];
    u_char                     mac[CMS_TOKEN_HASH_LEN];

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    token->data = ngx_pnalloc(r->pool, CMS_TOKEN_MAX_LEN);
    hex->data = ngx_pnalloc(r->pool, 2 * CMS_TOKEN_HASH_LEN);

    if (token->data == NULL || hex->data == NULL
        || cms_kdf_derive(mcf->secret.data, mcf->secret.len,
                          CMS_TOKEN_KDF_LABEL, key) != 0)
    {
        return NGX_ERROR;
    }

    rc = (id == NULL)
         ? (ngx_http_cms_crypto_random(rnd, sizeof(rnd)) == NGX_OK ? 0 : -1)
         : cms_token_random_for(key, (char *) id->data, id->len, rnd);

    token->len = (rc == 0)
                 ? cms_token_make(key, kind, (int64_t) expires, rnd,
                                  (char *) token->data, CMS_TOKEN_MAX_LEN)
                 : 0;

    rc = (token->len == 0
          || cms_token_hash(key, (char *) token->data, token->len, mac) != 0);

    ngx_explicit_memzero(key, sizeof(key));
    ngx_explicit_memzero(rnd, sizeof(rnd));

    if (rc) {
        return NGX_ERROR;
    }

    cms_hex_encode(mac, sizeof(mac), (char *) hex->data);
    hex->len = 2 * sizeof(mac);

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_crypto_token_check(ngx_http_request_t *r, const char *kind,
    ngx_str_t *token, ngx_str_t *hex)
{
    int                        rc;
    ngx_http_cms_main_conf_t  *mcf;
    u_char                     key[CMS_TOKEN_KEY_LEN];
    u_char                     mac[CMS_TOKEN_HASH_LEN];

    mcf = ngx_http_get_module_main_conf(r, ngx_http_cms_module);

    if (cms_kdf_derive(mcf->secret.data, mcf->secret.len,
                       CMS_TOKEN_KDF_LABEL, key) != 0)
    {
        return NGX_ERROR;
    }

    rc = cms_token_check(key, kind, (char *) token->data, token->len,
                         ngx_time(), NULL);

    if (rc == CMS_TOKEN_OK
        && cms_token_hash(key, (char *) token->data, token->len, mac) != 0)
    {
        rc = CMS_TOKEN_FAILED;
    }

    ngx_explicit_memzero(key, sizeof(key));

    if (rc != CMS_TOKEN_OK) {
        return (rc == CMS_TOKEN_FAILED) ? NGX_ERROR : NGX_DECLINED;
    }

    hex->data = ngx_pnalloc(r->pool, 2 * CMS_TOKEN_HASH_LEN);
    if (hex->data == NULL) {
        return NGX_ERROR;
    }

    cms_hex_encode(mac, sizeof(mac), (char *) hex->data);
    hex->len = 2 * sizeof(mac);

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_crypto_publishable(const u_char *seed, size_t len, u_char *out,
    u_char *hash)
{
    size_t                     n;
    ngx_http_cms_main_conf_t  *mcf;
    unsigned char              raw[CMS_KDF_LEN], mac[CMS_KDF_LEN];

    mcf = ngx_http_cycle_get_module_main_conf(ngx_cycle, ngx_http_cms_module);

    if (cms_hmac_sha256(mcf->pk_key, sizeof(mcf->pk_key), seed, len, raw)
        != 0)
    {
        return NGX_ERROR;
    }

    n = cms_key_format(cms_key_kind_prefix(CMS_KEY_KIND_PK_LIVE), raw,
                       (char *) out, NGX_HTTP_CMS_PK_LEN);
    ngx_explicit_memzero(raw, sizeof(raw));

    if (n != NGX_HTTP_CMS_PK_LEN) {
        return NGX_ERROR;
    }

    if (hash == NULL) {
        return NGX_OK;
    }

    if (cms_key_hash(mcf->api_pepper, (char *) out, n, mac) != 0) {
        return NGX_ERROR;
    }

    cms_hex_encode(mac, sizeof(mac), (char *) hash);

    return NGX_OK;
}


ngx_int_t
ngx_http_cms_crypto_uuid7(ngx_pool_t *pool, ngx_str_t *id)
{
    u_char       rnd[10];
    ngx_time_t  *tp;

    id->data = ngx_pnalloc(pool, CMS_UUID_LEN);
    if (id->data == NULL
        || ngx_http_cms_crypto_random(rnd, sizeof(rnd)) != NGX_OK)
    {
        return NGX_ERROR;
    }

    tp = ngx_timeofday();
    cms_uuid7_format((uint64_t) tp->sec * 1000 + tp->msec, rnd,
                     (char *) id->data);
    id->len = CMS_UUID_LEN;

    return NGX_OK;
}
