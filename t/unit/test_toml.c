
/*
 * Unit tests for cms_toml.c: every supported construct, every error class
 * with its message and position, the limits, and the arena bound.
 *
 * Every parse reads an exactly-sized heap copy of the text into an
 * exactly-sized heap arena, so ASAN catches a read or write past either.
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cms_toml.h"


static void              *arena;        /* of the last parse */
static cms_toml_error_t   err;
static char               msg[256];     /* err, formatted */


static cms_toml_node_t *
parse_n(const char *s, size_t len, size_t arena_size, int *rc)
{
    char             *text;
    cms_toml_node_t  *root;

    free(arena);
    arena = malloc(arena_size ? arena_size : 1);
    assert_non_null(arena);

    text = malloc(len ? len : 1);
    assert_non_null(text);
    memcpy(text, s, len);

    root = (cms_toml_node_t *) (uintptr_t) 1;
    *rc = cms_toml_parse(text, len, arena, arena_size, &root, &err);

    /* the tree must not point into the text */
    memset(text, 'X', len);
    free(text);

    cms_toml_error_format(&err, msg, sizeof(msg));

    if (*rc == 0) {
        assert_non_null(root);

    } else {
        assert_int_equal(*rc, -1);
        assert_null(root);
        assert_non_null(err.msg);
        assert_true(msg[0] != '\0');
    }

    return root;
}


/* parses s (which must be valid) with the documented arena size */

static cms_toml_node_t *
ok(const char *s)
{
    int               rc;
    size_t            len;
    cms_toml_node_t  *root;

    len = strlen(s);
    root = parse_n(s, len, cms_toml_arena_size(len), &rc);

    if (rc != 0) {
        fail_msg("unexpected error for <%s>: %s", s, msg);
    }

    assert_int_equal(root->type, CMS_TOML_TABLE);

    return root;
}


/* s must fail with a message containing expect */

static void
bad_n(const char *s, size_t len, const char *expect)
{
    int  rc;

    (void) parse_n(s, len, cms_toml_arena_size(len), &rc);

    if (rc == 0) {
        fail_msg("<%.*s> parsed, expected \"%s\"", (int) len, s, expect);
    }

    if (strstr(msg, expect) == NULL) {
        fail_msg("<%.*s>: got \"%s\", expected \"%s\"", (int) len, s, msg,
                 expect);
    }
}


static void
bad(const char *s, const char *expect)
{
    bad_n(s, strlen(s), expect);
}


/* the node at a dotted path of plain keys */

static cms_toml_node_t *
at(cms_toml_node_t *t, const char *path)
{
    char         key[64];
    const char  *dot;

    for ( ;; ) {
        dot = strchr(path, '.');

        if (dot == NULL) {
            return cms_toml_get(t, path);
        }

        assert_true((size_t) (dot - path) < sizeof(key));
        memcpy(key, path, dot - path);
        key[dot - path] = '\0';

        t = cms_toml_get(t, key);
        assert_non_null(t);
        path = dot + 1;
    }
}


static void
assert_str(cms_toml_node_t *n, const char *s)
{
    assert_non_null(n);
    assert_int_equal(n->type, CMS_TOML_STRING);
    assert_int_equal(n->str_len, strlen(s));
    assert_memory_equal(n->str, s, n->str_len);
    assert_int_equal(n->str[n->str_len], '\0');
}


static void
assert_int(cms_toml_node_t *n, int64_t v)
{
    assert_non_null(n);
    assert_int_equal(n->type, CMS_TOML_INTEGER);
    assert_true(n->integer == v);
}


static void
assert_float(cms_toml_node_t *n, double v)
{
    assert_non_null(n);
    assert_int_equal(n->type, CMS_TOML_FLOAT);
    assert_true(n->number == v);
}


