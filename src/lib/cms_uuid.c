
/*
 * UUID v7 generation, formatting and parsing; see cms_uuid.h.
 */


#include <string.h>

#include "cms_uuid.h"
#include "cms_hex.h"


/* bytes per dash-separated group of the 8-4-4-4-12 form */
static const size_t  cms_uuid_groups[] = { 4, 2, 2, 2, 6 };

#define CMS_UUID_NGROUPS  (sizeof(cms_uuid_groups) / sizeof(size_t))


/*
 * Builds a version 7 UUID: bits 0-47 are unix_ms (big-endian, higher bits
 * dropped), then version 7, 12 bits rand_a from rand[0] (low nibble) and
 * rand[1], variant 10, and 62 bits rand_b from rand[2] (low 6 bits) and
 * rand[3 .. 9].  Writes 36 characters to out.  Ordering within one
 * millisecond is random, not monotonic.
 */

void
cms_uuid7_format(uint64_t unix_ms,
    const unsigned char rand[CMS_UUID7_RAND_LEN], char out[CMS_UUID_LEN])
{
    int            i;
    unsigned char  b[CMS_UUID_BYTES];

    for (i = 0; i < 6; i++) {
        b[i] = (unsigned char) (unix_ms >> (40 - 8 * i));
    }

    b[6] = (unsigned char) (0x70 | (rand[0] & 0x0f));
    b[7] = rand[1];
    b[8] = (unsigned char) (0x80 | (rand[2] & 0x3f));
    memcpy(b + 9, rand + 3, 7);

    cms_uuid_format(b, out);
}


/*
 * Writes the 16 bytes of in as 36 lowercase characters, 8-4-4-4-12.
 */

void
cms_uuid_format(const unsigned char in[CMS_UUID_BYTES],
    char out[CMS_UUID_LEN])
{
    size_t  g;

    for (g = 0; g < CMS_UUID_NGROUPS; g++) {

        if (g > 0) {
            *out++ = '-';
        }

        cms_hex_encode(in, cms_uuid_groups[g], out);

        in += cms_uuid_groups[g];
        out += 2 * cms_uuid_groups[g];
    }
}


/*
 * Parses exactly the canonical form into 16 bytes.  Returns 0, or -1 when
 * len is not 36, a dash is missing or misplaced, or a digit is not hex.
 */

int
cms_uuid_parse(const char *s, size_t len, unsigned char out[CMS_UUID_BYTES])
{
    size_t  g, n;

    if (len != CMS_UUID_LEN) {
        return -1;
    }

    for (g = 0; g < CMS_UUID_NGROUPS; g++) {

        if (g > 0 && *s++ != '-') {
            return -1;
        }

        n = cms_uuid_groups[g];

        if (cms_hex_decode(s, 2 * n, out) != 0) {
            return -1;
        }

        s += 2 * n;
        out += n;
    }

    return 0;
}


/*
 * Returns 1 when s[0 .. len) is a canonical UUID, 0 otherwise.
 */

int
cms_uuid_valid(const char *s, size_t len)
{
    unsigned char  b[CMS_UUID_BYTES];

    return cms_uuid_parse(s, len, b) == 0;
}
