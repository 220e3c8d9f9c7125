
/*
 * Linear JSON nesting scan; see cms_json_scan.h.
 */


#include "cms_json_scan.h"


static size_t cms_json_skip_string(const unsigned char *p, size_t len,
    size_t i);


/*
 * Returns 1 when no array or object in p[0 .. len) nests deeper than
 * max_depth, 0 as soon as one does.  Never reads outside p[0 .. len).
 * A closer with no opener leaves the depth at 0: such input is invalid
 * JSON, and jansson stops at it before parsing anything after it.
 */

int
cms_json_depth_ok(const unsigned char *p, size_t len, unsigned max_depth)
{
    size_t  i, depth;

    depth = 0;

    for (i = 0; i < len; i++) {

        switch (p[i]) {

        case '"':
            i = cms_json_skip_string(p, len, i + 1);
            break;

        case '[':
        case '{':
            if (depth >= max_depth) {
                return 0;
            }

            depth++;
            break;

        case ']':
        case '}':
            if (depth > 0) {
                depth--;
            }

            break;

        default:
            break;
        }
    }

    return 1;
}


/*
 * Index of the quote closing the string whose body starts at i, or len when
 * it is unterminated.  A backslash always consumes the next byte, so "\""
 * and "\\" are handled without tracking escape state.
 */

static size_t
cms_json_skip_string(const unsigned char *p, size_t len, size_t i)
{
    while (i < len) {

        if (p[i] == '"') {
            return i;
        }

        if (p[i] == '\\') {
            i++;
        }

        i++;
    }

    return len;
}


size_t
cms_json_compact(const unsigned char *in, size_t len, unsigned char *out)
{
    size_t  i, end, n;

    n = 0;

    for (i = 0; i < len; i++) {

        switch (in[i]) {

        case ' ':
        case '\t':
        case '\n':
        case '\r':
            break;

        case '"':
            /* a string is copied whole, its closing quote included */
            end = cms_json_skip_string(in, len, i + 1);
            end = (end < len) ? end + 1 : len;

            while (i < end) {
                out[n++] = in[i++];
            }

            i--;
            break;

        default:
            out[n++] = in[i];
        }
    }

    return n;
}


int
cms_json_loose(const unsigned char *p, size_t len)
{
    size_t  i;

    for (i = 0; i < len; i++) {

        switch (p[i]) {

        case ' ':
        case '\t':
        case '\n':
        case '\r':
            return 1;

        case '"':
            i = cms_json_skip_string(p, len, i + 1);
            break;

        default:
            break;
        }
    }

    return 0;
}
