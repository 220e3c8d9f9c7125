
/*
 * Declarative reader of request-body fields (the contract is in
 * cms_fields.h).
 */


#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cms_fields.h"
#include "cms_validate.h"


/* bytes of a client's field name quoted in a message */
#define CMS_FIELDS_NAME_MAX  64

/* messages of cms_fields_bound(), formatting min and max */
#define CMS_FIELDS_CHARS  " must be %lld to %lld characters long"
#define CMS_FIELDS_BYTES  " must be %lld to %lld bytes of JSON"
#define CMS_FIELDS_RANGE  " must be between %lld and %lld"


typedef int (*cms_fields_reader_pt)(const cms_fields_t *t,
    const cms_field_t *f, json_t *v, cms_fields_out_t *out);


/* a json_dump_callback() sink bounded by the field's max */
typedef struct {
    char                       *p;
    size_t                      len;
    size_t                      max;
    int                         over;
} cms_fields_sink_t;


/* the table and the body */
static int cms_fields_prepare(const cms_fields_t *t, cms_fields_out_t *out);
static int cms_fields_unknown(const cms_fields_t *t, json_t *body,
    cms_fields_out_t *out);
static int cms_fields_known(const cms_fields_t *t, const char *name);
static int cms_fields_one(const cms_fields_t *t, const cms_field_t *f,
    json_t *body, int mode, cms_fields_out_t *out);

/* one value by type */
static int cms_fields_string(const cms_fields_t *t, const cms_field_t *f,
    json_t *v, cms_fields_out_t *out);
static int cms_fields_integer(const cms_fields_t *t, const cms_field_t *f,
    json_t *v, cms_fields_out_t *out);
static int cms_fields_number(const cms_fields_t *t, const cms_field_t *f,
    json_t *v, cms_fields_out_t *out);
static int cms_fields_boolean(const cms_fields_t *t, const cms_field_t *f,
    json_t *v, cms_fields_out_t *out);
static int cms_fields_json(const cms_fields_t *t, const cms_field_t *f,
    json_t *v, cms_fields_out_t *out);
static int cms_fields_put(const cms_fields_t *t, const cms_field_t *f,
    const char *p, size_t len, cms_fields_out_t *out);

/* text */
static size_t cms_fields_chars(const char *s, size_t len);
static size_t cms_fields_real(char *p, double d);
static int cms_fields_sink(const char *buf, size_t n, void *data);
static int cms_fields_has_nul(const char *p, size_t len);

/* errors */
static int cms_fields_fail(cms_fields_out_t *out, int code,
    const char *name, const char *what);
static int cms_fields_bad_type(const cms_fields_t *t, const cms_field_t *f,
    cms_fields_out_t *out);
static int cms_fields_bound(const cms_fields_t *t, const cms_field_t *f,
    cms_fields_out_t *out, const char *what);
static int cms_fields_not_one_of(const cms_fields_t *t, const cms_field_t *f,
    cms_fields_out_t *out);
static int cms_fields_misuse(cms_fields_out_t *out, const char *name,
    const char *what);
static size_t cms_fields_cat(char *msg, size_t at, const char *s, size_t n,
    size_t limit);


const char  cms_fields_null[] = "";


/* indexed by cms_field_type_e */
static const cms_fields_reader_pt  cms_fields_readers[] = {
    NULL, cms_fields_string, cms_fields_integer, cms_fields_number,
    cms_fields_boolean, cms_fields_json, cms_fields_json
};

static const char  *cms_fields_types[] = {
    NULL, " must be a string", " must be an integer", " must be a number",
    " must be true or false", " must be an object", " must be an array"
};


#define cms_fields_missing(t, f)  ((f)->missing ? (f)->missing : (t)->missing)
#define cms_fields_invalid(t, f)  ((f)->invalid ? (f)->invalid : (t)->invalid)


