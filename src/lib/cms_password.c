
/*
 * argon2id password hashing; see cms_password.h.
 */


#include <string.h>
#include <argon2.h>

#include "cms_password.h"


static const char *cms_password_number(const char *p, const char *name,
    unsigned long max, unsigned long *v);
static int cms_password_params_ok(const char *encoded);


#define CMS_PASSWORD_ID  "$argon2id$v=19$"


/*
 * Hashes pw[0 .. len) with salt into encoded, the NUL-terminated PHC
 * string (97 characters; CMS_PASSWORD_ENCODED_LEN is enough).  Returns 0,
 * or -1 when len exceeds CMS_PASSWORD_MAX_LEN, encoded_size is too small
 * or libargon2 fails (out of memory); encoded is then an empty string if
 * encoded_size allows.
 */

int
cms_password_hash(const char *pw, size_t len,
    const unsigned char salt[CMS_PASSWORD_SALT_LEN], char *encoded,
    size_t encoded_size)
{
    int  rc;

    if (len > CMS_PASSWORD_MAX_LEN || encoded_size == 0) {
        return -1;
    }

    rc = argon2id_hash_encoded(CMS_PASSWORD_T_COST, CMS_PASSWORD_M_COST,
                               CMS_PASSWORD_PARALLELISM, pw, len, salt,
                               CMS_PASSWORD_SALT_LEN, CMS_PASSWORD_HASH_LEN,
                               encoded, encoded_size);

    if (rc != ARGON2_OK) {
        encoded[0] = '\0';
        return -1;
    }

    return 0;
}


/*
 * Checks pw[0 .. len) against encoded, a NUL-terminated string from
 * cms_password_hash() (or libargon2 with other costs).  Returns 1 on a
 * match; 0 on a mismatch, a password over CMS_PASSWORD_MAX_LEN, an encoded
 * string that is not argon2id v=19 within the cost bounds, or any
 * libargon2 failure.  The comparison inside libargon2 is constant time.
 */

int
cms_password_verify(const char *encoded, const char *pw, size_t len)
{
    if (encoded == NULL || len > CMS_PASSWORD_MAX_LEN
        || !cms_password_params_ok(encoded))
    {
        return 0;
    }

    return argon2id_verify(encoded, pw, len) == ARGON2_OK;
}


/*
 * 1 when encoded starts "$argon2id$v=19$m=M,t=T,p=P$" with each cost in
 * bounds; libargon2 checks the rest (salt, hash, m >= 8p).
 */

static int
cms_password_params_ok(const char *encoded)
{
    const char     *p;
    unsigned long   m, t, par;

    t = 0;
    par = 0;

    if (strncmp(encoded, CMS_PASSWORD_ID, sizeof(CMS_PASSWORD_ID) - 1) != 0)
    {
        return 0;
    }

    p = encoded + sizeof(CMS_PASSWORD_ID) - 1;

    p = cms_password_number(p, "m=", CMS_PASSWORD_M_COST_MAX, &m);
    p = cms_password_number(p, ",t=", CMS_PASSWORD_T_COST_MAX, &t);
    p = cms_password_number(p, ",p=", CMS_PASSWORD_P_MAX, &par);

    return p != NULL && *p == '$' && t >= 1 && par >= 1;
}


/*
 * Reads name followed by 1 to 7 decimal digits, at most max, from p (NULL
 * passes through).  Returns the position after the digits, or NULL.
 */

static const char *
cms_password_number(const char *p, const char *name, unsigned long max,
    unsigned long *v)
{
    size_t  n, i;

    if (p == NULL) {
        return NULL;
    }

    n = strlen(name);

    if (strncmp(p, name, n) != 0) {
        return NULL;
    }

    p += n;
    *v = 0;

    for (i = 0; i < 7 && p[i] >= '0' && p[i] <= '9'; i++) {
        *v = *v * 10 + (unsigned long) (p[i] - '0');
    }

    if (i == 0 || (p[i] >= '0' && p[i] <= '9') || *v > max) {
        return NULL;
    }

    return p + i;
}
