
/*
 * Declarative reader of request-body fields: a table per route says what
 * each field of a JSON object may hold and which statement parameter ($n)
 * it goes to; cms_fields_read() checks the body against the table and
 * fills the parameters as the text PostgreSQL takes.
 *
 * Contract
 *
 *   - The body must be a JSON object (else the table's "body" code).  Its
 *     members are checked in body order first: a name the table does not
 *     list is refused with the table's "unknown" code (param = that name),
 *     unless it is in the table's "ignored" list (read-only names the API
 *     returns, such as id or created_at, accepted and dropped so a client
 *     can send back what it read).  Then the table's fields in table
 *     order.  The first failure is the answer: one error, never a list.
 *
 *   - Mode CMS_FIELDS_CREATE: a CMS_FIELD_REQUIRED field that is absent is
 *     refused with its "missing" code; explicit null on a CMS_FIELD_NULLABLE
 *     field gives a NULL parameter (SQL NULL).  Mode CMS_FIELDS_PATCH: no
 *     field is required; an absent field leaves its parameter NULL
 *     ("unchanged") and explicit null on a nullable field gives the
 *     distinct marker cms_fields_null ("set null"; see CMS_FIELDS_IS_NULL).
 *     In both modes: null on a field that is not nullable is refused, with
 *     the "missing" code when the field is required (so {"title": null}
 *     answers title_required), else the "invalid" code; with
 *     CMS_FIELD_NONEMPTY, "" is refused with the "missing" code too.
 *
 *   - Every other failure of a present value (wrong JSON type, length,
 *     range, not an allowed value, the check function, NUL or bad UTF-8)
 *     gets the field's "invalid" code, except a wrong JSON type on a field
 *     with CMS_FIELD_TYPE_CODE, which gets the table's (image_url: 5 is
 *     invalid_field_value, "javascript:" invalid_url).  A field code of 0
 *     takes the table's default; codes are the caller's (an error
 *     catalogue index, say): this file gives them meaning only as
 *     "0 = use the default".
 *
 *   - Types and what min / max bound, both inclusive, always applied
 *     (a table must state them: 0 .. 0 allows only the empty string or 0):
 *
 *       STRING   characters (Unicode code points, not bytes: a text column
 *                counts characters); valid UTF-8 without NUL (jansson
 *                lets "\u0000" through with JSON_ALLOW_NUL or a json_t
 *                built by hand, PostgreSQL text refuses it); "one_of"
 *                (NULL-terminated) lists the allowed values.  The parameter
 *                points into the json_t: it lives as long as the body.
 *       INTEGER  the value (a JSON integer only: 5.0 is refused); written
 *                as decimal text into the caller's buffer.
 *       NUMBER   the value, compared as a double; a JSON integer is written
 *                exactly, a real with the fewest significant digits (15 to
 *                17) that read back as the same double, so 0.1 stays "0.1".
 *                Assumes the "C" numeric locale (nginx never sets another).
 *       BOOLEAN  nothing; the parameter is "true" or "false" (static).
 *       OBJECT,  bytes of the compact JSON text (jansson's order: as
 *       ARRAY    received), written into the caller's buffer; a nested
 *                "\u0000" is refused (PostgreSQL's jsonb refuses it).
 *
 *     "check", when set, is called last with the parameter's text exactly
 *     as it will be sent (e.g. cms_slug_valid, cms_uuid_valid,
 *     cms_rfc3339_valid); 0 refuses.
 *
 *   - "param" is the statement parameter number n of $n: the value goes to
 *     out->params[n - 1].  0 checks the field without writing it (a flag
 *     the caller reads itself).  The reader first sets every parameter the
 *     table names to NULL, so slots the table does not name (workspace id,
 *     path id) are the caller's and stay as they were.  Two fields may
 *     name the same parameter (an alias, e.g. excerpt for subtitle): the
 *     first in table order that gives a non-NULL value wins; both are
 *     checked.
 *
 *   - Every non-NULL parameter has p[len] == '\0', and holds no NUL within.
 *
 * Memory: nothing is allocated here.  Strings point into the body; numbers
 * and JSON texts go into out->buf, which the caller sizes with
 * cms_fields_space(table) (or larger) and owns; out->used says how much was
 * taken.  jansson's own dump may allocate transiently inside the call (its
 * loop detection), freed before it returns.
 *
 * Example: POST and PATCH /categories, statements "... ($1, ... $8)" with
 * $1 the workspace (the caller's) and codes from the caller's catalogue:
 *
 *     static const char *const  ignored[] = { "id", "created_at",
 *                                             "updated_at", NULL };
 *
 *     static const cms_field_t  category_fields[] = {
 *         { "name", CMS_FIELD_STRING,
 *           CMS_FIELD_REQUIRED | CMS_FIELD_NONEMPTY, 2,
 *           ERR_NAME_REQUIRED, 0, 1, 200, NULL, NULL },
 *         { "slug", CMS_FIELD_STRING, 0, 3,
 *           0, ERR_INVALID_SLUG, 1, 200, NULL, cms_slug_valid },
 *         { "description", CMS_FIELD_STRING, 0, 4, 0, 0, 0, 5000,
 *           NULL, NULL },
 *         { "accent_color", CMS_FIELD_STRING, 0, 5, 0, 0, 4, 7,
 *           NULL, cms_color_valid },
 *         { "image_url", CMS_FIELD_STRING, 0, 6, 0, 0, 0, 2048,
 *           NULL, NULL },
 *         { "locale", CMS_FIELD_STRING, 0, 7, 0, 0, 2, 35,
 *           NULL, cms_locale_valid },
 *         { "display_order", CMS_FIELD_INTEGER, 0, 8, 0, 0,
 *           -1000000, 1000000, NULL, NULL },
 *         cms_fields_end
 *     };
 *
 *     static const cms_fields_t  category_table = {
 *         category_fields, ignored,
 *         ERR_INVALID_REQUEST, ERR_UNKNOWN_FIELD,      (body, unknown)
 *         ERR_INVALID_REQUEST, ERR_INVALID_FIELD       (missing, invalid)
 *     };
 *
 * Rows of other shapes: a nullable reference, a closed set, a flag read
 * by the caller itself (no $n), a JSON column:
 *
 *         { "category_id", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 9,
 *           0, 0, 36, 36, NULL, cms_uuid_valid },
 *         { "status", CMS_FIELD_STRING, 0, 10,
 *           0, ERR_INVALID_STATUS, 1, 20, article_states, NULL },
 *         { "autosave", CMS_FIELD_BOOLEAN, 0, 0, 0, 0, 0, 0, NULL, NULL },
 *         { "data", CMS_FIELD_OBJECT, 0, 11, 0, 0, 0, 65536, NULL, NULL },
 *
 * A call (the caller owns args, buf and out):
 *
 *     out.params = args;  out.nparams = 8;
 *     out.buf = buf;      out.size = cms_fields_space(&category_table);
 *
 *     rc = cms_fields_read(&category_table, body, CMS_FIELDS_CREATE, &out);
 *
 *     CMS_FIELDS_OK        args[1 .. 7] are set, args[0] is untouched
 *     CMS_FIELDS_REFUSED   answer out.err.code, .param, .message
 *     CMS_FIELDS_ERROR     a bug in the caller (table, sizes): a 500
 */


