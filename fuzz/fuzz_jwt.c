
/*
 * libFuzzer target for cms_jwt.c.
 *
 * - verify never crashes or reads past the token, and never writes past
 *   the payload buffer, whatever its size;
 * - a token it accepts re-signs, from its decoded payload and the same key,
 *   to exactly itself (one accepted token per payload and key);
 * - a token signed from fuzz bytes verifies back to them, and changing any
 *   one byte of it, or verifying it under another key, refuses it.
 */


#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cms_jwt.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


/* key bytes 0..31, as in t/unit/test_jwt.c, so its vector is a seed */

static unsigned char  key[CMS_JWT_KEY_LEN] = {
    0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15,
    16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
};


static void
check_verify(const uint8_t *data, size_t size)
{
    int             rc;
    char           *tok, *again;
    size_t          n, plen, cap;
    unsigned char  *payload;

    /* exact sizes, so ASAN sees any read or write out of bounds */

    tok = malloc(size ? size : 1);
    memcpy(tok, data, size);

    cap = size % 97 == 0 ? CMS_JWT_MAX_PAYLOAD : size % 97;
    payload = malloc(cap);

    rc = cms_jwt_verify(key, tok, size, payload, cap, &plen);

    if (rc != CMS_JWT_OK && rc != CMS_JWT_MALFORMED
        && rc != CMS_JWT_BAD_ALG && rc != CMS_JWT_BAD_SIGNATURE)
    {
        abort();
    }

    if (rc == CMS_JWT_OK) {
        again = malloc(CMS_JWT_MAX_LEN);
        n = cms_jwt_sign(key, (char *) payload, plen, again,
                         CMS_JWT_MAX_LEN);

        if (n != size || memcmp(again, data, size) != 0) {
            abort();
        }

        free(again);
    }

    free(payload);
    free(tok);
}


static void
check_sign(const uint8_t *data, size_t size)
{
    char           *tok;
    size_t          n, plen, pos;
    unsigned char  *payload, other[CMS_JWT_KEY_LEN];

    if (size == 0 || size > CMS_JWT_MAX_PAYLOAD) {
        return;
    }

    tok = malloc(CMS_JWT_MAX_LEN);
    payload = malloc(size);

    n = cms_jwt_sign(key, (const char *) data, size, tok, CMS_JWT_MAX_LEN);

    if (n == 0
        || cms_jwt_verify(key, tok, n, payload, size, &plen) != CMS_JWT_OK
        || plen != size || memcmp(payload, data, size) != 0)
    {
        abort();
    }

    memcpy(other, key, sizeof(other));
    other[data[0] % CMS_JWT_KEY_LEN] ^= (unsigned char) (1 + data[size - 1]
                                                         % 255);

    if (cms_jwt_verify(other, tok, n, payload, size, &plen) == CMS_JWT_OK) {
        abort();
    }

    pos = ((size_t) data[0] << 8 | data[size - 1]) % n;

    if (tok[pos] != (char) data[size / 2]) {
        tok[pos] = (char) data[size / 2];

        if (cms_jwt_verify(key, tok, n, payload, size, &plen) == CMS_JWT_OK)
        {
            abort();
        }
    }

    free(payload);
    free(tok);
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_verify(data, size);
    check_sign(data, size);

    return 0;
}
