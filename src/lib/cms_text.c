
/*
 * Slugs and word counts; see cms_text.h.
 */


#include "cms_text.h"


static size_t cms_text_utf8(const unsigned char *p, size_t len,
    unsigned *cp);
static size_t cms_text_translit(unsigned cp, char *t);
static int cms_text_space(const unsigned char *p, size_t len, size_t *n);


/*
 * ASCII for U+00C0 .. U+017F (Latin-1 letters and Latin Extended-A);
 * NULL for the two signs in that range (multiplication, division).
 */

static const char *const  cms_text_latin[] = {
    "a",   "a",   "a",   "a",   "a",   "a",   "ae",  "c",   /* U+00C0 */
    "e",   "e",   "e",   "e",   "i",   "i",   "i",   "i",   /* U+00C8 */
    "d",   "n",   "o",   "o",   "o",   "o",   "o",   NULL,  /* U+00D0 */
    "o",   "u",   "u",   "u",   "u",   "y",   "th",  "ss",  /* U+00D8 */
    "a",   "a",   "a",   "a",   "a",   "a",   "ae",  "c",   /* U+00E0 */
    "e",   "e",   "e",   "e",   "i",   "i",   "i",   "i",   /* U+00E8 */
    "d",   "n",   "o",   "o",   "o",   "o",   "o",   NULL,  /* U+00F0 */
    "o",   "u",   "u",   "u",   "u",   "y",   "th",  "y",   /* U+00F8 */
    "a",   "a",   "a",   "a",   "a",   "a",   "c",   "c",   /* U+0100 */
    "c",   "c",   "c",   "c",   "c",   "c",   "d",   "d",   /* U+0108 */
    "d",   "d",   "e",   "e",   "e",   "e",   "e",   "e",   /* U+0110 */
    "e",   "e",   "e",   "e",   "g",   "g",   "g",   "g",   /* U+0118 */
    "g",   "g",   "g",   "g",   "h",   "h",   "h",   "h",   /* U+0120 */
    "i",   "i",   "i",   "i",   "i",   "i",   "i",   "i",   /* U+0128 */
    "i",   "i",   "ij",  "ij",  "j",   "j",   "k",   "k",   /* U+0130 */
    "k",   "l",   "l",   "l",   "l",   "l",   "l",   "l",   /* U+0138 */
    "l",   "l",   "l",   "n",   "n",   "n",   "n",   "n",   /* U+0140 */
    "n",   "n",   "n",   "n",   "o",   "o",   "o",   "o",   /* U+0148 */
    "o",   "o",   "oe",  "oe",  "r",   "r",   "r",   "r",   /* U+0150 */
    "r",   "r",   "s",   "s",   "s",   "s",   "s",   "s",   /* U+0158 */
    "s",   "s",   "t",   "t",   "t",   "t",   "t",   "t",   /* U+0160 */
    "u",   "u",   "u",   "u",   "u",   "u",   "u",   "u",   /* U+0168 */
    "u",   "u",   "u",   "u",   "w",   "w",   "y",   "y",   /* U+0170 */
    "y",   "z",   "z",   "z",   "z",   "z",   "z",   "s"    /* U+0178 */
};


size_t
cms_slugify(const char *in, size_t len, char *out, size_t out_size)
{
    char                  t[2];
    size_t                i, j, k, n, m, max, cut;
    unsigned              cp;
    const unsigned char  *p;

    p = (const unsigned char *) in;
    max = out_size < CMS_SLUG_MAX ? out_size : CMS_SLUG_MAX;
    n = 0;
    cut = 0;                    /* length before the last dash written */

    for (i = 0; i < len; i += k) {

        k = cms_text_utf8(p + i, len - i, &cp);

        if (cp == '\'' || cp == 0x2019) {
            continue;
        }

        m = cms_text_translit(cp, t);

        if (m == 0) {
            if (n > 0 && out[n - 1] != '-') {
                if (n == max) {
                    return n;           /* full, at the end of a word */
                }

                cut = n;
                out[n++] = '-';
            }

            continue;
        }

        for (j = 0; j < m; j++) {
            if (n == max) {
                /* a word crosses the limit: end before the last dash, or
                 * at the limit when the first word alone is too long */
                return cut > 0 ? cut : n;
            }

            out[n++] = t[j];
        }
    }

    return (n > 0 && out[n - 1] == '-') ? n - 1 : n;
}


