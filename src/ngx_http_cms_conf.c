
/*
 * Directive parameters from a table (see the header).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <grp.h>
#include "ngx_http_cms_conf.h"


#define NGX_HTTP_CMS_CONF_GROUPS  256

/* a file's permission bits as four octal digits ("%ui%ui%ui%ui") */
#define ngx_http_cms_conf_mode(m)                                              \
    (ngx_uint_t) (((m) >> 9) & 7), (ngx_uint_t) (((m) >> 6) & 7),              \
    (ngx_uint_t) (((m) >> 3) & 7), (ngx_uint_t) ((m) & 7)


static ngx_int_t ngx_http_cms_conf_param(ngx_str_t *value,
    const ngx_http_cms_param_t *params, void *conf);
static ngx_uint_t ngx_http_cms_conf_in_group(const char *user, gid_t gid,
    gid_t want);


ngx_int_t
ngx_http_cms_conf_params(ngx_conf_t *cf, const char *directive,
    ngx_uint_t first, const ngx_http_cms_param_t *params, void *conf)
{
    ngx_str_t   *value;
    ngx_uint_t   i;

    value = cf->args->elts;

    for (i = first; i < cf->args->nelts; i++) {
        if (ngx_http_cms_conf_param(&value[i], params, conf) != NGX_OK) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid parameter \"%V\" in \"%s\"",
                               &value[i], directive);
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_cms_conf_param(ngx_str_t *value, const ngx_http_cms_param_t *params,
    void *conf)
{
    ngx_int_t                    n;
    ngx_str_t                    s;
    ngx_msec_t                   ms;
    const ngx_http_cms_param_t  *p;

    for (p = params; p->name.len; p++) {
        if (value->len > p->name.len
            && ngx_strncmp(value->data, p->name.data, p->name.len) == 0)
        {
            break;
        }
    }

    if (p->name.len == 0) {
        return NGX_ERROR;
    }

    s.data = value->data + p->name.len;
    s.len = value->len - p->name.len;

    if (p->kind == NGX_HTTP_CMS_PARAM_STRING) {
        *(ngx_str_t *) ((u_char *) conf + p->offset) = s;
        return NGX_OK;
    }

    if (p->kind == NGX_HTTP_CMS_PARAM_MSEC) {
        ms = ngx_parse_time(&s, 0);

        if (ms == (ngx_msec_t) NGX_ERROR || ms == 0) {
            return NGX_ERROR;
        }

        *(ngx_msec_t *) ((u_char *) conf + p->offset) = ms;
        return NGX_OK;
    }

    n = ngx_atoi(s.data, s.len);

    if (n == NGX_ERROR || (n == 0 && p->kind == NGX_HTTP_CMS_PARAM_POSITIVE))
    {
        return NGX_ERROR;
    }

    *(ngx_uint_t *) ((u_char *) conf + p->offset) = (ngx_uint_t) n;

    return NGX_OK;
}


/* long: open, read, close, each failure logged, then the trimming */
ngx_int_t
ngx_http_cms_conf_secret_file(ngx_conf_t *cf, const char *directive,
    ngx_str_t *path, size_t max, ngx_str_t *secret)
{
    u_char           *buf;
    ssize_t           n;
    ngx_fd_t          fd;
    ngx_file_t        file;
    ngx_file_info_t   fi;

    if (ngx_conf_full_name(cf->cycle, path, 1) != NGX_OK) {
        return NGX_ERROR;
    }

    fd = ngx_open_file(path->data, NGX_FILE_RDONLY, NGX_FILE_OPEN, 0);

    if (fd == NGX_INVALID_FILE) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, ngx_errno,
                           "%s: cannot open \"%V\"", directive, path);
        return NGX_ERROR;
    }

    /* a secret others may read is refused: the master reads it as root,
       before any worker starts; the workers never open it */
    if (ngx_fd_info(fd, &fi) == NGX_FILE_ERROR
        || (ngx_file_access(&fi) & (S_IROTH | S_IWOTH)))
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "%s: \"%V\" is readable or writable by others "
                           "(mode %ui%ui%ui%ui): chmod o-rwx it, or mount it "
                           "with mode 0440 or stricter", directive, path,
                           ngx_http_cms_conf_mode(ngx_file_access(&fi)));
        ngx_close_file(fd);
        return NGX_ERROR;
    }

    buf = ngx_pnalloc(cf->pool, max);

    ngx_memzero(&file, sizeof(ngx_file_t));
    file.fd = fd;
    file.name = *path;
    file.log = cf->log;

    n = (buf == NULL) ? NGX_ERROR : ngx_read_file(&file, buf, max, 0);

    ngx_close_file(fd);

    if (n == NGX_ERROR) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, ngx_errno,
                           "%s: cannot read \"%V\"", directive, path);
        return NGX_ERROR;
    }

    /* a file that fills the buffer is too long, whatever it ends with */
    if ((size_t) n == max) {
        n = 0;
    }

    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'
                     || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
    {
        n--;
    }

    secret->data = buf;
    secret->len = n;

    return NGX_OK;
}


