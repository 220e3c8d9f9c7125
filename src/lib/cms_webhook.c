
/*
 * Webhook signatures; see cms_webhook.h.
 */


#include <string.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "cms_webhook.h"
#include "cms_base64url.h"
#include "cms_hex.h"
#include "cms_kdf.h"


/* base64 of CMS_WEBHOOK_KEY_MAX bytes, with padding */
#define CMS_WEBHOOK_B64_MAX  88


static int cms_webhook_mac(const unsigned char *key, size_t key_len,
    const unsigned char **parts, const size_t *lens, size_t nparts,
    unsigned char mac[32]);


int
cms_webhook_key(const char *s, size_t len, unsigned char *key,
    size_t *key_len)
{
    size_t  i, n, plen;
    char    b64[CMS_WEBHOOK_B64_MAX];

    plen = sizeof(CMS_WEBHOOK_PREFIX) - 1;

    if (len <= plen || memcmp(s, CMS_WEBHOOK_PREFIX, plen) != 0) {
        return -1;
    }

    s += plen;
    len -= plen;

    /* up to two "=" of padding, only at the end */
    for (i = 0; i < 2 && len > 0 && s[len - 1] == '='; i++) {
        len--;
    }

    if (len > sizeof(b64)) {
        return -1;
    }

    /* standard to url alphabet: "-" and "_" are not base64 here */
    for (i = 0; i < len; i++) {
        if (s[i] == '-' || s[i] == '_') {
            return -1;
        }

        b64[i] = (s[i] == '+') ? '-' : (s[i] == '/') ? '_' : s[i];
    }

    /* the decoder writes up to decoded_max bytes: key holds KEY_MAX */
    if (cms_base64url_decoded_max(len) > CMS_WEBHOOK_KEY_MAX
        || cms_base64url_decode(b64, len, key, &n) != 0
        || n < CMS_WEBHOOK_KEY_MIN || n > CMS_WEBHOOK_KEY_MAX)
    {
        return -1;
    }

    *key_len = n;

    return 0;
}


int
cms_webhook_sign_hex(const char *secret, size_t secret_len,
    const unsigned char *body, size_t n, char *hex)
{
    unsigned char  mac[CMS_KDF_LEN];

    if (cms_hmac_sha256((const unsigned char *) secret, secret_len, body, n,
                        mac)
        != 0)
    {
        return -1;
    }

    cms_hex_encode(mac, sizeof(mac), hex);
    OPENSSL_cleanse(mac, sizeof(mac));

    return 0;
}


int
cms_webhook_sign_v1(const unsigned char *key, size_t key_len,
    const char *id, size_t id_len, const char *ts, size_t ts_len,
    const unsigned char *body, size_t n, char *out)
{
    size_t                i, len;
    unsigned char         mac[32];
    const size_t          lens[5] = { id_len, 1, ts_len, 1, n };
    const unsigned char  *parts[5];

    if (id_len == 0 || ts_len == 0
        || memchr(id, '.', id_len) != NULL || memchr(ts, '.', ts_len) != NULL)
    {
        return -1;
    }

    parts[0] = (const unsigned char *) id;
    parts[1] = (const unsigned char *) ".";
    parts[2] = (const unsigned char *) ts;
    parts[3] = (const unsigned char *) ".";
    parts[4] = body;

    if (cms_webhook_mac(key, key_len, parts, lens, 5, mac) != 0) {
        return -1;
    }

    memcpy(out, "v1,", 3);

    /* 32 bytes: 43 url characters, then back to the standard alphabet */
    len = cms_base64url_encode(mac, sizeof(mac), out + 3);
    OPENSSL_cleanse(mac, sizeof(mac));

    for (i = 3; i < 3 + len; i++) {
        if (out[i] == '-') {
            out[i] = '+';

        } else if (out[i] == '_') {
            out[i] = '/';
        }
    }

    out[3 + len] = '=';

    return 0;
}


/* HMAC-SHA256 over the concatenation of parts, without a copy of them */
static int
cms_webhook_mac(const unsigned char *key, size_t key_len,
    const unsigned char **parts, const size_t *lens, size_t nparts,
    unsigned char mac[32])
{
    int            rc;
    size_t         i, outl;
    EVP_MAC       *m;
    OSSL_PARAM     params[2];
    EVP_MAC_CTX   *ctx;

    m = EVP_MAC_fetch(NULL, "HMAC", NULL);
    if (m == NULL) {
        return -1;
    }

    ctx = EVP_MAC_CTX_new(m);
    EVP_MAC_free(m);

    if (ctx == NULL) {
        return -1;
    }

    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
                                                 (char *) "SHA256", 0);
    params[1] = OSSL_PARAM_construct_end();

    rc = (EVP_MAC_init(ctx, key, key_len, params) == 1) ? 0 : -1;

    for (i = 0; rc == 0 && i < nparts; i++) {
        if (lens[i] && EVP_MAC_update(ctx, parts[i], lens[i]) != 1) {
            rc = -1;
        }
    }

    if (rc == 0
        && (EVP_MAC_final(ctx, mac, &outl, 32) != 1 || outl != 32))
    {
        rc = -1;
    }

    EVP_MAC_CTX_free(ctx);

    return rc;
}
