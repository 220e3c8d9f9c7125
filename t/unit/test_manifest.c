
/*
 * Unit tests for cms_manifest.c: the sample manifest, round trips (parse,
 * write back as TOML, parse again, compare), every validation message, and
 * the corpus in t/data/manifests/: every bad/ file must fail with the
 * message its first line names ("# expect: <substring>"), every good/ file
 * must pass.
 *
 * Run from the repository root (files are opened by relative path).
 */


#define _POSIX_C_SOURCE  200809L

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cms_manifest.h"


#define SAMPLE_PATH       "examples/extensions/billing-demo.toml"
#define SAMPLE_CONFIG     "examples/extensions/billing-demo.config.json"
#define CORPUS_BAD        "t/data/manifests/bad"
#define CORPUS_GOOD       "t/data/manifests/good"
#define CORPUS_MIN_BAD    30


static cms_manifest_t   man;
static cms_manifest_t   man2;
static void            *arena;          /* of man */
static void            *arena2;         /* of man2 */
static char             err[CMS_MANIFEST_ERR_SIZE];

static const char  base[] =
    "[extension]\n"
    "name = \"billing-demo\"\n"
    "version = \"1.2.0\"\n"
    "category = \"payment\"\n"
    "required_privilege = \"billing:view\"\n"
    "privileges = [\"ext:billing:read\"]\n";


/*
 * Parses text[0 .. len) into *m from an exactly-sized heap copy, with a
 * fresh exactly-sized arena kept in *a; the copy is scribbled over and
 * freed before returning, so nothing may point into it.
 */

static int
parse_into(const char *text, size_t len, cms_manifest_t *m, void **a)
{
    int     rc;
    char   *copy;
    size_t  size;

    size = cms_manifest_arena_size(len);

    free(*a);
    *a = malloc(size);
    assert_non_null(*a);

    copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, text, len);

    memset(err, 'E', sizeof(err));
    rc = cms_manifest_parse(copy, len, *a, size, m, err, sizeof(err));

    memset(copy, 'X', len);
    free(copy);

    if (rc != 0) {
        assert_int_equal(rc, -1);
        assert_non_null(memchr(err, '\0', sizeof(err)));
        assert_true(err[0] != '\0');
    }

    return rc;
}


static int
parse(const char *text)
{
    return parse_into(text, strlen(text), &man, &arena);
}


static void
ok(const char *text)
{
    if (parse(text) != 0) {
        fail_msg("unexpected error: %s\n%s", err, text);
    }
}


/* the base manifest plus extra must fail with exactly msg */

static void
bad(const char *extra, const char *msg)
{
    char  text[4096];

    snprintf(text, sizeof(text), "%s%s", base, extra);

    if (parse(text) == 0) {
        fail_msg("parsed, expected \"%s\":\n%s", msg, text);
    }

    if (strcmp(err, msg) != 0) {
        fail_msg("got \"%s\", expected \"%s\":\n%s", err, msg, text);
    }
}


static char *
read_file(const char *path, size_t *len)
{
    FILE    *f;
    char    *buf;
    size_t   cap, n;

    f = fopen(path, "rb");
    if (f == NULL) {
        fail_msg("cannot open %s (run from the repository root)", path);
    }

    cap = 256 * 1024;
    buf = malloc(cap);
    assert_non_null(buf);

    n = fread(buf, 1, cap, f);
    assert_true(n < cap);
    fclose(f);

    *len = n;

    return buf;
}


static void
assert_str(cms_manifest_str_t s, const char *v)
{
    assert_int_equal(s.len, strlen(v));
    assert_memory_equal(s.data, v, s.len);
    assert_int_equal(s.data[s.len], '\0');
}