static void
test_empty_and_comments(void **state)
{
    cms_toml_node_t  *r;

    (void) state;

    r = ok("");
    assert_int_equal(r->count, 0);
    assert_null(r->child);
    assert_null(r->key);

    r = ok("# only a comment");
    assert_int_equal(r->count, 0);

    r = ok("\n\n   \t\n# c1\n  # c2 \"x\" [y] = é\r\n\n");
    assert_int_equal(r->count, 0);

    r = ok("\xef\xbb\xbf" "a = 1 # trailing comment\n");
    assert_int(at(r, "a"), 1);

    r = ok("a = 1\r\nb = 2\r\n");
    assert_int(at(r, "b"), 2);
}


static void
test_keys(void **state)
{
    cms_toml_node_t  *r, *n;

    (void) state;

    r = ok("bare_key-1 = 1\n"
           "1234 = 2\n"
           "\"quoted key\" = 3\n"
           "\"esc\\u00e9\\\"\" = 4\n"
           "'lit\\eral' = 5\n"
           "\"\" = 6\n"
           "  spaced\t=\t7  \n");

    assert_int(at(r, "bare_key-1"), 1);
    assert_int(at(r, "1234"), 2);
    assert_int(at(r, "quoted key"), 3);
    assert_int(cms_toml_get(r, "esc\xc3\xa9\""), 4);
    assert_int(cms_toml_get(r, "lit\\eral"), 5);
    assert_int(cms_toml_get(r, ""), 6);
    assert_int(at(r, "spaced"), 7);
    assert_int_equal(r->count, 7);

    /* document order, keys NUL-terminated */
    n = r->child;
    assert_string_equal(n->key, "bare_key-1");
    assert_int_equal(n->key_len, 10);
    assert_string_equal(n->next->key, "1234");
    n = n->next->next->next->next->next->next;
    assert_string_equal(n->key, "spaced");
    assert_null(n->next);

    r = ok("a.b.c = 1\n"
           "a . b . d = 2\n"
           "a.\"x.y\" = 3\n"
           "site.'google.com' = true\n");
    assert_int(at(r, "a.b.c"), 1);
    assert_int(at(r, "a.b.d"), 2);
    assert_int(cms_toml_get(at(r, "a"), "x.y"), 3);
    assert_int_equal(at(r, "a.b")->type, CMS_TOML_TABLE);
    assert_int_equal(at(r, "a.b")->count, 2);
    assert_int_equal(cms_toml_get(at(r, "site"), "google.com")->type,
                     CMS_TOML_BOOLEAN);

    bad("= 1", "expected a key");
    bad("a b = 1", "expected '=' after the key");
    bad("a", "expected '=' after the key");
    bad("a. = 1", "expected a key");
    bad("a.\n= 1", "expected a key");
    bad("k\u00e9y = 1", "expected '=' after the key");
    bad("a = ", "expected a value");
    bad("a = # nothing", "expected a value");
    bad("a = 1 2", "expected a newline after the value");
    bad("a = \"x\"y", "expected a newline after the value");
    bad("a = true.", "expected a newline after the value");
    bad("\"a\nb\" = 1", "unterminated string");
}


