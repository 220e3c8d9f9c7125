
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


/*
 * The storage table: the media types an uploaded object is stored as, each
 * with the extension its storage key ends in and whether /v1/files serves
 * it inline.  The key's extension alone tells the files route what to
 * send, so no database read is needed there.
 *
 * cms_mime_ext(): the extension (lower case, no dot) for the media type s
 * (parameters and case ignored), "bin" for a type not in the table.
 * cms_mime_ext_type(): the media type served for the extension ext[0 ..
 * len) (case ignored), "application/octet-stream" for any other.
 * cms_mime_ext_inline(): 1 when an object with that extension is served
 * inline (raster images, audio, video, plain text), 0 when as an
 * attachment (SVG, HTML, XML, PDF, archives and anything unknown).
 */
const char *cms_mime_ext(const char *s, size_t len);
const char *cms_mime_ext_type(const char *ext, size_t len);
int cms_mime_ext_inline(const char *ext, size_t len);


#endif /* _CMS_MIME_H_INCLUDED_ */
