
/*
 * Unpadded base64url with strict decoding; see cms_base64url.h.
 */


#include <stdint.h>

#include "cms_base64url.h"


static int cms_base64url_value(unsigned char c);


static const char  cms_base64url_digits[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";


/*
 * Characters needed to encode n bytes without padding.
 */

size_t
cms_base64url_encoded_len(size_t n)
{
    static const size_t  tail[3] = { 0, 2, 3 };

    return n / 3 * 4 + tail[n % 3];
}


/*
 * Bytes decoded from n characters; exact when n is a valid length, which
 * 4k + 1 is not (decode refuses it).
 */

size_t
cms_base64url_decoded_max(size_t n)
{
    static const size_t  tail[4] = { 0, 0, 1, 2 };

    return n / 4 * 3 + tail[n % 4];
}


/*
 * Encodes n bytes of in to out, no padding.  Returns the characters
 * written, cms_base64url_encoded_len(n).
 */

size_t
cms_base64url_encode(const unsigned char *in, size_t n, char *out)
{
    char      *p;
    size_t     i;
    uint32_t   v;

    p = out;

    for (i = 0; i + 3 <= n; i += 3) {
        v = (uint32_t) in[i] << 16 | (uint32_t) in[i + 1] << 8 | in[i + 2];

        *p++ = cms_base64url_digits[v >> 18];
        *p++ = cms_base64url_digits[v >> 12 & 0x3f];
        *p++ = cms_base64url_digits[v >> 6 & 0x3f];
        *p++ = cms_base64url_digits[v & 0x3f];
    }

    if (n - i == 1) {
        v = (uint32_t) in[i] << 16;

        *p++ = cms_base64url_digits[v >> 18];
        *p++ = cms_base64url_digits[v >> 12 & 0x3f];

    } else if (n - i == 2) {
        v = (uint32_t) in[i] << 16 | (uint32_t) in[i + 1] << 8;

        *p++ = cms_base64url_digits[v >> 18];
        *p++ = cms_base64url_digits[v >> 12 & 0x3f];
        *p++ = cms_base64url_digits[v >> 6 & 0x3f];
    }

    return (size_t) (p - out);
}


/*
 * Strictly decodes n characters of in to out.  Returns 0 and sets *out_len,
 * or -1 on a bad character, a 4k + 1 length or non-zero trailing bits.
 */

int
cms_base64url_decode(const char *in, size_t n, unsigned char *out,
    size_t *out_len)
{
    int       v;
    size_t    i, o;
    uint32_t  acc;
    unsigned  bits;

    if (n % 4 == 1) {
        return -1;
    }

    acc = 0;
    bits = 0;
    o = 0;

    for (i = 0; i < n; i++) {
        v = cms_base64url_value((unsigned char) in[i]);

        if (v < 0) {
            return -1;
        }

        /* acc keeps only the bits not yet emitted, at most 12 */

        acc = acc << 6 | (uint32_t) v;
        bits += 6;

        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char) (acc >> bits);
            acc &= ((uint32_t) 1 << bits) - 1;
        }
    }

    /* the 2 or 4 bits left over must be zero: one encoding per input */

    if (acc != 0) {
        return -1;
    }

    *out_len = o;

    return 0;
}


/* 6-bit value of c, -1 outside the base64url alphabet */

static int
cms_base64url_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }

    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }

    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }

    if (c == '-') {
        return 62;
    }

    if (c == '_') {
        return 63;
    }

    return -1;
}
