
/*
 * cms-admin: facilities, extensions, extension keys and invoices.  They
 * stand in for the install flow and the billing back office of later
 * issues, so that tests and the demo seed have records to work on.
 */


#include "cms_admin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>


/* array_to_string() of the 3 privileges, commas, NUL */
#define CMS_ADMIN_PRIVILEGES_LEN  64

/* --expires-in: up to 10 years ahead; down to a year back (for tests) */
#define CMS_ADMIN_EXPIRES_MAX     (10L * 366 * 86400)
#define CMS_ADMIN_EXPIRES_MIN     (-366L * 86400)

#define CMS_ADMIN_AMOUNT_INT_MAX  15
#define CMS_ADMIN_AMOUNT_FRAC_MAX 6


static int cms_admin_check_ext_name(const char *s);
static int cms_admin_check_chars(const char *what, const char *s,
    size_t min, size_t max, const char *allowed);
static int cms_admin_check_status(const char *s);
static int cms_admin_check_amount(const char *s);
static int cms_admin_check_expires(const char *s);
static int cms_admin_extkey_explain(cms_admin_ctx_t *ctx,
    const char *extension);


static const cms_admin_query_t  cms_admin_facility_insert = {
    "facility create",
    "INSERT INTO facilities (name) VALUES ($1) RETURNING id",
    1, NULL
};


static const cms_admin_pg_error_t  cms_admin_extension_errors[] = {
    { "23505", "the facility already has an extension with this name" },
    { "23503", "no such facility" },
    { NULL, NULL }
};

static const cms_admin_query_t  cms_admin_extension_insert = {
    "extension create",
    "INSERT INTO extensions (facility_id, name, version, category, status,"
    "                        required_privilege, privileges)"
    " VALUES ($1::uuid, $2, $3, $4, $5, $6, $7::text[]) RETURNING id",
    7, cms_admin_extension_errors
};


static const cms_admin_listing_t  cms_admin_extension_listing = {
    "facility",
    { "extension list",
      "SELECT id, name, version, status FROM extensions"
      " WHERE facility_id = $1::uuid ORDER BY name, id",
      1, NULL },
    "id name version status"
};


static const cms_admin_pg_error_t  cms_admin_extkey_errors[] = {
    { "23505", "key collision: run the command again" },
    { NULL, NULL }
};

/*
 * The key takes the extension's facility; its privileges default to the
 * extension's and may not go beyond them.  $6 NULL: no expiry.
 */

static const cms_admin_query_t  cms_admin_extkey_insert = {
    "extkey create",
    "INSERT INTO extension_keys (extension_id, facility_id, livemode,"
    "                            privileges, key_prefix, secret_hash,"
    "                            expires_at)"
    " SELECT e.id, e.facility_id, $2::boolean,"
    "        coalesce($3::text[], e.privileges), $4, decode($5, 'hex'),"
    "        now() + make_interval(secs => $6::bigint)"
    " FROM extensions e"
    " WHERE e.id = $1::uuid"
    "   AND coalesce($3::text[], e.privileges) <@ e.privileges"
    " RETURNING id",
    6, cms_admin_extkey_errors
};

static const cms_admin_query_t  cms_admin_extkey_extension = {
    "extkey create",
    "SELECT array_to_string(privileges, ',') FROM extensions"
    " WHERE id = $1::uuid",
    1, NULL
};

static const cms_admin_listing_t  cms_admin_extkey_listing = {
    "extension",
    { "extkey list",
      "SELECT id, key_prefix,"
      "       CASE WHEN livemode THEN 'live' ELSE 'sandbox' END,"
      "       array_to_string(privileges, ','), cms_ts(created_at),"
      "       coalesce(cms_ts(expires_at), '-'),"
      "       coalesce(cms_ts(revoked_at), '-')"
      " FROM extension_keys WHERE extension_id = $1::uuid"
      " ORDER BY created_at, id",
      1, NULL },
    "id prefix live|sandbox privileges created_at expires_at revoked_at"
};

/* revoking twice keeps the first time and is not an error */

static const cms_admin_revoking_t  cms_admin_extkey_revoking = {
    { "extkey revoke",
      "UPDATE extension_keys SET revoked_at = coalesce(revoked_at, now())"
      " WHERE id = $1::uuid RETURNING id",
      1, NULL },
    "extension key"
};


static const cms_admin_pg_error_t  cms_admin_invoice_errors[] = {
    { "23503", "no such facility" },
    { NULL, NULL }
};

static const cms_admin_query_t  cms_admin_invoice_insert = {
    "invoice create",
    "INSERT INTO invoices (facility_id, livemode, patient_id, amount,"
    "                      currency)"
    " VALUES ($1::uuid, $2::boolean, $3, $4::numeric, $5) RETURNING id",
    5, cms_admin_invoice_errors
};


/* what an extension key may do (DESIGN.md, Extensions) */

