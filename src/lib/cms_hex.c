
/*
 * Hexadecimal encoding and decoding; see cms_hex.h.
 */


#include "cms_hex.h"


static int cms_hex_value(unsigned char c);


/*
 * Writes 2 * n lowercase hex characters to out (no NUL).
 */

void
cms_hex_encode(const unsigned char *in, size_t n, char *out)
{
    size_t             i;
    static const char  digits[] = "0123456789abcdef";

    for (i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 0x0f];
    }
}


/*
 * Decodes n hex characters (any case) into n / 2 bytes of out.
 * Returns 0, or -1 on odd n or a non-hex character (out partly written).
 */

int
cms_hex_decode(const char *in, size_t n, unsigned char *out)
{
    int     hi, lo;
    size_t  i;

    if (n % 2 != 0) {
        return -1;
    }

    for (i = 0; i < n; i += 2) {
        hi = cms_hex_value((unsigned char) in[i]);
        lo = cms_hex_value((unsigned char) in[i + 1]);

        if (hi < 0 || lo < 0) {
            return -1;
        }

        out[i / 2] = (unsigned char) (hi << 4 | lo);
    }

    return 0;
}


/* value of one hex digit, -1 for anything else */

static int
cms_hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }

    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }

    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }

    return -1;
}
