
/*
 * Text into XML 1.0 (the podcast feed): character data and attribute
 * values, escaped so that no text can close an element, open one, end a
 * CDATA section or make the document ill-formed.
 *
 * Contract: cms_xml_escape() reads "len" bytes of "s" (any bytes: UTF-8
 * is expected, nothing is trusted) and writes at most
 * cms_xml_escaped_max(len) bytes to "out", which the caller owns and
 * sizes; it returns how many it wrote and writes no NUL.  The five
 * characters XML gives meaning to are written as references ("&amp;",
 * "&lt;", "&gt;", "&quot;", "&apos;"), so "]]>" becomes "]]&gt;"; a
 * carriage return as "&#13;" (a parser would turn a raw one into a line
 * feed).  What XML 1.0 forbids in a document (C0 controls but tab and
 * line feed, U+FFFE, U+FFFF) and bytes that are not well-formed UTF-8
 * (overlong forms, surrogates, values past U+10FFFF, a cut sequence)
 * become U+FFFD, one per byte that does not fit, so the output is always
 * well-formed UTF-8.  Nothing is allocated.
 */


#ifndef _CMS_XML_H_INCLUDED_
#define _CMS_XML_H_INCLUDED_


#include <stddef.h>


/* "&quot;" is the longest a byte can become */
#define cms_xml_escaped_max(len)  ((len) * 6)


size_t cms_xml_escape(const char *s, size_t len, char *out);


#endif /* _CMS_XML_H_INCLUDED_ */
