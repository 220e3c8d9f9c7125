
/*
 * The sanitizer's output: start tags with the attribute policy and URL
 * checks, escaped text; see cms_sanitize.h.
 */


#include <string.h>

#include "cms_sanitize.h"
#include "cms_sanitize_int.h"


static const char *cms_sanitize_attr(GumboTag tag, const GumboAttribute *a);
static const char *cms_sanitize_link_attr(const char *n, const char *v);
static const char *cms_sanitize_img_attr(const char *n, const char *v);
static const char *cms_sanitize_inert(const char *v);
static int cms_sanitize_url_ok(const char *v, int image);
static int cms_sanitize_url_scheme(const char *v, int image);
static int cms_sanitize_has_scheme(const char *v, const char *scheme);
static size_t cms_sanitize_url_skip(const unsigned char *p);
static int cms_sanitize_blank(const char *v);
static int cms_sanitize_digits(const char *v, size_t max, int sign);
static int cms_sanitize_language(const char *v);
static const char *cms_sanitize_replacement(const unsigned char *p, int attr,
    size_t *n);
static const char *cms_sanitize_replacement_utf8(const unsigned char *p,
    size_t *n);


/* U+FFFD REPLACEMENT CHARACTER */
static const char  cms_sanitize_fffd[] = "\xef\xbf\xbd";


/*
 * Writes the start tag of an allowed element with its allowed attributes
 * (rel added to a link).  Returns 0, writing nothing, for an img without
 * an acceptable src, else 1 (w->rc tells whether it fitted).
 */

int
cms_sanitize_start_tag(cms_sanitize_walk_t *w, GumboTag tag,
    const GumboVector *attrs)
{
    unsigned         i;
    const char      *name, *v;
    GumboAttribute  *a;

    if (tag == GUMBO_TAG_IMG) {
        a = gumbo_get_attribute(attrs, "src");

        if (a == NULL || !cms_sanitize_url_ok(a->value, 1)) {
            return 0;
        }
    }

    name = gumbo_normalized_tagname(tag);

    cms_sanitize_put(w, "<", 1);
    cms_sanitize_put(w, name, strlen(name));

    for (i = 0; i < attrs->length; i++) {
        a = attrs->data[i];

        v = cms_sanitize_attr(tag, a);
        if (v == NULL) {
            continue;
        }

        cms_sanitize_put(w, " ", 1);
        cms_sanitize_put(w, a->name, strlen(a->name));
        cms_sanitize_put(w, "=\"", 2);
        cms_sanitize_put_escaped(w, v, 1);
        cms_sanitize_put(w, "\"", 1);
    }

    if (tag == GUMBO_TAG_A) {
        a = gumbo_get_attribute(attrs, "href");

        if (a != NULL && cms_sanitize_url_ok(a->value, 0)) {
            cms_sanitize_put(w, " rel=\"noopener noreferrer\"", 26);
        }
    }

    cms_sanitize_put(w, ">", 1);

    return 1;
}


/* the value to write for attribute a of tag, or NULL to drop it */

static const char *
cms_sanitize_attr(GumboTag tag, const GumboAttribute *a)
{
    const char  *n, *v;

    n = a->name;
    v = a->value;

    if (a->attr_namespace != GUMBO_ATTR_NAMESPACE_NONE) {
        return NULL;
    }

    switch (tag) {

    case GUMBO_TAG_A:
        return cms_sanitize_link_attr(n, v);

    case GUMBO_TAG_IMG:
        return cms_sanitize_img_attr(n, v);

    case GUMBO_TAG_TD:
    case GUMBO_TAG_TH:
        if (strcmp(n, "colspan") == 0 || strcmp(n, "rowspan") == 0) {
            return cms_sanitize_digits(v, 4, 0) ? v : NULL;
        }

        return NULL;

    case GUMBO_TAG_OL:
        if (strcmp(n, "start") == 0) {
            return cms_sanitize_digits(v, 9, 1) ? v : NULL;
        }

        return NULL;

    case GUMBO_TAG_CODE:
    case GUMBO_TAG_PRE:
        if (strcmp(n, "class") == 0) {
            return cms_sanitize_language(v) ? v : NULL;
        }

        return NULL;

    default:
        return NULL;
    }
}


/* the value to write for attribute n="v" of an a, or NULL */

static const char *
cms_sanitize_link_attr(const char *n, const char *v)
{
    if (strcmp(n, "href") == 0) {
        return cms_sanitize_url_ok(v, 0) ? v : NULL;
    }

    if (strcmp(n, "target") == 0) {
        return cms_sanitize_blank(v) ? "_blank" : NULL;
    }

    return strcmp(n, "title") == 0 ? cms_sanitize_inert(v) : NULL;
}


