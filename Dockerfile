# ngx_http_cms_module in a container: Debian's own nginx plus the module's Debian package,
# built here by Debian's tooling (make deb) and run by the same script as `make run`
# (scripts/cms.sh, through scripts/container-start.sh). docs/container.md tells it all.
#
#   docker build -t cms .                    production: no compiler, no Node.js, no
#                                            PostgreSQL or Redis server inside
#   docker build -t cms:demo --target demo . the same plus PostgreSQL and Redis, for the demo
#
#   docker run --rm -p 8080:8080 --network app \
#       -e CMS_PG_CONNINFO="host=db port=5432 dbname=cms user=cms password=..." \
#       -e CMS_REDIS_ADDR=redis:6379 \
#       -e CMS_SECRET_FILE=/run/secrets/cms.key -v /srv/cms.key:/run/secrets/cms.key:ro \
#       -v cms-data:/var/lib/cms cms
#       production: your PostgreSQL and Redis (host names go through nginx's resolver, the
#       container's DNS server); the migrations are applied at start by cms-admin, under its
#       advisory lock; the secret (>= 32 bytes, mode 0600 or 0640, readable by uid 10001)
#       is required; no demo, no development manifests.
#   docker run --rm -p 8080:8080 -e CMS_DEMO=1 cms:demo
#       the demo: PostgreSQL and Redis inside, a demo account with a known password and
#       its keys (in /var/lib/cms/demo.env). Never with an external database.
#
# Environment: CMS_DEMO (0), CMS_PG_CONNINFO, CMS_REDIS_ADDR, CMS_SECRET_FILE, CMS_RESOLVER,
# CMS_PORT (8080), CMS_LISTEN (0.0.0.0), CMS_VAR (/var/lib/cms), CMS_MIGRATE (cms-admin),
# CMS_LOGS (stdout); see docs/container.md, scripts/container-start.sh and scripts/cms.sh.

# --- build: the Debian package ------------------------------------------------------------
FROM node:20-bookworm-slim AS node

FROM debian:bookworm-slim AS build
WORKDIR /opt/cms
# Node.js 20.19+ and npm for tools/node: the package's module renders the API reference
# (GET /v1/docs) with @redocly/cli, and bookworm's nodejs (18) is too old for it.
COPY --from=node /usr/local/bin/node /usr/local/bin/node
COPY --from=node /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm
# Packages first, in their own layer: source changes do not reinstall them. deps.sh build
# deb: compilers, nginx-dev, the libraries, debhelper and dpkg-dev, and `npm ci` in
# tools/node from its lock file. build-essential: dpkg-buildpackage's implicit build
# dependency (dpkg-checkbuilddeps asks for it).
COPY scripts/deps.sh scripts/deps.sh
COPY tools/node/package.json tools/node/package-lock.json tools/node/
RUN apt-get update \
    && apt-get install -y -qq --no-install-recommends build-essential \
    && scripts/deps.sh build deb \
    && rm -rf /var/lib/apt/lists/*

COPY . .
# The reference page must be the rendered one, not the fallback of a build without Node.js.
RUN test -x tools/node/node_modules/.bin/redocly \
    && make deb DEPS=0 \
    && ls -l build/deb/libnginx-mod-http-cms_*.deb

# --- runtime: Debian's nginx, the package, the start scripts ------------------------------
FROM debian:bookworm-slim AS runtime-base
COPY --from=build /opt/cms/build/deb/libnginx-mod-http-cms_*.deb /tmp/cms-deb/
COPY scripts/container-apt.sh /opt/cms/scripts/
# apt installs the package's runtime libraries (libpq5, libhiredis0.14, libicu72, ...) and
# Debian's nginx (the `nginx` package: the binary nginx-core wraps, which also pulls
# Debian's other dynamic modules): the package depends on nginx-abi-1.22.1-7, so a module
# and an nginx of different ABIs never meet. curl: the health check. No service starts
# during the build (policy-rc.d). The load test is debian/rules' own: nginx -t with the
# module only.
RUN set -eu; \
    groupadd --gid 10001 cms; \
    useradd --uid 10001 --gid 10001 --home-dir /var/lib/cms --no-create-home \
        --shell /usr/sbin/nologin cms; \
    cd /tmp/cms-deb; \
    /opt/cms/scripts/container-apt.sh nginx ca-certificates curl \
        ./libnginx-mod-http-cms_*.deb; \
    cd /; \
    rm -rf /tmp/cms-deb; \
    printf 'load_module /usr/lib/nginx/modules/ngx_http_cms_module.so;\nevents {}\n' \
        >/tmp/load-test.conf; \
    nginx -q -t -c /tmp/load-test.conf; \
    rm -f /tmp/load-test.conf; \
    cms-admin version; \
    test -d /usr/share/nginx-cms/sql; \
    install -d -o 10001 -g 10001 -m 0755 /var/lib/cms

WORKDIR /opt/cms
# scripts/cms.sh renders conf/nginx.conf.in: the package's copy, the one its module matches.
COPY scripts/cms.sh scripts/container-start.sh scripts/
RUN mkdir conf && ln -s /usr/share/nginx-cms/examples/nginx.conf.in conf/nginx.conf.in

ENV CMS_DEMO=0 \
    CMS_PORT=8080 \
    CMS_LISTEN=0.0.0.0 \
    CMS_VAR=/var/lib/cms \
    CMS_MODULE=/usr/lib/nginx/modules/ngx_http_cms_module.so \
    CMS_ADMIN=/usr/bin/cms-admin \
    CMS_MIGRATE=cms-admin \
    CMS_LOGS=stdout
# Numeric, so that an orchestrator's "run as non-root" can check it. nginx's master runs as
# this user too: no `user` directive, port 8080, pid, logs and temp files in /var/lib/cms.
USER 10001:10001
EXPOSE 8080
# uploads (storage/), the rendered configuration, nginx's pid and temp files; in the demo
# also PostgreSQL's and Redis's data, the secret and demo.env
VOLUME /var/lib/cms
# cms.sh traps TERM: nginx quits gracefully (QUIT, up to 15 s), then PostgreSQL and Redis
# (demo) stop; give `docker stop` more than Docker's default 10 s (-t 30).
STOPSIGNAL SIGTERM
# Readiness: 200 once PostgreSQL answers with the current schema (Redis down is 200
# "degraded"), 503 otherwise.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
    CMD curl -fsS "http://127.0.0.1:${CMS_PORT:-8080}/v1/health/ready" || exit 1
CMD ["/opt/cms/scripts/container-start.sh"]

# --- demo: the runtime plus PostgreSQL and Redis servers ----------------------------------
# docker build --target demo; docker run -e CMS_DEMO=1. Without CMS_DEMO=1 it is the
# production image with two unused servers. No default cluster from postgresql-common:
# scripts/services.sh makes its own in /var/lib/cms/pg.
FROM runtime-base AS demo
USER root
COPY scripts/services.sh scripts/pg-bin.sh scripts/seed-demo.sh scripts/
COPY examples/extensions examples/extensions
RUN set -eu; \
    mkdir -p /etc/postgresql-common/createcluster.d; \
    echo 'create_main_cluster = false' \
        >/etc/postgresql-common/createcluster.d/cms-no-main-cluster.conf; \
    scripts/container-apt.sh postgresql redis-server
USER 10001:10001

# --- the default target: production -------------------------------------------------------
FROM runtime-base AS runtime
