
/*
 * Sub-key derivation from the "cms_secret" master key, and the stored hash
 * of an API key.
 *
 * cms_kdf_derive() is HMAC-SHA256(key = master, message = label): one
 * 32-byte sub-key per purpose, so a key leaked from one use (a session
 * signing key, say) tells nothing about another.  The labels are fixed
 * strings; changing one invalidates everything derived from it, hence the
 * version suffix.
 *
 * cms_key_hash() is HMAC-SHA256(key = pepper, message = the whole key
 * string as the client sends it, "svc_live_..." included).  It is what
 * api_keys.secret_hash stores; the pepper is
 * cms_kdf_derive(master, CMS_KDF_API_KEY), so a database dump alone cannot
 * be used to test guesses.
 *
 * cms_hmac_sha256() is the plain HMAC-SHA256 both are built on (also used
 * by cms_jwt.c).  cms_sha256() and cms_aes_256_gcm() are the process's
 * fetched algorithms, for every digest and seal (see cms_kdf.c).
 *
 * Contract: the caller owns every buffer; nothing is allocated.  Each
 * function writes exactly CMS_KDF_LEN bytes to out and returns 0, or -1
 * when OpenSSL fails (out of memory, a provider missing): out is then all
 * zeros and must not be used.  A caller deriving a signing key must check
 * the result: an all-zero key is known to everyone.  The caller wipes out
 * when done (OPENSSL_cleanse).
 */


#ifndef _CMS_KDF_H_INCLUDED_
#define _CMS_KDF_H_INCLUDED_


#include <stddef.h>
#include <openssl/evp.h>


#define CMS_KDF_LEN          32
#define CMS_KDF_BLOCK        64      /* SHA-256's block */

#define CMS_KDF_SESSION      "cms session jwt v1"
#define CMS_KDF_API_KEY      "cms api key pepper v1"
#define CMS_KDF_AEAD         "cms aead v1"
#define CMS_KDF_UI_TOKEN     "cms ui token v1"
#define CMS_KDF_IDEM         "cms idempotency v1"
#define CMS_KDF_UNSUBSCRIBE  "cms unsubscribe link v1"
#define CMS_KDF_PUBLISHABLE  "cms publishable key v1"


int cms_kdf_derive(const unsigned char *master, size_t master_len,
    const char *label, unsigned char out[CMS_KDF_LEN]);
int cms_key_hash(const unsigned char pepper[CMS_KDF_LEN], const char *key,
    size_t len, unsigned char out[CMS_KDF_LEN]);
const EVP_MD *cms_sha256(void);
const EVP_CIPHER *cms_aes_256_gcm(void);
int cms_hmac_sha256(const unsigned char *key, size_t key_len,
    const unsigned char *msg, size_t msg_len,
    unsigned char out[CMS_KDF_LEN]);


#endif /* _CMS_KDF_H_INCLUDED_ */
