
/*
 * libFuzzer target for cms_fields_read(): the input is a request body,
 * parsed by jansson as the module does (duplicates refused) but with
 * JSON_ALLOW_NUL and JSON_DECODE_ANY, so that "\u0000" and bodies that are
 * not objects reach the reader.  A representative table (every type, a
 * required field, nullable fields, an alias, a closed set, a check, a flag
 * with no $n) is read in both modes, with an exactly-sized buffer.
 *
 *   - the answer is OK or REFUSED, never ERROR (the table is right and
 *     the buffer is cms_fields_space());
 *   - REFUSED: a code of the table, param NULL only for a body that is not
 *     an object, else a table name or a key of the body; the message is
 *     terminated, under CMS_FIELDS_MESSAGE_MAX, valid UTF-8 without
 *     control characters;
 *   - OK: out.used <= the space; a parameter the table does not name is
 *     untouched; a filled one is terminated at len, valid UTF-8 without
 *     NUL, within its field's bounds (characters, value, JSON bytes), and
 *     reads back as its type (number text through strtod/strtoll, JSON
 *     text through json_loadb as an object or array; an array with items
 *     holds that many, each within the item row); absent fields are NULL,
 *     explicit null is NULL (create) or the marker (patch), or as the
 *     field's null flag says (absent, the marker on create too);
 *   - OK: cms_fields_object() writes one member per filled $n, of the
 *     field's JSON type (null for the marker);
 *   - a smaller buffer gives the same answer, or ERROR.
 */


#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cms_fields.h"
#include "cms_text.h"
#include "cms_uuid.h"
#include "cms_validate.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


#define NPARAMS  15

static const char *const  states[] = { "draft", "in_review", "published",
                                       NULL };
static const char *const  ignored[] = { "id", "created_at", "updated_at",
                                        NULL };

/* every item of "labels" */
static const cms_field_t  label = {
    NULL, CMS_FIELD_STRING, 0, 0, 0, 0, 1, 5, NULL, cms_slug_valid, 14, NULL
};

/* $1 and $15 are the caller's; $3 is shared by subtitle and excerpt */
static const cms_field_t  fields[] = {
    { "title", CMS_FIELD_STRING, CMS_FIELD_REQUIRED | CMS_FIELD_NONEMPTY, 2,
      11, 0, 1, 20, NULL, NULL, 0, NULL },
    { "subtitle", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 3, 0, 0, 0, 8, NULL,
      NULL, 0, NULL },
    { "excerpt", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 3, 0, 0, 0, 8, NULL,
      NULL, 0, NULL },
    { "slug", CMS_FIELD_STRING, 0, 4, 0, 12, 1, 30, NULL, cms_slug_valid,
      0, NULL },
    { "status", CMS_FIELD_STRING, 0, 5, 0, 13, 1, 20, states, NULL, 0, NULL },
    { "order", CMS_FIELD_INTEGER, CMS_FIELD_NULLABLE, 6, 0, 0, -1000, 1000,
      NULL, NULL, 0, NULL },
    { "amount", CMS_FIELD_NUMBER, 0, 7, 0, 0, -100, 1000000000, NULL, NULL,
      0, NULL },
    { "live", CMS_FIELD_BOOLEAN, 0, 8, 0, 0, 0, 0, NULL, NULL, 0, NULL },
    { "data", CMS_FIELD_OBJECT, CMS_FIELD_NULLABLE, 9, 0, 0, 2, 64, NULL,
      NULL, 0, NULL },
    { "tags", CMS_FIELD_ARRAY, 0, 10, 0, 0, 0, 48, NULL, NULL, 0, NULL },
    { "at", CMS_FIELD_STRING, 0, 11, 0, 0, 20, 35, NULL, cms_rfc3339_valid,
      0, NULL },
    { "autosave", CMS_FIELD_BOOLEAN, 0, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL },
    { "labels", CMS_FIELD_ARRAY, 0, 12, 0, 0, 0, 4, NULL, NULL, 0, &label },
    { "ref", CMS_FIELD_STRING, CMS_FIELD_NULLABLE | CMS_FIELD_NULL_ALWAYS, 13,
      0, 0, 0, 36, NULL, cms_uuid_valid, 0, NULL },
    { "note", CMS_FIELD_STRING, CMS_FIELD_NULL_ABSENT, 14, 0, 0, 0, 12, NULL,
      cms_slug_valid, 13, NULL },
    cms_fields_end
};