static const char *const  cms_admin_ext_privileges[] = {
    "ext:billing:read", "ext:billing:write", "ext:control:write", NULL
};


/*
 * facility create --name N: prints the new facility's id.
 */

int
cms_admin_facility_create(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    const char  *params[1];

    if (cms_admin_check_printable("name", a->name, 1, 200) != 0) {
        return -1;
    }

    params[0] = a->name;

    return cms_admin_pg_print_id(ctx, &cms_admin_facility_insert, params);
}


/*
 * extension create --facility ID --name NAME --version V [--category C]
 * [--status S] [--required-privilege P] [--privileges LIST]: prints the
 * new extension's id.  The status defaults to "running": the command
 * stands in for an install that has completed.
 */

int
cms_admin_extension_create(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    char         privileges[CMS_ADMIN_NAME_LIST_LEN];
    const char  *params[7], *status, *category, *required;

    status = a->status ? a->status : "running";
    category = a->category ? a->category : "";
    required = a->required_privilege ? a->required_privilege : "";

    if (cms_admin_check_uuid("facility", a->facility) != 0
        || cms_admin_check_ext_name(a->name) != 0
        || cms_admin_check_chars("version", a->version, 1, 64,
                                 "0123456789abcdefghijklmnopqrstuvwxyz"
                                 "ABCDEFGHIJKLMNOPQRSTUVWXYZ.+-")
           != 0
        || cms_admin_check_printable("category", category, 0, 64) != 0
        || cms_admin_check_status(status) != 0
        || cms_admin_check_chars("required-privilege", required, 0, 128,
                                 "0123456789abcdefghijklmnopqrstuvwxyz"
                                 ":._-")
           != 0
        || cms_admin_name_list("privileges",
                               a->privileges ? a->privileges : "",
                               cms_admin_ext_privileges, privileges,
                               sizeof(privileges))
           != 0)
    {
        return -1;
    }

    params[0] = a->facility;
    params[1] = a->name;
    params[2] = a->version;
    params[3] = category;
    params[4] = status;
    params[5] = required;
    params[6] = privileges;

    return cms_admin_pg_print_id(ctx, &cms_admin_extension_insert, params);
}


/*
 * extension list --facility ID: prints one tab-separated line per
 * extension of the facility, by name: id, name, version, status.
 */

int
cms_admin_extension_list(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    return cms_admin_list(ctx, &cms_admin_extension_listing, a->facility);
}


/*
 * extkey create --extension ID [--sandbox] [--privileges LIST]
 * [--expires-in SECONDS]: prints the new sk_live_ (or sk_sandbox_) key,
 * shown only once.  Stored: the extension's facility, the mode, the
 * privileges (default: the extension's), the visible prefix, the HMAC of
 * the whole key under the API key pepper, the expiry.
 */

int
cms_admin_extkey_create(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    int                  rc;
    char                 id[CMS_ADMIN_ID_LEN + 1];
    char                 privileges[CMS_ADMIN_NAME_LIST_LEN];
    const char          *params[6];
    cms_admin_new_key_t  k;

    if (cms_admin_check_uuid("extension", a->extension) != 0
        || (a->privileges != NULL
            && cms_admin_name_list("privileges", a->privileges,
                                   cms_admin_ext_privileges, privileges,
                                   sizeof(privileges))
               != 0)
        || (a->expires_in != NULL
            && cms_admin_check_expires(a->expires_in) != 0))
    {
        return -1;
    }

    if (cms_admin_key_new(ctx, a->sandbox ? CMS_KEY_KIND_SK_SANDBOX
                                          : CMS_KEY_KIND_SK_LIVE, &k)
        != 0)
    {
        return -1;
    }

    params[0] = a->extension;
    params[1] = a->sandbox ? "false" : "true";
    params[2] = a->privileges ? privileges : NULL;
    params[3] = k.prefix;
    params[4] = k.hash_hex;
    params[5] = a->expires_in;

    rc = cms_admin_pg_one(ctx, &cms_admin_extkey_insert, params, id,
                          sizeof(id));

    if (rc == 1) {
        printf("%s\n", k.key);

    } else if (rc == 0) {
        rc = cms_admin_extkey_explain(ctx, a->extension);
    }

    OPENSSL_cleanse(&k, sizeof(k));

    return rc == 1 ? 0 : -1;
}


/*
 * extkey list --extension ID: prints one tab-separated line per key: id,
 * visible prefix, live or sandbox, privileges, created_at, expires_at or
 * "-", revoked_at or "-".
 */

int
cms_admin_extkey_list(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    return cms_admin_list(ctx, &cms_admin_extkey_listing, a->extension);
}


/*
 * extkey revoke --id KEYID: prints the key's id.  nginx looks extension
 * keys up on every request, so the next request with it fails.
 */

int
cms_admin_extkey_revoke(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    return cms_admin_revoke(ctx, &cms_admin_extkey_revoking, a->id);
}


