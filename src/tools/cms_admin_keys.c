
/*
 * cms-admin: session tokens and API keys.
 */


#include "cms_admin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/crypto.h>

#include "cms_hex.h"
#include "cms_jwt.h"
#include "cms_key.h"


/* "{" + 20 distinct scopes of at most 17 characters, commas, "}", NUL */
#define CMS_ADMIN_SCOPES_LEN  400

#define CMS_ADMIN_TTL_DEFAULT  86400
#define CMS_ADMIN_TTL_MAX      (366 * 86400)

#define CMS_ADMIN_SID_BYTES    16


static int cms_admin_parse_ttl(const char *s, long *ttl);
static int cms_admin_session_sign(cms_admin_ctx_t *ctx, const char *user_id,
    const char *gen, long ttl);
static int cms_admin_scopes(const char *list, char *out, size_t size);
static int cms_admin_scope_check(const char *p, size_t n, unsigned *seen);
static int cms_admin_scope_index(const char *s, size_t n);


static const cms_admin_query_t  cms_admin_session_user = {
    "session",
    "SELECT id, active, session_gen FROM users"
    " WHERE lower(email) = lower($1)",
    1, NULL
};


static const cms_admin_pg_error_t  cms_admin_key_errors[] = {
    { "23505", "key collision: run the command again" },
    { "23503", "no such workspace" },
    { NULL, NULL }
};

/* the creator is a current owner or admin of the workspace */

static const cms_admin_query_t  cms_admin_key_insert = {
    "key create",
    "INSERT INTO api_keys"
    " (workspace_id, created_by, name, key_prefix, secret_hash, scopes)"
    " SELECT m.workspace_id, m.user_id, $3, $4, decode($5, 'hex'),"
    "        $6::text[]"
    " FROM members m JOIN users u ON u.id = m.user_id"
    " WHERE m.workspace_id = $1::uuid AND lower(u.email) = lower($2)"
    "   AND m.role IN ('owner', 'admin')"
    " RETURNING id",
    6, cms_admin_key_errors
};

static const cms_admin_listing_t  cms_admin_key_listing = {
    "workspace",
    { "key list",
      "SELECT id, key_prefix, name, array_to_string(scopes, ','),"
      "       cms_ts(created_at), coalesce(cms_ts(revoked_at), '-')"
      " FROM api_keys WHERE workspace_id = $1::uuid"
      " ORDER BY created_at, id",
      1, NULL },
    "id prefix name scopes created_at revoked_at"
};

/* revoking twice keeps the first time and is not an error */

static const cms_admin_revoking_t  cms_admin_key_revoking = {
    { "key revoke",
      "UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())"
      " WHERE id = $1::uuid RETURNING id",
      1, NULL },
    "key"
};


static const char  *cms_admin_resources[] = {
    "articles", "videos", "categories", "media", "comments", "custom",
    "pages", "webhooks", "podcasts", "subscribers", NULL
};


/*
 * session --email E [--ttl SECONDS]: prints a session JWT for an active
 * user, signed with the CMS_KDF_SESSION sub-key of the secret.
 */

int
cms_admin_session(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    int          rc;
    long         ttl;
    PGresult    *res;
    const char  *params[1];

    if (a->email == NULL) {
        return cms_admin_error("--email is required");
    }

    if (cms_admin_parse_ttl(a->ttl, &ttl) != 0) {
        return -1;
    }

    params[0] = a->email;

    res = cms_admin_pg_run(ctx, &cms_admin_session_user, params);

    if (res == NULL) {
        return -1;
    }

    if (PQntuples(res) != 1) {
        rc = cms_admin_error("session: no user with email \"%s\"", a->email);

    } else if (strcmp(PQgetvalue(res, 0, 1), "t") != 0) {
        rc = cms_admin_error("session: user \"%s\" is inactive", a->email);

    } else {
        rc = cms_admin_session_sign(ctx, PQgetvalue(res, 0, 0),
                                    PQgetvalue(res, 0, 2), ttl);
    }

    PQclear(res);

    return rc;
}


/*
 * key create --workspace ID --creator EMAIL --name N --scopes LIST:
 * prints the new svc_live_ key; only its HMAC and visible prefix are kept.
 */

