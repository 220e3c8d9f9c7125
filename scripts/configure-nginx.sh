#!/usr/bin/env bash
# Configure a copy of Debian's nginx build tree to build this module as a dynamic module.
#
#   scripts/configure-nginx.sh NGINX_SRC_DIR REPO ASAN(0|1)
#
# Uses Debian's own configure flags (conf_flags: --with-compat and friends, so the .so loads
# into /usr/sbin/nginx). With ASAN=1 the sanitizer flags are appended to Debian's
# --with-cc-opt/--with-ld-opt values rather than replacing them, so the rest of the compile
# line stays as Debian's.
set -euo pipefail

src=$1 repo=$2 asan=$3
san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
cd "$src"
# shellcheck disable=SC1091
. ./conf_flags
flags=()
for f in "${NGX_CONF_FLAGS[@]}"; do
    if [ "$asan" = 1 ]; then
        case "$f" in
            --with-cc-opt=*) f="$f $san" ;;
            --with-ld-opt=*) f="$f $san" ;;
        esac
    fi
    flags+=("$f")
done
if [ "$asan" = 1 ]; then
    printf '%s\n' "${flags[@]}" | grep -q '^--with-cc-opt=' || flags+=("--with-cc-opt=$san")
    printf '%s\n' "${flags[@]}" | grep -q '^--with-ld-opt=' || flags+=("--with-ld-opt=$san")
fi
# configure writes objs/Makefile only near its end; remove a half-written one so that make
# does not take a failed configure for a finished one.
./configure "${flags[@]}" --add-dynamic-module="$repo" >configure.log 2>&1 || {
    tail -n 30 configure.log >&2
    rm -f objs/Makefile
    echo "configure failed (full output: $src/configure.log)" >&2
    exit 1
}
