
/*
 * cms-admin: extension management's credentials.  Admin credentials
 * (sk_admin_ keys of a facility, for /v1/extensions) and facility
 * memberships (a user's privileges in a facility, which the UI-token route
 * checks against a manifest's required_privilege).
 */


#include "cms_admin.h"

#include <stdio.h>
#include <string.h>
#include <openssl/crypto.h>


static const cms_admin_pg_error_t  cms_admin_admin_errors[] = {
    { "23505", "key collision: run the command again" },
    { "23503", "no such facility" },
    { NULL, NULL }
};

static const cms_admin_query_t  cms_admin_admin_insert = {
    "admin create",
    "INSERT INTO admin_credentials (facility_id, name, privileges,"
    "                               key_prefix, secret_hash)"
    " VALUES ($1::uuid, $2, $3::text[], $4, decode($5, 'hex'))"
    " RETURNING id",
    5, cms_admin_admin_errors
};

static const cms_admin_listing_t  cms_admin_admin_listing = {
    "facility",
    { "admin list",
      "SELECT id, key_prefix, name, array_to_string(privileges, ','),"
      "       cms_ts(created_at), coalesce(cms_ts(revoked_at), '-')"
      " FROM admin_credentials WHERE facility_id = $1::uuid"
      " ORDER BY created_at, id",
      1, NULL },
    "id prefix name privileges created_at revoked_at"
};

/* revoking twice keeps the first time and is not an error */

static const cms_admin_revoking_t  cms_admin_admin_revoking = {
    { "admin revoke",
      "UPDATE admin_credentials"
      " SET revoked_at = coalesce(revoked_at, now())"
      " WHERE id = $1::uuid RETURNING id",
      1, NULL },
    "admin credential"
};


static const cms_admin_pg_error_t  cms_admin_facility_member_errors[] = {
    { "23503", "no such facility" },
    { NULL, NULL }
};

/* the privileges replace those the user had in the facility */

static const cms_admin_query_t  cms_admin_facility_member_upsert = {
    "facility member",
    "INSERT INTO facility_members (facility_id, user_id, privileges)"
    " SELECT $1::uuid, id, $3::text[] FROM users"
    " WHERE lower(email) = lower($2)"
    " ON CONFLICT (facility_id, user_id)"
    " DO UPDATE SET privileges = EXCLUDED.privileges"
    " RETURNING user_id",
    3, cms_admin_facility_member_errors
};


/* what an admin credential may do (DESIGN.md, Credentials) */

static const char *const  cms_admin_admin_privileges[] = {
    "admin:extensions:view", "admin:extensions:manage", NULL
};

#define CMS_ADMIN_ADMIN_PRIVILEGES_DEFAULT                                    \
    "admin:extensions:view,admin:extensions:manage"


/*
 * admin create --facility ID --name N [--privileges LIST]: prints the new
 * sk_admin_ key, shown only once.  Stored: the facility, the name, the
 * privileges (default both), the visible prefix and the HMAC of the whole
 * key under the API key pepper, as every other key.
 */

int
cms_admin_admin_create(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    int                  rc;
    char                 id[CMS_ADMIN_ID_LEN + 1];
    char                 privileges[CMS_ADMIN_NAME_LIST_LEN];
    const char          *params[5];
    cms_admin_new_key_t  k;

    if (cms_admin_check_uuid("facility", a->facility) != 0
        || cms_admin_check_printable("name", a->name, 1, 200) != 0
        || cms_admin_name_list("privileges",
                               a->privileges
                                   ? a->privileges
                                   : CMS_ADMIN_ADMIN_PRIVILEGES_DEFAULT,
                               cms_admin_admin_privileges, privileges,
                               sizeof(privileges))
           != 0)
    {
        return -1;
    }

    if (cms_admin_key_new(ctx, CMS_KEY_KIND_SK_ADMIN, &k) != 0) {
        return -1;
    }

    params[0] = a->facility;
    params[1] = a->name;
    params[2] = privileges;
    params[3] = k.prefix;
    params[4] = k.hash_hex;

    rc = cms_admin_pg_one(ctx, &cms_admin_admin_insert, params, id,
                          sizeof(id));

    if (rc == 1) {
        printf("%s\n", k.key);

    } else if (rc == 0) {
        cms_admin_error("admin create: no id returned");
    }

    OPENSSL_cleanse(&k, sizeof(k));

    return rc == 1 ? 0 : -1;
}


/*
 * admin list --facility ID: prints one tab-separated line per credential:
 * id, visible prefix, name, privileges, created_at, revoked_at or "-".
 */

int
cms_admin_admin_list(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    return cms_admin_list(ctx, &cms_admin_admin_listing, a->facility);
}


/*
 * admin revoke --id ID: prints the credential's id.  nginx looks admin
 * credentials up on every request, so the next request with it fails.
 */

int
cms_admin_admin_revoke(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    return cms_admin_revoke(ctx, &cms_admin_admin_revoking, a->id);
}


/*
 * facility member --facility ID --email E --privileges LIST: makes the
 * user a member of the facility holding exactly LIST (comma-separated
 * names [a-z0-9_:.-], "" for none), replacing what it held; prints the
 * user's id.
 */

int
cms_admin_facility_member(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    int          rc;
    char         id[CMS_ADMIN_ID_LEN + 1];
    char         privileges[CMS_ADMIN_NAME_LIST_LEN];
    const char  *params[3];

    if (cms_admin_check_uuid("facility", a->facility) != 0
        || cms_admin_check_text("email", a->email, 1, 254) != 0
        || cms_admin_name_list("privileges", a->privileges, NULL, privileges,
                               sizeof(privileges))
           != 0)
    {
        return -1;
    }

    params[0] = a->facility;
    params[1] = a->email;
    params[2] = privileges;

    rc = cms_admin_pg_one(ctx, &cms_admin_facility_member_upsert, params, id,
                          sizeof(id));

    if (rc == 0) {
        return cms_admin_error("facility member: no user with email \"%s\"",
                               a->email);
    }

    if (rc < 0) {
        return -1;
    }

    printf("%s\n", id);

    return 0;
}
