
/*
 * SigV4, the reading half: a request and its scope checked into a
 * context, the parameters and headers sorted there as spans of the
 * caller's text, and the byte classes and orders that takes; see
 * cms_sigv4.c for the writing half.
 */


#include <string.h>

#include "cms_sigv4.h"
#include "cms_sigv4_int.h"
#include "cms_hex.h"


#define cms_sigv4_str(s)  { s, sizeof(s) - 1 }


typedef int (*cms_sigv4_check_pt)(cms_sigv4_ctx_t *c);
typedef int (*cms_sigv4_byte_pt)(unsigned b);


/* checking a request into a context */
static int cms_sigv4_bytes_check(const char *p, size_t len, size_t max,
    cms_sigv4_byte_pt ok, int err);
static int cms_sigv4_line_check(cms_sigv4_ctx_t *c);
static int cms_sigv4_headers_sort(cms_sigv4_ctx_t *c);
static int cms_sigv4_query_parse(cms_sigv4_ctx_t *c);
static int cms_sigv4_presign_params(cms_sigv4_ctx_t *c);
static void cms_sigv4_params_sort(cms_sigv4_ctx_t *c);

/* bytes, spans and their order */
static int cms_sigv4_tchar(unsigned b);
static int cms_sigv4_field_byte(unsigned b);
static int cms_sigv4_escapes_ok(const char *p, size_t n);
static int cms_sigv4_str_cmp(const cms_sigv4_str_t *a, unsigned am,
    const cms_sigv4_str_t *b, unsigned bm);
static int cms_sigv4_param_cmp(const cms_sigv4_param_t *a,
    const cms_sigv4_param_t *b);
static int cms_sigv4_name_cmp(const cms_sigv4_header_t *a,
    const cms_sigv4_header_t *b);


/* checks r and s into c, its parameters and headers sorted */
int
cms_sigv4_prepare(cms_sigv4_ctx_t *c, const cms_sigv4_request_t *r,
    const cms_sigv4_scope_t *s, int what)
{
    int     rc;
    size_t  i;

    static const cms_sigv4_check_pt  checks[] = {
        cms_sigv4_line_check, cms_sigv4_headers_sort, cms_sigv4_query_parse,
        cms_sigv4_presign_params
    };

    c->r = r;
    c->s = s;
    c->nparams = 0;

    if (what < CMS_SIGV4_CANONICAL_REQUEST
        || what > CMS_SIGV4_PRESIGNED_QUERY)
    {
        return CMS_SIGV4_E_TEXT;
    }

    if (r->expires > CMS_SIGV4_EXPIRES_MAX
        || (what == CMS_SIGV4_AUTHORIZATION && r->expires != 0)
        || (what == CMS_SIGV4_PRESIGNED_QUERY && r->expires == 0))
    {
        return CMS_SIGV4_E_EXPIRES;
    }

    rc = cms_sigv4_scope_check(&c->cred, s);

    for (i = 0; rc == CMS_SIGV4_OK && i < sizeof(checks) / sizeof(checks[0]);
         i++)
    {
        rc = checks[i](c);
    }

    if (rc == CMS_SIGV4_OK) {
        cms_sigv4_params_sort(c);
    }

    return rc;
}


/* the scope's fields, and its date and credential into cr */
int
cms_sigv4_scope_check(cms_sigv4_cred_t *cr, const cms_sigv4_scope_t *s)
{
    int     rc;
    size_t  i, n;

    /* "<key id>/<date>/<region>/<service>/aws4_request" */
    const cms_sigv4_str_t  parts[] = {
        { s->key_id, s->key_id_len }, { "/", 1 }, { cr->date, 8 },
        { "/", 1 }, { s->region, s->region_len }, { "/", 1 },
        { s->service, s->service_len }, cms_sigv4_str(CMS_SIGV4_TERMINATOR)
    };

    static const size_t  max[] = {
        CMS_SIGV4_KEY_ID_MAX, 0, 8, 0, CMS_SIGV4_REGION_MAX, 0,
        CMS_SIGV4_SERVICE_MAX
    };

    rc = cms_sigv4_amz_date(s->time, cr->date);

    /* the words between the "/": each against its limit */
    for (i = 0; rc == CMS_SIGV4_OK && i < 7; i += 2) {
        rc = cms_sigv4_bytes_check(parts[i].p, parts[i].len, max[i],
                                   cms_sigv4_unreserved, CMS_SIGV4_E_SCOPE);
    }

    if (rc == CMS_SIGV4_OK) {
        rc = (s->secret_len > CMS_SIGV4_SECRET_MAX) ? CMS_SIGV4_E_TOO_LONG
             : (s->secret_len == 0) ? CMS_SIGV4_E_SCOPE : CMS_SIGV4_OK;
    }

    if (rc != CMS_SIGV4_OK) {
        return rc;
    }

    for (i = 0, n = 0; i < 8; i++) {
        memcpy(cr->credential + n, parts[i].p, parts[i].len);
        n += parts[i].len;
    }

    cr->scope_off = s->key_id_len + 1;
    cr->credential_len = n;

    return CMS_SIGV4_OK;
}


