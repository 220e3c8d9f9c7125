# ngx_http_cms_module in a container: Debian's own nginx plus the module, installed and
# built by the same scripts as on a developer's machine (scripts/deps.sh, make build) and
# run by the same script as `make run` (scripts/cms.sh), so the two cannot drift apart.
#
#   docker build -t cms .
#   docker run --rm -p 8080:8080 cms
#       demo: PostgreSQL and Redis run inside the container, data in /var/lib/cms
#   docker run --rm -p 8080:8080 --network app \
#       -e CMS_PG_CONNINFO="host=db port=5432 dbname=cms user=cms password=..." \
#       -e CMS_REDIS_ADDR=redis:6379 \
#       -e CMS_SECRET_FILE=/run/secrets/cms.key -v /srv/cms.key:/run/secrets/cms.key:ro \
#       -v /srv/cms-files:/var/lib/cms/storage cms
#       production-like: external PostgreSQL and Redis, by their service names on the
#       network. nginx resolves the names through its own `resolver` (the container's DNS
#       server from /etc/resolv.conf, Docker's 127.0.0.11, or CMS_RESOLVER) at every
#       connect, never by libpq or the C library, so a restarted service is followed.
#       IP addresses (hostaddr=10.0.0.5, 10.0.0.6:6379) work too. Migrations from sql/
#       are applied to CMS_PG_CONNINFO's database at start. The secret is >= 32 random
#       bytes.
#
# Environment: CMS_PORT (8080), CMS_LISTEN (0.0.0.0 here), CMS_VAR (/var/lib/cms),
# CMS_PG_CONNINFO, CMS_REDIS_ADDR, CMS_RESOLVER, CMS_SECRET_FILE; see scripts/cms.sh.
FROM debian:bookworm-slim

WORKDIR /opt/cms
# Node.js 20.19+ and npm for tools/node: the build renders the API reference (GET /v1/docs)
# with @redocly/cli, and bookworm's nodejs (18) is too old for it.
COPY --from=node:20-bookworm-slim /usr/local/bin/node /usr/local/bin/node
COPY --from=node:20-bookworm-slim /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm
# Packages first, in their own layer: source changes do not reinstall them (deps.sh build
# also runs `npm ci` in tools/node, from its lock file).
COPY scripts/deps.sh scripts/deps.sh
COPY tools/node/package.json tools/node/package-lock.json tools/node/
RUN scripts/deps.sh build run && rm -rf /var/lib/apt/lists/*

COPY . .
RUN make build

ENV CMS_PORT=8080 CMS_LISTEN=0.0.0.0 CMS_VAR=/var/lib/cms
EXPOSE 8080
VOLUME /var/lib/cms
# scripts/cms.sh traps TERM: nginx quits gracefully, then PostgreSQL and Redis stop.
STOPSIGNAL SIGTERM
CMD ["scripts/cms.sh", "run"]
