
/*
 * XML escaping; see cms_xml.h.
 */


#include <string.h>
#include "cms_xml.h"


static size_t cms_xml_char(const unsigned char *p, size_t len,
    unsigned long *cp);


/* the bytes of one well-formed UTF-8 character at p (its value in *cp),
   or 0 when the bytes there are not one */
static size_t
cms_xml_char(const unsigned char *p, size_t len, unsigned long *cp)
{
    size_t         n, i;
    unsigned long  c, min;

    c = p[0];

    if (c < 0x80) {
        *cp = c;
        return 1;
    }

    if (c >= 0xc2 && c <= 0xdf) {
        n = 2; c &= 0x1f; min = 0x80;

    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3; c &= 0x0f; min = 0x800;

    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4; c &= 0x07; min = 0x10000;

    } else {
        return 0;
    }

    if (len < n) {
        return 0;
    }

    for (i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) {
            return 0;
        }

        c = (c << 6) | (p[i] & 0x3f);
    }

    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) {
        return 0;
    }

    *cp = c;

    return n;
}


size_t
cms_xml_escape(const char *s, size_t len, char *out)
{
    char                 *o;
    size_t                n;
    const char           *ref;
    unsigned long         cp;
    const unsigned char  *p, *end;

    o = out;
    p = (const unsigned char *) s;
    end = p + len;

    while (p < end) {
        cp = 0;
        n = cms_xml_char(p, end - p, &cp);
        ref = NULL;

        switch (cp) {
        case '&': ref = "&amp;"; break;
        case '<': ref = "&lt;"; break;
        case '>': ref = "&gt;"; break;
        case '"': ref = "&quot;"; break;
        case '\'': ref = "&apos;"; break;
        case '\r': ref = "&#13;"; break;
        default: break;
        }

        if (n == 0 || (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r')
            || cp == 0xfffe || cp == 0xffff)
        {
            /* U+FFFD for each byte that is not a character XML allows */
            ref = "\xef\xbf\xbd";
            n = (n == 0) ? 1 : n;

        } else if (ref == NULL) {
            memcpy(o, p, n);
            o += n;
            p += n;
            continue;
        }

        memcpy(o, ref, strlen(ref));
        o += strlen(ref);
        p += n;
    }

    return (size_t) (o - out);
}
