/* cmocka tests for cms_url: the strict http(s) URL parser and rebuilder. */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cms_url.h"


#define FETCH  (CMS_URL_HTTPS | CMS_URL_NO_IDN)
#define SHOW   (CMS_URL_HTTP | CMS_URL_HTTPS | CMS_URL_FRAGMENT)


static int
parse(const char *s, unsigned flags)
{
    cms_url_t  u;

    return cms_url_parse(s, strlen(s), flags, &u);
}


/* the URL rebuilt from its parts (fragment kept when flags allow it) */
static const char *
rebuilt(const char *s, unsigned flags)
{
    cms_url_t    u;
    static char  out[CMS_URL_BUILD_SIZE(CMS_URL_MAX)];

    if (cms_url_parse(s, strlen(s), flags, &u) != CMS_URL_OK) {
        return "(refused)";
    }

    if (cms_url_build(s, &u, flags, out, CMS_URL_BUILD_SIZE(strlen(s)))
        == 0)
    {
        return "(no room)";
    }

    return out;
}


static const char *
authority(const char *s, unsigned flags)
{
    cms_url_t    u;
    static char  out[CMS_URL_AUTHORITY_SIZE];

    if (cms_url_parse(s, strlen(s), flags, &u) != CMS_URL_OK
        || cms_url_authority(s, &u, out, sizeof(out)) == 0)
    {
        return "(refused)";
    }

    return out;
}


static void
test_good(void **state)
{
    (void) state;

    assert_int_equal(parse("https://registry.example.com/a.toml", FETCH),
                     CMS_URL_OK);
    assert_int_equal(parse("https://registry.example.com", FETCH),
                     CMS_URL_OK);
    assert_int_equal(parse("https://r.example.com:8443/a/b?x=1&y=%2F", FETCH),
                     CMS_URL_OK);
    assert_int_equal(parse("HTTPS://Registry.Example.COM/A", FETCH),
                     CMS_URL_OK);
    assert_int_equal(parse("https://127.0.0.1:65535/x", FETCH), CMS_URL_OK);
    assert_int_equal(parse("https://0.0.0.0/", FETCH), CMS_URL_OK);
    assert_int_equal(parse("https://[::1]:8443/x", FETCH), CMS_URL_OK);
    assert_int_equal(parse("https://[2001:db8::1]/", FETCH), CMS_URL_OK);
    assert_int_equal(parse("https://[::ffff:192.0.2.1]/", FETCH), CMS_URL_OK);
    assert_int_equal(parse("https://[1:2:3:4:5:6:7:8]/", FETCH), CMS_URL_OK);
    assert_int_equal(parse("https://[1:2:3:4:5:6:1.2.3.4]/", FETCH),
                     CMS_URL_OK);
    assert_int_equal(parse("https://[::]/", FETCH), CMS_URL_OK);
    assert_int_equal(parse("https://[1::]/", FETCH), CMS_URL_OK);
    assert_int_equal(parse("https://localhost/x", FETCH), CMS_URL_OK);
    assert_int_equal(parse("https://a-b.c0.example/x", FETCH), CMS_URL_OK);
    assert_int_equal(parse("https://1e100.net/", FETCH), CMS_URL_OK);
    assert_int_equal(parse("https://h.example/p:@!$&'()*+,;=-._~%aF", FETCH),
                     CMS_URL_OK);
    assert_int_equal(parse("https://h.example/?a=/?:@", FETCH), CMS_URL_OK);
    assert_int_equal(parse("https://h.example?q", FETCH), CMS_URL_OK);
    assert_int_equal(parse("https://h.example/x%0d%0aSet:%20y", FETCH),
                     CMS_URL_OK);
    assert_int_equal(parse("http://cdn.example.com/a.png#top", SHOW),
                     CMS_URL_OK);
    assert_int_equal(parse("https://xn--bcher-kva.example/", SHOW),
                     CMS_URL_OK);
}


