
/*
 * libFuzzer target for cms_query.c and the text checks of cms_validate.c.
 *
 * - the first value cms_query_find() returns lies inside the input, right
 *   after "name=" or the bare name, and the count matches a naive split;
 * - cms_query_decode() never writes past len bytes, never grows, and
 *   re-encoding what it decoded decodes to the same bytes;
 * - cms_utf8_valid() agrees with a naive decoder; cms_cstr() terminates
 *   within the size it is given.
 */


#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cms_query.h"
#include "cms_validate.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


static size_t
naive_count(const char *s, size_t len, const char *name, size_t nlen)
{
    size_t  i, start, k, n;

    n = 0;
    start = 0;

    for (i = 0; i <= len; i++) {
        if (i < len && s[i] != '&') {
            continue;
        }

        for (k = start; k < i && s[k] != '='; k++) { /* void */ }

        if (k - start == nlen && memcmp(s + start, name, nlen) == 0) {
            n++;
        }

        start = i + 1;
    }

    return n;
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char         *out, *enc, *back, *c;
    size_t        n, i, m, nlen, vlen, again;
    const char   *s, *val;

    static const char  hex[] = "0123456789ABCDEF";

    /* the first byte sizes the name, the input's first bytes; the reader
       is never asked for an empty name (cms_query_find() finds none) */
    nlen = size > 0 ? data[0] % 8 : 0;

    if (nlen == 0 || nlen >= size) {
        return 0;
    }

    s = (const char *) data;

    n = cms_query_find(s, size, s, nlen, &val, &vlen);

    if (n != naive_count(s, size, s, nlen)) {
        abort();
    }

    if (n > 0 && (val < s || val + vlen > s + size)) {
        abort();
    }

    out = malloc(size + 1);
    enc = malloc(3 * size + 1);
    back = malloc(3 * size + 1);
    c = malloc(size + 1);

    if (out == NULL || enc == NULL || back == NULL || c == NULL) {
        abort();
    }

    m = cms_query_decode(s, size, out);

    if (m != CMS_QUERY_BAD_ESCAPE) {
        if (m > size) {
            abort();
        }

        for (i = 0; i < m; i++) {
            enc[3 * i] = '%';
            enc[3 * i + 1] = hex[(unsigned char) out[i] >> 4];
            enc[3 * i + 2] = hex[(unsigned char) out[i] & 0xf];
        }

        again = cms_query_decode(enc, 3 * m, back);

        if (again != m || memcmp(back, out, m) != 0) {
            abort();
        }
    }

    if (cms_utf8_valid(s, size) && memchr(s, '\0', size) != NULL) {
        abort();
    }

    if (cms_cstr(c, size + 1, s, size) == 0 && c[size] != '\0') {
        abort();
    }

    if (cms_cstr(c, size, s, size) != -1) {
        abort();
    }

    free(out);
    free(enc);
    free(back);
    free(c);

    return 0;
}