int
cms_slug_valid(const char *s, size_t len)
{
    size_t  i;
    char    c;

    if (len == 0 || len > CMS_SLUG_MAX || s[0] == '-' || s[len - 1] == '-') {
        return 0;
    }

    for (i = 0; i < len; i++) {
        c = s[i];

        if (c == '-') {
            if (s[i - 1] == '-') {
                return 0;
            }

            continue;
        }

        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
            return 0;
        }
    }

    return 1;
}


size_t
cms_html_word_count(const char *html, size_t len)
{
    size_t                i, n, words;
    int                   in_word;
    unsigned char         c;
    const unsigned char  *p;

    p = (const unsigned char *) html;
    words = 0;
    in_word = 0;

    for (i = 0; i < len; i++) {
        c = p[i];

        if (c == '<' && i + 1 < len
            && (((p[i + 1] | 0x20) >= 'a' && (p[i + 1] | 0x20) <= 'z')
                || p[i + 1] == '/' || p[i + 1] == '!' || p[i + 1] == '?'))
        {
            while (i < len && p[i] != '>') {
                i++;
            }

            in_word = 0;
            continue;
        }

        if (cms_text_space(p + i, len - i, &n)) {
            i += n - 1;
            in_word = 0;
            continue;
        }

        if (!in_word) {
            words++;
            in_word = 1;
        }
    }

    return words;
}


unsigned
cms_read_minutes(size_t words)
{
    size_t  m;

    m = (words + CMS_WORDS_PER_MINUTE - 1) / CMS_WORDS_PER_MINUTE;

    return m == 0 ? 1 : (m > 0xffffffu ? 0xffffffu : (unsigned) m);
}


/*
 * Decodes one UTF-8 sequence at p into *cp and returns its length; an
 * invalid or cut sequence gives U+FFFD for one byte.
 */

static size_t
cms_text_utf8(const unsigned char *p, size_t len, unsigned *cp)
{
    size_t    n, i;
    unsigned  c, min;

    c = p[0];

    if (c < 0x80) {
        *cp = c;
        return 1;
    }

    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        c &= 0x1f;
        min = 0x80;

    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        c &= 0x0f;
        min = 0x800;

    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        c &= 0x07;
        min = 0x10000;

    } else {
        *cp = 0xfffd;
        return 1;
    }

    if (len < n) {
        *cp = 0xfffd;
        return 1;
    }

    for (i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) {
            *cp = 0xfffd;
            return 1;
        }

        c = (c << 6) | (p[i] & 0x3f);
    }

    *cp = (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
          ? 0xfffd : c;

    return n;
}


/*
 * Writes into t the ASCII a code point contributes to a slug and returns
 * its length (1 or 2), or 0 for a separator.
 */

static size_t
cms_text_translit(unsigned cp, char *t)
{
    const char  *s;

    if ((cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z')) {
        t[0] = (char) cp;
        return 1;
    }

    if (cp >= 'A' && cp <= 'Z') {
        t[0] = (char) (cp | 0x20);
        return 1;
    }

    if (cp >= 0xc0 && cp <= 0x17f) {
        s = cms_text_latin[cp - 0xc0];

    } else if (cp == 0x218 || cp == 0x219) {
        s = "s";                                /* Romanian comma below */

    } else if (cp == 0x21a || cp == 0x21b) {
        s = "t";

    } else {
        return 0;
    }

    if (s == NULL) {
        return 0;
    }

    t[0] = s[0];
    t[1] = s[1];

    return s[1] ? 2 : 1;
}


/* 1 for ASCII whitespace or U+00A0 at p, its length in *n */

static int
cms_text_space(const unsigned char *p, size_t len, size_t *n)
{
    *n = 1;

    if (p[0] == ' ' || p[0] == '\t' || p[0] == '\n' || p[0] == '\r'
        || p[0] == '\f' || p[0] == '\v')
    {
        return 1;
    }

    if (len >= 2 && p[0] == 0xc2 && p[1] == 0xa0) {
        *n = 2;
        return 1;
    }

    return 0;
}


size_t
cms_slug_latin(unsigned cp, char *t)
{
    return cms_text_translit(cp, t);
}
