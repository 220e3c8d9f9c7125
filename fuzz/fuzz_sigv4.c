
/*
 * libFuzzer target for cms_sigv4.c: any method, path, query and headers,
 * signed both ways, under any flags, expiry and time.
 *
 *   - each answer is CMS_SIGV4_OK or a CMS_SIGV4_E_* code with words, the
 *     same from cms_sigv4_size() and cms_sigv4_text(), and the same for
 *     every text of one request (but the expiry, which depends on it);
 *   - OK: a text fits the size said exactly: written into a buffer of
 *     that size (malloc'ed so, for ASAN to see a byte more), it is that
 *     size less its NUL long, holds no other NUL, and one byte less is
 *     refused with CMS_SIGV4_E_SPACE;
 *   - the canonical request ends with the payload hash, the string to
 *     sign with the SHA-256 of the canonical request, and a signature is
 *     the same with a cache (filling it, then served from it) as without.
 *
 * Input: byte 0 the flags (bit 0 NO_NORMALIZE, 1 SINGLE_ENCODE, 2
 * presigned, 3 unsigned payload), bytes 1-2 the expiry, 3-6 the time;
 * the rest split at "\n" into method, path, query, then headers
 * "name:value" (a line without ":" is a name with an empty value).
 */


#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cms_sigv4.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


#define HEADERS  (CMS_SIGV4_HEADERS_MAX + 4)


static void
must(int ok)
{
    if (!ok) {
        abort();
    }
}


/*
 * The text "what" of r and s, checked as the top of this file says;
 * returns its rc, and the text (malloc'ed) in *keep when OK.
 */
static int
one_text(const cms_sigv4_request_t *r, const cms_sigv4_scope_t *s, int what,
    char **keep)
{
    int      rc;
    char    *out, small[1];
    size_t   n;

    *keep = NULL;

    n = 0;
    rc = cms_sigv4_size(r, s, what, &n);
    must(rc <= CMS_SIGV4_OK && rc >= CMS_SIGV4_E_TEXT);
    must(strcmp(cms_sigv4_error(rc), "an unknown error") != 0);

    out = malloc((rc == CMS_SIGV4_OK) ? n : 64);
    must(out != NULL);
    must(cms_sigv4_text(r, s, what, out, (rc == CMS_SIGV4_OK) ? n : 64)
         == rc);

    if (rc != CMS_SIGV4_OK) {
        free(out);
        return rc;
    }

    must(n >= 1 && strlen(out) == n - 1);

    /* one byte less: refused, whatever was copied before the end */
    must(cms_sigv4_text(r, s, what, (n > 1) ? out : small, n - 1)
         == CMS_SIGV4_E_SPACE);
    must(cms_sigv4_text(r, s, what, out, n) == CMS_SIGV4_OK);
    must(strlen(out) == n - 1);

    *keep = out;

    return rc;
}


/* splits p[0 .. len) at "\n" into fields (at most max of them) */
static size_t
fields(const char *p, size_t len, const char **f, size_t *flen, size_t max)
{
    size_t       n;
    const char  *nl;

    for (n = 0; n < max; n++) {
        nl = memchr(p, '\n', len);
        f[n] = p;
        flen[n] = (nl != NULL) ? (size_t) (nl - p) : len;

        if (nl == NULL) {
            return n + 1;
        }

        len -= (size_t) (nl - p) + 1;
        p = nl + 1;
    }

    return n;
}


