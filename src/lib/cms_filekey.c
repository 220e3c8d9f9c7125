
/*
 * Storage keys (cms_filekey.h): one pass over the key with a byte table.
 */


#include "cms_filekey.h"


/* 1: a byte a segment may hold ('.' included; its place is checked) */
static const unsigned char  cms_filekey_byte[256] = {
    ['-'] = 1, ['.'] = 1, ['_'] = 1,
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1,
    ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
    ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1,
    ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1,
    ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1,
    ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
    ['Y'] = 1, ['Z'] = 1,
    ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
    ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1,
    ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1,
    ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
    ['y'] = 1, ['z'] = 1
};


int
cms_filekey_parse(const char *s, size_t len, cms_filekey_t *k)
{
    size_t          i, seg, dot;
    unsigned char   c;

    if (s == NULL || len == 0 || len > CMS_FILEKEY_MAX) {
        return 0;
    }

    seg = 0;        /* where the current segment starts */
    dot = 0;        /* after its last '.', 0 for none */

    for (i = 0; i < len; i++) {
        c = (unsigned char) s[i];

        if (c == '/') {
            if (i == seg) {
                /* an empty segment: a leading '/' or "//" */
                return 0;
            }

            seg = i + 1;
            dot = 0;
            continue;
        }

        if (!cms_filekey_byte[c]) {
            return 0;
        }

        if (c == '.') {
            if (i == seg) {
                /* ".", "..", a hidden file */
                return 0;
            }

            dot = i + 1;
        }
    }

    if (seg == len) {
        /* a trailing '/' */
        return 0;
    }

    k->name = seg;
    k->ext = dot ? dot : len;
    k->ext_len = dot ? len - dot : 0;

    return 1;
}