int
cms_fields_read(const cms_fields_t *t, json_t *body, int mode,
    cms_fields_out_t *out)
{
    int                 rc;
    const cms_field_t  *f;

    out->used = 0;
    out->err.code = 0;
    out->err.param = NULL;
    out->err.message[0] = '\0';

    rc = cms_fields_prepare(t, out);
    if (rc != CMS_FIELDS_OK) {
        return rc;
    }

    if (body == NULL || !json_is_object(body)) {
        return cms_fields_fail(out, t->body, NULL,
                               "The body must be a JSON object");
    }

    rc = cms_fields_unknown(t, body, out);

    for (f = t->fields; rc == CMS_FIELDS_OK && f->name != NULL; f++) {
        rc = cms_fields_one(t, f, body, mode, out);
    }

    return rc;
}


size_t
cms_fields_space(const cms_fields_t *t)
{
    size_t              n;
    const cms_field_t  *f;

    n = 0;

    for (f = t->fields; f->name != NULL; f++) {
        if (f->type == CMS_FIELD_INTEGER || f->type == CMS_FIELD_NUMBER) {
            n += CMS_FIELDS_NUMBER_LEN;

        } else if (f->type == CMS_FIELD_OBJECT || f->type == CMS_FIELD_ARRAY) {
            n += (f->max > 0 ? (size_t) f->max : 0) + 1;
        }
    }

    return n;
}


/* checks the table against "out" and sets the parameters it names to NULL */
static int
cms_fields_prepare(const cms_fields_t *t, cms_fields_out_t *out)
{
    int                 length;
    const cms_field_t  *f;

    for (f = t->fields; f->name != NULL; f++) {
        length = f->type != CMS_FIELD_INTEGER && f->type != CMS_FIELD_NUMBER;

        if (f->type < CMS_FIELD_STRING || f->type > CMS_FIELD_ARRAY
            || f->param > out->nparams || f->min > f->max
            || (length && f->min < 0))
        {
            return cms_fields_misuse(out, f->name,
                                     ": bad type, $n or bounds in the table");
        }

        if (f->param != 0) {
            out->params[f->param - 1].p = NULL;
            out->params[f->param - 1].len = 0;
        }
    }

    return CMS_FIELDS_OK;
}


/* the first member of the body that neither the table nor "ignored" has */
static int
cms_fields_unknown(const cms_fields_t *t, json_t *body,
    cms_fields_out_t *out)
{
    void        *it;
    const char  *key;

    for (it = json_object_iter(body); it != NULL;
         it = json_object_iter_next(body, it))
    {
        key = json_object_iter_key(it);

        if (!cms_fields_known(t, key)) {
            return cms_fields_fail(out, t->unknown, key,
                                   " is not a field this route takes");
        }
    }

    return CMS_FIELDS_OK;
}


static int
cms_fields_known(const cms_fields_t *t, const char *name)
{
    const cms_field_t   *f;
    const char *const   *w;

    for (f = t->fields; f->name != NULL; f++) {
        if (strcmp(f->name, name) == 0) {
            return 1;
        }
    }

    for (w = t->ignored; w != NULL && *w != NULL; w++) {
        if (strcmp(*w, name) == 0) {
            return 1;
        }
    }

    return 0;
}


/* one field: absent, null, or a value for its type's reader */
static int
cms_fields_one(const cms_fields_t *t, const cms_field_t *f, json_t *body,
    int mode, cms_fields_out_t *out)
{
    json_t              *v;
    cms_fields_param_t  *slot;

    v = json_object_get(body, f->name);

    if (v == NULL) {
        if (mode == CMS_FIELDS_CREATE && (f->flags & CMS_FIELD_REQUIRED)) {
            return cms_fields_fail(out, cms_fields_missing(t, f), f->name,
                                   " is required");
        }

        return CMS_FIELDS_OK;
    }

    if (!json_is_null(v)) {
        return cms_fields_readers[f->type](t, f, v, out);
    }

    if (!(f->flags & CMS_FIELD_NULLABLE)) {
        if (f->flags & CMS_FIELD_REQUIRED) {
            return cms_fields_fail(out, cms_fields_missing(t, f), f->name,
                                   " is required");
        }

        return cms_fields_bad_type(t, f, out);
    }

    /* create: SQL NULL, as if absent; patch: the "set null" marker */
    slot = f->param ? &out->params[f->param - 1] : NULL;

    if (slot != NULL && slot->p == NULL && mode == CMS_FIELDS_PATCH) {
        slot->p = cms_fields_null;
    }

    return CMS_FIELDS_OK;
}


