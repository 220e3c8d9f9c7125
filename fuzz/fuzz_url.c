
/*
 * libFuzzer target for cms_url.c: the input is a URL, parsed under four
 * sets of flags (a fetch target, a display URL, http only, nothing).
 *
 *   - the answer is CMS_URL_OK or one of the CMS_URL_E_* codes, and
 *     cms_url_error() has words for it;
 *   - OK: every span lies inside the input; the host ends where a naive
 *     RFC 3986 split ends the authority (first "/", "?" or "#") and holds
 *     no "@"; the port is 1 to 65535; a fragment only where allowed;
 *   - OK: the URL rebuilt (in CMS_URL_BUILD_SIZE(len) bytes) holds only
 *     printable ASCII without space, backslash, quote, "<", ">" or "@"
 *     before its path; parsed again under the same flags it is accepted,
 *     with the same host:port, and rebuilds to the same text;
 *   - what a fetch target accepts, a display URL accepts too;
 *     cms_url_http_valid() agrees with the display flags.
 */


#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cms_url.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


#define FETCH  (CMS_URL_HTTPS | CMS_URL_NO_IDN)
#define SHOW   (CMS_URL_HTTP | CMS_URL_HTTPS | CMS_URL_FRAGMENT)


static void
must(int ok)
{
    if (!ok) {
        abort();
    }
}


static void
span_ok(const cms_url_span_t *sp, size_t len)
{
    must(sp->off <= len && sp->len <= len - sp->off);
}


static void
parts_ok(const char *s, size_t len, unsigned flags, const cms_url_t *u)
{
    size_t  a, e;

    span_ok(&u->scheme, len);
    span_ok(&u->host, len);
    span_ok(&u->port, len);
    span_ok(&u->path, len);
    span_ok(&u->query, len);
    span_ok(&u->fragment, len);

    must(u->host.len > 0);
    must(u->host_type >= CMS_URL_HOST_NAME
         && u->host_type <= CMS_URL_HOST_IPV6);
    must(u->port_num >= 1 && u->port_num <= 65535);
    must(!u->has_frag || (flags & CMS_URL_FRAGMENT));
    must(u->https ? (flags & CMS_URL_HTTPS) : (flags & CMS_URL_HTTP));

    /* the naive authority: after "://", up to "/", "?" or "#" */
    a = u->scheme.len + 3;

    for (e = a; e < len && s[e] != '/' && s[e] != '?' && s[e] != '#'; e++) {
        /* void */
    }

    must(memchr(s + a, '@', e - a) == NULL);
    must(u->host.off >= a && u->host.off + u->host.len <= e);
    must(u->path.len == 0 || u->path.off == e);
}


static void
text_ok(const char *p, size_t n)
{
    size_t         i;
    unsigned char  c;

    for (i = 0; i < n; i++) {
        c = (unsigned char) p[i];
        must(c > 0x20 && c < 0x7f);
        must(strchr("\\\"<>`{}|^", c) == NULL);
    }
}


static void
rebuilt_ok(const char *s, size_t len, unsigned flags, const cms_url_t *u)
{
    char       *out, *again, auth[CMS_URL_AUTHORITY_SIZE],
               auth2[CMS_URL_AUTHORITY_SIZE];
    size_t      n, m;
    cms_url_t   v;

    out = malloc(CMS_URL_BUILD_SIZE(len));
    again = malloc(CMS_URL_BUILD_SIZE(len));
    must(out != NULL && again != NULL);

    n = cms_url_build(s, u, flags, out, CMS_URL_BUILD_SIZE(len));
    must(n > 0 && n < CMS_URL_BUILD_SIZE(len) && out[n] == '\0');
    must(strlen(out) == n);
    text_ok(out, n);

    must(cms_url_authority(s, u, auth, sizeof(auth)) > 0);

    must(cms_url_parse(out, n, flags, &v) == CMS_URL_OK);
    parts_ok(out, n, flags, &v);
    must(cms_url_authority(out, &v, auth2, sizeof(auth2)) > 0);
    must(strcmp(auth, auth2) == 0);
    must(v.host_type == u->host_type && v.port_num == u->port_num);

    m = cms_url_build(out, &v, flags, again, CMS_URL_BUILD_SIZE(len));
    must(m == n && memcmp(out, again, n) == 0);

    /* one byte short of what it wrote: refused, nothing claimed */
    must(cms_url_build(s, u, flags, again, n) == 0);

    free(again);
    free(out);
}


static int
one(const char *s, size_t len, unsigned flags)
{
    int        rc;
    cms_url_t  u;

    rc = cms_url_parse(s, len, flags, &u);

    must(rc <= CMS_URL_OK && rc >= CMS_URL_E_FRAGMENT);
    must(cms_url_error(rc) != NULL);

    if (rc == CMS_URL_OK) {
        parts_ok(s, len, flags, &u);
        rebuilt_ok(s, len, flags, &u);
    }

    return rc;
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int          fetch, show;
    const char  *s;

    s = (const char *) data;

    fetch = one(s, size, FETCH);
    show = one(s, size, SHOW);
    (void) one(s, size, CMS_URL_HTTP);
    must(one(s, size, 0) != CMS_URL_OK);

    must(fetch != CMS_URL_OK || show == CMS_URL_OK);
    must(cms_url_http_valid(s, size) == (show == CMS_URL_OK));
    must(cms_url_http_valid_or_empty(s, size)
         == (size == 0 || show == CMS_URL_OK));

    return 0;
}
