
/*
 * Query strings ("a=1&b=x%20y"): finding a parameter and decoding its
 * value.  Pure functions over (pointer, length); the caller owns every
 * buffer.
 */


#ifndef _CMS_QUERY_H_INCLUDED_
#define _CMS_QUERY_H_INCLUDED_


#include <stddef.h>


/* what cms_query_decode() answers for a malformed escape */
#define CMS_QUERY_BAD_ESCAPE  ((size_t) -1)


/*
 * Counts the parameters named exactly "name" (nlen bytes, compared as
 * bytes: case matters, the name is not percent-decoded) in the query
 * string args[0 .. len), whose parameters are separated by "&".  When
 * there is one or more, *val and *vlen give the first one's raw value
 * (still percent-encoded; empty when the parameter has no "=").  Returns
 * the count, 0 when absent (*val and *vlen then untouched).
 */
size_t cms_query_find(const char *args, size_t len, const char *name,
    size_t nlen, const char **val, size_t *vlen);

/*
 * Percent-decodes in[0 .. len) into out, which has room for len bytes
 * (decoding never grows): "%XX" (either case) is the byte XX, "+" a
 * space, every other byte itself.  Returns the decoded length, or
 * CMS_QUERY_BAD_ESCAPE when a "%" is not followed by two hex digits.
 * The result is not checked further: the caller validates it (UTF-8, no
 * NUL: cms_utf8_valid()).
 */
size_t cms_query_decode(const char *in, size_t len, char *out);


#endif /* _CMS_QUERY_H_INCLUDED_ */
