
/*
 * libFuzzer target for cms_base64url.c.
 *
 * - decode never writes past decoded_max(n), and whatever it accepts
 *   re-encodes to exactly the input (strictness: one encoding per value);
 * - encode of arbitrary bytes has encoded_len(n) characters and decodes
 *   back to the bytes.
 */


#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cms_base64url.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


static void
check_decode(const uint8_t *data, size_t size)
{
    char           *enc;
    size_t          n, len, max;
    unsigned char  *dec;

    /* exact sizes, so ASAN catches a write past decoded_max */
    max = cms_base64url_decoded_max(size);
    dec = malloc(max ? max : 1);
    enc = malloc(size ? size : 1);

    if (dec == NULL || enc == NULL) {
        abort();
    }

    if (cms_base64url_decode((const char *) data, size, dec, &len) == 0) {

        if (len != max) {
            abort();
        }

        n = cms_base64url_encode(dec, len, enc);

        if (n != size || memcmp(enc, data, size) != 0) {
            abort();
        }
    }

    free(dec);
    free(enc);
}


static void
check_encode(const uint8_t *data, size_t size)
{
    char           *enc;
    size_t          n, len, elen;
    unsigned char  *dec;

    elen = cms_base64url_encoded_len(size);
    enc = malloc(elen ? elen : 1);
    dec = malloc(size ? size : 1);

    if (dec == NULL || enc == NULL) {
        abort();
    }

    n = cms_base64url_encode(data, size, enc);

    if (n != cms_base64url_encoded_len(size)
        || cms_base64url_decode(enc, n, dec, &len) != 0
        || len != size || memcmp(dec, data, size) != 0)
    {
        abort();
    }

    free(dec);
    free(enc);
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_decode(data, size);
    check_encode(data, size);

    return 0;
}
