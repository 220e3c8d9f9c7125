
/*
 * Slugs in every script; see cms_slug.h.
 */


#include <stdint.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/utf8.h>
#include <unicode/utf16.h>
#include "cms_slug.h"


/* what a character gives a slug */
#define CMS_SLUG_SEP    0       /* a separator */
#define CMS_SLUG_ASCII  1       /* ASCII, in t */
#define CMS_SLUG_KEEP   2       /* itself */
#define CMS_SLUG_MARK   3       /* a combining mark: its letter's */

/* NFC may lengthen a text (composition exclusions): room for 3 times */
#define CMS_SLUG_NFC_UNITS  (3 * CMS_SLUG_TEXT_SCAN)


static int32_t cms_slug_fold(const char *in, size_t len, UChar *u);
static const UChar *cms_slug_nfc(const UChar *u, int32_t n, UChar *v,
    int32_t *vn);
static int cms_slug_valid_char(UChar32 c, int last);
static int cms_slug_class(UChar32 c, char *t, size_t *tn);
static int cms_slug_ascii_base(UChar32 c, char *t);
static size_t cms_slug_write(const UChar *v, int32_t vn, char *out,
    size_t max);


size_t
cms_slugify_text(const char *in, size_t len, char *out, size_t out_size)
{
    UChar         u[CMS_SLUG_TEXT_SCAN], v[CMS_SLUG_NFC_UNITS];
    size_t        max;
    int32_t       n, vn;
    const UChar  *s;

    if (in == NULL || out_size == 0) {
        return 0;
    }

    max = out_size < CMS_SLUG_MAX ? out_size : CMS_SLUG_MAX;

    n = cms_slug_fold(in, len, u);
    s = cms_slug_nfc(u, n, v, &vn);

    return cms_slug_write(s, vn, out, max);
}


int
cms_slug_text_valid(const char *s, size_t len)
{
    int                  last, bad;
    UChar                u[CMS_SLUG_MAX];
    int32_t              i, n;
    UChar32              c;
    UErrorCode           err;
    const UNormalizer2  *nfc;

    if (len == 0 || len > CMS_SLUG_MAX) {
        return 0;
    }

    last = CMS_SLUG_SEP;
    n = 0;

    for (i = 0; i < (int32_t) len; /* void */) {
        U8_NEXT((const uint8_t *) s, i, (int32_t) len, c);

        last = cms_slug_valid_char(c, last);

        if (last < 0) {
            return 0;
        }

        bad = 0;
        U16_APPEND(u, n, CMS_SLUG_MAX, c, bad);

        if (bad) {
            return 0;
        }
    }

    if (last == CMS_SLUG_SEP) {
        return 0;
    }

    err = U_ZERO_ERROR;
    nfc = unorm2_getNFCInstance(&err);

    if (U_FAILURE(err)) {
        return 0;
    }

    return unorm2_isNormalized(nfc, u, n, &err) && U_SUCCESS(err);
}


/*
 * One character of a slug being checked, after "last" (what the one
 * before gave: CMS_SLUG_SEP at the start): what it gives, or -1 when it
 * may not stand there.
 */
static int
cms_slug_valid_char(UChar32 c, int last)
{
    char    t[2];
    size_t  tn;

    if (c <= 0) {
        return -1;                      /* invalid UTF-8, or NUL */
    }

    if (c == '-') {
        return last == CMS_SLUG_SEP ? -1 : CMS_SLUG_SEP;
    }

    switch (cms_slug_class(c, t, &tn)) {

    case CMS_SLUG_ASCII:
        /* as written: ASCII itself, never what turns into it */
        return (c < 0x80 && (char) c == t[0]) ? CMS_SLUG_ASCII : -1;

    case CMS_SLUG_KEEP:
        return u_tolower(c) == c ? CMS_SLUG_KEEP : -1;

    case CMS_SLUG_MARK:
        return last == CMS_SLUG_KEEP ? CMS_SLUG_KEEP : -1;

    default:
        return -1;
    }
}


/*
 * The first CMS_SLUG_TEXT_SCAN bytes of "in" (cut before a character that
 * does not fit), lowercased, into u as UTF-16; invalid UTF-8 gives
 * U+FFFD a byte.  Returns the units written: at most the bytes read.
 */
static int32_t
cms_slug_fold(const char *in, size_t len, UChar *u)
{
    UBool    bad;
    int32_t  i, n, end;
    UChar32  c;

    if (len > CMS_SLUG_TEXT_SCAN) {
        len = CMS_SLUG_TEXT_SCAN;

        while (len > 0 && ((unsigned char) in[len] & 0xc0) == 0x80) {
            len--;
        }
    }

    end = (int32_t) len;
    n = 0;

    for (i = 0; i < end; /* void */) {
        U8_NEXT((const uint8_t *) in, i, end, c);

        /* a lowercase mapping stays in the plane of a 3-byte character:
           never more units than bytes */
        c = (c < 0) ? 0xfffd : u_tolower(c);

        bad = 0;
        U16_APPEND(u, n, CMS_SLUG_TEXT_SCAN, c, bad);

        if (bad) {
            break;
        }
    }

    return n;
}


