
/*
 * cms_fields: the declarative body reader.  One representative table
 * (an article-like route) with every type and flag; each rule has its
 * success and each of its failures, the error's code, param and message.
 */


#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "cms_fields.h"
#include "cms_text.h"
#include "cms_uuid.h"


enum {
    E_BODY = 101, E_UNKNOWN, E_MISSING, E_INVALID, E_TITLE_REQUIRED,
    E_INVALID_SLUG, E_INVALID_STATUS
};

#define NPARAMS  14


static const char *const  states[] = { "draft", "published", NULL };
static const char *const  ignored[] = { "id", "created_at", NULL };

/* $1 and $14 are the caller's; $4 is shared by subtitle and its alias */
static const cms_field_t  fields[] = {
    { "title", CMS_FIELD_STRING, CMS_FIELD_REQUIRED | CMS_FIELD_NONEMPTY, 2,
      E_TITLE_REQUIRED, 0, 1, 10, NULL, NULL },
    { "slug", CMS_FIELD_STRING, 0, 3, 0, E_INVALID_SLUG, 1, 200, NULL,
      cms_slug_valid },
    { "subtitle", CMS_FIELD_STRING, 0, 4, 0, 0, 0, 20, NULL, NULL },
    { "excerpt", CMS_FIELD_STRING, 0, 4, 0, 0, 0, 20, NULL, NULL },
    { "status", CMS_FIELD_STRING, 0, 5, 0, E_INVALID_STATUS, 1, 20, states,
      NULL },
    { "category_id", CMS_FIELD_STRING, CMS_FIELD_NULLABLE, 6, 0, 0, 36, 36,
      NULL, cms_uuid_valid },
    { "order", CMS_FIELD_INTEGER, 0, 7, 0, 0, -5, 5, NULL, NULL },
    { "amount", CMS_FIELD_NUMBER, CMS_FIELD_NULLABLE, 8, 0, 0, 0, 1000000,
      NULL, NULL },
    { "featured", CMS_FIELD_BOOLEAN, 0, 9, 0, 0, 0, 0, NULL, NULL },
    { "data", CMS_FIELD_OBJECT, CMS_FIELD_NULLABLE, 10, 0, 0, 0, 32, NULL,
      NULL },
    { "tags", CMS_FIELD_ARRAY, 0, 11, 0, 0, 3, 32, NULL, NULL },
    { "autosave", CMS_FIELD_BOOLEAN, 0, 0, 0, 0, 0, 0, NULL, NULL },
    { "big", CMS_FIELD_INTEGER, 0, 12, 0, 0, INT64_MIN, INT64_MAX, NULL,
      NULL },
    { "ratio", CMS_FIELD_NUMBER, 0, 13, 0, 0, -1, 1, NULL, NULL },
    cms_fields_end
};

static const cms_fields_t  table = {
    fields, ignored, E_BODY, E_UNKNOWN, E_MISSING, E_INVALID
};


static cms_fields_param_t  params[NPARAMS];
static cms_fields_out_t    out;
static char                buf[512];
static json_t             *body;


/*
 * Reads "text" (JSON) against "t"; every parameter holds "caller" before.
 * JSON_ALLOW_NUL lets "\u0000" through to the reader, which must refuse
 * it itself; JSON_DECODE_ANY lets a body that is not an object through.
 */
static int
read_with(const cms_fields_t *t, const char *text, int mode)
{
    size_t        i;
    json_error_t  e;

    json_decref(body);
    body = NULL;

    if (text != NULL) {
        body = json_loads(text, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY
                                | JSON_ALLOW_NUL, &e);
    }

    assert_true(text == NULL || body != NULL);

    for (i = 0; i < NPARAMS; i++) {
        params[i].p = "caller";
        params[i].len = 6;
    }

    memset(&out, 0, sizeof(out));
    out.params = params;
    out.nparams = NPARAMS;
    out.buf = buf;
    out.size = sizeof(buf);

    return cms_fields_read(t, body, mode, &out);
}


static int
rd(const char *text, int mode)
{
    return read_with(&table, text, mode);
}


/* parameter $n is the text "s", terminated */
static void
param_is(unsigned n, const char *s)
{
    assert_non_null(params[n - 1].p);
    assert_int_equal(params[n - 1].len, strlen(s));
    assert_memory_equal(params[n - 1].p, s, strlen(s));
    assert_int_equal(params[n - 1].p[params[n - 1].len], '\0');
}


