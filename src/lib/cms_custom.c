
/*
 * Custom modules: the schema of a content type and an entry's data
 * checked against it (see cms_custom.h).
 */


#include <stdio.h>
#include <string.h>

#include "cms_custom.h"
#include "cms_url.h"
#include "cms_uuid.h"
#include "cms_validate.h"


static const char *const  cms_custom_types[] = {
    "", "text", "number", "boolean", "url", "date", "datetime", "email",
    "select", "multiselect", "media", "richtext", NULL
};

static const char *const  cms_custom_members[] = {
    "key", "label", "type", "required", "options", NULL
};


static int cms_custom_refuse(cms_custom_error_t *err, const char *path,
    const char *fmt, const char *arg);
static int cms_custom_field_check(json_t *f, size_t i, json_t *keys,
    json_t **out, cms_custom_error_t *err);
static int cms_custom_field_type(json_t *f, size_t i, json_t **out,
    cms_custom_error_t *err);
static int cms_custom_options_check(json_t *opts, int type, size_t i,
    cms_custom_error_t *err);
static int cms_custom_value_check(json_t *f, int type, json_t *v,
    cms_custom_error_t *err);
static int cms_custom_string_check(json_t *f, int type, json_t *v,
    cms_custom_error_t *err);
static int cms_custom_multi_check(json_t *f, json_t *v,
    cms_custom_error_t *err);
static int cms_custom_key_valid(const char *s, size_t len);
static size_t cms_custom_chars(const char *s, size_t len);
static int cms_custom_option(json_t *f, json_t *v);


int
cms_custom_type(const char *s, size_t len)
{
    int  i;

    for (i = 1; cms_custom_types[i] != NULL; i++) {
        if (strlen(cms_custom_types[i]) == len
            && memcmp(cms_custom_types[i], s, len) == 0)
        {
            return i;
        }
    }

    return CMS_CUSTOM_NONE;
}


/* the error, "fmt" taking at most one %s ("arg"), cut to fit */
static int
cms_custom_refuse(cms_custom_error_t *err, const char *path, const char *fmt,
    const char *arg)
{
    snprintf(err->path, sizeof(err->path), "%s", path);
    snprintf(err->message, sizeof(err->message), fmt, err->path,
             arg ? arg : "");

    return CMS_CUSTOM_REFUSED;
}


/* long: the schema's shape, then each field, a refusal each */
int
cms_custom_schema_check(json_t *schema, json_t **out,
    cms_custom_error_t *err)
{
    int          rc;
    size_t       i;
    json_t      *fields, *f, *norm, *list, *keys, *nf;
    const char  *name;

    if (schema == NULL || json_is_null(schema)) {
        *out = json_pack("{s:[]}", "fields");
        return *out ? CMS_CUSTOM_OK : CMS_CUSTOM_ERROR;
    }

    if (!json_is_object(schema)) {
        return cms_custom_refuse(err, "schema", "%s must be an object "
                                 "{\"fields\": [...]}", NULL);
    }

    json_object_foreach(schema, name, f) {
        if (strcmp(name, "fields") != 0) {
            return cms_custom_refuse(err, "schema", "%s takes only "
                                     "\"fields\"", NULL);
        }
    }

    fields = json_object_get(schema, "fields");

    if (!json_is_array(fields)) {
        return cms_custom_refuse(err, "schema.fields", "%s must be an array",
                                 NULL);
    }

    if (json_array_size(fields) > CMS_CUSTOM_FIELDS_MAX) {
        return cms_custom_refuse(err, "schema.fields", "%s holds more than "
                                 "100 fields", NULL);
    }

    nf = NULL;
    norm = json_object();
    list = json_array();
    keys = json_object();
    rc = (norm && list && keys
          && json_object_set(norm, "fields", list) == 0)
         ? CMS_CUSTOM_OK : CMS_CUSTOM_ERROR;

    json_array_foreach(fields, i, f) {
        if (rc != CMS_CUSTOM_OK) {
            break;
        }

        rc = cms_custom_field_check(f, i, keys, &nf, err);

        if (rc == CMS_CUSTOM_OK && json_array_append_new(list, nf) != 0) {
            rc = CMS_CUSTOM_ERROR;
        }
    }

    json_decref(list);
    json_decref(keys);

    if (rc != CMS_CUSTOM_OK) {
        json_decref(norm);
        return rc;
    }

    *out = norm;

    return CMS_CUSTOM_OK;
}