static void
test_scheme(void **state)
{
    (void) state;

    assert_int_equal(parse("http://h.example/", FETCH), CMS_URL_E_SCHEME);
    assert_int_equal(parse("http://h.example/", CMS_URL_HTTP), CMS_URL_OK);
    assert_int_equal(parse("https://h.example/", CMS_URL_HTTP),
                     CMS_URL_E_SCHEME);
    assert_int_equal(parse("https://h.example/", 0), CMS_URL_E_SCHEME);
    assert_int_equal(parse("javascript:alert(1)", SHOW), CMS_URL_E_SCHEME);
    assert_int_equal(parse("JaVaScRiPt:alert(1)//https://x", SHOW),
                     CMS_URL_E_SCHEME);
    assert_int_equal(parse("data:image/png;base64,AAAA", SHOW),
                     CMS_URL_E_SCHEME);
    assert_int_equal(parse("vbscript:msgbox(1)", SHOW), CMS_URL_E_SCHEME);
    assert_int_equal(parse("ftp://h.example/", SHOW), CMS_URL_E_SCHEME);
    assert_int_equal(parse("file:///etc/passwd", SHOW), CMS_URL_E_SCHEME);
    assert_int_equal(parse("httpx://h.example/", SHOW), CMS_URL_E_SCHEME);
    assert_int_equal(parse("httpss://h.example/", SHOW), CMS_URL_E_SCHEME);
    assert_int_equal(parse("http:/h.example/", SHOW), CMS_URL_E_SCHEME);
    assert_int_equal(parse("https:h.example", SHOW), CMS_URL_E_SCHEME);
    assert_int_equal(parse("//h.example/a.png", SHOW), CMS_URL_E_SCHEME);
    assert_int_equal(parse("/a.png", SHOW), CMS_URL_E_SCHEME);
    assert_int_equal(parse("a.png", SHOW), CMS_URL_E_SCHEME);
    assert_int_equal(parse(" https://h.example/", SHOW), CMS_URL_E_SCHEME);
    assert_int_equal(parse("http", SHOW), CMS_URL_E_SCHEME);
    assert_int_equal(parse("https:", SHOW), CMS_URL_E_SCHEME);
}


static void
test_length(void **state)
{
    char       s[CMS_URL_MAX + 2];
    cms_url_t  u;

    (void) state;

    assert_int_equal(cms_url_parse("", 0, SHOW, &u), CMS_URL_E_LENGTH);

    memcpy(s, "https://h.example/", 18);
    memset(s + 18, 'a', sizeof(s) - 18);

    assert_int_equal(cms_url_parse(s, CMS_URL_MAX, SHOW, &u), CMS_URL_OK);
    assert_int_equal(cms_url_parse(s, CMS_URL_MAX + 1, SHOW, &u),
                     CMS_URL_E_LENGTH);
}


static void
test_userinfo(void **state)
{
    (void) state;

    assert_int_equal(parse("https://registry.example.com@evil/", FETCH),
                     CMS_URL_E_USERINFO);
    assert_int_equal(parse("https://user:pw@registry.example.com/", FETCH),
                     CMS_URL_E_USERINFO);
    assert_int_equal(parse("https://@registry.example.com/", FETCH),
                     CMS_URL_E_USERINFO);
    assert_int_equal(parse("https://a.example:443@b.example/", FETCH),
                     CMS_URL_E_USERINFO);
    /* "@" after the authority is a path byte */
    assert_int_equal(parse("https://a.example/@b.example", FETCH),
                     CMS_URL_OK);
    assert_string_equal(authority("https://a.example/@b.example", FETCH),
                        "a.example:443");
}