/* a body refused in CMS_FIELDS_PATCH mode; a NULL message is not compared */
typedef struct {
    const char                 *text;
    int                         code;
    const char                 *param;
    const char                 *message;
} refusal_t;

#define NBAD(a)  (sizeof(a) / sizeof((a)[0]))


/* "text" is accepted in "mode" and $n holds "s" */
static void
gives(const char *text, int mode, unsigned n, const char *s)
{
    assert_int_equal(rd(text, mode), CMS_FIELDS_OK);
    param_is(n, s);
}


static void
refused(int rc, int code, const char *param, const char *message)
{
    assert_int_equal(rc, CMS_FIELDS_REFUSED);
    assert_int_equal(out.err.code, code);

    if (param == NULL) {
        assert_null(out.err.param);

    } else {
        assert_string_equal(out.err.param, param);
    }

    if (message != NULL) {
        assert_string_equal(out.err.message, message);
    }
}


static void
refusals(const refusal_t *bad, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        refused(rd(bad[i].text, CMS_FIELDS_PATCH), bad[i].code, bad[i].param,
                bad[i].message);
    }
}


static void
test_success_create(void **state)
{
    unsigned  n;

    (void) state;

    gives("{\"title\": \"Hello\", \"slug\": \"hello-world\","
          " \"subtitle\": \"sub\", \"status\": \"draft\","
          " \"category_id\": \"123e4567-e89b-12d3-a456-426614174000\","
          " \"order\": -5, \"amount\": 12.5,"
          " \"featured\": true, \"data\": {\"a\": [1, \"x\"]},"
          " \"tags\": [\"x\", \"y\"], \"autosave\": false,"
          " \"big\": 9223372036854775807, \"ratio\": 1}",
          CMS_FIELDS_CREATE, 1, "caller");
    param_is(2, "Hello");
    param_is(3, "hello-world");
    param_is(4, "sub");
    param_is(5, "draft");
    param_is(6, "123e4567-e89b-12d3-a456-426614174000");
    param_is(7, "-5");
    param_is(8, "12.5");
    param_is(9, "true");
    param_is(10, "{\"a\":[1,\"x\"]}");
    param_is(11, "[\"x\",\"y\"]");
    param_is(12, "9223372036854775807");
    param_is(13, "1");
    param_is(14, "caller");

    assert_true(out.used > 0 && out.used <= cms_fields_space(&table));

    /* strings point into the body: no copy */
    assert_ptr_equal(params[1].p,
                     json_string_value(json_object_get(body, "title")));

    /* absent optional fields are NULL; other slots untouched */
    assert_int_equal(rd("{\"title\": \"x\"}", CMS_FIELDS_CREATE),
                     CMS_FIELDS_OK);

    for (n = 3; n <= 13; n++) {
        assert_null(params[n - 1].p);
    }

    param_is(1, "caller");
    param_is(14, "caller");
}


static void
test_body_not_object(void **state)
{
    (void) state;

    refused(rd(NULL, CMS_FIELDS_CREATE), E_BODY, NULL,
            "The body must be a JSON object");
    refused(rd("[1]", CMS_FIELDS_PATCH), E_BODY, NULL, NULL);
    refused(rd("\"x\"", CMS_FIELDS_PATCH), E_BODY, NULL, NULL);
}