/* long: a field's key and label, a refusal each; then its type */
static int
cms_custom_field_check(json_t *f, size_t i, json_t *keys, json_t **out,
    cms_custom_error_t *err)
{
    char         path[CMS_CUSTOM_PATH_MAX];
    json_t      *key, *label, *v;
    const char  *name;

    snprintf(path, sizeof(path), "schema.fields[%zu]", i);

    if (!json_is_object(f)) {
        return cms_custom_refuse(err, path, "%s must be an object", NULL);
    }

    json_object_foreach(f, name, v) {
        if (!cms_str_one_of(name, strlen(name), cms_custom_members)) {
            return cms_custom_refuse(err, path, "%s takes key, label, "
                                     "type, required and options only",
                                     NULL);
        }
    }

    key = json_object_get(f, "key");
    snprintf(path, sizeof(path), "schema.fields[%zu].key", i);

    if (!json_is_string(key)
        || !cms_custom_key_valid(json_string_value(key),
                                 json_string_length(key)))
    {
        return cms_custom_refuse(err, path, "%s must match "
                                 "^[a-z][a-z0-9_]{0,63}$", NULL);
    }

    if (json_object_get(keys, json_string_value(key)) != NULL) {
        return cms_custom_refuse(err, path, "%s repeats the key \"%s\"",
                                 json_string_value(key));
    }

    label = json_object_get(f, "label");
    snprintf(path, sizeof(path), "schema.fields[%zu].label", i);

    if (!json_is_string(label) || json_string_length(label) == 0
        || !cms_utf8_valid(json_string_value(label),
                           json_string_length(label))
        || cms_custom_chars(json_string_value(label),
                            json_string_length(label))
           > CMS_CUSTOM_LABEL_MAX)
    {
        return cms_custom_refuse(err, path, "%s must be a string of 1 to "
                                 "200 characters", NULL);
    }

    if (json_object_set(keys, json_string_value(key), json_true()) != 0) {
        return CMS_CUSTOM_ERROR;
    }

    return cms_custom_field_type(f, i, out, err);
}


/* type, required and options; then the field in its normal form */
static int
cms_custom_field_type(json_t *f, size_t i, json_t **out,
    cms_custom_error_t *err)
{
    int      type;
    char     path[CMS_CUSTOM_PATH_MAX];
    json_t  *t, *req, *opts;

    t = json_object_get(f, "type");
    type = json_is_string(t) ? cms_custom_type(json_string_value(t),
                                               json_string_length(t))
                             : CMS_CUSTOM_NONE;

    if (type == CMS_CUSTOM_NONE) {
        snprintf(path, sizeof(path), "schema.fields[%zu].type", i);
        return cms_custom_refuse(err, path, "%s must be one of text, number,"
                                 " boolean, url, date, datetime, email, "
                                 "select, multiselect, media, richtext",
                                 NULL);
    }

    req = json_object_get(f, "required");

    if (req != NULL && !json_is_boolean(req)) {
        snprintf(path, sizeof(path), "schema.fields[%zu].required", i);
        return cms_custom_refuse(err, path, "%s must be a boolean", NULL);
    }

    opts = json_object_get(f, "options");

    if (cms_custom_options_check(opts, type, i, err) != CMS_CUSTOM_OK) {
        return CMS_CUSTOM_REFUSED;
    }

    *out = json_pack("{s:O,s:O,s:O,s:b}", "key", json_object_get(f, "key"),
                     "label", json_object_get(f, "label"), "type", t,
                     "required", json_is_true(req));

    if (*out == NULL
        || (opts && json_object_set(*out, "options", opts) != 0))
    {
        json_decref(*out);
        return CMS_CUSTOM_ERROR;
    }

    return CMS_CUSTOM_OK;
}


