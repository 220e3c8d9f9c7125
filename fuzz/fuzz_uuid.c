
/*
 * libFuzzer target for cms_uuid.c and cms_hex.c.
 *
 * - cms_uuid_parse() agrees with a reference check of the canonical form,
 *   and what it accepts formats back to the input, lowercased;
 * - a v7 UUID built from the first 18 bytes parses, with version 7,
 *   variant 10, the low 48 bits of the time and the random bits in place;
 * - hex decoding accepts exactly what encoding (any case) produces.
 */


#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cms_uuid.h"
#include "cms_hex.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


static int
is_hex(uint8_t c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')
           || (c >= 'A' && c <= 'F');
}


static int
lower(uint8_t c)
{
    return (c >= 'A' && c <= 'Z') ? c + 32 : c;
}


static int
ref_uuid_valid(const uint8_t *s, size_t len)
{
    size_t  i;

    if (len != 36) {
        return 0;
    }

    for (i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-') {
                return 0;
            }

        } else if (!is_hex(s[i])) {
            return 0;
        }
    }

    return 1;
}


static void
check_parse(const uint8_t *data, size_t size)
{
    int            ok;
    char           out[CMS_UUID_LEN];
    size_t         i;
    unsigned char  b[CMS_UUID_BYTES];

    ok = cms_uuid_parse((const char *) data, size, b) == 0;

    if (ok != ref_uuid_valid(data, size)
        || ok != cms_uuid_valid((const char *) data, size))
    {
        abort();
    }

    if (!ok) {
        return;
    }

    cms_uuid_format(b, out);

    for (i = 0; i < CMS_UUID_LEN; i++) {
        if (out[i] != lower(data[i])) {
            abort();
        }
    }
}


static void
check_uuid7(const uint8_t *data, size_t size)
{
    int            i;
    char           out[CMS_UUID_LEN];
    uint64_t       ms, got;
    unsigned char  b[CMS_UUID_BYTES];

    if (size < 18) {
        return;
    }

    ms = 0;

    for (i = 0; i < 8; i++) {
        ms = ms << 8 | data[i];
    }

    cms_uuid7_format(ms, data + 8, out);

    if (cms_uuid_parse(out, CMS_UUID_LEN, b) != 0) {
        abort();
    }

    got = 0;

    for (i = 0; i < 6; i++) {
        got = got << 8 | b[i];
    }

    if (got != (ms & 0xffffffffffffULL)
        || b[6] != (0x70 | (data[8] & 0x0f)) || b[7] != data[9]
        || b[8] != (0x80 | (data[10] & 0x3f))
        || memcmp(b + 9, data + 11, 7) != 0)
    {
        abort();
    }
}


static void
check_hex(const uint8_t *data, size_t size)
{
    char           *enc;
    size_t          i;
    unsigned char  *dec;

    enc = malloc(size ? 2 * size : 1);
    dec = malloc(size ? size : 1);

    if (enc == NULL || dec == NULL) {
        abort();
    }

    cms_hex_encode(data, size, enc);

    if (cms_hex_decode(enc, 2 * size, dec) != 0
        || memcmp(dec, data, size) != 0)
    {
        abort();
    }

    /* decoding the input itself: accepted iff even length and all hex */

    for (i = 0; i < size && is_hex(data[i]); i++) {
        /* void */
    }

    if ((cms_hex_decode((const char *) data, size, dec) == 0)
        != (i == size && size % 2 == 0))
    {
        abort();
    }

    free(enc);
    free(dec);
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_parse(data, size);
    check_uuid7(data, size);
    check_hex(data, size);

    return 0;
}
