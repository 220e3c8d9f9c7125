
/*
 * Storage keys (cms_filekey.h): one pass over the key with a byte table.
 */


#include <string.h>
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



/* s[0 .. n) of digits 0-9 a-f, and '-' where a UUID has them (uuid) */
static int
cms_filekey_hex(const char *s, size_t n, int uuid)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (uuid && (i == 8 || i == 13 || i == 18 || i == 23)) {
            if (s[i] != '-') {
                return 0;
            }

        } else if (!((s[i] >= '0' && s[i] <= '9')
                     || (s[i] >= 'a' && s[i] <= 'f')))
        {
            return 0;
        }
    }

    return 1;
}


/* s[0 .. n) "<name>.<ext>": the name "digits" long as hex() says, the
   extension 1 to 10 of a-z 0-9 */
static int
cms_filekey_file(const char *s, size_t n, size_t digits, int uuid)
{
    size_t  i;

    if (n < digits + 2 || n > digits + 11 || s[digits] != '.'
        || !cms_filekey_hex(s, digits, uuid))
    {
        return 0;
    }

    for (i = digits + 1; i < n; i++) {
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z'))) {
            return 0;
        }
    }

    return 1;
}


int
cms_filekey_ours(const char *s, size_t len)
{
    if (s == NULL) {
        return 0;
    }

    /* "users/" uuid "/" 32 hex "." ext */
    if (len > 6 + 37 && memcmp(s, "users/", 6) == 0) {
        return cms_filekey_hex(s + 6, 36, 1) && s[42] == '/'
               && cms_filekey_file(s + 43, len - 43, 32, 0);
    }

    return cms_filekey_upload(s, len) || cms_filekey_variant(s, len);
}


int
cms_filekey_upload(const char *s, size_t len)
{
    /* uuid "/" uuid "." ext */
    return s != NULL && len > 37 && cms_filekey_hex(s, 36, 1)
           && s[36] == '/' && cms_filekey_file(s + 37, len - 37, 36, 1);
}


int
cms_filekey_variant(const char *s, size_t len)
{
    size_t  i, n;

    /* uuid "/" uuid "/w" 1 to 5 digits "." ext */
    if (s == NULL || len < 74 + 3 || !cms_filekey_hex(s, 36, 1)
        || s[36] != '/' || !cms_filekey_hex(s + 37, 36, 1)
        || s[73] != '/' || s[74] != 'w')
    {
        return 0;
    }

    for (i = 75; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
        /* void */
    }

    n = i - 75;

    if (n < 1 || n > 5 || s[75] == '0' || i == len || s[i] != '.') {
        return 0;
    }

    for (i++, n = 0; i < len; i++, n++) {
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z'))) {
            return 0;
        }
    }

    return n >= 1 && n <= 10;
}