/* options: 1 to 100 distinct strings for the select types, else none */
static int
cms_custom_options_check(json_t *opts, int type, size_t i,
    cms_custom_error_t *err)
{
    char         path[CMS_CUSTOM_PATH_MAX];
    size_t       j, k;
    json_t      *o;
    const char  *s;

    snprintf(path, sizeof(path), "schema.fields[%zu].options", i);

    if (type != CMS_CUSTOM_SELECT && type != CMS_CUSTOM_MULTISELECT) {
        return opts == NULL ? CMS_CUSTOM_OK
               : cms_custom_refuse(err, path, "%s is only for select and "
                                   "multiselect fields", NULL);
    }

    if (!json_is_array(opts) || json_array_size(opts) == 0
        || json_array_size(opts) > CMS_CUSTOM_OPTIONS_MAX)
    {
        return cms_custom_refuse(err, path, "%s must be an array of 1 to 100"
                                 " strings", NULL);
    }

    json_array_foreach(opts, j, o) {
        snprintf(path, sizeof(path), "schema.fields[%zu].options[%zu]",
                 i, j);

        if (!json_is_string(o) || json_string_length(o) == 0
            || !cms_utf8_valid(json_string_value(o), json_string_length(o))
            || cms_custom_chars(json_string_value(o), json_string_length(o))
               > CMS_CUSTOM_LABEL_MAX)
        {
            return cms_custom_refuse(err, path, "%s must be a string of 1 "
                                     "to 200 characters", NULL);
        }

        s = json_string_value(o);

        for (k = 0; k < j; k++) {
            if (json_equal(json_array_get(opts, k), o)) {
                return cms_custom_refuse(err, path, "%s repeats \"%s\"", s);
            }
        }
    }

    return CMS_CUSTOM_OK;
}


int
cms_custom_data_check(json_t *schema, json_t *current, json_t *given,
    cms_custom_error_t *err)
{
    int          type;
    char         path[CMS_CUSTOM_PATH_MAX];
    size_t       i;
    json_t      *f, *v, *t;
    const char  *key;

    if (given != NULL && !json_is_object(given)) {
        return cms_custom_refuse(err, "data", "%s must be an object", NULL);
    }

    json_array_foreach(json_object_get(schema, "fields"), i, f) {
        key = json_string_value(json_object_get(f, "key"));
        t = json_object_get(f, "type");
        type = cms_custom_type(json_string_value(t), json_string_length(t));

        v = given ? json_object_get(given, key) : NULL;

        if (v == NULL && current != NULL) {
            v = json_object_get(current, key);
        }

        snprintf(path, sizeof(path), "data.%s", key);

        if (v == NULL || json_is_null(v)) {
            if (json_is_true(json_object_get(f, "required"))) {
                return cms_custom_refuse(err, path, "%s is required", NULL);
            }

            continue;
        }

        if (cms_custom_value_check(f, type, v, err) != CMS_CUSTOM_OK) {
            snprintf(err->path, sizeof(err->path), "%s", path);
            return CMS_CUSTOM_REFUSED;
        }
    }

    return CMS_CUSTOM_OK;
}


/* one present value; the message names the path (set by the caller) */
static int
cms_custom_value_check(json_t *f, int type, json_t *v,
    cms_custom_error_t *err)
{
    char  path[CMS_CUSTOM_PATH_MAX];

    snprintf(path, sizeof(path), "data.%s",
             json_string_value(json_object_get(f, "key")));

    switch (type) {

    case CMS_CUSTOM_NUMBER:
        return json_is_number(v) ? CMS_CUSTOM_OK
               : cms_custom_refuse(err, path, "%s must be a number", NULL);

    case CMS_CUSTOM_BOOLEAN:
        return json_is_boolean(v) ? CMS_CUSTOM_OK
               : cms_custom_refuse(err, path, "%s must be true or false",
                                   NULL);

    case CMS_CUSTOM_MULTISELECT:
        return cms_custom_multi_check(f, v, err);

    default:
        return cms_custom_string_check(f, type, v, err);
    }
}


/* the string types: a rule and what its refusal says */
typedef struct {
    int                         type;
    int                       (*ok)(json_t *f, const char *s, size_t len);
    const char                 *what;
} cms_custom_rule_t;


static int
cms_custom_text_ok(json_t *f, const char *s, size_t len)
{
    (void) f;

    return cms_custom_chars(s, len) <= CMS_CUSTOM_TEXT_MAX;
}


