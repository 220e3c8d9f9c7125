
/*
 * Password hashing: argon2id (RFC 9106) through libargon2, stored in the
 * PHC encoded form users.password_hash holds:
 *
 *     $argon2id$v=19$m=65536,t=3,p=1$<salt base64>$<hash base64>
 *
 * One hash costs CMS_PASSWORD_M_COST KiB of memory (64 MiB, malloc'ed and
 * freed inside libargon2) and tens of milliseconds of CPU, so in nginx it
 * runs in a thread pool, never on the event loop; parallelism 1 means
 * libargon2 starts no threads of its own.
 *
 * cms_password_verify() reads the cost parameters from the encoded string,
 * so hashes made before a change of parameters keep verifying; it refuses
 * anything but argon2id version 19 and costs above the CMS_PASSWORD_*_MAX
 * bounds, so a corrupt or planted row cannot make it allocate gigabytes.
 *
 * Length policy (CMS_PASSWORD_MIN_LEN, "password_too_short") is the
 * caller's; both functions refuse passwords over CMS_PASSWORD_MAX_LEN.
 *
 * Contract: the caller owns every buffer and supplies the 16 random salt
 * bytes (RAND_bytes).  The caller wipes pw when done.
 */


#ifndef _CMS_PASSWORD_H_INCLUDED_
#define _CMS_PASSWORD_H_INCLUDED_


#include <stddef.h>


#define CMS_PASSWORD_MIN_LEN       10
#define CMS_PASSWORD_MAX_LEN       1024

#define CMS_PASSWORD_T_COST        3
#define CMS_PASSWORD_M_COST        65536      /* KiB: 64 MiB */
#define CMS_PASSWORD_PARALLELISM   1
#define CMS_PASSWORD_SALT_LEN      16
#define CMS_PASSWORD_HASH_LEN      32

/* the encoded form is 97 characters; this holds it with its NUL */
#define CMS_PASSWORD_ENCODED_LEN   128

/* the most cms_password_verify() agrees to spend on a stored hash */
#define CMS_PASSWORD_T_COST_MAX    16
#define CMS_PASSWORD_M_COST_MAX    262144     /* KiB: 256 MiB */
#define CMS_PASSWORD_P_MAX         8


int cms_password_hash(const char *pw, size_t len,
    const unsigned char salt[CMS_PASSWORD_SALT_LEN], char *encoded,
    size_t encoded_size);
int cms_password_verify(const char *encoded, const char *pw, size_t len);


#endif /* _CMS_PASSWORD_H_INCLUDED_ */