static void
test_sample(void **state)
{
    char                        *text, *json, key[80];
    size_t                       len, jlen, i;
    const cms_manifest_field_t  *f;

    (void) state;

    text = read_file(SAMPLE_PATH, &len);

    if (parse_into(text, len, &man, &arena) != 0) {
        fail_msg("%s: %s", SAMPLE_PATH, err);
    }

    free(text);

    assert_str(man.name, "billing-demo");
    assert_str(man.version, "1.2.0");
    assert_str(man.category, "payment");
    assert_str(man.required_privilege, "billing:view");
    assert_int_equal(man.nprivileges, 3);
    assert_str(man.privileges[0], "ext:billing:read");
    assert_str(man.privileges[1], "ext:billing:write");
    assert_str(man.privileges[2], "ext:control:write");
    assert_int_equal(man.nfields, 4);

    f = &man.fields[0];
    assert_str(f->name, "api_url");
    assert_int_equal(f->type, CMS_MANIFEST_STRING);
    assert_int_equal(f->required, 1);
    assert_int_equal(f->has_default, 1);
    assert_int_equal(f->def->type, CMS_TOML_STRING);
    assert_string_equal(f->def->str, "https://pay.example.com");

    f = &man.fields[1];
    assert_str(f->name, "api_token");
    assert_int_equal(f->type, CMS_MANIFEST_SECRET);
    assert_int_equal(f->required, 1);
    assert_int_equal(f->has_default, 0);
    assert_null(f->def);

    f = &man.fields[2];
    assert_str(f->name, "timeout_ms");
    assert_int_equal(f->type, CMS_MANIFEST_NUMBER);
    assert_int_equal(f->required, 0);
    assert_int_equal(f->def->type, CMS_TOML_INTEGER);
    assert_true(f->def->integer == 5000);

    f = &man.fields[3];
    assert_str(f->name, "sandbox");
    assert_int_equal(f->type, CMS_MANIFEST_BOOLEAN);
    assert_int_equal(f->required, 0);
    assert_int_equal(f->def->boolean, 1);

    /* the sample config names every field, secret included, and no other */
    json = read_file(SAMPLE_CONFIG, &jlen);
    json[jlen] = '\0';

    for (i = 0; i < man.nfields; i++) {
        snprintf(key, sizeof(key), "\"%s\":", man.fields[i].name.data);
        assert_non_null(strstr(json, key));
    }

    for (i = 0, text = json; (text = strstr(text, "\":")) != NULL; text++) {
        i++;
    }

    assert_int_equal(i, man.nfields);
    assert_non_null(strstr(json, "\"api_token\": \"tok_demo_123\""));

    free(json);
}


/* --- round trips: write a manifest back as TOML --------------------------- */

static void
emit(char **p, char *end, const char *fmt, ...)
{
    int      n;
    va_list  args;

    va_start(args, fmt);
    n = vsnprintf(*p, end - *p, fmt, args);
    va_end(args);

    assert_true(n >= 0 && n < end - *p);
    *p += n;
}


static void
emit_string(char **p, char *end, const char *s, size_t len)
{
    size_t         i;
    unsigned char  c;

    emit(p, end, "\"");

    for (i = 0; i < len; i++) {
        c = (unsigned char) s[i];

        if (c == '"' || c == '\\') {
            emit(p, end, "\\%c", c);

        } else if (c < 0x20 || c == 0x7f) {
            emit(p, end, "\\u%04x", c);

        } else {
            emit(p, end, "%c", c);
        }
    }

    emit(p, end, "\"");
}


static void
emit_default(char **p, char *end, const cms_toml_node_t *v)
{
    char  num[64];

    switch (v->type) {

    case CMS_TOML_STRING:
        emit_string(p, end, v->str, v->str_len);
        break;

    case CMS_TOML_INTEGER:
        emit(p, end, "%" PRId64, v->integer);
        break;

    case CMS_TOML_FLOAT:
        snprintf(num, sizeof(num), "%.17g", v->number);
        emit(p, end, "%s%s", num, strpbrk(num, ".e") ? "" : ".0");
        break;

    default:
        emit(p, end, "%s", v->boolean ? "true" : "false");
        break;
    }
}


