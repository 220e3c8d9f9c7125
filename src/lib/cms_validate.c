
/*
 * Request value validators.
 */


#include <string.h>
#include "cms_validate.h"


static int cms_email_local_char(unsigned char c);
static int cms_email_domain_valid(const char *s, size_t len);


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