static int
cms_fields_string(const cms_fields_t *t, const cms_field_t *f, json_t *v,
    cms_fields_out_t *out)
{
    size_t       len, n;
    const char  *s;

    if (!json_is_string(v)) {
        return cms_fields_bad_type(t, f, out);
    }

    s = json_string_value(v);
    len = json_string_length(v);

    if (!cms_utf8_valid(s, len)) {
        return cms_fields_fail(out, cms_fields_invalid(t, f), f->name,
                               " must be UTF-8 text without NUL characters");
    }

    if (len == 0 && (f->flags & CMS_FIELD_NONEMPTY)) {
        return cms_fields_fail(out, cms_fields_missing(t, f), f->name,
                               " is required");
    }

    n = cms_fields_chars(s, len);

    if (n < (unsigned long long) f->min || n > (unsigned long long) f->max) {
        return cms_fields_bound(t, f, out, CMS_FIELDS_CHARS);
    }

    if (f->one_of != NULL && !cms_str_one_of(s, len, f->one_of)) {
        return cms_fields_not_one_of(t, f, out);
    }

    return cms_fields_put(t, f, s, len, out);
}


static int
cms_fields_integer(const cms_fields_t *t, const cms_field_t *f, json_t *v,
    cms_fields_out_t *out)
{
    int          n;
    char        *p;
    json_int_t   i;

    if (!json_is_integer(v)) {
        return cms_fields_bad_type(t, f, out);
    }

    i = json_integer_value(v);

    if (i < f->min || i > f->max) {
        return cms_fields_bound(t, f, out, CMS_FIELDS_RANGE);
    }

    if (out->size - out->used < CMS_FIELDS_NUMBER_LEN) {
        return cms_fields_misuse(out, f->name, ": out->buf is too small");
    }

    p = out->buf + out->used;
    n = snprintf(p, CMS_FIELDS_NUMBER_LEN, "%lld", (long long) i);
    out->used += n + 1;

    return cms_fields_put(t, f, p, n, out);
}


static int
cms_fields_number(const cms_fields_t *t, const cms_field_t *f, json_t *v,
    cms_fields_out_t *out)
{
    char    *p;
    size_t   n;
    double   d;

    if (!json_is_number(v)) {
        return cms_fields_bad_type(t, f, out);
    }

    d = json_number_value(v);

    if (!isfinite(d) || d < (double) f->min || d > (double) f->max) {
        return cms_fields_bound(t, f, out, CMS_FIELDS_RANGE);
    }

    if (out->size - out->used < CMS_FIELDS_NUMBER_LEN) {
        return cms_fields_misuse(out, f->name, ": out->buf is too small");
    }

    p = out->buf + out->used;

    /* an integer stays exact: a double holds only 53 bits of it */
    if (json_is_integer(v)) {
        n = snprintf(p, CMS_FIELDS_NUMBER_LEN, "%lld",
                     (long long) json_integer_value(v));

    } else {
        n = cms_fields_real(p, d);
    }

    out->used += n + 1;

    return cms_fields_put(t, f, p, n, out);
}


static int
cms_fields_boolean(const cms_fields_t *t, const cms_field_t *f, json_t *v,
    cms_fields_out_t *out)
{
    if (!json_is_boolean(v)) {
        return cms_fields_bad_type(t, f, out);
    }

    return json_is_true(v) ? cms_fields_put(t, f, "true", 4, out)
                           : cms_fields_put(t, f, "false", 5, out);
}