static void
test_tables(void **state)
{
    cms_toml_node_t  *r, *t;

    (void) state;

    r = ok("top = 0\n"
           "[server]\n"
           "host = \"h\"\n"
           "\n"
           "[server.tls]   # comment\n"
           "on = true\n"
           "[ \"quoted table\" . 'x' ]\n"
           "v = 1\n"
           "[a.b.c]\n"
           "d = 1\n"
           "[a]\n"
           "e = 2\n"
           "[a.b]\n"
           "f = 3\n"
           "[empty]\n");

    assert_int(at(r, "top"), 0);
    assert_str(at(r, "server.host"), "h");
    assert_int_equal(at(r, "server.tls.on")->boolean, 1);
    assert_int(cms_toml_get(cms_toml_get(r, "quoted table"), "x")->child, 1);
    assert_int(at(r, "a.b.c.d"), 1);
    assert_int(at(r, "a.e"), 2);
    assert_int(at(r, "a.b.f"), 3);

    t = at(r, "empty");
    assert_int_equal(t->type, CMS_TOML_TABLE);
    assert_int_equal(t->count, 0);

    /* sub-tables may be added under tables made by dotted keys */
    r = ok("[fruit]\napple.color = \"red\"\napple.taste.sweet = true\n"
           "[fruit.apple.texture]\nsmooth = true\n");
    assert_str(at(r, "fruit.apple.color"), "red");
    assert_int_equal(at(r, "fruit.apple.texture.smooth")->boolean, 1);

    bad("[a]\n[a]\n", "line 2, column 2: redefinition of table \"a\"");
    bad("[a.b]\n[a.b]\n", "redefinition of table \"b\"");
    bad("[a]\nb = 1\n[a.b]\n", "key \"b\" is a value, not a table");
    bad("a = 1\n[a]\n", "key \"a\" is a value, not a table");
    bad("a = [1]\n[a.b]\n", "key \"a\" is a value, not a table");
    bad("a.b = 1\n[a]\n", "redefinition of table \"a\"");
    bad("[fruit]\napple.color = 1\n[fruit.apple]\n",
        "redefinition of table \"apple\"");
    bad("[a.b]\nx = 1\n[a]\nb.y = 2\n",
        "table \"b\" comes from a [header], dotted keys cannot extend it");
    bad("[a.b.c]\n[a]\nb.d = 1\n", "table \"b\" comes from a [header]");
    bad("a = {}\n[a]\n", "inline table \"a\" cannot be extended");
    bad("a = {b = {}}\n[a.b.c]\n", "inline table \"a\" cannot be extended");
    bad("a = { b = 1 }\na.c = 2\n", "inline table \"a\" cannot be extended");
    bad("a.b = 1\na.b.c = 2\n", "key \"b\" is a value, not a table");
    bad("[a]\nb = 1\nb = 2\n", "line 3, column 1: duplicate key \"b\"");
    bad("[a.b.c]\n[a]\nb = 1\n", "duplicate key \"b\"");
    bad("a.b = 1\na.b = 2\n", "duplicate key \"b\"");
    bad("a = 1\n\"a\" = 2\n", "duplicate key \"a\"");
    bad("a = 1\n'a' = 2\n", "duplicate key \"a\"");
    bad("[]\n", "expected a key");
    bad("[a\n", "expected ']' after the table name");
    bad("[a] b = 1\n", "expected a newline after the table header");
    bad("[[a]]\n", "unsupported: arrays of tables");
}


