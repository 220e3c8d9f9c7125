
/*
 * AWS Signature Version 4 (SigV4), for the object stores that speak S3's
 * API: the canonical request, the string to sign, the signing key, and
 * the two places a signature goes, an Authorization header or the query
 * of a presigned URL.
 *
 *   canonical request  method "\n" path "\n" query "\n" headers "\n"
 *                      signed headers "\n" payload hash
 *     path      the path as sent, from "/" ("" is "/").  By default (all
 *               services but S3): "." and ".." segments and empty ones
 *               removed, a trailing "/" kept, then every byte but the
 *               unreserved ones and "/" percent-encoded, "%" included:
 *               the path is encoded twice in all.  CMS_SIGV4_S3: not
 *               normalized, and encoded once: each "%XX" decoded, then
 *               encoded again, so "/a$b" and "/a%24b" sign alike, as S3
 *               reads them
 *     query     the query as sent, name[=value] pairs split at "&" (empty
 *               ones skipped); each "%XX" decoded and "+" read as a space
 *               (as S3 and Go's net/url read a query: a plus is sent as
 *               "%2B"), then encoded again and sorted by name, then value
 *     headers   every header given is signed: names in lowercase, sorted
 *               (a repeated name gets its values joined by "," in the
 *               order given), values without leading or trailing blanks
 *               and with each run of spaces and tabs made one space
 *     hash      payload_hash, or "UNSIGNED-PAYLOAD" when there is none
 *   string to sign     "AWS4-HMAC-SHA256\n" YYYYMMDDTHHMMSSZ "\n"
 *                      YYYYMMDD/region/service/aws4_request "\n"
 *                      hex(SHA-256(canonical request))
 *   signing key        HMAC-SHA256 chained: kDate = HMAC("AWS4" secret,
 *                      YYYYMMDD), kRegion, kService, then kSigning =
 *                      HMAC(kService, "aws4_request")
 *   signature          hex(HMAC-SHA256(kSigning, string to sign))
 *
 * Encoding is RFC 3986's: every byte but A-Z a-z 0-9 - . _ ~ as "%XX"
 * with upper-case hex.
 *
 * The caller passes every header it signs, "host" included.  Signed in
 * an Authorization header, a request also carries "x-amz-date" (the
 * cms_sigv4_amz_date() of the scope's time), and S3 wants
 * "x-amz-content-sha256" (the payload hash).  A presigned request
 * (expires > 0) signs its headers (usually "host" alone) and its query
 * gains X-Amz-Algorithm, X-Amz-Credential, X-Amz-Date, X-Amz-Expires and
 * X-Amz-SignedHeaders; a caller's parameter of one of those names, or
 * X-Amz-Signature, is refused.  A session token goes in the caller's
 * headers (x-amz-security-token) or query (X-Amz-Security-Token).
 *
 * Contract: pure functions over the caller's buffers; nothing is
 * allocated but OpenSSL's digest contexts inside a call.  A text comes
 * in two calls: cms_sigv4_size() says the bytes it takes, its NUL
 * included, and cms_sigv4_text() writes the text and its NUL into the
 * caller's buffer of that size.  Both return CMS_SIGV4_OK or the same
 * CMS_SIGV4_E_* code for the same input, and CMS_SIGV4_E_SPACE when the
 * buffer is smaller than cms_sigv4_size() said; after an error the
 * buffer holds nothing usable.  Input past a limit below is refused,
 * never cut.  A cache belongs to its caller: one per thread.
 */


#ifndef _CMS_SIGV4_H_INCLUDED_
#define _CMS_SIGV4_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>


#define CMS_SIGV4_ALGORITHM     "AWS4-HMAC-SHA256"
#define CMS_SIGV4_UNSIGNED      "UNSIGNED-PAYLOAD"
#define CMS_SIGV4_EMPTY_HASH                                                  \
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

#define CMS_SIGV4_DATE_LEN      16      /* "YYYYMMDDTHHMMSSZ" */
#define CMS_SIGV4_HEX_LEN       64      /* a hash or a signature in hex */
#define CMS_SIGV4_KEY_LEN       32      /* the signing key */

