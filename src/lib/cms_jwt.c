
/*
 * HS256 JSON Web Tokens; see cms_jwt.h.
 */


#include <string.h>
#include <openssl/crypto.h>

#include "cms_jwt.h"
#include "cms_kdf.h"
#include "cms_base64url.h"


typedef struct {
    const char  *header;
    size_t       header_len;
    const char  *payload;
    size_t       payload_len;
    const char  *sig;
    size_t       sig_len;
} cms_jwt_parts_t;


static int cms_jwt_split(const char *token, size_t len, cms_jwt_parts_t *t);
static int cms_jwt_segment_valid(const char *s, size_t n);
static int cms_jwt_check_sig(const unsigned char key[CMS_JWT_KEY_LEN],
    const char *token, const cms_jwt_parts_t *t);


/*
 * Writes CMS_JWT_HEADER "." base64url(payload_json) "." base64url(HMAC) to
 * out (no NUL).  Returns the token length, or 0 when out_size is too small,
 * the payload is empty or over CMS_JWT_MAX_PAYLOAD bytes (the token would
 * exceed CMS_JWT_MAX_LEN) or HMAC fails.  On 0, out may be partly
 * written.
 */

size_t
cms_jwt_sign(const unsigned char key[CMS_JWT_KEY_LEN],
    const char *payload_json, size_t len, char *out, size_t out_size)
{
    char           *p;
    size_t          n, signed_len;
    unsigned char   mac[CMS_KDF_LEN];

    /* an empty payload segment is one verify refuses */

    if (len == 0 || len > CMS_JWT_MAX_PAYLOAD) {
        return 0;
    }

    signed_len = CMS_JWT_HEADER_LEN + 1 + cms_base64url_encoded_len(len);
    n = signed_len + 1 + CMS_JWT_SIG_LEN;

    if (out_size < n) {
        return 0;
    }

    p = out;
    memcpy(p, CMS_JWT_HEADER, CMS_JWT_HEADER_LEN);
    p += CMS_JWT_HEADER_LEN;
    *p++ = '.';
    p += cms_base64url_encode((const unsigned char *) payload_json, len, p);

    if (cms_hmac_sha256(key, CMS_JWT_KEY_LEN, (const unsigned char *) out,
                        signed_len, mac)
        != 0)
    {
        return 0;
    }

    *p++ = '.';
    (void) cms_base64url_encode(mac, sizeof(mac), p);

    OPENSSL_cleanse(mac, sizeof(mac));

    return n;
}


/*
 * Verifies token[0 .. len) under key and decodes its payload; the checks
 * and return codes are listed in cms_jwt.h.  *payload_len is set only on
 * CMS_JWT_OK; payload may be partly written otherwise.
 */

int
cms_jwt_verify(const unsigned char key[CMS_JWT_KEY_LEN], const char *token,
    size_t len, unsigned char *payload, size_t payload_size,
    size_t *payload_len)
{
    int              rc;
    cms_jwt_parts_t  t;

    if (len == 0 || len > CMS_JWT_MAX_LEN
        || cms_jwt_split(token, len, &t) != 0)
    {
        return CMS_JWT_MALFORMED;
    }

    if (!cms_jwt_segment_valid(t.header, t.header_len)
        || !cms_jwt_segment_valid(t.payload, t.payload_len)
        || !cms_jwt_segment_valid(t.sig, t.sig_len))
    {
        return CMS_JWT_MALFORMED;
    }

    if (t.header_len != CMS_JWT_HEADER_LEN
        || memcmp(t.header, CMS_JWT_HEADER, CMS_JWT_HEADER_LEN) != 0)
    {
        return CMS_JWT_BAD_ALG;
    }

    rc = cms_jwt_check_sig(key, token, &t);

    if (rc != CMS_JWT_OK) {
        return rc;
    }

    /* trusted from here on: the signature covers the payload segment */

    if (cms_base64url_decoded_max(t.payload_len) > payload_size
        || cms_base64url_decode(t.payload, t.payload_len, payload,
                                payload_len)
           != 0)
    {
        return CMS_JWT_MALFORMED;
    }

    return CMS_JWT_OK;
}


/* exactly three non-empty dot-separated segments; 0 or -1 */

static int
cms_jwt_split(const char *token, size_t len, cms_jwt_parts_t *t)
{
    const char  *end, *d1, *d2;

    end = token + len;

    d1 = memchr(token, '.', len);

    if (d1 == NULL) {
        return -1;
    }

    d2 = memchr(d1 + 1, '.', (size_t) (end - d1 - 1));

    if (d2 == NULL || memchr(d2 + 1, '.', (size_t) (end - d2 - 1)) != NULL) {
        return -1;
    }

    t->header = token;
    t->header_len = (size_t) (d1 - token);
    t->payload = d1 + 1;
    t->payload_len = (size_t) (d2 - d1 - 1);
    t->sig = d2 + 1;
    t->sig_len = (size_t) (end - d2 - 1);

    if (t->header_len == 0 || t->payload_len == 0 || t->sig_len == 0) {
        return -1;
    }

    return 0;
}


/*
 * 1 when s[0 .. n) is what cms_base64url_decode() accepts: the alphabet, a
 * length other than 4k + 1, zero unused bits in the last character.  It
 * checks without decoding, so no buffer is needed for an untrusted segment.
 */

static int
cms_jwt_segment_valid(const char *s, size_t n)
{
    size_t         i;
    unsigned char  c, v;

    if (n % 4 == 1) {
        return 0;
    }

    v = 0;

    for (i = 0; i < n; i++) {
        c = (unsigned char) s[i];

        if (c >= 'A' && c <= 'Z') {
            v = (unsigned char) (c - 'A');

        } else if (c >= 'a' && c <= 'z') {
            v = (unsigned char) (c - 'a' + 26);

        } else if (c >= '0' && c <= '9') {
            v = (unsigned char) (c - '0' + 52);

        } else if (c == '-' || c == '_') {
            v = (c == '-') ? 62 : 63;

        } else {
            return 0;
        }
    }

    /* the last character carries 4 (n % 4 == 2) or 2 (== 3) unused bits */

    if ((n % 4 == 2 && (v & 0x0f) != 0) || (n % 4 == 3 && (v & 0x03) != 0)) {
        return 0;
    }

    return 1;
}


/* CMS_JWT_OK when t->sig is the HMAC of "header.payload" under key */

static int
cms_jwt_check_sig(const unsigned char key[CMS_JWT_KEY_LEN],
    const char *token, const cms_jwt_parts_t *t)
{
    int            rc;
    size_t         n;
    unsigned char  mac[CMS_KDF_LEN], sig[CMS_KDF_LEN];

    /* a 43-character segment decodes to exactly 32 bytes */

    if (t->sig_len != CMS_JWT_SIG_LEN
        || cms_base64url_decode(t->sig, t->sig_len, sig, &n) != 0
        || n != CMS_KDF_LEN)
    {
        return CMS_JWT_BAD_SIGNATURE;
    }

    if (cms_hmac_sha256(key, CMS_JWT_KEY_LEN, (const unsigned char *) token,
                        (size_t) (t->sig - 1 - token), mac)
        != 0)
    {
        return CMS_JWT_BAD_SIGNATURE;
    }

    rc = (CRYPTO_memcmp(mac, sig, CMS_KDF_LEN) == 0) ? CMS_JWT_OK
                                                     : CMS_JWT_BAD_SIGNATURE;

    OPENSSL_cleanse(mac, sizeof(mac));

    return rc;
}