/* the value to write for attribute n="v" of an img, or NULL */

static const char *
cms_sanitize_img_attr(const char *n, const char *v)
{
    if (strcmp(n, "src") == 0) {
        return v;                   /* checked by the caller */
    }

    if (strcmp(n, "width") == 0 || strcmp(n, "height") == 0) {
        return cms_sanitize_digits(v, 5, 0) ? v : NULL;
    }

    return (strcmp(n, "alt") == 0 || strcmp(n, "title") == 0)
           ? cms_sanitize_inert(v) : NULL;
}


/*
 * A text attribute (title, alt) as it is, or NULL when it spells a script
 * URL: such a value is inert here, but client code that makes links out
 * of titles would not be, and no attribute then ever carries one.
 */

static const char *
cms_sanitize_inert(const char *v)
{
    if (cms_sanitize_has_scheme(v, "javascript:")
        || cms_sanitize_has_scheme(v, "vbscript:")
        || cms_sanitize_has_scheme(v, "data:"))
    {
        return NULL;
    }

    return v;
}


/*
 * Link (image == 0) or image source (image == 1) check on the decoded
 * value, ignoring spaces and controls anywhere (browsers drop tabs and
 * newlines inside a URL, and leading controls).  Besides the scheme rule,
 * a value naming javascript:, vbscript: or data: anywhere (as in
 * "/go?to=javascript:...") is refused, for redirectors that pass it on.
 */

static int
cms_sanitize_url_ok(const char *v, int image)
{
    return cms_sanitize_url_scheme(v, image)
           && !cms_sanitize_has_scheme(v, "javascript:")
           && !cms_sanitize_has_scheme(v, "vbscript:")
           && !cms_sanitize_has_scheme(v, "data:");
}


/*
 * The scheme is what precedes the first ":" when no "/", "?" or "#" comes
 * before it; without one the URL is relative (links only).
 */

static int
cms_sanitize_url_scheme(const char *v, int image)
{
    size_t                n, k;
    unsigned char         c;
    const unsigned char  *p;
    char                  scheme[8];

    n = 0;

    for (p = (const unsigned char *) v; *p; p++) {

        k = cms_sanitize_url_skip(p);
        if (k > 0) {
            p += k - 1;
            continue;
        }

        c = *p;

        if (c == ':') {
            break;
        }

        if (c == '/' || c == '?' || c == '#') {
            return !image;                          /* relative */
        }

        if (n < sizeof(scheme)) {
            scheme[n] = (char) ((c >= 'A' && c <= 'Z') ? (c | 0x20) : c);
        }

        n++;
    }

    if (*p == '\0') {
        return !image;                              /* relative */
    }

    if (n >= sizeof(scheme)) {
        return 0;                                   /* longer than ours */
    }

    scheme[n] = '\0';

    if (strcmp(scheme, "http") == 0 || strcmp(scheme, "https") == 0) {
        return 1;
    }

    return !image && strcmp(scheme, "mailto") == 0;
}


/* 1 when the lowercase scheme occurs in v, any case, ignoring the same */

static int
cms_sanitize_has_scheme(const char *v, const char *scheme)
{
    size_t                k;
    unsigned char         c;
    const char           *s;
    const unsigned char  *p, *q;

    for (q = (const unsigned char *) v; *q; q++) {

        for (s = scheme, p = q; *s && *p; p++) {

            k = cms_sanitize_url_skip(p);
            if (k > 0) {
                p += k - 1;
                continue;
            }

            c = *p;

            if (((c >= 'A' && c <= 'Z') ? (c | 0x20) : c) != *s) {
                break;
            }

            s++;
        }

        if (*s == '\0') {
            return 1;
        }
    }

    return 0;
}


/*
 * Length of a character at p a URL check ignores, else 0: space and
 * controls, and all the serializer writes as U+FFFD or a newline, and
 * U+FFFD itself, so that the check gives the same answer on the value
 * written as on the value read (which keeps the output idempotent).
 * Ignoring more can only make the check stricter: it never removes a
 * ":", "/", "?" or "#".
 */

static size_t
cms_sanitize_url_skip(const unsigned char *p)
{
    size_t       n;
    const char  *rep;

    if (*p <= 0x20 || *p == 0x7f) {
        return 1;
    }

    if (p[0] == 0xef && p[1] == 0xbf && p[2] == 0xbd) {
        return 3;
    }

    rep = cms_sanitize_replacement(p, 1, &n);

    return rep == cms_sanitize_fffd ? n : 0;
}


/* 1 for "_blank" in any ASCII case */

