
/*
 * Sub-key derivation and API key hashing; see cms_kdf.h.
 */


#include <pthread.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "cms_kdf.h"


/*
 * Derives the CMS_KDF_LEN-byte sub-key for label (a NUL-terminated
 * CMS_KDF_* string) from the master secret.
 */

int
cms_kdf_derive(const unsigned char *master, size_t master_len,
    const char *label, unsigned char out[CMS_KDF_LEN])
{
    return cms_hmac_sha256(master, master_len,
                           (const unsigned char *) label, strlen(label), out);
}


/*
 * Writes the stored form of key[0 .. len), the whole key string.  Returns
 * 0, or -1 (out zeroed).
 */

int
cms_key_hash(const unsigned char pepper[CMS_KDF_LEN], const char *key,
    size_t len, unsigned char out[CMS_KDF_LEN])
{
    return cms_hmac_sha256(pepper, CMS_KDF_LEN, (const unsigned char *) key,
                           len, out);
}


/*
 * OpenSSL 3 looks an algorithm up in its provider store on every use of
 * EVP_sha256(), EVP_aes_256_gcm() or HMAC() (HMAC() twice: the MAC and its
 * digest, 4.5 us a call here).  Fetched once, on first use, for the
 * process: the master fetches them while it reads the configuration and
 * the workers inherit them.  A failed fetch falls back to the implicit
 * form, which then fails in its own place.
 */

static int cms_hmac_pass(EVP_MD_CTX *c, const unsigned char k[CMS_KDF_BLOCK],
    unsigned char pad, const unsigned char *msg, size_t msg_len,
    unsigned char out[CMS_KDF_LEN]);


static pthread_once_t   cms_kdf_once = PTHREAD_ONCE_INIT;
static EVP_MD          *cms_kdf_sha256;
static EVP_CIPHER      *cms_kdf_gcm;


static void
cms_kdf_fetch(void)
{
    cms_kdf_sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    cms_kdf_gcm = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
}


const EVP_MD *
cms_sha256(void)
{
    (void) pthread_once(&cms_kdf_once, cms_kdf_fetch);

    return cms_kdf_sha256 ? cms_kdf_sha256 : EVP_sha256();
}


const EVP_CIPHER *
cms_aes_256_gcm(void)
{
    (void) pthread_once(&cms_kdf_once, cms_kdf_fetch);

    return cms_kdf_gcm ? cms_kdf_gcm : EVP_aes_256_gcm();
}


/*
 * HMAC-SHA256 (RFC 2104) of msg under key into out, exactly CMS_KDF_LEN
 * bytes: H((K ^ opad) || H((K ^ ipad) || msg)), K the key zero-padded to
 * the block (hashed first when longer), over the fetched SHA-256 (HMAC()
 * would fetch both algorithms again: five times slower).  Returns 0, or -1
 * when OpenSSL fails; out is then all zeros.
 */

int
cms_hmac_sha256(const unsigned char *key, size_t key_len,
    const unsigned char *msg, size_t msg_len,
    unsigned char out[CMS_KDF_LEN])
{
    int            ok;
    unsigned int   n;
    EVP_MD_CTX    *c;
    unsigned char  k[CMS_KDF_BLOCK], inner[CMS_KDF_LEN];

    /* no key or no message: the empty one */

    key_len = key ? key_len : 0;
    msg_len = msg ? msg_len : 0;

    c = EVP_MD_CTX_new();
    if (c == NULL) {
        memset(out, 0, CMS_KDF_LEN);
        return -1;
    }

    memset(k, 0, sizeof(k));

    if (key_len > CMS_KDF_BLOCK) {
        ok = EVP_DigestInit_ex(c, cms_sha256(), NULL) == 1
             && EVP_DigestUpdate(c, key, key_len) == 1
             && EVP_DigestFinal_ex(c, k, &n) == 1;

    } else {
        if (key_len) {
            memcpy(k, key, key_len);
        }

        ok = 1;
    }

    ok = ok
         && cms_hmac_pass(c, k, 0x36, msg, msg_len, inner) == 0
         && cms_hmac_pass(c, k, 0x5c, inner, CMS_KDF_LEN, out) == 0;

    EVP_MD_CTX_free(c);
    OPENSSL_cleanse(k, sizeof(k));
    OPENSSL_cleanse(inner, sizeof(inner));

    if (!ok) {
        memset(out, 0, CMS_KDF_LEN);
        return -1;
    }

    return 0;
}


/* H((k ^ pad) || msg) into out, CMS_KDF_LEN bytes: 0, or -1 */

static int
cms_hmac_pass(EVP_MD_CTX *c, const unsigned char k[CMS_KDF_BLOCK],
    unsigned char pad, const unsigned char *msg, size_t msg_len,
    unsigned char out[CMS_KDF_LEN])
{
    int            ok;
    size_t         i;
    unsigned int   n;
    unsigned char  block[CMS_KDF_BLOCK];

    for (i = 0; i < CMS_KDF_BLOCK; i++) {
        block[i] = k[i] ^ pad;
    }

    ok = EVP_DigestInit_ex(c, cms_sha256(), NULL) == 1
         && EVP_DigestUpdate(c, block, CMS_KDF_BLOCK) == 1
         && (msg_len == 0 || EVP_DigestUpdate(c, msg, msg_len) == 1)
         && EVP_DigestFinal_ex(c, out, &n) == 1
         && n == CMS_KDF_LEN;

    OPENSSL_cleanse(block, sizeof(block));

    return ok ? 0 : -1;
}
