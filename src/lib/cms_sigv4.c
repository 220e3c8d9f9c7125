
/*
 * AWS Signature Version 4; see cms_sigv4.h.  A request is checked once
 * into a context (its parameters and headers sorted there, as spans of
 * the caller's text), then a text is written part by part into a sink
 * that counts it, copies it into the caller's buffer while it fits, or
 * feeds it to SHA-256.  cms_sigv4_size() and cms_sigv4_text() run the
 * same code, so they cannot disagree, and the canonical request is hashed
 * without being kept anywhere.  Reading and checking the request
 * into a context is cms_sigv4_check.c's half.
 */


#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "cms_sigv4.h"
#include "cms_sigv4_int.h"
#include "cms_hex.h"
#include "cms_kdf.h"


#define CMS_SIGV4_STS_MAX                                                     \
    (sizeof(CMS_SIGV4_ALGORITHM) + CMS_SIGV4_DATE_LEN + 1                     \
     + CMS_SIGV4_SCOPE_MAX + CMS_SIGV4_TERM_LEN + 1 + CMS_SIGV4_HEX_LEN)

#define cms_sigv4_puts(o, s)  cms_sigv4_put(o, s, sizeof(s) - 1)


/* where a text goes: counted, copied into buf while it fits, hashed */
typedef struct {
    char                       *buf;            /* NULL: count only */
    size_t                      size;
    size_t                      len;            /* all put, fitting or not */
    EVP_MD_CTX                 *md;             /* or NULL */
    int                         failed;         /* a digest update failed */
} cms_sigv4_out_t;


/* writing */
static int cms_sigv4_run(const cms_sigv4_request_t *r,
    const cms_sigv4_scope_t *s, int what, cms_sigv4_out_t *o);
static void cms_sigv4_put(cms_sigv4_out_t *o, const char *p, size_t n);
static void cms_sigv4_encode_put(cms_sigv4_out_t *o, const cms_sigv4_str_t *s,
    unsigned mode, unsigned keep_slash);
static void cms_sigv4_creq_put(const cms_sigv4_ctx_t *c, cms_sigv4_out_t *o);
static void cms_sigv4_path_put(const cms_sigv4_request_t *r,
    cms_sigv4_out_t *o);
static void cms_sigv4_normalized_put(const cms_sigv4_request_t *r,
    cms_sigv4_out_t *o, unsigned mode);
static void cms_sigv4_query_put(const cms_sigv4_ctx_t *c, cms_sigv4_out_t *o);
static void cms_sigv4_headers_put(const cms_sigv4_ctx_t *c,
    cms_sigv4_out_t *o);
static void cms_sigv4_value_put(cms_sigv4_out_t *o,
    const cms_sigv4_header_t *h);
static void cms_sigv4_sts_put(const cms_sigv4_ctx_t *c, cms_sigv4_out_t *o,
    const char *hex);

/* hashing and signing */
static int cms_sigv4_digest(const cms_sigv4_ctx_t *c, const void *p,
    size_t n, unsigned char md[32]);
static int cms_sigv4_sign(const cms_sigv4_ctx_t *c, char *hex,
    int hash_only);
static int cms_sigv4_key(const cms_sigv4_scope_t *s,
    const cms_sigv4_cred_t *cr, unsigned char key[CMS_SIGV4_KEY_LEN]);
static int cms_sigv4_chain(const cms_sigv4_scope_t *s, const char *date,
    unsigned char key[CMS_SIGV4_KEY_LEN]);


static const char  *cms_sigv4_errors[] = {
    "ok",
    "the method is empty or not an HTTP token",
    "the path does not start with \"/\", has a control byte or a bad \"%\"",
    "the query has a bad \"%\" or a parameter the signature adds",
    "a header name is not a token, or a value has a control byte",
    "too many query parameters or headers",
    "a field is longer than its limit",
    "the payload hash is not 64 lowercase hex digits",
    "the key id, secret, region or service is empty or has a bad byte",
    "the time is before 1970 or after 9999",
    "the expiry is out of range, or set for an Authorization header",
    "the output buffer is too small",
    "OpenSSL failed",
    "no such text"
};


