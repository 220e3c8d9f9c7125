
/*
 * Signed ids; see cms_signed_id.h.
 */


#include <string.h>
#include <openssl/crypto.h>
#include "cms_signed_id.h"
#include "cms_base64url.h"
#include "cms_kdf.h"
#include "cms_uuid.h"


#define CMS_SIGNED_ID_MAC  16


int
cms_signed_id_make(const unsigned char key[CMS_SIGNED_ID_KEY],
    const char *id, size_t id_len, char out[CMS_SIGNED_ID_LEN])
{
    unsigned char  raw[CMS_UUID_BYTES + CMS_SIGNED_ID_MAC];
    unsigned char  mac[CMS_KDF_LEN];

    if (cms_uuid_parse(id, id_len, raw) != 0
        || cms_hmac_sha256(key, CMS_SIGNED_ID_KEY, raw, CMS_UUID_BYTES, mac)
           != 0)
    {
        return -1;
    }

    memcpy(raw + CMS_UUID_BYTES, mac, CMS_SIGNED_ID_MAC);
    (void) cms_base64url_encode(raw, sizeof(raw), out);

    return 0;
}


int
cms_signed_id_open(const unsigned char key[CMS_SIGNED_ID_KEY],
    const char *s, size_t len, char id[CMS_UUID_LEN])
{
    size_t         n;
    unsigned char  raw[CMS_UUID_BYTES + CMS_SIGNED_ID_MAC + 2];
    unsigned char  mac[CMS_KDF_LEN];

    /* the exact length first: the decoder may then not overrun raw */
    if (len != CMS_SIGNED_ID_LEN
        || cms_base64url_decode(s, len, raw, &n) != 0
        || n != CMS_UUID_BYTES + CMS_SIGNED_ID_MAC
        || cms_hmac_sha256(key, CMS_SIGNED_ID_KEY, raw, CMS_UUID_BYTES, mac)
           != 0
        || CRYPTO_memcmp(mac, raw + CMS_UUID_BYTES, CMS_SIGNED_ID_MAC) != 0)
    {
        return -1;
    }

    cms_uuid_format(raw, id);

    return 0;
}
