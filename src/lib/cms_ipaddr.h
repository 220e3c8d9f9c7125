
/*
 * Which addresses the module may connect to on a user's behalf (a site's
 * origin, a webhook's endpoint): globally reachable unicast only.  One
 * table per family decides, from IANA's special-purpose registries:
 *
 *   IPv4 refused  0/8 "this network", 10/8, 172.16/12, 192.168/16 private,
 *                 100.64/10 CGNAT, 127/8 loopback, 169.254/16 link-local,
 *                 192.0.0/24 protocol assignments, 192.0.2/24,
 *                 198.51.100/24, 203.0.113/24 documentation, 192.88.99/24
 *                 6to4 relay, 198.18/15 benchmarking, 224/4 multicast,
 *                 240/4 reserved and 255.255.255.255
 *   IPv6 judged   by the IPv4 address they carry: ::ffff:0:0/96 mapped,
 *                 64:ff9b::/96 NAT64, 2002::/16 6to4, 2001::/32 Teredo
 *                 (its server and its client, the client's bits inverted;
 *                 refused when either is)
 *   IPv6 refused  everything outside 2000::/3 global unicast (::, ::1,
 *                 the deprecated IPv4-compatible ::/96, 100::/64
 *                 discard-only, 64:ff9b:1::/48 local NAT64, fc00::/7
 *                 unique-local, fe80::/10 link-local, fec0::/10
 *                 site-local, ff00::/8 multicast), and inside it
 *                 2001::/23 protocol assignments (benchmarking, ORCHID,
 *                 AMT ...), 2001:db8::/32 and 3fff::/20 documentation,
 *                 5f00::/16 SRv6
 *
 * Pure C over bytes in network order; nothing here resolves a name.
 */


#ifndef _CMS_IPADDR_H_INCLUDED_
#define _CMS_IPADDR_H_INCLUDED_


#include <stddef.h>
#include <sys/socket.h>


/* 1 when a[0..3] is a globally reachable IPv4 address, else 0 */
int cms_ipaddr_public4(const unsigned char a[4]);

/* 1 when a[0..15] is a globally reachable IPv6 address, else 0 */
int cms_ipaddr_public6(const unsigned char a[16]);

/* the same for an AF_INET or AF_INET6 sockaddr; 0 for any other family */
int cms_ipaddr_public(const struct sockaddr *sa);

/* 1 for 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104, else 0 */
int cms_ipaddr_loopback(const struct sockaddr *sa);

/*
 * An IP literal as text ("192.0.2.1", "2001:db8::1", no brackets, no
 * zone): 1 public, 0 refused, -1 not an address in the standard text
 * form (so a host name, to be resolved).
 */
int cms_ipaddr_text_public(const char *text, size_t len);


#endif /* _CMS_IPADDR_H_INCLUDED_ */
