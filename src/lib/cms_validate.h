
/*
 * Validators for request values.  Pure functions over (pointer, length).
 */


#ifndef _CMS_VALIDATE_H_INCLUDED_
#define _CMS_VALIDATE_H_INCLUDED_


#include <stddef.h>


/*
 * 1 when "s" is a plausible email address: one "@", a local part of 1-64
 * printable ASCII characters without spaces, quotes or angle brackets, a
 * domain of dot-separated labels (letters, digits, hyphens, not starting
 * or ending with a hyphen) with at least one dot, 254 bytes at most.
 * Deliberately narrower than RFC 5321: it accepts what mail systems
 * deliver and refuses what is surely a mistake.  0 otherwise.
 */
int cms_email_valid(const char *s, size_t len);


/* 1 for a "#rgb" or "#rrggbb" hex colour, else 0. */
int cms_color_valid(const char *s, size_t len);

/*
 * 1 for a language tag in the BCP 47 shape: 2-8 letters, then subtags of
 * 1-8 letters or digits after "-" ("en", "pt-BR", "zh-Hant-TW"), 35 bytes
 * at most.  0 otherwise.
 */
int cms_locale_valid(const char *s, size_t len);


/*
 * 1 for an RFC 3339 date-time with a zone: YYYY-MM-DDTHH:MM:SS, optional
 * fraction (1-9 digits), then "Z" or +HH:MM / -HH:MM ("t" and "z" are
 * accepted as RFC 3339 allows); a real calendar date, hours < 24,
 * minutes < 60, seconds < 61 (leap second).  0 otherwise.
 */
int cms_rfc3339_valid(const char *s, size_t len);


/*
 * 1 when s[0 .. len) is exactly one of "words" (NUL-terminated, the list
 * ended by NULL).  The comparison is bounded by len: "s" need not be
 * terminated, and a value with a NUL inside never matches.  0 otherwise.
 */
int cms_str_one_of(const char *s, size_t len, const char *const *words);

/*
 * Makes a C string: copies s[0 .. len) into dst and terminates it, which
 * takes len + 1 bytes of dst (its size, "size").  Returns 0, or -1 (dst
 * untouched) when it does not fit or "s" holds a NUL, which would cut the
 * C string short of what was checked.
 */
int cms_cstr(char *dst, size_t size, const char *s, size_t len);

/*
 * 1 when s[0 .. len) is well-formed UTF-8 (RFC 3629: no overlong forms,
 * no surrogates, nothing above U+10FFFF) with no NUL byte, else 0.
 */
int cms_utf8_valid(const char *s, size_t len);

/*
 * The length (2 to 4) of the well-formed UTF-8 sequence at p[0 .. len),
 * whose lead byte is 0x80 or more, as cms_utf8_valid() judges it; 0 when
 * there is none.  For scanners that treat ASCII themselves.
 */
size_t cms_utf8_len(const unsigned char *p, size_t len);

#endif /* _CMS_VALIDATE_H_INCLUDED_ */
