
/*
 * Fixed-width base62 big-number encoding; see cms_base62.h.
 */


#include <stdint.h>
#include <string.h>

#include "cms_base62.h"


static unsigned cms_base62_divmod(unsigned char *num, size_t n);
static int cms_base62_value(unsigned char c);
static void cms_base62_wipe(void *p, size_t n);


static const char  cms_base62_digits[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";


/*
 * Encodes the n-byte big-endian number in as exactly width base62 digits,
 * most significant first.  Returns 0, or -1 if n is too large for the
 * scratch buffer or the number does not fit in width digits.
 */

int
cms_base62_encode(const unsigned char *in, size_t n, char *out, size_t width)
{
    int            rc;
    size_t         i;
    unsigned char  num[CMS_BASE62_MAX_BYTES];

    if (n > CMS_BASE62_MAX_BYTES) {
        return -1;
    }

    memcpy(num, in, n);

    for (i = width; i > 0; i--) {
        out[i - 1] = cms_base62_digits[cms_base62_divmod(num, n)];
    }

    rc = 0;

    for (i = 0; i < n; i++) {
        if (num[i] != 0) {
            rc = -1;
        }
    }

    cms_base62_wipe(num, n);

    return rc;
}


/*
 * Decodes exactly n base62 digits into the out_n-byte big-endian number
 * out.  Returns 0, or -1 on a non-base62 character or on overflow.
 *
 * Up to 8 digits at a time: out = out * 62^k + (their value), one pass
 * over out a group rather than a digit (a key's 43 digits in 6 passes);
 * 255 * 62^8 plus the carry stays far below 2^64.  The value only grows,
 * so a group that overflows means the number does not fit, as a digit
 * would.
 */

int
cms_base62_decode(const char *in, size_t n, unsigned char *out, size_t out_n)
{
    int       v;
    size_t    i, j, k;
    uint64_t  acc, mul;

    memset(out, 0, out_n);

    for (i = 0; i < n; i += k) {
        k = n - i < 8 ? n - i : 8;
        acc = 0;
        mul = 1;

        for (j = i; j < i + k; j++) {
            v = cms_base62_value((unsigned char) in[j]);

            if (v < 0) {
                return -1;
            }

            acc = acc * 62 + (unsigned) v;
            mul *= 62;
        }

        /* from the least significant byte up */

        for (j = out_n; j > 0; j--) {
            acc += (uint64_t) out[j - 1] * mul;
            out[j - 1] = (unsigned char) (acc & 0xff);
            acc >>= 8;
        }

        if (acc != 0) {
            return -1;
        }
    }

    return 0;
}


/*
 * Returns 0 when in[0 .. n) is base62 and its value fits in out_n bytes,
 * -1 otherwise, or when out_n exceeds CMS_BASE62_MAX_BYTES.
 */

int
cms_base62_check(const char *in, size_t n, size_t out_n)
{
    int            rc;
    unsigned char  num[CMS_BASE62_MAX_BYTES];

    if (out_n > CMS_BASE62_MAX_BYTES) {
        return -1;
    }

    rc = cms_base62_decode(in, n, num, out_n);
    cms_base62_wipe(num, out_n);

    return rc;
}


/* num /= 62 in place, returns the remainder */

static unsigned
cms_base62_divmod(unsigned char *num, size_t n)
{
    size_t    i;
    unsigned  acc;

    acc = 0;

    for (i = 0; i < n; i++) {
        acc = acc << 8 | num[i];
        num[i] = (unsigned char) (acc / 62);
        acc %= 62;
    }

    return acc;
}


/* digit value of c, -1 outside the alphabet */

static int
cms_base62_value(unsigned char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }

    if (c >= 'A' && c <= 'Z') {
        return c - 'A' + 10;
    }

    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 36;
    }

    return -1;
}


/* memset through a volatile pointer, so the store is not optimised away */

static void
cms_base62_wipe(void *p, size_t n)
{
    volatile unsigned char  *v;

    v = p;

    while (n--) {
        *v++ = 0;
    }
}
