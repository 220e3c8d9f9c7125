
/*
 * One strict parser for the absolute http(s) URLs the API takes (manifest
 * URLs to fetch, image URLs to display; later site origins and webhook
 * endpoints), narrower than RFC 3986 on purpose: whatever it accepts, every
 * URL parser downstream (nginx's, a browser's, curl's) reads the same way.
 *
 *   scheme     "http://" or "https://" (any case), as the caller allows
 *   userinfo   refused: no "@" before the path ("https://a.example@evil/")
 *   host       a DNS name: letters, digits, "-" and ".", labels of 1 to 63
 *              bytes that neither start nor end with "-", 253 bytes at
 *              most, no empty label, no trailing dot; or an IP literal:
 *              a dotted quad in decimal (four parts 0-255, no leading zero,
 *              so no octal "0177.0.0.1", hex "0x7f.1" or dword "2130706433"
 *              form; a name whose last label starts with a digit counts as
 *              an address and must be one) or "[IPv6]" (RFC 4291 text, an
 *              embedded dotted quad allowed; no zone id, no IPvFuture).
 *              A byte of 0x80 or more is refused: an internationalized name
 *              must come as punycode, and CMS_URL_NO_IDN refuses that too
 *              ("xn--" labels), against homographs ("registry.ex\u0430mple").
 *   port       optional, 1 to 65535 in decimal without a leading zero
 *   path       empty or from "/"; query after "?"; fragment after "#" only
 *              with CMS_URL_FRAGMENT (never for a URL that is fetched: the
 *              fetcher would drop it, and parsers disagree on where a host
 *              ends at "#").  Each holds only RFC 3986 unreserved
 *              (A-Z a-z 0-9 - . _ ~), sub-delims (! $ & ' ( ) * + , ; =),
 *              ":", "@", "/", "?" (not in the path, where it starts the
 *              query) and "%XX" with two hex digits, kept encoded: a
 *              "%0d%0a" stays three bytes each and is never decoded here.
 *   anywhere   no control character, space, backslash, quote, "<", ">",
 *              byte >= 0x80 or NUL; 1 to CMS_URL_MAX bytes in all.
 *
 * The parser returns the parts as offsets into the caller's text; nothing
 * is allocated and the text is not changed.  cms_url_build() writes the URL
 * again from the parts, normalized (scheme and host in lowercase, the
 * scheme's default port dropped, "/" for an empty path): what is fetched
 * or stored is that, never the raw input.
 */


#ifndef _CMS_URL_H_INCLUDED_
#define _CMS_URL_H_INCLUDED_


#include <stddef.h>


#define CMS_URL_MAX            2048     /* bytes of a whole URL */
#define CMS_URL_HOST_MAX       253      /* bytes of a host name */

/* cms_url_parse() flags: what the caller allows (0 allows no scheme) */
#define CMS_URL_HTTP           0x01     /* the scheme http */
#define CMS_URL_HTTPS          0x02     /* the scheme https */
#define CMS_URL_FRAGMENT       0x04     /* a "#fragment" (display URLs) */
#define CMS_URL_NO_IDN         0x08     /* refuse "xn--" labels */

/* cms_url_parse() results */
#define CMS_URL_OK              0
#define CMS_URL_E_LENGTH       -1       /* empty, or over CMS_URL_MAX */
#define CMS_URL_E_SCHEME       -2       /* not http(s), or not allowed */
#define CMS_URL_E_USERINFO     -3       /* "user@" or "user:pw@" */
#define CMS_URL_E_HOST         -4       /* empty, a bad byte or label */
#define CMS_URL_E_IDN          -5       /* a byte >= 0x80, or "xn--" */
#define CMS_URL_E_IP           -6       /* an address in another form */
#define CMS_URL_E_PORT         -7
#define CMS_URL_E_PATH         -8
#define CMS_URL_E_QUERY        -9
#define CMS_URL_E_FRAGMENT    -10       /* not allowed, or a bad byte */

/* cms_url_t.host_type */
#define CMS_URL_HOST_NAME       1
#define CMS_URL_HOST_IPV4       2
#define CMS_URL_HOST_IPV6       3       /* host is inside the brackets */

