
/*
 * Media types: syntax, script-executable types, asset agreement; see
 * cms_mime.h.
 */


#include <string.h>
#include "cms_mime.h"


/* the longest type or subtype name (RFC 6838 4.2) */
#define CMS_MIME_NAME_MAX  127


typedef struct {
    const char  *type;
    size_t       type_len;
    const char  *sub;
    size_t       sub_len;
} cms_mime_t;


/* the storage table (cms_mime.h): the first row of a type names its
   extension; further rows of a type are extensions also understood */
typedef struct {
    const char  *type;
    const char  *ext;
    int          inline_safe;
} cms_mime_stored_t;


static const cms_mime_stored_t  cms_mime_stored[] = {
    { "image/png", "png", 1 },
    { "image/jpeg", "jpg", 1 },
    { "image/jpeg", "jpeg", 1 },
    { "image/gif", "gif", 1 },
    { "image/webp", "webp", 1 },
    { "image/avif", "avif", 1 },
    { "image/bmp", "bmp", 1 },
    { "image/x-icon", "ico", 1 },
    { "image/svg+xml", "svg", 0 },
    { "video/mp4", "mp4", 1 },
    { "video/webm", "webm", 1 },
    { "video/quicktime", "mov", 1 },
    { "video/ogg", "ogv", 1 },
    { "audio/mpeg", "mp3", 1 },
    { "audio/mp4", "m4a", 1 },
    { "audio/ogg", "ogg", 1 },
    { "audio/wav", "wav", 1 },
    { "audio/flac", "flac", 1 },
    { "audio/webm", "weba", 1 },
    { "text/plain; charset=utf-8", "txt", 1 },
    { "text/csv; charset=utf-8", "csv", 0 },
    { "text/html; charset=utf-8", "html", 0 },
    { "application/xml", "xml", 0 },
    { "application/json", "json", 0 },
    { "application/pdf", "pdf", 0 },
    { "application/zip", "zip", 0 },
    { "application/octet-stream", "bin", 0 },
};


static int cms_mime_parse(const char *s, size_t len, cms_mime_t *m);
static size_t cms_mime_name(const char *s, size_t len);
static size_t cms_mime_token(const char *s, size_t len);
static size_t cms_mime_space(const char *s, size_t len);
static int cms_mime_eq(const char *s, const char *word, size_t n);
static int cms_mime_has(const char *s, size_t len, const char *word);
static int cms_mime_is(const char *s, size_t len, const char *word);
static int cms_mime_starts(const char *s, size_t len, const char *word);
static int cms_mime_ends(const char *s, size_t len, const char *word);
static const cms_mime_stored_t *cms_mime_stored_ext(const char *ext,
    size_t len);


int
cms_mime_valid(const char *s, size_t len)
{
    cms_mime_t  m;

    return cms_mime_parse(s, len, &m);
}


int
cms_mime_executable(const char *s, size_t len)
{
    cms_mime_t  m;

    if (!cms_mime_parse(s, len, &m)) {
        return 0;
    }

    return cms_mime_has(m.type, m.type_len, "script")
           || cms_mime_has(m.sub, m.sub_len, "script")
           || cms_mime_has(m.sub, m.sub_len, "html")
           || cms_mime_has(m.sub, m.sub_len, "svg")
           || cms_mime_has(m.sub, m.sub_len, "php")
           || cms_mime_is(m.sub, m.sub_len, "xml")
           || cms_mime_is(m.sub, m.sub_len, "xsl")
           || cms_mime_ends(m.sub, m.sub_len, "+xml")
           || cms_mime_starts(m.sub, m.sub_len, "xml-")
           || cms_mime_starts(m.sub, m.sub_len, "x-httpd-")
           || cms_mime_is(m.sub, m.sub_len, "x-shockwave-flash")
           || cms_mime_is(m.sub, m.sub_len, "hta");
}


int
cms_mime_check(const char *asset, const char *s, size_t len)
{
    cms_mime_t  m;

    if (!cms_mime_parse(s, len, &m)) {
        return CMS_MIME_INVALID;
    }

    if (cms_mime_executable(s, len)) {
        return CMS_MIME_EXECUTABLE;
    }

    if (asset == NULL) {
        return CMS_MIME_MISMATCH;
    }

    if (strcmp(asset, "file") == 0) {
        return CMS_MIME_OK;
    }

    if (strcmp(asset, "image") != 0 && strcmp(asset, "video") != 0
        && strcmp(asset, "audio") != 0)
    {
        return CMS_MIME_MISMATCH;
    }

    return cms_mime_is(m.type, m.type_len, asset) ? CMS_MIME_OK
                                                  : CMS_MIME_MISMATCH;
}


const char *
cms_mime_ext(const char *s, size_t len)
{
    size_t      i, n;
    cms_mime_t  m;

    if (!cms_mime_parse(s, len, &m)) {
        return "bin";
    }

    n = m.sub + m.sub_len - s;

    for (i = 0; i < sizeof(cms_mime_stored) / sizeof(cms_mime_stored[0]);
         i++)
    {
        /* the row's type without its parameters */
        if (strcspn(cms_mime_stored[i].type, ";") == n
            && cms_mime_eq(s, cms_mime_stored[i].type, n))
        {
            return cms_mime_stored[i].ext;
        }
    }

    return "bin";
}


