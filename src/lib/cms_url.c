
/*
 * Strict absolute http(s) URLs: see cms_url.h for the rules.  One pass
 * from left to right: scheme, authority (ended by the first "/", "?" or
 * "#", as RFC 3986 and every browser end it), then path, query, fragment.
 */


#include <string.h>
#include "cms_url.h"


static int cms_url_scheme(const char *s, size_t len, unsigned flags,
    cms_url_t *u);
static int cms_url_authority_parse(const char *s, size_t start, size_t end,
    unsigned flags, cms_url_t *u);
static int cms_url_bracketed(const char *s, size_t start, size_t end,
    cms_url_t *u);
static int cms_url_port(const char *s, size_t off, size_t end,
    cms_url_t *u);
static int cms_url_name(const char *p, size_t len, unsigned flags);
static int cms_url_label_is_ace(const char *p, size_t len);
static int cms_url_ipv4(const char *p, size_t len);
static int cms_url_ipv6(const char *p, size_t len);
static size_t cms_url_h16(const char *p, size_t len);
static int cms_url_rest(const char *s, size_t at, size_t len, unsigned flags,
    cms_url_t *u);
static size_t cms_url_part(const char *s, size_t at, size_t len,
    const char *stops, int *bad);
static int cms_url_hex(unsigned char c);
static size_t cms_url_host(const char *s, const cms_url_t *u, char *out);
static size_t cms_url_lower(char *out, const char *p, size_t len);


/*
 * Bytes allowed in a path, a query and a fragment besides "%XX": RFC 3986
 * unreserved, sub-delims, ":", "@", "/" and "?" ("?" ends a path, so it is
 * only ever seen inside a query or a fragment).
 */
static const char  cms_url_pchar[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    "-._~!$&'()*+,;=:@/?";


static const char  *cms_url_errors[] = {
    "is a valid URL",
    "must be 1 to 2048 bytes long",
    "must be an absolute URL with an allowed scheme",
    "has userinfo (name@ before the host), which is not allowed",
    "has a host that is not a valid DNS name or address",
    "has a non-ASCII or punycode (xn--) host, which is not allowed",
    "has an IP address that is not in dotted-decimal or [IPv6] form",
    "has a port that is not 1 to 65535",
    "has a path with a character that must be percent-encoded",
    "has a query with a character that must be percent-encoded",
    "has a fragment (#), not allowed here or not percent-encoded"
};


int
cms_url_parse(const char *s, size_t len, unsigned flags, cms_url_t *u)
{
    int     rc;
    size_t  at, end;

    memset(u, 0, sizeof(cms_url_t));

    if (len == 0 || len > CMS_URL_MAX) {
        return CMS_URL_E_LENGTH;
    }

    rc = cms_url_scheme(s, len, flags, u);
    if (rc != CMS_URL_OK) {
        return rc;
    }

    at = u->scheme.len + 3;

    for (end = at; end < len; end++) {
        if (s[end] == '/' || s[end] == '?' || s[end] == '#') {
            break;
        }
    }

    rc = cms_url_authority_parse(s, at, end, flags, u);
    if (rc != CMS_URL_OK) {
        return rc;
    }

    return cms_url_rest(s, end, len, flags, u);
}


/* "http://" or "https://", any case, allowed by the flags */
static int
cms_url_scheme(const char *s, size_t len, unsigned flags, cms_url_t *u)
{
    size_t  n, i;

    static const char  https[] = "https://";

    for (n = 0; n < 5 && n < len && s[n] != ':'; n++) { /* void */ }

    if (n < 4 || len < n + 3 || memcmp(s + n, "://", 3) != 0) {
        return CMS_URL_E_SCHEME;
    }

    for (i = 0; i < n; i++) {
        if ((s[i] | 0x20) != https[i]) {
            return CMS_URL_E_SCHEME;
        }
    }

    u->https = (n == 5);

    if (!(flags & (u->https ? CMS_URL_HTTPS : CMS_URL_HTTP))) {
        return CMS_URL_E_SCHEME;
    }

    u->scheme.off = 0;
    u->scheme.len = n;
    u->port_num = u->https ? 443 : 80;

    return CMS_URL_OK;
}


/* s[start .. end): host[:port], no userinfo */
static int
cms_url_authority_parse(const char *s, size_t start, size_t end,
    unsigned flags, cms_url_t *u)
{
    int     rc;
    size_t  colon;

    if (memchr(s + start, '@', end - start) != NULL) {
        return CMS_URL_E_USERINFO;
    }

    if (end > start && s[start] == '[') {
        return cms_url_bracketed(s, start, end, u);
    }

    for (colon = end; colon > start && s[colon - 1] != ':'; colon--) {
        /* void */
    }

    colon = (colon > start) ? colon - 1 : end;

    u->host.off = start;
    u->host.len = colon - start;

    rc = cms_url_name(s + start, colon - start, flags);

    if (rc == CMS_URL_OK) {
        u->host_type = CMS_URL_HOST_NAME;

    } else if (rc == CMS_URL_E_IP) {
        if (cms_url_ipv4(s + start, colon - start) != CMS_URL_OK) {
            return CMS_URL_E_IP;
        }

        u->host_type = CMS_URL_HOST_IPV4;

    } else {
        return rc;
    }

    if (colon == end) {
        return CMS_URL_OK;
    }

    return cms_url_port(s, colon + 1, end, u);
}


/* s[start .. end) is "[IPv6]" or "[IPv6]:port" */
static int
cms_url_bracketed(const char *s, size_t start, size_t end, cms_url_t *u)
{
    size_t  i;

    for (i = start + 1; i < end && s[i] != ']'; i++) { /* void */ }

    if (i == end || cms_url_ipv6(s + start + 1, i - start - 1) != CMS_URL_OK) {
        return CMS_URL_E_IP;
    }

    u->host.off = start + 1;
    u->host.len = i - start - 1;
    u->host_type = CMS_URL_HOST_IPV6;

    if (i + 1 == end) {
        return CMS_URL_OK;
    }

    if (s[i + 1] != ':') {
        return CMS_URL_E_HOST;
    }

    return cms_url_port(s, i + 2, end, u);
}


/* s[off .. end): 1 to 65535, decimal, no leading zero */
static int
cms_url_port(const char *s, size_t off, size_t end, cms_url_t *u)
{
    size_t    i;
    unsigned  n;

    if (off == end || end - off > 5 || s[off] == '0') {
        return CMS_URL_E_PORT;
    }

    n = 0;

    for (i = off; i < end; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return CMS_URL_E_PORT;
        }

        n = n * 10 + (unsigned) (s[i] - '0');
    }

    if (n > 65535) {
        return CMS_URL_E_PORT;
    }

    u->port.off = off;
    u->port.len = end - off;
    u->port_num = n;
    u->has_port = 1;

    return CMS_URL_OK;
}