/* u[0 .. n) in NFC, into v; u itself when ICU cannot (then not NFC) */
static const UChar *
cms_slug_nfc(const UChar *u, int32_t n, UChar *v, int32_t *vn)
{
    UErrorCode           err;
    const UNormalizer2  *nfc;

    err = U_ZERO_ERROR;
    nfc = unorm2_getNFCInstance(&err);

    if (U_SUCCESS(err)) {
        *vn = unorm2_normalize(nfc, u, n, v, CMS_SLUG_NFC_UNITS, &err);

        if (U_SUCCESS(err)) {
            return v;
        }
    }

    *vn = n;

    return u;
}


/*
 * What the lowercase NFC character c gives (CMS_SLUG_*), its ASCII in t
 * (*tn bytes) for CMS_SLUG_ASCII.
 */
static int
cms_slug_class(UChar32 c, char *t, size_t *tn)
{
    int8_t  type;

    *tn = cms_slug_latin((unsigned) c, t);

    if (*tn > 0) {
        return CMS_SLUG_ASCII;
    }

    type = u_charType(c);

    if (c < 0x80 || type == U_DECIMAL_DIGIT_NUMBER) {
        return c < 0x80 ? CMS_SLUG_SEP : CMS_SLUG_KEEP;
    }

    if (type >= U_NON_SPACING_MARK && type <= U_COMBINING_SPACING_MARK) {
        return CMS_SLUG_MARK;
    }

    if (type < U_UPPERCASE_LETTER || type > U_OTHER_LETTER) {
        return CMS_SLUG_SEP;
    }

    /* a Latin letter with marks on: the letter (U+01CE is a + caron) */
    if (cms_slug_ascii_base(c, t)) {
        *tn = 1;
        return CMS_SLUG_ASCII;
    }

    return CMS_SLUG_KEEP;
}


/*
 * 1 when the canonical decomposition of the letter c is an ASCII letter
 * and marks only: that letter, lowercased, in t[0].  0 otherwise.
 */
static int
cms_slug_ascii_base(UChar32 c, char *t)
{
    UChar                d[16];
    int8_t               type;
    int32_t              i, n;
    UChar32              b, m;
    UErrorCode           err;
    const UNormalizer2  *nfc;

    err = U_ZERO_ERROR;
    nfc = unorm2_getNFCInstance(&err);

    if (U_FAILURE(err)) {
        return 0;
    }

    n = unorm2_getDecomposition(nfc, c, d, 16, &err);

    if (U_FAILURE(err) || n < 2) {
        return 0;
    }

    i = 0;
    U16_NEXT(d, i, n, b);

    if (!((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z'))) {
        return 0;
    }

    while (i < n) {
        U16_NEXT(d, i, n, m);
        type = u_charType(m);

        if (type < U_NON_SPACING_MARK || type > U_COMBINING_SPACING_MARK) {
            return 0;
        }
    }

    t[0] = (char) (b | 0x20);

    return 1;
}


/*
 * The slug of the lowercase NFC text v[0 .. vn) into out, at most "max"
 * bytes, as cms_slugify_text() says.  "unit" is where the last kept
 * letter began: a mark that does not fit takes its letter with it.
 */
/* long: the cut rules of cms_slugify() for each kind of character */
static size_t
cms_slug_write(const UChar *v, int32_t vn, char *out, size_t max)
{
    int      last, k;
    char     t[2];
    size_t   n, cut, unit, tn, j, bn;
    int32_t  i, o;
    UChar32  c;

    n = 0;
    cut = 0;                        /* length before the last dash */
    unit = 0;
    last = CMS_SLUG_SEP;

    for (i = 0; i < vn; /* void */) {
        U16_NEXT(v, i, vn, c);

        if (c == '\'' || c == 0x2019) {
            continue;
        }

        k = cms_slug_class(c, t, &tn);

        if (k == CMS_SLUG_MARK && last != CMS_SLUG_KEEP) {
            continue;               /* a mark of nothing kept */
        }

        if (k == CMS_SLUG_SEP) {
            if (n > 0 && out[n - 1] != '-') {
                if (n == max) {
                    return n;
                }

                cut = n;
                out[n++] = '-';
            }

            last = CMS_SLUG_SEP;
            continue;
        }

        if (k == CMS_SLUG_ASCII) {
            for (j = 0; j < tn; j++) {
                if (n == max) {
                    return cut > 0 ? cut : n;
                }

                out[n++] = t[j];
            }

            last = CMS_SLUG_ASCII;
            continue;
        }

        /* a kept letter, or a mark of one */
        bn = U8_LENGTH(c);

        if (n + bn > max) {
            return cut > 0 ? cut : (k == CMS_SLUG_MARK ? unit : n);
        }

        if (k == CMS_SLUG_KEEP) {
            unit = n;
            last = CMS_SLUG_KEEP;
        }

        o = (int32_t) n;
        U8_APPEND_UNSAFE((uint8_t *) out, o, c);
        n = (size_t) o;
    }

    return (n > 0 && out[n - 1] == '-') ? n - 1 : n;
}