static int
cms_custom_richtext_ok(json_t *f, const char *s, size_t len)
{
    (void) f;
    (void) s;

    return len <= CMS_CUSTOM_RICHTEXT_MAX;
}


static int
cms_custom_url_ok(json_t *f, const char *s, size_t len)
{
    (void) f;

    return cms_url_http_valid(s, len);
}


static int
cms_custom_date_ok(json_t *f, const char *s, size_t len)
{
    (void) f;

    return cms_custom_date_valid(s, len);
}


static int
cms_custom_datetime_ok(json_t *f, const char *s, size_t len)
{
    (void) f;

    return len <= 64 && cms_rfc3339_valid(s, len);
}


static int
cms_custom_email_ok(json_t *f, const char *s, size_t len)
{
    (void) f;

    return cms_custom_email_valid(s, len);
}


static int
cms_custom_select_ok(json_t *f, const char *s, size_t len)
{
    int      ok;
    json_t  *v;

    v = json_stringn(s, len);
    ok = v != NULL && cms_custom_option(f, v);
    json_decref(v);

    return ok;
}


static int
cms_custom_media_ok(json_t *f, const char *s, size_t len)
{
    (void) f;

    return cms_uuid_valid(s, len);
}


static const cms_custom_rule_t  cms_custom_rules[] = {
    { CMS_CUSTOM_TEXT, cms_custom_text_ok,
      "%s must be at most 10000 characters" },
    { CMS_CUSTOM_RICHTEXT, cms_custom_richtext_ok,
      "%s must be at most 512 KiB of HTML" },
    { CMS_CUSTOM_URL, cms_custom_url_ok,
      "%s must be an absolute http:// or https:// URL" },
    { CMS_CUSTOM_DATE, cms_custom_date_ok,
      "%s must be a date YYYY-MM-DD that exists" },
    { CMS_CUSTOM_DATETIME, cms_custom_datetime_ok,
      "%s must be an RFC 3339 date-time with a zone" },
    { CMS_CUSTOM_EMAIL, cms_custom_email_ok,
      "%s must be an email address" },
    { CMS_CUSTOM_SELECT, cms_custom_select_ok,
      "%s must be one of the field's options" },
    { CMS_CUSTOM_MEDIA, cms_custom_media_ok,
      "%s must be the id of a media asset" },
    { CMS_CUSTOM_NONE, NULL, NULL }
};


static int
cms_custom_string_check(json_t *f, int type, json_t *v,
    cms_custom_error_t *err)
{
    char                      path[CMS_CUSTOM_PATH_MAX];
    size_t                    len;
    const char               *s;
    const cms_custom_rule_t  *rule;

    snprintf(path, sizeof(path), "data.%s",
             json_string_value(json_object_get(f, "key")));

    if (!json_is_string(v)) {
        return cms_custom_refuse(err, path, "%s must be a string", NULL);
    }

    s = json_string_value(v);
    len = json_string_length(v);

    if (!cms_utf8_valid(s, len)) {
        return cms_custom_refuse(err, path, "%s must be UTF-8 without NUL",
                                 NULL);
    }

    for (rule = cms_custom_rules; rule->ok != NULL; rule++) {
        if (rule->type == type) {
            return rule->ok(f, s, len) ? CMS_CUSTOM_OK
                   : cms_custom_refuse(err, path, rule->what, NULL);
        }
    }

    return cms_custom_refuse(err, path, "%s has a type with no rule", NULL);
}


/* an array of distinct options */
static int
cms_custom_multi_check(json_t *f, json_t *v, cms_custom_error_t *err)
{
    char     path[CMS_CUSTOM_PATH_MAX];
    size_t   i, j;
    json_t  *o;

    snprintf(path, sizeof(path), "data.%s",
             json_string_value(json_object_get(f, "key")));

    if (!json_is_array(v)) {
        return cms_custom_refuse(err, path, "%s must be an array of options",
                                 NULL);
    }

    json_array_foreach(v, i, o) {
        if (!json_is_string(o) || !cms_custom_option(f, o)) {
            return cms_custom_refuse(err, path, "%s holds a value that is "
                                     "not one of the field's options",
                                     NULL);
        }

        for (j = 0; j < i; j++) {
            if (json_equal(json_array_get(v, j), o)) {
                return cms_custom_refuse(err, path, "%s repeats an option",
                                         NULL);
            }
        }
    }

    return CMS_CUSTOM_OK;
}


