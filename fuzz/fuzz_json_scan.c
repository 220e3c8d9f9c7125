
/*
 * libFuzzer target for cms_json_depth_ok(): no out-of-bounds read, and the
 * answer agrees with a plain reference scanner written as a state machine.
 * cms_json_compact() on the same text: bounded, idempotent, same nesting,
 * and cms_json_loose() says exactly when it changes something.
 * First byte: max_depth; the rest: the JSON text.
 */


#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cms_json_scan.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


static size_t
ref_max_depth(const uint8_t *p, size_t len)
{
    int     in_str, esc;
    size_t  i, depth, max;

    in_str = 0;
    esc = 0;
    depth = 0;
    max = 0;

    for (i = 0; i < len; i++) {

        if (in_str) {
            if (esc) {
                esc = 0;

            } else if (p[i] == '\\') {
                esc = 1;

            } else if (p[i] == '"') {
                in_str = 0;
            }

            continue;
        }

        if (p[i] == '"') {
            in_str = 1;

        } else if (p[i] == '[' || p[i] == '{') {
            if (++depth > max) {
                max = depth;
            }

        } else if ((p[i] == ']' || p[i] == '}') && depth > 0) {
            depth--;
        }
    }

    return max;
}


/* compacting never grows the text, keeps the nesting, and is idempotent */
static void
check_compact(const uint8_t *p, size_t len)
{
    size_t    n, m;
    uint8_t  *a, *b;

    a = malloc(len + 1);
    b = malloc(len + 1);

    if (a == NULL || b == NULL) {
        abort();
    }

    n = cms_json_compact(p, len, a);
    m = cms_json_compact(a, n, b);

    if (cms_json_loose(p, len) != (n != len) || cms_json_loose(a, n)) {
        abort();
    }

    if (n > len || m != n || memcmp(a, b, n) != 0
        || ref_max_depth(a, n) != ref_max_depth(p, len))
    {
        abort();
    }

    free(a);
    free(b);
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t    max;
    unsigned  d;

    if (size == 0) {
        return 0;
    }

    d = data[0];
    data++;
    size--;

    max = ref_max_depth(data, size);

    if (cms_json_depth_ok(data, size, d) != (max <= d)) {
        abort();
    }

    if (cms_json_depth_ok(data, size, (unsigned) max) != 1) {
        abort();
    }

    if (max > 0 && cms_json_depth_ok(data, size, (unsigned) max - 1) != 0) {
        abort();
    }

    check_compact(data, size);

    return 0;
}
