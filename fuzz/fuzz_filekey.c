
/*
 * libFuzzer target for cms_filekey.c: a key taken never holds what could
 * leave the storage root or name something other than a plain file under
 * it (no '\\', NUL, byte over 0x7f, '%', empty segment, segment starting
 * with '.'), and the parts it reports are inside it; a key the module
 * makes (cms_filekey_ours(), what the store's sweeper may remove) is
 * always a key taken, two or three segments long.
 */


#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cms_filekey.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t          i;
    const char     *s;
    cms_filekey_t   k;

    s = (const char *) data;

    if (!cms_filekey_parse(s, size, &k)) {
        if (cms_filekey_ours(s, size)) {
            abort();
        }

        return 0;
    }

    if (cms_filekey_ours(s, size)
        && (k.name != 37 && k.name != 43 ? 1 : k.ext_len == 0))
    {
        abort();
    }

    if (size == 0 || size > CMS_FILEKEY_MAX || s[0] == '/' || s[0] == '.'
        || s[size - 1] == '/' || k.name >= size || k.ext > size
        || k.ext + k.ext_len != (k.ext_len ? size : k.ext)
        || k.ext < k.name || (k.name > 0 && s[k.name - 1] != '/')
        || memchr(s + k.name, '/', size - k.name) != NULL)
    {
        abort();
    }

    for (i = 0; i < size; i++) {
        if (data[i] >= 0x80 || data[i] < 0x20 || data[i] == '\\'
            || data[i] == '%' || data[i] == 0x7f
            || (data[i] == '/' && (s[i + 1] == '/' || s[i + 1] == '.')))
        {
            abort();
        }
    }

    return 0;
}