static void
test_host(void **state)
{
    char  name[400];

    (void) state;

    assert_int_equal(parse("https://", FETCH), CMS_URL_E_HOST);
    assert_int_equal(parse("https:///x", FETCH), CMS_URL_E_HOST);
    assert_int_equal(parse("https://:443/x", FETCH), CMS_URL_E_HOST);
    assert_int_equal(parse("https://registry.example.com./x", FETCH),
                     CMS_URL_E_HOST);
    assert_int_equal(parse("https://.example.com/", FETCH), CMS_URL_E_HOST);
    assert_int_equal(parse("https://a..example/", FETCH), CMS_URL_E_HOST);
    assert_int_equal(parse("https://-a.example/", FETCH), CMS_URL_E_HOST);
    assert_int_equal(parse("https://a-.example/", FETCH), CMS_URL_E_HOST);
    assert_int_equal(parse("https://a_b.example/", FETCH), CMS_URL_E_HOST);
    assert_int_equal(parse("https://a b.example/", FETCH), CMS_URL_E_HOST);
    assert_int_equal(parse("https://a\tb.example/", FETCH), CMS_URL_E_HOST);
    assert_int_equal(parse("https://a.example\\@evil/", FETCH),
                     CMS_URL_E_USERINFO);
    assert_int_equal(parse("https://a.example\\evil/", FETCH),
                     CMS_URL_E_HOST);
    assert_int_equal(parse("https://registry.example.com%23.attacker/x",
                           FETCH),
                     CMS_URL_E_HOST);
    assert_int_equal(parse("https://registry%2eexample.com/x", FETCH),
                     CMS_URL_E_HOST);
    assert_int_equal(parse("https://a.example:1:2/", FETCH), CMS_URL_E_HOST);
    assert_int_equal(parse("https://a.example;b/", FETCH), CMS_URL_E_HOST);

    /* labels of 63 bytes, 253 in all */
    memset(name, 0, sizeof(name));
    memcpy(name, "https://", 8);
    memset(name + 8, 'a', 63);
    memcpy(name + 71, ".example/", 9);
    assert_int_equal(parse(name, FETCH), CMS_URL_OK);
    memset(name + 8, 'a', 64);
    memcpy(name + 72, ".example/", 9);
    assert_int_equal(parse(name, FETCH), CMS_URL_E_HOST);

    memset(name + 8, 0, sizeof(name) - 8);
    memset(name + 8, 'a', 253);
    memset(name + 8 + 60, '.', 1);
    memset(name + 8 + 120, '.', 1);
    memset(name + 8 + 180, '.', 1);
    memset(name + 8 + 240, '.', 1);
    assert_int_equal(parse(name, FETCH), CMS_URL_OK);
    name[8 + 253] = 'a';
    assert_int_equal(parse(name, FETCH), CMS_URL_E_HOST);
}


static void
test_idn(void **state)
{
    (void) state;

    /* "registry.ex\u0430mple.com": a Cyrillic a */
    assert_int_equal(parse("https://registry.ex\xd0\xb0mple.com/x", FETCH),
                     CMS_URL_E_IDN);
    assert_int_equal(parse("https://registry.ex\xd0\xb0mple.com/x", SHOW),
                     CMS_URL_E_IDN);
    assert_int_equal(parse("https://xn--registry-ex-4ti.com/", FETCH),
                     CMS_URL_E_IDN);
    assert_int_equal(parse("https://registry.XN--exmple-4nf.com/", FETCH),
                     CMS_URL_E_IDN);
    assert_int_equal(parse("https://xn--.example/", FETCH), CMS_URL_E_HOST);
    /* allowed where the caller allows punycode: display URLs */
    assert_int_equal(parse("https://registry.xn--exmple-4nf.com/", SHOW),
                     CMS_URL_OK);
    /* "xn-" alone and "-xn--" are not ACE prefixes */
    assert_int_equal(parse("https://xn-a.example/", FETCH), CMS_URL_OK);
    assert_int_equal(parse("https://axn--b.example/", FETCH), CMS_URL_OK);
    assert_int_equal(parse("https://h.example/\xc3\xa9", SHOW),
                     CMS_URL_E_PATH);
}


static void
test_ipv4(void **state)
{
    (void) state;

    assert_int_equal(parse("https://127.0.0.1/", FETCH), CMS_URL_OK);
    assert_int_equal(parse("https://255.255.255.255/", FETCH), CMS_URL_OK);
    assert_int_equal(parse("https://10.0.0.10/", FETCH), CMS_URL_OK);

    assert_int_equal(parse("https://0177.0.0.1/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://127.0.0.01/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://0x7f.0.0.1/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://0x7f000001/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://2130706433/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://017700000001/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://127.1/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://127.0.1/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://1.2.3.4.5/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://256.0.0.1/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://1.2.3.1000/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://a.example.1/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://a.0x1/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://example.9com/", FETCH), CMS_URL_E_IP);
}


