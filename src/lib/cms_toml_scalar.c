
/*
 * The TOML parser's scalar values: basic and literal strings (escapes,
 * \u and \U to UTF-8), integers, floats and booleans; see cms_toml.h for
 * what is supported and what is refused.
 */


#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cms_hex.h"
#include "cms_toml.h"
#include "cms_toml_int.h"


/* a number's token as strtod() and the integer conversion read it */
typedef struct {
    char                buf[CMS_TOML_MAX_NUMBER + 1];  /* no '_', a NUL */
    size_t              n;
    int                 is_float;
} cms_toml_number_t;


/* strings */
static int cms_toml_unescape(cms_toml_ctx_t *ctx, const char *p,
    const char *end, char *out, size_t *len);
static int cms_toml_escape(char c);
static int cms_toml_unescape_unicode(cms_toml_ctx_t *ctx, const char **pp,
    const char *end, char **op);
static int cms_toml_hex_value(const char *p, int ndigits, uint32_t *u);
static size_t cms_toml_utf8_put(char *o, uint32_t u);

/* numbers */
static const char *cms_toml_number_unsupported(const char *s,
    const char *e);
static const char *cms_toml_number_copy(const char *s, const char *e,
    cms_toml_number_t *num);
static int cms_toml_number_digits(const char **p, const char *e,
    cms_toml_number_t *num);
static int cms_toml_number_float(cms_toml_ctx_t *ctx, cms_toml_node_t *v,
    const char *at, const cms_toml_number_t *num);
static int cms_toml_number_integer(cms_toml_ctx_t *ctx, cms_toml_node_t *v,
    const char *at, const cms_toml_number_t *num);


/*
 * A basic ("...") or literal ('...') string at ctx->p, on one line, into
 * *s and *len.  Its body goes into the arena, unescaped (never longer
 * than the body) with a NUL, except a literal key (copy 0): that points
 * into the text and is copied only if it names a new node.  Returns 0, or
 * -1 with ctx->err filled.
 */

int
cms_toml_parse_string(cms_toml_ctx_t *ctx, const char **s, size_t *len,
    int copy)
{
    char         q, *out;
    const char  *open, *p;

    open = ctx->p;
    q = *open;

    for (p = open + 1; p < ctx->end && *p != q && !cms_toml_is_eol(*p); p++)
    {
        if (q == '"' && *p == '\\' && p + 1 < ctx->end
            && !cms_toml_is_eol(p[1]))
        {
            p++;
        }
    }

    if (p == ctx->end || *p != q) {
        return cms_toml_fail(ctx, open, "unterminated string");
    }

    ctx->p = p + 1;
    *len = p - open - 1;

    if (q == '\'' && !copy) {
        *s = open + 1;
        return 0;
    }

    out = cms_toml_text_alloc(ctx, *len + 1, open);
    if (out == NULL) {
        return -1;
    }

    if (q == '"') {
        if (cms_toml_unescape(ctx, open + 1, p, out, len) != 0) {
            return -1;
        }

    } else {
        memcpy(out, open + 1, *len);
    }

    out[*len] = '\0';
    *s = out;

    return 0;
}


/* the body of a basic string, p[0 .. end), decoded into out */

static int
cms_toml_unescape(cms_toml_ctx_t *ctx, const char *p, const char *end,
    char *out, size_t *len)
{
    int    c;
    char  *o;

    o = out;

    while (p < end) {

        if (*p != '\\') {
            *o++ = *p++;
            continue;
        }

        c = cms_toml_escape(p[1]);

        if (c != -1) {
            *o++ = (char) c;
            p += 2;
            continue;
        }

        if (p[1] != 'u' && p[1] != 'U') {
            return cms_toml_fail(ctx, p, "invalid escape sequence");
        }

        if (cms_toml_unescape_unicode(ctx, &p, end, &o) != 0) {
            return -1;
        }
    }

    *len = o - out;

    return 0;
}


/* the byte a one-letter escape such as \n stands for, or -1 */

static int
cms_toml_escape(char c)
{
    const char         *p;
    static const char   from[] = "btnfr\"\\", to[] = "\b\t\n\f\r\"\\";

    p = (c != '\0') ? strchr(from, c) : NULL;

    return (p != NULL) ? to[p - from] : -1;
}


/* \uXXXX or \UXXXXXXXX at *pp, a Unicode scalar value, written as UTF-8 */