const char *
cms_mime_ext_type(const char *ext, size_t len)
{
    const cms_mime_stored_t  *row;

    row = cms_mime_stored_ext(ext, len);

    return row ? row->type : "application/octet-stream";
}


int
cms_mime_ext_inline(const char *ext, size_t len)
{
    const cms_mime_stored_t  *row;

    row = cms_mime_stored_ext(ext, len);

    return row ? row->inline_safe : 0;
}


static const cms_mime_stored_t *
cms_mime_stored_ext(const char *ext, size_t len)
{
    size_t  i;

    for (i = 0; i < sizeof(cms_mime_stored) / sizeof(cms_mime_stored[0]);
         i++)
    {
        if (cms_mime_is(ext, len, cms_mime_stored[i].ext)) {
            return &cms_mime_stored[i];
        }
    }

    return NULL;
}


/* type "/" subtype, then parameters: 1 and *m filled when well-formed */
/* long: the grammar's steps in order, each with its refusal */
static int
cms_mime_parse(const char *s, size_t len, cms_mime_t *m)
{
    size_t  i, n;

    if (s == NULL || len == 0 || len > CMS_MIME_MAX) {
        return 0;
    }

    n = cms_mime_name(s, len);

    if (n == 0 || n == len || s[n] != '/') {
        return 0;
    }

    m->type = s;
    m->type_len = n;
    i = n + 1;

    n = cms_mime_name(s + i, len - i);

    if (n == 0) {
        return 0;
    }

    m->sub = s + i;
    m->sub_len = n;
    i += n;

    /* *( OWS ";" OWS token "=" token ) */
    while (i < len) {
        i += cms_mime_space(s + i, len - i);

        if (i == len || s[i] != ';') {
            return 0;
        }

        i++;
        i += cms_mime_space(s + i, len - i);

        n = cms_mime_token(s + i, len - i);

        if (n == 0 || i + n == len || s[i + n] != '=') {
            return 0;
        }

        i += n + 1;
        n = cms_mime_token(s + i, len - i);

        if (n == 0) {
            return 0;
        }

        i += n;
    }

    return 1;
}


/* the length of the restricted name at s (RFC 6838 4.2), 0 for none */
static size_t
cms_mime_name(const char *s, size_t len)
{
    size_t  i;
    char    c;

    for (i = 0; i < len && i < CMS_MIME_NAME_MAX; i++) {
        c = s[i];

        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
            || (c >= '0' && c <= '9'))
        {
            continue;
        }

        if (i > 0 && c != '\0' && strchr("!#$&-^_.+", c) != NULL) {
            continue;
        }

        break;
    }

    /* a longer name is not one */
    if (i == CMS_MIME_NAME_MAX && i < len && s[i] != '/' && s[i] != ';'
        && s[i] != ' ' && s[i] != '\t')
    {
        return 0;
    }

    return i;
}


/* the length of the RFC 9110 token at s, 0 for none */
static size_t
cms_mime_token(const char *s, size_t len)
{
    size_t  i;
    char    c;

    for (i = 0; i < len; i++) {
        c = s[i];

        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
            || (c >= '0' && c <= '9')
            || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL))
        {
            continue;
        }

        break;
    }

    return i;
}


/* the spaces and tabs at s */
static size_t
cms_mime_space(const char *s, size_t len)
{
    size_t  i;

    for (i = 0; i < len && (s[i] == ' ' || s[i] == '\t'); i++) {
        /* void */
    }

    return i;
}


/* ASCII case-insensitive comparison of n bytes with a lowercase word */
static int
cms_mime_eq(const char *s, const char *word, size_t n)
{
    size_t  i;
    char    c;

    for (i = 0; i < n; i++) {
        c = s[i];

        if (c >= 'A' && c <= 'Z') {
            c = (char) (c | 0x20);
        }

        if (c != word[i]) {
            return 0;
        }
    }

    return 1;
}


/* "word" (lowercase) within s[0 .. len), any case */
static int
cms_mime_has(const char *s, size_t len, const char *word)
{
    size_t  i, n;

    n = strlen(word);

    for (i = 0; i + n <= len; i++) {
        if (cms_mime_eq(s + i, word, n)) {
            return 1;
        }
    }

    return 0;
}


static int
cms_mime_is(const char *s, size_t len, const char *word)
{
    return len == strlen(word) && cms_mime_eq(s, word, len);
}


static int
cms_mime_starts(const char *s, size_t len, const char *word)
{
    size_t  n;

    n = strlen(word);

    return len >= n && cms_mime_eq(s, word, n);
}


static int
cms_mime_ends(const char *s, size_t len, const char *word)
{
    size_t  n;

    n = strlen(word);

    return len >= n && cms_mime_eq(s + len - n, word, n);
}