static int
cms_sanitize_blank(const char *v)
{
    size_t  i;

    for (i = 0; i < 6; i++) {
        if ((v[i] | (v[i] >= 'A' && v[i] <= 'Z' ? 0x20 : 0)) != "_blank"[i]) {
            return 0;
        }
    }

    return v[6] == '\0';
}


/* 1 for 1 to max ASCII digits, after an optional "-" when sign is set */

static int
cms_sanitize_digits(const char *v, size_t max, int sign)
{
    size_t  n;

    if (sign && *v == '-') {
        v++;
    }

    for (n = 0; v[n] >= '0' && v[n] <= '9'; n++) {
        /* void */
    }

    return n > 0 && n <= max && v[n] == '\0';
}


/* 1 for a single "language-[a-z0-9-]+" class, 64 bytes at most */

static int
cms_sanitize_language(const char *v)
{
    size_t  n;

    if (strncmp(v, "language-", 9) != 0) {
        return 0;
    }

    for (n = 9; (v[n] >= 'a' && v[n] <= 'z') || (v[n] >= '0' && v[n] <= '9')
                || v[n] == '-'; n++)
    {
        /* void */
    }

    return n > 9 && n <= 64 && v[n] == '\0';
}


/*
 * Appends n bytes to the output, or sets w->rc to CMS_SANITIZE_TOO_LARGE
 * when they do not fit; does nothing once w->rc is set.
 */

void
cms_sanitize_put(cms_sanitize_walk_t *w, const char *s, size_t n)
{
    if (w->rc != CMS_SANITIZE_OK) {
        return;
    }

    if (n > (size_t) (w->end - w->pos)) {
        w->rc = CMS_SANITIZE_TOO_LARGE;
        return;
    }

    memcpy(w->pos, s, n);
    w->pos += n;
}


/*
 * Text or attribute value with &, <, > (and " in attributes) escaped.
 * Characters the parser would not read back as they are become what it
 * would read: "\r" a newline; controls, C1 controls and noncharacters
 * U+FFFD (they can only come from character references such as "&#1;").
 */

void
cms_sanitize_put_escaped(cms_sanitize_walk_t *w, const char *s, int attr)
{
    size_t                n;
    const char           *rep;
    const unsigned char  *p, *run;

    p = (const unsigned char *) s;
    run = p;

    while (*p) {
        rep = cms_sanitize_replacement(p, attr, &n);

        if (rep != NULL) {
            cms_sanitize_put(w, (const char *) run, (size_t) (p - run));
            cms_sanitize_put(w, rep, strlen(rep));
            run = p + n;
        }

        p += n;
    }

    cms_sanitize_put(w, (const char *) run, (size_t) (p - run));
}


/*
 * What to write for the character at p (its length goes to *n), or NULL
 * to write it as it is.  p is NUL-terminated, so each continuation byte
 * is checked before the next one is read.
 */

static const char *
cms_sanitize_replacement(const unsigned char *p, int attr, size_t *n)
{
    *n = 1;

    switch (*p) {
    case '&':
        return "&amp;";
    case '<':
        return "&lt;";
    case '>':
        return "&gt;";
    case '"':
        return attr ? "&quot;" : NULL;
    case '\r':
        return "\n";
    case '\t':
    case '\n':
    case '\f':
        return NULL;
    default:
        break;
    }

    if (*p < 0x80) {
        return (*p < 0x20 || *p == 0x7f) ? cms_sanitize_fffd : NULL;
    }

    return cms_sanitize_replacement_utf8(p, n);
}


/*
 * The same for a sequence with a lead byte of 0x80 or more: U+FFFD for
 * the byte alone when it starts no well-formed sequence, for the whole
 * sequence when that encodes no character or one that is not allowed.
 */

static const char *
cms_sanitize_replacement_utf8(const unsigned char *p, size_t *n)
{
    size_t    i, len;
    unsigned  cp, min;

    if (*p >= 0xc2 && *p <= 0xdf) {
        len = 2;
        cp = *p & 0x1f;
        min = 0x80;

    } else if (*p >= 0xe0 && *p <= 0xef) {
        len = 3;
        cp = *p & 0x0f;
        min = 0x800;

    } else if (*p >= 0xf0 && *p <= 0xf4) {
        len = 4;
        cp = *p & 0x07;
        min = 0x10000;

    } else {
        return cms_sanitize_fffd;
    }

    for (i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80) {
            return cms_sanitize_fffd;
        }

        cp = (cp << 6) | (p[i] & 0x3f);
    }

    *n = len;

    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)
        || cp <= 0x9f || (cp >= 0xfdd0 && cp <= 0xfdef)
        || (cp & 0xfffe) == 0xfffe)
    {
        return cms_sanitize_fffd;
    }

    return NULL;
}
