/* cmocka tests for cms_custom: the schema of a custom module and an
   entry's data against it, every field type. */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cms_custom.h"


/* the checked schema of a text, or NULL when refused (err filled) */
static json_t *
schema(const char *text, cms_custom_error_t *err)
{
    int      rc;
    json_t  *in, *out;

    in = json_loads(text, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY
                    | JSON_ALLOW_NUL, NULL);
    assert_non_null(in);

    out = NULL;
    rc = cms_custom_schema_check(in, &out, err);
    json_decref(in);

    assert_true(rc == CMS_CUSTOM_OK || rc == CMS_CUSTOM_REFUSED);
    assert_true((rc == CMS_CUSTOM_OK) == (out != NULL));

    return out;
}


static void
schema_refused(const char *text, const char *path)
{
    cms_custom_error_t  err;

    memset(&err, 0, sizeof(err));
    assert_null(schema(text, &err));
    assert_string_equal(err.path, path);
    /* the message names the path */
    assert_non_null(strstr(err.message, path));
}


/* one field of type "type" (and its extra members), data {"v": value} */
static int
check(const char *field, const char *data, char *path)
{
    int                 rc;
    char                text[1024];
    json_t             *s, *d;
    cms_custom_error_t  err;

    snprintf(text, sizeof(text), "{\"fields\":[{\"key\":\"v\","
             "\"label\":\"V\",%s}]}", field);
    s = schema(text, &err);
    assert_non_null(s);

    d = json_loads(data, JSON_REJECT_DUPLICATES, NULL);
    assert_non_null(d);

    rc = cms_custom_data_check(s, NULL, d, &err);

    if (rc != CMS_CUSTOM_OK) {
        assert_non_null(strstr(err.message, err.path));
        strcpy(path, err.path);
    }

    json_decref(s);
    json_decref(d);

    return rc;
}


#define OK(field, data)                                                    \
    assert_int_equal(check(field, data, path), CMS_CUSTOM_OK)

#define NO(field, data)                                                    \
    do {                                                                   \
        assert_int_equal(check(field, data, path), CMS_CUSTOM_REFUSED);    \
        assert_string_equal(path, "data.v");                               \
    } while (0)


static void
test_schema_good(void **state)
{
    char                *t;
    json_t              *s;
    cms_custom_error_t   err;

    (void) state;

    s = schema("{\"fields\":[{\"key\":\"title\",\"label\":\"Title\","
               "\"type\":\"text\",\"required\":true},"
               "{\"key\":\"kind\",\"label\":\"Kind\",\"type\":\"select\","
               "\"options\":[\"a\",\"b\"]}]}", &err);
    assert_non_null(s);
    t = json_dumps(s, JSON_COMPACT);
    assert_string_equal(t, "{\"fields\":[{\"key\":\"title\",\"label\":"
                        "\"Title\",\"type\":\"text\",\"required\":true},"
                        "{\"key\":\"kind\",\"label\":\"Kind\",\"type\":"
                        "\"select\",\"required\":false,\"options\":"
                        "[\"a\",\"b\"]}]}");
    free(t);
    json_decref(s);

    /* absent and null: no fields */
    s = schema("null", &err);
    t = json_dumps(s, JSON_COMPACT);
    assert_string_equal(t, "{\"fields\":[]}");
    free(t);
    json_decref(s);

    s = schema("{\"fields\":[]}", &err);
    assert_non_null(s);
    json_decref(s);

    assert_int_equal(cms_custom_type("richtext", 8), CMS_CUSTOM_RICHTEXT);
    assert_int_equal(cms_custom_type("", 0), CMS_CUSTOM_NONE);
    assert_int_equal(cms_custom_type("textx", 5), CMS_CUSTOM_NONE);
}


