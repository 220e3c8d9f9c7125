
/*
 * libFuzzer target for cms_key.c and cms_base62.c.
 *
 * - any input that parses re-formats from its decoded body to itself, so
 *   each secret has exactly one accepted key string;
 * - a key formatted from fuzz bytes parses, and changing any one byte of it
 *   makes it fail;
 * - base62 round-trips, cms_crc32() matches a bitwise reference.
 */


#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cms_key.h"
#include "cms_base62.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


static uint32_t
ref_crc32(const uint8_t *p, size_t n)
{
    int       b;
    size_t    i;
    uint32_t  crc;

    crc = 0xffffffff;

    for (i = 0; i < n; i++) {
        crc ^= p[i];

        for (b = 0; b < 8; b++) {
            crc = (crc >> 1) ^ (0xedb88320 & (0 - (crc & 1)));
        }
    }

    return ~crc;
}


static void
check_parse(const uint8_t *data, size_t size)
{
    char           out[CMS_KEY_MAX_LEN], vis[CMS_KEY_VISIBLE_MAX];
    size_t         n;
    cms_key_t      k;
    unsigned char  secret[CMS_KEY_SECRET_LEN];

    if (cms_key_parse((const char *) data, size, &k) != CMS_KEY_OK) {
        return;
    }

    if (cms_base62_decode(k.body, k.body_len, secret, sizeof(secret)) != 0) {
        abort();
    }

    n = cms_key_format(cms_key_kind_prefix(k.kind), secret, out,
                       sizeof(out));

    if (n != size || memcmp(out, data, n) != 0) {
        abort();
    }

    n = cms_key_visible_prefix(&k, vis, sizeof(vis));

    if (n != k.prefix_len + CMS_KEY_VISIBLE_BODY
        || memcmp(vis, data, n) != 0)
    {
        abort();
    }
}


static void
check_format(const uint8_t *data, size_t size)
{
    char            key[CMS_KEY_MAX_LEN];
    size_t          n, pos;
    cms_key_t       k;
    cms_key_kind_e  kind;

    if (size < 1 + CMS_KEY_SECRET_LEN + 2) {
        return;
    }

    kind = (cms_key_kind_e) (data[0] % 5);

    n = cms_key_format(cms_key_kind_prefix(kind), data + 1, key,
                       sizeof(key));

    if (n == 0 || cms_key_parse(key, n, &k) != CMS_KEY_OK
        || k.kind != kind)
    {
        abort();
    }

    pos = data[CMS_KEY_SECRET_LEN + 1] % n;

    if ((char) data[CMS_KEY_SECRET_LEN + 2] == key[pos]) {
        return;
    }

    key[pos] = (char) data[CMS_KEY_SECRET_LEN + 2];

    if (cms_key_parse(key, n, &k) == CMS_KEY_OK) {
        abort();
    }
}


static void
check_base62(const uint8_t *data, size_t size)
{
    char           enc[128];
    size_t         n;
    unsigned char  dec[CMS_BASE62_MAX_BYTES];

    if (cms_crc32(data, size) != ref_crc32(data, size)) {
        abort();
    }

    n = size < CMS_BASE62_MAX_BYTES ? size : CMS_BASE62_MAX_BYTES;

    /* 87 digits hold any 64 bytes: 62^87 > 2^512 */

    if (cms_base62_encode(data, n, enc, 87) != 0
        || cms_base62_decode(enc, 87, dec, n) != 0
        || memcmp(dec, data, n) != 0)
    {
        abort();
    }

    /* arbitrary text: decode must not crash; if it fits, it re-encodes */

    n = size < sizeof(enc) ? size : sizeof(enc);

    if (cms_base62_decode((const char *) data, n, dec, sizeof(dec)) == 0) {
        if ((cms_base62_check((const char *) data, n, sizeof(dec)) != 0)
            || cms_base62_encode(dec, sizeof(dec), enc, n) != 0
            || memcmp(enc, data, n) != 0)
        {
            abort();
        }
    }
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_parse(data, size);
    check_format(data, size);
    check_base62(data, size);

    return 0;
}
