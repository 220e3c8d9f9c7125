#!/usr/bin/env bash
# make bench: what do our routes cost next to nginx's floor and PostgreSQL's floor?
#
# For each route: wrk on the route, wrk on a static file of exactly the same bytes served
# by the same nginx, and pgbench (-M prepared) running PostgreSQL's best plan for the same
# answer on the same PostgreSQL (the reference query: the plain read of the same rows,
# written next to each row in docs/benchmarks.md and, for each run, in
# build/bench/ratios-references.tsv). Routes: GET /v1/health (a SELECT 1 and a Redis
# PING), GET /v1/api/articles/{id} against the plain row read and
# GET /v1/api/articles?limit=20 against the plain page read on 10,000 articles (and against
# the key, the page and the total), with p50/p99 of the article read and the public section
# read at half of their peak rates (bench/rate.lua), GET /v1/api/media?limit=20 (the same,
# on 10,000 assets), GET /v1/api/comments?article_id=...&limit=20 (the reference page of
# one article's comments among 20,000), every other family's row (bench/families.sh), the
# list's p50 latency in a workspace of 1,000 articles against one of 100,000 (BENCH_LARGE),
# GET /v1/api/custom/{slug}/entries?filter[colour]=black (10,000 entries, BENCH_ENTRIES)
# against pgbench running its two statements (goal: a ratio of 0.6 or more), and the
# public surface: GET /v1/public/pages/{id}/sections?key= (10,000 pages, BENCH_PAGES)
# and its 304, against the static copy and nginx's own 304 for it (goal: 0.8); and
# GET /v1/files/{key}, a stored 10 KiB PNG, against nginx's static module serving the
# same file from the same folder (goal: 0.9), and from an S3-compatible bucket through
# @cms_s3 against nginx's own proxy_pass of the object, without a cache and with a warm
# proxy_cache (goal: 0.9 warm); and webhook delivery: 10,000 queued
# events to a local TLS receiver (goal: 2,000/s, GET /v1/health p99 under 50 ms); and
# the cost of request metrics: GET /v1/api/articles/{id} with a cms_status location
# (every request counted) against the same without one (nothing counted), as on/off;
# and reads on a streaming replica: the article list and the public section read through
# an nginx with cms_postgres_replica against the primary alone, as replica/primary.
# Prints the rates and the ratios route/static and route/pgbench.
#
# Throwaway PostgreSQL + Redis (scripts/test-env.sh), own ports, one nginx worker: the
# machine has 2 cores, and wrk, nginx and PostgreSQL share them, so one worker keeps the
# comparison about per-request cost rather than about core scheduling.
# Environment: CMS_MODULE (the .so), BENCH_SECONDS [10], BENCH_CONNECTIONS [32],
# BENCH_PG_MAX [4] (the module's pool size), BENCH_PG_DEPTH [8] (its depth=: statements
# in flight on one connection, docs/operations.md), BENCH_ONLY (files: the files row alone;
# webhooks: the webhook delivery row alone; metrics: the request metrics row alone; ext:
# the health row and the extension rows: invoice read, fail, record, and record again
# with PostgreSQL on a core of its own, BENCH_SPLIT [1], 0 leaves it out; search: the search
# rows, BENCH_SEARCH [100000] articles; images: the image rows, BENCH_IMAGE_RUNS [25];
# gzip: the compression figures; idle: BENCH_IDLE [10000] idle keep-alive connections;
# articles: the article read and page rows; families: bench/families.sh's rows),
# BENCH_HOOKS [10000] (events delivered), BENCH_METRICS_RUNS [5] (runs of each side),
# BENCH_RATIOS [build/bench/ratios.tsv] (each row's ratios, tab-separated: route, /static,
# /pgbench; "-" for none), which `make bench-check` compares with bench/baseline.tsv.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" != --inside ]; then
    export TEST_CMS_MODULE=${CMS_MODULE:-$root/build/ngx_http_cms_module.so}
    [ -f "$TEST_CMS_MODULE" ] || { echo "bench: $TEST_CMS_MODULE not built (make build)" >&2; exit 1; }
    exec "$root/scripts/test-env.sh" "$0" --inside
fi

secs=${BENCH_SECONDS:-10}
conns=${BENCH_CONNECTIONS:-32}
ratios=${BENCH_RATIOS:-$root/build/bench/ratios.tsv}
mkdir -p "$(dirname "$ratios")"
: >"$ratios"
pg_max=${BENCH_PG_MAX:-4}
pg_depth=${BENCH_PG_DEPTH:-8}
module=$TEST_CMS_MODULE
pg=$TEST_CMS_PG_PORT
redis=$TEST_CMS_REDIS_PORT
prefix=$TEST_CMS_VAR/bench-nginx
read -r port < <("$root/scripts/free-ports" 1)

mkdir -p "$prefix"/{conf,logs,temp,storage,static}
chmod 755 "$prefix" "$prefix/static"
[ "$(id -u)" = 0 ] && chown nobody "$prefix/storage" "$prefix/temp"
od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$prefix/conf/secret.key"
chmod 600 "$prefix/conf/secret.key"            # nginx -t refuses a secret others may read
psql -X -q -h 127.0.0.1 -p "$pg" -U postgres -d postgres \
    -c "CREATE DATABASE bench TEMPLATE $TEST_CMS_PG_TEMPLATE"

# The webhook receiver's throwaway CA and certificate (for 127.0.0.1), made before the
# module's nginx starts: its cms_webhook_delivery trusts that CA.
hdir=$TEST_CMS_VAR/bench-hooks
mkdir -p "$hdir"/{conf,logs,temp}
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -keyout "$hdir/conf/ca.key" -out "$hdir/conf/ca.pem" -subj /CN=cms-bench-hooks-ca \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=keyCertSign,cRLSign 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=127.0.0.1 \
    -keyout "$hdir/conf/server.key" -out "$hdir/conf/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
    >"$hdir/conf/server.ext"
openssl x509 -req -in "$hdir/conf/server.csr" -CA "$hdir/conf/ca.pem" -CAkey "$hdir/conf/ca.key" \
    -CAcreateserial -days 2 -extfile "$hdir/conf/server.ext" -out "$hdir/conf/server.crt" 2>/dev/null
chmod 644 "$hdir/conf/"*

# what both nginx configurations (the module's and the webhook receiver's) hold
nginx_common='    access_log off;
    client_body_temp_path temp/body;
    proxy_temp_path temp/proxy;
    fastcgi_temp_path temp/fastcgi;
    uwsgi_temp_path temp/uwsgi;
    scgi_temp_path temp/scgi;'

# the workers' descriptors: the idle row holds 10,000 connections; no more than the hard
# limit, which an unprivileged (or containerised) nginx cannot raise
nofile=$(ulimit -Hn)
[ "$nofile" = unlimited ] || [ "$nofile" -gt 40000 ] && nofile=40000

# what both of the module's configurations (the folder's, the bucket's) begin with
module_head="load_module $module;
worker_processes 1;
error_log logs/error.log warn;
pid logs/nginx.pid;
worker_rlimit_nofile $nofile;
events { worker_connections 16384; }
http {
$nginx_common
    cms_postgres \"hostaddr=127.0.0.1 port=$pg dbname=bench user=postgres\" max=$pg_max depth=$pg_depth queue=1024;
    cms_redis 127.0.0.1:$redis max=8;
    cms_secret $prefix/conf/secret.key;"

cat >"$prefix/conf/nginx.conf" <<EOF
$module_head
    cms_thread_pool default;
    cms_events_interval 200ms;
    cms_storage $prefix/storage;
    # JSON through nginx's gzip filter for a client that asks (docs/operations.md)
    gzip on; gzip_types application/json; gzip_min_length 256; gzip_vary on;
    # the public surface's rate limit (120/min a site) would answer wrk 429
    cms_public_rate_limit off;
    cms_public_cache zone=cms_public:16m;
    # webhook deliveries to the local receiver of the webhook row
    cms_outbound_loopback on;
    cms_webhook_delivery on ca=$hdir/conf/ca.pem;
    server {
        listen 127.0.0.1:$port backlog=1024;
        location /v1/ { cms; }
        # The floor: the same bytes from a file, same server, same worker.
        location /static/ { root $prefix; default_type application/json; }
        # The stored objects' floor: nginx's static module on the cms_storage folder.
        location /storage/ { root $prefix; types { image/png png; image/webp webp; } }
    }
}
EOF

# stops the nginx whose master is $1 and waits for it to go
stop_pid() {
    local pid=$1
    kill -QUIT "$pid" 2>/dev/null || return 0
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
}
stop_nginx() {
    local pid
    pid=$(cat "$prefix/logs/nginx.pid" 2>/dev/null) || return 0
    stop_pid "$pid"
}
hooks_pid=
s3_pid=
s3_nginx=
metrics_pids=()
stop_all() {
    local p
    [ -z "$hooks_pid" ] || kill -QUIT "$hooks_pid" 2>/dev/null || true
    # the request metrics row's two nginx (metrics_bench), also when the bench stops early;
    # by pid, kept at their start: a pid file is gone if the folder was removed under us
    for p in ${metrics_pids[@]+"${metrics_pids[@]}"}; do
        kill -QUIT "$p" 2>/dev/null || true
    done
    # the bucket's nginx and S3 server (files_s3), also when the bench stops early
    [ -z "$s3_nginx" ] || kill -QUIT "$(cat "$s3_nginx" 2>/dev/null)" 2>/dev/null || true
    [ -z "$s3_pid" ] || kill "$s3_pid" 2>/dev/null || true
    # the replica of the replica row (replica_bench)
    if [ -n "${replica_dir:-}" ]; then
        as_pg "$(pg_bindir)/pg_ctl" -D "$replica_dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    stop_nginx
}
trap stop_all EXIT

/usr/sbin/nginx -p "$prefix/" -c "$prefix/conf/nginx.conf"
for _ in $(seq 1 100); do
    curl -s -o /dev/null "http://127.0.0.1:$port/" && break
    sleep 0.1
done

url=http://127.0.0.1:$port
results=()
report() {
    echo
    printf '%-34s %10s %10s %10s %8s %8s\n' "route" "route/s" "static/s" "pgbench" "/static" "/pgbench"
    printf '%s\n' "${results[@]}"
}
code=$(curl -s -o "$prefix/static/health.json" -w '%{http_code}' "$url/v1/health")
[ "$code" = 200 ] || { echo "bench: GET /v1/health answered $code:" >&2; cat "$prefix/static/health.json" >&2; exit 1; }
size=$(stat -c %s "$prefix/static/health.json")
echo "health body: $size bytes: $(cat "$prefix/static/health.json")"
cmp -s "$prefix/static/health.json" <(curl -s "$url/static/health.json") \
    || { echo "bench: the static copy does not match" >&2; exit 1; }

# Runs wrk, prints its summary, leaves the rate in $rate; fails on errors or non-2xx.
run_wrk() {
    local name=$1 path=$2 out
    shift 2
    echo
    echo "== $name: wrk -t2 -c$conns -d${secs}s $url$path"
    # options before the URL; ${wrk_tail[@]} (script arguments) after it
    out=$(timeout $((secs + 30)) ${bench_pin[@]+"${bench_pin[@]}"} wrk -t2 -c"$conns" -d"${secs}s" --latency "$@" "$url$path" \
              ${wrk_tail[@]+"${wrk_tail[@]}"})
    echo "$out" | sed -n '/Latency/p;/50%/p;/99%/p;/requests in/p;/Non-2xx/p;/Socket errors/p;/Requests\/sec/p'
    rate=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
    lat50=$(awk '/^ +50%/ {print $2}' <<<"$out")
    lat99=$(awk '/^ +99%/ {print $2}' <<<"$out")
    if grep -q 'Non-2xx' <<<"$out"; then
        echo "bench: $name had non-2xx answers: its rate is not a success rate" >&2
        exit 1
    fi
}

# Runs pgbench on the statement in file $2; leaves the TPS in $tps.
run_pgbench() {
    local name=$1 file=$2 out
    echo
    echo "== $name: pgbench -n -c$conns -j2 -T$secs -M prepared"
    out=$(timeout $((secs + 30)) ${bench_pin[@]+"${bench_pin[@]}"} pgbench -n -c"$conns" -j2 -T"$secs" -M prepared \
              -f "$file" -h 127.0.0.1 -p "$pg" -U postgres bench 2>&1)
    echo "$out" | grep -E 'latency average|^tps' || true
    tps=$(awk '/^tps = / {print $3; exit}' <<<"$out")
}

