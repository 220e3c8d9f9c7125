
/*
 * HTML sanitizer for article bodies and rich-text fields, on libgumbo.
 *
 * The input is parsed as an HTML5 fragment in <body> context and the tree is
 * walked iteratively; only an allow-list of elements and attributes is
 * serialized, everything else is unwrapped (tag dropped, text kept) or
 * dropped with its content.
 *
 * Kept elements (no attributes unless listed):
 *
 *     p h1 h2 h3 h4 h5 h6 div blockquote figure figcaption pre ul ol li
 *     strong b em i u s sub sup code br hr
 *     table caption thead tbody tfoot tr td th
 *     a      href (link URL, below), title, target (only "_blank");
 *            rel="noopener noreferrer" is added when href is kept
 *     img    src (http: or https: only; an img without one is dropped),
 *            alt, title, width, height (1-5 digits)
 *     ol     start (optional "-", 1-9 digits)
 *     td th  colspan, rowspan (1-4 digits)
 *     code pre  class, a single "language-[a-z0-9-]+" (64 bytes at most)
 *
 * span is unwrapped: without attributes it carries nothing.
 *
 * Dropped with their content: script style svg math noscript template
 * iframe object embed applet marquee form input button select option
 * optgroup datalist textarea keygen base link meta title head frame
 * frameset noembed noframes xmp plaintext colgroup col param source track
 * menuitem (applet, marquee and object because, unwrapped, the scopes they
 * open would leave a p in a p or an li in an li).  Comments, doctypes,
 * processing instructions: dropped.  Any other element: unwrapped.
 *
 * Link URLs are checked on the decoded attribute value with ASCII control
 * characters and spaces removed: a scheme (the text before the first ":",
 * when no "/", "?" or "#" comes first) must be http, https or mailto;
 * without a scheme the URL is relative and allowed.  Anything else
 * (javascript:, vbscript:, data:, file:, unknown) drops the attribute.
 * Stricter still, any href, src, title or alt that spells javascript:,
 * vbscript: or data: anywhere ("/go?to=javascript:...") is dropped, so
 * no attribute value in the output carries a script URL.
 *
 * Output: text escapes "&", "<", ">" (and '"' in attribute values, always
 * double-quoted) as &amp; &lt; &gt; &quot;; void elements (br, hr, img)
 * have no end tag; every other element has an explicit one.  Characters a
 * parser would not read back as written (C0 and C1 controls, noncharacters,
 * which only character references like "&#1;" produce) become U+FFFD, a
 * CR a newline; invalid UTF-8 in the input is U+FFFD already.
 *
 * Idempotence: sanitize(sanitize(x)) == sanitize(x) byte for byte (while
 * the first output is itself within CMS_SANITIZE_MAX_INPUT).  For that the
 * walk refuses to emit an element where re-parsing the output would move
 * it (a p-closing block inside an open p, a heading directly in a heading,
 * an li that would close an outer li, a nested a, table parts out of their
 * table context, non-whitespace text directly in table/tbody/tr): such an
 * element is unwrapped instead.  pre is always followed by a newline,
 * which the parser swallows.
 *
 * Cost limits, checked before Gumbo runs (its time grows with depth x
 * length, and with the square of the attributes on one tag): input over
 * CMS_SANITIZE_MAX_INPUT bytes, a tag with more than CMS_SANITIZE_MAX_ATTRS
 * attributes, or nesting estimated over CMS_SANITIZE_MAX_DEPTH (see
 * cms_sanitize_scan()) are refused.  While parsing, Gumbo's memory is
 * capped at CMS_SANITIZE_MAX_MEMORY: misnested formatting elements make the
 * parser clone them with their attributes, which can turn 60 KB into
 * gigabytes.
 *
 * Input with svg or math tags is parsed from a copy in which they are
 * renamed (see cms_sanitize_scan()): Gumbo 0.10.1 aborts on some foreign
 * content in a fragment, and an abort would take the nginx worker down.
 *
 * Threads: no global state; one call may run in each thread.
 */


#ifndef _CMS_SANITIZE_H_INCLUDED_
#define _CMS_SANITIZE_H_INCLUDED_


#include <stddef.h>