static void
check_texts(const cms_sigv4_request_t *r, cms_sigv4_scope_t *s)
{
    int                rc, signed_as, other;
    char              *creq, *sts, *out, *again, hex[CMS_SIGV4_HEX_LEN + 1];
    const char        *last;
    cms_sigv4_cache_t  cache;

    signed_as = r->expires ? CMS_SIGV4_PRESIGNED_QUERY
                           : CMS_SIGV4_AUTHORIZATION;
    other = r->expires ? CMS_SIGV4_AUTHORIZATION : CMS_SIGV4_PRESIGNED_QUERY;

    rc = one_text(r, s, CMS_SIGV4_CANONICAL_REQUEST, &creq);
    must(one_text(r, s, CMS_SIGV4_STRING_TO_SIGN, &sts) == rc);
    must(one_text(r, s, signed_as, &out) == rc);

    /* the expiry is checked first: the other way is always refused */
    must(one_text(r, s, other, &again) == CMS_SIGV4_E_EXPIRES);

    if (rc != CMS_SIGV4_OK) {
        return;
    }

    /* the payload hash last; the hash of the canonical request last */
    last = strrchr(creq, '\n');
    must(last != NULL);
    must(strcmp(last + 1, (r->payload_hash != NULL) ? CMS_SIGV4_EMPTY_HASH
                                                    : CMS_SIGV4_UNSIGNED)
         == 0);
    must(cms_sigv4_payload_hash(creq, strlen(creq), hex) == CMS_SIGV4_OK);
    must(strlen(sts) > CMS_SIGV4_HEX_LEN);
    must(strcmp(sts + strlen(sts) - CMS_SIGV4_HEX_LEN, hex) == 0);

    /* a cache changes nothing: once filled, once served */
    memset(&cache, 0, sizeof(cache));
    s->cache = &cache;

    must(one_text(r, s, signed_as, &again) == CMS_SIGV4_OK);
    must(strcmp(out, again) == 0);
    free(again);

    must(one_text(r, s, signed_as, &again) == CMS_SIGV4_OK);
    must(strcmp(out, again) == 0);
    free(again);

    s->cache = NULL;

    free(out);
    free(sts);
    free(creq);
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char                 *copy;
    size_t                n, i, flen[HEADERS + 3];
    const char           *f[HEADERS + 3], *colon;
    cms_sigv4_header_t    hs[HEADERS];
    cms_sigv4_request_t   r;
    cms_sigv4_scope_t     s;

    if (size < 7) {
        return 0;
    }

    memset(&s, 0, sizeof(s));
    s.key_id = "AKIDEXAMPLE";
    s.key_id_len = 11;
    s.secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    s.secret_len = 40;
    s.region = "us-east-1";
    s.region_len = 9;
    s.service = "service";
    s.service_len = 7;
    s.time = (int64_t) ((uint32_t) data[3] << 24 | (uint32_t) data[4] << 16
                        | (uint32_t) data[5] << 8 | data[6]);

    /* an exact copy: ASAN sees a read past the input */
    copy = malloc(size - 7 + 1);
    must(copy != NULL);
    memcpy(copy, data + 7, size - 7);

    n = fields(copy, size - 7, f, flen, HEADERS + 3);

    memset(&r, 0, sizeof(r));
    r.flags = data[0] & (CMS_SIGV4_NO_NORMALIZE | CMS_SIGV4_SINGLE_ENCODE);
    r.expires = (data[0] & 4) ? (unsigned) (data[1] << 8 | data[2]) * 10 : 0;
    r.payload_hash = (data[0] & 8) ? NULL : CMS_SIGV4_EMPTY_HASH;
    r.payload_hash_len = (data[0] & 8) ? 0 : CMS_SIGV4_HEX_LEN;
    r.method = f[0];
    r.method_len = flen[0];
    r.path = (n > 1) ? f[1] : "";
    r.path_len = (n > 1) ? flen[1] : 0;
    r.query = (n > 2) ? f[2] : "";
    r.query_len = (n > 2) ? flen[2] : 0;
    r.headers = hs;

    for (i = 3; i < n; i++) {
        colon = memchr(f[i], ':', flen[i]);
        hs[i - 3].name = f[i];
        hs[i - 3].name_len = colon ? (size_t) (colon - f[i]) : flen[i];
        hs[i - 3].value = colon ? colon + 1 : f[i] + flen[i];
        hs[i - 3].value_len = colon ? flen[i] - (size_t) (colon - f[i]) - 1
                                    : 0;
        r.nheaders++;
    }

    check_texts(&r, &s);

    free(copy);

    return 0;
}
