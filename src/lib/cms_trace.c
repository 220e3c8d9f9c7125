
/*
 * W3C traceparent validation (cms_trace.h).
 */


#include "cms_trace.h"


/* n lowercase hex digits; *zero stays 1 while every one is '0' */
static int
cms_trace_hex(const unsigned char *p, size_t n, int *zero)
{
    size_t  i;

    *zero = 1;

    for (i = 0; i < n; i++) {
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'))) {
            return 0;
        }

        if (p[i] != '0') {
            *zero = 0;
        }
    }

    return 1;
}


int
cms_traceparent_valid(const unsigned char *p, size_t len)
{
    int  zero;

    if (len < CMS_TRACEPARENT_LEN) {
        return 0;
    }

    /* the version: two hex digits, "ff" never; 00 has nothing after */

    if (!cms_trace_hex(p, 2, &zero) || (p[0] == 'f' && p[1] == 'f')) {
        return 0;
    }

    if (zero ? len != CMS_TRACEPARENT_LEN
             : len > CMS_TRACEPARENT_LEN && p[CMS_TRACEPARENT_LEN] != '-')
    {
        return 0;
    }

    if (p[2] != '-' || p[35] != '-' || p[52] != '-') {
        return 0;
    }

    /* trace-id, parent-id: not all zeros; the flags: any two digits */

    if (!cms_trace_hex(p + CMS_TRACE_ID_OFFSET, CMS_TRACE_ID_LEN, &zero)
        || zero)
    {
        return 0;
    }

    if (!cms_trace_hex(p + 36, 16, &zero) || zero) {
        return 0;
    }

    return cms_trace_hex(p + 53, 2, &zero);
}