/* limits: what is longer or more is refused */
#define CMS_SIGV4_METHOD_MAX    32
#define CMS_SIGV4_PATH_MAX      4096
#define CMS_SIGV4_QUERY_MAX     8192
#define CMS_SIGV4_PARAMS_MAX    64
#define CMS_SIGV4_HEADERS_MAX   32
#define CMS_SIGV4_NAME_MAX      64      /* a header's name */
#define CMS_SIGV4_VALUE_MAX     4096    /* a header's value */
#define CMS_SIGV4_KEY_ID_MAX    128     /* unreserved characters */
#define CMS_SIGV4_SECRET_MAX    128
#define CMS_SIGV4_REGION_MAX    32      /* unreserved characters */
#define CMS_SIGV4_SERVICE_MAX   32      /* unreserved characters */
#define CMS_SIGV4_EXPIRES_MAX   604800  /* seconds: 7 days, AWS's most */

/* "YYYYMMDD/region/service" */
#define CMS_SIGV4_SCOPE_MAX                                                   \
    (8 + 1 + CMS_SIGV4_REGION_MAX + 1 + CMS_SIGV4_SERVICE_MAX)

/* cms_sigv4_request_t.flags */
#define CMS_SIGV4_NO_NORMALIZE  0x01    /* keep ".", ".." and "//" */
#define CMS_SIGV4_SINGLE_ENCODE 0x02    /* decode the path, encode once */
#define CMS_SIGV4_S3            (CMS_SIGV4_NO_NORMALIZE                       \
                                 | CMS_SIGV4_SINGLE_ENCODE)

/* results */
#define CMS_SIGV4_OK             0
#define CMS_SIGV4_E_METHOD      -1      /* empty, or not an HTTP token */
#define CMS_SIGV4_E_PATH        -2      /* no "/" first, a control byte
                                           but tab, a bad "%XX" (S3) */
#define CMS_SIGV4_E_QUERY       -3      /* a bad "%XX", a reserved name */
#define CMS_SIGV4_E_HEADER      -4      /* a name not a token, a control
                                           byte but tab in a value */
#define CMS_SIGV4_E_TOO_MANY    -5      /* parameters or headers */
#define CMS_SIGV4_E_TOO_LONG    -6      /* a field past its limit */
#define CMS_SIGV4_E_PAYLOAD     -7      /* not 64 lowercase hex digits */
#define CMS_SIGV4_E_SCOPE       -8      /* an empty or bad key id, secret,
                                           region or service */
#define CMS_SIGV4_E_TIME        -9      /* before 1970 or after 9999 */
#define CMS_SIGV4_E_EXPIRES    -10      /* out of 1 .. EXPIRES_MAX, or
                                           set for a header signature */
#define CMS_SIGV4_E_SPACE      -11      /* out is smaller than needed */
#define CMS_SIGV4_E_CRYPTO     -12      /* OpenSSL failed */
#define CMS_SIGV4_E_TEXT       -13      /* no such text */

/* the texts of cms_sigv4_size() and cms_sigv4_text() */
#define CMS_SIGV4_CANONICAL_REQUEST  0
#define CMS_SIGV4_STRING_TO_SIGN     1
#define CMS_SIGV4_AUTHORIZATION      2
#define CMS_SIGV4_PRESIGNED_QUERY    3


typedef struct {
    const char                 *name;
    size_t                      name_len;
    const char                 *value;
    size_t                      value_len;
} cms_sigv4_header_t;


/*
 * The signing key of one (date, region, service) and secret, kept so that
 * it is derived once a day rather than four HMACs per request.  Zeroed, it
 * is empty.  The secret is recognised by its SHA-256, so a cache never
 * hands out a key derived from another secret.
 */
typedef struct {
    char                        scope[CMS_SIGV4_SCOPE_MAX];
    size_t                      scope_len;          /* 0: empty */
    unsigned char               secret_hash[32];
    unsigned char               key[CMS_SIGV4_KEY_LEN];
} cms_sigv4_cache_t;