/* long: whose the workers are, then the owner's, group's or others' bits */
ngx_int_t
ngx_http_cms_conf_folder(ngx_conf_t *cf, const char *directive,
    ngx_str_t *path)
{
    uid_t             uid;
    gid_t             gid;
    mode_t            need;
    const char       *user;
    struct group     *gr;
    struct passwd    *pw;
    ngx_core_conf_t  *ccf;
    ngx_file_info_t   fi;

    if (ngx_conf_full_name(cf->cycle, path, 0) != NGX_OK) {
        return NGX_ERROR;
    }

    if (ngx_file_info(path->data, &fi) == NGX_FILE_ERROR || !ngx_is_dir(&fi)) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, ngx_errno,
                           "%s: \"%V\" is not a folder", directive, path);
        return NGX_ERROR;
    }

    /* the workers' user: "user" (given before http{}), nginx's default
       for a master started as root, else the master's own */

    ccf = (ngx_core_conf_t *) ngx_get_conf(cf->cycle->conf_ctx,
                                           ngx_core_module);

    if (ccf->user != (ngx_uid_t) NGX_CONF_UNSET_UINT) {
        uid = ccf->user;
        gid = ccf->group;
        user = ccf->username;

    } else if (geteuid() == 0) {
        pw = getpwnam(NGX_USER);
        gr = getgrnam(NGX_GROUP);

        if (pw == NULL || gr == NULL) {
            return NGX_OK;        /* nginx refuses the configuration itself */
        }

        uid = pw->pw_uid;
        gid = gr->gr_gid;
        user = NGX_USER;

    } else {
        uid = geteuid();
        gid = getegid();
        user = NULL;
    }

    if (uid == 0) {
        return NGX_OK;
    }

    need = (fi.st_uid == uid) ? (S_IWUSR | S_IXUSR)
           : ngx_http_cms_conf_in_group(user, gid, fi.st_gid)
             ? (S_IWGRP | S_IXGRP)
           : (S_IWOTH | S_IXOTH);

    if ((fi.st_mode & need) != need) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "%s: the workers' user (uid %uL, gid %uL) cannot "
                           "write in \"%V\" (owner %uL, group %uL, mode "
                           "%ui%ui%ui%ui): chown it to that user, or give "
                           "its group write access", directive,
                           (uint64_t) uid, (uint64_t) gid, path,
                           (uint64_t) fi.st_uid, (uint64_t) fi.st_gid,
                           ngx_http_cms_conf_mode(ngx_file_access(&fi)));
        return NGX_ERROR;
    }

    return NGX_OK;
}


/* whether the workers (user, or the master's own groups) are in "want" */
static ngx_uint_t
ngx_http_cms_conf_in_group(const char *user, gid_t gid, gid_t want)
{
    int    i, n;
    gid_t  groups[NGX_HTTP_CMS_CONF_GROUPS];

    if (gid == want) {
        return 1;
    }

    n = NGX_HTTP_CMS_CONF_GROUPS;

    if (user != NULL) {
        if (getgrouplist(user, gid, groups, &n) == -1) {
            n = 0;            /* more groups than room: judged by gid alone */
        }

    } else {
        n = getgroups(NGX_HTTP_CMS_CONF_GROUPS, groups);
    }

    for (i = 0; i < n; i++) {
        if (groups[i] == want) {
            return 1;
        }
    }

    return 0;
}


ngx_int_t
ngx_http_cms_conf_host(u_char *p, size_t len)
{
    u_char  *last, c;

    if (len == 0 || len > 253) {
        return NGX_DECLINED;
    }

    for (last = p + len; p < last; p++) {
        c = (u_char) (*p | 0x20);

        if ((c >= 'a' && c <= 'z') || (*p >= '0' && *p <= '9')
            || *p == '-' || *p == '_' || *p == '.' || *p == ':')
        {
            continue;
        }

        return NGX_DECLINED;
    }

    return NGX_OK;
}
