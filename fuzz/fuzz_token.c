
/*
 * libFuzzer target for cms_token.c.
 *
 * - any input checked as a token never crashes, and one accepted has the
 *   one length cms_token_make() writes;
 * - a token made from fuzz bytes checks, and changing any one byte of it,
 *   or checking it as another kind, makes it fail.
 */


#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cms_token.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


static const unsigned char  key[CMS_TOKEN_KEY_LEN] = "fuzz key fuzz key fuzz key fuzz";


static void
check_input(const uint8_t *data, size_t size)
{
    size_t         n;
    int64_t        e;
    unsigned char  rnd[CMS_TOKEN_RANDOM_LEN];
    char           out[CMS_TOKEN_MAX_LEN];

    if (cms_token_check(key, "inv", (const char *) data, size, 0, &e)
        != CMS_TOKEN_OK)
    {
        return;
    }

    if (size != 4 + CMS_TOKEN_BODY_LEN) {
        abort();
    }

    memset(rnd, 0, sizeof(rnd));
    n = cms_token_make(key, "inv", e, rnd, out, sizeof(out));

    if (n != size) {
        abort();
    }
}


static void
check_made(const uint8_t *data, size_t size)
{
    size_t         n, i;
    int64_t        exp, e;
    unsigned char  rnd[CMS_TOKEN_RANDOM_LEN];
    char           t[CMS_TOKEN_MAX_LEN];

    if (size < 8 + CMS_TOKEN_RANDOM_LEN) {
        return;
    }

    memcpy(&exp, data, 8);
    exp = (exp < 0) ? -(exp + 1) : exp;
    exp = exp % 4000000000 + 1;
    memcpy(rnd, data + 8, sizeof(rnd));

    n = cms_token_make(key, "pwr", exp, rnd, t, sizeof(t));

    if (n != 4 + CMS_TOKEN_BODY_LEN
        || cms_token_check(key, "pwr", t, n, exp - 1, &e) != CMS_TOKEN_OK
        || e != exp
        || cms_token_check(key, "pwr", t, n, exp, NULL) != CMS_TOKEN_EXPIRED
        || cms_token_check(key, "inv", t, n, 0, NULL) == CMS_TOKEN_OK)
    {
        abort();
    }

    i = (size > 24) ? data[24] % n : 0;
    t[i] ^= (size > 25 && data[25]) ? data[25] : 1;

    if (cms_token_check(key, "pwr", t, n, 0, NULL) == CMS_TOKEN_OK) {
        abort();
    }
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_input(data, size);
    check_made(data, size);

    return 0;
}
