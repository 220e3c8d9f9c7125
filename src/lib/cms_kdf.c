
/*
 * Sub-key derivation and API key hashing; see cms_kdf.h.
 */


#include <string.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

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
 * HMAC-SHA256 (RFC 2104) of msg under key into out, exactly CMS_KDF_LEN
 * bytes.  Returns 0, or -1 when OpenSSL fails; out is then all zeros.
 */

int
cms_hmac_sha256(const unsigned char *key, size_t key_len,
    const unsigned char *msg, size_t msg_len,
    unsigned char out[CMS_KDF_LEN])
{
    unsigned int                n;
    static const unsigned char  empty[1] = { 0 };

    /* OpenSSL 3.0's HMAC() fails when both key and message are NULL */

    if (key == NULL) {
        key = empty;
        key_len = 0;
    }

    if (msg == NULL) {
        msg = empty;
        msg_len = 0;
    }

    n = CMS_KDF_LEN;

    /* HMAC() takes the key length as an int */

    if (key_len > (size_t) 0x7fffffff
        || HMAC(EVP_sha256(), key, (int) key_len, msg, msg_len, out, &n)
           == NULL
        || n != CMS_KDF_LEN)
    {
        memset(out, 0, CMS_KDF_LEN);
        return -1;
    }

    return 0;
}