# Copies what $path answers into static/, so nginx serves the same bytes from a file.
snapshot() {
    local path=$1 file=$2
    shift 2
    code=$(curl -s -o "$prefix/static/$file" -w '%{http_code}' "$@" "$url$path")
    [ "$code" = 200 ] || { echo "bench: $path answered $code" >&2; cat "$prefix/static/$file" >&2; exit 1; }
}

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
# Each row's rates too ("row<TAB>route/s<TAB>static/s<TAB>pgbench", "-" for none), for
# the table of docs/benchmarks.md (table_md below)
rates=${ratios%.tsv}-rates.tsv
: >"$rates"
row() { results+=("$(printf '%-34s %10.0f %10.0f %10.0f %8.3f %8.3f' "$1" "$2" "$3" "$4" \
    "$(ratio "$2" "$3")" "$(ratio "$2" "$4")")")
    printf '%s\t%s\t%s\n' "$1" "$(ratio "$2" "$3")" "$(ratio "$2" "$4")" >>"$ratios"
    printf '%s\t%.0f\t%.0f\t%.0f\n' "$1" "$2" "$3" "$4" >>"$rates"; }
# a row against nginx alone (no pgbench column)
row2() { results+=("$(printf '%-34s %10.0f %10.0f %10s %8.3f %8s' "$1" "$2" "$3" - \
    "$(ratio "$2" "$3")" -)")
    printf '%s\t%s\t-\n' "$1" "$(ratio "$2" "$3")" >>"$ratios"
    printf '%s\t%.0f\t%.0f\t-\n' "$1" "$2" "$3" >>"$rates"; }

# a row against pgbench alone (a write: no static copy of it)
row3() { results+=("$(printf '%-34s %10.0f %10s %10.0f %8s %8.3f' "$1" "$2" - "$4" - \
    "$(ratio "$2" "$4")")")
    printf '%s\t-\t%s\n' "$1" "$(ratio "$2" "$4")" >>"$ratios"
    printf '%s\t%.0f\t-\t%.0f\n' "$1" "$2" "$4" >>"$rates"; }

# The rows of a run as a Markdown table with each row's reference (build/bench/table.md)
table_md() {
    awk -F '\t' 'FILENAME == ARGV[1] {ref[$1] = $2; next}
        FILENAME == ARGV[2] {rs[$1] = $2; rp[$1] = $3; next}
        {printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, rs[$1], rp[$1], \
             ($1 in ref) ? ref[$1] : "-"}' "$references" "$ratios" "$rates" |
    sed '1i | row | route/s | static/s | pgbench | /static | /pgbench | reference |\n| --- | --- | --- | --- | --- | --- | --- |' \
        >"${ratios%/*}/table.md"
}

# p50 and p99 of GET $2 at half of the rate $3 (its peak, measured by its row), with
# bench/rate.lua holding wrk to that rate; appended to $latency_line.  Further arguments:
# request header options (the credential).
latency_line=
latency_at_half() {
    local name=$1 path=$2 peak=$3 half saved_tail=("${wrk_tail[@]+"${wrk_tail[@]}"}")
    shift 3
    half=$(awk -v p="$peak" 'BEGIN {printf "%d", p / 2}')
    wrk_tail=(-- 2 "$half")
    run_wrk "$name at half its peak ($half/s)" "$path" -s "$root/bench/rate.lua" "$@"
    wrk_tail=("${saved_tail[@]+"${saved_tail[@]}"}")
    latency_line+="$(printf '%s at %s/s (half of %.0f): kept %.0f/s, p50 %s, p99 %s; ' \
        "$name" "$half" "$peak" "$rate" "$lat50" "$lat99")"
}

# Each row's reference (what pgbench ran), for docs/benchmarks.md: "row<TAB>reference"
references=${ratios%.tsv}-references.tsv
: >"$references"