static void
test_schema_bad(void **state)
{
    int   i;
    char  big[16384], *p;

    (void) state;

    schema_refused("[]", "schema");
    schema_refused("\"x\"", "schema");
    schema_refused("{}", "schema.fields");
    schema_refused("{\"fields\":{}}", "schema.fields");
    schema_refused("{\"fields\":[],\"x\":1}", "schema");
    schema_refused("{\"fields\":[1]}", "schema.fields[0]");
    schema_refused("{\"fields\":[{\"key\":\"a\",\"label\":\"A\","
                   "\"type\":\"text\",\"reqired\":true}]}",
                   "schema.fields[0]");
    schema_refused("{\"fields\":[{\"label\":\"A\",\"type\":\"text\"}]}",
                   "schema.fields[0].key");

    /* keys: ^[a-z][a-z0-9_]{0,63}$ */
    schema_refused("{\"fields\":[{\"key\":\"A\",\"label\":\"A\","
                   "\"type\":\"text\"}]}", "schema.fields[0].key");
    schema_refused("{\"fields\":[{\"key\":\"1a\",\"label\":\"A\","
                   "\"type\":\"text\"}]}", "schema.fields[0].key");
    schema_refused("{\"fields\":[{\"key\":\"a-b\",\"label\":\"A\","
                   "\"type\":\"text\"}]}", "schema.fields[0].key");
    schema_refused("{\"fields\":[{\"key\":\"\",\"label\":\"A\","
                   "\"type\":\"text\"}]}", "schema.fields[0].key");
    schema_refused("{\"fields\":[{\"key\":\"a\\u0000\",\"label\":\"A\","
                   "\"type\":\"text\"}]}", "schema.fields[0].key");
    schema_refused("{\"fields\":[{\"key\":\"a1234567890123456789012345678"
                   "901234567890123456789012345678901234\",\"label\":\"A\","
                   "\"type\":\"text\"}]}", "schema.fields[0].key");
    schema_refused("{\"fields\":[{\"key\":\"a\",\"label\":\"A\","
                   "\"type\":\"text\"},{\"key\":\"a\",\"label\":\"B\","
                   "\"type\":\"number\"}]}", "schema.fields[1].key");

    /* labels, types, required */
    schema_refused("{\"fields\":[{\"key\":\"a\",\"label\":\"\","
                   "\"type\":\"text\"}]}", "schema.fields[0].label");
    schema_refused("{\"fields\":[{\"key\":\"a\",\"label\":5,"
                   "\"type\":\"text\"}]}", "schema.fields[0].label");
    schema_refused("{\"fields\":[{\"key\":\"a\",\"label\":\"A\"}]}",
                   "schema.fields[0].type");
    schema_refused("{\"fields\":[{\"key\":\"a\",\"label\":\"A\","
                   "\"type\":\"Text\"}]}", "schema.fields[0].type");
    schema_refused("{\"fields\":[{\"key\":\"a\",\"label\":\"A\","
                   "\"type\":\"text\",\"required\":\"yes\"}]}",
                   "schema.fields[0].required");

    /* options: exactly for the select types, 1..100 distinct strings */
    schema_refused("{\"fields\":[{\"key\":\"a\",\"label\":\"A\","
                   "\"type\":\"select\"}]}", "schema.fields[0].options");
    schema_refused("{\"fields\":[{\"key\":\"a\",\"label\":\"A\","
                   "\"type\":\"multiselect\",\"options\":[]}]}",
                   "schema.fields[0].options");
    schema_refused("{\"fields\":[{\"key\":\"a\",\"label\":\"A\","
                   "\"type\":\"text\",\"options\":[\"x\"]}]}",
                   "schema.fields[0].options");
    schema_refused("{\"fields\":[{\"key\":\"a\",\"label\":\"A\","
                   "\"type\":\"select\",\"options\":[\"x\",\"x\"]}]}",
                   "schema.fields[0].options[1]");
    schema_refused("{\"fields\":[{\"key\":\"a\",\"label\":\"A\","
                   "\"type\":\"select\",\"options\":[\"x\",2]}]}",
                   "schema.fields[0].options[1]");
    schema_refused("{\"fields\":[{\"key\":\"a\",\"label\":\"A\","
                   "\"type\":\"select\",\"options\":[\"\"]}]}",
                   "schema.fields[0].options[0]");

    /* 100 fields pass, 101 do not */
    for (i = 100; i <= 101; i++) {
        p = big + sprintf(big, "{\"fields\":[");

        for (int j = 0; j < i; j++) {
            p += sprintf(p, "%s{\"key\":\"f%d\",\"label\":\"F\","
                         "\"type\":\"text\"}", j ? "," : "", j);
        }

        strcpy(p, "]}");

        if (i == 100) {
            cms_custom_error_t  err;
            json_t             *s = schema(big, &err);

            assert_non_null(s);
            json_decref(s);

        } else {
            schema_refused(big, "schema.fields");
        }
    }
}