int
cms_sigv4_amz_date(int64_t t, char out[CMS_SIGV4_DATE_LEN + 1])
{
    int64_t  z, era, doe, yoe, doy, mp, m, sec;

    if (t < 0 || t >= INT64_C(253402300800)) {
        return CMS_SIGV4_E_TIME;
    }

    /* days to a civil date (H. Hinnant's civil_from_days), days >= 0 */
    z = t / 86400 + 719468;
    era = z / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    m = (mp < 10) ? mp + 3 : mp - 9;
    sec = t % 86400;

    cms_sigv4_digits(out, yoe + era * 400 + (m <= 2), 4);
    cms_sigv4_digits(out + 4, m, 2);
    cms_sigv4_digits(out + 6, doy - (153 * mp + 2) / 5 + 1, 2);
    out[8] = 'T';
    cms_sigv4_digits(out + 9, sec / 3600, 2);
    cms_sigv4_digits(out + 11, sec / 60 % 60, 2);
    cms_sigv4_digits(out + 13, sec % 60, 2);
    out[15] = 'Z';
    out[16] = '\0';

    return CMS_SIGV4_OK;
}


int
cms_sigv4_payload_hash(const void *p, size_t n,
    char out[CMS_SIGV4_HEX_LEN + 1])
{
    unsigned char  md[32];

    if (cms_sigv4_digest(NULL, p, n, md) != CMS_SIGV4_OK) {
        return CMS_SIGV4_E_CRYPTO;
    }

    cms_hex_encode(md, sizeof(md), out);
    out[CMS_SIGV4_HEX_LEN] = '\0';

    return CMS_SIGV4_OK;
}


int
cms_sigv4_signing_key(const cms_sigv4_scope_t *s,
    unsigned char key[CMS_SIGV4_KEY_LEN])
{
    int               rc;
    cms_sigv4_cred_t  cr;

    rc = cms_sigv4_scope_check(&cr, s);

    return (rc == CMS_SIGV4_OK) ? cms_sigv4_key(s, &cr, key) : rc;
}


int
cms_sigv4_size(const cms_sigv4_request_t *r, const cms_sigv4_scope_t *s,
    int text, size_t *size)
{
    int              rc;
    cms_sigv4_out_t  o;

    memset(&o, 0, sizeof(o));

    rc = cms_sigv4_run(r, s, text, &o);

    if (rc == CMS_SIGV4_OK) {
        *size = o.len;
    }

    return rc;
}


int
cms_sigv4_text(const cms_sigv4_request_t *r, const cms_sigv4_scope_t *s,
    int text, char *out, size_t size)
{
    cms_sigv4_out_t  o;

    memset(&o, 0, sizeof(o));
    o.buf = out;
    o.size = size;

    /* a NULL out would only count */
    return (out != NULL) ? cms_sigv4_run(r, s, text, &o) : CMS_SIGV4_E_SPACE;
}


const char *
cms_sigv4_error(int rc)
{
    if (rc > 0 || rc < CMS_SIGV4_E_TEXT) {
        return "an unknown error";
    }

    return cms_sigv4_errors[-rc];
}


/*
 * Checks the request, then writes (or counts) the text "what" and its
 * NUL.  Counting needs no hashing: a hash and a signature are always 64
 * hex digits, so zeros stand in for them.
 */
static int
cms_sigv4_run(const cms_sigv4_request_t *r, const cms_sigv4_scope_t *s,
    int what, cms_sigv4_out_t *o)
{
    int              rc;
    char             hex[CMS_SIGV4_HEX_LEN];
    cms_sigv4_ctx_t  c;

    rc = cms_sigv4_prepare(&c, r, s, what);

    memset(hex, '0', sizeof(hex));

    if (rc == CMS_SIGV4_OK && o->buf != NULL
        && what != CMS_SIGV4_CANONICAL_REQUEST)
    {
        /* a string to sign needs the canonical request's hash alone */
        rc = cms_sigv4_sign(&c, hex, what == CMS_SIGV4_STRING_TO_SIGN);
    }

    if (rc != CMS_SIGV4_OK) {
        return rc;
    }

    if (what == CMS_SIGV4_CANONICAL_REQUEST) {
        cms_sigv4_creq_put(&c, o);

    } else if (what == CMS_SIGV4_STRING_TO_SIGN) {
        cms_sigv4_sts_put(&c, o, hex);

    } else if (what == CMS_SIGV4_AUTHORIZATION) {
        cms_sigv4_puts(o, CMS_SIGV4_ALGORITHM " Credential=");
        cms_sigv4_put(o, c.cred.credential, c.cred.credential_len);
        cms_sigv4_puts(o, ", SignedHeaders=");
        cms_sigv4_put(o, c.signed_headers, c.signed_len);
        cms_sigv4_puts(o, ", Signature=");
        cms_sigv4_put(o, hex, sizeof(hex));

    } else {
        cms_sigv4_query_put(&c, o);
        cms_sigv4_puts(o, "&X-Amz-Signature=");
        cms_sigv4_put(o, hex, sizeof(hex));
    }

    cms_sigv4_put(o, "", 1);

    return (o->buf != NULL && o->len > o->size) ? CMS_SIGV4_E_SPACE
                                                : CMS_SIGV4_OK;
}