static size_t
emit_manifest(const cms_manifest_t *m, char *buf, size_t size)
{
    char                        *p, *end;
    size_t                       i;
    const cms_manifest_field_t  *f;

    p = buf;
    end = buf + size;

    emit(&p, end, "[extension]\nname = ");
    emit_string(&p, end, m->name.data, m->name.len);
    emit(&p, end, "\nversion = ");
    emit_string(&p, end, m->version.data, m->version.len);
    emit(&p, end, "\ncategory = ");
    emit_string(&p, end, m->category.data, m->category.len);
    emit(&p, end, "\nrequired_privilege = ");
    emit_string(&p, end, m->required_privilege.data,
                m->required_privilege.len);
    emit(&p, end, "\nprivileges = [");

    for (i = 0; i < m->nprivileges; i++) {
        emit_string(&p, end, m->privileges[i].data, m->privileges[i].len);
        emit(&p, end, ", ");
    }

    emit(&p, end, "]\n");

    for (i = 0; i < m->nfields; i++) {
        f = &m->fields[i];
        emit(&p, end, "\n[extension.config.%s]\ntype = \"%s\"\n",
             f->name.data, cms_manifest_type_name(f->type));
        emit(&p, end, "required = %s\n", f->required ? "true" : "false");

        if (f->has_default) {
            emit(&p, end, "default = ");
            emit_default(&p, end, f->def);
            emit(&p, end, "\n");
        }
    }

    return (size_t) (p - buf);
}


static void
assert_same_str(cms_manifest_str_t a, cms_manifest_str_t b)
{
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);
}


static void
assert_same_manifest(const cms_manifest_t *a, const cms_manifest_t *b)
{
    size_t                       i;
    const cms_toml_node_t       *x, *y;
    const cms_manifest_field_t  *f, *g;

    assert_same_str(a->name, b->name);
    assert_same_str(a->version, b->version);
    assert_same_str(a->category, b->category);
    assert_same_str(a->required_privilege, b->required_privilege);
    assert_int_equal(a->nprivileges, b->nprivileges);

    for (i = 0; i < a->nprivileges; i++) {
        assert_same_str(a->privileges[i], b->privileges[i]);
    }

    assert_int_equal(a->nfields, b->nfields);

    for (i = 0; i < a->nfields; i++) {
        f = &a->fields[i];
        g = &b->fields[i];
        assert_same_str(f->name, g->name);
        assert_int_equal(f->type, g->type);
        assert_int_equal(f->required, g->required);
        assert_int_equal(f->has_default, g->has_default);

        if (!f->has_default) {
            assert_null(f->def);
            assert_null(g->def);
            continue;
        }

        x = f->def;
        y = g->def;
        assert_int_equal(x->type, y->type);
        assert_int_equal(x->str_len, y->str_len);
        assert_memory_equal(x->str ? x->str : "", y->str ? y->str : "",
                            x->str_len);
        assert_true(x->integer == y->integer);
        assert_true(x->number == y->number);
        assert_int_equal(x->boolean, y->boolean);
    }
}


/* parse, write back, parse the result: the same manifest both times */

static void
round_trip(const char *text, size_t len, const char *what)
{
    char    *out;
    size_t   n;

    if (parse_into(text, len, &man, &arena) != 0) {
        fail_msg("%s: %s", what, err);
    }

    out = malloc(CMS_TOML_MAX_INPUT);
    assert_non_null(out);

    n = emit_manifest(&man, out, CMS_TOML_MAX_INPUT);

    if (parse_into(out, n, &man2, &arena2) != 0) {
        fail_msg("%s, written back: %s\n%.*s", what, err, (int) n, out);
    }

    assert_same_manifest(&man, &man2);

    free(out);
}


static void
test_round_trips(void **state)
{
    char         *text;
    size_t        len, i;
    const char   *typical;
    const char   *files[] = {
        SAMPLE_PATH,
        CORPUS_GOOD "/all-kinds.toml",
        CORPUS_GOOD "/inline.toml",
        CORPUS_GOOD "/max-fields.toml",
        CORPUS_GOOD "/limits.toml",
        CORPUS_GOOD "/minimal.toml",
    };

    (void) state;

    for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        text = read_file(files[i], &len);
        round_trip(text, len, files[i]);
        free(text);
    }

    round_trip(base, strlen(base), "base");

    typical = "[extension]\n"
           "name = \"sms-gateway\"\n"
           "version = \"3.1.4-beta.2+exp.sha.5114f85\"\n"
           "category = \"notification\"\n"
           "required_privilege = \"sms:send\"\n"
           "privileges = [\"ext:control:write\", \"ext:billing:read\"]\n"
           "[extension.config.sender_id]\n"
           "type = \"string\"\n"
           "default = \"line1\\nline2 \\\"q\\\" \\\\ \\u0001\"\n"
           "[extension.config.ratio]\n"
           "type = \"number\"\n"
           "default = 0.1\n"
           "[extension.config.big]\n"
           "type = \"number\"\n"
           "default = -9223372036854775808\n"
           "[extension.config.tiny]\n"
           "type = \"number\"\n"
           "default = 6.02e-23\n";
    round_trip(typical, strlen(typical), "typical");
}


