
/*
 * Unit tests for cms_signed_id.c: a token opens to its id under its key,
 * and nothing else opens: another key, a changed character, a cut or
 * longer token, padding, a token of another id's MAC.
 */


#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "cms_signed_id.h"


static const unsigned char  key[CMS_SIGNED_ID_KEY] = "0123456789abcdef0123456789abcde";
static const unsigned char  key2[CMS_SIGNED_ID_KEY] = "0123456789abcdef0123456789abcdX";

#define ID   "0190a4d6-2f5e-7c3a-9b1d-4e5f60718293"
#define ID2  "0190a4d6-2f5e-7c3a-9b1d-4e5f60718294"


static void
test_round_trip(void **state)
{
    char  tok[CMS_SIGNED_ID_LEN + 1], up[CMS_SIGNED_ID_LEN], id[36];

    (void) state;

    memset(tok, '#', sizeof(tok));
    assert_int_equal(cms_signed_id_make(key, ID, 36, tok), 0);
    assert_int_equal(tok[CMS_SIGNED_ID_LEN], '#');
    assert_int_equal(cms_signed_id_open(key, tok, CMS_SIGNED_ID_LEN, id), 0);
    assert_memory_equal(id, ID, 36);

    /* uppercase text is the same uuid */
    assert_int_equal(cms_signed_id_make(key,
                         "0190A4D6-2F5E-7C3A-9B1D-4E5F60718293", 36, up), 0);
    assert_memory_equal(up, tok, CMS_SIGNED_ID_LEN);

    assert_int_equal(cms_signed_id_make(key, "not-a-uuid", 10, tok), -1);
}


static void
test_refused(void **state)
{
    char    tok[CMS_SIGNED_ID_LEN + 2], tok2[CMS_SIGNED_ID_LEN], id[36];
    size_t  i;

    (void) state;

    assert_int_equal(cms_signed_id_make(key, ID, 36, tok), 0);
    assert_int_equal(cms_signed_id_open(key2, tok, CMS_SIGNED_ID_LEN, id), -1);
    assert_int_equal(cms_signed_id_open(key, tok, CMS_SIGNED_ID_LEN - 1, id),
                     -1);
    tok[CMS_SIGNED_ID_LEN] = 'A';
    assert_int_equal(cms_signed_id_open(key, tok, CMS_SIGNED_ID_LEN + 1, id),
                     -1);
    tok[CMS_SIGNED_ID_LEN] = '=';
    assert_int_equal(cms_signed_id_open(key, tok, CMS_SIGNED_ID_LEN + 1, id),
                     -1);

    /* every character changed, one at a time */
    for (i = 0; i < CMS_SIGNED_ID_LEN; i++) {
        char  c = tok[i];

        tok[i] = (c == 'A') ? 'B' : 'A';
        assert_int_equal(cms_signed_id_open(key, tok, CMS_SIGNED_ID_LEN, id),
                         -1);
        tok[i] = c;
    }

    /* another id's MAC with this id's bytes */
    assert_int_equal(cms_signed_id_make(key, ID2, 36, tok2), 0);
    memcpy(tok2 + 21, tok + 21, CMS_SIGNED_ID_LEN - 21);
    assert_int_equal(cms_signed_id_open(key, tok2, CMS_SIGNED_ID_LEN, id), -1);
}


int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