/* counts p[0 .. n), copies it while it fits, hashes it when asked */
static void
cms_sigv4_put(cms_sigv4_out_t *o, const char *p, size_t n)
{
    if (o->buf != NULL && o->len <= o->size && n <= o->size - o->len) {
        memcpy(o->buf + o->len, p, n);
    }

    if (o->md != NULL && n > 0 && EVP_DigestUpdate(o->md, p, n) != 1) {
        o->failed = 1;
    }

    o->len += n;
}


/* s read as mode says, every byte but unreserved ones (and "/") as %XX */
static void
cms_sigv4_encode_put(cms_sigv4_out_t *o, const cms_sigv4_str_t *s,
    unsigned mode, unsigned keep_slash)
{
    char               buf[96];
    size_t             i, n;
    unsigned           b;
    static const char  hex[] = "0123456789ABCDEF";

    for (i = 0, n = 0; i < s->len; /* void */) {
        b = cms_sigv4_next(s, &i, mode);

        if (cms_sigv4_unreserved(b) || (keep_slash && b == '/')) {
            buf[n++] = (char) b;

        } else {
            buf[n++] = '%';
            buf[n++] = hex[b >> 4];
            buf[n++] = hex[b & 0x0f];
        }

        if (n > sizeof(buf) - 3) {
            cms_sigv4_put(o, buf, n);
            n = 0;
        }
    }

    cms_sigv4_put(o, buf, n);
}


static void
cms_sigv4_creq_put(const cms_sigv4_ctx_t *c, cms_sigv4_out_t *o)
{
    const cms_sigv4_request_t  *r;

    r = c->r;

    cms_sigv4_put(o, r->method, r->method_len);
    cms_sigv4_puts(o, "\n");
    cms_sigv4_path_put(r, o);
    cms_sigv4_puts(o, "\n");
    cms_sigv4_query_put(c, o);
    cms_sigv4_puts(o, "\n");
    cms_sigv4_headers_put(c, o);
    cms_sigv4_puts(o, "\n");
    cms_sigv4_put(o, c->signed_headers, c->signed_len);
    cms_sigv4_puts(o, "\n");

    if (r->payload_hash == NULL) {
        cms_sigv4_puts(o, CMS_SIGV4_UNSIGNED);

    } else {
        cms_sigv4_put(o, r->payload_hash, r->payload_hash_len);
    }
}


/* S3's path decoded and encoded once; the others' encoded as they are */
static void
cms_sigv4_path_put(const cms_sigv4_request_t *r, cms_sigv4_out_t *o)
{
    unsigned         mode;
    cms_sigv4_str_t  path;

    mode = (r->flags & CMS_SIGV4_SINGLE_ENCODE) ? CMS_SIGV4_PCT
                                                : CMS_SIGV4_RAW;

    if (!(r->flags & CMS_SIGV4_NO_NORMALIZE)) {
        cms_sigv4_normalized_put(r, o, mode);
        return;
    }

    path.p = (r->path_len > 0) ? r->path : "/";
    path.len = (r->path_len > 0) ? r->path_len : 1;

    cms_sigv4_encode_put(o, &path, mode, 1);
}


/*
 * The path without empty, "." and ".." segments, as AWS's own signers
 * write it: "/", the segments left joined by "/", and a last "/" when
 * the path ends with one and a segment is left.  What is left is a stack
 * of offsets; a ".." above the root pops nothing.
 */
static void
cms_sigv4_normalized_put(const cms_sigv4_request_t *r, cms_sigv4_out_t *o,
    unsigned mode)
{
    size_t           i, end, k, n, len;
    uint16_t         seg[CMS_SIGV4_PATH_MAX / 2 + 1];
    const char      *p;
    cms_sigv4_str_t  s;

    p = r->path;
    len = r->path_len;

    for (i = 0, n = 0; i < len; i = end + 1) {
        for (end = i; end < len && p[end] != '/'; end++) {
            /* void */
        }

        if (end - i == 2 && p[i] == '.' && p[i + 1] == '.') {
            n -= (n > 0);

        } else if (end - i > 1 || (end - i == 1 && p[i] != '.')) {
            seg[n++] = (uint16_t) i;
        }
    }

    cms_sigv4_puts(o, "/");

    for (k = 0; k < n; k++) {
        s.p = p + seg[k];

        for (s.len = 0; seg[k] + s.len < len && s.p[s.len] != '/'; s.len++) {
            /* void */
        }

        cms_sigv4_encode_put(o, &s, mode, 1);

        if (k + 1 < n || p[len - 1] == '/') {
            cms_sigv4_puts(o, "/");
        }
    }
}