static void
test_strings(void **state)
{
    cms_toml_node_t  *r;

    (void) state;

    r = ok("s1 = \"plain\"\n"
           "s2 = \"\"\n"
           "s3 = \"esc \\b\\t\\n\\f\\r\\\"\\\\ end\"\n"
           "s4 = \"\\u00e9\\u20AC\\U0001F600\\u0041\"\n"
           "s5 = 'C:\\path\\no escapes \"here\"'\n"
           "s6 = ''\n"
           "s7 = \"tab\there\"\n"
           "s8 = \"utf-8: \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"\n"
           "s9 = \"# not a comment\"\n");

    assert_str(at(r, "s1"), "plain");
    assert_str(at(r, "s2"), "");
    assert_str(at(r, "s3"), "esc \b\t\n\f\r\"\\ end");
    assert_str(at(r, "s4"), "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" "A");
    assert_str(at(r, "s5"), "C:\\path\\no escapes \"here\"");
    assert_str(at(r, "s6"), "");
    assert_str(at(r, "s7"), "tab\there");
    assert_str(at(r, "s8"), "utf-8: \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    assert_str(at(r, "s9"), "# not a comment");

    bad("s = \"abc", "line 1, column 5: unterminated string");
    bad("s = \"abc\ndef\"", "unterminated string");
    bad("s = 'abc", "unterminated string");
    bad("s = 'abc\n'", "unterminated string");
    bad("s = \"abc\\\"", "unterminated string");
    bad("s = \"a\\\nb\"", "unterminated string");
    bad("s = \"bad \\x41\"", "line 1, column 10: invalid escape sequence");
    bad("s = \"bad \\e\"", "invalid escape sequence");
    bad("s = \"bad \\ \"", "invalid escape sequence");
    bad("s = \"\\u12\"", "invalid unicode escape");
    bad("s = \"\\u12G4\"", "invalid unicode escape");
    bad("s = \"\\uD800\"", "invalid unicode escape");
    bad("s = \"\\U00110000\"", "invalid unicode escape");
    bad("s = \"\\U0000004\"", "invalid unicode escape");
    bad("s = \"\\u0000\"", "\\u0000 (NUL) is not allowed");
    bad("s = \"\"\"multi\nline\"\"\"", "unsupported: multi-line strings");
    bad("s = '''multi'''", "unsupported: multi-line strings");
    bad("s = \"ctl \x01\"", "control character");
    bad("s = \"del \x7f\"", "control character");
    bad("s = bare", "invalid value (strings must be quoted)");
    bad("s = yes", "strings must be quoted");
    bad("s = True", "strings must be quoted");
    bad("s = @", "expected a value");
}


static void
test_integers(void **state)
{
    cms_toml_node_t  *r;

    (void) state;

    r = ok("a = 0\nb = -0\nc = +17\nd = 1_000\ne = -42\n"
           "max = 9223372036854775807\nmin = -9223372036854775808\n"
           "f = 5_3_9\n");

    assert_int(at(r, "a"), 0);
    assert_int(at(r, "b"), 0);
    assert_int(at(r, "c"), 17);
    assert_int(at(r, "d"), 1000);
    assert_int(at(r, "e"), -42);
    assert_int(at(r, "max"), INT64_MAX);
    assert_int(at(r, "min"), INT64_MIN);
    assert_int(at(r, "f"), 539);

    bad("a = 9223372036854775808", "integer out of range");
    bad("a = -9223372036854775809", "integer out of range");
    bad("a = 99999999999999999999999", "integer out of range");
    bad("a = 01", "leading zeros are not allowed");
    bad("a = -007", "leading zeros are not allowed");
    bad("a = 0_1", "leading zeros are not allowed");
    bad("a = 1__0", "invalid number");
    bad("a = 1_", "invalid number");
    bad("a = _1", "expected a value");
    bad("a = +", "invalid number");
    bad("a = -", "invalid number");
    bad("a = +-1", "invalid number");
    bad("a = 12abc", "invalid number");
    bad("a = 0x1F", "unsupported: hexadecimal, octal and binary integers");
    bad("a = 0o17", "unsupported: hexadecimal");
    bad("a = 0b101", "unsupported: hexadecimal");
    bad("a = 1979-05-27", "unsupported: dates and times");
    bad("a = 1979-05-27T07:32:00Z", "unsupported: dates and times");
    bad("a = 1979-05-27 07:32:00", "unsupported: dates and times");
    bad("a = 07:32:00", "unsupported: dates and times");
    bad("a = 1111111111111111111111111111111111111111111111111111111111111"
        "111111111111111111111111111111111111111111111111111111111111111"
        "1111111", "number too long");
}


static void
test_floats(void **state)
{
    cms_toml_node_t  *r;

    (void) state;

    r = ok("a = 1.5\nb = -0.01\nc = 1e3\nd = 6.02e23\ne = 1E-2\n"
           "f = +1_0.2_5\ng = 0.5\nh = -0.0\ni = 5e+2_2\nj = 3.0e-05\n"
           "k = 1e-400\n");

    assert_float(at(r, "a"), 1.5);
    assert_float(at(r, "b"), -0.01);
    assert_float(at(r, "c"), 1000.0);
    assert_float(at(r, "d"), 6.02e23);
    assert_float(at(r, "e"), 0.01);
    assert_float(at(r, "f"), 10.25);
    assert_float(at(r, "g"), 0.5);
    assert_float(at(r, "h"), 0.0);
    assert_float(at(r, "i"), 5e22);
    assert_float(at(r, "j"), 3.0e-05);
    assert_float(at(r, "k"), 0.0);

    bad("a = 1.", "invalid number");
    bad("a = .5", "expected a value");
    bad("a = 1e", "invalid number");
    bad("a = 1.e5", "invalid number");
    bad("a = 1._5", "invalid number");
    bad("a = 1.2.3", "invalid number");
    bad("a = 00.5", "leading zeros are not allowed");
    bad("a = 1e400", "float out of range");
    bad("a = -1e400", "float out of range");
    bad("a = inf", "unsupported: inf and nan");
    bad("a = +inf", "unsupported: inf and nan");
    bad("a = -inf", "unsupported: inf and nan");
    bad("a = nan", "unsupported: inf and nan");
    bad("a = -nan", "unsupported: inf and nan");
}


static void
test_booleans(void **state)
{
    cms_toml_node_t  *r;

    (void) state;

    r = ok("t = true\nf = false\n");
    assert_int_equal(at(r, "t")->type, CMS_TOML_BOOLEAN);
    assert_int_equal(at(r, "t")->boolean, 1);
    assert_int_equal(at(r, "f")->type, CMS_TOML_BOOLEAN);
    assert_int_equal(at(r, "f")->boolean, 0);

    bad("t = truee", "strings must be quoted");
    bad("t = TRUE", "strings must be quoted");
}


static void
test_arrays(void **state)
{
    cms_toml_node_t  *r, *a, *e;

    (void) state;

    r = ok("a = [1, 2, 3]\n"
           "b = []\n"
           "c = [ \"x\", 1.5, true, [1, [2]], {k = 'v'}, ]\n"
           "d = [\n"
           "  1,   # one\n"
           "  # a comment line\n"
           "\n"
           "  2\n"
           "]\n"
           "e = [\r\n  \"crlf\",\r\n]\n");

    a = at(r, "a");
    assert_int_equal(a->type, CMS_TOML_ARRAY);
    assert_int_equal(a->count, 3);
    assert_int(a->child, 1);
    assert_int(a->child->next->next, 3);
    assert_null(a->child->key);
    assert_null(a->child->next->next->next);

    assert_int_equal(at(r, "b")->type, CMS_TOML_ARRAY);
    assert_int_equal(at(r, "b")->count, 0);

    a = at(r, "c");
    assert_int_equal(a->count, 5);
    e = a->child;
    assert_str(e, "x");
    assert_float(e->next, 1.5);
    assert_int_equal(e->next->next->type, CMS_TOML_BOOLEAN);
    e = e->next->next->next;
    assert_int_equal(e->type, CMS_TOML_ARRAY);
    assert_int_equal(e->child->next->type, CMS_TOML_ARRAY);
    assert_int(e->child->next->child, 2);
    assert_str(cms_toml_get(e->next, "k"), "v");

    assert_int_equal(at(r, "d")->count, 2);
    assert_str(at(r, "e")->child, "crlf");

    /* cms_toml_get() only looks into tables */
    assert_null(cms_toml_get(at(r, "a"), "x"));

    bad("a = [1, 2", "line 1, column 5: unterminated array");
    bad("a = [1 2]", "expected ',' or ']' in array");
    bad("a = [,]", "expected a value");
    bad("a = [1,,2]", "expected a value");
    bad("a = [1,\n", "unterminated array");
    bad("a = [\"x\" # c ]", "unterminated array");
    bad("a = [[]] ]", "expected a newline after the value");
}


static void
test_inline_tables(void **state)
{
    cms_toml_node_t  *r, *t;

    (void) state;

    r = ok("p = { x = 1, y = \"two\", z.w = true }\n"
           "e = {}\n"
           "e2 = { }\n"
           "n = { a = { b = { c = 1 } }, l = [ {q = 1} ] }\n"
           "d = { a.b = 1, a.c = 2 }\n");

    t = at(r, "p");
    assert_int_equal(t->type, CMS_TOML_TABLE);
    assert_int_equal(t->count, 3);
    assert_int(cms_toml_get(t, "x"), 1);
    assert_str(cms_toml_get(t, "y"), "two");
    assert_int_equal(at(r, "p.z.w")->boolean, 1);
    assert_int_equal(at(r, "e")->count, 0);
    assert_int_equal(at(r, "e2")->count, 0);
    assert_int(at(r, "n.a.b.c"), 1);
    assert_int(at(r, "n.l")->child->child, 1);
    assert_int(at(r, "d.a.c"), 2);

    bad("p = { x = 1, }", "trailing comma in inline table");
    bad("p = { x = 1,\n y = 2 }", "unterminated inline table");
    bad("p = {\n}", "unterminated inline table");
    bad("p = { x = 1", "unterminated inline table");
    bad("p = { x = 1 y = 2 }", "expected ',' or '}' in inline table");
    bad("p = { x = 1, x = 2 }", "duplicate key \"x\"");
    bad("p = { a = {}, a.b = 1 }", "inline table \"a\" cannot be extended");
    bad("p = { , }", "expected a key");
}


static void
test_text_checks(void **state)
{
    (void) state;

    bad_n("a = 1\n\0", 7, "line 2, column 1: NUL byte");
    bad_n("a = \"x\0y\"", 9, "NUL byte");
    bad("a = \"\xff\"", "line 1, column 6: invalid UTF-8");
    bad("a = \"\xc3\"", "invalid UTF-8");
    bad("a = \"\xc0\xaf\"", "invalid UTF-8");           /* overlong */
    bad("a = \"\xe0\x80\xaf\"", "invalid UTF-8");       /* overlong */
    bad("a = \"\xed\xa0\x80\"", "invalid UTF-8");       /* surrogate */
    bad("a = \"\xf4\x90\x80\x80\"", "invalid UTF-8");   /* > U+10FFFF */
    bad("a = \"\xf0\x9f\x98\"", "invalid UTF-8");       /* truncated */
    bad("# \x80 in a comment\n", "invalid UTF-8");
    bad("a = 1\rb = 2", "carriage return without line feed");
    bad("a = 1\r", "carriage return without line feed");
    bad("a = 1\x0b", "control character");
    bad("# bell \x07\n", "control character");
    bad("a = 1\x1b[0m", "control character");
}


static void
test_positions(void **state)
{
    char  buf[16];

    (void) state;

    bad("a = 1\n\n  b = 2\n  b = 3\n", "line 4, column 3: duplicate key");

    /* columns count characters, not bytes */
    bad("\"\xc3\xa9\xc3\xa9\" = 1 2\n", "line 1, column 10: expected a new");

    bad("name = 1\nname = 2\n", "");
    assert_string_equal(msg, "line 2, column 1: duplicate key \"name\"");
    assert_int_equal(err.line, 2);
    assert_int_equal(err.column, 1);
    assert_string_equal(err.key, "name");
    assert_string_equal(err.msg, "duplicate key %k");

    /* truncation always leaves a terminated string */
    assert_int_equal(cms_toml_error_format(&err, buf, sizeof(buf)), 15);
    assert_string_equal(buf, "line 2, column ");
    assert_int_equal(cms_toml_error_format(&err, buf, 1), 0);
    assert_string_equal(buf, "");
    assert_int_equal(cms_toml_error_format(&err, NULL, 0), 0);

    /* keys are shown escaped and cut */
    bad("\"a\\\"b\\n\" = 1\n\"a\\\"b\\n\" = 2\n",
        "duplicate key \"a\\x22b\\x0a\"");

    bad("\"0123456789012345678901234567890123456789"
        "0123456789012345678901234567890123456789\" = 1\n"
        "\"0123456789012345678901234567890123456789"
        "0123456789012345678901234567890123456789\" = 2\n",
        "duplicate key \"0123456789012345678901234567890123456789"
        "012345678901234567890...\"");
    assert_true(strlen(err.key) <= CMS_TOML_ERR_KEY_MAX);
}


static void
test_depth(void **state)
{
    int     i;
    char    buf[512];
    size_t  n;

    (void) state;

    /* 16 nested arrays below the root pass, 17 fail */
    n = (size_t) sprintf(buf, "a = ");
    for (i = 0; i < 16; i++) {
        buf[n++] = '[';
    }
    for (i = 0; i < 16; i++) {
        buf[n++] = ']';
    }
    buf[n] = '\0';
    ok(buf);

    n = (size_t) sprintf(buf, "a = ");
    for (i = 0; i < 17; i++) {
        buf[n++] = '[';
    }
    for (i = 0; i < 17; i++) {
        buf[n++] = ']';
    }
    buf[n] = '\0';
    bad(buf, "nesting too deep (over 16 levels)");

    /* 16 header levels pass, 17 fail */
    ok("[a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p]\nx = 1\n");
    bad("[a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q]\n", "nesting too deep");
    bad("[a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t]\n", "nesting too deep");

    /* dotted keys: 16 tables and a scalar; a 17th table fails */
    ok("a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q = 1\n");
    bad("a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r = 1\n", "nesting too deep");
    ok("[a.b.c.d.e.f.g.h]\ni.j.k.l.m.n.o.p.q = 1\n");
    bad("[a.b.c.d.e.f.g.h]\ni.j.k.l.m.n.o.p.q = []\n", "nesting too deep");
    bad("[a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p]\nx = {}\n", "nesting too deep");
    ok("[a.b.c.d.e.f.g.h.i.j.k.l.m.n.o]\nx = {y = 1}\n");

    /* inline tables and arrays mixed: 16 levels, then 17 */
    ok("a=[{b=[{c=[{d=[{e=[{f=[{g=[{h=[{i=1}]}]}]}]}]}]}]}]");
    bad("a=[{b=[{c=[{d=[{e=[{f=[{g=[{h=[{i=[1]}]}]}]}]}]}]}]}]",
        "nesting too deep");
}


static void
test_size_limits(void **state)
{
    int     rc;
    char   *s;
    size_t  i, n;

    (void) state;

    /* exactly CMS_TOML_MAX_INPUT bytes of comments pass; one more fails */
    n = CMS_TOML_MAX_INPUT + 1;
    s = malloc(n);
    assert_non_null(s);

    for (i = 0; i < n; i++) {
        s[i] = (i % 64 == 0) ? '#' : (i % 64 == 63) ? '\n' : 'x';
    }

    (void) parse_n(s, n - 1, cms_toml_arena_size(n - 1), &rc);
    assert_int_equal(rc, 0);

    bad_n(s, n, "input too large (over 65536 bytes)");
    assert_int_equal(err.line, 0);
    assert_string_equal(msg, "input too large (over 65536 bytes)");

    free(s);
}


static void
test_value_limit(void **state)
{
    char    *s;
    size_t   i, n;

    (void) state;

    /* 1023 elements + the array = 1024 values pass, one more fails */
    s = malloc(8 + 2 * 1025);
    assert_non_null(s);

    n = (size_t) sprintf(s, "a = [");
    for (i = 0; i < 1023; i++) {
        s[n++] = '1';
        s[n++] = ',';
    }
    s[n++] = ']';
    s[n] = '\0';

    assert_int_equal(at(ok(s), "a")->count, 1023);

    n = (size_t) sprintf(s, "a = [");
    for (i = 0; i < 1024; i++) {
        s[n++] = '1';
        s[n++] = ',';
    }
    s[n++] = ']';
    s[n] = '\0';

    bad(s, "too many values (over 1024)");

    free(s);
}


/*
 * Every arena size up to the documented one either succeeds or fails
 * with "arena too small", never overflows (ASAN), and the documented size
 * always succeeds, for texts that each stress one kind of allocation.
 */

static void
test_arena(void **state)
{
    int               rc;
    size_t            i, len, size, need;
    cms_toml_node_t  *root;
    const char       *texts[] = {
        "",
        "a=1",
        "[a.b.c.d]\n[a.b.e]\n",
        "a.b.c.d.e=[[],[],{},{x={}}]",
        "\"k\\u00e9\"=\"\\U0001F600\\t\"\n'l'='lit'\nb=[\"\",'',\"x\"]",
        "x=[1,2,3,4,5,6,7,8,9,1,2,3,4,5,6,7,8,9]",
        "[\"a\".\"b\".\"c\"]\n[\"a\".\"b\".\"d\"]\n['a'.'b'.'e']\n",
    };

    (void) state;

    for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        len = strlen(texts[i]);
        need = cms_toml_arena_size(len);

        for (size = 0; size <= need; size++) {
            (void) parse_n(texts[i], len, size, &rc);

            if (rc != 0) {
                assert_string_equal(err.msg, "arena too small");
            }
        }

        assert_int_equal(rc, 0);
    }

    /* the bound itself */
    assert_true(cms_toml_arena_size(0) >= sizeof(cms_toml_node_t));
    assert_true(cms_toml_arena_size(100000)
                == cms_toml_arena_size(CMS_TOML_MAX_INPUT));
    assert_true(cms_toml_arena_size(CMS_TOML_MAX_INPUT)
                < 1025 * sizeof(cms_toml_node_t) + CMS_TOML_MAX_INPUT + 2048);

    /* a NULL arena fails cleanly */
    assert_int_equal(cms_toml_parse("a=1", 3, NULL, 0, &root, &err), -1);
    assert_null(root);
    assert_string_equal(err.msg, "arena too small");
}


