
/*
 * Custom modules: the schema a workspace defines for a content type, and
 * an entry's data checked against it.  Pure functions over jansson
 * values; nothing is kept between calls.
 *
 * A schema is {"fields": [{key, label, type, required, options}, ...]}:
 *
 *   key       ^[a-z][a-z0-9_]{0,63}$, unique in the schema
 *   label     a string of 1 to CMS_CUSTOM_LABEL_MAX characters
 *   type      text number boolean url date datetime email select
 *             multiselect media richtext
 *   required  a boolean, false when absent
 *   options   for select and multiselect only, and then required: 1 to
 *             CMS_CUSTOM_OPTIONS_MAX distinct strings of 1 to
 *             CMS_CUSTOM_LABEL_MAX characters
 *
 * at most CMS_CUSTOM_FIELDS_MAX fields; a member the shape does not name
 * is refused (a typo such as "reqired" would otherwise pass unnoticed).
 *
 * A value of a field, when present and not null (null is "no value": a
 * required field refuses it, as it refuses absence):
 *
 *   text       a string of at most CMS_CUSTOM_TEXT_MAX characters
 *   richtext   a string of at most CMS_CUSTOM_RICHTEXT_MAX bytes (the
 *              caller sanitizes it before storing it)
 *   number     a JSON number (jansson holds only finite ones), not a
 *              numeric string
 *   boolean    true or false
 *   url        an absolute http(s) URL (cms_url_http_valid)
 *   date       YYYY-MM-DD, a day that exists (proleptic Gregorian,
 *              years 0001 to 9999)
 *   datetime   RFC 3339 with a zone (cms_rfc3339_valid)
 *   email      cms_custom_email_valid()
 *   select     one of the options
 *   multiselect  an array of distinct options (possibly empty)
 *   media      a uuid (that it names an asset of the workspace is the
 *              database's check)
 *
 * Every error names a path ("schema.fields[3].type", "data.price") and
 * says in words what is wrong; the caller answers invalid_field_value.
 */


#ifndef _CMS_CUSTOM_H_INCLUDED_
#define _CMS_CUSTOM_H_INCLUDED_


#include <stddef.h>
#include <jansson.h>


#define CMS_CUSTOM_FIELDS_MAX      100
#define CMS_CUSTOM_OPTIONS_MAX     100
#define CMS_CUSTOM_KEY_MAX         64
#define CMS_CUSTOM_LABEL_MAX       200
#define CMS_CUSTOM_TEXT_MAX        10000
#define CMS_CUSTOM_RICHTEXT_MAX    (512 * 1024)

#define CMS_CUSTOM_OK              0
#define CMS_CUSTOM_REFUSED        -1
#define CMS_CUSTOM_ERROR          -2       /* no memory */

#define CMS_CUSTOM_PATH_MAX        96
#define CMS_CUSTOM_MESSAGE_MAX     200


typedef enum {
    CMS_CUSTOM_NONE = 0,
    CMS_CUSTOM_TEXT,
    CMS_CUSTOM_NUMBER,
    CMS_CUSTOM_BOOLEAN,
    CMS_CUSTOM_URL,
    CMS_CUSTOM_DATE,
    CMS_CUSTOM_DATETIME,
    CMS_CUSTOM_EMAIL,
    CMS_CUSTOM_SELECT,
    CMS_CUSTOM_MULTISELECT,
    CMS_CUSTOM_MEDIA,
    CMS_CUSTOM_RICHTEXT
} cms_custom_type_e;


typedef struct {
    char                        path[CMS_CUSTOM_PATH_MAX];
    char                        message[CMS_CUSTOM_MESSAGE_MAX];
} cms_custom_error_t;


/* the type named s[0 .. len), or CMS_CUSTOM_NONE */
int cms_custom_type(const char *s, size_t len);

/*
 * Checks "schema" (any JSON value; NULL counts as absent, which is
 * {"fields": []}) and sets *out to a new reference to its normal form:
 * {"fields": [{key, label, type, required, [options]}]}, "required"
 * always written.  Returns CMS_CUSTOM_OK, CMS_CUSTOM_REFUSED with "err"
 * filled (the path starts with "schema"), or CMS_CUSTOM_ERROR (no
 * memory).  *out is set only on CMS_CUSTOM_OK.
 */
int cms_custom_schema_check(json_t *schema, json_t **out,
    cms_custom_error_t *err);

/*
 * Checks an entry's data against "schema" (a normal form, as
 * cms_custom_schema_check() makes): the values of "given" (an object; NULL
 * counts as {}) over those of "current" (the stored data of the entry a
 * PATCH changes, NULL on create): every field of the schema as the merged
 * data holds it.  Members of "given" the schema lacks are not checked
 * (they are dropped).  Returns CMS_CUSTOM_OK or CMS_CUSTOM_REFUSED with
 * "err" filled (path "data" or "data.<key>").
 */
int cms_custom_data_check(json_t *schema, json_t *current, json_t *given,
    cms_custom_error_t *err);

/*
 * The members of "given" that "schema" names, as a new object (*out), or
 * CMS_CUSTOM_ERROR (no memory).  The values are shared with "given".
 */
int cms_custom_data_keep(json_t *schema, json_t *given, json_t **out);

/*
 * The field of "schema" whose key is s[0 .. len) (not terminated), or
 * NULL; *type is set to its type when found.
 */
json_t *cms_custom_field(json_t *schema, const char *s, size_t len,
    int *type);

/*
 * 1 when s[0 .. len) is an email address: a local part of printable ASCII
 * without spaces, quotes or angle brackets (a quoted local part such as
 * "a b"@x.org is refused: few systems deliver it, most forms refuse it),
 * then a domain of two labels or more, each of letters, digits and inner
 * hyphens, where a letter may be any non-ASCII character (an
 * internationalized domain in UTF-8, as a person types it), 254 bytes at
 * most.  0 otherwise.
 */
int cms_custom_email_valid(const char *s, size_t len);

/* 1 for YYYY-MM-DD naming a day that exists, else 0 */
int cms_custom_date_valid(const char *s, size_t len);


#endif /* _CMS_CUSTOM_H_INCLUDED_ */