/* 1 to max bytes that "ok" takes; else err, or E_TOO_LONG past max */
static int
cms_sigv4_bytes_check(const char *p, size_t len, size_t max,
    cms_sigv4_byte_pt ok, int err)
{
    size_t  i;

    if (len > max) {
        return CMS_SIGV4_E_TOO_LONG;
    }

    for (i = 0; i < len; i++) {
        if (!ok((unsigned char) p[i])) {
            return err;
        }
    }

    return (len == 0) ? err : CMS_SIGV4_OK;
}


/*
 * The method (a token); the path ("" or from "/", no control byte but
 * tab, and when it is decoded each "%" starting a "%XX"); the payload
 * hash (none, "UNSIGNED-PAYLOAD", or 64 lowercase hex digits).
 */
static int
cms_sigv4_line_check(cms_sigv4_ctx_t *c)
{
    int                         rc;
    size_t                      i, n;
    const char                 *h;
    const cms_sigv4_request_t  *r;

    r = c->r;
    h = r->payload_hash;
    n = r->payload_hash_len;

    rc = cms_sigv4_bytes_check(r->method, r->method_len, CMS_SIGV4_METHOD_MAX,
                               cms_sigv4_tchar, CMS_SIGV4_E_METHOD);

    if (rc == CMS_SIGV4_OK && r->path_len > 0) {
        rc = (r->path[0] != '/') ? CMS_SIGV4_E_PATH
             : cms_sigv4_bytes_check(r->path, r->path_len, CMS_SIGV4_PATH_MAX,
                                     cms_sigv4_field_byte, CMS_SIGV4_E_PATH);
    }

    if (rc == CMS_SIGV4_OK && (r->flags & CMS_SIGV4_SINGLE_ENCODE)
        && !cms_sigv4_escapes_ok(r->path, r->path_len))
    {
        rc = CMS_SIGV4_E_PATH;
    }

    if (rc != CMS_SIGV4_OK || h == NULL
        || (n == sizeof(CMS_SIGV4_UNSIGNED) - 1
            && memcmp(h, CMS_SIGV4_UNSIGNED, n) == 0))
    {
        return rc;
    }

    for (i = 0; i < n; i++) {
        if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f'))) {
            return CMS_SIGV4_E_PAYLOAD;
        }
    }

    return (n == CMS_SIGV4_HEX_LEN) ? CMS_SIGV4_OK : CMS_SIGV4_E_PAYLOAD;
}


/*
 * Checks each header, sorts their indexes into c->order by name (stable:
 * insertion, so that a repeated name keeps the order of its values) and
 * writes the signed names, each once, into c->signed_headers.
 */
static int
cms_sigv4_headers_sort(cms_sigv4_ctx_t *c)
{
    int                        rc;
    size_t                     i, j, n;
    const cms_sigv4_header_t  *hs;

    hs = c->r->headers;
    n = c->r->nheaders;

    if (n > CMS_SIGV4_HEADERS_MAX) {
        return CMS_SIGV4_E_TOO_MANY;
    }

    for (i = 0; i < n; i++) {
        rc = cms_sigv4_bytes_check(hs[i].name, hs[i].name_len,
                                   CMS_SIGV4_NAME_MAX, cms_sigv4_tchar,
                                   CMS_SIGV4_E_HEADER);

        /* an empty value is a value */
        if (rc == CMS_SIGV4_OK && hs[i].value_len > 0) {
            rc = cms_sigv4_bytes_check(hs[i].value, hs[i].value_len,
                                       CMS_SIGV4_VALUE_MAX,
                                       cms_sigv4_field_byte,
                                       CMS_SIGV4_E_HEADER);
        }

        if (rc != CMS_SIGV4_OK) {
            return rc;
        }

        for (j = i; j > 0 && cms_sigv4_name_cmp(&hs[c->order[j - 1]], &hs[i])
                             > 0; j--)
        {
            c->order[j] = c->order[j - 1];
        }

        c->order[j] = (unsigned char) i;
    }

    for (i = 0, c->signed_len = 0; i < n; i = cms_sigv4_group_end(c, i)) {
        if (i > 0) {
            c->signed_headers[c->signed_len++] = ';';
        }

        cms_sigv4_lower(c->signed_headers + c->signed_len,
                        hs[c->order[i]].name, hs[c->order[i]].name_len);
        c->signed_len += hs[c->order[i]].name_len;
    }

    return CMS_SIGV4_OK;
}