static int
cms_toml_unescape_unicode(cms_toml_ctx_t *ctx, const char **pp,
    const char *end, char **op)
{
    int          ndigits;
    uint32_t     u;
    const char  *p;

    p = *pp;
    ndigits = (p[1] == 'u') ? 4 : 8;

    if (end - p < 2 + ndigits || cms_toml_hex_value(p + 2, ndigits, &u) != 0)
    {
        return cms_toml_fail(ctx, p, "invalid unicode escape");
    }

    if (u == 0) {
        return cms_toml_fail(ctx, p, "\\u0000 (NUL) is not allowed");
    }

    if (u > 0x10ffff || (u >= 0xd800 && u <= 0xdfff)) {
        return cms_toml_fail(ctx, p, "invalid unicode escape");
    }

    *op += cms_toml_utf8_put(*op, u);
    *pp = p + 2 + ndigits;

    return 0;
}


/* the value of 4 or 8 hex digits (either case) at p: 0, or -1 */

static int
cms_toml_hex_value(const char *p, int ndigits, uint32_t *u)
{
    int            i;
    unsigned char  bytes[4];

    if (cms_hex_decode(p, (size_t) ndigits, bytes) != 0) {
        return -1;
    }

    *u = 0;

    for (i = 0; i < ndigits / 2; i++) {
        *u = (*u << 8) | bytes[i];
    }

    return 0;
}


/* the scalar value u (at most 0x10ffff) as 1 to 4 bytes of UTF-8 at o */

static size_t
cms_toml_utf8_put(char *o, uint32_t u)
{
    size_t  i, n;

    n = (u < 0x80) ? 1 : (u < 0x800) ? 2 : (u < 0x10000) ? 3 : 4;

    for (i = n - 1; i > 0; i--) {
        o[i] = (char) (0x80 | (u & 0x3f));
        u >>= 6;
    }

    /* lead byte: the value itself, or 110xxxxx, 1110xxxx, 11110xxx */
    o[0] = (char) ((n == 1) ? u : (((0xff00 >> n) & 0xff) | u));

    return n;
}


/*
 * A word at ctx->p: true or false into v; any other word fails, inf and
 * nan as unsupported.  Returns 0, or -1 with ctx->err filled.
 */

int
cms_toml_parse_word(cms_toml_ctx_t *ctx, cms_toml_node_t *v)
{
    size_t       n;
    const char  *p;

    for (p = ctx->p; p < ctx->end && cms_toml_is_bare(*p); p++) {
        /* void */
    }

    n = p - ctx->p;

    if ((n == 4 && memcmp(ctx->p, "true", 4) == 0)
        || (n == 5 && memcmp(ctx->p, "false", 5) == 0))
    {
        v->type = CMS_TOML_BOOLEAN;
        v->boolean = (n == 4);
        ctx->p = p;
        return 0;
    }

    if (n == 3
        && (memcmp(ctx->p, "inf", 3) == 0 || memcmp(ctx->p, "nan", 3) == 0))
    {
        return cms_toml_fail(ctx, ctx->p, "unsupported: inf and nan");
    }

    return cms_toml_fail(ctx, ctx->p,
                         "invalid value (strings must be quoted)");
}


/*
 * An integer or a float at ctx->p into v.  The token is every character
 * a number, a date or a hex literal could contain, so "1979-05-27" or
 * "0x1f" is named as unsupported instead of being misread as "1979" then
 * garbage.  Returns 0, or -1 with ctx->err filled.
 */

int
cms_toml_parse_number(cms_toml_ctx_t *ctx, cms_toml_node_t *v)
{
    const char         *s, *e, *msg;
    cms_toml_number_t   num;

    s = ctx->p;

    for (e = s; e < ctx->end; e++) {
        if (!cms_toml_is_bare(*e) && *e != '.' && *e != '+' && *e != ':') {
            break;
        }
    }

    msg = cms_toml_number_unsupported(s, e);
    if (msg != NULL) {
        return cms_toml_fail(ctx, s, msg);
    }

    if (e - s > CMS_TOML_MAX_NUMBER) {
        return cms_toml_fail(ctx, s, "number too long");
    }

    msg = cms_toml_number_copy(s, e, &num);
    if (msg != NULL) {
        return cms_toml_fail(ctx, s, msg);
    }

    ctx->p = e;

    return num.is_float ? cms_toml_number_float(ctx, v, s, &num)
                        : cms_toml_number_integer(ctx, v, s, &num);
}


/* the "unsupported: ..." message for a number-like token s[0 .. e), or NULL */