#ifndef _CMS_FIELDS_H_INCLUDED_
#define _CMS_FIELDS_H_INCLUDED_


#include <stddef.h>
#include <jansson.h>


typedef enum {
    CMS_FIELD_STRING = 1,
    CMS_FIELD_INTEGER,
    CMS_FIELD_NUMBER,
    CMS_FIELD_BOOLEAN,
    CMS_FIELD_OBJECT,
    CMS_FIELD_ARRAY
} cms_field_type_e;

/* cms_field_t.flags */
#define CMS_FIELD_REQUIRED   0x01  /* absent on create: "missing" code */
#define CMS_FIELD_NULLABLE   0x02  /* explicit null accepted */
#define CMS_FIELD_NONEMPTY   0x04  /* "" counts as missing */
#define CMS_FIELD_TYPE_CODE  0x08  /* a wrong JSON type: the table's
                                      "invalid" code, not the field's */

/* cms_fields_read() modes */
#define CMS_FIELDS_CREATE    0
#define CMS_FIELDS_PATCH     1

/* cms_fields_read() results */
#define CMS_FIELDS_OK        0
#define CMS_FIELDS_REFUSED  -1     /* the client's: out->err says why */
#define CMS_FIELDS_ERROR    -2     /* the caller's: table or sizes wrong */

