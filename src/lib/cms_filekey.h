
/*
 * Storage keys as GET /v1/files/{key} takes them: the allow-list that
 * keeps a key inside the storage root before anything touches the disk,
 * and where its file name and extension are.  Pure functions over
 * (pointer, length).
 */


#ifndef _CMS_FILEKEY_H_INCLUDED_
#define _CMS_FILEKEY_H_INCLUDED_


#include <stddef.h>


/* the longest key taken, in bytes */
#define CMS_FILEKEY_MAX      512


/* where the parts of a valid key are, as offsets into it */
typedef struct {
    size_t                      name;      /* the last segment */
    size_t                      ext;       /* after its last '.' */
    size_t                      ext_len;   /* 0: no extension */
} cms_filekey_t;


/*
 * 1 when s[0 .. len) is a storage key: 1 to CMS_FILEKEY_MAX bytes of
 * segments joined by '/', each segment non-empty, made of ASCII letters,
 * digits, '-', '_' and '.', and not starting with '.' (so no "." or ".."
 * segment, no hidden file, no empty segment, no leading or trailing '/'),
 * with k filled in; 0 otherwise (k untouched).  Whatever is not on the
 * list is refused: NUL and other control bytes, '\\', '%', spaces, any
 * byte over 0x7f (overlong or other UTF-8).
 */
int cms_filekey_parse(const char *s, size_t len, cms_filekey_t *k);

/*
 * 1 when s[0 .. len) is a key the module itself makes: an upload's
 * "<workspace uuid>/<asset uuid>.<ext>", an image variant's
 * "<workspace uuid>/<asset uuid>/w<width>.<ext>" or an avatar's
 * "users/<user uuid>/<32 hex digits>.<ext>" (lowercase, the extension 1
 * to 10 of a-z 0-9); 0 for anything else, which the store's sweeper
 * never removes.
 */
int cms_filekey_ours(const char *s, size_t len);

/* 1 when s[0 .. len) is an upload's key, "<workspace uuid>/<asset
   uuid>.<ext>" (lowercase, the extension 1 to 10 of a-z 0-9) */
int cms_filekey_upload(const char *s, size_t len);

/* 1 when s[0 .. len) is an image variant's key, "<workspace uuid>/<asset
   uuid>/w<width>.<ext>" (the width 1 to 5 digits, no leading 0) */
int cms_filekey_variant(const char *s, size_t len);


#endif /* _CMS_FILEKEY_H_INCLUDED_ */
