
/*
 * Extension manifests: TOML (see cms_toml.h) with exactly this shape.
 *
 *     [extension]
 *     name = "billing-demo"          ^[a-z0-9]+(-[a-z0-9]+)*$, <= 64 bytes
 *     version = "1.2.0"              [0-9A-Za-z.+-]{1,64}
 *     category = "payment"           [a-z0-9_-]{1,32}
 *     required_privilege = "billing:view"    [a-z0-9_:.-]{1,64}
 *     privileges = ["ext:billing:read"]      0 to 8 distinct values, each
 *                                    ext:billing:read, ext:billing:write or
 *                                    ext:control:write
 *
 *     [extension.config.api_url]     optional, up to 64 fields, each
 *     type = "string"                named [a-z0-9_]{1,64}: string, secret,
 *     required = true                number or boolean; required is
 *     default = "https://..."        optional (false); default is
 *                                    optional, of the field's type (number:
 *                                    an integer or a float) and not allowed
 *                                    for a secret
 *
 * The five [extension] keys are required.  Any other key, at any level, is
 * refused, as is a value of the wrong type or shape; the message names the
 * key path: "extension.name: required", "unknown key extension.foo",
 * "extension.config.api_token.type: must be one of string, secret, number,
 * boolean".  TOML errors come through as cms_toml_error_format() writes
 * them ("line 3, column 9: duplicate key \"name\"").
 *
 * The caller checks a config object against fields[] itself; this module
 * knows nothing of JSON.
 *
 * Memory: as cms_toml_parse(); every string in cms_manifest_t (and every
 * default node) lives in the caller's arena, NUL-terminated.
 */


#ifndef _CMS_MANIFEST_H_INCLUDED_
#define _CMS_MANIFEST_H_INCLUDED_


#include <stddef.h>

#include "cms_toml.h"


#define CMS_MANIFEST_MAX_PRIVILEGES  8
#define CMS_MANIFEST_MAX_FIELDS      64

/* longest name, version, required_privilege and field name, in bytes */
#define CMS_MANIFEST_NAME_MAX        64
#define CMS_MANIFEST_CATEGORY_MAX    32

/* an err buffer this size holds every message whole */
#define CMS_MANIFEST_ERR_SIZE        256


typedef enum {
    CMS_MANIFEST_STRING = 1,
    CMS_MANIFEST_SECRET,
    CMS_MANIFEST_NUMBER,
    CMS_MANIFEST_BOOLEAN
} cms_manifest_type_e;


typedef struct {
    const char  *data;
    size_t       len;
} cms_manifest_str_t;


/*
 * One config field.  def is the default value's node when has_default is
 * set (CMS_TOML_STRING for string, CMS_TOML_INTEGER or CMS_TOML_FLOAT for
 * number, CMS_TOML_BOOLEAN for boolean), NULL otherwise.
 */
typedef struct {
    cms_manifest_str_t       name;
    cms_manifest_type_e      type;
    int                      required;
    int                      has_default;
    const cms_toml_node_t   *def;
} cms_manifest_field_t;


typedef struct {
    cms_manifest_str_t       name;
    cms_manifest_str_t       version;
    cms_manifest_str_t       category;
    cms_manifest_str_t       required_privilege;
    cms_manifest_str_t       privileges[CMS_MANIFEST_MAX_PRIVILEGES];
    size_t                   nprivileges;
    cms_manifest_field_t     fields[CMS_MANIFEST_MAX_FIELDS];
    size_t                   nfields;
} cms_manifest_t;


/* Arena bytes that always suffice for len bytes of manifest text. */
size_t cms_manifest_arena_size(size_t len);


/*
 * Parses and validates the manifest text[0 .. len) into *m, with the
 * strings and default values carved out of arena[0 .. size) (see
 * cms_manifest_arena_size()).  Fields are in manifest order.
 *
 * The caller owns text (not referenced afterwards), the arena (which *m
 * points into: keep it while m is used), m and err.
 *
 * Returns 0 on success, with err untouched.  Returns -1 when the text is
 * not valid TOML, not a valid manifest, or does not fit the arena; *m is
 * then unspecified and, when err_size > 0, err holds a NUL-terminated
 * message (cut to err_size - 1 bytes; CMS_MANIFEST_ERR_SIZE is enough).
 * Messages contain no control characters: keys from the text are shown
 * escaped, and string values never.
 */
int cms_manifest_parse(const char *text, size_t len, void *arena,
    size_t size, cms_manifest_t *m, char *err, size_t err_size);


/* The field named name[0 .. len), or NULL. */
const cms_manifest_field_t *cms_manifest_field(const cms_manifest_t *m,
    const char *name, size_t len);


/* "string", "secret", "number", "boolean" ("?" else). */
const char *cms_manifest_type_name(cms_manifest_type_e type);


#endif /* _CMS_MANIFEST_H_INCLUDED_ */