int
cms_admin_key_create(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    int                  rc;
    char                 id[CMS_ADMIN_ID_LEN + 1];
    char                 scopes[CMS_ADMIN_SCOPES_LEN];
    const char          *params[6];
    cms_admin_new_key_t  k;

    if (cms_admin_check_uuid("workspace", a->workspace) != 0) {
        return -1;
    }

    if (a->creator == NULL || a->name == NULL || a->name[0] == '\0'
        || strlen(a->name) > 200)
    {
        return cms_admin_error("key create: --creator and --name (1 to 200 "
                               "bytes) are required");
    }

    if (cms_admin_scopes(a->scopes, scopes, sizeof(scopes)) != 0
        || cms_admin_key_new(ctx, CMS_KEY_KIND_SVC_LIVE, &k) != 0)
    {
        return -1;
    }

    params[0] = a->workspace;
    params[1] = a->creator;
    params[2] = a->name;
    params[3] = k.prefix;
    params[4] = k.hash_hex;
    params[5] = scopes;

    rc = cms_admin_pg_one(ctx, &cms_admin_key_insert, params, id,
                          sizeof(id));

    if (rc == 1) {
        printf("%s\n", k.key);

    } else if (rc == 0) {
        rc = cms_admin_error("key create: \"%s\" is not an owner or admin "
                             "of the workspace", a->creator);
    }

    OPENSSL_cleanse(&k, sizeof(k));

    return rc == 1 ? 0 : -1;
}


/*
 * key list --workspace ID: prints one tab-separated line per key: id,
 * visible prefix, name, scopes, created_at, revoked_at or "-".
 */

int
cms_admin_key_list(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    return cms_admin_list(ctx, &cms_admin_key_listing, a->workspace);
}


/*
 * key revoke --id KEYID: prints the key's id.  The next request with the
 * key fails: nginx looks keys up on every request.
 */

int
cms_admin_key_revoke(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    return cms_admin_revoke(ctx, &cms_admin_key_revoking, a->id);
}


/* --ttl: 1 to CMS_ADMIN_TTL_MAX seconds, CMS_ADMIN_TTL_DEFAULT if absent */

static int
cms_admin_parse_ttl(const char *s, long *ttl)
{
    char  *end;

    if (s == NULL) {
        *ttl = CMS_ADMIN_TTL_DEFAULT;
        return 0;
    }

    errno = 0;
    *ttl = strtol(s, &end, 10);

    if (errno != 0 || end == s || *end != '\0' || *ttl < 1
        || *ttl > CMS_ADMIN_TTL_MAX)
    {
        return cms_admin_error("--ttl \"%s\" is not 1 to %d seconds", s,
                               CMS_ADMIN_TTL_MAX);
    }

    return 0;
}


/*
 * Prints the JWT {"sub":user_id,"sid":<random>,"iat":now,"exp":now+ttl,
 * "gen":gen}, keys in that order (what nginx's login writes too); gen is
 * the user's session generation, digits from the database.
 */

static int
cms_admin_session_sign(cms_admin_ctx_t *ctx, const char *user_id,
    const char *gen, long ttl)
{
    int            n;
    char           payload[256], sid[2 * CMS_ADMIN_SID_BYTES + 1];
    char           token[CMS_JWT_MAX_LEN + 1];
    size_t         len;
    time_t         now;
    unsigned char  rnd[CMS_ADMIN_SID_BYTES], key[CMS_KDF_LEN];

    if (cms_admin_random(rnd, sizeof(rnd)) != 0) {
        return -1;
    }

    cms_hex_encode(rnd, sizeof(rnd), sid);
    sid[2 * CMS_ADMIN_SID_BYTES] = '\0';

    now = time(NULL);

    n = snprintf(payload, sizeof(payload),
                 "{\"sub\":\"%s\",\"sid\":\"%s\",\"iat\":%lld,\"exp\":%lld,"
                 "\"gen\":%s}",
                 user_id, sid, (long long) now, (long long) now + ttl, gen);

    if (n < 0 || (size_t) n >= sizeof(payload)
        || cms_admin_secret_derive(ctx, CMS_KDF_SESSION, key) != 0)
    {
        return cms_admin_error("session: cannot build the token");
    }

    len = cms_jwt_sign(key, payload, (size_t) n, token, sizeof(token));
    OPENSSL_cleanse(key, sizeof(key));

    if (len == 0) {
        return cms_admin_error("session: cannot sign the token");
    }

    printf("%.*s\n", (int) len, token);

    return 0;
}


/*
 * Checks the comma-separated scope list and writes it as a PostgreSQL
 * array literal, "{articles:read,pages:write}", passed as a parameter.
 * Scopes hold only [a-z:], so no element needs quoting.
 */