/* who signs, where, and when */
typedef struct {
    const char                 *key_id;
    size_t                      key_id_len;
    const char                 *secret;
    size_t                      secret_len;
    const char                 *region;
    size_t                      region_len;
    const char                 *service;            /* "s3" */
    size_t                      service_len;
    int64_t                     time;               /* Unix seconds, UTC */
    cms_sigv4_cache_t          *cache;              /* or NULL */
} cms_sigv4_scope_t;


typedef struct {
    const char                 *method;
    size_t                      method_len;
    const char                 *path;               /* as sent */
    size_t                      path_len;
    const char                 *query;              /* as sent, no "?" */
    size_t                      query_len;
    const cms_sigv4_header_t   *headers;
    size_t                      nheaders;
    const char                 *payload_hash;       /* NULL: unsigned */
    size_t                      payload_hash_len;
    unsigned                    flags;              /* CMS_SIGV4_* */
    unsigned                    expires;            /* > 0: presigned */
} cms_sigv4_request_t;


/*
 * The ISO 8601 basic time of t ("20150830T123600Z") and its NUL into
 * out.  Returns CMS_SIGV4_OK, or CMS_SIGV4_E_TIME for a t before 1970 or
 * past 9999.
 */
int cms_sigv4_amz_date(int64_t t, char out[CMS_SIGV4_DATE_LEN + 1]);

/*
 * The payload hash of p[0 .. n): SHA-256 in lowercase hex, and a NUL,
 * into out.  Returns CMS_SIGV4_OK or CMS_SIGV4_E_CRYPTO.
 */
int cms_sigv4_payload_hash(const void *p, size_t n,
    char out[CMS_SIGV4_HEX_LEN + 1]);

/*
 * The signing key (kSigning) of s into key, from s->cache when it holds
 * the key of this day, region, service and secret; else derived and, with
 * a cache, kept there.  Returns CMS_SIGV4_OK, CMS_SIGV4_E_SCOPE,
 * CMS_SIGV4_E_TOO_LONG, CMS_SIGV4_E_TIME or CMS_SIGV4_E_CRYPTO.  The
 * caller wipes key when done (OPENSSL_cleanse).
 */
int cms_sigv4_signing_key(const cms_sigv4_scope_t *s,
    unsigned char key[CMS_SIGV4_KEY_LEN]);

/*
 * Text "text" (CMS_SIGV4_CANONICAL_REQUEST ... CMS_SIGV4_PRESIGNED_QUERY)
 * of r as s signs it: cms_sigv4_size() sets *size to the bytes it takes,
 * NUL included; cms_sigv4_text() writes it and its NUL into out[0 ..
 * size).
 *
 *   CANONICAL_REQUEST  the canonical request
 *   STRING_TO_SIGN     the string to sign
 *   AUTHORIZATION      the Authorization header's value:
 *                      "AWS4-HMAC-SHA256 Credential=<key id>/<scope>,
 *                      SignedHeaders=<names>, Signature=<hex>"; r->expires
 *                      must be 0 (CMS_SIGV4_E_EXPIRES otherwise)
 *   PRESIGNED_QUERY    the query of the presigned URL, to follow "?" after
 *                      the path signed: the canonical query (the caller's
 *                      parameters and the X-Amz-* ones, sorted, encoded),
 *                      then "&X-Amz-Signature=<hex>"; r->expires is the
 *                      URL's lifetime, 1 to CMS_SIGV4_EXPIRES_MAX seconds
 *                      (CMS_SIGV4_E_EXPIRES otherwise)
 *
 * Another "text" is CMS_SIGV4_E_TEXT.
 */
int cms_sigv4_size(const cms_sigv4_request_t *r, const cms_sigv4_scope_t *s,
    int text, size_t *size);
int cms_sigv4_text(const cms_sigv4_request_t *r, const cms_sigv4_scope_t *s,
    int text, char *out, size_t size);

/* the signature of r by s, 64 hex digits and a NUL */
int cms_sigv4_signature(const cms_sigv4_request_t *r,
    const cms_sigv4_scope_t *s, char out[CMS_SIGV4_HEX_LEN + 1]);

/* what a result means, for a log line; static, never NULL */
const char *cms_sigv4_error(int rc);


#endif /* _CMS_SIGV4_H_INCLUDED_ */