/* --- validation messages -------------------------------------------------- */

static void
test_required_keys(void **state)
{
    (void) state;

    assert_int_equal(parse(""), -1);
    assert_string_equal(err, "extension: required");

    assert_int_equal(parse("# nothing\n\n"), -1);
    assert_string_equal(err, "extension: required");

    assert_int_equal(parse("[extension]\n"), -1);
    assert_string_equal(err, "extension.name: required");

    assert_int_equal(parse("[extension]\nname = \"a\"\n"), -1);
    assert_string_equal(err, "extension.version: required");

    assert_int_equal(parse("[extension]\nname = \"a\"\nversion = \"1\"\n"),
                     -1);
    assert_string_equal(err, "extension.category: required");

    assert_int_equal(parse("[extension]\nname = \"a\"\nversion = \"1\"\n"
                           "category = \"c\"\n"), -1);
    assert_string_equal(err, "extension.required_privilege: required");

    assert_int_equal(parse("[extension]\nname = \"a\"\nversion = \"1\"\n"
                           "category = \"c\"\nrequired_privilege = \"r\"\n"),
                     -1);
    assert_string_equal(err, "extension.privileges: required");

    assert_int_equal(parse("extension = 1\n"), -1);
    assert_string_equal(err, "extension: must be a table");

    assert_int_equal(parse("extension = [{}]\n"), -1);
    assert_string_equal(err, "extension: must be a table");
}


static void
test_strings(void **state)
{
    (void) state;

    ok(base);
    assert_int_equal(man.nfields, 0);

    ok("[extension]\nname = \"a1-b2-c3\"\nversion = \"v1.0+x-Y\"\n"
       "category = \"a_b-1\"\nrequired_privilege = \"x.y:z_1-2\"\n"
       "privileges = []\n");
    assert_str(man.name, "a1-b2-c3");
    assert_int_equal(man.nprivileges, 0);

    ok("[extension]\nname = \"0\"\nversion = \"0\"\ncategory = \"_\"\n"
       "required_privilege = \":\"\nprivileges = []\n");

    assert_int_equal(parse("[extension]\nname = \"-a\"\n"), -1);
    assert_string_equal(err, "extension.name: must match "
                        "^[a-z0-9]+(-[a-z0-9]+)*$ (at most 64 characters)");

    assert_int_equal(parse("[extension]\nname = \"a-\"\n"), -1);
    assert_int_equal(parse("[extension]\nname = \"\"\n"), -1);
    assert_int_equal(parse("[extension]\nname = \"a b\"\n"), -1);
    assert_int_equal(parse("[extension]\nname = \"\xc3\xa9\"\n"), -1);
    assert_string_equal(err, "extension.name: must match "
                        "^[a-z0-9]+(-[a-z0-9]+)*$ (at most 64 characters)");

    assert_int_equal(parse("[extension]\nname = [\"a\"]\n"), -1);
    assert_string_equal(err, "extension.name: must be a string");

    assert_int_equal(parse("[extension]\nname = \"a\"\nversion = 1.2\n"), -1);
    assert_string_equal(err, "extension.version: must be a string");

    assert_int_equal(parse("[extension]\nname = \"a\"\nversion = \"1 2\"\n"),
                     -1);
    assert_string_equal(err, "extension.version: must match "
                        "[0-9A-Za-z.+-]{1,64}");

    assert_int_equal(parse("[extension]\nname = \"a\"\nversion = \"1\"\n"
                           "category = \"a:b\"\n"), -1);
    assert_string_equal(err, "extension.category: must match "
                        "[a-z0-9_-]{1,32}");

    assert_int_equal(parse("[extension]\nname = \"a\"\nversion = \"1\"\n"
                           "category = \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\""),
                     -1);
    assert_string_equal(err, "extension.category: must match "
                        "[a-z0-9_-]{1,32}");

    assert_int_equal(parse("[extension]\nname = \"a\"\nversion = \"1\"\n"
                           "category = \"a\"\n"
                           "required_privilege = \"Billing\"\n"), -1);
    assert_string_equal(err, "extension.required_privilege: must match "
                        "[a-z0-9_:.-]{1,64}");
}