static void
test_unknown_and_ignored(void **state)
{
    char  name[300], text[400];

    (void) state;

    refused(rd("{\"title\": \"x\", \"color\": 1}", CMS_FIELDS_CREATE),
            E_UNKNOWN, "color", "color is not a field this route takes");

    /* unknown names come before any field error, in body order */
    refused(rd("{\"nope\": 1, \"title\": 5, \"zz\": 2}", CMS_FIELDS_CREATE),
            E_UNKNOWN, "nope", NULL);

    /* read-only names are accepted and dropped, whatever they hold */
    assert_int_equal(rd("{\"id\": [1], \"created_at\": null, \"title\": \"x\"}",
                        CMS_FIELDS_CREATE),
                     CMS_FIELDS_OK);

    /* a client's name is quoted cut and cleaned: valid, bounded text */
    memset(name, 'a', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    snprintf(text, sizeof(text), "{\"%s\": 1}", name);
    refused(rd(text, CMS_FIELDS_CREATE), E_UNKNOWN, name, NULL);
    assert_true(strlen(out.err.message) < CMS_FIELDS_MESSAGE_MAX);
    assert_non_null(strstr(out.err.message, "a... is not a field"));

    refused(rd("{\"a\\nb\": 1}", CMS_FIELDS_CREATE), E_UNKNOWN, "a\nb",
            "a?b is not a field this route takes");

    /* a cut never splits a character: 63 "a" then a 2-byte "é" */
    memset(name, 'a', 63);
    memcpy(name + 63, "\xc3\xa9", 3);
    snprintf(text, sizeof(text), "{\"%s\": 1}", name);
    refused(rd(text, CMS_FIELDS_CREATE), E_UNKNOWN, name, NULL);
    assert_int_equal(strncmp(out.err.message + 63, "...", 3), 0);
}


static void
test_required(void **state)
{
    (void) state;

    refused(rd("{}", CMS_FIELDS_CREATE), E_TITLE_REQUIRED, "title",
            "title is required");
    refused(rd("{\"title\": null}", CMS_FIELDS_CREATE), E_TITLE_REQUIRED,
            "title", NULL);
    refused(rd("{\"title\": \"\"}", CMS_FIELDS_CREATE), E_TITLE_REQUIRED,
            "title", NULL);

    /* patch: absent is "unchanged", but null and "" still are missing */
    assert_int_equal(rd("{}", CMS_FIELDS_PATCH), CMS_FIELDS_OK);
    assert_null(params[1].p);
    refused(rd("{\"title\": null}", CMS_FIELDS_PATCH), E_TITLE_REQUIRED,
            "title", NULL);
    refused(rd("{\"title\": \"\"}", CMS_FIELDS_PATCH), E_TITLE_REQUIRED,
            "title", NULL);

    /* the wrong type of a required field is invalid, not missing */
    refused(rd("{\"title\": 5}", CMS_FIELDS_CREATE), E_INVALID, "title",
            "title must be a string");
}


static void
test_null(void **state)
{
    (void) state;

    /* create: a nullable field's null is SQL NULL */
    assert_int_equal(rd("{\"title\": \"x\", \"category_id\": null,"
                        " \"amount\": null, \"data\": null}",
                        CMS_FIELDS_CREATE),
                     CMS_FIELDS_OK);
    assert_null(params[5].p);
    assert_null(params[7].p);
    assert_null(params[9].p);

    /* patch: null is the "set null" marker, absent stays NULL */
    assert_int_equal(rd("{\"category_id\": null, \"data\": null}",
                        CMS_FIELDS_PATCH),
                     CMS_FIELDS_OK);
    assert_true(CMS_FIELDS_IS_NULL(params[5]));
    assert_true(CMS_FIELDS_IS_NULL(params[9]));
    assert_int_equal(params[5].len, 0);
    assert_null(params[7].p);
    assert_false(CMS_FIELDS_IS_NULL(params[7]));

    /* null where the field does not allow it */
    refused(rd("{\"slug\": null}", CMS_FIELDS_PATCH), E_INVALID_SLUG, "slug",
            "slug must be a string");
    refused(rd("{\"order\": null}", CMS_FIELDS_PATCH), E_INVALID, "order",
            "order must be an integer");

    /* the type message says when null is allowed */
    refused(rd("{\"category_id\": 5}", CMS_FIELDS_PATCH), E_INVALID,
            "category_id", "category_id must be a string or null");
}


static void
test_string(void **state)
{
    static const refusal_t  bad[] = {
        { "{\"title\": \"12345678901\"}", E_INVALID, "title",
          "title must be 1 to 10 characters long" },
        { "{\"slug\": \"\"}", E_INVALID_SLUG, "slug",
          "slug must be 1 to 200 characters long" },
        /* jansson with JSON_ALLOW_NUL takes \u0000; text columns do not */
        { "{\"title\": \"a\\u0000b\"}", E_INVALID, "title",
          "title must be UTF-8 text without NUL characters" },
        { "{\"title\": [\"x\"]}", E_INVALID, "title", NULL },
        { "{\"title\": true}", E_INVALID, "title", NULL },
    };

    (void) state;

    /* limits count characters: 10 two-byte "é" fit a max of 10 */
    assert_int_equal(rd("{\"title\": \"\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9"
                        "\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\"}",
                        CMS_FIELDS_CREATE),
                     CMS_FIELDS_OK);
    assert_int_equal(params[1].len, 20);

    refusals(bad, NBAD(bad));
}


static void
test_string_not_utf8(void **state)
{
    int                 rc;
    json_t             *obj;
    cms_fields_out_t    o;
    cms_fields_param_t  p[NPARAMS];

    (void) state;

    /* a json_t not from the parser may hold anything */
    obj = json_object();
    assert_int_equal(json_object_set_new(obj, "title",
                                         json_stringn_nocheck("\xff\xfe", 2)),
                     0);

    memset(&o, 0, sizeof(o));
    o.params = p;
    o.nparams = NPARAMS;

    rc = cms_fields_read(&table, obj, CMS_FIELDS_CREATE, &o);

    assert_int_equal(rc, CMS_FIELDS_REFUSED);
    assert_int_equal(o.err.code, E_INVALID);
    assert_string_equal(o.err.param, "title");

    json_decref(obj);
}


static void
test_one_of(void **state)
{
    static const refusal_t  bad[] = {
        { "{\"status\": \"live\"}", E_INVALID_STATUS, "status",
          "status must be one of: draft, published" },
        { "{\"status\": \"Draft\"}", E_INVALID_STATUS, "status", NULL },
        { "{\"status\": 1}", E_INVALID_STATUS, "status",
          "status must be a string" },
    };

    (void) state;

    gives("{\"status\": \"published\"}", CMS_FIELDS_PATCH, 5, "published");
    refusals(bad, NBAD(bad));
}


static void
test_check(void **state)
{
    static const refusal_t  bad[] = {
        { "{\"slug\": \"Not A Slug\"}", E_INVALID_SLUG, "slug",
          "slug is not valid" },
        { "{\"category_id\": \"123e4567-e89b-12d3-a456-42661417400z\"}",
          E_INVALID, "category_id", "category_id is not valid" },
        /* the length is checked before the function sees the value */
        { "{\"category_id\": \"123\"}", E_INVALID, "category_id",
          "category_id must be 36 to 36 characters long" },
    };

    (void) state;

    refusals(bad, NBAD(bad));
}


/* CMS_FIELD_TYPE_CODE: the field's code for its value, the table's for a
   wrong JSON type */
static void
test_type_code(void **state)
{
    static const cms_field_t  url_fields[] = {
        { "image_url", CMS_FIELD_STRING,
          CMS_FIELD_NULLABLE | CMS_FIELD_TYPE_CODE, 2, 0, E_INVALID_SLUG,
          0, 8, NULL, cms_slug_valid },
        cms_fields_end
    };
    static const cms_fields_t  url_table = {
        url_fields, NULL, E_BODY, E_UNKNOWN, E_MISSING, E_INVALID
    };

    (void) state;

    refused(read_with(&url_table, "{\"image_url\": 5}", CMS_FIELDS_PATCH),
            E_INVALID, "image_url", "image_url must be a string or null");
    refused(read_with(&url_table, "{\"image_url\": []}", CMS_FIELDS_CREATE),
            E_INVALID, "image_url", NULL);
    refused(read_with(&url_table, "{\"image_url\": \"A B\"}",
                      CMS_FIELDS_PATCH),
            E_INVALID_SLUG, "image_url", "image_url is not valid");
    refused(read_with(&url_table, "{\"image_url\": \"abcdefghi\"}",
                      CMS_FIELDS_PATCH),
            E_INVALID_SLUG, "image_url", NULL);
    assert_int_equal(read_with(&url_table, "{\"image_url\": \"a-b\"}",
                               CMS_FIELDS_PATCH),
                     CMS_FIELDS_OK);
}


static void
test_integer(void **state)
{
    static const refusal_t  bad[] = {
        { "{\"order\": 6}", E_INVALID, "order",
          "order must be between -5 and 5" },
        { "{\"order\": -6}", E_INVALID, "order", NULL },
        { "{\"order\": 5.0}", E_INVALID, "order",
          "order must be an integer" },
        { "{\"order\": \"5\"}", E_INVALID, "order", NULL },
        { "{\"order\": false}", E_INVALID, "order", NULL },
    };

    (void) state;

    gives("{\"order\": 5, \"big\": -9223372036854775808}", CMS_FIELDS_PATCH,
          7, "5");
    param_is(12, "-9223372036854775808");
    gives("{\"order\": 0}", CMS_FIELDS_PATCH, 7, "0");

    refusals(bad, NBAD(bad));
}


static void
test_number(void **state)
{
    static const refusal_t  bad[] = {
        { "{\"amount\": 1000000.5}", E_INVALID, "amount",
          "amount must be between 0 and 1000000" },
        { "{\"amount\": -0.001}", E_INVALID, "amount", NULL },
        { "{\"amount\": \"1\"}", E_INVALID, "amount",
          "amount must be a number or null" },
        { "{\"ratio\": 1e300}", E_INVALID, "ratio", NULL },
    };

    (void) state;

    gives("{\"amount\": 0.1, \"ratio\": -1}", CMS_FIELDS_PATCH, 8, "0.1");
    param_is(13, "-1");

    /* 17 digits when 15 do not read back as the same double */
    gives("{\"amount\": 0.30000000000000004}", CMS_FIELDS_PATCH,
          8, "0.30000000000000004");

    /* an integer is written exactly, not through a double */
    gives("{\"amount\": 999999}", CMS_FIELDS_PATCH, 8, "999999");
    gives("{\"ratio\": 1e-300}", CMS_FIELDS_PATCH, 13, "1e-300");

    refusals(bad, NBAD(bad));
}


static void
test_boolean(void **state)
{
    static const refusal_t  bad[] = {
        { "{\"featured\": 1}", E_INVALID, "featured",
          "featured must be true or false" },
        { "{\"featured\": \"true\"}", E_INVALID, "featured", NULL },
    };

    (void) state;

    gives("{\"featured\": false}", CMS_FIELDS_PATCH, 9, "false");
    refusals(bad, NBAD(bad));
}


static void
test_object_array(void **state)
{
    static const refusal_t  bad[] = {
        { "{\"data\": {\"z\": 1, \"a\": \"0123456789abcdefghi\"}}",
          E_INVALID, "data", "data must be 0 to 32 bytes of JSON" },
        /* a key over the bound: jansson goes on after the sink refuses */
        { "{\"data\": {\"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\": 1}}",
          E_INVALID, "data", NULL },
        { "{\"data\": {\"a\": 1, \"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\": 1}}",
          E_INVALID, "data", NULL },
        { "{\"tags\": []}", E_INVALID, "tags",
          "tags must be 3 to 32 bytes of JSON" },
        /* a nested NUL, also after an escaped backslash */
        { "{\"data\": {\"a\": \"\\u0000\"}}", E_INVALID, "data",
          "data must not hold NUL characters" },
        { "{\"tags\": [\"x\\\\\\u0000\"]}", E_INVALID, "tags", NULL },
        { "{\"data\": [1]}", E_INVALID, "data",
          "data must be an object or null" },
        { "{\"tags\": {}}", E_INVALID, "tags", "tags must be an array" },
        { "{\"tags\": \"[]\"}", E_INVALID, "tags", NULL },
    };

    (void) state;

    /* order as received, compact; exactly 32 bytes fits */
    gives("{\"data\": {\"z\": 1, \"a\": \"0123456789abcdefgh\"}}",
          CMS_FIELDS_PATCH, 10, "{\"z\":1,\"a\":\"0123456789abcdefgh\"}");

    /* a backslash then "u0000" is text, not a NUL */
    gives("{\"tags\": [\"\\\\u0000\"]}", CMS_FIELDS_PATCH,
          11, "[\"\\\\u0000\"]");

    refusals(bad, NBAD(bad));
}


static void
test_alias_and_unwritten(void **state)
{
    (void) state;

    /* the first field of a shared $n that is given wins; both checked */
    gives("{\"excerpt\": \"e\", \"subtitle\": \"s\"}", CMS_FIELDS_PATCH,
          4, "s");

    gives("{\"excerpt\": \"e\"}", CMS_FIELDS_PATCH, 4, "e");

    refused(rd("{\"subtitle\": \"s\", \"excerpt\": 1}", CMS_FIELDS_PATCH),
            E_INVALID, "excerpt", NULL);

    /* $n 0: checked, written nowhere */
    gives("{\"autosave\": true}", CMS_FIELDS_PATCH, 1, "caller");
    refused(rd("{\"autosave\": \"yes\"}", CMS_FIELDS_PATCH), E_INVALID,
            "autosave", NULL);
}


static void
test_first_error(void **state)
{
    (void) state;

    /* table order decides between two bad fields */
    refused(rd("{\"order\": 9, \"title\": 1}", CMS_FIELDS_PATCH), E_INVALID,
            "title", NULL);
    refused(rd("{\"status\": \"no\", \"slug\": \"NO\"}", CMS_FIELDS_PATCH),
            E_INVALID_SLUG, "slug", NULL);
}


static void
test_misuse(void **state)
{
    static const cms_field_t  over[] = {
        { "a", CMS_FIELD_STRING, 0, NPARAMS + 1, 0, 0, 0, 1, NULL, NULL },
        cms_fields_end
    };
    static const cms_field_t  type[] = {
        { "a", 99, 0, 1, 0, 0, 0, 1, NULL, NULL },
        cms_fields_end
    };
    static const cms_field_t  bounds[] = {
        { "a", CMS_FIELD_INTEGER, 0, 1, 0, 0, 2, 1, NULL, NULL },
        cms_fields_end
    };
    static const cms_field_t  length[] = {
        { "a", CMS_FIELD_STRING, 0, 1, 0, 0, -1, 1, NULL, NULL },
        cms_fields_end
    };
    static const cms_field_t  json[] = {
        { "n", CMS_FIELD_NUMBER, 0, 1, 0, 0, 0, 10, NULL, NULL },
        { "a", CMS_FIELD_ARRAY, 0, 2, 0, 0, 0, 100, NULL, NULL },
        cms_fields_end
    };

    const cms_fields_t  t_over = { over, NULL, 1, 2, 3, 4 };
    const cms_fields_t  t_type = { type, NULL, 1, 2, 3, 4 };
    const cms_fields_t  t_bounds = { bounds, NULL, 1, 2, 3, 4 };
    const cms_fields_t  t_length = { length, NULL, 1, 2, 3, 4 };
    const cms_fields_t  t_json = { json, NULL, 1, 2, 3, 4 };

    (void) state;

    assert_int_equal(read_with(&t_over, "{}", CMS_FIELDS_CREATE),
                     CMS_FIELDS_ERROR);
    assert_int_equal(out.err.code, 0);
    assert_null(out.err.param);
    assert_true(out.err.message[0] != '\0');

    /* the table is checked even when the body is bad */
    assert_int_equal(read_with(&t_type, NULL, CMS_FIELDS_CREATE),
                     CMS_FIELDS_ERROR);
    assert_int_equal(read_with(&t_bounds, "{}", CMS_FIELDS_CREATE),
                     CMS_FIELDS_ERROR);
    assert_int_equal(read_with(&t_length, "{}", CMS_FIELDS_CREATE),
                     CMS_FIELDS_ERROR);

    /* the space a table needs, and a buffer short of it */
    assert_int_equal(cms_fields_space(&t_json), CMS_FIELDS_NUMBER_LEN + 101);
    assert_int_equal(cms_fields_space(&t_over), 0);

    assert_int_equal(read_with(&t_json, "{\"a\": []}", CMS_FIELDS_CREATE),
                     CMS_FIELDS_OK);
    out.size = 100;
    assert_int_equal(cms_fields_read(&t_json, body, CMS_FIELDS_CREATE, &out),
                     CMS_FIELDS_ERROR);
    out.size = CMS_FIELDS_NUMBER_LEN - 1;
    json_object_set_new(body, "n", json_integer(1));
    assert_int_equal(cms_fields_read(&t_json, body, CMS_FIELDS_CREATE, &out),
                     CMS_FIELDS_ERROR);
    out.size = CMS_FIELDS_NUMBER_LEN + 101;
    assert_int_equal(cms_fields_read(&t_json, body, CMS_FIELDS_CREATE, &out),
                     CMS_FIELDS_OK);
    param_is(1, "1");
    param_is(2, "[]");
}


static int
teardown(void **state)
{
    (void) state;

    json_decref(body);
    body = NULL;

    return 0;
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_success_create),
        cmocka_unit_test(test_body_not_object),
        cmocka_unit_test(test_unknown_and_ignored),
        cmocka_unit_test(test_required),
        cmocka_unit_test(test_null),
        cmocka_unit_test(test_string),
        cmocka_unit_test(test_string_not_utf8),
        cmocka_unit_test(test_one_of),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_type_code),
        cmocka_unit_test(test_integer),
        cmocka_unit_test(test_number),
        cmocka_unit_test(test_boolean),
        cmocka_unit_test(test_object_array),
        cmocka_unit_test(test_alias_and_unwritten),
        cmocka_unit_test(test_first_error),
        cmocka_unit_test(test_misuse),
    };

    return cmocka_run_group_tests(tests, NULL, teardown);
}
