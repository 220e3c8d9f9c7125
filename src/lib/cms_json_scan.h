
/*
 * JSON nesting pre-check, run on a request body before jansson sees it.
 *
 * jansson parses recursively; a body of a million '[' would cost a deep
 * stack before the parser's own limit or the size limit applies.  This scan
 * is linear, iterative and allocation-free, so it can refuse such a body
 * first.
 *
 * Contract: the caller owns p (len bytes, need not be NUL-terminated) and
 * nothing is kept after the call.  Depth counts open arrays and objects:
 * a scalar is depth 0, "[]" is 1, {"a":[1]} is 2.  Brackets inside strings
 * are ignored and "\"" / "\\" escapes are honoured.  This is not a
 * validator: malformed JSON (unterminated string, stray closer) may be
 * accepted, and the real parser refuses it afterwards.
 */


#ifndef _CMS_JSON_SCAN_H_INCLUDED_
#define _CMS_JSON_SCAN_H_INCLUDED_


#include <stddef.h>


int cms_json_depth_ok(const unsigned char *p, size_t len, unsigned max_depth);


/*
 * Copies the JSON text in[0..len) to out without the whitespace between
 * tokens (PostgreSQL writes {"a" : 1, "b" : 2}), strings copied byte for
 * byte.  out must hold len bytes; it may not overlap in.  Returns the
 * length written (<= len).  Compacting compacted text changes nothing.
 * Like the depth check, this is not a validator.
 */
size_t cms_json_compact(const unsigned char *in, size_t len,
    unsigned char *out);


/*
 * 1 when the JSON text p[0..len) has whitespace between tokens (what
 * cms_json_compact() would remove), else 0.  Reads only.
 */
int cms_json_loose(const unsigned char *p, size_t len);


#endif /* _CMS_JSON_SCAN_H_INCLUDED_ */