static void
test_privileges(void **state)
{
    const char  *head;
    char         text[1024];

    (void) state;

    head = "[extension]\nname = \"a\"\nversion = \"1\"\ncategory = \"c\"\n"
           "required_privilege = \"r\"\n";

    snprintf(text, sizeof(text), "%sprivileges = [\"ext:billing:write\", "
             "\"ext:control:write\", \"ext:billing:read\"]\n", head);
    ok(text);
    assert_int_equal(man.nprivileges, 3);
    assert_str(man.privileges[0], "ext:billing:write");
    assert_str(man.privileges[2], "ext:billing:read");

    snprintf(text, sizeof(text), "%sprivileges = {}\n", head);
    assert_int_equal(parse(text), -1);
    assert_string_equal(err, "extension.privileges: must be an array of "
                        "strings");

    snprintf(text, sizeof(text), "%sprivileges = [\"ext:billing:read\", "
             "[\"x\"]]\n", head);
    assert_int_equal(parse(text), -1);
    assert_string_equal(err, "extension.privileges[1]: must be a string");

    snprintf(text, sizeof(text), "%sprivileges = [\"EXT:BILLING:READ\"]\n",
             head);
    assert_int_equal(parse(text), -1);
    assert_string_equal(err, "extension.privileges[0]: must be one of "
                        "ext:billing:read, ext:billing:write, "
                        "ext:control:write");

    snprintf(text, sizeof(text), "%sprivileges = [\"ext:billing:read \"]\n",
             head);
    assert_int_equal(parse(text), -1);

    snprintf(text, sizeof(text), "%sprivileges = [\"ext:control:write\", "
             "\"ext:control:write\"]\n", head);
    assert_int_equal(parse(text), -1);
    assert_string_equal(err, "extension.privileges[1]: duplicate of [0]");

    snprintf(text, sizeof(text), "%sprivileges = [1,2,3,4,5,6,7,8,9]\n",
             head);
    assert_int_equal(parse(text), -1);
    assert_string_equal(err, "extension.privileges: at most 8");
}


static void
test_config_fields(void **state)
{
    const cms_manifest_field_t  *f;

    (void) state;

    ok("[extension]\nname = \"a\"\nversion = \"1\"\ncategory = \"c\"\n"
       "required_privilege = \"r\"\nprivileges = []\n"
       "[extension.config]\n"
       "s = { type = \"string\" }\n"
       "n_int = { type = \"number\", default = -3 }\n"
       "n_float = { type = \"number\", default = 2.5, required = false }\n"
       "b = { type = \"boolean\", required = true, default = false }\n"
       "k = { type = \"secret\", required = true }\n");

    assert_int_equal(man.nfields, 5);

    f = cms_manifest_field(&man, "s", 1);
    assert_non_null(f);
    assert_int_equal(f->type, CMS_MANIFEST_STRING);
    assert_int_equal(f->required, 0);
    assert_int_equal(f->has_default, 0);

    f = cms_manifest_field(&man, "n_int", 5);
    assert_int_equal(f->def->type, CMS_TOML_INTEGER);
    assert_true(f->def->integer == -3);

    f = cms_manifest_field(&man, "n_float", 7);
    assert_int_equal(f->def->type, CMS_TOML_FLOAT);
    assert_true(f->def->number == 2.5);

    f = cms_manifest_field(&man, "b", 1);
    assert_int_equal(f->type, CMS_MANIFEST_BOOLEAN);
    assert_int_equal(f->required, 1);
    assert_int_equal(f->has_default, 1);
    assert_int_equal(f->def->boolean, 0);

    f = cms_manifest_field(&man, "k", 1);
    assert_int_equal(f->type, CMS_MANIFEST_SECRET);
    assert_ptr_equal(f, &man.fields[4]);

    assert_null(cms_manifest_field(&man, "kk", 2));
    assert_null(cms_manifest_field(&man, "n_in", 4));
    assert_null(cms_manifest_field(&man, "", 0));

    /* an empty [extension.config] declares no fields */
    ok("[extension]\nname = \"a\"\nversion = \"1\"\ncategory = \"c\"\n"
       "required_privilege = \"r\"\nprivileges = []\n[extension.config]\n");
    assert_int_equal(man.nfields, 0);

    assert_string_equal(cms_manifest_type_name(CMS_MANIFEST_STRING),
                        "string");
    assert_string_equal(cms_manifest_type_name(CMS_MANIFEST_SECRET),
                        "secret");
    assert_string_equal(cms_manifest_type_name(CMS_MANIFEST_NUMBER),
                        "number");
    assert_string_equal(cms_manifest_type_name(CMS_MANIFEST_BOOLEAN),
                        "boolean");
    assert_string_equal(cms_manifest_type_name((cms_manifest_type_e) 0), "?");
    assert_string_equal(cms_manifest_type_name((cms_manifest_type_e) 5), "?");
}


