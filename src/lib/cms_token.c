
/*
 * Single-use account tokens; see cms_token.h.
 */


#include <string.h>

#include "cms_token.h"
#include "cms_kdf.h"
#include "cms_base64url.h"


#define CMS_TOKEN_MAC_LABEL     "cms token mac:"
#define CMS_TOKEN_ID_LABEL      "cms token id:"
#define CMS_TOKEN_RANDOM_LABEL  "cms token random:"


static size_t cms_token_kind_len(const char *kind);
static int cms_token_mac(const unsigned char *key, const char *kind,
    size_t kind_len, const unsigned char *payload,
    unsigned char mac[CMS_KDF_LEN]);


size_t
cms_token_make(const unsigned char key[CMS_TOKEN_KEY_LEN], const char *kind,
    int64_t expires, const unsigned char random[CMS_TOKEN_RANDOM_LEN],
    char *out, size_t out_size)
{
    int            i;
    size_t         klen;
    uint64_t       e;
    unsigned char  raw[CMS_TOKEN_RAW_LEN], mac[CMS_KDF_LEN];

    klen = cms_token_kind_len(kind);

    if (klen == 0 || out_size < CMS_TOKEN_MAX_LEN) {
        return 0;
    }

    e = (uint64_t) expires;

    for (i = 7; i >= 0; i--) {
        raw[i] = (unsigned char) (e & 0xff);
        e >>= 8;
    }

    memcpy(raw + 8, random, CMS_TOKEN_RANDOM_LEN);

    if (cms_token_mac(key, kind, klen, raw, mac) != 0) {
        return 0;
    }

    memcpy(raw + 8 + CMS_TOKEN_RANDOM_LEN, mac, CMS_TOKEN_MAC_LEN);

    memcpy(out, kind, klen);
    out[klen] = '_';

    return klen + 1 + cms_base64url_encode(raw, sizeof(raw), out + klen + 1);
}


/* long: the form, the MAC, then the time: each refusal its own code */
int
cms_token_check(const unsigned char key[CMS_TOKEN_KEY_LEN], const char *kind,
    const char *token, size_t len, int64_t now, int64_t *expires)
{
    int            i;
    size_t         klen, n;
    uint64_t       e;
    unsigned char  diff, raw[CMS_TOKEN_RAW_LEN + 2], mac[CMS_KDF_LEN];

    klen = cms_token_kind_len(kind);

    if (klen == 0 || token == NULL
        || len != klen + 1 + CMS_TOKEN_BODY_LEN
        || memcmp(token, kind, klen) != 0 || token[klen] != '_')
    {
        return CMS_TOKEN_MALFORMED;
    }

    /* strict decoding: one text per byte string (no stray trailing bits) */
    if (cms_base64url_decode(token + klen + 1, CMS_TOKEN_BODY_LEN, raw, &n)
        != 0
        || n != CMS_TOKEN_RAW_LEN)
    {
        return CMS_TOKEN_MALFORMED;
    }

    if (cms_token_mac(key, kind, klen, raw, mac) != 0) {
        return CMS_TOKEN_FAILED;
    }

    diff = 0;

    for (i = 0; i < CMS_TOKEN_MAC_LEN; i++) {
        diff |= mac[i] ^ raw[8 + CMS_TOKEN_RANDOM_LEN + i];
    }

    if (diff != 0) {
        return CMS_TOKEN_FORGED;
    }

    e = 0;

    for (i = 0; i < 8; i++) {
        e = (e << 8) | raw[i];
    }

    if ((int64_t) e <= now) {
        return CMS_TOKEN_EXPIRED;
    }

    if (expires != NULL) {
        *expires = (int64_t) e;
    }

    return CMS_TOKEN_OK;
}


int
cms_token_hash(const unsigned char key[CMS_TOKEN_KEY_LEN], const char *token,
    size_t len, unsigned char out[CMS_TOKEN_HASH_LEN])
{
    unsigned char  msg[sizeof(CMS_TOKEN_ID_LABEL) + CMS_TOKEN_MAX_LEN];

    if (len > CMS_TOKEN_MAX_LEN) {
        memset(out, 0, CMS_TOKEN_HASH_LEN);
        return -1;
    }

    memcpy(msg, CMS_TOKEN_ID_LABEL, sizeof(CMS_TOKEN_ID_LABEL) - 1);
    memcpy(msg + sizeof(CMS_TOKEN_ID_LABEL) - 1, token, len);

    return cms_hmac_sha256(key, CMS_TOKEN_KEY_LEN, msg,
                           sizeof(CMS_TOKEN_ID_LABEL) - 1 + len, out);
}


int
cms_token_random_for(const unsigned char key[CMS_TOKEN_KEY_LEN],
    const char *id, size_t id_len, unsigned char random[CMS_TOKEN_RANDOM_LEN])
{
    unsigned char  mac[CMS_KDF_LEN];
    unsigned char  msg[sizeof(CMS_TOKEN_RANDOM_LABEL) + CMS_TOKEN_ID_MAX];

    if (id_len > CMS_TOKEN_ID_MAX) {
        return -1;
    }

    memcpy(msg, CMS_TOKEN_RANDOM_LABEL, sizeof(CMS_TOKEN_RANDOM_LABEL) - 1);
    memcpy(msg + sizeof(CMS_TOKEN_RANDOM_LABEL) - 1, id, id_len);

    if (cms_hmac_sha256(key, CMS_TOKEN_KEY_LEN, msg,
                        sizeof(CMS_TOKEN_RANDOM_LABEL) - 1 + id_len, mac)
        != 0)
    {
        return -1;
    }

    memcpy(random, mac, CMS_TOKEN_RANDOM_LEN);
    memset(mac, 0, sizeof(mac));

    return 0;
}


/* 2 to 8 lowercase ASCII letters, else 0 */
static size_t
cms_token_kind_len(const char *kind)
{
    size_t  n;

    if (kind == NULL) {
        return 0;
    }

    for (n = 0; kind[n] != '\0'; n++) {
        if (n == CMS_TOKEN_KIND_MAX || kind[n] < 'a' || kind[n] > 'z') {
            return 0;
        }
    }

    return n >= CMS_TOKEN_KIND_MIN ? n : 0;
}


/* HMAC over the label, the kind, "_" and expiry + random (24 bytes) */
static int
cms_token_mac(const unsigned char *key, const char *kind, size_t kind_len,
    const unsigned char *payload, unsigned char mac[CMS_KDF_LEN])
{
    size_t         n;
    unsigned char  msg[sizeof(CMS_TOKEN_MAC_LABEL) + CMS_TOKEN_KIND_MAX + 1
                       + 8 + CMS_TOKEN_RANDOM_LEN];

    n = sizeof(CMS_TOKEN_MAC_LABEL) - 1;
    memcpy(msg, CMS_TOKEN_MAC_LABEL, n);
    memcpy(msg + n, kind, kind_len);
    n += kind_len;
    msg[n++] = '_';
    memcpy(msg + n, payload, 8 + CMS_TOKEN_RANDOM_LEN);
    n += 8 + CMS_TOKEN_RANDOM_LEN;

    return cms_hmac_sha256(key, CMS_TOKEN_KEY_LEN, msg, n, mac);
}
