
/*
 * Globally reachable addresses: the tables of cms_ipaddr.h.
 */


#include <string.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "cms_ipaddr.h"


#define CMS_IPADDR_TEXT_MAX  64      /* longer is no address text */

typedef struct {
    unsigned char  prefix[16];
    unsigned       bits;
} cms_ipaddr_net_t;


static int cms_ipaddr_in(const unsigned char *a, const cms_ipaddr_net_t *net);
static int cms_ipaddr_in_any(const unsigned char *a,
    const cms_ipaddr_net_t *nets, size_t n);


static const cms_ipaddr_net_t  cms_ipaddr_refused4[] = {
    { { 0 }, 8 },                              /* "this network" */
    { { 10 }, 8 },                             /* private */
    { { 100, 64 }, 10 },                       /* CGNAT */
    { { 127 }, 8 },                            /* loopback */
    { { 169, 254 }, 16 },                      /* link-local */
    { { 172, 16 }, 12 },                       /* private */
    { { 192, 0, 0 }, 24 },                     /* protocol assignments */
    { { 192, 0, 2 }, 24 },                     /* documentation */
    { { 192, 88, 99 }, 24 },                   /* 6to4 relay anycast */
    { { 192, 168 }, 16 },                      /* private */
    { { 198, 18 }, 15 },                       /* benchmarking */
    { { 198, 51, 100 }, 24 },                  /* documentation */
    { { 203, 0, 113 }, 24 },                   /* documentation */
    { { 224 }, 4 },                            /* multicast */
    { { 240 }, 4 },                            /* reserved, broadcast */
};

/* inside 2000::/3, refused */
static const cms_ipaddr_net_t  cms_ipaddr_refused6[] = {
    { { 0x20, 0x01, 0x00, 0x00 }, 23 },        /* protocol assignments */
    { { 0x20, 0x01, 0x0d, 0xb8 }, 32 },        /* documentation */
    { { 0x3f, 0xff }, 20 },                    /* documentation */
    { { 0x5f, 0x00 }, 16 },                    /* SRv6 SIDs */
};

static const cms_ipaddr_net_t  cms_ipaddr_global6 = {
    { 0x20 }, 3
};

static const cms_ipaddr_net_t  cms_ipaddr_mapped = {
    { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff }, 96
};

static const cms_ipaddr_net_t  cms_ipaddr_nat64 = {
    { 0x00, 0x64, 0xff, 0x9b }, 96
};

static const cms_ipaddr_net_t  cms_ipaddr_6to4 = {
    { 0x20, 0x02 }, 16
};

static const cms_ipaddr_net_t  cms_ipaddr_teredo = {
    { 0x20, 0x01, 0x00, 0x00 }, 32
};


static int
cms_ipaddr_in(const unsigned char *a, const cms_ipaddr_net_t *net)
{
    unsigned       whole, rest;
    unsigned char  mask;

    whole = net->bits / 8;
    rest = net->bits % 8;

    if (memcmp(a, net->prefix, whole) != 0) {
        return 0;
    }

    if (rest == 0) {
        return 1;
    }

    mask = (unsigned char) (0xff << (8 - rest));

    return (a[whole] & mask) == (net->prefix[whole] & mask);
}


static int
cms_ipaddr_in_any(const unsigned char *a, const cms_ipaddr_net_t *nets,
    size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (cms_ipaddr_in(a, &nets[i])) {
            return 1;
        }
    }

    return 0;
}


int
cms_ipaddr_public4(const unsigned char a[4])
{
    return !cms_ipaddr_in_any(a, cms_ipaddr_refused4,
                              sizeof(cms_ipaddr_refused4)
                              / sizeof(cms_ipaddr_net_t));
}


int
cms_ipaddr_public6(const unsigned char a[16])
{
    size_t         i;
    unsigned char  client[4];

    if (cms_ipaddr_in(a, &cms_ipaddr_mapped)
        || cms_ipaddr_in(a, &cms_ipaddr_nat64))
    {
        return cms_ipaddr_public4(a + 12);
    }

    if (cms_ipaddr_in(a, &cms_ipaddr_6to4)) {
        return cms_ipaddr_public4(a + 2);
    }

    if (cms_ipaddr_in(a, &cms_ipaddr_teredo)) {
        for (i = 0; i < 4; i++) {
            client[i] = (unsigned char) ~a[12 + i];
        }

        return cms_ipaddr_public4(a + 4) && cms_ipaddr_public4(client);
    }

    return cms_ipaddr_in(a, &cms_ipaddr_global6)
           && !cms_ipaddr_in_any(a, cms_ipaddr_refused6,
                                 sizeof(cms_ipaddr_refused6)
                                 / sizeof(cms_ipaddr_net_t));
}


int
cms_ipaddr_public(const struct sockaddr *sa)
{
    const struct sockaddr_in   *sin;
    const struct sockaddr_in6  *sin6;

    switch (sa->sa_family) {

    case AF_INET:
        sin = (const struct sockaddr_in *) sa;
        return cms_ipaddr_public4((const unsigned char *) &sin->sin_addr);

    case AF_INET6:
        sin6 = (const struct sockaddr_in6 *) sa;
        return cms_ipaddr_public6(sin6->sin6_addr.s6_addr);

    default:
        return 0;
    }
}


int
cms_ipaddr_loopback(const struct sockaddr *sa)
{
    const unsigned char        *a;
    const struct sockaddr_in   *sin;
    const struct sockaddr_in6  *sin6;

    static const unsigned char  one[16] = {
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1
    };

    switch (sa->sa_family) {

    case AF_INET:
        sin = (const struct sockaddr_in *) sa;
        a = (const unsigned char *) &sin->sin_addr;
        return a[0] == 127;

    case AF_INET6:
        sin6 = (const struct sockaddr_in6 *) sa;
        a = sin6->sin6_addr.s6_addr;

        if (memcmp(a, one, 16) == 0) {
            return 1;
        }

        return cms_ipaddr_in(a, &cms_ipaddr_mapped) && a[12] == 127;

    default:
        return 0;
    }
}


int
cms_ipaddr_text_public(const char *text, size_t len)
{
    char           buf[CMS_IPADDR_TEXT_MAX];
    unsigned char  a[16];

    if (len == 0 || len >= CMS_IPADDR_TEXT_MAX || memchr(text, 0, len)) {
        return -1;
    }

    memcpy(buf, text, len);
    buf[len] = '\0';

    if (inet_pton(AF_INET, buf, a) == 1) {
        return cms_ipaddr_public4(a);
    }

    if (inet_pton(AF_INET6, buf, a) == 1) {
        return cms_ipaddr_public6(a);
    }

    return -1;
}