static void
test_api(void **state)
{
    cms_toml_node_t  *r, *n;
    size_t            count;

    (void) state;

    r = ok("[t]\nb = 1\na = 2\nc = 3\n");

    assert_null(cms_toml_get(NULL, "a"));
    assert_null(cms_toml_get(r, "b"));
    assert_null(cms_toml_get(at(r, "t.b"), "b"));
    assert_int(cms_toml_get_n(at(r, "t"), "abc", 1), 2);

    count = 0;
    for (n = at(r, "t")->child; n != NULL; n = n->next) {
        count++;
    }
    assert_int_equal(count, 3);
    assert_string_equal(at(r, "t")->child->key, "b");

    assert_string_equal(cms_toml_type_name(CMS_TOML_TABLE), "table");
    assert_string_equal(cms_toml_type_name(CMS_TOML_ARRAY), "array");
    assert_string_equal(cms_toml_type_name(CMS_TOML_STRING), "string");
    assert_string_equal(cms_toml_type_name(CMS_TOML_INTEGER), "integer");
    assert_string_equal(cms_toml_type_name(CMS_TOML_FLOAT), "float");
    assert_string_equal(cms_toml_type_name(CMS_TOML_BOOLEAN), "boolean");
    assert_string_equal(cms_toml_type_name((cms_toml_type_e) 99), "?");

    /* a NULL err is allowed */
    arena = realloc(arena, cms_toml_arena_size(2));
    assert_int_equal(cms_toml_parse("a=", 2, arena, cms_toml_arena_size(2),
                                    &r, NULL), -1);

    /* a NULL text is an empty document */
    arena = realloc(arena, cms_toml_arena_size(0));
    assert_int_equal(cms_toml_parse(NULL, 0, arena, cms_toml_arena_size(0),
                                    &r, &err), 0);
    assert_int_equal(r->count, 0);
}


static int
teardown(void **state)
{
    (void) state;

    free(arena);
    arena = NULL;

    return 0;
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_empty_and_comments),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_floats),
        cmocka_unit_test(test_booleans),
        cmocka_unit_test(test_arrays),
        cmocka_unit_test(test_inline_tables),
        cmocka_unit_test(test_text_checks),
        cmocka_unit_test(test_positions),
        cmocka_unit_test(test_depth),
        cmocka_unit_test(test_size_limits),
        cmocka_unit_test(test_value_limit),
        cmocka_unit_test(test_arena),
        cmocka_unit_test(test_api),
    };

    return cmocka_run_group_tests(tests, NULL, teardown);
}