static void
test_config_errors(void **state)
{
    (void) state;

    bad("[extension.config.x]\n",
        "extension.config.x.type: required");
    bad("[extension.config.x]\ntype = \"String\"\n",
        "extension.config.x.type: must be one of string, secret, number, "
        "boolean");
    bad("[extension.config.x]\ntype = [\"string\"]\n",
        "extension.config.x.type: must be one of string, secret, number, "
        "boolean");
    bad("[extension.config.x]\ntype = \"string\"\nrequired = 1\n",
        "extension.config.x.required: must be true or false");
    bad("[extension.config.x]\ntype = \"secret\"\ndefault = \"\"\n",
        "extension.config.x.default: not allowed for a secret field");
    bad("[extension.config.x]\ntype = \"string\"\ndefault = 1\n",
        "extension.config.x.default: must be a string (the field's type)");
    bad("[extension.config.x]\ntype = \"number\"\ndefault = \"1\"\n",
        "extension.config.x.default: must be a number (the field's type)");
    bad("[extension.config.x]\ntype = \"number\"\ndefault = true\n",
        "extension.config.x.default: must be a number (the field's type)");
    bad("[extension.config.x]\ntype = \"boolean\"\ndefault = 0\n",
        "extension.config.x.default: must be a boolean (the field's type)");
    bad("[extension.config.x]\ntype = \"string\"\ndefault = [\"a\"]\n",
        "extension.config.x.default: must be a string (the field's type)");
    bad("[extension.config.x]\ntype = \"string\"\nlabel = \"X\"\n",
        "unknown key extension.config.x.label");
    bad("[extension.config]\nx = 1\n",
        "extension.config.x: must be a table");
    bad("[extension.config]\nX = {}\n",
        "extension.config.X: field names must match [a-z0-9_]{1,64}");
    bad("[extension.config]\nfield-1 = {}\n",
        "extension.config.field-1: field names must match [a-z0-9_]{1,64}");
    bad("[extension.config]\n\"a b\" = {}\n",
        "extension.config.\"a b\": field names must match [a-z0-9_]{1,64}");
    bad("[extension.config]\n\"\" = {}\n",
        "extension.config.\"\": field names must match [a-z0-9_]{1,64}");
    bad("[extension.config]\n"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        " = {}\n",
        "extension.config.\""
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "...\": field names must match [a-z0-9_]{1,64}");
    bad("config = 3\n", "extension.config: must be a table");
    bad("config = []\n", "extension.config: must be a table");
}


static void
test_unknown_keys(void **state)
{
    (void) state;

    bad("foo = 1\n", "unknown key extension.foo");
    bad("Name = \"x\"\n", "unknown key extension.Name");
    bad("\"we\\\"ird\\n\" = 1\n", "unknown key extension.\"we\\x22ird\\x0a\"");
    bad("\"\xc3\xa9\" = 1\n", "unknown key extension.\"\\xc3\\xa9\"");
    bad("\"\" = 1\n", "unknown key extension.\"\"");
    bad("[extension2]\n", "unknown key extension2");
    bad("[extension.config.x]\ntype = \"string\"\n[other]\n",
        "unknown key other");

    /* a long key is cut in the message, which stays within the buffer */
    bad("\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        " \" = 1\n",
        "unknown key extension.\""
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "...\"");

    /* a key before [extension] is a root key */
    assert_int_equal(parse("top = 1\n[extension]\n"), -1);
    assert_string_equal(err, "unknown key top");
}


