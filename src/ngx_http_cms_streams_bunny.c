
/*
 * Bunny Stream as the video provider (ngx_http_cms_streams.h).
 *
 *   create   POST {api}/library/{library}/videos  {"title": ...}
 *   poll     GET  {api}/library/{library}/videos/{guid}
 *
 * both with the library's key in the AccessKey header (the fetch
 * location's $cms_video_access_key).  A video is named by its "guid" (a
 * UUID); its "status" is Bunny's number (0 created, 1 uploaded,
 * 2 processing, 3 transcoding, 4 finished, 5 error, 6 upload failed,
 * 7 JIT segmenting, 8 JIT playlists created), its "length" whole seconds.
 *
 * Upload credentials are Bunny's presigned TUS upload: to
 * {api}/tusupload with the headers AuthorizationSignature (the hex
 * SHA-256 of library id, API key, expiry and video id, concatenated),
 * AuthorizationExpire (the expiry, Unix seconds), VideoId and LibraryId.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include "ngx_http_cms_module.h"
#include "ngx_http_cms_json.h"
#include "ngx_http_cms_crypto.h"
#include "ngx_http_cms_streams.h"
#include "cms_uuid.h"


#define NGX_HTTP_CMS_BUNNY_TUS      "/tusupload"


static ngx_int_t ngx_http_cms_bunny_id_valid(ngx_str_t *id);
static ngx_int_t ngx_http_cms_bunny_create(ngx_http_request_t *r,
    ngx_http_cms_video_conf_t *vcf, ngx_str_t *title,
    ngx_http_cms_video_call_t *call);
static ngx_int_t ngx_http_cms_bunny_created(ngx_http_request_t *r,
    ngx_str_t *answer, ngx_http_cms_video_state_t *st);
static ngx_int_t ngx_http_cms_bunny_credentials(ngx_http_request_t *r,
    ngx_http_cms_video_conf_t *vcf, ngx_str_t *id, json_t *out);
static ngx_int_t ngx_http_cms_bunny_poll(ngx_http_request_t *r,
    ngx_http_cms_video_conf_t *vcf, ngx_str_t *id,
    ngx_http_cms_video_call_t *call);
static ngx_int_t ngx_http_cms_bunny_polled(ngx_http_request_t *r,
    ngx_str_t *answer, ngx_http_cms_video_state_t *st);
static ngx_int_t ngx_http_cms_bunny_url(ngx_http_request_t *r,
    ngx_http_cms_video_conf_t *vcf, ngx_str_t *id, ngx_str_t *url);
static json_t *ngx_http_cms_bunny_video(ngx_http_request_t *r,
    ngx_str_t *answer, ngx_http_cms_video_state_t *st);
static ngx_int_t ngx_http_cms_bunny_time(ngx_http_request_t *r, time_t t,
    ngx_str_t *out);


const ngx_http_cms_video_provider_t  ngx_http_cms_streams_bunny = {
    ngx_string("bunny"),
    ngx_string("https://video.bunnycdn.com"),
    ngx_http_cms_bunny_id_valid,
    ngx_http_cms_bunny_create,
    ngx_http_cms_bunny_created,
    ngx_http_cms_bunny_credentials,
    ngx_http_cms_bunny_poll,
    ngx_http_cms_bunny_polled
};


/*
 * Bunny's status numbers in the spec's terms.  Bunny reports nothing
 * while a file is on its way (a video stays "created"), so "uploading"
 * never comes from it; a JIT video plays once its playlists exist.
 */
static const char *const  ngx_http_cms_bunny_statuses[] = {
    "pending",          /* 0 created */
    "processing",       /* 1 uploaded, queued */
    "processing",       /* 2 processing */
    "processing",       /* 3 transcoding */
    "ready",            /* 4 finished */
    "failed",           /* 5 error */
    "failed",           /* 6 upload failed */
    "processing",       /* 7 JIT segmenting */
    "ready"             /* 8 JIT playlists created */
};


static ngx_int_t
ngx_http_cms_bunny_id_valid(ngx_str_t *id)
{
    return cms_uuid_valid((char *) id->data, id->len) ? NGX_OK
                                                      : NGX_DECLINED;
}