static const cms_fields_t  table = { fields, ignored, 1, 2, 3, 4 };

static const char  caller[] = "caller";


static void
must(int ok)
{
    if (!ok) {
        abort();
    }
}


/* terminated, valid UTF-8, no NUL; returns the characters */
static size_t
text_ok(const char *p, size_t len)
{
    size_t  i, n;

    must(p[len] == '\0');
    must(cms_utf8_valid(p, len));

    n = 0;

    for (i = 0; i < len; i++) {
        n += ((unsigned char) p[i] & 0xc0) != 0x80;
    }

    return n;
}


static void items_ok(const cms_field_t *f, json_t *j);


static void
value_ok(const cms_field_t *f, const char *p, size_t len)
{
    char    *end;
    size_t   n;
    json_t  *j;
    double   d;

    n = text_ok(p, len);

    switch (f->type) {

    case CMS_FIELD_STRING:
        must((long long) n >= f->min && (long long) n <= f->max);
        must(f->one_of == NULL || cms_str_one_of(p, len, f->one_of));
        must(f->check == NULL || f->check(p, len));
        break;

    case CMS_FIELD_INTEGER:
    case CMS_FIELD_NUMBER:
        d = strtod(p, &end);
        must(end == p + len && isfinite(d));
        must(d >= (double) f->min && d <= (double) f->max);
        must(f->type == CMS_FIELD_NUMBER || strtoll(p, &end, 10) == d);
        break;

    case CMS_FIELD_BOOLEAN:
        must(strcmp(p, "true") == 0 || strcmp(p, "false") == 0);
        break;

    default:
        /* without JSON_ALLOW_NUL, so a nested "\u0000" fails here */
        j = json_loadb(p, len, JSON_REJECT_DUPLICATES, NULL);
        must(j != NULL);
        must(f->type == CMS_FIELD_OBJECT ? json_is_object(j)
                                          : json_is_array(j));

        if (f->items == NULL) {
            must((long long) len >= f->min && (long long) len <= f->max);

        } else {
            items_ok(f, j);
        }

        json_decref(j);
    }
}


/* an array with items: how many, and each as its item row says */
static void
items_ok(const cms_field_t *f, json_t *j)
{
    size_t   i;
    json_t  *e;

    must((long long) json_array_size(j) >= f->min
         && (long long) json_array_size(j) <= f->max);

    json_array_foreach(j, i, e) {
        must(json_is_string(e));
        value_ok(f->items, json_string_value(e), json_string_length(e));
    }
}


/* the patch object: a member per filled $n, of its field's type */
static void
object_ok(const cms_fields_out_t *out)
{
    json_t             *obj, *v;
    const cms_field_t  *f;

    obj = json_object();
    must(obj != NULL);
    must(cms_fields_object(&table, out->params, obj) == CMS_FIELDS_OK);

    for (f = fields; f->name != NULL; f++) {
        v = json_object_get(obj, f->name);

        if (f->param == 0 || out->params[f->param - 1].p == NULL) {
            must(v == NULL);
            continue;
        }

        if (strcmp(f->name, "excerpt") == 0) {
            must(v == NULL);
            continue;
        }

        must(v != NULL);

        if (CMS_FIELDS_IS_NULL(out->params[f->param - 1])) {
            must(json_is_null(v));
            continue;
        }

        switch (f->type) {
        case CMS_FIELD_STRING:  must(json_is_string(v)); break;
        case CMS_FIELD_INTEGER: must(json_is_integer(v)); break;
        case CMS_FIELD_NUMBER:  must(json_is_number(v)); break;
        case CMS_FIELD_BOOLEAN: must(json_is_boolean(v)); break;
        case CMS_FIELD_OBJECT:  must(json_is_object(v)); break;
        default:                must(json_is_array(v));
        }
    }

    json_decref(obj);
}


