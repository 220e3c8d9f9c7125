
/*
 * Unit tests for cms_ipaddr.c: the first and last address of every refused
 * range, their neighbours outside it, and the IPv6 forms that carry an
 * IPv4 address.
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "cms_ipaddr.h"


typedef struct {
    const char  *text;
    int          expect;
} case_t;


static const case_t  cases[] = {
    /* IPv4: each refused range's edges, and the public neighbours */
    { "0.0.0.0", 0 }, { "0.255.255.255", 0 }, { "1.0.0.0", 1 },
    { "9.255.255.255", 1 }, { "10.0.0.0", 0 }, { "10.255.255.255", 0 },
    { "11.0.0.0", 1 },
    { "100.63.255.255", 1 }, { "100.64.0.0", 0 }, { "100.127.255.255", 0 },
    { "100.128.0.0", 1 },
    { "126.255.255.255", 1 }, { "127.0.0.0", 0 }, { "127.0.0.1", 0 },
    { "127.255.255.255", 0 }, { "128.0.0.0", 1 },
    { "169.253.255.255", 1 }, { "169.254.0.0", 0 },
    { "169.254.169.254", 0 }, { "169.254.255.255", 0 },
    { "169.255.0.0", 1 },
    { "172.15.255.255", 1 }, { "172.16.0.0", 0 }, { "172.31.255.255", 0 },
    { "172.32.0.0", 1 },
    { "192.0.0.0", 0 }, { "192.0.0.255", 0 }, { "192.0.1.0", 1 },
    { "192.0.2.0", 0 }, { "192.0.2.255", 0 }, { "192.0.3.0", 1 },
    { "192.88.99.0", 0 }, { "192.88.99.255", 0 },
    { "192.167.255.255", 1 }, { "192.168.0.0", 0 },
    { "192.168.255.255", 0 }, { "192.169.0.0", 1 },
    { "198.17.255.255", 1 }, { "198.18.0.0", 0 }, { "198.19.255.255", 0 },
    { "198.20.0.0", 1 },
    { "198.51.100.0", 0 }, { "198.51.100.255", 0 },
    { "203.0.113.0", 0 }, { "203.0.113.255", 0 }, { "203.0.114.0", 1 },
    { "223.255.255.255", 1 }, { "224.0.0.0", 0 }, { "239.255.255.255", 0 },
    { "240.0.0.0", 0 }, { "255.255.255.255", 0 },
    { "8.8.8.8", 1 }, { "93.184.216.34", 1 },

    /* IPv6 outside 2000::/3 */
    { "::", 0 }, { "::1", 0 }, { "::8.8.8.8", 0 }, { "100::", 0 },
    { "100::ffff:ffff:ffff:ffff", 0 }, { "64:ff9b:1::1", 0 },
    { "fc00::", 0 }, { "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 0 },
    { "fe80::", 0 }, { "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 0 },
    { "fec0::1", 0 }, { "ff02::1", 0 },
    { "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 0 },
    { "1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 0 },
    { "4000::", 0 },

    /* inside 2000::/3 */
    { "2000::", 1 }, { "2606:2800:220:1::1", 1 }, { "2a00:1450::1", 1 },
    { "2001:200::", 1 }, { "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", 0 },
    { "2001:2::", 0 }, { "2001:10::1", 0 }, { "2001:20::1", 0 },
    { "2001:db8::", 0 }, { "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", 0 },
    { "2001:db9::", 1 }, { "3fff::", 0 }, { "3fff:fff::", 0 },
    { "3fff:1000::", 1 }, { "5f00::1", 0 },
    { "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 1 },

    /* forms carrying an IPv4 address, judged by it */
    { "::ffff:8.8.8.8", 1 }, { "::ffff:127.0.0.1", 0 },
    { "::ffff:10.0.0.1", 0 }, { "::ffff:169.254.169.254", 0 },
    { "::ffff:7f00:1", 0 },
    { "64:ff9b::8.8.8.8", 1 }, { "64:ff9b::127.0.0.1", 0 },
    { "64:ff9b::192.168.1.1", 0 }, { "64:ff9b::a00:1", 0 },
    { "2002:808:808::", 1 }, { "2002:7f00:1::", 0 },
    { "2002:c0a8:101::1", 0 }, { "2002:a9fe:a9fe::", 0 },
    /* Teredo: server 8.8.8.8 (0808:0808), client ~ of the last 32 bits */
    { "2001:0:808:808::f7f7:f7f7", 1 },
    { "2001:0:808:808::80ff:fffe", 0 },          /* client 127.0.0.1 */
    { "2001:0:7f00:1::f7f7:f7f7", 0 },           /* server 127.0.0.1 */
    { "2001:0:808:808::f5ff:fffe", 0 },          /* client 10.0.0.1 */

    /* not the standard text of an address: a name to resolve */
    { "0177.0.0.1", -1 }, { "0x7f.0.0.1", -1 }, { "2130706433", -1 },
    { "127.1", -1 }, { "127.0.0.1.", -1 }, { "[::1]", -1 },
    { "fe80::1%eth0", -1 }, { "example.com", -1 }, { "", -1 },
    { "1.2.3.4 ", -1 }, { "01.2.3.4", -1 },
};


static void
test_ipaddr_matrix(void **state)
{
    size_t  i;
    int     got;

    (void) state;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        got = cms_ipaddr_text_public(cases[i].text, strlen(cases[i].text));

        if (got != cases[i].expect) {
            fail_msg("%s: %d, expected %d", cases[i].text, got,
                     cases[i].expect);
        }
    }
}


static void
test_ipaddr_text_bounds(void **state)
{
    char  buf[80];

    (void) state;

    /* a length stops the text: "8.8.8.8" of "8.8.8.81" */
    assert_int_equal(cms_ipaddr_text_public("8.8.8.81", 7), 1);
    assert_int_equal(cms_ipaddr_text_public("127.0.0.1", 9), 0);
    assert_int_equal(cms_ipaddr_text_public("8.8\0.8.8", 8), -1);

    memset(buf, '1', sizeof(buf));
    assert_int_equal(cms_ipaddr_text_public(buf, sizeof(buf)), -1);
}


static void
test_ipaddr_sockaddr(void **state)
{
    struct sockaddr     sa;
    struct sockaddr_in   sin;
    struct sockaddr_in6  sin6;

    (void) state;

    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.53", &sin.sin_addr);
    assert_int_equal(cms_ipaddr_public((struct sockaddr *) &sin), 0);
    assert_int_equal(cms_ipaddr_loopback((struct sockaddr *) &sin), 1);

    inet_pton(AF_INET, "93.184.216.34", &sin.sin_addr);
    assert_int_equal(cms_ipaddr_public((struct sockaddr *) &sin), 1);
    assert_int_equal(cms_ipaddr_loopback((struct sockaddr *) &sin), 0);

    memset(&sin6, 0, sizeof(sin6));
    sin6.sin6_family = AF_INET6;
    inet_pton(AF_INET6, "::1", &sin6.sin6_addr);
    assert_int_equal(cms_ipaddr_public((struct sockaddr *) &sin6), 0);
    assert_int_equal(cms_ipaddr_loopback((struct sockaddr *) &sin6), 1);

    inet_pton(AF_INET6, "::ffff:127.1.2.3", &sin6.sin6_addr);
    assert_int_equal(cms_ipaddr_loopback((struct sockaddr *) &sin6), 1);

    inet_pton(AF_INET6, "::2", &sin6.sin6_addr);
    assert_int_equal(cms_ipaddr_loopback((struct sockaddr *) &sin6), 0);

    inet_pton(AF_INET6, "2606:2800:220:1::1", &sin6.sin6_addr);
    assert_int_equal(cms_ipaddr_public((struct sockaddr *) &sin6), 1);
    assert_int_equal(cms_ipaddr_loopback((struct sockaddr *) &sin6), 0);

    memset(&sa, 0, sizeof(sa));
    sa.sa_family = AF_UNIX;
    assert_int_equal(cms_ipaddr_public(&sa), 0);
    assert_int_equal(cms_ipaddr_loopback(&sa), 0);
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_ipaddr_matrix),
        cmocka_unit_test(test_ipaddr_text_bounds),
        cmocka_unit_test(test_ipaddr_sockaddr),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
