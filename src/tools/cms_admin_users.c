
/*
 * cms-admin: users, workspaces, members.
 */


#include "cms_admin.h"

#include <stdio.h>
#include <string.h>
#include <openssl/crypto.h>

#include "cms_password.h"


static int cms_admin_check_email(const char *what, const char *s);
static int cms_admin_check_role(const char *role);
static int cms_admin_read_password(const char *arg, char *buf,
    size_t size);
static int cms_admin_hash_password(const char *pw, char *encoded);


static const cms_admin_pg_error_t  cms_admin_user_errors[] = {
    { "23505", "a user with this email already exists" },
    { NULL, NULL }
};

static const cms_admin_query_t  cms_admin_user_insert = {
    "user create",
    "INSERT INTO users (email, name, password_hash, email_verified, active)"
    " VALUES ($1, $2, $3, $4, $5) RETURNING id",
    5, cms_admin_user_errors
};


/* one statement: the workspace and its owner row, or neither */

static const cms_admin_query_t  cms_admin_workspace_insert = {
    "workspace create",
    "WITH u AS (SELECT id FROM users WHERE lower(email) = lower($2)),"
    " w AS (INSERT INTO workspaces (name, default_locale, suspended)"
    "       SELECT $1, $3, $4::boolean FROM u RETURNING id)"
    " INSERT INTO members (workspace_id, user_id, role)"
    " SELECT w.id, u.id, 'owner' FROM w, u RETURNING workspace_id",
    4, NULL
};


static const cms_admin_pg_error_t  cms_admin_member_errors[] = {
    { "23505", "the user is already a member of the workspace" },
    { "23503", "no such workspace" },
    { NULL, NULL }
};

static const cms_admin_query_t  cms_admin_member_insert = {
    "member add",
    "INSERT INTO members (workspace_id, user_id, role)"
    " SELECT $1::uuid, id, $3 FROM users WHERE lower(email) = lower($2)"
    " RETURNING user_id",
    3, cms_admin_member_errors
};


/* a workspace keeps at least one owner */

static const cms_admin_query_t  cms_admin_member_delete = {
    "member remove",
    "DELETE FROM members m USING users u"
    " WHERE m.workspace_id = $1::uuid AND m.user_id = u.id"
    "   AND lower(u.email) = lower($2)"
    "   AND (m.role <> 'owner' OR EXISTS"
    "        (SELECT 1 FROM members o WHERE o.workspace_id = m.workspace_id"
    "           AND o.role = 'owner' AND o.user_id <> m.user_id))"
    " RETURNING m.user_id",
    2, NULL
};

static const cms_admin_query_t  cms_admin_member_role = {
    "member remove",
    "SELECT m.role FROM members m JOIN users u ON u.id = m.user_id"
    " WHERE m.workspace_id = $1::uuid AND lower(u.email) = lower($2)",
    2, NULL
};


static const char  *cms_admin_roles[] = {
    "owner", "admin", "editor", "author", "viewer", NULL
};


/*
 * user create --email E --password P [--name N] [--verified] [--inactive]:
 * prints the new user's id.  The email is stored as given; uniqueness is
 * case-insensitive (users_email_key on lower(email)).
 */

int
cms_admin_user_create(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    int          rc;
    char         pw[CMS_PASSWORD_MAX_LEN + 2];
    char         encoded[CMS_PASSWORD_ENCODED_LEN];
    const char  *params[5];

    if (cms_admin_check_email("email", a->email) != 0
        || (a->name != NULL
            && cms_admin_check_text("name", a->name, 0, 200) != 0)
        || cms_admin_read_password(a->password, pw, sizeof(pw)) != 0)
    {
        return -1;
    }

    rc = cms_admin_hash_password(pw, encoded);
    OPENSSL_cleanse(pw, sizeof(pw));

    if (rc != 0) {
        return -1;
    }

    params[0] = a->email;
    params[1] = a->name ? a->name : "";
    params[2] = encoded;
    params[3] = a->verified ? "true" : "false";
    params[4] = a->inactive ? "false" : "true";

    return cms_admin_pg_print_id(ctx, &cms_admin_user_insert, params);
}


/*
 * workspace create --name N --owner EMAIL [--locale L] [--suspended]:
 * prints the new workspace's id; the owner is its first member, "owner".
 */