static void
cms_sigv4_query_put(const cms_sigv4_ctx_t *c, cms_sigv4_out_t *o)
{
    size_t                    i;
    const cms_sigv4_param_t  *p;

    for (i = 0; i < c->nparams; i++) {
        p = &c->params[i];

        if (i > 0) {
            cms_sigv4_puts(o, "&");
        }

        cms_sigv4_encode_put(o, &p->name, p->mode, 0);
        cms_sigv4_puts(o, "=");
        cms_sigv4_encode_put(o, &p->value, p->mode, 0);
    }
}


/* "name:value[,value...]\n" per name, in order */
static void
cms_sigv4_headers_put(const cms_sigv4_ctx_t *c, cms_sigv4_out_t *o)
{
    char                       name[CMS_SIGV4_NAME_MAX];
    size_t                     i, j, k;
    const cms_sigv4_header_t  *hs, *h;

    hs = c->r->headers;

    for (i = 0; i < c->r->nheaders; i = j) {
        j = cms_sigv4_group_end(c, i);
        h = &hs[c->order[i]];

        cms_sigv4_lower(name, h->name, h->name_len);
        cms_sigv4_put(o, name, h->name_len);
        cms_sigv4_puts(o, ":");

        for (k = i; k < j; k++) {
            if (k > i) {
                cms_sigv4_puts(o, ",");
            }

            cms_sigv4_value_put(o, &hs[c->order[k]]);
        }

        cms_sigv4_puts(o, "\n");
    }
}


/* the value without leading or trailing blanks, inner runs one space */
static void
cms_sigv4_value_put(cms_sigv4_out_t *o, const cms_sigv4_header_t *h)
{
    size_t       i, start, n;
    const char  *v;

    v = h->value;
    n = h->value_len;

    for (i = 0, start = 0; i < n; start = 1) {
        while (i < n && (v[i] == ' ' || v[i] == '\t')) {
            i++;
        }

        if (i == n) {
            break;
        }

        if (start) {
            cms_sigv4_puts(o, " ");
        }

        for (start = i; i < n && v[i] != ' ' && v[i] != '\t'; i++) {
            /* void */
        }

        cms_sigv4_put(o, v + start, i - start);
    }
}


static void
cms_sigv4_sts_put(const cms_sigv4_ctx_t *c, cms_sigv4_out_t *o,
    const char *hex)
{
    cms_sigv4_puts(o, CMS_SIGV4_ALGORITHM "\n");
    cms_sigv4_put(o, c->cred.date, CMS_SIGV4_DATE_LEN);
    cms_sigv4_puts(o, "\n");
    cms_sigv4_put(o, c->cred.credential + c->cred.scope_off,
                  c->cred.credential_len - c->cred.scope_off);
    cms_sigv4_puts(o, "\n");
    cms_sigv4_put(o, hex, CMS_SIGV4_HEX_LEN);
}


/*
 * SHA-256 of p[0 .. n), or of c's canonical request when c is set: that
 * one is streamed into the digest, never kept.
 */
static int
cms_sigv4_digest(const cms_sigv4_ctx_t *c, const void *p, size_t n,
    unsigned char md[32])
{
    unsigned int     len;
    cms_sigv4_out_t  o;

    memset(&o, 0, sizeof(o));

    o.md = EVP_MD_CTX_new();
    if (o.md == NULL) {
        return CMS_SIGV4_E_CRYPTO;
    }

    o.failed = (EVP_DigestInit_ex(o.md, cms_sha256(), NULL) != 1);

    if (!o.failed && c != NULL) {
        cms_sigv4_creq_put(c, &o);

    } else if (!o.failed) {
        cms_sigv4_put(&o, p, n);
    }

    if (!o.failed
        && (EVP_DigestFinal_ex(o.md, md, &len) != 1 || len != 32))
    {
        o.failed = 1;
    }

    EVP_MD_CTX_free(o.md);

    return o.failed ? CMS_SIGV4_E_CRYPTO : CMS_SIGV4_OK;
}


