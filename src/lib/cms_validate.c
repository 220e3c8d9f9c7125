
/*
 * Request value validators.
 */


#include <stdint.h>
#include <string.h>
#include "cms_validate.h"


static int cms_email_local_char(unsigned char c);
static int cms_email_domain_valid(const char *s, size_t len);
static int cms_rfc3339_zone(const char *s, size_t len);


int
cms_email_valid(const char *s, size_t len)
{
    size_t       i, at;
    const char  *p;

    if (len < 3 || len > 254) {
        return 0;
    }

    p = memchr(s, '@', len);

    if (p == NULL || memchr(p + 1, '@', len - (p + 1 - s)) != NULL) {
        return 0;
    }

    at = (size_t) (p - s);

    if (at == 0 || at > 64 || s[0] == '.' || s[at - 1] == '.') {
        return 0;
    }

    for (i = 0; i < at; i++) {
        if (!cms_email_local_char((unsigned char) s[i])
            || (s[i] == '.' && s[i + 1] == '.'))
        {
            return 0;
        }
    }

    return cms_email_domain_valid(p + 1, len - at - 1);
}


static int
cms_email_local_char(unsigned char c)
{
    if (c <= 0x20 || c >= 0x7f) {
        return 0;
    }

    return strchr("\"(),:;<>[\\]", c) == NULL;
}


/* labels of [A-Za-z0-9-], 1-63 bytes, no edge hyphen; two labels or more */
static int
cms_email_domain_valid(const char *s, size_t len)
{
    size_t         i, label, dots;
    unsigned char  c;

    label = 0;
    dots = 0;

    for (i = 0; i < len; i++) {
        c = (unsigned char) s[i];

        if (c == '.') {
            if (label == 0 || s[i - 1] == '-') {
                return 0;
            }

            label = 0;
            dots++;
            continue;
        }

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9') || c == '-'))
        {
            return 0;
        }

        if ((c == '-' && label == 0) || ++label > 63) {
            return 0;
        }
    }

    return dots > 0 && label > 0 && s[len - 1] != '-';
}


int
cms_color_valid(const char *s, size_t len)
{
    size_t  i;

    if ((len != 4 && len != 7) || s[0] != '#') {
        return 0;
    }

    for (i = 1; i < len; i++) {
        if (s[i] == '\0' || !strchr("0123456789abcdefABCDEF", s[i])) {
            return 0;
        }
    }

    return 1;
}


int
cms_locale_valid(const char *s, size_t len)
{
    size_t         i, j, start;
    unsigned char  c;
    int            alpha, digit;

    if (len < 2 || len > 35) {
        return 0;
    }

    start = 0;

    for (i = 0; i <= len; i++) {
        if (i < len && s[i] != '-') {
            continue;
        }

        /* the subtag s[start, i): the first is 2-8 letters, others 1-8 */
        if (i == start || i - start > 8 || (start == 0 && i < 2)) {
            return 0;
        }

        for (j = start; j < i; j++) {
            c = (unsigned char) s[j];
            alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
            digit = (c >= '0' && c <= '9');

            if (!alpha && !(digit && start > 0)) {
                return 0;
            }
        }

        start = i + 1;
    }

    return 1;
}


static int
cms_digits(const char *s, size_t n, int *v)
{
    size_t  i;

    *v = 0;

    for (i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return 0;
        }

        *v = *v * 10 + (s[i] - '0');
    }

    return 1;
}


int
cms_rfc3339_valid(const char *s, size_t len)
{
    int  y, mo, d, h, mi, sec, dim;

    static const int  days[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31,
                                 30, 31 };

    if (len < 20 || len > 35
        || !cms_digits(s, 4, &y) || s[4] != '-'
        || !cms_digits(s + 5, 2, &mo) || s[7] != '-'
        || !cms_digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't')
        || !cms_digits(s + 11, 2, &h) || s[13] != ':'
        || !cms_digits(s + 14, 2, &mi) || s[16] != ':'
        || !cms_digits(s + 17, 2, &sec))
    {
        return 0;
    }

    if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 60) {
        return 0;
    }

    dim = days[mo - 1];

    if (mo == 2 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) {
        dim = 28;
    }

    return d <= dim && cms_rfc3339_zone(s, len);
}


/*
 * What follows the seconds of a date-time of len (20 to 35) bytes: an
 * optional fraction of 1 to 9 digits, then "Z" or +HH:MM / -HH:MM.
 */

static int
cms_rfc3339_zone(const char *s, size_t len)
{
    int     oh, om;
    size_t  i;

    i = 19;

    if (s[i] == '.') {
        i++;

        while (i < len && s[i] >= '0' && s[i] <= '9' && i < 29) {
            i++;
        }

        if (i == 20 || (i < len && s[i] >= '0' && s[i] <= '9')) {
            return 0;
        }
    }

    if (i + 1 == len && (s[i] == 'Z' || s[i] == 'z')) {
        return 1;
    }

    return i + 6 == len && (s[i] == '+' || s[i] == '-')
           && cms_digits(s + i + 1, 2, &oh) && s[i + 3] == ':'
           && cms_digits(s + i + 4, 2, &om) && oh < 24 && om < 60;
}


int
cms_str_one_of(const char *s, size_t len, const char *const *words)
{
    size_t  n;

    for ( /* void */ ; *words != NULL; words++) {
        n = strlen(*words);

        if (n == len && memcmp(s, *words, len) == 0) {
            return 1;
        }
    }

    return 0;
}


int
cms_cstr(char *dst, size_t size, const char *s, size_t len)
{
    if (len >= size || memchr(s, '\0', len) != NULL) {
        return -1;
    }

    memcpy(dst, s, len);
    dst[len] = '\0';

    return 0;
}


int
cms_utf8_valid(const char *s, size_t len)
{
    size_t                n, i;
    const unsigned char  *p;

    p = (const unsigned char *) s;

    for (i = 0; i < len; i += n) {

        if (p[i] == '\0') {
            return 0;
        }

        n = (p[i] < 0x80) ? 1 : cms_utf8_len(p + i, len - i);

        if (n == 0) {
            return 0;
        }
    }

    return 1;
}


size_t
cms_utf8_len(const unsigned char *p, size_t len)
{
    size_t    n, i;
    uint32_t  c, min;

    if (*p >= 0xc2 && *p <= 0xdf) {
        n = 2;
        min = 0x80;

    } else if (*p >= 0xe0 && *p <= 0xef) {
        n = 3;
        min = 0x800;

    } else if (*p >= 0xf0 && *p <= 0xf4) {
        n = 4;
        min = 0x10000;

    } else {
        return 0;
    }

    if (len < n) {
        return 0;
    }

    c = *p & (0x7f >> n);      /* the payload bits of the lead byte */

    for (i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) {
            return 0;
        }

        c = (c << 6) | (p[i] & 0x3f);
    }

    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) {
        return 0;
    }

    return n;
}