/*
 * A DNS name: CMS_URL_OK; CMS_URL_E_IP when its last label starts with a
 * digit (the caller then reads it as a dotted quad: "127.1", "0x7f.1" and
 * "2130706433" are addresses to some parsers, never names); else the
 * error.
 */
static int
cms_url_name(const char *p, size_t len, unsigned flags)
{
    size_t         i, label;
    unsigned char  c;

    for (i = 0; i < len; i++) {
        if ((unsigned char) p[i] >= 0x80) {
            return CMS_URL_E_IDN;
        }
    }

    if (len == 0 || len > CMS_URL_HOST_MAX || p[len - 1] == '.') {
        return CMS_URL_E_HOST;
    }

    label = 0;

    for (i = 0; i <= len; i++) {
        c = (i < len) ? (unsigned char) p[i] : '.';

        if (c == '.') {
            if (label == 0 || label > 63 || p[i - 1] == '-') {
                return CMS_URL_E_HOST;
            }

            if ((flags & CMS_URL_NO_IDN)
                && cms_url_label_is_ace(p + i - label, label))
            {
                return CMS_URL_E_IDN;
            }

            label = 0;
            continue;
        }

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9') || (c == '-' && label > 0)))
        {
            return CMS_URL_E_HOST;
        }

        label++;
    }

    for (i = len; i > 0 && p[i - 1] != '.'; i--) { /* void */ }

    return (p[i] >= '0' && p[i] <= '9') ? CMS_URL_E_IP : CMS_URL_OK;
}


/* an IDNA "xn--" label (any case) */
static int
cms_url_label_is_ace(const char *p, size_t len)
{
    return len >= 4 && (p[0] | 0x20) == 'x' && (p[1] | 0x20) == 'n'
           && p[2] == '-' && p[3] == '-';
}