static int
cms_admin_scopes(const char *list, char *out, size_t size)
{
    size_t       n, used;
    unsigned     seen;
    const char  *p, *e;

    if (list == NULL || list[0] == '\0') {
        return cms_admin_error("--scopes is required, e.g. "
                               "articles:read,articles:write");
    }

    seen = 0;
    used = 0;
    out[used++] = '{';

    for (p = list; ; p = e + 1) {
        e = strchr(p, ',');
        n = e ? (size_t) (e - p) : strlen(p);

        if (cms_admin_scope_check(p, n, &seen) != 0) {
            return -1;
        }

        /* cannot fail for distinct scopes; checked all the same */

        if (used + n + 2 > size) {
            return cms_admin_error("--scopes: too long");
        }

        memcpy(out + used, p, n);
        used += n;
        out[used++] = e ? ',' : '}';

        if (e == NULL) {
            break;
        }
    }

    out[used] = '\0';

    return 0;
}


/* the scope p[0 .. n): known, and not in seen, where it is added */

static int
cms_admin_scope_check(const char *p, size_t n, unsigned *seen)
{
    int  i;

    i = cms_admin_scope_index(p, n);

    if (i < 0) {
        return cms_admin_error("--scopes: \"%.*s\" is not RESOURCE:read "
                               "or RESOURCE:write (see cms-admin help)",
                               (int) n, p);
    }

    if (*seen & (1u << i)) {
        return cms_admin_error("--scopes: \"%.*s\" is listed twice",
                               (int) n, p);
    }

    *seen |= 1u << i;

    return 0;
}


/*
 * For s[0 .. n) = RESOURCE:read or RESOURCE:write, a distinct number below
 * 32 (2 * resource + write); -1 for anything else.
 */

static int
cms_admin_scope_index(const char *s, size_t n)
{
    int          i, write;
    size_t       r;
    const char  *colon;

    colon = memchr(s, ':', n);

    if (colon == NULL) {
        return -1;
    }

    r = (size_t) (colon - s);

    if (n - r - 1 == 4 && memcmp(colon + 1, "read", 4) == 0) {
        write = 0;

    } else if (n - r - 1 == 5 && memcmp(colon + 1, "write", 5) == 0) {
        write = 1;

    } else {
        return -1;
    }

    for (i = 0; cms_admin_resources[i] != NULL; i++) {
        if (strlen(cms_admin_resources[i]) == r
            && memcmp(s, cms_admin_resources[i], r) == 0)
        {
            return 2 * i + write;
        }
    }

    return -1;
}


/*
 * A fresh key of the given kind into k: the key string, its visible prefix
 * and the hex of its stored hash, cms_key_hash() under the API key pepper
 * (the same for every kind: nginx hashes what the client sends, whatever
 * its prefix), each NUL-terminated.  The caller wipes k.  Returns 0, or -1
 * (printed).
 */

int
cms_admin_key_new(cms_admin_ctx_t *ctx, cms_key_kind_e kind,
    cms_admin_new_key_t *k)
{
    size_t         n, v;
    cms_key_t      parsed;
    unsigned char  secret[CMS_KEY_SECRET_LEN], pepper[CMS_KDF_LEN];
    unsigned char  hash[CMS_KDF_LEN];

    if (cms_admin_random(secret, sizeof(secret)) != 0
        || cms_admin_secret_derive(ctx, CMS_KDF_API_KEY, pepper) != 0)
    {
        return -1;
    }

    n = cms_key_format(cms_key_kind_prefix(kind), secret, k->key,
                       CMS_KEY_MAX_LEN);
    OPENSSL_cleanse(secret, sizeof(secret));

    v = 0;

    if (n > 0 && cms_key_parse(k->key, n, &parsed) == CMS_KEY_OK) {
        v = cms_key_visible_prefix(&parsed, k->prefix, CMS_KEY_VISIBLE_MAX);
    }

    if (v == 0 || cms_key_hash(pepper, k->key, n, hash) != 0) {
        OPENSSL_cleanse(pepper, sizeof(pepper));
        return cms_admin_error("cannot build the key");
    }

    OPENSSL_cleanse(pepper, sizeof(pepper));

    k->key[n] = '\0';
    k->prefix[v] = '\0';
    cms_hex_encode(hash, sizeof(hash), k->hash_hex);
    k->hash_hex[2 * CMS_KDF_LEN] = '\0';

    return 0;
}
