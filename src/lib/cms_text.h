
/*
 * Text helpers for articles: slugs and reading time.  Pure functions over
 * (pointer, length); the caller owns every buffer.
 */


#ifndef _CMS_TEXT_H_INCLUDED_
#define _CMS_TEXT_H_INCLUDED_


#include <stddef.h>


/* longest slug, in bytes */
#define CMS_SLUG_MAX             200

/* reading speed behind cms_read_minutes() */
#define CMS_WORDS_PER_MINUTE     200


/*
 * Derives a slug from UTF-8 text (a title, a name) into out[0 .. out_size),
 * not NUL-terminated: ASCII letters and digits, lowercased; Latin-1 and
 * Latin Extended-A letters transliterated (é -> e, ß -> ss, æ -> ae,
 * ø -> o, ł -> l, œ -> oe, also ș ț); apostrophes (' and U+2019) dropped
 * so "don't" gives "dont"; any other character, and invalid UTF-8, is a
 * separator; runs of separators become one "-", with none at either end.
 * A slug longer than CMS_SLUG_MAX (or out_size) is cut at the last "-"
 * that fits, or at the limit when the first word alone is longer.
 *
 * Returns the slug's length: 0 when nothing usable remains (the caller
 * then needs another source, or refuses the input).  The result always
 * passes cms_slug_valid() when not empty.
 */
size_t cms_slugify(const char *in, size_t len, char *out, size_t out_size);


/*
 * What cms_slugify() writes for the code point cp into t (room for two):
 * its length (1 or 2: ASCII letters lowercased, digits, Latin-1 and Latin
 * Extended-A letters transliterated), or 0 for a separator.
 */
size_t cms_slug_latin(unsigned cp, char *t);


/* 1 when s matches ^[a-z0-9]+(-[a-z0-9]+)*$ in at most CMS_SLUG_MAX bytes */
int cms_slug_valid(const char *s, size_t len);


/*
 * Words in the text of (sanitized) HTML: runs of characters other than
 * whitespace (ASCII whitespace and U+00A0) and tags, so a tag separates
 * words.  A tag is "<" followed by a letter, "/", "!" or "?", up to the
 * next ">"; entities are not decoded ("&amp;" alone counts as a word).
 */
size_t cms_html_word_count(const char *html, size_t len);


/* reading time for words: ceil(words / CMS_WORDS_PER_MINUTE), at least 1 */
unsigned cms_read_minutes(size_t words);


#endif /* _CMS_TEXT_H_INCLUDED_ */