/* out bytes cms_url_build() may need for a parsed URL of "len" bytes */
#define CMS_URL_BUILD_SIZE(len)  ((len) + 2)

/* out bytes cms_url_authority() may need: "[v6]" or a name, ":65535" */
#define CMS_URL_AUTHORITY_SIZE  (CMS_URL_HOST_MAX + 8)


/* s[off .. off + len) */
typedef struct {
    size_t                      off;
    size_t                      len;
} cms_url_span_t;


typedef struct {
    cms_url_span_t              scheme;     /* "http" or "https", any case */
    cms_url_span_t              host;       /* IPv6: without "[" "]" */
    cms_url_span_t              port;       /* the digits, when has_port */
    cms_url_span_t              path;       /* from "/"; len 0: none */
    cms_url_span_t              query;      /* after "?", when has_query */
    cms_url_span_t              fragment;   /* after "#", when has_frag */
    unsigned                    host_type;  /* CMS_URL_HOST_* */
    unsigned                    port_num;   /* explicit, or 80 / 443 */
    unsigned                    https:1;
    unsigned                    has_port:1;
    unsigned                    has_query:1;
    unsigned                    has_frag:1;
} cms_url_t;


/*
 * Parses s[0 .. len) ("s" need not be terminated; a NUL inside is refused)
 * as the rules at the top of this file say, allowing what "flags"
 * (CMS_URL_*) name, into *u.  Returns CMS_URL_OK, or a CMS_URL_E_* code
 * (the first rule broken, *u then unspecified); cms_url_error() says it in
 * words.  No allocation.
 */
int cms_url_parse(const char *s, size_t len, unsigned flags, cms_url_t *u);

/*
 * A phrase for a cms_url_parse() result ("has userinfo (name@), which is
 * not allowed"), to follow the field's name; static, never NULL.
 */
const char *cms_url_error(int rc);

/*
 * Writes the URL "u" parsed from "s" again into out[0 .. size):
 * scheme://host[:port]path[?query][#fragment], scheme and host in
 * lowercase, IPv6 in brackets, the port only when it is not the scheme's
 * default, "/" for an empty path, the fragment only when "flags" has
 * CMS_URL_FRAGMENT; terminated.  Returns the length written (without the
 * NUL), or 0 (nothing usable in out) when size is under what it needs;
 * CMS_URL_BUILD_SIZE(len) is always enough.
 */
size_t cms_url_build(const char *s, const cms_url_t *u, unsigned flags,
    char *out, size_t size);

/*
 * Writes "host:port" of "u" (parsed from "s") into out[0 .. size), host in
 * lowercase (IPv6 in brackets), the port always (the scheme's default when
 * none was given), terminated: the form to compare with an allow-list of
 * hosts.  Returns the length, or 0 when size is under what it needs
 * (CMS_URL_AUTHORITY_SIZE is always enough).
 */
size_t cms_url_authority(const char *s, const cms_url_t *u, char *out,
    size_t size);

/*
 * A web origin (RFC 6454): s[0 .. len) parsed with "flags" into *u, with
 * no path but "/", no query and no fragment; written into out[0 .. size)
 * as scheme://host[:port] (lowercase, IPv6 in brackets, no default port,
 * no "/"), terminated.  Returns the length, or 0 when s is no origin or
 * size is under CMS_URL_BUILD_SIZE(len).
 */
size_t cms_url_origin(const char *s, size_t len, unsigned flags,
    cms_url_t *u, char *out, size_t size);

/*
 * cms_fields check functions (src/lib/cms_fields.h): 1 when s[0 .. len)
 * is an absolute http or https URL by cms_url_parse() (a fragment
 * allowed: these are URLs to display or link), else 0.  The second also
 * takes "" (no URL: the stored default, so a record read back is taken).
 */
int cms_url_http_valid(const char *s, size_t len);
int cms_url_http_valid_or_empty(const char *s, size_t len);


#endif /* _CMS_URL_H_INCLUDED_ */
