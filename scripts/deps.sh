#!/usr/bin/env bash
# Install the Debian packages a step needs, and only those missing; every group that builds
# the module also installs the npm tools of tools/node (@redocly/cli: the build renders the
# API reference with it, t/006 lints with it; the suite's answer checks and t/008's proxy)
# when they are missing.
#
#   scripts/deps.sh [build|run|test|bench|fuzz|deb|all]...     (default: build)
#
# Groups add up: run, test and bench imply build; test and bench imply run (they start
# PostgreSQL and Redis). `apt-get update` runs at most once, and only when something is
# missing, so a machine that already has everything never touches the network.
set -euo pipefail

# perl and libyaml-libyaml-perl (YAML::XS): scripts/docs-embed turns openapi/openapi.yaml
# into the JSON the module serves (JSON::PP and Digest::SHA are core perl).
build=(gcc make nginx-core nginx-dev libpq-dev libhiredis-dev libjansson-dev libssl-dev
       libargon2-dev libgumbo-dev libicu-dev libmagic-dev libvips-dev perl libyaml-libyaml-perl)
# runuser (util-linux) and od (coreutils) are essential packages: always present.
run=(postgresql redis-server curl ca-certificates libmagic1 libvips42)
# perl: prove and the harness (bookworm-slim has only perl-base). JSON::PP, HTTP::Tiny,
# IO::Select and Time::HiRes are core perl modules, so libjson-pp-perl is not needed.
# libyaml-libyaml-perl: YAML::XS, for scripts/openapi-check (t/006) and t/007 (build has it).
# openssl (the command) and libio-socket-ssl-perl: t/044 makes a CA and certificates, and
# relays PostgreSQL's protocol over TLS. varnish: t/126's shared cache in front of nginx;
# varnish-modules: its xkey VMOD, which conf/varnish.vcl imports (purges by surrogate key).
# prometheus: its promtool checks cms_status's text (t/133); the server is not started.
# libvips-tools (the vips command) and libimage-exiftool-perl: t/144 makes its images and
# reads their metadata back.
test=(perl libcmocka-dev libtest-base-perl libxml-libxml-perl libnet-dns-perl chromium chromium-driver
      libyaml-libyaml-perl openssl libio-socket-ssl-perl varnish varnish-modules prometheus
      libvips-tools libimage-exiftool-perl)
# pgbench ships in postgresql-15 (pulled in by postgresql); postgresql-contrib is an empty
# metapackage on bookworm, so only wrk is extra; `vips thumbnail` is the image rows' floor.
bench=(wrk libvips-tools)
fuzz=(clang libclang-rt-14-dev)
# make deb: Debian's packaging tools (dh_nginx comes with nginx-dev, in build)
deb=(debhelper dpkg-dev)

want=()
node_tools=0
[ $# -gt 0 ] || set -- build
for group in "$@"; do
    case "$group" in
        build) want+=("${build[@]}"); node_tools=1 ;;
        run)   want+=("${build[@]}" "${run[@]}"); node_tools=1 ;;
        test)  want+=("${build[@]}" "${run[@]}" "${test[@]}"); node_tools=1 ;;
        bench) want+=("${build[@]}" "${run[@]}" "${bench[@]}"); node_tools=1 ;;
        fuzz)  want+=("${build[@]}" "${fuzz[@]}") ;;
        deb)   want+=("${build[@]}" "${deb[@]}"); node_tools=1 ;;
        all)   want+=("${build[@]}" "${run[@]}" "${test[@]}" "${bench[@]}" "${fuzz[@]}"); node_tools=1 ;;
        *) echo "deps.sh: unknown group '$group' (build|run|test|bench|fuzz|deb|all)" >&2; exit 2 ;;
    esac
done

# tools/node: what package-lock.json pins, from the npm registry with the machine's
# Node.js 20.19+ and npm (Debian's nodejs 18 is too old for @redocly/cli): @redocly/cli,
# ajv and ajv-formats (tools/node/openapi-validate.js: the suite checks every answer
# against the document), @stoplight/prism-cli (t/008's validating proxy), s3rver (the
# bucket of the object storage tests, tools/node/s3-server.js) and @aws-sdk/client-s3
# (their interoperability check).
# `npm ci` runs only when one of them is missing or the lock file changed since.
install_node_tools() {
    local dir tools
    dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    tools="$dir/tools/node"
    if [ -x "$tools/node_modules/.bin/redocly" ] && [ -x "$tools/node_modules/.bin/prism" ] \
        && [ -d "$tools/node_modules/ajv-formats" ] && [ -d "$tools/node_modules/s3rver" ] \
        && [ -d "$tools/node_modules/@aws-sdk/client-s3" ] \
        && [ "$tools/node_modules/.package-lock.json" -nt "$tools/package-lock.json" ]; then
        return 0
    fi
    command -v npm >/dev/null || { echo "deps.sh: need Node.js and npm for tools/node (npm ci)" >&2; exit 1; }
    echo "deps.sh: installing tools/node (npm ci)" >&2
    (cd "$tools" && npm ci --no-audit --no-fund --loglevel=error >&2)
}

# One dpkg-query for all names; a package dpkg has never heard of prints nothing (and a
# warning we drop), so it counts as missing.
installed=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${want[@]}" 2>/dev/null || true)
missing=()
for p in $(printf '%s\n' "${want[@]}" | sort -u); do
    if ! grep -q "^$p ii" <<<"$installed"; then
        missing+=("$p")
    fi
done
if [ ${#missing[@]} -eq 0 ]; then
    [ "$node_tools" = 0 ] || install_node_tools
    exit 0
fi

echo "deps.sh: installing ${missing[*]}" >&2
sudo=()
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "deps.sh: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
# Keep package scripts from starting the distribution's services (nginx on port 80, the
# default PostgreSQL cluster, redis on 6379): nothing here uses them. 101 = "not allowed".
policy=/usr/sbin/policy-rc.d
if [ "$(id -u)" = 0 ] && [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    trap 'rm -f "$policy"' EXIT
fi
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
[ "$node_tools" = 0 ] || install_node_tools