/* an object or an array, as compact JSON text in out->buf */
static int
cms_fields_json(const cms_fields_t *t, const cms_field_t *f, json_t *v,
    cms_fields_out_t *out)
{
    int                rc;
    cms_fields_sink_t  s;

    if ((f->type == CMS_FIELD_OBJECT && !json_is_object(v))
        || (f->type == CMS_FIELD_ARRAY && !json_is_array(v)))
    {
        return cms_fields_bad_type(t, f, out);
    }

    /* room for the longest text allowed, so "over" is always the client's */
    if (out->size - out->used < (size_t) f->max + 1) {
        return cms_fields_misuse(out, f->name, ": out->buf is too small");
    }

    s.p = out->buf + out->used;
    s.len = 0;
    s.max = (size_t) f->max;
    s.over = 0;

    rc = json_dump_callback(v, cms_fields_sink, &s, JSON_COMPACT);

    /*
     * "over" first: jansson 2.14 ignores the sink's -1 for an object key
     * and goes on with the value, so rc may be 0 with a key missing.
     */
    if (s.over) {
        return cms_fields_bound(t, f, out, CMS_FIELDS_BYTES);
    }

    if (rc != 0) {
        return cms_fields_misuse(out, f->name, ": json_dump failed");
    }

    if (s.len < (size_t) f->min) {
        return cms_fields_bound(t, f, out, CMS_FIELDS_BYTES);
    }

    if (cms_fields_has_nul(s.p, s.len)) {
        return cms_fields_fail(out, cms_fields_invalid(t, f), f->name,
                               " must not hold NUL characters");
    }

    s.p[s.len] = '\0';
    out->used += s.len + 1;

    return cms_fields_put(t, f, s.p, s.len, out);
}


/* the check, then the parameter unless an earlier alias has filled it */
static int
cms_fields_put(const cms_fields_t *t, const cms_field_t *f, const char *p,
    size_t len, cms_fields_out_t *out)
{
    cms_fields_param_t  *slot;

    if (f->check != NULL && !f->check(p, len)) {
        return cms_fields_fail(out, cms_fields_invalid(t, f), f->name,
                               " is not valid");
    }

    slot = f->param ? &out->params[f->param - 1] : NULL;

    if (slot != NULL && slot->p == NULL) {
        slot->p = p;
        slot->len = len;
    }

    return CMS_FIELDS_OK;
}


/* code points of valid UTF-8: the bytes that do not continue a sequence */
static size_t
cms_fields_chars(const char *s, size_t len)
{
    size_t  i, n;

    n = 0;

    for (i = 0; i < len; i++) {
        n += ((unsigned char) s[i] & 0xc0) != 0x80;
    }

    return n;
}


/* the fewest significant digits, 15 to 17, that read back as "d" */
static size_t
cms_fields_real(char *p, double d)
{
    int  prec, n;

    for (prec = 15; prec < 17; prec++) {
        n = snprintf(p, CMS_FIELDS_NUMBER_LEN, "%.*g", prec, d);

        if (strtod(p, NULL) == d) {
            return (size_t) n;
        }
    }

    return (size_t) snprintf(p, CMS_FIELDS_NUMBER_LEN, "%.17g", d);
}


static int
cms_fields_sink(const char *buf, size_t n, void *data)
{
    cms_fields_sink_t  *s = data;

    /* once over, over for good: jansson may go on after a refusal */
    if (s->over || n > s->max - s->len) {
        s->over = 1;
        return -1;
    }

    memcpy(s->p + s->len, buf, n);
    s->len += n;

    return 0;
}