static void
test_ipv6(void **state)
{
    (void) state;

    assert_int_equal(parse("https://[::1%25eth0]/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://[fe80::1%eth0]/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://[v1.x]/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://[]/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://[::1/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://[1:2:3:4:5:6:7]/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://[1:2:3:4:5:6:7:8:9]/", FETCH),
                     CMS_URL_E_IP);
    assert_int_equal(parse("https://[1:2:3:4:5:6:7::8]/", FETCH),
                     CMS_URL_E_IP);
    assert_int_equal(parse("https://[1::2::3]/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://[:::]/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://[:1]/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://[1:]/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://[12345::]/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://[::0177.0.0.1]/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://[1.2.3.4]/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://[::1.2.3.4:5]/", FETCH), CMS_URL_E_IP);
    assert_int_equal(parse("https://[::1]x/", FETCH), CMS_URL_E_HOST);
    assert_int_equal(parse("https://[::1]:/", FETCH), CMS_URL_E_PORT);
    assert_int_equal(parse("https://::1/", FETCH), CMS_URL_E_HOST);
}


static void
test_port(void **state)
{
    (void) state;

    assert_int_equal(parse("https://h.example:1/", FETCH), CMS_URL_OK);
    assert_int_equal(parse("https://h.example:0/", FETCH), CMS_URL_E_PORT);
    assert_int_equal(parse("https://h.example:65536/", FETCH),
                     CMS_URL_E_PORT);
    assert_int_equal(parse("https://h.example:99999/", FETCH),
                     CMS_URL_E_PORT);
    assert_int_equal(parse("https://h.example:0443/", FETCH),
                     CMS_URL_E_PORT);
    assert_int_equal(parse("https://h.example:/", FETCH), CMS_URL_E_PORT);
    assert_int_equal(parse("https://h.example:44a/", FETCH),
                     CMS_URL_E_PORT);
    assert_int_equal(parse("https://h.example:+443/", FETCH),
                     CMS_URL_E_PORT);
    assert_int_equal(parse("https://h.example:123456/", FETCH),
                     CMS_URL_E_PORT);
}


static void
test_path_query_fragment(void **state)
{
    cms_url_t  u;

    (void) state;

    assert_int_equal(parse("https://h.example/a\r\nX: y", FETCH),
                     CMS_URL_E_PATH);
    assert_int_equal(parse("https://h.example/a\nb", FETCH), CMS_URL_E_PATH);
    assert_int_equal(parse("https://h.example/a b", FETCH), CMS_URL_E_PATH);
    assert_int_equal(parse("https://h.example/a\\b", FETCH), CMS_URL_E_PATH);
    assert_int_equal(parse("https://h.example/a\"b", FETCH), CMS_URL_E_PATH);
    assert_int_equal(parse("https://h.example/<a>", FETCH), CMS_URL_E_PATH);
    assert_int_equal(parse("https://h.example/a`b", FETCH), CMS_URL_E_PATH);
    assert_int_equal(parse("https://h.example/a{b}", FETCH), CMS_URL_E_PATH);
    assert_int_equal(parse("https://h.example/a\x7f", FETCH),
                     CMS_URL_E_PATH);
    assert_int_equal(parse("https://h.example/%", FETCH), CMS_URL_E_PATH);
    assert_int_equal(parse("https://h.example/%4", FETCH), CMS_URL_E_PATH);
    assert_int_equal(parse("https://h.example/%zz", FETCH), CMS_URL_E_PATH);
    assert_int_equal(parse("https://h.example/?a b", FETCH),
                     CMS_URL_E_QUERY);
    assert_int_equal(parse("https://h.example/?a\r\n", FETCH),
                     CMS_URL_E_QUERY);
    assert_int_equal(parse("https://h.example/?%g0", FETCH),
                     CMS_URL_E_QUERY);
    assert_int_equal(cms_url_parse("https://h.example/a\0b", 21, FETCH, &u),
                     CMS_URL_E_PATH);
    assert_int_equal(cms_url_parse("https://h\0.example/", 19, FETCH, &u),
                     CMS_URL_E_HOST);

    /* the "#" issue: where a fetch target is parsed, no fragment at all */
    assert_int_equal(parse("https://registry.example.com#.attacker.example"
                           ":6379/x", FETCH),
                     CMS_URL_E_FRAGMENT);
    assert_int_equal(parse("https://h.example/x#", FETCH),
                     CMS_URL_E_FRAGMENT);
    /* and where allowed, the host still ends at "#" */
    assert_string_equal(authority("https://registry.example.com#.attacker"
                                  ".example:6379/x", SHOW),
                        "registry.example.com:443");
    assert_int_equal(parse("https://h.example/x#a#b", SHOW),
                     CMS_URL_E_FRAGMENT);
    assert_int_equal(parse("https://h.example/x#a b", SHOW),
                     CMS_URL_E_FRAGMENT);
    assert_int_equal(parse("https://h.example/x#/a?b%20", SHOW), CMS_URL_OK);
}