/* out->buf bytes one INTEGER or NUMBER takes ("-1.2345678901234567e-308") */
#define CMS_FIELDS_NUMBER_LEN  32

#define CMS_FIELDS_MESSAGE_MAX 160


typedef struct {
    const char                 *name;
    unsigned                    type;      /* cms_field_type_e */
    unsigned                    flags;     /* CMS_FIELD_* */
    unsigned                    param;     /* $n; 0: checked, not written */
    int                         missing;   /* code; 0: the table's */
    int                         invalid;   /* code; 0: the table's */
    long long                   min;       /* see the type list above */
    long long                   max;
    const char *const          *one_of;    /* STRING only; NULL: any */
    int                       (*check)(const char *p, size_t len);
} cms_field_t;

/* the row that ends a table */
#define cms_fields_end  { NULL, 0, 0, 0, 0, 0, 0, 0, NULL, NULL }


typedef struct {
    const cms_field_t          *fields;    /* ended by a NULL name */
    const char *const          *ignored;   /* NULL-terminated, or NULL */
    int                         body;      /* the body is not an object */
    int                         unknown;   /* a name the table lacks */
    int                         missing;   /* default "missing" code */
    int                         invalid;   /* default "invalid" code */
} cms_fields_t;


/* one statement parameter: p NULL is SQL NULL ("not given") */
typedef struct {
    const char                 *p;
    size_t                      len;
} cms_fields_param_t;


typedef struct {
    int                         code;      /* the table's code */
    const char                 *param;     /* the field; NULL: the body */
    char                        message[CMS_FIELDS_MESSAGE_MAX];
} cms_fields_error_t;


typedef struct {
    cms_fields_param_t         *params;    /* params[0] is $1 */
    size_t                      nparams;
    char                       *buf;       /* numbers and JSON texts */
    size_t                      size;
    size_t                      used;      /* out: bytes of buf taken */
    cms_fields_error_t          err;       /* out: why, when refused */
} cms_fields_out_t;


/* the "set null" marker of CMS_FIELDS_PATCH: "", never equal to a value */
extern const char  cms_fields_null[];

#define CMS_FIELDS_IS_NULL(v)  ((v).p == cms_fields_null)


/*
 * Reads "body" (the parsed request body; NULL counts as not an object)
 * against table "t" in "mode" (CMS_FIELDS_CREATE or CMS_FIELDS_PATCH)
 * into out->params (out->nparams of them) and out->buf (out->size bytes),
 * as the contract at the top of this file says.  out->used is set to the
 * bytes of out->buf taken.
 *
 * Returns CMS_FIELDS_OK; CMS_FIELDS_REFUSED with out->err filled: code,
 * param (the field's name, from the table or, for an unknown field, the
 * body's key: it lives as long as the body; NULL when the body is not an
 * object) and message (human text naming the field, NUL-terminated, valid
 * UTF-8, control characters of a client's name replaced by "?"; it lives
 * in "out": copy it when the error outlives "out"); or CMS_FIELDS_ERROR
 * when the table is malformed (a type out of range, a $n over nparams,
 * min > max, a negative length bound), out->buf is smaller than the table
 * needs, or jansson could not dump a value: out->err.message says which,
 * code is 0, param NULL.  After a failure the parameters are unspecified.
 */
int cms_fields_read(const cms_fields_t *t, json_t *body, int mode,
    cms_fields_out_t *out);

/*
 * The out->buf size cms_fields_read() may need for table "t": one
 * CMS_FIELDS_NUMBER_LEN per INTEGER or NUMBER field, max + 1 per OBJECT or
 * ARRAY field (every field, written or not).
 */
size_t cms_fields_space(const cms_fields_t *t);


#endif /* _CMS_FIELDS_H_INCLUDED_ */