static const char *
cms_toml_number_unsupported(const char *s, const char *e)
{
    const char  *q;

    q = (*s == '+' || *s == '-') ? s + 1 : s;

    if (e - q >= 3 && (memcmp(q, "inf", 3) == 0 || memcmp(q, "nan", 3) == 0))
    {
        return "unsupported: inf and nan";
    }

    if (e - q >= 2 && q[0] == '0'
        && (q[1] == 'x' || q[1] == 'o' || q[1] == 'b'))
    {
        return "unsupported: hexadecimal, octal and binary integers";
    }

    if ((e - q >= 5 && cms_toml_is_digit(q[0]) && cms_toml_is_digit(q[1])
         && cms_toml_is_digit(q[2]) && cms_toml_is_digit(q[3]) && q[4] == '-')
        || (e - q >= 3 && cms_toml_is_digit(q[0]) && cms_toml_is_digit(q[1])
            && q[2] == ':'))
    {
        return "unsupported: dates and times";
    }

    return NULL;
}


/*
 * The token s[0 .. e) (at most CMS_TOML_MAX_NUMBER bytes) into num: sign,
 * digits, then a fraction and an exponent, which make it a float.  NULL,
 * or the message for a token that is no TOML number.
 */

static const char *
cms_toml_number_copy(const char *s, const char *e, cms_toml_number_t *num)
{
    size_t       i;
    const char  *p;

    p = s;
    num->n = 0;
    num->is_float = 0;

    if (*p == '+' || *p == '-') {
        num->buf[num->n++] = *p++;
    }

    i = num->n;

    if (cms_toml_number_digits(&p, e, num) != 0) {
        return "invalid number";
    }

    if (num->buf[i] == '0' && num->n - i > 1) {
        return "leading zeros are not allowed";
    }

    if (p < e && *p == '.') {
        num->is_float = 1;
        num->buf[num->n++] = *p++;

        if (cms_toml_number_digits(&p, e, num) != 0) {
            return "invalid number";
        }
    }

    if (p < e && (*p == 'e' || *p == 'E')) {
        num->is_float = 1;
        num->buf[num->n++] = *p++;

        if (p < e && (*p == '+' || *p == '-')) {
            num->buf[num->n++] = *p++;
        }

        if (cms_toml_number_digits(&p, e, num) != 0) {
            return "invalid number";
        }
    }

    num->buf[num->n] = '\0';

    return (p == e) ? NULL : "invalid number";
}


/*
 * One or more digits with single underscores between them, appended to
 * num->buf without the underscores.  The caller bounds the token length,
 * so the buffer cannot overflow.
 */

static int
cms_toml_number_digits(const char **p, const char *e, cms_toml_number_t *num)
{
    const char  *q;

    q = *p;

    if (q == e || !cms_toml_is_digit(*q)) {
        return -1;
    }

    for ( ;; ) {
        num->buf[num->n++] = *q++;

        if (q < e && *q == '_') {
            q++;

            if (q == e || !cms_toml_is_digit(*q)) {
                return -1;
            }

            continue;
        }

        if (q == e || !cms_toml_is_digit(*q)) {
            break;
        }
    }

    *p = q;

    return 0;
}


static int
cms_toml_number_float(cms_toml_ctx_t *ctx, cms_toml_node_t *v,
    const char *at, const cms_toml_number_t *num)
{
    char    *end;
    double   d;

    d = strtod(num->buf, &end);

    if (end != num->buf + num->n) {
        return cms_toml_fail(ctx, at, "invalid float");
    }

    if (d > DBL_MAX || d < -DBL_MAX) {
        return cms_toml_fail(ctx, at, "float out of range");
    }

    v->type = CMS_TOML_FLOAT;
    v->number = d;

    return 0;
}


/* the digits, checked against the int64 range as they accumulate */

static int
cms_toml_number_integer(cms_toml_ctx_t *ctx, cms_toml_node_t *v,
    const char *at, const cms_toml_number_t *num)
{
    int        neg;
    size_t     i;
    uint64_t   acc, max;

    neg = (num->buf[0] == '-');
    i = (num->buf[0] == '-' || num->buf[0] == '+');
    max = neg ? (uint64_t) INT64_MAX + 1 : (uint64_t) INT64_MAX;
    acc = 0;

    for ( /* void */ ; i < num->n; i++) {
        if (acc > (max - (uint64_t) (num->buf[i] - '0')) / 10) {
            return cms_toml_fail(ctx, at, "integer out of range (64 bits)");
        }

        acc = acc * 10 + (uint64_t) (num->buf[i] - '0');
    }

    v->type = CMS_TOML_INTEGER;

    if (neg) {
        v->integer = (acc == (uint64_t) INT64_MAX + 1)
                     ? INT64_MIN : -(int64_t) acc;

    } else {
        v->integer = (int64_t) acc;
    }

    return 0;
}