/* four decimal parts 0-255, each "0" or without a leading zero */
static int
cms_url_ipv4(const char *p, size_t len)
{
    size_t    i, parts, digits;
    unsigned  n;

    parts = 0;
    digits = 0;
    n = 0;

    for (i = 0; i <= len; i++) {
        if (i == len || p[i] == '.') {
            if (digits == 0 || n > 255 || ++parts > 4) {
                return CMS_URL_E_IP;
            }

            digits = 0;
            n = 0;
            continue;
        }

        if (p[i] < '0' || p[i] > '9' || digits == 3
            || (digits == 1 && n == 0))
        {
            return CMS_URL_E_IP;
        }

        n = n * 10 + (unsigned) (p[i] - '0');
        digits++;
    }

    return parts == 4 ? CMS_URL_OK : CMS_URL_E_IP;
}


/* RFC 4291 section 2.2 text: h16 groups, one "::", a dotted quad last */
/* long: one pass over the address grammar, each branch a rule of it */
static int
cms_url_ipv6(const char *p, size_t len)
{
    size_t  i, n, groups;
    int     gap;

    groups = 0;
    gap = 0;
    i = 0;

    if (len >= 2 && p[0] == ':' && p[1] == ':') {
        gap = 1;
        i = 2;
    }

    while (i < len) {
        n = cms_url_h16(p + i, len - i);

        if (n == 0) {
            return CMS_URL_E_IP;
        }

        if (i + n < len && p[i + n] == '.') {
            if (cms_url_ipv4(p + i, len - i) != CMS_URL_OK) {
                return CMS_URL_E_IP;
            }

            groups += 2;
            break;
        }

        groups++;
        i += n;

        if (i == len) {
            break;
        }

        if (p[i] != ':' || ++i == len) {
            return CMS_URL_E_IP;
        }

        if (p[i] == ':') {
            if (gap) {
                return CMS_URL_E_IP;
            }

            gap = 1;
            i++;
        }
    }

    if (gap ? groups > 7 : groups != 8) {
        return CMS_URL_E_IP;
    }

    return CMS_URL_OK;
}


/* the length (1 to 4) of the hex digits at p, or 0 */
static size_t
cms_url_h16(const char *p, size_t len)
{
    size_t  n;

    for (n = 0; n < len && n < 5 && cms_url_hex((unsigned char) p[n]) >= 0;
         n++)
    {
        /* void */
    }

    return (n > 4) ? 0 : n;
}


/* from "at" (after the authority): path, ?query, #fragment */
static int
cms_url_rest(const char *s, size_t at, size_t len, unsigned flags,
    cms_url_t *u)
{
    int     bad;
    size_t  n;

    n = cms_url_part(s, at, len, "?#", &bad);

    if (bad) {
        return CMS_URL_E_PATH;
    }

    u->path.off = at;
    u->path.len = n;
    at += n;

    if (at < len && s[at] == '?') {
        n = cms_url_part(s, at + 1, len, "#", &bad);

        if (bad) {
            return CMS_URL_E_QUERY;
        }

        u->has_query = 1;
        u->query.off = at + 1;
        u->query.len = n;
        at += n + 1;
    }

    if (at == len) {
        return CMS_URL_OK;
    }

    /* s[at] is "#" */
    n = cms_url_part(s, at + 1, len, "#", &bad);

    if (!(flags & CMS_URL_FRAGMENT) || bad || at + 1 + n != len) {
        return CMS_URL_E_FRAGMENT;
    }

    u->has_frag = 1;
    u->fragment.off = at + 1;
    u->fragment.len = n;

    return CMS_URL_OK;
}


/*
 * The length of s[at ..) up to a byte of "stops" or the end; *bad set
 * when a byte on the way is neither allowed nor a "%XX" escape.
 */
static size_t
cms_url_part(const char *s, size_t at, size_t len, const char *stops,
    int *bad)
{
    size_t         i;
    unsigned char  c;

    *bad = 0;

    for (i = at; i < len; i++) {
        c = (unsigned char) s[i];

        if (c != '\0' && strchr(stops, c) != NULL) {
            break;
        }

        if (c == '%') {
            if (i + 2 >= len || cms_url_hex((unsigned char) s[i + 1]) < 0
                || cms_url_hex((unsigned char) s[i + 2]) < 0)
            {
                *bad = 1;
                break;
            }

            i += 2;
            continue;
        }

        if (c == '\0' || strchr(cms_url_pchar, c) == NULL) {
            *bad = 1;
            break;
        }
    }

    return i - at;
}


static int
cms_url_hex(unsigned char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }

    c |= 0x20;

    return (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
}


