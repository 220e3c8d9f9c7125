
/*
 * The only OpenSSL user: randomness, digests, HMAC, AES-256-GCM and
 * constant-time comparison, plus the "cms_secret" key file.
 */


#ifndef _NGX_HTTP_CMS_CRYPTO_H_INCLUDED_
#define _NGX_HTTP_CMS_CRYPTO_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include "ngx_http_cms_module.h"


#define NGX_HTTP_CMS_SECRET_MIN        32
#define NGX_HTTP_CMS_SEAL_NONCE        12
#define NGX_HTTP_CMS_SEAL_TAG          16


/* "cms_secret" directive: reads the key file at load time */
char *ngx_http_cms_crypto_secret_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);

/*
 * Derives the sub-keys (session signing, key pepper) from the secret.
 * NGX_OK, or NGX_ERROR when OpenSSL fails (the keys are then unusable).
 */
ngx_int_t ngx_http_cms_crypto_derive(ngx_http_cms_main_conf_t *mcf);

/*
 * SHA-256 of the concatenation of "n" parts, as 64 lowercase hex
 * characters into "hex".  NGX_OK or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_crypto_sha256_hex(ngx_str_t *parts, ngx_uint_t n,
    u_char *hex);

/*
 * SHA-256 over data that comes in pieces (a file copied in a pool
 * thread): _begin() returns an opaque state or NULL, _update() adds bytes
 * (NGX_OK or NGX_ERROR), _end() writes 64 lowercase hex characters into
 * "hex" when it is not NULL and frees the state (NGX_OK or NGX_ERROR).
 * No nginx call inside: safe in a thread.
 */
void *ngx_http_cms_crypto_sha256_begin(void);
ngx_int_t ngx_http_cms_crypto_sha256_update(void *state, const u_char *p,
    size_t n);
ngx_int_t ngx_http_cms_crypto_sha256_end(void *state, u_char *hex);

/*
 * AES-256-GCM under the key derived for stored secrets, a fresh 12-byte
 * nonce each time, "aad" bound in (the row's identity, so a ciphertext
 * cannot be moved to another row).  "out" receives nonce, ciphertext and
 * 16-byte tag as lowercase hex, in r->pool.  NGX_OK or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_crypto_seal(ngx_http_request_t *r, ngx_str_t *aad,
    ngx_str_t *plain, ngx_str_t *out);

/*
 * AES-256-GCM of "plain" under "key" (32 bytes) with a fresh 12-byte
 * nonce and "aad" bound in: "out" receives nonce, ciphertext and 16-byte
 * tag (plain->len + 28 bytes, binary) in "pool".  NGX_OK or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_crypto_seal_raw(ngx_pool_t *pool, u_char *key,
    ngx_str_t *aad, ngx_str_t *plain, ngx_str_t *out);

/*
 * The reverse of ngx_http_cms_crypto_seal_raw(): NGX_OK with the
 * plaintext in "out" (in "pool"), NGX_DECLINED when the tag does not
 * verify (another key, another aad, a changed byte, too short), NGX_ERROR
 * when memory or OpenSSL fails.
 */
ngx_int_t ngx_http_cms_crypto_open(ngx_pool_t *pool, u_char *key,
    ngx_str_t *aad, ngx_str_t *sealed, ngx_str_t *out);

/*
 * A fresh key of kind "prefix" (cms_key format, 32 random bytes): the
 * secret (answered once, never stored), its visible prefix and the hex
 * HMAC-SHA256(pepper, key) that is stored, all in r->pool.
 * NGX_OK or NGX_ERROR.
 */
ngx_int_t ngx_http_cms_crypto_mint_key(ngx_http_request_t *r,
    const char *prefix, ngx_str_t *secret, ngx_str_t *visible,
    ngx_str_t *hash);

/* Fills "buf" with "n" bytes from a CSPRNG.  NGX_OK or NGX_ERROR. */
ngx_int_t ngx_http_cms_crypto_random(u_char *buf, size_t n);
ngx_int_t ngx_http_cms_crypto_random_id(u_char *buf, size_t n);