static void
test_parts(void **state)
{
    cms_url_t    u;
    const char  *s;

    (void) state;

    s = "HTTPS://[2001:DB8::1]:8443/p/q?x=1#f";
    assert_int_equal(cms_url_parse(s, strlen(s), SHOW, &u), CMS_URL_OK);
    assert_true(u.https);
    assert_int_equal(u.host_type, CMS_URL_HOST_IPV6);
    assert_int_equal(u.host.len, 11);
    assert_memory_equal(s + u.host.off, "2001:DB8::1", 11);
    assert_true(u.has_port);
    assert_int_equal(u.port_num, 8443);
    assert_memory_equal(s + u.port.off, "8443", 4);
    assert_memory_equal(s + u.path.off, "/p/q", u.path.len);
    assert_true(u.has_query);
    assert_memory_equal(s + u.query.off, "x=1", u.query.len);
    assert_true(u.has_frag);
    assert_memory_equal(s + u.fragment.off, "f", u.fragment.len);

    s = "http://h.example";
    assert_int_equal(cms_url_parse(s, strlen(s), SHOW, &u), CMS_URL_OK);
    assert_false(u.https);
    assert_int_equal(u.host_type, CMS_URL_HOST_NAME);
    assert_false(u.has_port);
    assert_int_equal(u.port_num, 80);
    assert_int_equal(u.path.len, 0);
    assert_false(u.has_query);
    assert_false(u.has_frag);

    s = "https://10.1.2.3?";
    assert_int_equal(cms_url_parse(s, strlen(s), SHOW, &u), CMS_URL_OK);
    assert_int_equal(u.host_type, CMS_URL_HOST_IPV4);
    assert_int_equal(u.port_num, 443);
    assert_true(u.has_query);
    assert_int_equal(u.query.len, 0);
}


static void
test_build(void **state)
{
    char         out[64];
    cms_url_t    u;
    const char  *s;

    (void) state;

    assert_string_equal(rebuilt("HTTPS://Registry.Example.COM/A.toml?V=3",
                                FETCH),
                        "https://registry.example.com/A.toml?V=3");
    assert_string_equal(rebuilt("https://h.example:443", FETCH),
                        "https://h.example/");
    assert_string_equal(rebuilt("http://h.example:80/x", SHOW),
                        "http://h.example/x");
    assert_string_equal(rebuilt("http://h.example:443/x", SHOW),
                        "http://h.example:443/x");
    assert_string_equal(rebuilt("https://h.example:8443?q", FETCH),
                        "https://h.example:8443/?q");
    assert_string_equal(rebuilt("https://[::FFFF:1.2.3.4]:443/x", FETCH),
                        "https://[::ffff:1.2.3.4]/x");
    assert_string_equal(rebuilt("https://h.example/x%0d%0aY:%20z", FETCH),
                        "https://h.example/x%0d%0aY:%20z");
    assert_string_equal(rebuilt("https://h.example/x#Frag", SHOW),
                        "https://h.example/x#Frag");
    assert_string_equal(rebuilt("https://h.example/x?#", SHOW),
                        "https://h.example/x?#");

    /* without CMS_URL_FRAGMENT in the build flags: no fragment */
    s = "https://h.example/x#f";
    assert_int_equal(cms_url_parse(s, strlen(s), SHOW, &u), CMS_URL_OK);
    assert_int_equal(cms_url_build(s, &u, 0, out, sizeof(out)), 19);
    assert_string_equal(out, "https://h.example/x");

    /* the size bound: exactly enough, then one byte short */
    s = "https://h.example";
    assert_int_equal(cms_url_parse(s, strlen(s), SHOW, &u), CMS_URL_OK);
    assert_int_equal(cms_url_build(s, &u, 0, out, 19), 18);
    assert_int_equal(cms_url_build(s, &u, 0, out, 18), 0);
    assert_int_equal(cms_url_build(s, &u, 0, out, CMS_URL_BUILD_SIZE(17)),
                     18);

    assert_string_equal(authority("https://H.Example/x", FETCH),
                        "h.example:443");
    assert_string_equal(authority("http://h.example/x", SHOW),
                        "h.example:80");
    assert_string_equal(authority("https://127.0.0.1:8443", FETCH),
                        "127.0.0.1:8443");
    assert_string_equal(authority("https://[::1]", FETCH), "[::1]:443");
    assert_int_equal(cms_url_authority(s, &u, out, 13), 0);
    assert_int_equal(cms_url_authority(s, &u, out, 14), 13);
}