/* the caller's query into c->params: name[=value] pairs split at "&" */
static int
cms_sigv4_query_parse(cms_sigv4_ctx_t *c)
{
    size_t              i, end, n;
    const char         *q, *eq;
    cms_sigv4_param_t  *p;

    q = c->r->query;
    n = c->r->query_len;

    if (n > CMS_SIGV4_QUERY_MAX) {
        return CMS_SIGV4_E_TOO_LONG;
    }

    if (!cms_sigv4_escapes_ok(q, n)) {
        return CMS_SIGV4_E_QUERY;
    }

    for (i = 0; i < n; i = end + 1) {
        for (end = i; end < n && q[end] != '&'; end++) {
            /* void */
        }

        if (end == i) {
            continue;
        }

        if (c->nparams == CMS_SIGV4_PARAMS_MAX) {
            return CMS_SIGV4_E_TOO_MANY;
        }

        p = &c->params[c->nparams++];
        eq = memchr(q + i, '=', end - i);
        eq = (eq != NULL) ? eq : q + end;

        p->name.p = q + i;
        p->name.len = (size_t) (eq - (q + i));
        p->value.p = (eq < q + end) ? eq + 1 : q + end;
        p->value.len = (size_t) (q + end - p->value.p);
        p->mode = CMS_SIGV4_FORM;
    }

    return CMS_SIGV4_OK;
}


/*
 * A presigned URL's X-Amz-* parameters, after refusing a caller's one of
 * their names (or X-Amz-Signature): the URL would carry it twice, and
 * which one a server reads is anyone's guess.
 */
static int
cms_sigv4_presign_params(cms_sigv4_ctx_t *c)
{
    size_t              i, k, n;
    unsigned            v;
    cms_sigv4_param_t  *p;

    cms_sigv4_str_t  values[CMS_SIGV4_XAMZ] = {
        cms_sigv4_str(CMS_SIGV4_ALGORITHM),
        { c->cred.credential, c->cred.credential_len },
        { c->cred.date, CMS_SIGV4_DATE_LEN }, { c->expires, 0 },
        { c->signed_headers, c->signed_len }
    };

    static const cms_sigv4_str_t  names[CMS_SIGV4_XAMZ + 1] = {
        cms_sigv4_str("X-Amz-Algorithm"), cms_sigv4_str("X-Amz-Credential"),
        cms_sigv4_str("X-Amz-Date"), cms_sigv4_str("X-Amz-Expires"),
        cms_sigv4_str("X-Amz-SignedHeaders"), cms_sigv4_str("X-Amz-Signature")
    };

    if (c->r->expires == 0) {
        return CMS_SIGV4_OK;
    }

    for (i = 0; i < c->nparams * (CMS_SIGV4_XAMZ + 1); i++) {
        if (cms_sigv4_str_cmp(&c->params[i / (CMS_SIGV4_XAMZ + 1)].name,
                              CMS_SIGV4_FORM, &names[i % (CMS_SIGV4_XAMZ + 1)],
                              CMS_SIGV4_RAW) == 0)
        {
            return CMS_SIGV4_E_QUERY;
        }
    }

    for (v = c->r->expires, n = 0; v > 0; v /= 10) {
        n++;
    }

    cms_sigv4_digits(c->expires, c->r->expires, n);
    values[3].len = n;

    p = &c->params[c->nparams];
    c->nparams += CMS_SIGV4_XAMZ;

    for (k = 0; k < CMS_SIGV4_XAMZ; k++) {
        p[k].name = names[k];
        p[k].value = values[k];
        p[k].mode = CMS_SIGV4_RAW;
    }

    return CMS_SIGV4_OK;
}


/* insertion sort: CMS_SIGV4_PARAMS_MAX + 5 at the most */
static void
cms_sigv4_params_sort(cms_sigv4_ctx_t *c)
{
    size_t             i, j;
    cms_sigv4_param_t  p;

    for (i = 1; i < c->nparams; i++) {
        p = c->params[i];

        for (j = i; j > 0 && cms_sigv4_param_cmp(&c->params[j - 1], &p) > 0;
             j--)
        {
            c->params[j] = c->params[j - 1];
        }

        c->params[j] = p;
    }
}