/* a "\u0000" escape in jansson's output; outside strings there is no "\" */
static int
cms_fields_has_nul(const char *p, size_t len)
{
    size_t  i;

    for (i = 0; i + 1 < len; i++) {
        if (p[i] != '\\') {
            continue;
        }

        if (len - i >= 6 && memcmp(p + i + 1, "u0000", 5) == 0) {
            return 1;
        }

        i++;    /* the escaped character, which may be another "\" */
    }

    return 0;
}


/* records error "code": the message is "name" then "what" */
static int
cms_fields_fail(cms_fields_out_t *out, int code, const char *name,
    const char *what)
{
    size_t  at;

    out->err.code = code;
    out->err.param = name;

    at = 0;

    if (name != NULL) {
        at = cms_fields_cat(out->err.message, 0, name, strlen(name),
                            CMS_FIELDS_NAME_MAX);
    }

    cms_fields_cat(out->err.message, at, what, strlen(what), SIZE_MAX);

    return CMS_FIELDS_REFUSED;
}


static int
cms_fields_bad_type(const cms_fields_t *t, const cms_field_t *f,
    cms_fields_out_t *out)
{
    size_t  at;

    cms_fields_fail(out, (f->flags & CMS_FIELD_TYPE_CODE)
                         ? t->invalid : cms_fields_invalid(t, f),
                    f->name, cms_fields_types[f->type]);

    if (f->flags & CMS_FIELD_NULLABLE) {
        at = strlen(out->err.message);
        cms_fields_cat(out->err.message, at, " or null", 8, SIZE_MAX);
    }

    return CMS_FIELDS_REFUSED;
}


/* out of bounds: "what" formats f->min and f->max */
static int
cms_fields_bound(const cms_fields_t *t, const cms_field_t *f,
    cms_fields_out_t *out, const char *what)
{
    char  text[96];

    snprintf(text, sizeof(text), what, f->min, f->max);

    return cms_fields_fail(out, cms_fields_invalid(t, f), f->name, text);
}


/* a string not in f->one_of: the message lists the allowed values */
static int
cms_fields_not_one_of(const cms_fields_t *t, const cms_field_t *f,
    cms_fields_out_t *out)
{
    size_t               at;
    const char *const   *w;

    cms_fields_fail(out, cms_fields_invalid(t, f), f->name,
                    " must be one of: ");
    at = strlen(out->err.message);

    for (w = f->one_of; *w != NULL; w++) {
        at = cms_fields_cat(out->err.message, at, *w, strlen(*w), SIZE_MAX);

        if (w[1] != NULL) {
            at = cms_fields_cat(out->err.message, at, ", ", 2, SIZE_MAX);
        }
    }

    return CMS_FIELDS_REFUSED;
}


/* the caller's mistake: code 0, no param */
static int
cms_fields_misuse(cms_fields_out_t *out, const char *name, const char *what)
{
    cms_fields_fail(out, 0, name, what);
    out->err.param = NULL;

    return CMS_FIELDS_ERROR;
}


/*
 * Appends s[0 .. n) to msg at "at", at most "limit" bytes of it and what
 * fits before the end; a cut ends at a character boundary with "...".
 * Control characters become "?".  Returns the new end; msg stays
 * terminated.
 */
static size_t
cms_fields_cat(char *msg, size_t at, const char *s, size_t n, size_t limit)
{
    int     cut;
    size_t  i, room;

    if (at + 4 > CMS_FIELDS_MESSAGE_MAX) {
        return at;
    }

    room = CMS_FIELDS_MESSAGE_MAX - 4 - at;    /* "..." and the NUL */
    cut = n > limit || n > room;

    if (cut) {
        n = limit < room ? limit : room;

        while (n > 0 && ((unsigned char) s[n] & 0xc0) == 0x80) {
            n--;
        }
    }

    for (i = 0; i < n; i++) {
        msg[at + i] = ((unsigned char) s[i] < 0x20 || s[i] == 0x7f)
                      ? '?' : s[i];
    }

    at += n;

    if (cut) {
        memcpy(msg + at, "...", 3);
        at += 3;
    }

    msg[at] = '\0';

    return at;
}
