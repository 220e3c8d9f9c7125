
/*
 * W3C Trace Context: the traceparent header a request may carry
 * (https://www.w3.org/TR/trace-context/, "traceparent Header").
 *
 *   version "-" trace-id "-" parent-id "-" trace-flags
 *   00      -   32 hex   -   16 hex    -   2 hex       (55 bytes)
 *
 * Lowercase hex only; a trace-id or parent-id of all zeros, and version
 * "ff", are invalid.  A later version is read as version 00 from its
 * first 55 bytes, and may go on after a '-' (the specification's rule
 * for versions this code does not know); version 00 is exactly 55 bytes.
 *
 * Contract: nothing is allocated or written; the caller keeps the first
 * CMS_TRACEPARENT_LEN bytes of a valid header (the trace-id is bytes 3
 * to 34).
 */


#ifndef _CMS_TRACE_H_INCLUDED_
#define _CMS_TRACE_H_INCLUDED_


#include <stddef.h>


#define CMS_TRACEPARENT_LEN   55
#define CMS_TRACE_ID_OFFSET   3
#define CMS_TRACE_ID_LEN      32


/* 1 when p[0..len) is a traceparent this code honours, else 0 */
int cms_traceparent_valid(const unsigned char *p, size_t len);


#endif /* _CMS_TRACE_H_INCLUDED_ */
