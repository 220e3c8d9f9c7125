
/*
 * The release: the module (its start-up log line, /v1/health/ready,
 * cms_build_info in cms_status) and cms-admin show it.  VERSION,
 * CHANGELOG.md's newest heading and debian/changelog's newest entry name
 * the same (t/005 checks).
 */


#ifndef _CMS_VERSION_H_INCLUDED_
#define _CMS_VERSION_H_INCLUDED_


#define CMS_VERSION  "0.16.0"


#endif /* _CMS_VERSION_H_INCLUDED_ */