static void
test_text(void **state)
{
    char  path[CMS_CUSTOM_PATH_MAX], data[32000], *p;

    (void) state;

#define F  "\"type\":\"text\""
    OK(F, "{\"v\":\"hello\"}");
    OK(F, "{\"v\":\"\"}");
    OK(F, "{}");
    OK(F, "{\"v\":null}");
    NO(F, "{\"v\":5}");
    NO(F, "{\"v\":[\"x\"]}");
    NO(F, "{\"v\":true}");
    NO(F ",\"required\":true", "{}");
    NO(F ",\"required\":true", "{\"v\":null}");
    OK(F ",\"required\":true", "{\"v\":\"\"}");

    /* 10,000 characters (two bytes each) pass, one more does not */
    p = data + sprintf(data, "{\"v\":\"");
    for (int i = 0; i < 10000; i++) {
        memcpy(p, "\xc3\xa9", 2);
        p += 2;
    }
    strcpy(p, "\"}");
    OK(F, data);
    strcpy(data + strlen(data) - 2, "x\"}");
    NO(F, data);
#undef F
}


static void
test_number(void **state)
{
    char  path[CMS_CUSTOM_PATH_MAX];

    (void) state;

#define F  "\"type\":\"number\""
    OK(F, "{\"v\":0}");
    OK(F, "{\"v\":-0}");
    OK(F, "{\"v\":-0.0}");
    OK(F, "{\"v\":1.5e300}");
    OK(F, "{\"v\":-9223372036854775808}");
    NO(F, "{\"v\":\"5\"}");
    NO(F, "{\"v\":true}");
    NO(F, "{\"v\":[]}");
    NO(F ",\"required\":true", "{\"v\":null}");
#undef F

    /* not finite: jansson refuses to read 1e309, so no entry holds it */
    assert_null(json_loads("{\"v\":1e309}", 0, NULL));
    assert_null(json_loads("{\"v\":-1e309}", 0, NULL));
    assert_null(json_real(1e308 * 10));
}


static void
test_boolean(void **state)
{
    char  path[CMS_CUSTOM_PATH_MAX];

    (void) state;

#define F  "\"type\":\"boolean\""
    OK(F, "{\"v\":true}");
    OK(F, "{\"v\":false}");
    NO(F, "{\"v\":\"true\"}");
    NO(F, "{\"v\":1}");
    NO(F, "{\"v\":0}");
    NO(F ",\"required\":true", "{}");
    OK(F ",\"required\":true", "{\"v\":false}");
#undef F
}


static void
test_url(void **state)
{
    char  path[CMS_CUSTOM_PATH_MAX];

    (void) state;

#define F  "\"type\":\"url\""
    OK(F, "{\"v\":\"https://example.com/a?b=c#d\"}");
    OK(F, "{\"v\":\"http://127.0.0.1:8080/\"}");
    NO(F, "{\"v\":\"ftp://example.com/\"}");
    NO(F, "{\"v\":\"javascript:alert(1)\"}");
    NO(F, "{\"v\":\"/relative\"}");
    NO(F, "{\"v\":\"\"}");
    NO(F, "{\"v\":\"https://user@example.com/\"}");
    NO(F, "{\"v\":5}");
#undef F
}