static ngx_int_t
ngx_http_cms_bunny_create(ngx_http_request_t *r,
    ngx_http_cms_video_conf_t *vcf, ngx_str_t *title,
    ngx_http_cms_video_call_t *call)
{
    json_t     *body;
    ngx_int_t   rc;

    ngx_str_set(&call->method, "POST");

    if (ngx_http_cms_bunny_url(r, vcf, NULL, &call->url) != NGX_OK) {
        return NGX_ERROR;
    }

    body = json_pack("{s:s%}", "title", title->data, title->len);
    if (body == NULL) {
        return NGX_ERROR;
    }

    rc = ngx_http_cms_json_dump(r, body, &call->body);

    json_decref(body);

    return rc;
}


static ngx_int_t
ngx_http_cms_bunny_created(ngx_http_request_t *r, ngx_str_t *answer,
    ngx_http_cms_video_state_t *st)
{
    json_t  *video;

    ngx_str_null(&st->id);

    video = ngx_http_cms_bunny_video(r, answer, st);

    return video == NULL ? NGX_DECLINED : NGX_OK;
}


/* long: the expiry, the signature, then the members and headers */
static ngx_int_t
ngx_http_cms_bunny_credentials(ngx_http_request_t *r,
    ngx_http_cms_video_conf_t *vcf, ngx_str_t *id, json_t *out)
{
    u_char      *p, sig[64];
    time_t       expires;
    json_t      *headers;
    ngx_str_t    parts[4], at, tus;

    expires = ngx_time() + (time_t) (vcf->upload_ttl / 1000);

    p = ngx_pnalloc(r->pool, NGX_TIME_T_LEN);
    if (p == NULL) {
        return NGX_ERROR;
    }

    /* sha256(library_id + api_key + expiration_time + video_id) */
    parts[0] = vcf->library;
    parts[1] = vcf->key;
    parts[2].data = p;
    parts[2].len = ngx_sprintf(p, "%T", expires) - p;
    parts[3] = *id;

    if (ngx_http_cms_crypto_sha256_hex(parts, 4, sig) != NGX_OK
        || ngx_http_cms_bunny_time(r, expires, &at) != NGX_OK)
    {
        return NGX_ERROR;
    }

    tus.len = vcf->api.len + sizeof(NGX_HTTP_CMS_BUNNY_TUS) - 1;
    tus.data = ngx_pnalloc(r->pool, tus.len);
    if (tus.data == NULL) {
        return NGX_ERROR;
    }

    ngx_memcpy(ngx_cpymem(tus.data, vcf->api.data, vcf->api.len),
               NGX_HTTP_CMS_BUNNY_TUS, sizeof(NGX_HTTP_CMS_BUNNY_TUS) - 1);

    headers = json_pack("{s:s%,s:s%,s:s%,s:s%}",
                        "AuthorizationSignature", sig, (size_t) 64,
                        "AuthorizationExpire", parts[2].data, parts[2].len,
                        "VideoId", id->data, id->len,
                        "LibraryId", vcf->library.data, vcf->library.len);

    if (headers == NULL
        || json_object_set_new(out, "protocol", json_string("tus")) != 0
        || json_object_set_new(out, "upload_url",
                               json_stringn((char *) tus.data, tus.len))
           != 0
        || json_object_set_new(out, "signature",
                               json_stringn((char *) sig, 64)) != 0
        || json_object_set_new(out, "expires_at",
                               json_stringn((char *) at.data, at.len)) != 0
        || json_object_set_new(out, "headers", headers) != 0)
    {
        return NGX_ERROR;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_cms_bunny_poll(ngx_http_request_t *r,
    ngx_http_cms_video_conf_t *vcf, ngx_str_t *id,
    ngx_http_cms_video_call_t *call)
{
    ngx_str_set(&call->method, "GET");
    ngx_str_null(&call->body);

    return ngx_http_cms_bunny_url(r, vcf, id, &call->url);
}


static ngx_int_t
ngx_http_cms_bunny_polled(ngx_http_request_t *r, ngx_str_t *answer,
    ngx_http_cms_video_state_t *st)
{
    json_t     *video, *v;
    json_int_t  n;

    video = ngx_http_cms_bunny_video(r, answer, st);
    if (video == NULL) {
        return NGX_DECLINED;
    }

    v = json_object_get(video, "status");

    if (!json_is_integer(v)) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: bunny: a video without a status number");
        return NGX_DECLINED;
    }

    n = json_integer_value(v);

    if (n >= 0 && n < (json_int_t) (sizeof(ngx_http_cms_bunny_statuses)
                                    / sizeof(char *)))
    {
        st->status.data = (u_char *) ngx_http_cms_bunny_statuses[n];

    } else {
        /* a status newer than this code: not final, so still processing */
        ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                      "cms: bunny: unknown video status %L", (int64_t) n);
        st->status.data = (u_char *) "processing";
    }

    st->status.len = ngx_strlen(st->status.data);

    v = json_object_get(video, "length");
    st->duration = json_is_number(v) ? json_number_value(v) : 0;

    if (st->duration < 0 || st->duration > 100000000) {
        st->duration = 0;
    }

    return NGX_OK;
}