static void
test_toml_errors(void **state)
{
    (void) state;

    bad("name = \"again\"\n", "line 7, column 1: duplicate key \"name\"");
    bad("x = \"\\q\"\n", "line 7, column 6: invalid escape sequence");
    bad("[[extension.config]]\n",
        "line 7, column 1: unsupported: arrays of tables ([[...]])");
}


static void
test_err_buffer(void **state)
{
    int     rc;
    char    small[8];
    size_t  size;

    (void) state;

    size = cms_manifest_arena_size(2);
    free(arena);
    arena = malloc(size);
    assert_non_null(arena);

    memset(small, 'E', sizeof(small));
    rc = cms_manifest_parse("x", 1, arena, size, &man, small, sizeof(small));
    assert_int_equal(rc, -1);
    assert_string_equal(small, "line 1,");

    memset(small, 'E', sizeof(small));
    rc = cms_manifest_parse("", 0, arena, size, &man, small, sizeof(small));
    assert_int_equal(rc, -1);
    assert_string_equal(small, "extensi");

    small[0] = 'E';
    rc = cms_manifest_parse("", 0, arena, size, &man, small, 1);
    assert_int_equal(rc, -1);
    assert_int_equal(small[0], '\0');

    rc = cms_manifest_parse("", 0, arena, size, &man, NULL, 0);
    assert_int_equal(rc, -1);
    rc = cms_manifest_parse("", 0, arena, size, &man, small, 0);
    assert_int_equal(rc, -1);
    rc = cms_manifest_parse("x", 1, arena, size, &man, NULL, 0);
    assert_int_equal(rc, -1);

    /* out of arena is a clean failure */
    rc = cms_manifest_parse(base, strlen(base), arena, size, &man, err,
                            sizeof(err));
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, "arena too small"));
}


/* --- the corpus ----------------------------------------------------------- */

static size_t
run_corpus(const char *dir, int expect_ok)
{
    DIR            *d;
    char            path[1024], expect[256], *text, *nl;
    size_t          n, len, elen;
    struct dirent  *e;

    d = opendir(dir);
    if (d == NULL) {
        fail_msg("cannot open %s (run from the repository root)", dir);
    }

    n = 0;

    while ((e = readdir(d)) != NULL) {
        len = strlen(e->d_name);

        if (len < 6 || strcmp(e->d_name + len - 5, ".toml") != 0) {
            continue;
        }

        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        text = read_file(path, &len);
        n++;

        if (expect_ok) {
            if (parse_into(text, len, &man, &arena) != 0) {
                fail_msg("%s: %s", path, err);
            }

            free(text);
            continue;
        }

        nl = memchr(text, '\n', len);

        if (nl == NULL || memcmp(text, "# expect: ", 10) != 0) {
            fail_msg("%s: the first line must be \"# expect: ...\"", path);
        }

        elen = (size_t) (nl - text) - 10;
        assert_true(elen > 0 && elen < sizeof(expect));
        memcpy(expect, text + 10, elen);
        expect[elen] = '\0';

        if (parse_into(text, len, &man, &arena) == 0) {
            fail_msg("%s: parsed, expected \"%s\"", path, expect);
        }

        if (strstr(err, expect) == NULL) {
            fail_msg("%s: got \"%s\", expected \"%s\"", path, err, expect);
        }

        free(text);
    }

    closedir(d);

    return n;
}


static void
test_corpus(void **state)
{
    size_t  n;

    (void) state;

    n = run_corpus(CORPUS_BAD, 0);
    if (n < CORPUS_MIN_BAD) {
        fail_msg("%s: %zu files, want at least %d", CORPUS_BAD, n,
                 CORPUS_MIN_BAD);
    }

    n = run_corpus(CORPUS_GOOD, 1);
    assert_true(n >= 5);
}


static int
teardown(void **state)
{
    (void) state;

    free(arena);
    free(arena2);
    arena = NULL;
    arena2 = NULL;

    return 0;
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_sample),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_required_keys),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_privileges),
        cmocka_unit_test(test_config_fields),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_unknown_keys),
        cmocka_unit_test(test_toml_errors),
        cmocka_unit_test(test_err_buffer),
        cmocka_unit_test(test_corpus),
    };

    return cmocka_run_group_tests(tests, NULL, teardown);
}