# One read family's row: wrk on the route, wrk on nginx serving the bytes the route
# answered (copied first) and pgbench running the reference query in file $4 (named $3,
# its statements copied into $references). Further arguments: request header options
# for curl and wrk (the credential). Leaves $route_rate and $static_rate, and the copy's
# name under static/ in $row_file (its locals must not shadow $rates or $ratios, the files
# row() appends to). With the array row_wrk set, wrk takes its options
# instead of the header options (a Lua script; emptied after the row). With row_repeat
# set to N, the route and the reference run N times in turn and the row keeps the
# median of each (for the rows whose ratio is a goal: one 10-second run of either
# swings by a fifth on this shared machine).
nrows=0
row_wrk=()
row_repeat=1
bench_row() {
    local name=$1 path=$2 ref=$3 sql=$4 wopts i runs=() tpss=()
    shift 4
    wopts=("$@")
    [ ${#row_wrk[@]} = 0 ] || wopts=("${row_wrk[@]}")
    row_wrk=()
    row_file=row-$((++nrows)).json
    snapshot "$path" "$row_file" "$@"
    echo; echo "$name body: $(stat -c %s "$prefix/static/$row_file") bytes"
    for ((i = 0; i < row_repeat; i++)); do
        run_wrk "$name" "$path" "${wopts[@]}"
        runs+=("$rate")
        run_pgbench "$ref" "$sql"
        tpss+=("$tps")
    done
    row_repeat=1
    route_rate=$(median "${runs[@]}")
    tps=$(median "${tpss[@]}")
    [ ${#runs[@]} = 1 ] || echo "medians of ${#runs[@]}: route $route_rate/s, reference $tps tps"
    run_wrk "static file of the same size" "/static/$row_file"
    static_rate=$rate
    row "$name" "$route_rate" "$static_rate" "$tps"
    ref_of "$name" "$ref" "$sql"
}

# A row's reference into $references: ref_of ROW NAME FILE (the file's statements)
ref_of() { printf '%s\t%s: %s\n' "$1" "$2" "$(tr '\n' ' ' <"$3" | sed 's/ *$//')" >>"$references"; }

# BENCH_HOLD=FILE BENCH_HOLD_AT=SQLNAME (fam-article-create, ..., fail): before that row, writes
# what it runs (the URL, the database's port, the route's path or Lua script, the
# reference's file) to FILE and waits while FILE exists, for a profile or a count of what
# the row does with its data in place (docs/benchmarks.md)
bench_hold() {
    [ -n "${BENCH_HOLD:-}" ] && [ "${1##*/}" = "${BENCH_HOLD_AT:-}.sql" ] || return 0
    printf 'url=%s\npg=%s\nroute=%s\nsql=%s\n' "$url" "$pg" "$2" "$1" >"$BENCH_HOLD"
    echo "== held before ${1##*/}: remove $BENCH_HOLD to go on"
    while [ -e "$BENCH_HOLD" ]; do sleep 1; done
}

# Settles the database before the rows that follow the families' writes: one VACUUM
# ANALYZE, waited for (the writes leave tens of thousands of new and dead rows, and
# autovacuum would otherwise take its share of the two cores in the middle of a later
# row), then a CHECKPOINT (the pages those writes and the vacuum dirtied are otherwise
# written out by the next checkpoint the WAL's growth starts, in the middle of a write
# row, whose commits then wait on the disk); says how long it took, in $settle_line.
settle_line=
settle_db() {
    local t0=$SECONDS
    psql -X -q -h 127.0.0.1 -p "$pg" -U postgres bench -c "VACUUM (ANALYZE)" -c CHECKPOINT
    echo "== database settled before $1: VACUUM ANALYZE and CHECKPOINT took $((SECONDS - t0)) s"
    settle_line+="before $1: VACUUM ANALYZE and CHECKPOINT $((SECONDS - t0)) s; "
}

# The same object in a bucket (cms_storage s3, docs/object-storage.md): the bench's
# S3 server (tools/node/s3-server.js: s3rver, every signature checked) holds the PNG;
# a second nginx serves GET /v1/files/{key} through @cms_s3, without a cache (every read
# a signed exchange with the bucket) and with proxy_cache (warm), against nginx's own
# proxy_pass of the same object from the same server, signed once by curl (a signature
# holds 15 minutes), without and with the same proxy_cache. The "static/s" column is
# nginx's own proxy_pass there.
files_s3() {
    local s3dir=$TEST_CMS_VAR/bench-s3 s3prefix=$TEST_CMS_VAR/bench-s3-nginx
    local s3port p1 p2 obj sig auth date loc ref cache u saved=$url
    read -r s3port p1 p2 < <("$root/scripts/free-ports" 3)
    mkdir -p "$s3dir/data" "$s3dir/stage" "$s3prefix"/{conf,logs,temp,cache}
    chmod 755 "$s3dir" "$s3prefix"
    [ "$(id -u)" = 0 ] && chown nobody "$s3dir/stage" "$s3prefix/temp" "$s3prefix/cache"
    printf '[default]\naws_access_key_id = AKBENCH\naws_secret_access_key = bench-secret\n' \
        >"$s3dir/credentials"
    chmod 600 "$s3dir/credentials"
    node "$root/tools/node/s3-server.js" --dir "$s3dir/data" --port "$s3port" --bucket media \
        --key AKBENCH --secret bench-secret >"$s3dir/server.log" 2>&1 &
    s3_pid=$!
    for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$s3port/" && break; sleep 0.1; done
    obj=http://127.0.0.1:$s3port/media/$fkey
    local sigv4=(--aws-sigv4 aws:amz:us-east-1:s3 --user AKBENCH:bench-secret
                 -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD')
    [ "$(curl -s -o /dev/null -w '%{http_code}' "${sigv4[@]}" -T "$prefix/storage/$fkey" "$obj")" = 200 ] \
        || { echo "bench: the bucket did not take the object" >&2; cat "$s3dir/server.log" >&2; exit 1; }
    # the reference's signed headers, as curl sent them
    sig=$(curl -sv -o /dev/null "${sigv4[@]}" "$obj" 2>&1 | tr -d '\r')
    auth=$(sed -n 's/^> Authorization: //p' <<<"$sig")
    date=$(sed -n 's/^> [Xx]-[Aa]mz-[Dd]ate: //p' <<<"$sig")
    loc='proxy_pass_request_headers off;
            proxy_set_header Host $cms_s3_host;
            proxy_set_header Authorization $cms_s3_authorization;
            proxy_set_header x-amz-date $cms_s3_date;
            proxy_set_header x-amz-content-sha256 $cms_s3_content_sha256;
            proxy_http_version 1.1;
            proxy_set_header Connection "";'
    ref="proxy_pass_request_headers off;
            proxy_set_header Host 127.0.0.1:$s3port;
            proxy_set_header Authorization \"$auth\";
            proxy_set_header x-amz-date $date;
            proxy_set_header x-amz-content-sha256 UNSIGNED-PAYLOAD;
            proxy_http_version 1.1;
            proxy_set_header Connection \"\";"
    cache='proxy_cache files; proxy_cache_valid 200 10m; proxy_cache_key $uri;'
    cat >"$s3prefix/conf/nginx.conf" <<CONF
$module_head
    cms_storage s3 endpoint=http://127.0.0.1:$s3port bucket=media region=us-east-1
                credentials=$s3dir/credentials stage=$s3dir/stage path_style=on;
    proxy_cache_path $s3prefix/cache keys_zone=files:10m;
    upstream bucket { server 127.0.0.1:$s3port; keepalive 32; }
    server {
        listen 127.0.0.1:$p1 backlog=1024;
        location /v1/ { cms; }
        location @cms_s3 { proxy_pass http://bucket\$cms_s3_uri; $loc }
        location /ref/ { proxy_pass http://bucket/media/; $ref }
    }
    server {
        listen 127.0.0.1:$p2 backlog=1024;
        location /v1/ { cms; }
        location @cms_s3 { proxy_pass http://bucket\$cms_s3_uri; $loc $cache }
        location /ref/ { proxy_pass http://bucket/media/; $ref $cache }
    }
}
CONF
    s3_nginx=$s3prefix/logs/nginx.pid
    /usr/sbin/nginx -p "$s3prefix/" -c "$s3prefix/conf/nginx.conf" \
        || { cat -n "$s3prefix/conf/nginx.conf" >&2; exit 1; }
    for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$p1/" && break; sleep 0.1; done
    for u in "http://127.0.0.1:$p1" "http://127.0.0.1:$p2"; do
        cmp -s "$prefix/storage/$fkey" <(curl -s "$u/v1/files/$fkey") \
            || { echo "bench: $u/v1/files/$fkey does not answer the object" >&2; exit 1; }
        cmp -s "$prefix/storage/$fkey" <(curl -s "$u/ref/$fkey") \
            || { echo "bench: $u/ref/$fkey does not answer the object" >&2; exit 1; }
    done
    url=http://127.0.0.1:$p1
    run_wrk "GET /v1/files/{key} from the bucket" "/v1/files/$fkey"
    a=$rate
    run_wrk "nginx proxy_pass, the same object" "/ref/$fkey"
    b=$rate
    row2 "/v1/files from S3, no cache" "$a" "$b"
    url=http://127.0.0.1:$p2
    run_wrk "GET /v1/files/{key}, proxy_cache warm" "/v1/files/$fkey"
    a=$rate
    run_wrk "nginx proxy_pass + proxy_cache warm" "/ref/$fkey"
    b=$rate
    row2 "/v1/files from S3, cache warm" "$a" "$b"
    url=$saved
    kill -QUIT "$(cat "$s3prefix/logs/nginx.pid")" 2>/dev/null || true
    kill "$s3_pid" 2>/dev/null || true
}

# cms-admin on the bench's database (workspaces, keys, facilities)
admin=(env CMS_DATABASE_URL="hostaddr=127.0.0.1 port=$pg dbname=bench user=postgres"
       CMS_SECRET_FILE="$prefix/conf/secret.key" "$root/build/cms-admin")

# wrk's Lua prelude for the scripts of the write rows: every thread numbered ("tid"),
# and seed() to give each its own random sequence (from its init)
lua_head='local threads = 0
function setup(thread)
    threads = threads + 1
    thread:set("tid", threads)
end
local function seed() math.randomseed(os.time() * 100 + tid) end'

# An extension row: the route (wrk with the Lua script $5, its arguments after it and the
# run's index last) and pgbench running the reference $4 (named $3), in turn, three times;
# leaves the medians in $a and $tps (one 10-second run of either swings by a fifth here,
# and a row's ratio is a goal of issue 35).
ext_pair() {
    local name=$1 path=$2 ref=$3 sql=$4 script=$5
    shift 5
    bench_hold "$sql" "$script $*"
    pair_runs "$name" "$path" "$ref" "$sql" "$script" 0 "$conns" "$@"
    echo "medians of 3: $pair_line"
}

# The three runs a side of ext_pair and split_pair: the route (its wrk script's runs from
# $6 on, after the script's arguments), then pgbench at each of the session counts $7, the
# fastest its reference; each run's PostgreSQL time a request and its rate until its
# events were relayed; leaves the medians in $a, $tps and $pair_line
pair_runs() {
    local name=$1 path=$2 ref=$3 sql=$4 script=$5 first=$6 sessions=$7 i c
    local runs=() tpss=() us=() usp=() ur=() up=() best best_us best_ur
    shift 7
    relay_drained "the row"
    for ((i = 0; i < 3; i++)); do
        wrk_tail=(-- "$@" "$((first + i))")
        cpu_begin
        run_wrk "$name" "$path" -s "$script"
        cpu_end "the route's run"
        wrk_tail=()
        runs+=("$rate") us+=("$(pg_us "$rate")")
        relay_drained "pgbench's run"
        ur+=("$(until_relayed "$rate" "$drained")")
        best=0 best_us=0 best_ur=0
        for c in $sessions; do
            cpu_begin
            conns=$c run_pgbench "$ref ($c sessions)" "$sql"
            cpu_end "pgbench's run"
            relay_drained "the next run"
            if awk -v a="$tps" -v b="$best" 'BEGIN {exit !(a > b)}'; then
                best=$tps best_us=$(pg_us "$tps") best_ur=$(until_relayed "$tps" "$drained")
            fi
        done
        tpss+=("$best") usp+=("$best_us") up+=("$best_ur")
    done
    a=$(median "${runs[@]}")
    tps=$(median "${tpss[@]}")
    pair_line="route $a/s, reference $tps tps;"
    pair_line+=" PostgreSQL's time a request: route $(median "${us[@]}") us, reference $(median "${usp[@]}") us;"
    pair_line+=" until their events were relayed: route $(median "${ur[@]}")/s, reference $(median "${up[@]}")/s"
}

# Before each run of an extension row, the relay's backlog is waited for (at most 120 s):
# every payment's event is relayed to Redis by the worker's background job, and pgbench's
# events, written faster than the relay moves them beside pgbench's 32 sessions, would
# otherwise be relayed during the route's next run, on the route's cores. So each run starts
# with nothing waiting: the route's runs relay their own events as they come (the product's
# cost of a payment); what pgbench's runs leave is drained, and said, before the route's.
# How long that took is left in $drained (seconds): the run before it ends when its last
# event is relayed (until_relayed).
relay_drained() {
    local t0 n first=
    t0=$(date +%s.%N)
    while :; do
        n=$(psql -X -At -h 127.0.0.1 -p "$pg" -U postgres bench \
                -c "SELECT count(*) FROM ext_events WHERE relayed_at IS NULL")
        first=${first:-$n}
        drained=$(awk -v t0="$t0" -v t1="$(date +%s.%N)" 'BEGIN {printf "%.2f", t1 - t0}')
        [ "$n" = 0 ] && break
        if awk -v d="$drained" 'BEGIN {exit !(d >= 120)}'; then
            echo "bench: $n extension events still not relayed after 120 s" >&2
            break
        fi
        sleep 0.05
    done
    [ "$first" = 0 ] && drained=0 \
        || echo "== relay: $first events waiting before $1, relayed in $drained s"
}
# A run's rate until its last event was relayed: its requests over its seconds and the
# relay's drain after it (the relay moves every payment's event; what a run leaves, the
# next waits for)
until_relayed() { awk -v r="$1" -v s="$secs" -v d="$2" 'BEGIN {printf "%.0f", r * s / (s + d)}'; }

# What each side used of the cores during a run of an extension row, in % of one core:
# the module's nginx worker, PostgreSQL (its processes, and what its ended ones used, as
# the postmaster's children: pgbench's sessions end with their run), Redis, and the whole
# machine, from /proc (cpu_begin, the run, cpu_end NAME): a route run that is slow while
# its reference is not says here whose time it was
cpu_ticks() {
    local p t=0 f
    for p in "$@"; do
        read -r -a f <"/proc/$p/stat" 2>/dev/null && t=$((t + f[13] + f[14]))
    done
    echo "$t"
}
cpu_groups() {
    local pm f i
    # pgbench's sessions end with their run: counted once the postmaster has reaped them
    for ((i = 0; i < 100; i++)); do
        ps -u postgres -o stat= | grep -q '^Z' || break
        sleep 0.02
    done
    cpu_ticks $(pgrep -P "$(cat "$prefix/logs/nginx.pid")")
    pm=$(head -1 "$TEST_CMS_VAR/pg/data/postmaster.pid")
    read -r -a f <"/proc/$pm/stat"
    echo $(($(cpu_ticks $(pgrep -u postgres)) + f[15] + f[16]))
    cpu_ticks "$(cat "$TEST_CMS_VAR/redis.pid" 2>/dev/null)"
    awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat
}
cpu_begin() { cpu_t0=$(date +%s.%N); mapfile -t cpu_c0 < <(cpu_groups); }
cpu_end() {
    local c1 out
    mapfile -t c1 < <(cpu_groups)
    mapfile -t out < <(awk -v t0="$cpu_t0" -v t1="$(date +%s.%N)" -v hz="$(getconf CLK_TCK)" -v what="$1" \
        -v a="${cpu_c0[*]}" -v b="${c1[*]}" '
        BEGIN { split(a, x); split(b, y); d = (t1 - t0) * hz / 100
                printf "== cpu during %s: nginx worker %d %%, postgres %d %%, redis %d %%, all %d %%\n",
                       what, (y[1] - x[1]) / d, (y[2] - x[2]) / d, (y[3] - x[3]) / d, (y[4] - x[4]) / d
                printf "%.1f\n", (y[2] - x[2]) / d }')
    echo "${out[0]}"
    cpu_pg=${out[1]}
}
# PostgreSQL's time for one request of the last run, in microseconds: its share of a core
# (cpu_end) over the run's rate
pg_us() { awk -v c="$cpu_pg" -v r="$1" 'BEGIN {printf "%.0f", c * 10000 / r}'; }

# BENCH_SPLIT (on where there are two cores or more; 0 turns it off): the record row once
# more with PostgreSQL on a core of its own and everything else (nginx, Redis, wrk,
# pgbench) on the others, the layout of a fleet whose database has its host.  On shared
# cores the route's HTTP side (nginx, Redis, wrk: about half a core at 2,300 payments a
# second) takes its share from PostgreSQL, where pgbench's client takes a tenth; split,
# each side's rate is what PostgreSQL serves on its core.  split_cores on|off moves the
# running processes; PostgreSQL's new sessions inherit the postmaster's core.
split_cores() {
    local last=$(($(nproc) - 1)) db rest p
    if [ "$1" = on ]; then db=0 rest=1-$last bench_pin=(taskset -c "$rest")
    else db=0-$last rest=0-$last bench_pin=()
    fi
    for p in $(pgrep -u postgres); do taskset -a -p -c "$db" "$p" >/dev/null 2>&1 || true; done
    for p in $(cat "$prefix/logs/nginx.pid") $(pgrep -P "$(cat "$prefix/logs/nginx.pid")") \
             $(cat "$TEST_CMS_VAR/redis.pid" 2>/dev/null); do
        taskset -a -p -c "$rest" "$p" >/dev/null 2>&1 || true
    done
}

# The module's pool at $1 connections: the configuration's max= changed and reloaded; the
# old worker leaves once its connections are closed (waited for, at most 30 s)
bench_pool() {
    local old t0=$SECONDS
    old=$(pgrep -P "$(cat "$prefix/logs/nginx.pid")")
    sed -i "/cms_postgres /s/ max=[0-9]*/ max=$1/" "$prefix/conf/nginx.conf"
    /usr/sbin/nginx -p "$prefix/" -c "$prefix/conf/nginx.conf" -s reload
    while kill -0 $old 2>/dev/null || [ -z "$(pgrep -P "$(cat "$prefix/logs/nginx.pid")")" ]; do
        [ $((SECONDS - t0)) -lt 30 ] || { echo "bench: nginx's old worker still runs" >&2; exit 1; }
        sleep 0.1
    done
    echo "== the module's pool: max=$1"
}

# An extension row's three runs a side with the cores split (split_cores), on a settled
# database (autovacuum's passes over the rows' payments would otherwise land on the
# database's one core in the middle of a run) and with the pool at the product's default
# (max=16: on its own core PostgreSQL waits for the route's connections, which wait for
# nginx's core between statements): the route (its wrk script's runs from $4 on), then
# pgbench at 4, 16 and $conns sessions, the fastest its reference; leaves the medians in
# $a and $tps
split_pair() {
    local path=$1 sql=$2 script=$3 first=$4
    settle_db "the split runs"
    split_cores on
    bench_pool 16
    pair_runs "the route, PostgreSQL on a core of its own" "$path" \
        "the reference, PostgreSQL on a core of its own" "$sql" "$script" "$first" "4 16 $conns"
    bench_pool "$pg_max"
    split_cores off
    echo "PostgreSQL on a core of its own, medians of 3: $pair_line"
}

# The extension surface (BENCH_ONLY=ext: these rows alone, after the health row)
ext_bench() {
# The extension surface: 3000 keys of one facility, so that the rate limit
# (120 burst, 2/s per key) does not cut the measurement short.
fac=$("${admin[@]}" facility create --name Bench)
ext=$("${admin[@]}" extension create --facility "$fac" --name billing --version 1.0.0 \
          --privileges ext:billing:read,ext:billing:write)
inv=$("${admin[@]}" invoice create --facility "$fac" --patient p1 --amount 5000 --currency XOF)
"$root/bench/extkeys.pl" "$prefix/conf/secret.key" 3000 >"$prefix/extkeys.tsv"
awk -F'\t' -v e="$ext" -v f="$fac" '{ printf "%s\t%s\tt\t{ext:billing:read,ext:billing:write}\t%s\t\\\\x%s\n", e, f, substr($1, 1, 14), $2 }' \
    "$prefix/extkeys.tsv" \
    | psql -X -q -h 127.0.0.1 -p "$pg" -U postgres bench -c "\\copy extension_keys (extension_id, facility_id, livemode, privileges, key_prefix, secret_hash) FROM STDIN"
cut -f1 "$prefix/extkeys.tsv" >"$prefix/extkeys.txt"
ehash=$(head -1 "$prefix/extkeys.tsv" | cut -f2)
# The facility's history, before its first request: the 1,200,000 pending invoices the
# record row pays (below), and 20,000 earlier failed attempts on the one invoice of the
# read and fail rows.  A whole run's VACUUM ANALYZE (settle_db) comes while the
# facility's tables are still empty; the module's connections plan a statement at its
# first run and keep the plan, and a table counted empty and empty on disk then is
# planned as a sequential scan, which every request after it pays as the table grows,
# until autovacuum's next ANALYZE (the whole-run fail rows of 0.15.3-0.15.4: 815 and 182
# a second against pgbench's 2,000, whose sessions plan anew each run: the payment's
# Idempotency-Key lookup, then the invoice's).  A running facility has that history.
# The record row pays invoices md5('inv' || n): the route n <= 600,000, pgbench the
# others, from n = 600001 on, through the same statement.
psql -X -q -h 127.0.0.1 -p "$pg" -U postgres bench -c "
    INSERT INTO invoices (id, facility_id, livemode, patient_id, amount, currency)
    SELECT md5('inv' || n)::uuid, '$fac', true, 'p' || n, 1000, 'XOF'
      FROM generate_series(1, 1200000) n;
    CREATE SEQUENCE bench_inv START 600001;
    INSERT INTO payments (invoice_id, facility_id, livemode, kind, reason, idempotency_key,
                          fingerprint, response_status, response_body, created_at)
    SELECT '$inv', '$fac', true, 'failed', 'insufficient_funds', 'seed:' || g, 'fp', 200, '{}',
           now() - interval '30 days' + g * interval '1 minute'
      FROM generate_series(1, 20000) g" -c "ANALYZE invoices" -c "ANALYZE payments"

# wrk: every request with the next key; POSTs with a fresh Idempotency-Key
cat >"$prefix/ext.lua" <<LUA
$lua_head
local keys, i = {}, 0
for line in io.lines("$prefix/extkeys.txt") do keys[#keys + 1] = line end
local method, body = "GET", nil
function init(args)
    seed()
    if args[1] == "post" then
        method, body = "POST", '{"reason":"insufficient_funds"}'
    end
    i = math.random(#keys)
end
local n = 0
request = function()
    i = i % #keys + 1
    n = n + 1
    local h = { ["Authorization"] = "Bearer " .. keys[i] }
    if method == "POST" then
        h["Content-Type"] = "application/json"
        h["Idempotency-Key"] = string.format("%d-%d-%d-%d", tid, n, os.time(), math.random(1e9))
    end
    return wrk.format(method, nil, h, body)
end
LUA

extauth="SELECT k.id, k.facility_id, k.extension_id, k.livemode, array_to_string(k.privileges, ' '), encode(k.secret_hash, 'hex') FROM extension_keys k JOIN extensions e ON e.id = k.extension_id WHERE k.secret_hash = decode('$ehash', 'hex') AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now()) AND k.livemode = true;"
cat >"$prefix/invoice.sql" <<SQL
$extauth
SELECT * FROM invoices i WHERE i.id = '$inv' AND i.facility_id = '$fac' AND i.livemode = true;
SQL
cat >"$prefix/fail.sql" <<SQL
\\set k random(1, 2000000000)
$extauth
SELECT status, body, replayed FROM cms_payment_apply('failed', '$fac', true, '$inv', 'bench:' || :k || ':' || clock_timestamp(), 'fp', NULL, NULL::numeric, NULL, 'insufficient_funds', interval '24 hours');
SQL

snapshot "/v1/ext/billing/invoices/$inv" invoice.json -H "Authorization: Bearer $(head -1 "$prefix/extkeys.txt")"
ext_pair "GET invoice" "/v1/ext/billing/invoices/$inv" \
    "the key, then the plain read of the invoice" "$prefix/invoice.sql" "$prefix/ext.lua" get
run_wrk "static file of the same size" /static/invoice.json
b=$rate
row "GET /v1/ext/billing/invoices/{id}" "$a" "$b" "$tps"
ref_of "GET /v1/ext/billing/invoices/{id}" "the key, then the plain read of the invoice" "$prefix/invoice.sql"

snapshot "/v1/ext/billing/payments/$inv/fail" fail.json -X POST -H 'Content-Type: application/json' \
    -H "Idempotency-Key: bench-snapshot" -d '{"reason":"insufficient_funds"}' \
    -H "Authorization: Bearer $(sed -n 2p "$prefix/extkeys.txt")"
ext_pair "idempotent POST fail" "/v1/ext/billing/payments/$inv/fail" \
    "the same two statements" "$prefix/fail.sql" "$prefix/ext.lua" post
run_wrk "static file of the same size" /static/fail.json
b=$rate
row "POST .../payments/{id}/fail" "$a" "$b" "$tps"
ref_of "POST .../payments/{id}/fail" "the same two statements" "$prefix/fail.sql"

# The idempotent record POST: every request pays a pending invoice of its
# own (ids md5('inv' || n), inserted above), with a fresh Idempotency-Key.
# The rows written so far are vacuumed before either side runs: autovacuum's
# pass over them would otherwise take its share of the cores in the middle
# of whichever row it met, the route's first.
settle_db "the record row"
psql -X -At -h 127.0.0.1 -p "$pg" -U postgres bench \
    -c "SELECT md5('inv' || n)::uuid FROM generate_series(1, 600000) n" >"$prefix/invoices.txt"
cat >"$prefix/record.lua" <<LUA
local keys, inv, i, j = {}, {}, 0, 0
for line in io.lines("$prefix/extkeys.txt") do keys[#keys + 1] = line end
for line in io.lines("$prefix/invoices.txt") do inv[#inv + 1] = line end
local threads = 0
function setup(thread)
    threads = threads + 1
    thread:set("tid", threads)
end
function init(args)
    math.randomseed(os.time() * 100 + tid)
    i = math.random(#keys)
    -- each thread its own 300,000 invoices, each of the six runs (the script's
    -- argument: three on shared cores, three split) its own 50,000
    j = (tid - 1) * 300000 + tonumber(args[1] or 0) * 50000
end
request = function()
    i = i % #keys + 1
    j = j + 1
    return wrk.format("POST", "/v1/ext/billing/payments/" .. inv[j] .. "/record", {
        ["Authorization"] = "Bearer " .. keys[i],
        ["Content-Type"] = "application/json",
        ["Idempotency-Key"] = string.format("rec-%d-%d", tid, j) },
        '{"reference":"bench","amount":1000,"method":"cash"}')
end
LUA
cat >"$prefix/record.sql" <<SQL
\\set k random(1, 2000000000)
$extauth
SELECT status, body, replayed FROM cms_payment_apply('completed', '$fac', true, md5('inv' || nextval('bench_inv'))::uuid, 'bench:' || :k || ':' || clock_timestamp(), 'fp', 'bench', 1000, 'cash', NULL, interval '24 hours');
SQL
snapshot "/v1/ext/billing/payments/$(sed -n 599999p "$prefix/invoices.txt")/record" record.json -X POST \
    -H 'Content-Type: application/json' -H "Idempotency-Key: bench-record" \
    -d '{"reference":"bench","amount":1000,"method":"cash"}' \
    -H "Authorization: Bearer $(sed -n 3p "$prefix/extkeys.txt")"
ext_pair "idempotent POST record" "/v1/ext/billing/payments/x/record" \
    "the same two statements" "$prefix/record.sql" "$prefix/record.lua"
run_wrk "static file of the same size" /static/record.json
b=$rate
row "POST .../payments/{id}/record" "$a" "$b" "$tps"
ref_of "POST .../payments/{id}/record" "the same two statements" "$prefix/record.sql"

if [ "${BENCH_SPLIT:-1}" != 0 ] && [ "$(nproc)" -ge 2 ]; then
    split_pair "/v1/ext/billing/payments/x/record" "$prefix/record.sql" "$prefix/record.lua" 3
    row3 "record, PostgreSQL on its own core" "$a" - "$tps"
    ref_of "record, PostgreSQL on its own core" \
        "the same two statements, the fastest of 4, 16 and $conns sessions" "$prefix/record.sql"
fi
}

if [ "${BENCH_ONLY:-}" != webhooks ] && [ "${BENCH_ONLY:-}" != metrics ]; then
# A stored object (src/ngx_http_cms_files.c): a 10 KiB PNG under cms_storage, by the API
# and by nginx's static module (the same file, the same folder); no database on this path.
fkey=bench/0b6f3c2a-1d2e-4f5a-8b9c-0d1e2f3a4b5c.png
mkdir -p "$prefix/storage/bench"
{ printf '\x89PNG\r\n\x1a\n'; head -c 10232 /dev/urandom; } >"$prefix/storage/$fkey"
chmod 755 "$prefix/storage" "$prefix/storage/bench"
chmod 644 "$prefix/storage/$fkey"
cmp -s "$prefix/storage/$fkey" <(curl -s "$url/v1/files/$fkey") \
    || { echo "bench: GET /v1/files/$fkey does not answer the file" >&2; exit 1; }
run_wrk "GET /v1/files/{key} (10 KiB png)" "/v1/files/$fkey"
a=$rate
run_wrk "nginx static, the same file" "/storage/$fkey"
b=$rate
row2 "GET /v1/files/{key} (10 KiB)" "$a" "$b"
# Responsive images (docs/images.md): a 12-megapixel JPEG (4000 x 3000, a gradient with
# noise, Q90) planted under an upload's key. Rows: the cached 640-wide WebP variant against
# nginx's static module serving the same file (goal 0.9); the first request's cost (a
# fresh copy each time, one at a time) against `vips thumbnail` making the same variant
# from the command line (the floor), p50 and p99 of BENCH_IMAGE_RUNS [25]; and the
# worker's RSS while 20 first requests run at once.
image_line=
images_bench() {
    local d=$TEST_CMS_VAR/bench-img ws=3f1c9a1e-2d4b-4c1a-9b1e-5a8f0c2d7e61 id i k t n=${BENCH_IMAGE_RUNS:-25}
    local times=() floor=() pid before peak rss pids=()
    mkdir -p "$d" "$prefix/storage/$ws"
    chmod 755 "$prefix/storage/$ws"
    [ "$(id -u)" = 0 ] && chown nobody "$prefix/storage/$ws"
    vips xyz "$d/xy.v" 4000 3000
    vips extract_band "$d/xy.v" "$d/x.v" 0
    vips extract_band "$d/xy.v" "$d/y.v" 1
    vips bandjoin "$d/x.v $d/y.v $d/x.v" "$d/rgb.v"
    vips linear "$d/rgb.v" "$d/grad.v" "0.05 0.08 0.03" "20 10 60"
    vips gaussnoise "$d/noise.v" 4000 3000 --sigma 12
    vips add "$d/grad.v" "$d/noise.v" "$d/photo.v"
    vips cast "$d/photo.v" "$d/photo8.v" uchar
    vips copy "$d/photo8.v" "$d/photo.jpg[Q=90]"
    echo; echo "== images: $(vipsheader "$d/photo.jpg"), $(stat -c %s "$d/photo.jpg") bytes"
    plant() { id=$(cat /proc/sys/kernel/random/uuid); cp "$d/photo.jpg" "$prefix/storage/$ws/$id.jpg";
              chmod 644 "$prefix/storage/$ws/$id.jpg"; k=$ws/$id.jpg; }
    # the first request, one at a time, a fresh original each time
    for i in $(seq 1 "$n"); do
        plant
        t=$(curl -s -o "$d/first.webp" -w '%{http_code} %{time_total}' "$url/v1/files/size/w640/format/webp/$k")
        [ "${t%% *}" = 200 ] || { echo "bench: the first variant request answered $t" >&2; exit 1; }
        times+=("${t#* }")
    done
    for i in $(seq 1 "$n"); do
        t=$( { TIMEFORMAT=%R; time vips thumbnail "$d/photo.jpg" "$d/floor.webp[Q=80,strip]" 640 \
                   --height 10000000 --size down >/dev/null 2>&1; } 2>&1)
        floor+=("$t")
    done
    pct() { local p=$1; shift; printf '%s\n' "$@" | sort -g | awk -v p="$p" '{v[NR] = $1}
             END {i = int((NR - 1) * p / 100 + 0.5) + 1; printf "%.0f", v[i] * 1000}'; }
    image_line="first request of a 12 MP JPEG to a 640-wide WebP: p50 $(pct 50 "${times[@]}") ms, p99 $(pct 99 "${times[@]}") ms"
    image_line+="; vips thumbnail from the command line: p50 $(pct 50 "${floor[@]}") ms, p99 $(pct 99 "${floor[@]}") ms"
    echo "$image_line"
    # the worker's RSS while 20 first requests run at once
    pid=$(pgrep -P "$(cat "$prefix/logs/nginx.pid")" | head -1)
    before=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
    peak=$before
    for i in $(seq 1 20); do
        plant
        curl -s -o /dev/null "$url/v1/files/size/w640/format/webp/$k" & pids+=($!)
    done
    while kill -0 "${pids[@]}" 2>/dev/null; do
        rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
        [ "$rss" -gt "$peak" ] && peak=$rss
        sleep 0.02
    done
    wait "${pids[@]}" || true
    image_line+="; worker RSS $((before / 1024)) MiB before 20 concurrent first requests, peak $((peak / 1024)) MiB"
    # the cached variant against the static module on the same file
    cmp -s "$prefix/storage/$ws/$id/w640.webp" <(curl -s "$url/v1/files/size/w640/format/webp/$k") \
        || { echo "bench: the cached variant does not answer the stored file" >&2; exit 1; }
    run_wrk "GET /v1/files/size/w640/format/webp/{key} (cached)" "/v1/files/size/w640/format/webp/$k"
    a=$rate
    run_wrk "nginx static, the same file" "/storage/$ws/$id/w640.webp"
    b=$rate
    row2 "GET image variant (cached, w640)" "$a" "$b"
}
if [ "${BENCH_ONLY:-}" = images ]; then
    images_bench
    report
    echo "$image_line"
    exit 0
fi
files_s3
[ -z "${BENCH_ONLY:-}" ] && images_bench
if [ "${BENCH_ONLY:-}" = files ]; then
    report
    exit 0
fi

# Idle connections: BENCH_IDLE [10000] keep-alive clients, each after one request
# (GET /v1/health/live), held open and idle; the worker's RSS before and with them
# (goal: growth under 64 MiB).
idle_line=
idle_bench() {
    local n=${BENCH_IDLE:-10000} pid before with
    pid=$(pgrep -P "$(cat "$prefix/logs/nginx.pid")" | head -1)
    before=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
    echo; echo "== $n idle keep-alive connections"
    with=$( (ulimit -n $((n + 1024)); perl -MIO::Socket::INET -e '
        my ($port, $n, $pid) = @ARGV;
        my @s;
        for (1 .. $n) {
            my $c = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port", Timeout => 5) or die "connect $_: $!";
            print $c "GET /v1/health/live HTTP/1.1\r\nHost: bench\r\n\r\n";
            my $got = "";
            while ($got !~ /\r\n\r\n/ || length($got) < index($got, "\r\n\r\n") + 4 + ($got =~ /Content-Length: (\d+)/i ? $1 : 0)) {
                sysread($c, $got, 4096, length $got) or die "read $_: $!";
            }
            push @s, $c;
        }
        select(undef, undef, undef, 1);
        open my $st, "<", "/proc/$pid/status" or die;
        print map { /^VmRSS:\s+(\d+)/ ? $1 : () } <$st>;
    ' "$port" "$n" "$pid") )
    idle_line="$n idle keep-alive connections: worker RSS $((before / 1024)) MiB before, $((with / 1024)) MiB with them (+$(((with - before) / 1024)) MiB)"
    echo "$idle_line"
}
if [ "${BENCH_ONLY:-}" = idle ]; then
    idle_bench
    exit 0
fi

# health
run_wrk "health" /v1/health
health=$rate
run_wrk "static file of the same size" /static/health.json
static=$rate
echo 'SELECT 1;' >"$prefix/select1.sql"
run_pgbench "SELECT 1" "$prefix/select1.sql"
row "GET /v1/health" "$health" "$static" "$tps"
ref_of "GET /v1/health" "SELECT 1" "$prefix/select1.sql"
fi
if [ "${BENCH_ONLY:-}" = ext ]; then
    ext_bench
    report
    exit 0
fi

# A workspace with BENCH_ARTICLES (10,000) articles, and a key that reads them: a
# near-empty table would hide a list that costs what the workspace holds.  Ten go
# through the API (the route's own writes), the rest by SQL (same columns, a body of
# 400 words each), then VACUUM ANALYZE as a live database would have.
"${admin[@]}" user create --email bench@example.com --password bench-password-1 --verified >/dev/null
ws=$("${admin[@]}" workspace create --name Bench --owner bench@example.com)
key=$("${admin[@]}" key create --workspace "$ws" --creator bench@example.com --name bench \
          --scopes articles:read,articles:write,comments:read)
body='<p>'$(printf 'word %.0s' $(seq 1 400))'</p>'
for i in $(seq 1 10); do
    curl -s -o /dev/null -X POST -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
        -d "{\"title\":\"Bench article $i\",\"status\":\"published\",\"tags\":[\"bench\"],\"body\":\"$body\"}" \
        "$url/v1/api/articles"
done
# (announced_for: a save marks an article scheduled for a time already past announced,
# sql/0051; rows inserted here as the route would write them)
psql -X -q -h 127.0.0.1 -p "$pg" -U postgres bench -c "
    INSERT INTO articles (workspace_id, title, slug, body, status, locale, tags, author_id,
                          read_time_minutes, published_at, announced_for, created_at)
    SELECT a.workspace_id, 'Bench article ' || g, 'bench-article-' || g, a.body,
           (ARRAY['published','draft','scheduled','archived'])[1 + g % 4], a.locale, a.tags,
           a.author_id, a.read_time_minutes, now(), now(), now() - g * interval '1 second'
      FROM (SELECT * FROM articles LIMIT 1) a, generate_series(11, ${BENCH_ARTICLES:-10000}) g"
psql -X -q -h 127.0.0.1 -p "$pg" -U postgres bench -c "VACUUM ANALYZE"
echo "articles in the workspace: $(psql -X -At -h 127.0.0.1 -p "$pg" -U postgres bench \
                                     -c "SELECT count(*) FROM articles")"
id=$(psql -X -At -h 127.0.0.1 -p "$pg" -U postgres bench \
         -c "SELECT id FROM articles ORDER BY created_at LIMIT 1 OFFSET 100")
hash=$(psql -X -At -h 127.0.0.1 -p "$pg" -U postgres bench \
           -c "SELECT encode(secret_hash, 'hex') FROM api_keys LIMIT 1")
auth=(-H "Authorization: Bearer $key")

# Webhook delivery (issue 16): BENCH_HOOKS (10,000) events queued in one statement to an
# endpoint on this machine (a second nginx, one worker, TLS with a throwaway CA, answering
# 204), sent by the module's worker; the rate from the insert's commit until every row is
# delivered (goal: 2,000/s), and GET /v1/health's latency meanwhile (wrk -t1 -c4, each
# connection waiting 10 ms between requests, for as long as the delivery takes; goal: p99
# under 50 ms).
hooks_bench() {
    local hport sport hconns hkey hook n t0 t1 done_n wpid out
    n=${BENCH_HOOKS:-10000}
    read -r hport sport < <("$root/scripts/free-ports" 2)
    cat >"$hdir/conf/nginx.conf" <<CONF
worker_processes 1;
error_log logs/error.log warn;
pid logs/nginx.pid;
events { worker_connections 1024; }
http {
$nginx_common
    keepalive_requests 100000;
    server {
        listen 127.0.0.1:$hport ssl;
        ssl_certificate $hdir/conf/server.crt;
        ssl_certificate_key $hdir/conf/server.key;
        location / { return 204; }
    }
    server {
        listen 127.0.0.1:$sport;
        location / { stub_status; }
    }
}
CONF
    /usr/sbin/nginx -p "$hdir/" -c "$hdir/conf/nginx.conf"
    hooks_pid=$(cat "$hdir/logs/nginx.pid")

    hkey=$("${admin[@]}" key create --workspace "$ws" --creator bench@example.com --name bench-hooks \
               --scopes webhooks:read,webhooks:write)
    hook=$(curl -s -X POST -H "Authorization: Bearer $hkey" -H 'Content-Type: application/json' \
               -d "{\"url\":\"https://127.0.0.1:$hport/hooks\",\"events\":[\"article.updated\"]}" \
               "$url/v1/api/webhooks")
    perl -MJSON::PP -e 'exit !decode_json($ARGV[0])->{webhook}{id}' "$hook" \
        || { echo "bench: the webhook was not registered: $hook" >&2; exit 1; }

    # a probe, not a load: each of 4 connections waits 10 ms between requests
    echo 'function delay() return 10 end' >"$hdir/probe.lua"
    wrk -t1 -c4 -d120s --latency -s "$hdir/probe.lua" "$url/v1/health" >"$hdir/wrk.out" &
    wpid=$!
    # the clock of the database: from the insert's commit to the last row recorded delivered
    t0=$(psql -X -At -h 127.0.0.1 -p "$pg" -U postgres bench -c "
        INSERT INTO outbox_events (workspace_id, type, data)
        SELECT '$ws', 'article.updated', jsonb_build_object('n', g, 'title', 'Bench event ' || g)
          FROM generate_series(1, $n) g" -c "SELECT extract(epoch FROM clock_timestamp())" | tail -1)
    for _ in $(seq 1 600); do
        done_n=$(psql -X -At -h 127.0.0.1 -p "$pg" -U postgres bench \
                     -c "SELECT count(*) FROM webhook_deliveries WHERE status = 'delivered'")
        [ "$done_n" -ge "$n" ] && break
        sleep 0.2
    done
    t1=$(psql -X -At -h 127.0.0.1 -p "$pg" -U postgres bench \
             -c "SELECT extract(epoch FROM max(delivered_at)) FROM webhook_deliveries")
    kill -INT "$wpid"
    wait "$wpid" || true
    hconns=$(curl -s "http://127.0.0.1:$sport/" | awk 'NR == 3 {print $1}')
    kill -QUIT "$hooks_pid" 2>/dev/null || true
    out=$(cat "$hdir/wrk.out")
    echo
    echo "== webhook delivery: $n events, delivered $done_n, over $hconns connections"
    psql -X -At -h 127.0.0.1 -p "$pg" -U postgres bench \
        -c "SELECT status, count(*), max(attempt), min(last_error), round(avg(last_duration_ms)) AS avg_ms, max(last_duration_ms) AS max_ms, max(updated_at) - min(created_at) AS span FROM webhook_deliveries GROUP BY 1" \
        -c "SELECT a.attempt, a.status_code, left(a.error, 60) AS error, count(*),
                   round(max(extract(epoch FROM a.created_at) - $t0)::numeric, 2) AS last_s,
                   round(max(extract(epoch FROM a.next_attempt_at - a.created_at))::numeric, 2) AS retry_after_s
              FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
             WHERE d.event_type = 'article.updated' GROUP BY 1, 2, 3 ORDER BY 1, 4 DESC"
    # a claimed delivery that could not start waits for its lease: the worker says why
    echo "== the module's error.log on webhook deliveries: $(grep -c 'webhook deliver' "$prefix/logs/error.log") lines"
    grep 'webhook deliver' "$prefix/logs/error.log" | head -3 || true
    # an outcome the database refused (sql/0030 drops it alone, with a warning)
    echo "== PostgreSQL's log on webhook deliveries: $(grep -c 'webhook delivery' "$TEST_CMS_VAR/pg.log") lines"
    grep 'webhook delivery' "$TEST_CMS_VAR/pg.log" | head -3 || true
    echo "== GET /v1/health meanwhile (wrk -t1 -c4, 10 ms between requests)"
    echo "$out" | sed -n '/50%/p;/99%/p;/Requests\/sec/p;/Non-2xx/p;/Socket errors/p'
    [ "$done_n" -ge "$n" ] || { echo "bench: only $done_n of $n webhook deliveries in 120 s" >&2; exit 1; }
    hooks_line=$(printf 'webhooks: %d delivered in %.2f s = %.0f/s (goal >= 2000); health p99 meanwhile %s (goal < 50ms)' \
        "$n" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" \
        "$(awk -v a="$t0" -v b="$t1" -v n="$n" 'BEGIN {print n / (b - a)}')" \
        "$(awk '/^ +99%/ {print $2}' <<<"$out")")
    echo "$hooks_line"
}
hooks_line=
if [ "${BENCH_ONLY:-}" = webhooks ]; then
    hooks_bench
    exit 0
fi

# The cost of request metrics (docs/operations.md, "Request metrics"): the article read
# of the GET /v1/api/articles/{id} row, on two nginx of one configuration but
# for `location = /metrics { cms_status; }`: with it every request below /v1/ is counted
# in the log phase (and each worker samples its gauges every second); without it nothing
# is (no zone, no log-phase handler). Two instances rather than one reloaded: a reload
# would hand each side fresh workers and fresh pool connections per run. Both stay up
# throughout, one worker each, so the idle one's timers weigh on both sides alike; the
# module's own nginx idles meanwhile. The runs alternate in pairs whose order flips
# (off on, on off, off on, ...) so that the machine's drift (2 cores, perhaps a test run
# alongside) favours neither side; the row holds the medians of BENCH_METRICS_RUNS (5)
# runs each: on in the "route/s" column, off in "static/s", and on/off in "/static"
# (1.000: free; 0.970: metrics cost 3 % of the rate). The line below the table adds each
# pair's on/off (two runs next to each other) and their median, which the machine's drift
# moves less than it moves the ratio of the medians.
metrics_line=
metrics_bench() {
    local runs=${BENCH_METRICS_RUNS:-5} mode mp p i order loc code saved=$url on=() off=() pairs=()
    local mon moff counted load0
    local mport_off mport_on
    read -r mport_off mport_on < <("$root/scripts/free-ports" 2)
    for mode in off on; do
        mp=$TEST_CMS_VAR/bench-metrics-$mode
        p=mport_$mode
        mkdir -p "$mp"/{conf,logs,temp}
        chmod 755 "$mp"
        if [ "$(id -u)" = 0 ]; then chown nobody "$mp/temp"; fi
        loc=
        if [ "$mode" = on ]; then loc='location = /metrics { cms_status; }'; fi
        cat >"$mp/conf/nginx.conf" <<CONF
$module_head
    server {
        listen 127.0.0.1:${!p} backlog=1024;
        location /v1/ { cms; }
        $loc
    }
}
CONF
        /usr/sbin/nginx -p "$mp/" -c "$mp/conf/nginx.conf" \
            || { cat -n "$mp/conf/nginx.conf" >&2; exit 1; }
        metrics_pids+=("$(cat "$mp/logs/nginx.pid")")
        for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:${!p}/" && break; sleep 0.1; done
        code=$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" "http://127.0.0.1:${!p}/v1/api/articles/$id")
        [ "$code" = 200 ] || { echo "bench: metrics $mode: the article answered $code" >&2; exit 1; }
    done
    # the two sides are what they claim: a scrape on one, no such location on the other
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mport_off/metrics")" = 404 ] \
        || { echo "bench: the metrics-off nginx answers /metrics" >&2; exit 1; }
    curl -s "http://127.0.0.1:$mport_on/metrics" | grep -q '^cms_http_requests_total{.*family="api"' \
        || { echo "bench: the metrics-on nginx does not count the article read" >&2; exit 1; }
    # warm both (pool connections, prepared statements) before anything is kept
    for mode in off on; do
        p=mport_$mode
        timeout 30 wrk -t2 -c"$conns" -d2s "${auth[@]}" "http://127.0.0.1:${!p}/v1/api/articles/$id" >/dev/null
    done
    echo
    load0=$(cut -d' ' -f1 /proc/loadavg)
    echo "== request metrics: $runs runs a side, load average $load0"
    for i in $(seq 1 "$runs"); do
        if [ $((i % 2)) = 1 ]; then order="off on"; else order="on off"; fi
        for mode in $order; do
            p=mport_$mode
            url=http://127.0.0.1:${!p}
            run_wrk "GET article, request metrics $mode (run $i of $runs)" "/v1/api/articles/$id" "${auth[@]}"
            if [ "$mode" = on ]; then on+=("$rate"); else off+=("$rate"); fi
        done
        pairs+=("$(awk -v a="${on[-1]}" -v b="${off[-1]}" 'BEGIN {printf "%.3f", a / b}')")
    done
    url=$saved
    counted=$(curl -s "http://127.0.0.1:$mport_on/metrics" |
              awk '/^cms_http_requests_total\{.*family="api"/ {n += $NF} END {print n + 0}')
    for p in "${metrics_pids[@]}"; do stop_pid "$p"; done
    metrics_pids=()
    for mode in off on; do
        if grep -E '\[(alert|crit|emerg)\]' "$TEST_CMS_VAR/bench-metrics-$mode/logs/error.log"; then
            echo "bench: the metrics-$mode nginx's error.log has the lines above" >&2
            exit 1
        fi
    done
    mon=$(median "${on[@]}")
    moff=$(median "${off[@]}")
    row2 "GET articles/{id}, metrics on/off" "$mon" "$moff"
    metrics_line=$(printf 'request metrics on GET /v1/api/articles/{id}: on %s/s, off %s/s, medians %.0f and %.0f: on/off %.3f; pairs on/off %s, median %s; %s counted on; load average %s then %s' \
        "$(printf '%.0f ' "${on[@]}" | sed 's/ $//')" "$(printf '%.0f ' "${off[@]}" | sed 's/ $//')" \
        "$mon" "$moff" "$(awk -v a="$mon" -v b="$moff" 'BEGIN {print a / b}')" \
        "${pairs[*]}" "$(median "${pairs[@]}")" "$counted" "$load0" "$(cut -d' ' -f1 /proc/loadavg)")
}
if [ "${BENCH_ONLY:-}" = metrics ]; then
    metrics_bench
    report
    echo "$metrics_line"
    echo "(2 cores shared by wrk, one nginx worker and PostgreSQL; pool max=$pg_max depth=$pg_depth)"
    exit 0
fi

# The statements the routes run (src/ngx_http_cms_auth.h, src/ngx_http_cms_articles.c).
keysql="SELECT k.id, k.workspace_id, k.created_by, k.principal_role, array_to_string(k.scopes, ' '), k.workspace_suspended, encode(k.secret_hash, 'hex')"
keyfrom="FROM api_keys k WHERE k.secret_hash = decode('$hash', 'hex') AND k.revoked_at IS NULL AND k.principal_role IS NOT NULL"
# The rest of the families (bench/families.sh; BENCH_ONLY=families: those rows alone)
source "$root/bench/families.sh"
if [ "${BENCH_ONLY:-}" = families ]; then
    families_bench
    report
    table_md
    exit 0
fi
# Search (docs/search.md, issue 37): BENCH_SEARCH (100,000) articles of about 2 KB in a
# workspace of their own (bench/search-data.sql: made-up words with a log-uniform skew),
# a key that reads them. Rows: GET /v1/api/articles?q= for a word in a few articles, in
# about 1,500 and in every article (the whole workspace ranked for one page; 4
# connections, on both sides),
# each against nginx serving the same bytes and against pgbench running the reference:
# the key lookup, then the best query for the same answer (the matches counted and
# ranked from the GIN index, the page of 20 joined back with its highlights).
search_line=
search_bench() {
    local sws skey shash w ref a b m n=${BENCH_SEARCH:-100000} conns=$conns c=$conns
    sws=$("${admin[@]}" workspace create --name Search --owner bench@example.com)
    skey=$("${admin[@]}" key create --workspace "$sws" --creator bench@example.com \
               --name search --scopes articles:read)
    echo; echo "== search: $n articles (bench/search-data.sql)"
    shash=$(psql -X -At -h 127.0.0.1 -p "$pg" -U postgres bench \
                -c "SELECT encode(secret_hash, 'hex') FROM api_keys WHERE name = 'search'")
    # three words: in every article, in about 1,500, in a few (the rows name the count)
    for w in $(psql -X -q -At -h 127.0.0.1 -p "$pg" -U postgres bench -v ws="$sws" -v n="$n" \
                   -f "$root/bench/search-data.sql" | tail -1); do
        m=$(psql -X -At -h 127.0.0.1 -p "$pg" -U postgres bench -c "
            SELECT count(*) FROM articles WHERE workspace_id = '$sws'
               AND search @@ websearch_to_tsquery('english', '$w')")
        # a word in every article ranks the whole workspace (about 0.4 s of PostgreSQL a
        # search): 32 at once would wait past the pool's queue timeout, so 4 connections
        conns=$c
        [ "$m" -gt 10000 ] && conns=4
        ref="$prefix/search-$w.sql"
        cat >"$ref" <<SQL
$keysql ${keyfrom/$hash/$shash};
WITH q AS (SELECT websearch_to_tsquery('english', '$w') AS tq),
     p AS (SELECT a.id, ts_rank(a.search, q.tq) AS r, a.created_at, count(*) OVER () AS total
             FROM articles a, q
            WHERE a.workspace_id = '$sws' AND a.locale = 'en' AND a.deleted_at IS NULL
              AND a.search @@ q.tq
            ORDER BY r DESC, a.created_at DESC, a.id DESC LIMIT 20)
SELECT p.total, a.*, ts_headline('english', a.body, q.tq,
           'MaxWords=30, MinWords=12, MaxFragments=2')
  FROM p JOIN articles a ON a.id = p.id, q
 ORDER BY p.r DESC, p.created_at DESC, p.id DESC;
SQL
        snapshot "/v1/api/articles?limit=20&q=$w" "search-$w.json" -H "Authorization: Bearer $skey"
        run_wrk "GET articles?q=$w ($m matches)" "/v1/api/articles?limit=20&q=$w" \
            --timeout 10s -H "Authorization: Bearer $skey"
        a=$rate
        search_line+="$m matches ($conns connections): p50 $lat50 p99 $lat99; "
        run_wrk "static file of the same size" "/static/search-$w.json"
        b=$rate
        run_pgbench "the reference: key, ranked page of 20, total, highlights" "$ref"
        row "GET articles?q= ($m of $n)" "$a" "$b" "$tps"
        ref_of "GET articles?q= ($m of $n)" "the reference: key, ranked page of 20, total, highlights" "$ref"
    done
    conns=$c
    run_wrk "GET articles?limit=20 (the same workspace)" "/v1/api/articles?limit=20" \
        -H "Authorization: Bearer $skey"
    search_line="search at $n articles: ${search_line}the plain list $rate req/s"
}

if [ "${BENCH_ONLY:-}" = search ]; then
    search_bench
    report
    echo "$search_line"
    exit 0
fi
# Compression (docs/operations.md, "Compression"): the page of 20 articles and /v1/docs,
# each plain and with Accept-Encoding: gzip (the list through nginx's gzip filter at level
# 1, the page gzipped at build time): bytes and requests/s.
gzip_line=
gzip_bench() {
    local p g pb gb
    echo; echo "== compression"
    p=$(curl -s -o /dev/null -w '%{size_download}' "${auth[@]}" "$url/v1/api/articles?limit=20")
    g=$(curl -s -o /dev/null -w '%{size_download}' "${auth[@]}" -H 'Accept-Encoding: gzip' \
            "$url/v1/api/articles?limit=20")
    run_wrk "GET articles?limit=20, plain" "/v1/api/articles?limit=20" "${auth[@]}"
    pb=$rate
    run_wrk "GET articles?limit=20, gzip" "/v1/api/articles?limit=20" "${auth[@]}" \
        -H 'Accept-Encoding: gzip'
    gb=$rate
    gzip_line="compression: the page of 20 articles $p bytes at $pb req/s plain, $g bytes at $gb req/s gzip"
    p=$(curl -s -o /dev/null -w '%{size_download}' "$url/v1/docs")
    g=$(curl -s -o /dev/null -w '%{size_download}' -H 'Accept-Encoding: gzip' "$url/v1/docs")
    run_wrk "GET /v1/docs, plain" /v1/docs
    pb=$rate
    run_wrk "GET /v1/docs, gzip (made at build time)" /v1/docs -H 'Accept-Encoding: gzip'
    gb=$rate
    gzip_line+="; /v1/docs $p bytes at $pb req/s plain, $g bytes at $gb req/s gzip"
    echo "$gzip_line"
}
if [ "${BENCH_ONLY:-}" = gzip ]; then
    gzip_bench
    report
    echo "$gzip_line"
    exit 0
fi
# The list against PostgreSQL's best plan for the same page, not against our own
# statement: the key lookup, the index-ordered page of 20 and the total.
cat >"$prefix/list.sql" <<SQL
$keysql $keyfrom;
SELECT * FROM articles WHERE workspace_id = '$ws' AND locale = 'en' AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 20;
SELECT count(*) FROM articles WHERE workspace_id = '$ws' AND locale = 'en' AND deleted_at IS NULL;
SQL

# The article and the page against PostgreSQL's plain reads of the same rows (issue 35's
# bar): no key, no JSON, no total; the route does all three in its one statement.
echo "SELECT * FROM articles WHERE id = '$id';" >"$prefix/article-plain.sql"
echo "SELECT * FROM articles WHERE workspace_id = '$ws' AND locale = 'en' AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 20;" \
    >"$prefix/list-plain.sql"
row_repeat=3
bench_row "GET /v1/api/articles/{id}" "/v1/api/articles/$id" "the plain row read" \
    "$prefix/article-plain.sql" "${auth[@]}"
# and against pgbench running the route's own statement (src/ngx_http_cms_articles.c: the
# key's one probe (sql/0045) and the row, in one statement): where the time goes
acols="0, a.id, a.title, a.slug, a.subtitle, a.body, CASE WHEN a.status = 'scheduled' AND a.published_at <= now() THEN 'published' ELSE a.status END, a.locale, a.image_url, a.category_id, a.author_id, a.tags, a.is_featured, a.is_breaking, a.is_opinion, a.focus_keyword, a.read_time_minutes, a.comment_count, a.published_at, a.created_at, a.updated_at"
echo "SELECT k.*, p.* FROM ($keysql $keyfrom) k LEFT JOIN LATERAL (SELECT $acols FROM articles a WHERE a.workspace_id = k.workspace_id AND a.id = '$id'::uuid AND a.deleted_at IS NULL) p ON true;" \
    >"$prefix/article-own.sql"
run_pgbench "the route's own statement" "$prefix/article-own.sql"
row "GET articles/{id} /own statement" "$route_rate" "$static_rate" "$tps"
ref_of "GET articles/{id} /own statement" "the route's own statement" "$prefix/article-own.sql"
latency_at_half "GET /v1/api/articles/{id}" "/v1/api/articles/$id" "$route_rate" "${auth[@]}"
[ "${BENCH_ONLY:-}" = articles ] || metrics_bench

row_repeat=3
bench_row "GET /v1/api/articles?limit=20" "/v1/api/articles?limit=20" "the plain page read" \
    "$prefix/list-plain.sql" "${auth[@]}"
run_pgbench "the reference with the key and the total" "$prefix/list.sql"
row "GET articles?limit=20 /key+total" "$route_rate" "$static_rate" "$tps"
ref_of "GET articles?limit=20 /key+total" "the reference with the key and the total" "$prefix/list.sql"
if [ "${BENCH_ONLY:-}" = articles ]; then
    report
    table_md
    echo "latency at half the peak rate: ${latency_line%; }"
    # BENCH_HOLD=FILE: the servers stay up, their data seeded, until FILE is removed
    # (profiling by hand: the URL, key and ports are in the lines above)
    if [ -n "${BENCH_HOLD:-}" ]; then
        echo "bench: holding; url $url, key $key, pg $pg; rm $BENCH_HOLD to stop"
        touch "$BENCH_HOLD"
        while [ -e "$BENCH_HOLD" ]; do sleep 1; done
    fi
    exit 0
fi
gzip_bench

# The comments of one article, a page of 20 (src/ngx_http_cms_comments.c): 200 on the
# article read and on each of 100 others of the workspace (20,200 in all), so that the
# page must come from the article's index; against pgbench running the reference: the
# key, the page, its total.
psql -X -q -h 127.0.0.1 -p "$pg" -U postgres bench -c "
    INSERT INTO comments (workspace_id, article_id, author_name, author_email, content, status, created_at)
    SELECT a.workspace_id, a.id, 'Reader ' || g, 'reader' || g || '@example.com',
           'A comment of a few words, number ' || g, (ARRAY['pending','approved','spam'])[1 + g % 3],
           now() - g * interval '1 second'
      FROM (SELECT * FROM articles WHERE workspace_id = '$ws' ORDER BY created_at LIMIT 101) a,
           generate_series(1, 200) g"
psql -X -q -h 127.0.0.1 -p "$pg" -U postgres bench -c "VACUUM ANALYZE comments"
echo "comments: $(psql -X -At -h 127.0.0.1 -p "$pg" -U postgres bench -c "SELECT count(*) FROM comments"), \
$(psql -X -At -h 127.0.0.1 -p "$pg" -U postgres bench -c "SELECT count(*) FROM comments WHERE article_id = '$id'") on the article"
cat >"$prefix/comments.sql" <<SQL
$keysql $keyfrom;
SELECT id, article_id, parent_id, author_name, author_email, content, status, cms_ts(created_at) FROM comments WHERE article_id = '$id' ORDER BY created_at DESC, id DESC LIMIT 20;
SELECT count(*) FROM comments WHERE article_id = '$id';
SQL
snapshot "/v1/api/comments?article_id=$id&limit=20" comments.json "${auth[@]}"
echo; echo "comment list body: $(stat -c %s "$prefix/static/comments.json") bytes"
run_wrk "GET comments?article_id&limit=20" "/v1/api/comments?article_id=$id&limit=20" "${auth[@]}"
a=$rate
run_wrk "static file of the same size" /static/comments.json
b=$rate
run_pgbench "the reference: key, page of 20, total" "$prefix/comments.sql"
row "GET /v1/api/comments?article_id" "$a" "$b" "$tps"
ref_of "GET /v1/api/comments?article_id" "the reference: key, page of 20, total" "$prefix/comments.sql"
# A custom module of BENCH_ENTRIES (10,000) entries and a filtered page of 20: against
# pgbench running the same two statements (the key lookup, then the route's list
# statement of src/ngx_http_cms_entries.c with its parameters in place).
ckey=$("${admin[@]}" key create --workspace "$ws" --creator bench@example.com --name custom \
           --scopes custom:read)
psql -X -q -h 127.0.0.1 -p "$pg" -U postgres bench -c "
    INSERT INTO custom_modules (workspace_id, slug, name, schema)
    VALUES ('$ws', 'products', 'Products', '{\"fields\": [
        {\"key\": \"title\", \"label\": \"Title\", \"type\": \"text\", \"required\": true},
        {\"key\": \"colour\", \"label\": \"Colour\", \"type\": \"select\", \"required\": false,
         \"options\": [\"red\", \"green\", \"blue\", \"black\"]},
        {\"key\": \"price\", \"label\": \"Price\", \"type\": \"number\", \"required\": false}]}');
    INSERT INTO custom_entries (workspace_id, module_id, data, created_at)
    SELECT '$ws', m.id, jsonb_build_object('title', 'Product ' || g,
               'colour', CASE WHEN g % 50 = 0 THEN 'black' ELSE (ARRAY['red', 'green', 'blue'])[1 + g % 3] END,
               'price', g), now() - g * interval '1 second'
      FROM custom_modules m, generate_series(1, ${BENCH_ENTRIES:-10000}) g WHERE m.slug = 'products'"
psql -X -q -h 127.0.0.1 -p "$pg" -U postgres bench -c "VACUUM ANALYZE"
chash=$(psql -X -At -h 127.0.0.1 -p "$pg" -U postgres bench \
            -c "SELECT encode(secret_hash, 'hex') FROM api_keys WHERE name = 'custom'")
ckeyfrom=${keyfrom//$hash/$chash}
entries='e.id, e.workspace_id, e.module_id, e.data, e.status, cms_ts(e.created_at), cms_ts(e.updated_at)'
cat >"$prefix/entries.sql" <<SQL
$keysql $ckeyfrom;
SELECT t.total, p.* FROM (SELECT m.id AS mid, x.f, x.k, (SELECT count(*) FROM custom_entries e WHERE e.module_id = m.id AND e.data @> x.f) AS total FROM cms_custom_module('$ws', 'products') m CROSS JOIN LATERAL (SELECT cms_custom_filter(m.schema, '{"colour": "black"}'::jsonb) AS f, NULL::text AS k OFFSET 0) x OFFSET 0) t LEFT JOIN LATERAL (SELECT $entries FROM custom_entries e WHERE e.module_id = t.mid AND e.data @> t.f ORDER BY e.created_at DESC, e.id DESC LIMIT 20 OFFSET 0) p ON true;
SQL
cauth=(-H "Authorization: Bearer $ckey")
epath="/v1/api/custom/products/entries?filter%5Bcolour%5D=black&limit=20"
snapshot "$epath" entries.json "${cauth[@]}"
echo; echo "entry list body: $(stat -c %s "$prefix/static/entries.json") bytes"
run_wrk "GET custom entries, filtered" "$epath" "${cauth[@]}"
a=$rate
run_wrk "static file of the same size" /static/entries.json
b=$rate
run_pgbench "the same statements: key, filtered page of 20 with its total" "$prefix/entries.sql"
row "GET custom entries?filter[]" "$a" "$b" "$tps"
ref_of "GET custom entries?filter[]" "the same statements: key, filtered page of 20 with its total" "$prefix/entries.sql"
# The media list (issue 12): BENCH_MEDIA (10,000) assets of every type in the same
# workspace, a key with media:read; against pgbench running the reference read (the
# key, the index-ordered page of 20, the total), as for articles.
mkey=$("${admin[@]}" key create --workspace "$ws" --creator bench@example.com --name bench-media \
           --scopes media:read,media:write)
curl -s -o /dev/null -X POST -H "Authorization: Bearer $mkey" -H 'Content-Type: application/json' \
    -d '{"title":"Bench asset","url":"https://cdn.example.com/a.png","mime_type":"image/png","size_bytes":1024,"width":640,"height":480,"folder":"bench"}' \
    "$url/v1/api/media"
psql -X -q -h 127.0.0.1 -p "$pg" -U postgres bench -c "
    INSERT INTO media_assets (workspace_id, type, title, url, thumbnail_url, mime_type, size_bytes,
                              width, height, folder, created_by, created_at)
    SELECT m.workspace_id, (ARRAY['image','video','audio','file'])[1 + g % 4], 'Bench asset ' || g,
           'https://cdn.example.com/asset-' || g || '.bin', m.thumbnail_url, m.mime_type, g * 1024,
           m.width, m.height, m.folder, m.created_by, now() - g * interval '1 second'
      FROM (SELECT * FROM media_assets LIMIT 1) m, generate_series(2, ${BENCH_MEDIA:-10000}) g"
psql -X -q -h 127.0.0.1 -p "$pg" -U postgres bench -c "VACUUM ANALYZE media_assets"
mhash=$(psql -X -At -h 127.0.0.1 -p "$pg" -U postgres bench \
            -c "SELECT encode(secret_hash, 'hex') FROM api_keys WHERE name = 'bench-media'")
mkeyfrom=${keyfrom/$hash/$mhash}
cat >"$prefix/media.sql" <<SQL
$keysql $mkeyfrom;
SELECT * FROM media_assets WHERE workspace_id = '$ws' ORDER BY created_at DESC, id DESC LIMIT 20;
SELECT count(*) FROM media_assets WHERE workspace_id = '$ws';
SQL
snapshot "/v1/api/media?limit=20" media.json -H "Authorization: Bearer $mkey"
echo; echo "media list body: $(stat -c %s "$prefix/static/media.json") bytes"
run_wrk "GET media?limit=20" "/v1/api/media?limit=20" -H "Authorization: Bearer $mkey"
a=$rate
run_wrk "static file of the same size" /static/media.json
b=$rate
run_pgbench "the reference: key, page of 20, total" "$prefix/media.sql"
row "GET /v1/api/media?limit=20" "$a" "$b" "$tps"
ref_of "GET /v1/api/media?limit=20" "the reference: key, page of 20, total" "$prefix/media.sql"

# The public surface (src/ngx_http_cms_public.c): a page's published sections by the
# site's publishable key, among 10,000 pages of the site with a published section each;
# then the same read revalidated (If-None-Match: 304), against nginx revalidating the
# static copy.  The reference: the key lookup and the page's published sections.
tok=$(curl -s -H 'Content-Type: application/json' -d '{"email":"bench@example.com","password":"bench-password-1"}' \
          "$url/v1/auth/login" | perl -MJSON::PP -0ne 'print decode_json($_)->{token}')
site=$(curl -s -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' -d '{"name":"Bench site"}' \
           "$url/v1/workspaces/$ws/sites")
pk=$(perl -MJSON::PP -e 'print decode_json($ARGV[0])->{site}{publishable_key}' "$site")
sid=$(perl -MJSON::PP -e 'print decode_json($ARGV[0])->{site}{id}' "$site")
page=$(curl -s -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
           -d '{"slug":"/bench","title":"Bench page"}' "$url/v1/workspaces/$ws/sites/$sid/pages" |
       perl -MJSON::PP -0ne 'print decode_json($_)->{page}{id}')
pkey=$("${admin[@]}" key create --workspace "$ws" --creator bench@example.com --name bench-pages \
           --scopes pages:read,pages:write)
for k in hero features footer; do
    curl -s -o /dev/null -X PUT -H "Authorization: Bearer $pkey" -H 'Content-Type: application/json' \
        -d "{\"section_key\":\"$k\",\"data\":{\"title\":\"Bench $k\",\"body\":{\"html\":\"$body\"},\"image\":{\"src\":\"https://cdn.example.com/$k.png\",\"alt\":\"$k\"}}}" \
        "$url/v1/api/pages/$page/sections"
done
curl -s -o /dev/null -X POST -H "Authorization: Bearer $pkey" "$url/v1/api/pages/$page/sections/publish"
psql -X -q -h 127.0.0.1 -p "$pg" -U postgres bench -c "
    INSERT INTO pages (site_id, workspace_id, slug, title, position)
    SELECT '$sid', '$ws', '/page-' || g, 'Page ' || g, g FROM generate_series(1, ${BENCH_PAGES:-10000}) g;
    INSERT INTO sections (page_id, workspace_id, section_key, locale, data, published_data,
                          published_version, published_at)
    SELECT p.id, p.workspace_id, 'hero', 'en', s.data, s.data, 1, now()
      FROM pages p, (SELECT data FROM sections WHERE page_id = '$page' LIMIT 1) s
     WHERE p.site_id = '$sid' AND p.id <> '$page';"
psql -X -q -h 127.0.0.1 -p "$pg" -U postgres bench -c "VACUUM ANALYZE pages" -c "VACUUM ANALYZE sections"
pkhash=$(psql -X -At -h 127.0.0.1 -p "$pg" -U postgres bench -c "SELECT encode(key_hash, 'hex') FROM sites")
cat >"$prefix/public.sql" <<SQL
SELECT s.id, s.workspace_id, s.origin FROM sites s JOIN workspaces w ON w.id = s.workspace_id AND NOT w.suspended WHERE s.key_hash = decode('$pkhash', 'hex') AND s.status = 'active';
SELECT id, page_id, section_key, locale, published_data, published_version, cms_ts(published_at) FROM sections WHERE page_id = '$page' AND locale = 'en' AND published_version IS NOT NULL ORDER BY section_key;
SQL
ppath="/v1/public/pages/$page/sections?key=$pk"
snapshot "$ppath" public.json
echo; echo "public sections body: $(stat -c %s "$prefix/static/public.json") bytes"
run_wrk "GET public sections" "$ppath"
a=$rate
run_wrk "static file of the same size" /static/public.json
b=$rate
run_pgbench "the reference: the site key, the page's published sections" "$prefix/public.sql"
row "GET /v1/public/pages/{id}/sections" "$a" "$b" "$tps"
ref_of "GET /v1/public/pages/{id}/sections" "the reference: the site key, the page's published sections" "$prefix/public.sql"
latency_at_half "GET /v1/public/pages/{id}/sections" "$ppath" "$a"
petag=$(curl -s -D - -o /dev/null "$url$ppath" | awk 'tolower($1) == "etag:" {print $2}' | tr -d '\r')
setag=$(curl -s -D - -o /dev/null "$url/static/public.json" | awk 'tolower($1) == "etag:" {print $2}' | tr -d '\r')
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $petag" "$url$ppath")" = 304 ] \
    || { echo "bench: the public read's If-None-Match is not 304" >&2; exit 1; }
run_wrk "GET public sections, If-None-Match: 304" "$ppath" -H "If-None-Match: $petag"
a=$rate
run_wrk "static file revalidated: 304" /static/public.json -H "If-None-Match: $setag"
b=$rate
row "GET /v1/public/... 304" "$a" "$b" "$tps"

# Reads on a streaming replica (docs/fleet.md, "Read replicas"): a replica of the bench's
# PostgreSQL (pg_basebackup), a second nginx like the first with cms_postgres_replica,
# and the article list and the public section read on each, alternating: replica over
# primary alone. Both servers share this machine's 2 cores with wrk and nginx, so what
# is measured is the cost of the routing (a Redis GET per keyed read for read-your-writes)
# and of a second server on the same cores, not the capacity a replica adds elsewhere.
replica_bench() {
    local rdir=$TEST_CMS_VAR/bench-replica rp=$TEST_CMS_VAR/bench-nginx-replica rport rpg
    local saved=$url lp=() lr=() pp=() pr=() i mode lag
    read -r rport rpg < <("$root/scripts/free-ports" 2)
    die() { echo "bench: $*" >&2; exit 1; }
    # shellcheck source=scripts/pg-bin.sh
    . "$root/scripts/pg-bin.sh"
    mkdir -p "$rdir"
    [ "$(id -u)" = 0 ] && chown postgres: "$rdir"
    as_pg "$(pg_bindir)/pg_basebackup" -h 127.0.0.1 -p "$pg" -U postgres -D "$rdir/data" \
        -R -X stream -c fast --no-sync || die "pg_basebackup failed"
    # the primary's settings came with the backup (max_connections must not be lower):
    # its own port and socket folder after them
    printf "port = %s\nunix_socket_directories = '%s'\nhot_standby = on\n" "$rpg" "$rdir" \
        >>"$rdir/data/cms.conf"
    [ "$(id -u)" = 0 ] && chown postgres: "$rdir/data/cms.conf"
    as_pg "$(pg_bindir)/pg_ctl" -D "$rdir/data" -l "$rdir/postgres.log" -w -t 60 start \
        >/dev/null || die "the replica did not start ($rdir/postgres.log)"
    replica_dir=$rdir
    mkdir -p "$rp"/{conf,logs,temp}
    chmod 755 "$rp"
    [ "$(id -u)" = 0 ] && chown nobody "$rp/temp"
    # notice: the line that says the replica is read from
    cat >"$rp/conf/nginx.conf" <<CONF
${module_head/error_log logs\/error.log warn;/error_log logs\/error.log notice;}
    cms_postgres_replica "hostaddr=127.0.0.1 port=$rpg dbname=bench user=postgres" max=$pg_max depth=$pg_depth queue=1024;
    cms_public_rate_limit off;
    cms_public_cache zone=cms_public:16m;
    server {
        listen 127.0.0.1:$rport backlog=1024;
        location /v1/ { cms; }
    }
}
CONF
    /usr/sbin/nginx -p "$rp/" -c "$rp/conf/nginx.conf" || { cat -n "$rp/conf/nginx.conf" >&2; exit 1; }
    metrics_pids+=("$(cat "$rp/logs/nginx.pid")")
    for _ in $(seq 1 300); do
        grep -q 'postgres replica 1 is read from' "$rp/logs/error.log" 2>/dev/null && break
        sleep 0.1
    done
    grep -q 'postgres replica 1 is read from' "$rp/logs/error.log" || die "nginx does not read from the replica"
    lag=$(psql -X -At -h 127.0.0.1 -p "$rpg" -U postgres bench \
              -c "SELECT pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn()")
    echo; echo "== reads on a replica (caught up: $lag), alternating with the primary alone"
    for i in 1 2; do
        for mode in primary replica; do
            if [ "$mode" = replica ]; then url=http://127.0.0.1:$rport; else url=$saved; fi
            run_wrk "GET articles?limit=20 on the $mode (run $i)" "/v1/api/articles?limit=20" "${auth[@]}"
            if [ "$mode" = replica ]; then lr+=("$rate"); else lp+=("$rate"); fi
            run_wrk "GET public sections on the $mode (run $i)" "$ppath"
            if [ "$mode" = replica ]; then pr+=("$rate"); else pp+=("$rate"); fi
        done
    done
    url=$saved
    stop_pid "${metrics_pids[-1]}"
    unset 'metrics_pids[-1]'
    # the later rows write: a replica replaying them would take the cores they measure
    as_pg "$(pg_bindir)/pg_ctl" -D "$rdir/data" -m fast -w stop >/dev/null
    replica_dir=""
    grep -E '\[(alert|crit|emerg)\]' "$rp/logs/error.log" && die "the replica nginx's error.log has the lines above"
    row2 "GET articles?limit=20, replica/primary" "$(median "${lr[@]}")" "$(median "${lp[@]}")"
    row2 "GET public sections, replica/primary" "$(median "${pr[@]}")" "$(median "${pp[@]}")"
}
families_bench
settle_db "the replica rows"
replica_dir=
replica_bench
search_bench

# The list must not cost what the workspace holds: the same page in a workspace of
# 1,000 articles and in one of BENCH_LARGE (100,000), latency at low concurrency
# (4 connections: what one client waits, not how much the machine can do).
scale_ws() {
    local name=$1 n=$2 w k
    w=$("${admin[@]}" workspace create --name "$name" --owner bench@example.com)
    k=$("${admin[@]}" key create --workspace "$w" --creator bench@example.com --name "$name" \
            --scopes articles:read)
    psql -X -q -h 127.0.0.1 -p "$pg" -U postgres bench -c "
        INSERT INTO articles (workspace_id, title, slug, body, status, locale, tags, author_id,
                              read_time_minutes, published_at, announced_for, created_at)
        SELECT '$w', 'Scale article ' || g, 'scale-article-' || g, a.body,
               (ARRAY['published','draft','scheduled','archived'])[1 + g % 4], a.locale, a.tags,
               a.author_id, a.read_time_minutes, now(), now(), now() - g * interval '1 second'
          FROM (SELECT * FROM articles LIMIT 1) a, generate_series(1, $n) g"
    scale_key=$k
}
scale_ws Small 1000; small_key=$scale_key
scale_ws Large "${BENCH_LARGE:-100000}"; large_key=$scale_key
psql -X -q -h 127.0.0.1 -p "$pg" -U postgres bench -c "VACUUM ANALYZE"
p50() { awk '/^ +50%/ {v=$2; if (v ~ /us$/) {sub(/us$/, "", v); v/=1000} else if (v ~ /ms$/) sub(/ms$/, "", v); else if (v ~ /s$/) {sub(/s$/, "", v); v*=1000}; print v}' <<<"$out"; }
scale=()
for w in small large; do
    k=${w}_key
    out=$(timeout $((secs + 30)) wrk -t1 -c4 -d"${secs}s" --latency \
              -H "Authorization: Bearer ${!k}" "$url/v1/api/articles?limit=20")
    echo; echo "== list of 20 in the $w workspace (4 connections)"
    echo "$out" | sed -n '/50%/p;/99%/p;/Requests\/sec/p;/Non-2xx/p'
    grep -q 'Non-2xx' <<<"$out" && { echo "bench: non-2xx answers" >&2; exit 1; }
    scale+=("$(p50)")
done
scale_line=$(printf 'list p50 at 1,000 articles %.2f ms, at %s %.2f ms: ratio %.2f (goal <= 2)' \
    "${scale[0]}" "${BENCH_LARGE:-100000}" "${scale[1]}" \
    "$(awk -v a="${scale[1]}" -v b="${scale[0]}" 'BEGIN {print a / b}')")

settle_db "the extension rows"
ext_bench

hooks_bench

idle_bench

report
table_md
echo "$scale_line"
echo "$hooks_line"
echo "$metrics_line"
echo "$search_line"
echo "$image_line"
echo "$gzip_line"
echo "$idle_line"
echo "database settled: ${settle_line%; }"
echo "latency at half the peak rate: ${latency_line%; }"
echo "(2 cores shared by wrk, one nginx worker and PostgreSQL; pool max=$pg_max depth=$pg_depth)"
if grep -E '\[(alert|crit|emerg)\]' "$prefix/logs/error.log"; then
    echo "bench: error.log has the lines above" >&2
    exit 1
fi