static void
test_date(void **state)
{
    char  path[CMS_CUSTOM_PATH_MAX];

    (void) state;

#define F  "\"type\":\"date\""
    OK(F, "{\"v\":\"2024-02-29\"}");
    OK(F, "{\"v\":\"2000-02-29\"}");
    OK(F, "{\"v\":\"0001-01-01\"}");
    OK(F, "{\"v\":\"9999-12-31\"}");
    NO(F, "{\"v\":\"2024-02-30\"}");
    NO(F, "{\"v\":\"2023-02-29\"}");
    NO(F, "{\"v\":\"1900-02-29\"}");
    NO(F, "{\"v\":\"2024-04-31\"}");
    NO(F, "{\"v\":\"2024-13-01\"}");
    NO(F, "{\"v\":\"2024-00-10\"}");
    NO(F, "{\"v\":\"2024-01-00\"}");
    NO(F, "{\"v\":\"0000-01-01\"}");
    NO(F, "{\"v\":\"2024-1-01\"}");
    NO(F, "{\"v\":\"2024-01-01T00:00:00Z\"}");
    NO(F, "{\"v\":\"２０２４-01-01\"}");
    NO(F, "{\"v\":20240101}");
#undef F
}


static void
test_datetime(void **state)
{
    char  path[CMS_CUSTOM_PATH_MAX];

    (void) state;

#define F  "\"type\":\"datetime\""
    OK(F, "{\"v\":\"2024-02-29T23:59:60Z\"}");
    OK(F, "{\"v\":\"2024-01-01T10:00:00.123+02:00\"}");
    OK(F, "{\"v\":\"2024-01-01t10:00:00z\"}");
    NO(F, "{\"v\":\"2024-02-30T00:00:00Z\"}");
    NO(F, "{\"v\":\"2024-01-01T24:00:00Z\"}");
    NO(F, "{\"v\":\"2024-01-01T10:00:00\"}");
    NO(F, "{\"v\":\"2024-01-01\"}");
    NO(F, "{\"v\":1704103200}");
#undef F
}


static void
test_email(void **state)
{
    char  path[CMS_CUSTOM_PATH_MAX];

    (void) state;

#define F  "\"type\":\"email\""
    OK(F, "{\"v\":\"a@example.com\"}");
    OK(F, "{\"v\":\"first.last+tag@sub.example.org\"}");
    /* an internationalized domain, as typed, and as punycode */
    OK(F, "{\"v\":\"user@münchen.de\"}");
    OK(F, "{\"v\":\"user@例え.jp\"}");
    OK(F, "{\"v\":\"user@xn--mnchen-3ya.de\"}");
    /* quoted local parts, non-ASCII local parts: refused */
    NO(F, "{\"v\":\"\\\"a b\\\"@example.com\"}");
    NO(F, "{\"v\":\"\\\"a\\\"@example.com\"}");
    NO(F, "{\"v\":\"jörg@example.com\"}");
    NO(F, "{\"v\":\"a@b\"}");
    NO(F, "{\"v\":\"a@-münchen.de\"}");
    NO(F, "{\"v\":\"a@münchen..de\"}");
    NO(F, "{\"v\":\"@example.com\"}");
    NO(F, "{\"v\":\"a@@example.com\"}");
    NO(F, "{\"v\":\"a <a@example.com>\"}");
    NO(F, "{\"v\":\"\"}");
    NO(F, "{\"v\":5}");
#undef F

    assert_false(cms_custom_email_valid("a@b\xff.de", 8));
    assert_false(cms_custom_email_valid("a@b\0c.de", 8));
    assert_true(cms_custom_date_valid("2024-02-29", 10));
    assert_false(cms_custom_date_valid("2024-02-2", 9));
}


