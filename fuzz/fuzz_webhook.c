
/*
 * libFuzzer target for cms_webhook.c.
 *
 * - cms_webhook_key() never writes past CMS_WEBHOOK_KEY_MAX bytes (an
 *   exact-size buffer: ASAN sees a byte more), and what it accepts has
 *   24 to 64 bytes whose standard base64 is the input after "whsec_"
 *   (padding aside): one secret, one key;
 * - both signatures take any body, id and time without reading or
 *   writing out of bounds, and v1 refuses exactly the ids and times that
 *   are empty or hold a ".".
 *
 * Input: the first byte splits the rest into a secret and a body; the
 * body's first half also serves as the id, its second as the time.
 */


#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cms_webhook.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


static const char  b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";


/* standard base64 of in[0 .. n) without padding into out; its length */
static size_t
encode(const unsigned char *in, size_t n, char *out)
{
    size_t    i, o;
    uint32_t  v;

    for (i = 0, o = 0; i + 2 < n; i += 3) {
        v = (uint32_t) in[i] << 16 | (uint32_t) in[i + 1] << 8 | in[i + 2];
        out[o++] = b64[v >> 18];
        out[o++] = b64[(v >> 12) & 63];
        out[o++] = b64[(v >> 6) & 63];
        out[o++] = b64[v & 63];
    }

    if (n - i == 1) {
        v = (uint32_t) in[i] << 16;
        out[o++] = b64[v >> 18];
        out[o++] = b64[(v >> 12) & 63];

    } else if (n - i == 2) {
        v = (uint32_t) in[i] << 16 | (uint32_t) in[i + 1] << 8;
        out[o++] = b64[v >> 18];
        out[o++] = b64[(v >> 12) & 63];
        out[o++] = b64[(v >> 6) & 63];
    }

    return o;
}


static void
check_key(const char *s, size_t len)
{
    char           *again;
    size_t          klen, n, plen;
    unsigned char  *key;

    key = malloc(CMS_WEBHOOK_KEY_MAX);
    again = malloc(2 * CMS_WEBHOOK_KEY_MAX);

    if (key == NULL || again == NULL) {
        abort();
    }

    if (cms_webhook_key(s, len, key, &klen) == 0) {
        if (klen < CMS_WEBHOOK_KEY_MIN || klen > CMS_WEBHOOK_KEY_MAX) {
            abort();
        }

        plen = sizeof(CMS_WEBHOOK_PREFIX) - 1;
        n = encode(key, klen, again);

        while (len > plen && s[len - 1] == '=') {
            len--;
        }

        if (len - plen != n || memcmp(again, s + plen, n) != 0) {
            abort();
        }
    }

    free(key);
    free(again);
}


static void
check_sign(const char *secret, size_t slen, const unsigned char *body,
    size_t n)
{
    int            rc, refused;
    char          *hex, *v1;
    size_t         half;
    unsigned char  key[CMS_WEBHOOK_KEY_MIN];

    hex = malloc(CMS_WEBHOOK_HEX_LEN);
    v1 = malloc(CMS_WEBHOOK_V1_LEN);

    if (hex == NULL || v1 == NULL) {
        abort();
    }

    if (cms_webhook_sign_hex(secret, slen, body, n, hex) != 0) {
        abort();
    }

    memset(key, 7, sizeof(key));
    half = n / 2;

    rc = cms_webhook_sign_v1(key, sizeof(key), (const char *) body, half,
                             (const char *) body + half, n - half, body, n,
                             v1);

    refused = half == 0 || n - half == 0
              || memchr(body, '.', half) != NULL
              || memchr(body + half, '.', n - half) != NULL;

    if ((rc != 0) != refused
        || (rc == 0 && (memcmp(v1, "v1,", 3) != 0
                        || v1[CMS_WEBHOOK_V1_LEN - 1] != '=')))
    {
        abort();
    }

    free(hex);
    free(v1);
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char    *secret;
    size_t   cut, slen;

    if (size == 0) {
        return 0;
    }

    cut = 1 + data[0] % 100;
    slen = (size - 1 < cut) ? size - 1 : cut;

    /* "whsec_" then the fuzzer's bytes, in a buffer of the exact size */
    secret = malloc(sizeof(CMS_WEBHOOK_PREFIX) - 1 + slen);
    if (secret == NULL) {
        abort();
    }

    memcpy(secret, CMS_WEBHOOK_PREFIX, sizeof(CMS_WEBHOOK_PREFIX) - 1);
    memcpy(secret + sizeof(CMS_WEBHOOK_PREFIX) - 1, data + 1, slen);

    check_key(secret, sizeof(CMS_WEBHOOK_PREFIX) - 1 + slen);
    check_key((const char *) data + 1, size - 1);
    check_sign(secret, sizeof(CMS_WEBHOOK_PREFIX) - 1 + slen,
               data + 1 + slen, size - 1 - slen);

    free(secret);

    return 0;
}