/*
 * invoice create --facility ID --patient P --amount 12.50 --currency XOF
 * [--sandbox]: prints the new invoice's id; it is pending_payment, in
 * live mode unless --sandbox.
 */

int
cms_admin_invoice_create(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    const char  *params[5];

    if (cms_admin_check_uuid("facility", a->facility) != 0
        || cms_admin_check_printable("patient", a->patient, 1, 200) != 0
        || cms_admin_check_amount(a->amount) != 0
        || cms_admin_check_chars("currency", a->currency, 3, 3,
                                 "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
           != 0)
    {
        return -1;
    }

    params[0] = a->facility;
    params[1] = a->sandbox ? "false" : "true";
    params[2] = a->patient;
    params[3] = a->amount;
    params[4] = a->currency;

    return cms_admin_pg_print_id(ctx, &cms_admin_invoice_insert, params);
}


/* ^[a-z0-9]+(-[a-z0-9]+)*$, at most 64 bytes, as the schema's CHECK */

static int
cms_admin_check_ext_name(const char *s)
{
    size_t  i, n;

    if (cms_admin_check_chars("name", s, 1, 64,
                              "0123456789abcdefghijklmnopqrstuvwxyz-")
        != 0)
    {
        return -1;
    }

    n = strlen(s);

    for (i = 0; i < n; i++) {
        if (s[i] == '-' && (i == 0 || i == n - 1 || s[i - 1] == '-')) {
            return cms_admin_error("--name \"%s\": lowercase letters and "
                                   "digits in words joined by single '-'",
                                   s);
        }
    }

    return 0;
}


/* s is given, has min to max bytes, all of them in allowed */

static int
cms_admin_check_chars(const char *what, const char *s, size_t min,
    size_t max, const char *allowed)
{
    if (cms_admin_check_text(what, s, min, max) != 0) {
        return -1;
    }

    if (strspn(s, allowed) != strlen(s)) {
        return cms_admin_error("--%s \"%s\" may only hold the characters "
                               "\"%s\"", what, s, allowed);
    }

    return 0;
}


static int
cms_admin_check_status(const char *s)
{
    if (strcmp(s, "installing") == 0 || strcmp(s, "running") == 0
        || strcmp(s, "reloading") == 0)
    {
        return 0;
    }

    return cms_admin_error("--status \"%s\" is not one of installing "
                           "running reloading", s);
}


/*
 * A positive decimal: 1 to 15 digits, optionally '.' and 1 to 6 digits,
 * not zero.  PostgreSQL's numeric takes it as it is, with no rounding.
 */

static int
cms_admin_check_amount(const char *s)
{
    size_t       i, f;
    const char  *dot;

    if (s == NULL) {
        return cms_admin_error("--amount is required");
    }

    i = strspn(s, "0123456789");
    dot = s + i;
    f = (*dot == '.') ? strspn(dot + 1, "0123456789") : 0;

    if (i < 1 || i > CMS_ADMIN_AMOUNT_INT_MAX
        || (*dot != '\0'
            && (*dot != '.' || f < 1 || f > CMS_ADMIN_AMOUNT_FRAC_MAX
                || dot[1 + f] != '\0'))
        || strspn(s, "0.") == strlen(s))
    {
        return cms_admin_error("--amount \"%s\" is not a positive decimal "
                               "such as 12.50 (at most %d digits, %d after "
                               "the point)", s, CMS_ADMIN_AMOUNT_INT_MAX,
                               CMS_ADMIN_AMOUNT_FRAC_MAX);
    }

    return 0;
}


/* --expires-in: whole seconds from now; 0 or less is already expired */

static int
cms_admin_check_expires(const char *s)
{
    long   v;
    char  *end;

    errno = 0;
    v = strtol(s, &end, 10);

    if (errno != 0 || end == s || *end != '\0' || v < CMS_ADMIN_EXPIRES_MIN
        || v > CMS_ADMIN_EXPIRES_MAX)
    {
        return cms_admin_error("--expires-in \"%s\" is not %ld to %ld "
                               "seconds", s, CMS_ADMIN_EXPIRES_MIN,
                               CMS_ADMIN_EXPIRES_MAX);
    }

    return 0;
}


/* extkey create inserted nothing: no such extension, or privileges
 * beyond the extension's */

static int
cms_admin_extkey_explain(cms_admin_ctx_t *ctx, const char *extension)
{
    int          rc;
    char         have[CMS_ADMIN_PRIVILEGES_LEN];
    const char  *params[1];

    params[0] = extension;

    rc = cms_admin_pg_one(ctx, &cms_admin_extkey_extension, params, have,
                          sizeof(have));

    if (rc == 0) {
        return cms_admin_error("extkey create: no extension with id \"%s\"",
                               extension);
    }

    if (rc == 1) {
        return cms_admin_error("extkey create: --privileges go beyond the "
                               "extension's (\"%s\")", have);
    }

    return -1;
}
