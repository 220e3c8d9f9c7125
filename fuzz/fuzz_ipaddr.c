
/*
 * libFuzzer target for cms_ipaddr.c.
 *
 * - any text: cms_ipaddr_text_public() answers -1, 0 or 1 and reads no
 *   byte past the length;
 * - the first 4 bytes as an IPv4 address: its IPv4-mapped, NAT64 and
 *   6to4 forms get the same verdict as the address itself, and its
 *   IPv4-compatible form is always refused;
 * - the first 16 bytes as an IPv6 address: a public one is in 2000::/3
 *   or carries a public IPv4 address (mapped or NAT64).
 */


#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cms_ipaddr.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int            v4, rc;
    char          *copy;
    unsigned char  a6[16];

    copy = malloc(size ? size : 1);
    if (copy == NULL) {
        return 0;
    }

    memcpy(copy, data, size);
    rc = cms_ipaddr_text_public(copy, size);
    free(copy);

    if (rc < -1 || rc > 1) {
        abort();
    }

    if (size < 16) {
        return 0;
    }

    v4 = cms_ipaddr_public4(data);

    memset(a6, 0, 16);
    a6[10] = 0xff;
    a6[11] = 0xff;
    memcpy(a6 + 12, data, 4);
    if (cms_ipaddr_public6(a6) != v4) {
        abort();
    }

    a6[10] = 0;
    a6[11] = 0;
    if (cms_ipaddr_public6(a6)) {
        abort();
    }

    a6[1] = 0x64;
    a6[2] = 0xff;
    a6[3] = 0x9b;
    if (cms_ipaddr_public6(a6) != v4) {
        abort();
    }

    memset(a6, 0, 16);
    a6[0] = 0x20;
    a6[1] = 0x02;
    memcpy(a6 + 2, data, 4);
    memcpy(a6 + 6, data + 4, 10);
    if (cms_ipaddr_public6(a6) != v4) {
        abort();
    }

    if (cms_ipaddr_public6(data)
        && (data[0] & 0xe0) != 0x20
        && !(data[0] == 0 && data[1] == 0x64 && data[2] == 0xff
             && data[3] == 0x9b)
        && !(data[0] == 0 && data[10] == 0xff && data[11] == 0xff))
    {
        abort();
    }

    return 0;
}
