
/*
 * API key format and checksum; see cms_key.h.
 */


#include <string.h>

#include "cms_key.h"
#include "cms_base62.h"


typedef struct {
    const char  *prefix;
    size_t       len;
} cms_key_prefix_t;


static int cms_key_match(const char *s, size_t len);
static void cms_key_checksum(const char *p, size_t n,
    char out[CMS_KEY_CHECKSUM_LEN]);


#define cms_key_entry(s)  { s, sizeof(s) - 1 }

/* indexed by cms_key_kind_e; no prefix is a prefix of another */
static const cms_key_prefix_t  cms_key_prefixes[] = {
    cms_key_entry("svc_live_"),
    cms_key_entry("pk_live_"),
    cms_key_entry("sk_admin_"),
    cms_key_entry("sk_live_"),
    cms_key_entry("sk_sandbox_")
};

#define CMS_KEY_NPREFIXES                                                     \
    (sizeof(cms_key_prefixes) / sizeof(cms_key_prefix_t))


/* CRC-32 (reflected 0xEDB88320) of each nibble value: 64 bytes of table */
static const uint32_t  cms_crc32_nibble[16] = {
    0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac,
    0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
    0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
    0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c
};


/*
 * Returns the NUL-terminated prefix string of kind (static storage), or
 * NULL for an unknown kind.
 */

const char *
cms_key_kind_prefix(cms_key_kind_e kind)
{
    if ((size_t) kind >= CMS_KEY_NPREFIXES) {
        return NULL;
    }

    return cms_key_prefixes[kind].prefix;
}


/*
 * Writes prefix + base62(secret) + checksum to out (no NUL).  prefix is a
 * NUL-terminated string that must be one of the known prefixes.  Returns
 * the key length (at most CMS_KEY_MAX_LEN), or 0 for an unknown prefix or
 * an out_size below the key length.
 */

size_t
cms_key_format(const char *prefix,
    const unsigned char secret[CMS_KEY_SECRET_LEN], char *out,
    size_t out_size)
{
    int     i;
    size_t  plen, len;

    plen = strlen(prefix);
    i = cms_key_match(prefix, plen);

    if (i < 0 || cms_key_prefixes[i].len != plen) {
        return 0;
    }

    len = plen + CMS_KEY_BODY_LEN + CMS_KEY_CHECKSUM_LEN;

    if (out_size < len) {
        return 0;
    }

    memcpy(out, prefix, plen);

    /* cannot fail: 62^43 > 2^256 */
    (void) cms_base62_encode(secret, CMS_KEY_SECRET_LEN, out + plen,
                             CMS_KEY_BODY_LEN);

    cms_key_checksum(out, plen + CMS_KEY_BODY_LEN,
                     out + plen + CMS_KEY_BODY_LEN);

    return len;
}


/*
 * Splits and checks key[0 .. len).  Returns CMS_KEY_OK and fills k;
 * CMS_KEY_MALFORMED on an unknown prefix, a wrong length, a non-base62
 * character, or a body or checksum out of range (not something
 * cms_key_format() can produce); CMS_KEY_BAD_CHECKSUM when the form is
 * right but the CRC does not match.  k is untouched unless CMS_KEY_OK.
 */

int
cms_key_parse(const char *key, size_t len, cms_key_t *k)
{
    int          i;
    char         expect[CMS_KEY_CHECKSUM_LEN];
    size_t       plen;
    const char  *body, *sum;

    i = cms_key_match(key, len);

    if (i < 0) {
        return CMS_KEY_MALFORMED;
    }

    plen = cms_key_prefixes[i].len;

    if (len != plen + CMS_KEY_BODY_LEN + CMS_KEY_CHECKSUM_LEN) {
        return CMS_KEY_MALFORMED;
    }

    body = key + plen;
    sum = body + CMS_KEY_BODY_LEN;

    /* base62 only, body below 2^256, checksum below 2^32 */

    if (cms_base62_check(body, CMS_KEY_BODY_LEN, CMS_KEY_SECRET_LEN) != 0
        || cms_base62_check(sum, CMS_KEY_CHECKSUM_LEN, 4) != 0)
    {
        return CMS_KEY_MALFORMED;
    }

    cms_key_checksum(key, plen + CMS_KEY_BODY_LEN, expect);

    if (memcmp(expect, sum, CMS_KEY_CHECKSUM_LEN) != 0) {
        return CMS_KEY_BAD_CHECKSUM;
    }

    k->kind = (cms_key_kind_e) i;
    k->prefix = key;
    k->prefix_len = plen;
    k->body = body;
    k->body_len = CMS_KEY_BODY_LEN;
    k->checksum = sum;

    return CMS_KEY_OK;
}


/*
 * Copies the part of a parsed key that is safe to store and show, the
 * prefix and the first CMS_KEY_VISIBLE_BODY body characters (for example
 * "svc_live_AbC123"; about 36 of the 256 secret bits), to out (no NUL).
 * Returns its length (at most CMS_KEY_VISIBLE_MAX), or 0 when out_size is
 * too small.
 */

size_t
cms_key_visible_prefix(const cms_key_t *k, char *out, size_t out_size)
{
    size_t  len;

    len = k->prefix_len + CMS_KEY_VISIBLE_BODY;

    if (out_size < len) {
        return 0;
    }

    memcpy(out, k->prefix, k->prefix_len);
    memcpy(out + k->prefix_len, k->body, CMS_KEY_VISIBLE_BODY);

    return len;
}


/*
 * CRC-32 as zlib's crc32(0, p, n): reflected polynomial 0xEDB88320,
 * initial and final XOR 0xFFFFFFFF.  "123456789" gives 0xCBF43926.
 */

uint32_t
cms_crc32(const unsigned char *p, size_t n)
{
    size_t    i;
    uint32_t  crc;

    crc = 0xffffffff;

    for (i = 0; i < n; i++) {
        crc ^= p[i];
        crc = (crc >> 4) ^ cms_crc32_nibble[crc & 0x0f];
        crc = (crc >> 4) ^ cms_crc32_nibble[crc & 0x0f];
    }

    return crc ^ 0xffffffff;
}


/* index in cms_key_prefixes of the prefix s starts with, -1 if none */

static int
cms_key_match(const char *s, size_t len)
{
    size_t  i;

    for (i = 0; i < CMS_KEY_NPREFIXES; i++) {

        if (len >= cms_key_prefixes[i].len
            && memcmp(s, cms_key_prefixes[i].prefix, cms_key_prefixes[i].len)
               == 0)
        {
            return (int) i;
        }
    }

    return -1;
}


/* the 6 base62 checksum characters of p[0 .. n) */

static void
cms_key_checksum(const char *p, size_t n, char out[CMS_KEY_CHECKSUM_LEN])
{
    uint32_t       crc;
    unsigned char  b[4];

    crc = cms_crc32((const unsigned char *) p, n);

    b[0] = (unsigned char) (crc >> 24);
    b[1] = (unsigned char) (crc >> 16);
    b[2] = (unsigned char) (crc >> 8);
    b[3] = (unsigned char) crc;

    /* cannot fail: 62^6 > 2^32 */
    (void) cms_base62_encode(b, sizeof(b), out, CMS_KEY_CHECKSUM_LEN);
}

