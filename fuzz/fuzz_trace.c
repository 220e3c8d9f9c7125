
/*
 * libFuzzer target for cms_trace.c: cms_traceparent_valid() on any bytes
 * reads only within them, and a header it accepts has the shape it
 * promises (the separators in place, 55 bytes at least).
 */


#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "cms_trace.h"


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (cms_traceparent_valid(data, size)) {
        if (size < CMS_TRACEPARENT_LEN || data[2] != '-' || data[35] != '-'
            || data[52] != '-')
        {
            abort();
        }
    }

    return 0;
}
