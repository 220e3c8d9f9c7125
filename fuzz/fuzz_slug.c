
/*
 * libFuzzer target for cms_slug.c and cms_mime.c.
 *
 * - what cms_slugify_text() derives is valid (cms_slug_text_valid()), at
 *   most CMS_SLUG_MAX bytes and the buffer it was given, and derived
 *   again it stays the same;
 * - an ASCII slug (cms_slugify()) is a valid slug of every script too;
 * - the validator never accepts what cms_slug_valid() refuses in ASCII;
 * - a media type judged executable or checked OK is a valid one.
 */


#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cms_slug.h"
#include "cms_mime.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


static void
check_slug(const char *in, size_t size)
{
    char    out[CMS_SLUG_MAX], again[CMS_SLUG_MAX];
    size_t  n, m, small;

    n = cms_slugify_text(in, size, out, sizeof(out));

    if (n > CMS_SLUG_MAX || (n > 0 && !cms_slug_text_valid(out, n))) {
        abort();
    }

    m = cms_slugify_text(out, n, again, sizeof(again));

    if (m != n || memcmp(out, again, n) != 0) {
        abort();
    }

    small = size % 16;

    if (cms_slugify_text(in, size, again, small) > small) {
        abort();
    }

    n = cms_slugify(in, size, out, sizeof(out));

    if (n > 0 && !cms_slug_text_valid(out, n)) {
        abort();
    }
}


static void
check_ascii(const char *in, size_t size)
{
    size_t  i;

    for (i = 0; i < size; i++) {
        if ((unsigned char) in[i] >= 0x80) {
            return;
        }
    }

    if (cms_slug_text_valid(in, size) != cms_slug_valid(in, size)) {
        abort();
    }
}


static void
check_mime(const char *in, size_t size)
{
    int  valid, rc;

    valid = cms_mime_valid(in, size);
    rc = cms_mime_check("image", in, size);

    if ((cms_mime_executable(in, size) && !valid)
        || ((rc == CMS_MIME_INVALID) == valid))
    {
        abort();
    }
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_slug((const char *) data, size);
    check_ascii((const char *) data, size);
    check_mime((const char *) data, size);

    return 0;
}