int
cms_admin_workspace_create(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    int          rc;
    char         id[CMS_ADMIN_ID_LEN + 1];
    const char  *params[4], *locale;

    locale = a->locale ? a->locale : "en";

    if (cms_admin_check_text("name", a->name, 1, 200) != 0
        || cms_admin_check_text("owner", a->owner, 1, 254) != 0
        || cms_admin_check_text("locale", locale, 2, 35) != 0)
    {
        return -1;
    }

    if (strspn(locale, "abcdefghijklmnopqrstuvwxyz"
                       "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
        != strlen(locale))
    {
        return cms_admin_error("--locale \"%s\" is not a language tag such "
                               "as en or pt-BR", locale);
    }

    params[0] = a->name;
    params[1] = a->owner;
    params[2] = locale;
    params[3] = a->suspended ? "true" : "false";

    rc = cms_admin_pg_one(ctx, &cms_admin_workspace_insert, params, id,
                          sizeof(id));

    if (rc == 0) {
        return cms_admin_error("workspace create: no user with email \"%s\"",
                               a->owner);
    }

    if (rc < 0) {
        return -1;
    }

    printf("%s\n", id);

    return 0;
}


/*
 * member add --workspace ID --email E --role ROLE: prints the user's id.
 */

int
cms_admin_member_add(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    int          rc;
    char         id[CMS_ADMIN_ID_LEN + 1];
    const char  *params[3];

    if (cms_admin_check_uuid("workspace", a->workspace) != 0
        || cms_admin_check_text("email", a->email, 1, 254) != 0
        || cms_admin_check_role(a->role) != 0)
    {
        return -1;
    }

    params[0] = a->workspace;
    params[1] = a->email;
    params[2] = a->role;

    rc = cms_admin_pg_one(ctx, &cms_admin_member_insert, params, id,
                          sizeof(id));

    if (rc == 0) {
        return cms_admin_error("member add: no user with email \"%s\"",
                               a->email);
    }

    if (rc < 0) {
        return -1;
    }

    printf("%s\n", id);

    return 0;
}


/*
 * member remove --workspace ID --email E: prints the user's id.  Refuses
 * to remove a workspace's last owner.
 */

int
cms_admin_member_remove(cms_admin_ctx_t *ctx, const cms_admin_args_t *a)
{
    int          rc;
    char         id[CMS_ADMIN_ID_LEN + 1];
    const char  *params[2];

    if (cms_admin_check_uuid("workspace", a->workspace) != 0
        || cms_admin_check_text("email", a->email, 1, 254) != 0)
    {
        return -1;
    }

    params[0] = a->workspace;
    params[1] = a->email;

    rc = cms_admin_pg_one(ctx, &cms_admin_member_delete, params, id,
                          sizeof(id));

    if (rc == 1) {
        printf("%s\n", id);
        return 0;
    }

    if (rc < 0) {
        return -1;
    }

    /* nothing deleted: say why */

    rc = cms_admin_pg_one(ctx, &cms_admin_member_role, params, id,
                          sizeof(id));

    if (rc == 1) {
        return cms_admin_error("member remove: \"%s\" is the workspace's "
                               "last owner", a->email);
    }

    if (rc == 0) {
        return cms_admin_error("member remove: \"%s\" is not a member of "
                               "the workspace", a->email);
    }

    return -1;
}


/* a plausible address: 3 to 254 bytes, one '@' inside, no blanks */

static int
cms_admin_check_email(const char *what, const char *s)
{
    size_t       i, n;
    const char  *at;

    if (cms_admin_check_text(what, s, 3, 254) != 0) {
        return -1;
    }

    n = strlen(s);
    at = strchr(s, '@');

    for (i = 0; i < n; i++) {
        if ((unsigned char) s[i] <= ' ' || s[i] == 0x7f) {
            at = NULL;
        }
    }

    if (at == NULL || at == s || at == s + n - 1 || strchr(at + 1, '@')) {
        return cms_admin_error("--%s \"%s\" is not an email address", what,
                               s);
    }

    return 0;
}


static int
cms_admin_check_role(const char *role)
{
    int  i;

    if (role == NULL) {
        return cms_admin_error("--role is required");
    }

    for (i = 0; cms_admin_roles[i] != NULL; i++) {
        if (strcmp(role, cms_admin_roles[i]) == 0) {
            return 0;
        }
    }

    return cms_admin_error("--role \"%s\" is not one of owner admin editor "
                           "author viewer", role);
}


/*
 * The password from --password, or from one line of stdin for "-" (so it
 * stays out of ps and shell history), into buf; checks its length.
 */

static int
cms_admin_read_password(const char *arg, char *buf, size_t size)
{
    size_t  n;

    if (arg == NULL) {
        return cms_admin_error("--password is required");
    }

    if (strcmp(arg, "-") != 0) {
        n = strlen(arg);

        if (n >= size) {
            return cms_admin_error("the password is longer than %d bytes",
                                   CMS_PASSWORD_MAX_LEN);
        }

        memcpy(buf, arg, n + 1);

    } else {
        if (fgets(buf, (int) size, stdin) == NULL) {
            return cms_admin_error("no password on stdin");
        }

        n = strcspn(buf, "\r\n");
        buf[n] = '\0';
    }

    if (n < CMS_PASSWORD_MIN_LEN || n > CMS_PASSWORD_MAX_LEN) {
        return cms_admin_error("the password must have %d to %d characters",
                               CMS_PASSWORD_MIN_LEN, CMS_PASSWORD_MAX_LEN);
    }

    return 0;
}


/* argon2id with a fresh salt, into encoded (CMS_PASSWORD_ENCODED_LEN) */

static int
cms_admin_hash_password(const char *pw, char *encoded)
{
    unsigned char  salt[CMS_PASSWORD_SALT_LEN];

    if (cms_admin_random(salt, sizeof(salt)) != 0) {
        return -1;
    }

    if (cms_password_hash(pw, strlen(pw), salt, encoded,
                          CMS_PASSWORD_ENCODED_LEN)
        != 0)
    {
        return cms_admin_error("password hashing failed (out of memory?)");
    }

    return 0;
}
