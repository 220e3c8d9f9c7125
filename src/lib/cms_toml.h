
/*
 * A strict parser for the subset of TOML 1.0 that extension manifests need.
 *
 * Supported:
 *
 *     # comments                      to the end of the line
 *     key = value                     bare keys [A-Za-z0-9_-]+, quoted keys
 *                                     "..." (escapes) and '...'
 *     a.b.c = value                   dotted keys
 *     [table]  [a.b."c d"]            table headers
 *     "..."                           basic strings: \b \t \n \f \r \" \\
 *                                     \uXXXX \UXXXXXXXX (to UTF-8)
 *     '...'                           literal strings, no escapes
 *     42  -17  +3  1_000              integers (int64; no leading zeros)
 *     1.5  -0.01  1e3  6.02e23        floats (double; finite only)
 *     true  false                     booleans
 *     [ 1, "two", [3], ]              arrays: mixed types, trailing comma,
 *                                     newlines and comments inside
 *     { a = 1, b.c = "x" }            inline tables, on one line
 *
 * Refused with a message starting "unsupported:": multi-line strings,
 * dates and times, arrays of tables ([[x]]), hexadecimal, octal and binary
 * integers, inf and nan.  Refused as in TOML 1.0: duplicate keys, a table
 * defined twice, a key used both as a value and as a table, dotted keys
 * extending a table that a [header] defined or implied (stricter than
 * TOML 1.0 for implied ones), any change to an inline table after it is
 * closed, invalid escapes, invalid UTF-8, control characters
 * (other than tab, and CR only before LF) anywhere, a NUL byte, and,
 * stricter than TOML, the escape \u0000 (text goes to C strings and to
 * PostgreSQL, where a NUL would truncate or fail).
 *
 * Limits: CMS_TOML_MAX_INPUT bytes of text, CMS_TOML_MAX_DEPTH levels of
 * nested tables and arrays below the root, CMS_TOML_MAX_VALUES nodes
 * (tables, arrays and scalars, the root not counted).  Numbers longer than
 * CMS_TOML_MAX_NUMBER characters are refused.
 *
 * Memory: every node and every byte of key or string text is carved out of
 * the caller's arena, nothing else is allocated and nothing points into the
 * text afterwards: the text may be freed once cms_toml_parse() returns, the
 * tree lives as long as the arena.  An arena of cms_toml_arena_size(len)
 * bytes is always enough for len bytes of text; a smaller one may be, and
 * when it runs out the parse fails cleanly ("arena too small").
 *
 * Floats are converted with strtod(), which reads the C locale's decimal
 * point: nginx never calls setlocale(), and in another locale a float is
 * refused ("invalid float"), never misread.
 *
 * Threads: no global state; the parser recurses at most
 * CMS_TOML_MAX_DEPTH levels.
 */


#ifndef _CMS_TOML_H_INCLUDED_
#define _CMS_TOML_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>


#define CMS_TOML_MAX_INPUT    (64 * 1024)
#define CMS_TOML_MAX_DEPTH    16
#define CMS_TOML_MAX_VALUES   1024
#define CMS_TOML_MAX_NUMBER   128

/* bytes of key text an error keeps, already escaped for display */
#define CMS_TOML_ERR_KEY_MAX  64


typedef enum {
    CMS_TOML_TABLE = 1,
    CMS_TOML_ARRAY,
    CMS_TOML_STRING,
    CMS_TOML_INTEGER,
    CMS_TOML_FLOAT,
    CMS_TOML_BOOLEAN
} cms_toml_type_e;


typedef struct cms_toml_node_s  cms_toml_node_t;

/*
 * One value.  key is NULL for the root and for array elements; key and str
 * are NUL-terminated (key_len and str_len exclude the NUL) and never
 * contain a NUL themselves: "\u0000" is refused.  Only the
 * field of the node's type is meaningful; the others are zero.  Children
 * of a table or array are in document order: child, then next; count is
 * their number.  The fields after count belong to the parser.
 */
struct cms_toml_node_s {
    cms_toml_type_e    type;
    const char        *key;
    size_t             key_len;
    const char        *str;
    size_t             str_len;
    int64_t            integer;
    double             number;
    int                boolean;
    cms_toml_node_t   *child;
    cms_toml_node_t   *next;
    size_t             count;

    cms_toml_node_t   *last;
    unsigned           kind;
};


/*
 * Why a parse failed.  msg is static text, never NULL after a failure; it
 * may contain "%k", where cms_toml_error_format() puts key (in quotes).
 * line and column (1-based, column in characters) locate the problem in
 * the text; line is 0 when the problem has no position (input too large).
 */
typedef struct {
    unsigned     line;
    unsigned     column;
    const char  *msg;
    char         key[CMS_TOML_ERR_KEY_MAX + 1];
} cms_toml_error_t;


/*
 * The arena size that always suffices for len bytes of text: a node for
 * each of at most min(len, CMS_TOML_MAX_VALUES) values plus the root (each
 * value needs a byte of text of its own), plus len + 1 bytes per node for
 * key and string text (unescaping never grows text; a copied key or string
 * also takes its NUL), plus alignment.  About 116 KiB for any text over
 * 1 KiB (x86-64), plus len.
 */
size_t cms_toml_arena_size(size_t len);


/*
 * Parses text[0 .. len) (need not be NUL-terminated; an UTF-8 byte order
 * mark at the start is skipped) into a tree carved out of
 * arena[0 .. arena_size).  On success *root is the root table.
 *
 * The caller owns text (not referenced afterwards), the arena (holding the
 * tree: do not reuse it while the tree is in use) and err.  err may be
 * NULL.
 *
 * Returns 0 on success; -1 on any failure, with *root NULL and err filled.
 */
int cms_toml_parse(const char *text, size_t len, void *arena,
    size_t arena_size, cms_toml_node_t **root, cms_toml_error_t *err);


/*
 * Writes err as one NUL-terminated line into buf[0 .. size), e.g.
 * "line 3, column 9: duplicate key \"name\"", truncating to fit.  Returns
 * the number of bytes written without the NUL (0 when size is 0).
 */
size_t cms_toml_error_format(const cms_toml_error_t *err, char *buf,
    size_t size);


/*
 * The child of table whose key is the NUL-terminated string key, or NULL
 * when table is NULL, not a table, or has no such key.  Iterate over all
 * children with: for (n = table->child; n != NULL; n = n->next).
 */
cms_toml_node_t *cms_toml_get(const cms_toml_node_t *table, const char *key);

/* The same with a key of len bytes. */
cms_toml_node_t *cms_toml_get_n(const cms_toml_node_t *table,
    const char *key, size_t len);


/* "table", "array", "string", "integer", "float", "boolean" ("?" else). */
const char *cms_toml_type_name(cms_toml_type_e type);


#endif /* _CMS_TOML_H_INCLUDED_ */