static void
test_check(void **state)
{
    (void) state;

    assert_true(cms_url_http_valid("https://cdn.example.com/a.png", 29));
    assert_true(cms_url_http_valid("http://cdn.example.com/a.png#x", 30));
    assert_false(cms_url_http_valid("", 0));
    assert_false(cms_url_http_valid("http://", 7));
    assert_false(cms_url_http_valid("javascript:alert(1)", 19));
    assert_false(cms_url_http_valid("data:text/html,<script>", 23));
    assert_false(cms_url_http_valid("vbscript:x", 10));
    assert_false(cms_url_http_valid("/relative/a.png", 15));
    assert_false(cms_url_http_valid("https://a b/", 12));
    assert_true(cms_url_http_valid_or_empty("", 0));
    assert_true(cms_url_http_valid_or_empty("https://a.example/", 18));
    assert_false(cms_url_http_valid_or_empty(" ", 1));
    assert_false(cms_url_http_valid_or_empty("javascript:x", 12));
}


static void
test_errors(void **state)
{
    int  rc;

    (void) state;

    for (rc = CMS_URL_OK; rc >= CMS_URL_E_FRAGMENT; rc--) {
        assert_non_null(cms_url_error(rc));
        assert_true(strlen(cms_url_error(rc)) > 5);
    }

    assert_string_equal(cms_url_error(1), "is not a valid URL");
    assert_string_equal(cms_url_error(-100), "is not a valid URL");
    assert_non_null(strstr(cms_url_error(CMS_URL_E_USERINFO), "userinfo"));
}


static const char *
origin(const char *s, unsigned flags)
{
    size_t       n;
    cms_url_t    u;
    static char  out[CMS_URL_BUILD_SIZE(CMS_URL_MAX)];

    n = cms_url_origin(s, strlen(s), flags, &u, out, sizeof(out));

    return n ? out : NULL;
}


static void
test_origin(void **state)
{
    size_t       i;
    char         small[16];
    cms_url_t    u;
    const char  *s;

    static const char  *refused[] = {
        "http://pub.example", "pub.example", "//pub.example", "https://",
        "https://pub.example/about", "https://pub.example//",
        "https://pub.example?x=1", "https://pub.example?",
        "https://pub.example#top", "https://u@pub.example",
        "https://u:p@pub.example", "https://pub.example.",
        "https://pub example", "https://pub.example:0",
        "https://pub.example:65536", "https://[fe80::1%25eth0]",
    };

    (void) state;

    assert_string_equal(origin("HTTPS://WWW.Pub.Example:443/", FETCH),
                        "https://www.pub.example");
    assert_string_equal(origin("https://pub.example", FETCH),
                        "https://pub.example");
    assert_string_equal(origin("https://pub.example:8443", FETCH),
                        "https://pub.example:8443");
    assert_string_equal(origin("https://[2606:2800:220:1::1]:443", FETCH),
                        "https://[2606:2800:220:1::1]");
    assert_string_equal(origin("http://pub.example:80/", SHOW),
                        "http://pub.example");

    for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        if (origin(refused[i], FETCH) != NULL) {
            fail_msg("accepted as an origin: %s", refused[i]);
        }
    }

    /* too small an output: 0, nothing claimed */
    s = "https://a-rather-long-host.example";
    assert_int_equal(cms_url_origin(s, strlen(s), FETCH, &u, small,
                                    sizeof(small)), 0);
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_scheme),
        cmocka_unit_test(test_length),
        cmocka_unit_test(test_userinfo),
        cmocka_unit_test(test_host),
        cmocka_unit_test(test_idn),
        cmocka_unit_test(test_ipv4),
        cmocka_unit_test(test_ipv6),
        cmocka_unit_test(test_port),
        cmocka_unit_test(test_path_query_fragment),
        cmocka_unit_test(test_parts),
        cmocka_unit_test(test_build),
        cmocka_unit_test(test_origin),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_errors),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