/* {api}/library/{library}/videos[/{id}] */
static ngx_int_t
ngx_http_cms_bunny_url(ngx_http_request_t *r, ngx_http_cms_video_conf_t *vcf,
    ngx_str_t *id, ngx_str_t *url)
{
    u_char  *p;

    url->data = ngx_pnalloc(r->pool, vcf->api.len + vcf->library.len
                                     + (id ? id->len : 0)
                                     + sizeof("/library//videos/"));
    if (url->data == NULL) {
        return NGX_ERROR;
    }

    p = ngx_sprintf(url->data, "%V/library/%V/videos", &vcf->api,
                    &vcf->library);

    if (id != NULL) {
        p = ngx_sprintf(p, "/%V", id);
    }

    url->len = p - url->data;

    return NGX_OK;
}


/*
 * A video object of Bunny's API (owned by r->pool) whose "guid" is a UUID,
 * the guid copied into st->id (or, when st->id is set, equal to it); NULL
 * logged otherwise.
 */
static json_t *
ngx_http_cms_bunny_video(ngx_http_request_t *r, ngx_str_t *answer,
    ngx_http_cms_video_state_t *st)
{
    json_t        *video, *guid;
    size_t         len;
    const char    *s;
    json_error_t   err;

    video = json_loadb((char *) answer->data, answer->len, 0, &err);

    if (video == NULL) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: bunny: the answer is not JSON");
        return NULL;
    }

    /* on failure, the pool drops the reference itself */
    if (ngx_http_cms_json_pool(r, video) != NGX_OK) {
        return NULL;
    }

    guid = json_object_get(video, "guid");
    s = json_string_value(guid);
    len = s ? json_string_length(guid) : 0;

    if (s == NULL || !cms_uuid_valid(s, len)
        || (st->id.len != 0
            && (st->id.len != len
                || ngx_strncasecmp(st->id.data, (u_char *) s, len) != 0)))
    {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cms: bunny: the answer names no video, or another");
        return NULL;
    }

    if (st->id.len == 0) {
        st->id.data = ngx_pnalloc(r->pool, len);
        if (st->id.data == NULL) {
            return NULL;
        }

        ngx_memcpy(st->id.data, s, len);
        st->id.len = len;
    }

    return video;
}


/* "t" as RFC 3339 UTC with milliseconds, the API's time format */
static ngx_int_t
ngx_http_cms_bunny_time(ngx_http_request_t *r, time_t t, ngx_str_t *out)
{
    ngx_tm_t  tm;

    out->data = ngx_pnalloc(r->pool, sizeof("1970-01-01T00:00:00.000Z"));
    if (out->data == NULL) {
        return NGX_ERROR;
    }

    ngx_gmtime(t, &tm);

    out->len = ngx_sprintf(out->data, "%4d-%02d-%02dT%02d:%02d:%02d.000Z",
                           tm.ngx_tm_year, tm.ngx_tm_mon, tm.ngx_tm_mday,
                           tm.ngx_tm_hour, tm.ngx_tm_min, tm.ngx_tm_sec)
               - out->data;

    return NGX_OK;
}