/*
 * Bytes a TLS connection ("ssl", an OpenSSL SSL * as libpq's
 * PQsslStruct(conn, "OpenSSL") gives it, or NULL) has decrypted and not
 * handed out yet: a reader may find them with the socket empty, so no
 * event announces them.  0 for NULL.
 */
size_t ngx_http_cms_crypto_tls_pending(void *ssl);

/*
 * The client side of a TLS connection made by nginx's SSL helpers
 * (c->ssl): "name" (NUL-terminated) as the server name sent (SNI) before
 * the handshake; NGX_OK or NGX_ERROR (logged).
 */
ngx_int_t ngx_http_cms_crypto_tls_sni(ngx_connection_t *c, ngx_str_t *name);

/*
 * After the handshake: NGX_OK when the server's certificate chains to a
 * trusted CA and carries "name"; else NGX_ERROR, with one line saying
 * why, naming the "service" and the address it was reached at.
 */
ngx_int_t ngx_http_cms_crypto_tls_verify(ngx_connection_t *c,
    ngx_str_t *name, const char *service, ngx_str_t *addr);

/*
 * Lets a connection's TLS go: close_notify sent if the socket takes it
 * now, never waited for, the SSL freed (c->ssl NULL after).  Nothing for
 * a plain connection.  The caller closes the connection.
 */
void ngx_http_cms_crypto_tls_close(ngx_connection_t *c);

/*
 * The system's trusted CAs (OpenSSL's default paths: Debian's
 * /etc/ssl/certs) as those "ssl" verifies servers with.  NGX_OK or
 * NGX_ERROR (logged).
 */
ngx_int_t ngx_http_cms_crypto_tls_system_ca(ngx_ssl_t *ssl, ngx_log_t *log);

/*
 * A client TLS context (TLS 1.2 and 1.3) in cf->pool, for outbound
 * requests: servers verified against the PEM file "ca", or the system's
 * CAs when "ca" is NULL or empty.  NULL on failure (logged).
 */
ngx_ssl_t *ngx_http_cms_crypto_tls_client(ngx_conf_t *cf, ngx_str_t *ca);

/* a new UUIDv7 (now, and random bits) in "pool"; NGX_OK or NGX_ERROR */
ngx_int_t ngx_http_cms_crypto_uuid7(ngx_pool_t *pool, ngx_str_t *id);

/*
 * A site's publishable key, never stored: made from "seed" (the site's id,
 * ":", its key nonce) as pk_live_ + base62(HMAC-SHA256(pk_key, seed)) +
 * checksum into out (NGX_HTTP_CMS_PK_LEN bytes), and, when hash is not
 * NULL, the hex of its stored hash (cms_key_hash under the API pepper,
 * what key lookups compare) into hash (64 bytes).  NGX_OK or NGX_ERROR.
 */
#define NGX_HTTP_CMS_PK_LEN  (sizeof("pk_live_") - 1 + 43 + 6)

ngx_int_t ngx_http_cms_crypto_publishable(const u_char *seed, size_t len,
    u_char *out, u_char *hash);

/*
 * Account tokens (src/lib/cms_token.h: invitations, password resets,
 * email verifications) under their sub-key of cms_secret.
 *
 * token_make: a token of "kind" expiring at "expires" and the hex of its
 * stored hash, both in r->pool.  Its random part is fresh, or made from
 * "id" (a request row's id) when id is not NULL, so that whoever holds
 * the secret makes it again from the row (cms_token_random_for()).
 * NGX_OK or NGX_ERROR.
 *
 * token_check: "token" as a token of "kind": NGX_OK with the hex of its
 * stored hash in "hex" (r->pool), NGX_DECLINED when it is malformed,
 * forged, of another kind or expired (checked before any query), or
 * NGX_ERROR.
 */
#define NGX_HTTP_CMS_INVITE_KIND  "inv"     /* an invitation's token */

ngx_int_t ngx_http_cms_crypto_token_make(ngx_http_request_t *r,
    const char *kind, time_t expires, ngx_str_t *id, ngx_str_t *token,
    ngx_str_t *hex);
ngx_int_t ngx_http_cms_crypto_token_check(ngx_http_request_t *r,
    const char *kind, ngx_str_t *token, ngx_str_t *hex);


#endif /* _NGX_HTTP_CMS_CRYPTO_H_INCLUDED_ */