/* RFC 3986 unreserved: A-Z a-z 0-9 - . _ ~ */
int
cms_sigv4_unreserved(unsigned b)
{
    return (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z')
           || (b >= '0' && b <= '9') || b == '-' || b == '.' || b == '_'
           || b == '~';
}


/* an HTTP token's byte (RFC 9110 tchar) */
static int
cms_sigv4_tchar(unsigned b)
{
    return cms_sigv4_unreserved(b)
           || (b > 0x20 && b < 0x7f && strchr("!#$%&'*+^`|", (int) b));
}


/* in a path or a header value: no control byte but tab */
static int
cms_sigv4_field_byte(unsigned b)
{
    return (b >= 0x20 && b != 0x7f) || b == '\t';
}


/* 1 when every "%" in p[0 .. n) starts a "%XX" */
static int
cms_sigv4_escapes_ok(const char *p, size_t n)
{
    size_t         i;
    unsigned char  b;

    for (i = 0; i < n; i++) {
        if (p[i] == '%' && (n - i < 3 || cms_hex_decode(p + i + 1, 2, &b))) {
            return 0;
        }
    }

    return 1;
}


/* the byte at s->p[*i] as mode reads it; *i moves past what it took */
unsigned
cms_sigv4_next(const cms_sigv4_str_t *s, size_t *i, unsigned mode)
{
    unsigned char  b;

    b = (unsigned char) s->p[*i];

    if (mode != CMS_SIGV4_RAW && b == '%' && s->len - *i >= 3
        && cms_hex_decode(s->p + *i + 1, 2, &b) == 0)
    {
        *i += 3;
        return b;
    }

    (*i)++;

    return (mode == CMS_SIGV4_FORM && b == '+') ? ' ' : b;
}


/*
 * Compares two spans as their encodings would compare, without encoding
 * them: an encoded byte ("%XX") sorts below every unreserved one ("%" is
 * below "-", the least of them), two encoded ones as their values (upper
 * case hex sorts as the numbers do), two unreserved ones as themselves.
 */
static int
cms_sigv4_str_cmp(const cms_sigv4_str_t *a, unsigned am,
    const cms_sigv4_str_t *b, unsigned bm)
{
    size_t    i, j;
    unsigned  x, y;

    for (i = 0, j = 0; i < a->len && j < b->len; /* void */) {
        x = cms_sigv4_next(a, &i, am);
        y = cms_sigv4_next(b, &j, bm);
        x += cms_sigv4_unreserved(x) ? 0x100 : 0;
        y += cms_sigv4_unreserved(y) ? 0x100 : 0;

        if (x != y) {
            return (x < y) ? -1 : 1;
        }
    }

    return (i < a->len) - (j < b->len);
}


/* by name, then by value */
static int
cms_sigv4_param_cmp(const cms_sigv4_param_t *a, const cms_sigv4_param_t *b)
{
    int  rc;

    rc = cms_sigv4_str_cmp(&a->name, a->mode, &b->name, b->mode);

    return (rc != 0) ? rc : cms_sigv4_str_cmp(&a->value, a->mode,
                                              &b->value, b->mode);
}


/* header names compared in lowercase */
static int
cms_sigv4_name_cmp(const cms_sigv4_header_t *a, const cms_sigv4_header_t *b)
{
    char    x, y;
    size_t  i;

    for (i = 0; i < a->name_len && i < b->name_len; i++) {
        cms_sigv4_lower(&x, a->name + i, 1);
        cms_sigv4_lower(&y, b->name + i, 1);

        if (x != y) {
            return ((unsigned char) x < (unsigned char) y) ? -1 : 1;
        }
    }

    return (a->name_len > b->name_len) - (a->name_len < b->name_len);
}


/* the end of the run of sorted headers named as the i-th one */
size_t
cms_sigv4_group_end(const cms_sigv4_ctx_t *c, size_t i)
{
    size_t                     j;
    const cms_sigv4_header_t  *hs;

    hs = c->r->headers;

    for (j = i + 1; j < c->r->nheaders
                    && cms_sigv4_name_cmp(&hs[c->order[i]],
                                          &hs[c->order[j]]) == 0; j++)
    {
        /* void */
    }

    return j;
}


/* n bytes of src into dst, A-Z in lowercase */
void
cms_sigv4_lower(char *dst, const char *src, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        dst[i] = (src[i] >= 'A' && src[i] <= 'Z') ? src[i] + 32 : src[i];
    }
}


/* the n low decimal digits of v >= 0, zero-padded */
void
cms_sigv4_digits(char *out, int64_t v, size_t n)
{
    while (n > 0) {
        out[--n] = (char) ('0' + v % 10);
        v /= 10;
    }
}