/*
 * Into hex, 64 digits: the hash of the canonical request (hash_only), or
 * the signature, the HMAC of the string to sign under the signing key.
 */
static int
cms_sigv4_sign(const cms_sigv4_ctx_t *c, char *hex, int hash_only)
{
    int              rc;
    char             sts[CMS_SIGV4_STS_MAX];
    unsigned char    key[CMS_SIGV4_KEY_LEN], mac[32];
    cms_sigv4_out_t  o;

    rc = cms_sigv4_digest(c, NULL, 0, mac);
    if (rc != CMS_SIGV4_OK) {
        return rc;
    }

    cms_hex_encode(mac, sizeof(mac), hex);

    if (hash_only) {
        return CMS_SIGV4_OK;
    }

    /* fits: CMS_SIGV4_STS_MAX is its size with the longest scope */
    memset(&o, 0, sizeof(o));
    o.buf = sts;
    o.size = sizeof(sts);
    cms_sigv4_sts_put(c, &o, hex);

    rc = cms_sigv4_key(c->s, &c->cred, key);

    if (rc == CMS_SIGV4_OK
        && cms_hmac_sha256(key, sizeof(key), (unsigned char *) sts, o.len,
                           mac)
           != 0)
    {
        rc = CMS_SIGV4_E_CRYPTO;
    }

    OPENSSL_cleanse(key, sizeof(key));

    if (rc == CMS_SIGV4_OK) {
        cms_hex_encode(mac, sizeof(mac), hex);
    }

    return rc;
}


/*
 * The signing key of s (checked into cr): the cache's when it holds this
 * "date/region/service" under the same secret, else derived (and then
 * kept in the cache).
 */
static int
cms_sigv4_key(const cms_sigv4_scope_t *s, const cms_sigv4_cred_t *cr,
    unsigned char key[CMS_SIGV4_KEY_LEN])
{
    int                 rc;
    size_t              len;
    const char         *scope;
    unsigned char       sh[32];
    cms_sigv4_cache_t  *cache;

    cache = s->cache;
    scope = cr->credential + cr->scope_off;
    len = cr->credential_len - cr->scope_off - CMS_SIGV4_TERM_LEN;

    if (cache == NULL) {
        return cms_sigv4_chain(s, cr->date, key);
    }

    if (cms_sigv4_digest(NULL, s->secret, s->secret_len, sh) != 0) {
        return CMS_SIGV4_E_CRYPTO;
    }

    if (cache->scope_len == len && memcmp(cache->scope, scope, len) == 0
        && CRYPTO_memcmp(cache->secret_hash, sh, sizeof(sh)) == 0)
    {
        memcpy(key, cache->key, CMS_SIGV4_KEY_LEN);
        return CMS_SIGV4_OK;
    }

    /* emptied first: a failed derivation leaves no stale key behind */
    cache->scope_len = 0;

    rc = cms_sigv4_chain(s, cr->date, key);

    if (rc == CMS_SIGV4_OK) {
        memcpy(cache->scope, scope, len);
        memcpy(cache->secret_hash, sh, sizeof(sh));
        memcpy(cache->key, key, CMS_SIGV4_KEY_LEN);
        cache->scope_len = len;
    }

    return rc;
}


/* kDate, kRegion, kService, then kSigning into key */
static int
cms_sigv4_chain(const cms_sigv4_scope_t *s, const char *date,
    unsigned char key[CMS_SIGV4_KEY_LEN])
{
    int                  rc;
    unsigned char        k[4 + CMS_SIGV4_SECRET_MAX], a[32], b[32];
    const unsigned char  *u;

    memcpy(k, "AWS4", 4);
    memcpy(k + 4, s->secret, s->secret_len);

    u = (const unsigned char *) date;
    rc = cms_hmac_sha256(k, 4 + s->secret_len, u, 8, a);

    u = (const unsigned char *) s->region;
    rc = rc || cms_hmac_sha256(a, sizeof(a), u, s->region_len, b);

    u = (const unsigned char *) s->service;
    rc = rc || cms_hmac_sha256(b, sizeof(b), u, s->service_len, a);

    u = (const unsigned char *) CMS_SIGV4_TERMINATOR + 1;
    rc = rc || cms_hmac_sha256(a, sizeof(a), u, CMS_SIGV4_TERM_LEN - 1, key);

    OPENSSL_cleanse(k, sizeof(k));
    OPENSSL_cleanse(a, sizeof(a));
    OPENSSL_cleanse(b, sizeof(b));

    return rc ? CMS_SIGV4_E_CRYPTO : CMS_SIGV4_OK;
}
