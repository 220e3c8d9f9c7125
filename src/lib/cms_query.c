
/*
 * Query-string parameters: find, count, percent-decode.
 */


#include <string.h>
#include "cms_query.h"


static int cms_query_hex(unsigned char c);


size_t
cms_query_find(const char *args, size_t len, const char *name, size_t nlen,
    const char **val, size_t *vlen)
{
    size_t       n, plen;
    const char  *p, *end, *amp, *eq;

    n = 0;
    p = args;
    end = args + len;

    while (p < end) {
        amp = memchr(p, '&', (size_t) (end - p));
        if (amp == NULL) {
            amp = end;
        }

        plen = (size_t) (amp - p);
        eq = memchr(p, '=', plen);

        if ((size_t) ((eq ? eq : amp) - p) == nlen
            && memcmp(p, name, nlen) == 0)
        {
            if (n++ == 0) {
                *val = eq ? eq + 1 : amp;
                *vlen = eq ? (size_t) (amp - eq - 1) : 0;
            }
        }

        p = amp + 1;
    }

    return n;
}


size_t
cms_query_decode(const char *in, size_t len, char *out)
{
    int     hi, lo;
    size_t  i, n;

    n = 0;

    for (i = 0; i < len; i++) {
        if (in[i] == '+') {
            out[n++] = ' ';
            continue;
        }

        if (in[i] != '%') {
            out[n++] = in[i];
            continue;
        }

        if (len - i < 3) {
            return CMS_QUERY_BAD_ESCAPE;
        }

        hi = cms_query_hex((unsigned char) in[i + 1]);
        lo = cms_query_hex((unsigned char) in[i + 2]);

        if (hi < 0 || lo < 0) {
            return CMS_QUERY_BAD_ESCAPE;
        }

        out[n++] = (char) (hi << 4 | lo);
        i += 2;
    }

    return n;
}


/* the value of a hex digit, or -1 */
static int
cms_query_hex(unsigned char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }

    c |= 0x20;

    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }

    return -1;
}