static void
refused_ok(const cms_fields_out_t *out, json_t *body)
{
    size_t              len, i;
    const cms_field_t  *f;

    len = strlen(out->err.message);
    must(len > 0 && len < CMS_FIELDS_MESSAGE_MAX);
    must(cms_utf8_valid(out->err.message, len));

    for (i = 0; i < len; i++) {
        must((unsigned char) out->err.message[i] >= 0x20
              && out->err.message[i] != 0x7f);
    }

    must(out->err.code >= 1 && out->err.code <= 14);

    if (out->err.param == NULL) {
        must(out->err.code == 1 && !json_is_object(body));
        return;
    }

    for (f = fields; f->name != NULL; f++) {
        if (out->err.param == f->name) {
            return;
        }
    }

    /* an unknown field: a key of the body itself */
    must(out->err.code == 2);
    must(json_object_get(body, out->err.param) != NULL);
}


static void
ok_ok(const cms_fields_out_t *out, json_t *body, int mode)
{
    json_t                    *v;
    const cms_field_t         *f;
    const cms_fields_param_t  *s;

    must(out->used <= cms_fields_space(&table));
    must(out->params[0].p == caller && out->params[NPARAMS - 1].p == caller);

    for (f = fields; f->name != NULL; f++) {
        if (f->param == 0) {
            continue;
        }

        s = &out->params[f->param - 1];
        v = json_object_get(body, f->name);

        if (s->p == NULL) {
            /* nothing given, null on create, or null that counts as
               absent: no other field filled it */
            must(v == NULL
                 || (json_is_null(v)
                     && (f->flags & CMS_FIELD_NULL_ABSENT
                         || (mode == CMS_FIELDS_CREATE
                             && !(f->flags & CMS_FIELD_NULL_ALWAYS)))));
            continue;
        }

        if (s->p == cms_fields_null) {
            must((f->flags & CMS_FIELD_NULLABLE)
                 && (mode == CMS_FIELDS_PATCH
                     || (f->flags & CMS_FIELD_NULL_ALWAYS)));
            continue;
        }

        /* filled by the other field of the alias pair, or from "v" */
        if (v == NULL || json_is_null(v)) {
            must(f->param == 3);
            continue;
        }

        value_ok(f, s->p, s->len);
    }
}


static int
run(json_t *body, int mode, char *buf, size_t size, cms_fields_out_t *out)
{
    size_t  i;

    for (i = 0; i < NPARAMS; i++) {
        out->params[i].p = caller;
        out->params[i].len = sizeof(caller) - 1;
    }

    out->nparams = NPARAMS;
    out->buf = buf;
    out->size = size;

    return cms_fields_read(&table, body, mode, out);
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int                 rc, again, mode;
    char               *buf;
    json_t             *body;
    size_t              space;
    cms_fields_out_t    out, small;
    cms_fields_param_t  params[NPARAMS], params2[NPARAMS];

    body = json_loadb((const char *) data, size,
                      JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL
                      | JSON_DECODE_ANY, NULL);
    if (body == NULL) {
        return 0;
    }

    space = cms_fields_space(&table);
    buf = malloc(space);
    must(buf != NULL);

    for (mode = CMS_FIELDS_CREATE; mode <= CMS_FIELDS_PATCH; mode++) {
        out.params = params;
        rc = run(body, mode, buf, space, &out);

        must(rc == CMS_FIELDS_OK || rc == CMS_FIELDS_REFUSED);

        if (rc == CMS_FIELDS_OK) {
            ok_ok(&out, body, mode);
            object_ok(&out);

        } else {
            refused_ok(&out, body);
        }

        /* a short buffer: the same answer, or the caller's error */
        small.params = params2;
        again = run(body, mode, buf, size % (space + 1), &small);

        must(again == rc || again == CMS_FIELDS_ERROR);
        must(again != CMS_FIELDS_REFUSED
              || (small.err.code == out.err.code
                  && strcmp(small.err.message, out.err.message) == 0));
    }

    free(buf);
    json_decref(body);

    return 0;
}