static void
test_select(void **state)
{
    char  path[CMS_CUSTOM_PATH_MAX];

    (void) state;

#define F  "\"type\":\"select\",\"options\":[\"red\",\"green\"]"
    OK(F, "{\"v\":\"red\"}");
    NO(F, "{\"v\":\"Red\"}");
    NO(F, "{\"v\":\"\"}");
    NO(F, "{\"v\":[\"red\"]}");
    NO(F, "{\"v\":1}");
#undef F

#define F  "\"type\":\"multiselect\",\"options\":[\"red\",\"green\"]"
    OK(F, "{\"v\":[]}");
    OK(F, "{\"v\":[\"green\",\"red\"]}");
    NO(F, "{\"v\":[\"red\",\"red\"]}");
    NO(F, "{\"v\":[\"blue\"]}");
    NO(F, "{\"v\":\"red\"}");
    NO(F, "{\"v\":[1]}");
    NO(F, "{\"v\":[[\"red\"]]}");
    NO(F ",\"required\":true", "{\"v\":null}");
#undef F
}


static void
test_media_richtext(void **state)
{
    char  path[CMS_CUSTOM_PATH_MAX];

    (void) state;

#define F  "\"type\":\"media\""
    OK(F, "{\"v\":\"0190a4d6-2f5e-7c3a-9b1d-4e5f60718293\"}");
    NO(F, "{\"v\":\"0190a4d6-2f5e-7c3a-9b1d-4e5f6071829\"}");
    NO(F, "{\"v\":\"not-a-uuid\"}");
    NO(F, "{\"v\":7}");
#undef F

#define F  "\"type\":\"richtext\""
    OK(F, "{\"v\":\"<p>hi <script>x</script></p>\"}");
    NO(F, "{\"v\":{\"html\":\"x\"}}");
#undef F
}


/* a PATCH: the given values over the stored ones, all of it checked */
static void
test_merge(void **state)
{
    json_t              *s, *cur, *given, *kept;
    cms_custom_error_t   err;

    (void) state;

    s = schema("{\"fields\":[{\"key\":\"title\",\"label\":\"T\","
               "\"type\":\"text\",\"required\":true},{\"key\":\"n\","
               "\"label\":\"N\",\"type\":\"number\"}]}", &err);
    cur = json_loads("{\"title\":\"x\",\"n\":1,\"gone\":true}", 0, NULL);

    /* a patch without the required field: the stored one counts */
    given = json_loads("{\"n\":2,\"extra\":1}", 0, NULL);
    assert_int_equal(cms_custom_data_check(s, cur, given, &err),
                     CMS_CUSTOM_OK);
    assert_int_equal(cms_custom_data_keep(s, given, &kept), CMS_CUSTOM_OK);
    assert_int_equal(json_object_size(kept), 1);
    assert_non_null(json_object_get(kept, "n"));
    json_decref(kept);
    json_decref(given);

    /* clearing the required field: refused */
    given = json_loads("{\"title\":null}", 0, NULL);
    assert_int_equal(cms_custom_data_check(s, cur, given, &err),
                     CMS_CUSTOM_REFUSED);
    assert_string_equal(err.path, "data.title");
    json_decref(given);

    /* a stored value the schema no longer allows is checked again */
    json_object_set_new(cur, "n", json_string("one"));
    assert_int_equal(cms_custom_data_check(s, cur, NULL, &err),
                     CMS_CUSTOM_REFUSED);
    assert_string_equal(err.path, "data.n");

    given = json_loads("[]", JSON_DECODE_ANY, NULL);
    assert_int_equal(cms_custom_data_check(s, NULL, given, &err),
                     CMS_CUSTOM_REFUSED);
    assert_string_equal(err.path, "data");
    json_decref(given);

    assert_null(cms_custom_field(s, "nope", 4, &(int) { 0 }));
    {
        int  type = 0;

        assert_non_null(cms_custom_field(s, "n", 1, &type));
        assert_int_equal(type, CMS_CUSTOM_NUMBER);
    }

    json_decref(cur);
    json_decref(s);
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_schema_good),
        cmocka_unit_test(test_schema_bad),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_number),
        cmocka_unit_test(test_boolean),
        cmocka_unit_test(test_url),
        cmocka_unit_test(test_date),
        cmocka_unit_test(test_datetime),
        cmocka_unit_test(test_email),
        cmocka_unit_test(test_select),
        cmocka_unit_test(test_media_richtext),
        cmocka_unit_test(test_merge),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