const char *
cms_url_error(int rc)
{
    if (rc > 0 || rc < CMS_URL_E_FRAGMENT) {
        return "is not a valid URL";
    }

    return cms_url_errors[-rc];
}


/* long: the exact size first, then one copy per part, in order */
size_t
cms_url_build(const char *s, const cms_url_t *u, unsigned flags, char *out,
    size_t size)
{
    int     port, frag;
    size_t  need, n;

    /* the scheme's own port says nothing: it is dropped */
    port = u->has_port && u->port_num != (u->https ? 443u : 80u);
    frag = u->has_frag && (flags & CMS_URL_FRAGMENT);

    need = u->scheme.len + 3 + u->host.len
           + (u->host_type == CMS_URL_HOST_IPV6 ? 2 : 0)
           + (port ? 1 + u->port.len : 0)
           + (u->path.len ? u->path.len : 1)
           + (u->has_query ? 1 + u->query.len : 0)
           + (frag ? 1 + u->fragment.len : 0) + 1;

    if (need > size) {
        return 0;
    }

    n = cms_url_lower(out, s + u->scheme.off, u->scheme.len);
    memcpy(out + n, "://", 3);
    n += 3;
    n += cms_url_host(s, u, out + n);

    if (port) {
        out[n++] = ':';
        memcpy(out + n, s + u->port.off, u->port.len);
        n += u->port.len;
    }

    if (u->path.len) {
        memcpy(out + n, s + u->path.off, u->path.len);
        n += u->path.len;

    } else {
        out[n++] = '/';
    }

    if (u->has_query) {
        out[n++] = '?';
        memcpy(out + n, s + u->query.off, u->query.len);
        n += u->query.len;
    }

    if (frag) {
        out[n++] = '#';
        memcpy(out + n, s + u->fragment.off, u->fragment.len);
        n += u->fragment.len;
    }

    out[n] = '\0';

    return n;
}


size_t
cms_url_origin(const char *s, size_t len, unsigned flags, cms_url_t *u,
    char *out, size_t size)
{
    size_t  n;

    if (cms_url_parse(s, len, flags & ~CMS_URL_FRAGMENT, u) != CMS_URL_OK
        || u->has_query
        || (u->path.len && !(u->path.len == 1 && s[u->path.off] == '/')))
    {
        return 0;
    }

    n = cms_url_build(s, u, 0, out, size);

    /* "scheme://host[:port]/": the path is the last byte */
    if (n == 0) {
        return 0;
    }

    out[--n] = '\0';

    return n;
}


size_t
cms_url_authority(const char *s, const cms_url_t *u, char *out, size_t size)
{
    size_t    n, i;
    char      digits[5];
    unsigned  p;

    p = u->port_num;
    i = sizeof(digits);

    do {
        digits[--i] = (char) ('0' + p % 10);
        p /= 10;
    } while (p != 0 && i > 0);

    if (u->host.len + (u->host_type == CMS_URL_HOST_IPV6 ? 2 : 0)
        + 1 + (sizeof(digits) - i) + 1 > size)
    {
        return 0;
    }

    n = cms_url_host(s, u, out);
    out[n++] = ':';
    memcpy(out + n, digits + i, sizeof(digits) - i);
    n += sizeof(digits) - i;
    out[n] = '\0';

    return n;
}


/* the host in lowercase, IPv6 in brackets; returns its length */
static size_t
cms_url_host(const char *s, const cms_url_t *u, char *out)
{
    size_t  n;

    n = 0;

    if (u->host_type == CMS_URL_HOST_IPV6) {
        out[n++] = '[';
    }

    n += cms_url_lower(out + n, s + u->host.off, u->host.len);

    if (u->host_type == CMS_URL_HOST_IPV6) {
        out[n++] = ']';
    }

    return n;
}


static size_t
cms_url_lower(char *out, const char *p, size_t len)
{
    size_t  i;

    for (i = 0; i < len; i++) {
        out[i] = (p[i] >= 'A' && p[i] <= 'Z') ? (char) (p[i] | 0x20) : p[i];
    }

    return len;
}


int
cms_url_http_valid(const char *s, size_t len)
{
    cms_url_t  u;

    return cms_url_parse(s, len, CMS_URL_HTTP | CMS_URL_HTTPS
                                 | CMS_URL_FRAGMENT, &u)
           == CMS_URL_OK;
}


int
cms_url_http_valid_or_empty(const char *s, size_t len)
{
    return len == 0 || cms_url_http_valid(s, len);
}
