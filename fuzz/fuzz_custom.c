
/*
 * libFuzzer target for cms_custom: the input is a schema and an entry's
 * data, split at the first newline, each parsed by jansson as the module
 * does (duplicates refused) but with JSON_ALLOW_NUL and JSON_DECODE_ANY so
 * that "\u0000" and values that are not objects reach the checks.
 *
 *   - the schema check answers OK or REFUSED (never ERROR: no memory
 *     runs out here); REFUSED: the path starts with "schema", the message
 *     names it, is terminated and fits;
 *   - OK: the normal form checks again as itself (idempotent), holds at
 *     most 100 fields with unique keys;
 *   - the data check answers OK or REFUSED (path "data" or "data.<key>" of
 *     a schema key, named by the message), with no stored data and with
 *     the data as the stored data of a PATCH that gives nothing;
 *   - OK: the kept members (cms_custom_data_keep) are the schema's keys
 *     only, and check OK alone.
 */


#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cms_custom.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


static void
must(int ok)
{
    if (!ok) {
        abort();
    }
}


static void
error_ok(const cms_custom_error_t *err, const char *prefix)
{
    must(memchr(err->path, '\0', sizeof(err->path)) != NULL);
    must(memchr(err->message, '\0', sizeof(err->message)) != NULL);
    must(strncmp(err->path, prefix, strlen(prefix)) == 0);
    must(strstr(err->message, err->path) != NULL
         || strlen(err->message) == sizeof(err->message) - 1);
}


static void
schema_ok(json_t *s)
{
    int                 type;
    size_t              i;
    json_t             *again, *f, *k;
    cms_custom_error_t  err;

    must(cms_custom_schema_check(s, &again, &err) == CMS_CUSTOM_OK);
    must(json_equal(s, again));
    json_decref(again);

    must(json_array_size(json_object_get(s, "fields"))
         <= CMS_CUSTOM_FIELDS_MAX);

    json_array_foreach(json_object_get(s, "fields"), i, f) {
        k = json_object_get(f, "key");
        must(cms_custom_field(s, json_string_value(k), json_string_length(k),
                              &type) == f);
        must(type != CMS_CUSTOM_NONE);
    }
}


static void
data_ok(json_t *s, json_t *d)
{
    int                 rc, type;
    json_t             *kept;
    const char         *p;
    cms_custom_error_t  err;

    rc = cms_custom_data_check(s, NULL, d, &err);
    must(rc == CMS_CUSTOM_OK || rc == CMS_CUSTOM_REFUSED);

    if (rc == CMS_CUSTOM_REFUSED) {
        error_ok(&err, "data");
        p = err.path + 4;
        must(*p == '\0'
             || (*p == '.' && cms_custom_field(s, p + 1, strlen(p + 1),
                                               &type) != NULL));
    }

    /* the same data stored, a PATCH giving nothing: the same answer */
    if (json_is_object(d)) {
        must(cms_custom_data_check(s, d, NULL, &err) == rc);
    }

    if (rc != CMS_CUSTOM_OK) {
        return;
    }

    must(cms_custom_data_keep(s, d, &kept) == CMS_CUSTOM_OK);
    must(json_object_size(kept) <= json_object_size(d));
    must(cms_custom_data_check(s, NULL, kept, &err) == CMS_CUSTOM_OK);

    {
        json_t      *v;
        const char  *key;

        json_object_foreach(kept, key, v) {
            must(cms_custom_field(s, key, strlen(key), &type) != NULL);
            must(json_equal(v, json_object_get(d, key)));
        }
    }

    json_decref(kept);
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int                 rc;
    json_t             *schema, *d, *s;
    size_t              split;
    const uint8_t      *nl;
    cms_custom_error_t  err;

    nl = memchr(data, '\n', size);
    split = nl ? (size_t) (nl - data) : size;

    schema = json_loadb((const char *) data, split,
                        JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL
                        | JSON_DECODE_ANY, NULL);
    if (schema == NULL) {
        return 0;
    }

    s = NULL;
    rc = cms_custom_schema_check(schema, &s, &err);
    must(rc == CMS_CUSTOM_OK || rc == CMS_CUSTOM_REFUSED);

    if (rc == CMS_CUSTOM_REFUSED) {
        must(s == NULL);
        error_ok(&err, "schema");
        json_decref(schema);
        return 0;
    }

    schema_ok(s);

    d = nl ? json_loadb((const char *) nl + 1, size - split - 1,
                        JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL
                        | JSON_DECODE_ANY, NULL)
           : NULL;

    if (d != NULL) {
        data_ok(s, d);
        json_decref(d);
    }

    json_decref(s);
    json_decref(schema);

    return 0;
}
