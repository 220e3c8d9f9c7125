
/*
 * Slugs in every script, for the records whose slugs are derived from a
 * title (articles, videos, shows): Latin letters give ASCII as
 * cms_slugify() gives it, letters of other scripts stay themselves,
 * lowercased, in NFC (a Cyrillic "Mir" stays Cyrillic "mir";
 * percent-encoding is the URL's business, not the slug's).  Unicode's
 * tables are ICU's (libicuuc).  Pure functions over (pointer, length);
 * the caller owns every buffer; nothing is allocated.
 */


#ifndef _CMS_SLUG_H_INCLUDED_
#define _CMS_SLUG_H_INCLUDED_


#include <stddef.h>
#include "cms_text.h"


/* the bytes of a text cms_slugify_text() reads: a longer one is cut */
#define CMS_SLUG_TEXT_SCAN  2048


/*
 * Derives a slug from UTF-8 text into out[0 .. out_size), not
 * NUL-terminated, at most CMS_SLUG_MAX bytes.  The text (its first
 * CMS_SLUG_TEXT_SCAN bytes) is lowercased and put in NFC, then each
 * character gives:
 *
 *   - ASCII letters and digits: themselves; Latin letters: their ASCII
 *     (cms_slug_latin(), else the letter a canonical decomposition starts
 *     with when only marks follow it: "ǎ" -> "a", "ạ" -> "a");
 *   - other letters (Unicode L*) and decimal digits (Nd): themselves, with
 *     the combining marks (M*) that follow them;
 *   - apostrophes (' and U+2019): nothing ("don't" -> "dont");
 *   - anything else, invalid UTF-8 and marks after no kept letter: a
 *     separator; runs of separators give one "-", none at either end.
 *
 * A slug that does not fit is cut at the last "-" that fits, or, when the
 * first word alone is longer, before the first character (with its marks)
 * that does not fit: never inside a character.  Returns the length, 0
 * when nothing usable remains.  A result that is not empty passes
 * cms_slug_text_valid().
 */
size_t cms_slugify_text(const char *in, size_t len, char *out,
    size_t out_size);

/*
 * 1 when s[0 .. len) is a slug cms_slugify_text() could give: 1 to
 * CMS_SLUG_MAX bytes of well-formed UTF-8 in NFC, words of ASCII
 * lowercase letters and digits, lowercase letters of other scripts (no
 * Latin letter it would turn into ASCII, such as "é") and decimal digits
 * with their combining marks, joined by single "-".  Every slug
 * cms_slug_valid() accepts passes.  0 otherwise.
 */
int cms_slug_text_valid(const char *s, size_t len);


#endif /* _CMS_SLUG_H_INCLUDED_ */