#define CMS_SANITIZE_OK          0
#define CMS_SANITIZE_ERROR      -1
#define CMS_SANITIZE_TOO_LARGE  -2
#define CMS_SANITIZE_TOO_DEEP   -3

/* inputs up to this many bytes are accepted, larger ones refused */
#define CMS_SANITIZE_MAX_INPUT   (512 * 1024)

/* nesting limit for the pre-parse estimate and for the output tree */
#define CMS_SANITIZE_MAX_DEPTH   100

/* attributes on one tag (Gumbo checks duplicates pairwise) */
#define CMS_SANITIZE_MAX_ATTRS   256

/* heap Gumbo may use for one parse */
#define CMS_SANITIZE_MAX_MEMORY  (64 * 1024 * 1024)

/* output bytes per input byte, at most: '"' becomes "&quot;" */
#define CMS_SANITIZE_OUT_FACTOR  6


/*
 * The output size cms_sanitize() never exceeds for an input of len bytes:
 * CMS_SANITIZE_OUT_FACTOR * len + 64 (0 above CMS_SANITIZE_MAX_INPUT,
 * which is refused anyway).  Ordinary markup needs far less; input whose
 * sanitized form would be larger (misnested formatting elements, which
 * the parser repeats) is refused with CMS_SANITIZE_TOO_LARGE.
 */
size_t cms_sanitize_out_max(size_t len);


/*
 * Sanitizes html[0 .. len) (need not be NUL-terminated; invalid UTF-8
 * becomes U+FFFD) into out[0 .. out_size); the output is not
 * NUL-terminated and its length goes to *out_len.
 *
 * The caller owns both buffers; nothing is kept after the call.  The
 * heap memory used is Gumbo's parse tree and, for input with svg or math
 * tags, a copy of the input; both are freed before returning, on every
 * path.  CPU-heavy for large input (tens of ms for 512 KiB): run it off
 * the event loop.
 *
 * Returns:
 *   CMS_SANITIZE_OK         *out_len bytes written
 *   CMS_SANITIZE_TOO_LARGE  input over CMS_SANITIZE_MAX_INPUT, a tag over
 *                           CMS_SANITIZE_MAX_ATTRS attributes, Gumbo over
 *                           CMS_SANITIZE_MAX_MEMORY, or the output over
 *                           out_size or cms_sanitize_out_max(len)
 *   CMS_SANITIZE_TOO_DEEP   nesting over CMS_SANITIZE_MAX_DEPTH, in the
 *                           pre-parse estimate or in the output tree
 *   CMS_SANITIZE_ERROR      out of memory
 * On any error *out_len is 0 and out holds nothing useful.
 */
int cms_sanitize(const char *html, size_t len, char *out, size_t out_size,
    size_t *out_len);


/*
 * The pre-parse check on its own: a linear, allocation-free scan that
 * tokenizes tags, comments and raw-text elements the way the HTML
 * tokenizer does and keeps a stack of open tag names; an end tag pops only
 * when it names the top entry; a start tag of p, li, a, option on top of
 * its own name, td or th on a cell, dd or dt on either, tr on a row or a
 * row's cell replaces what the parser closes; void elements do not nest.
 *
 * It estimates for the input as cms_sanitize() parses it, with no foreign
 * content: Gumbo 0.10.1 fails assertions (abort()) on some SVG and MathML
 * fragments, so svg and math tags are renamed in a copy of the input to
 * ordinary elements the walk drops with their content.  Hence a self-
 * closed tag other than a void element, or svg and math, counts as open.
 *
 * The estimate is meant never to fall below the depth of Gumbo's tree by
 * more than a constant factor (implied tbody/tr in tables), which the fuzz
 * target checks; it may be far above it for odd input (tag-like text in a
 * script that does not end where it seems to).
 *
 * max_depth is clamped to CMS_SANITIZE_MAX_DEPTH.  Returns CMS_SANITIZE_OK,
 * CMS_SANITIZE_TOO_DEEP (estimate over max_depth) or CMS_SANITIZE_TOO_LARGE
 * (a tag over CMS_SANITIZE_MAX_ATTRS attributes).
 */
int cms_sanitize_scan(const char *html, size_t len, unsigned max_depth);


#endif /* _CMS_SANITIZE_H_INCLUDED_ */
