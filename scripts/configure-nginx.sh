#!/usr/bin/env bash
# Configure a copy of Debian's nginx build tree to build this module as a dynamic module.
#
#   scripts/configure-nginx.sh NGINX_SRC_DIR REPO ASAN(0|1) [FAULTS(0|1)]
#
# Uses Debian's own configure flags (conf_flags: --with-compat and friends, so the .so loads
# into /usr/sbin/nginx). With ASAN=1 the sanitizer flags are appended to Debian's
# --with-cc-opt/--with-ld-opt values rather than replacing them, so the rest of the compile
# line stays as Debian's. NGX_HTTP_CMS_DOCS_DATA, when set, names the generated source of
# the served API description for `config` (the Makefile's build folder keeps it current).
set -euo pipefail

src=$1 repo=$2 asan=$3 faults=${4:-0}
san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
cc_extra="" ld_extra=""
[ "$asan" = 1 ] && { cc_extra="$san"; ld_extra="$san"; }
# FAULTS=1: the test-only fault points (make test), never in a build for use
[ "$faults" = 1 ] && cc_extra="$cc_extra -DNGX_HTTP_CMS_FAULTS=1"
cd "$src"
# shellcheck disable=SC1091
. ./conf_flags
flags=() have_cc=0 have_ld=0
for f in "${NGX_CONF_FLAGS[@]}"; do
    case "$f" in
        --with-cc-opt=*) f="$f $cc_extra"; have_cc=1 ;;
        --with-ld-opt=*) f="$f $ld_extra"; have_ld=1 ;;
    esac
    flags+=("$f")
done
[ $have_cc = 0 ] && [ -n "$cc_extra" ] && flags+=("--with-cc-opt=$cc_extra")
[ $have_ld = 0 ] && [ -n "$ld_extra" ] && flags+=("--with-ld-opt=$ld_extra")
# configure writes objs/Makefile only near its end; remove a half-written one so that make
# does not take a failed configure for a finished one.
./configure "${flags[@]}" --add-dynamic-module="$repo" >configure.log 2>&1 || {
    tail -n 30 configure.log >&2
    rm -f objs/Makefile
    echo "configure failed (full output: $src/configure.log)" >&2
    exit 1
}
