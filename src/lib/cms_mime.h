
/*
 * Media types of stored and registered assets: which ones a browser or a
 * web server would run as code, and whether one fits an asset's type.
 * Media registration checks a declared type with it; uploads check the
 * type sniffed from the bytes the same way.  Pure functions over
 * (pointer, length).
 */


#ifndef _CMS_MIME_H_INCLUDED_
#define _CMS_MIME_H_INCLUDED_


#include <stddef.h>


/* the longest media type taken, parameters included */
#define CMS_MIME_MAX         255

/* cms_mime_check() results */
#define CMS_MIME_OK          0
#define CMS_MIME_INVALID     1     /* not "type/subtype[; name=value]..." */
#define CMS_MIME_EXECUTABLE  2     /* would run as script */
#define CMS_MIME_MISMATCH    3     /* not of the asset's type */


/*
 * 1 when s[0 .. len) is a media type: "type/subtype" (RFC 6838 restricted
 * names: a letter or digit, then up to 126 of letters, digits and
 * !#$&-^_.+), then any number of "; name=value" parameters (RFC 9110
 * tokens; spaces around ";" allowed, quoted values not), CMS_MIME_MAX
 * bytes at most.  Case does not matter.  0 otherwise.
 */
int cms_mime_valid(const char *s, size_t len);

/*
 * 1 when the media type s (cms_mime_valid()) is one that a browser or a
 * web server runs as code, or that may carry script: HTML and XHTML (any
 * subtype naming "html"), XML (subtype "xml", "xsl", "*+xml", "xml-*":
 * SVG among them) and any subtype naming "svg", JavaScript and anything
 * naming "script" in its type or subtype (ecmascript, x-shellscript,
 * vbscript...), PHP (a subtype naming "php"), server handlers
 * ("x-httpd-*", e.g. application/x-httpd-php), Flash
 * (x-shockwave-flash) and HTML applications (hta).  Parameters do not
 * count.  0 otherwise.
 */
int cms_mime_executable(const char *s, size_t len);

/*
 * Checks the media type s for an asset of type "asset" ("image",
 * "video", "audio" or "file", NUL-terminated): CMS_MIME_INVALID when s is
 * not a media type, CMS_MIME_EXECUTABLE when it runs as code (whatever
 * the asset), CMS_MIME_MISMATCH when an image's type is not "image", a
 * video's not "video", an audio asset's not "audio", or "asset" is none
 * of the four; a file takes any type that is not executable.  CMS_MIME_OK
 * otherwise.
 */
int cms_mime_check(const char *asset, const char *s, size_t len);


#endif /* _CMS_MIME_H_INCLUDED_ */