static int
cms_custom_option(json_t *f, json_t *v)
{
    size_t   i;
    json_t  *o;

    json_array_foreach(json_object_get(f, "options"), i, o) {
        if (json_equal(o, v)) {
            return 1;
        }
    }

    return 0;
}


int
cms_custom_data_keep(json_t *schema, json_t *given, json_t **out)
{
    size_t       i;
    json_t      *f, *v;
    const char  *key;

    *out = json_object();
    if (*out == NULL) {
        return CMS_CUSTOM_ERROR;
    }

    json_array_foreach(json_object_get(schema, "fields"), i, f) {
        key = json_string_value(json_object_get(f, "key"));
        v = given ? json_object_get(given, key) : NULL;

        if (v != NULL && json_object_set(*out, key, v) != 0) {
            json_decref(*out);
            *out = NULL;
            return CMS_CUSTOM_ERROR;
        }
    }

    return CMS_CUSTOM_OK;
}


json_t *
cms_custom_field(json_t *schema, const char *s, size_t len, int *type)
{
    size_t   i;
    json_t  *f, *k, *t;

    json_array_foreach(json_object_get(schema, "fields"), i, f) {
        k = json_object_get(f, "key");

        if (json_string_length(k) == len
            && memcmp(json_string_value(k), s, len) == 0)
        {
            t = json_object_get(f, "type");
            *type = cms_custom_type(json_string_value(t),
                                    json_string_length(t));
            return f;
        }
    }

    return NULL;
}


static int
cms_custom_key_valid(const char *s, size_t len)
{
    size_t  i;

    if (len == 0 || len > CMS_CUSTOM_KEY_MAX || s[0] < 'a' || s[0] > 'z') {
        return 0;
    }

    for (i = 1; i < len; i++) {
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')
              || s[i] == '_'))
        {
            return 0;
        }
    }

    return 1;
}


/* code points of valid UTF-8 */
static size_t
cms_custom_chars(const char *s, size_t len)
{
    size_t  i, n;

    n = 0;

    for (i = 0; i < len; i++) {
        n += ((unsigned char) s[i] & 0xc0) != 0x80;
    }

    return n;
}


/*
 * The domain's non-ASCII characters each stand in as a letter: the ASCII
 * rules of cms_email_valid() then judge the shape.
 */
int
cms_custom_email_valid(const char *s, size_t len)
{
    char    buf[256];
    size_t  i, n, at, seq;

    if (len == 0 || len > 254 || !cms_utf8_valid(s, len)) {
        return 0;
    }

    at = len;

    for (i = 0; i < len; i++) {
        if (s[i] == '@') {
            at = i;
        }
    }

    n = 0;

    for (i = 0; i < len; i += seq) {
        seq = 1;

        if ((unsigned char) s[i] >= 0x80) {
            if (i < at) {
                return 0;
            }

            seq = cms_utf8_len((const unsigned char *) s + i, len - i);
            buf[n++] = 'a';
            continue;
        }

        buf[n++] = s[i];
    }

    return cms_email_valid(buf, n);
}


int
cms_custom_date_valid(const char *s, size_t len)
{
    int     y, m, d, dim;
    size_t  i;

    static const int  days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31,
                                 30, 31 };

    if (len != 10 || s[4] != '-' || s[7] != '-') {
        return 0;
    }

    for (i = 0; i < len; i++) {
        if (i != 4 && i != 7 && (s[i] < '0' || s[i] > '9')) {
            return 0;
        }
    }

    y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10
        + (s[3] - '0');
    m = (s[5] - '0') * 10 + (s[6] - '0');
    d = (s[8] - '0') * 10 + (s[9] - '0');

    if (y == 0 || m < 1 || m > 12 || d < 1) {
        return 0;
    }

    dim = days[m - 1];

    if (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)) {
        dim = 29;
    }

    return d <= dim;
}
