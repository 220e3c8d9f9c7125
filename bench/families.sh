# Sourced by bench/run.sh: a row for each route family not measured there, each against
# nginx serving the same bytes and pgbench running PostgreSQL's best plan for the same
# answer (the reference query, written next to the row in docs/benchmarks.md).
#
# families_bench (BENCH_ONLY=families, or in a whole run after the public rows) seeds
# its own data in the bench's workspace $ws, next to its 10,000 articles: 10,000 each of
# videos, podcast episodes (of one show), subscribers, custom entries (module "catalog"),
# site pages, webhook deliveries (of one endpoint) and members; fewer where 10,000 would
# not be a workspace (200 categories, 200 podcast shows, 10 webhook endpoints, 200
# extensions of a facility; each block says why). Then one row per read: the route, the
# static copy of its answer, and pgbench running PostgreSQL's plain read of the same
# rows (the index-ordered page, no JSON built in SQL, no key lookup, no total); before
# each row a guard checks that the route's answer holds as many items as the reference
# reads rows. Then one row per write: the route against pgbench running the plain
# INSERT or UPDATE of the same row (no static column). Self-contained: it makes its own
# keys, module, site (when the workspace has none yet) and pages.
#
# Reads come first: the writes change what some reads answer (sections, pages).

# psql on the bench's database, quiet; fam_val: one value
fam_psql() { psql -X -q -h 127.0.0.1 -p "$pg" -U postgres bench "$@"; }
fam_val() { psql -X -At -h 127.0.0.1 -p "$pg" -U postgres bench -c "$1"; }

# The items of an answer: the length of its first array (a list), else 1 (a record);
# "grep:PATTERN" counts PATTERN instead (the RSS feed's <item>).
fam_items() {
    local file=$1 how=${2:-}
    if [ -n "$how" ]; then
        { grep -o "${how#grep:}" "$file" || true; } | wc -l
    else
        jq '[.[] | select(type == "array")] | if length > 0 then .[0] | length else 1 end' \
            "$file"
    fi
}

# A read's row: fam_read NAME PATH SQLNAME REFERENCE HOW -- [curl/wrk header options]
# The reference's statements are in $prefix/SQLNAME.sql; the rows the answer is compared
# with are its last statement's; HOW is fam_items' ("" for JSON). The guard first: the
# route's answer (200) must hold as many items as that statement reads rows (fam_max:
# at most so many, for a list that reads one row more than it answers), and pgbench must
# run the file; then bench_row (fam_wrk: wrk's options instead of the header options,
# e.g. a Lua script that changes the credential, or a longer timeout).
fam_max=
fam_wrk=()
fam_read() {
    local name=$1 path=$2 sql=$prefix/$3.sql ref=$4 how=$5 got want last code
    shift 6
    code=$(curl -s -o "$prefix/fam-check.out" -w '%{http_code}' "$@" "$url$path")
    [ "$code" = 200 ] || { echo "bench: $name: $path answered $code:" >&2
                           cat "$prefix/fam-check.out" >&2; exit 1; }
    got=$(fam_items "$prefix/fam-check.out" "$how")
    last=$(awk 'BEGIN {RS = ";"} NF {s = $0} END {print s}' "$sql")
    want=$(fam_val "SELECT count(*) FROM (${last%;}) q")
    if [ -n "$fam_max" ] && [ "$want" -gt "$fam_max" ]; then want=$fam_max; fi
    fam_max=
    if [ "$got" != "$want" ] || [ "$got" = 0 ]; then
        echo "bench: $name: the route answered $got items, the reference reads $want rows" >&2
        exit 1
    fi
    fam_pgcheck "$sql"
    bench_hold "$sql" "$path"
    echo; echo "== $name: $got items, as the reference reads"
    row_wrk=(${fam_wrk[@]+"${fam_wrk[@]}"})
    fam_wrk=()
    bench_row "$name" "$path" "$ref" "$sql" "$@"
}

# A write's row: fam_write NAME SQLNAME REFERENCE LUA [rate divisor] -- [wrk options]
# wrk runs the Lua script (method, headers, body) on the route; pgbench the file
# $prefix/SQLNAME.sql; row3. The divisor turns requests/s into the reference's
# transactions/s when one of them is several requests (2: a save and its publish).
fam_write() {
    local name=$1 sql=$prefix/$2.sql ref=$3 lua=$4 div=${5:-1}
    shift 6
    fam_pgcheck "$sql"
    bench_hold "$sql" "$lua"
    run_wrk "$name" /v1/ -s "$lua" "$@"
    fam_w=$(awk -v r="$rate" -v d="$div" 'BEGIN {print r / d}')
    fam_against "$name" "$sql" "$ref"
}

# A write's second reference: fam_same NAME SQLNAME REFERENCE, pgbench running the same
# rows the route's contract writes (the row and its revision or its event: what any
# implementation of the route must write), beside the rate fam_write just measured; the
# row is "NAME /same rows"
fam_same() {
    fam_pgcheck "$prefix/$2.sql"
    fam_against "$1 /same rows" "$prefix/$2.sql" "$3"
}

# A write's row: fam_against NAME FILE REFERENCE, pgbench running FILE beside the route's
# rate $fam_w; the reference's statements into $references
fam_against() {
    run_pgbench "$3" "$2"
    row3 "$1" "$fam_w" - "$tps"
    printf '%s\t%s: %s\n' "$1" "$3" "$(tr '\n' ' ' <"$2" | sed 's/ *$//')" >>"$references"
}

# The reference run once by pgbench before the row: it must run (pgbench's error if not)
fam_pgcheck() {
    local out
    out=$(pgbench -n -t 1 -M prepared -f "$1" -h 127.0.0.1 -p "$pg" -U postgres bench 2>&1) ||
        { echo "bench: the reference $1 fails:" >&2; echo "$out" >&2; exit 1; }
}

# One write by curl before wrk repeats it: it must answer 2xx (what it answered if not)
fam_try() {
    local name=$1 code
    shift
    code=$(curl -s -o "$prefix/fam-check.out" -w '%{http_code}' "$@")
    case $code in
        2??) ;;
        *) echo "bench: $name answered $code:" >&2; cat "$prefix/fam-check.out" >&2; exit 1 ;;
    esac
}

# wrk's Lua prelude (bench/run.sh's lua_head), each thread seeded
fam_lua_head="$lua_head
function init(args) seed() end"

# The three steps share families_bench's locals (bash's dynamic scope).
families_bench() {
    local fkey fauth owner tok sess fsid fpk site mid show hook fac akey fpage n eid sql
    local hero comment
    fam_seed
    [ "${BENCH_FAMILIES:-}" = writes ] || fam_reads
    fam_writes
}

fam_seed() {
    echo; echo "== families: seeding"
    owner=$(fam_val "SELECT id FROM users WHERE email = 'bench@example.com'")
    # one key for every family's route (the key lookup is the same whatever the scopes)
    fkey=$("${admin[@]}" key create --workspace "$ws" --creator bench@example.com \
               --name bench-families --scopes \
categories:read,videos:read,podcasts:read,subscribers:read,custom:read,custom:write,\
pages:read,pages:write,webhooks:read,webhooks:write,comments:write,articles:write)
    fauth=(-H "Authorization: Bearer $fkey")
    # a member's session, for the studio routes (as t/lib/Cms/Fixtures.pm logs in)
    tok=$(curl -s -H 'Content-Type: application/json' \
              -d '{"email":"bench@example.com","password":"bench-password-1"}' \
              "$url/v1/auth/login" | jq -r .token)
    [ -n "$tok" ] && [ "$tok" != null ] || { echo "bench: families: no session" >&2; exit 1; }
    sess=(-H "Authorization: Bearer $tok")

    # ---- 1. Categories: 200 (10,000 categories would be no site's; the route answers
    # them all, unpaginated, at most 1,000, in display order)
    fam_psql -c "
        INSERT INTO categories (workspace_id, name, slug, description, display_order, created_at)
        SELECT '$ws', 'Category ' || g, 'category-' || g, 'Bench category ' || g, g % 10,
               now() - g * interval '1 second'
          FROM generate_series(1, 200) g"

    # ---- 2. Videos: 10,000, of every status (their total is a counter kept by a
    # statement trigger, so a seed by SQL keeps it right)
    fam_psql -c "
        INSERT INTO videos (workspace_id, title, slug, description, poster_url, source_url,
                            duration_seconds, status, published_at, created_by, created_at)
        SELECT '$ws', 'Bench video ' || g, 'bench-video-' || g, 'A video of the bench, ' || g,
               'https://cdn.example.com/poster-' || g || '.jpg',
               'https://cdn.example.com/video-' || g || '.mp4', 60 + g % 600,
               (ARRAY['draft', 'published', 'archived'])[1 + g % 3], now(), '$owner',
               now() - g * interval '1 second'
          FROM generate_series(1, 10000) g"

    # ---- 3. Podcasts: 200 shows (a workspace's shows are few; the list pages them),
    # the newest of them with 10,000 published episodes
    fam_psql -c "
        INSERT INTO podcast_shows (workspace_id, title, slug, description, author, created_at)
        SELECT '$ws', 'Bench show ' || g, 'bench-show-' || g, 'A show of the bench', 'Bench',
               now() - g * interval '1 second'
          FROM generate_series(1, 200) g"
    show=$(fam_val "SELECT id FROM podcast_shows WHERE workspace_id = '$ws'
                     AND slug = 'bench-show-1'")
    fam_psql -c "
        INSERT INTO podcast_episodes (workspace_id, show_id, title, description, audio_url,
                                      audio_size_bytes, duration_seconds, episode_number,
                                      status, published_at, created_at)
        SELECT '$ws', '$show', 'Episode ' || g, 'An episode of the bench, number ' || g,
               'https://cdn.example.com/episode-' || g || '.mp3', 1000000 + g, 1800, g,
               'published', now() - g * interval '1 second', now() - g * interval '1 second'
          FROM generate_series(1, 10000) g"

    # ---- 4. Subscribers: 10,000
    fam_psql -c "
        INSERT INTO subscribers (workspace_id, email, name, status, created_at)
        SELECT '$ws', 'subscriber' || g || '@example.com', 'Subscriber ' || g,
               (ARRAY['subscribed', 'unsubscribed'])[1 + (g % 10 = 0)::int],
               now() - g * interval '1 second'
          FROM generate_series(1, 10000) g"

    # ---- 5. Custom entries: a module "catalog" of our own (the run's "products" is not
    # there under BENCH_ONLY=families), 10,000 entries; the sort rows (custom_entry_sort)
    # are made by the entries' trigger
    fam_psql -c "
        INSERT INTO custom_modules (workspace_id, slug, name, schema)
        VALUES ('$ws', 'catalog', 'Catalog', '{\"fields\": [
            {\"key\": \"title\", \"label\": \"Title\", \"type\": \"text\", \"required\": true},
            {\"key\": \"colour\", \"label\": \"Colour\", \"type\": \"select\",
             \"required\": false, \"options\": [\"red\", \"green\", \"blue\", \"black\"]},
            {\"key\": \"price\", \"label\": \"Price\", \"type\": \"number\",
             \"required\": false}]}')"
    mid=$(fam_val "SELECT id FROM custom_modules WHERE workspace_id = '$ws' AND slug = 'catalog'")
    fam_psql -c "
        INSERT INTO custom_entries (workspace_id, module_id, data, created_at)
        SELECT '$ws', '$mid', jsonb_build_object('title', 'Item ' || g,
                   'colour', (ARRAY['red', 'green', 'blue', 'black'])[1 + g % 4],
                   'price', (g * 7919) % 10007), now() - g * interval '1 second'
          FROM generate_series(1, 10000) g"

    # ---- 6. Sites and pages: the workspace's one site (a whole run made it, with
    # 10,000 pages of a published section each; else it is made here, and its pages
    # the same way), and a page of our own, /families, with three published sections
    fsid=$(fam_val "SELECT id FROM sites WHERE workspace_id = '$ws'")
    if [ -z "$fsid" ]; then
        fam_try "POST site" "${sess[@]}" -H 'Content-Type: application/json' \
            -d '{"name":"Bench site"}' "$url/v1/workspaces/$ws/sites"
        fsid=$(jq -r .site.id "$prefix/fam-check.out")
    fi
    site=$(curl -s "${sess[@]}" "$url/v1/workspaces/$ws/sites/$fsid")
    fpk=$(jq -r .site.publishable_key <<<"$site")
    [[ $fpk == pk_* ]] || { echo "bench: families: no publishable key: $site" >&2; exit 1; }
    fam_psql -c "
        INSERT INTO pages (site_id, workspace_id, slug, title, position)
        SELECT '$fsid', '$ws', '/page-' || g, 'Page ' || g, g FROM generate_series(1, 10000) g
        ON CONFLICT (site_id, slug) DO NOTHING;
        INSERT INTO sections (page_id, workspace_id, section_key, locale, data, published_data,
                              published_version, published_at)
        SELECT p.id, p.workspace_id, 'hero', 'en', d.v, d.v, 1, now()
          FROM pages p, (SELECT '{\"title\": \"Bench hero\", \"body\": {\"html\":
                          \"<p>A hero of the bench.</p>\"}}'::jsonb AS v) d
         WHERE p.site_id = '$fsid' AND p.slug LIKE '/page-%'
        ON CONFLICT ON CONSTRAINT sections_key DO NOTHING"
    fpage=$(curl -s "${sess[@]}" -H 'Content-Type: application/json' \
                -d '{"slug":"/families","title":"Families page"}' \
                "$url/v1/workspaces/$ws/sites/$fsid/pages" | jq -r .page.id)
    hero='"body":{"html":"<p>A section of the families page.</p>"},'
    hero+='"image":{"src":"https://cdn.example.com/families.png","alt":"families"}'
    for n in hero features footer; do
        fam_try "PUT section $n" -X PUT "${fauth[@]}" -H 'Content-Type: application/json' \
            -d "{\"section_key\":\"$n\",\"data\":{\"title\":\"Families $n\",$hero}}" \
            "$url/v1/api/pages/$fpage/sections"
    done
    fam_try "publish sections" -X POST "${fauth[@]}" "$url/v1/api/pages/$fpage/sections/publish"

    # ---- 7. Webhooks: 10 endpoints (the free plan allows 16; a whole run adds one
    # later), on an event no row here emits (video.published: the videos were seeded by
    # SQL), so nothing is sent to them; the first with 10,000 settled deliveries
    # (failed, one attempt each: not "delivered", which the webhook row counts, and not
    # pending, which the module's sender would take)
    for n in $(seq 1 10); do
        fam_try "POST webhook $n" "${fauth[@]}" -H 'Content-Type: application/json' \
            -d "{\"url\":\"https://127.0.0.1:9/families-$n\",\"events\":[\"video.published\"]}" \
            "$url/v1/api/webhooks"
        if [ "$n" = 1 ]; then hook=$(jq -r .webhook.id "$prefix/fam-check.out"); fi
    done
    fam_psql -c "
        INSERT INTO webhook_deliveries (webhook_id, workspace_id, event_id, event_type,
                                        payload, attempt, status, next_attempt_at,
                                        last_status_code, last_error, last_duration_ms,
                                        created_at, updated_at)
        SELECT '$hook', '$ws', gen_random_uuid(), 'video.published',
               '{\"type\": \"video.published\", \"n\": ' || g || '}', 1, 'failed', NULL,
               500, 'HTTP 500', 40, now() - g * interval '1 second', now()
          FROM generate_series(1, 10000) g;
        INSERT INTO webhook_delivery_attempts (delivery_id, attempt, status_code, duration_ms,
                                               error, created_at)
        SELECT id, 1, 500, 40, 'HTTP 500', created_at FROM webhook_deliveries
         WHERE webhook_id = '$hook'"

    # ---- 8. Members: 10,000, on a plan without a member limit (cms-admin plan: the free
    # plan's is 25; a plan may have none), users made by SQL (they never log in)
    "${admin[@]}" plan set --name bench-families >/dev/null
    "${admin[@]}" plan assign --workspace "$ws" --name bench-families >/dev/null
    fam_psql -c "
        INSERT INTO users (email, name, password_hash, email_verified)
        SELECT 'member' || g || '@example.com', 'Member ' || g, 'x', true
          FROM generate_series(1, 9999) g;
        INSERT INTO members (workspace_id, user_id, role, created_at)
        SELECT '$ws', u.id, (ARRAY['admin', 'editor', 'author', 'viewer'])[1 + g % 4],
               now() - g * interval '1 second'
          FROM generate_series(1, 9999) g
          JOIN users u ON lower(u.email) = 'member' || g || '@example.com'"

    # ---- 9. Extensions: a facility of 200 (a facility installs tens, not thousands),
    # listed with admin credentials (sk_admin_): 3,000 of them, made by SQL as
    # t/lib/Cms/ExtFixtures.pm does, each request with the next, so that the rate limit
    # of the extension surface (a burst of 120, then 2/s a credential) holds
    fac=$("${admin[@]}" facility create --name Families)
    "$root/bench/extkeys.pl" "$prefix/conf/secret.key" 3000 sk_admin_ >"$prefix/fam-admin.tsv"
    sql="facility_id, name, privileges, key_prefix, secret_hash"
    awk -F'\t' -v f="$fac" '{ printf "%s\tbench\t{admin:extensions:view}\t%s\t\\\\x%s\n",
                                    f, substr($1, 1, 13), $2 }' "$prefix/fam-admin.tsv" |
        fam_psql -c "\\copy admin_credentials ($sql) FROM STDIN"
    cut -f1 "$prefix/fam-admin.tsv" >"$prefix/fam-admin.txt"
    akey=$(head -1 "$prefix/fam-admin.txt")
    cat >"$prefix/fam-admin.lua" <<LUA
$fam_lua_head
local keys, i = {}, 0
for line in io.lines("$prefix/fam-admin.txt") do keys[#keys + 1] = line end
request = function()
    if i == 0 then i = math.random(#keys) end
    i = i % #keys + 1
    return wrk.format("GET", nil, { ["Authorization"] = "Bearer " .. keys[i] })
end
LUA
    fam_psql -c "
        INSERT INTO extensions (facility_id, name, version, category, status, is_enabled)
        SELECT '$fac', 'ext-' || lpad(g::text, 4, '0'), '1.0.' || g,
               (ARRAY['billing', 'clinical', 'reports'])[1 + g % 3], 'running', g % 5 <> 0
          FROM generate_series(1, 200) g"

    fam_psql -c "VACUUM ANALYZE"
}

fam_reads() {
    # ================================ reads ================================

    # categories: the workspace's categories in display order, at most 1,000 (all 200)
    cat >"$prefix/fam-categories.sql" <<SQL
SELECT * FROM categories WHERE workspace_id = '$ws' ORDER BY display_order, name, id
 LIMIT 1000;
SQL
    fam_read "GET /v1/api/categories (200)" /v1/api/categories fam-categories \
        "the plain read of the 200 categories" "" -- "${fauth[@]}"

    # videos: the index-ordered page of 20 (videos_list_idx); the route's total is a
    # counter (sql/0014), not in the reference
    cat >"$prefix/fam-videos.sql" <<SQL
SELECT * FROM videos WHERE workspace_id = '$ws' ORDER BY created_at DESC, id DESC LIMIT 20;
SQL
    fam_read "GET /v1/api/videos?limit=20" "/v1/api/videos?limit=20" fam-videos \
        "the plain page read" "" -- "${fauth[@]}"

    # podcast shows: the page of 20 of 200 (podcast_shows_list_idx); no total
    cat >"$prefix/fam-shows.sql" <<SQL
SELECT * FROM podcast_shows WHERE workspace_id = '$ws' ORDER BY created_at DESC, id DESC
 LIMIT 20;
SQL
    fam_read "GET /v1/api/podcast-shows?limit=20" "/v1/api/podcast-shows?limit=20" fam-shows \
        "the plain page read" "" -- "${fauth[@]}"

    # a show's episodes: the page of 20 of its 10,000 (podcast_episodes_show_idx)
    cat >"$prefix/fam-episodes.sql" <<SQL
SELECT * FROM podcast_episodes WHERE workspace_id = '$ws' AND show_id = '$show'
 ORDER BY created_at DESC, id DESC LIMIT 20;
SQL
    fam_read "GET podcast-episodes?show_id" \
        "/v1/api/podcast-episodes?show_id=$show&limit=20" fam-episodes \
        "the plain page read of the show" "" -- "${fauth[@]}"

    # the show's RSS feed (no credential): the show's row and its newest 300 published
    # episodes (podcast_episodes_feed_idx). Not in the reference: the route's
    # lastBuildDate, max(updated_at) over all the show's episodes (no index: it reads
    # the 10,000; and as a subquery of the select list, once an item). Slow: wrk's
    # timeout 30 s rather than 2 s
    cat >"$prefix/fam-feed.sql" <<SQL
SELECT * FROM podcast_shows WHERE id = '$show';
SELECT * FROM podcast_episodes
 WHERE show_id = '$show' AND status = 'published' AND published_at <= now()
 ORDER BY published_at DESC, id DESC LIMIT 300;
SQL
    fam_wrk=(--timeout 30s)
    fam_read "GET /v1/feeds/podcasts/{show}.xml" "/v1/feeds/podcasts/$show.xml" fam-feed \
        "the show and the plain read of its 300 newest episodes" "grep:<item>" --

    # subscribers: the page of 20 (subscribers_list_idx); no total
    cat >"$prefix/fam-subscribers.sql" <<SQL
SELECT * FROM subscribers WHERE workspace_id = '$ws' ORDER BY created_at DESC, id DESC
 LIMIT 20;
SQL
    fam_read "GET /v1/api/subscribers?limit=20" "/v1/api/subscribers?limit=20" fam-subscribers \
        "the plain page read" "" -- "${fauth[@]}"

    # custom entries, no filter: the module's page of 20 (custom_entries_list_idx); not
    # in the reference: the module by its slug (cms_custom_module) and the total
    cat >"$prefix/fam-entries.sql" <<SQL
SELECT * FROM custom_entries WHERE module_id = '$mid' ORDER BY created_at DESC, id DESC
 LIMIT 20;
SQL
    fam_read "GET custom entries?limit=20" "/v1/api/custom/catalog/entries?limit=20" \
        fam-entries "the plain page read of the module" "" -- "${fauth[@]}"

    # custom entries by price: the first 20 in custom_entry_sort's index order
    # (custom_entry_sort_idx) and their entries
    cat >"$prefix/fam-entries-sorted.sql" <<SQL
SELECT e.* FROM custom_entry_sort s JOIN custom_entries e ON e.id = s.entry_id
 WHERE s.module_id = '$mid' AND s.key = 'price' ORDER BY s.num, s.txt, s.entry_id LIMIT 20;
SQL
    fam_read "GET custom entries?sort=price" \
        "/v1/api/custom/catalog/entries?sort=price&limit=20" fam-entries-sorted \
        "the plain read of the sort index's first 20 and their entries" "" -- "${fauth[@]}"

    # sites (studio, a member's session): the workspace's one site
    cat >"$prefix/fam-sites.sql" <<SQL
SELECT * FROM sites WHERE workspace_id = '$ws' ORDER BY created_at, id LIMIT 100;
SQL
    fam_read "GET /v1/workspaces/{ws}/sites" "/v1/workspaces/$ws/sites" fam-sites \
        "the plain read of the workspace's sites" "" -- "${sess[@]}"

    # pages (studio): the site's page of 20 of 10,000 (pages_list_idx); not in the
    # reference: the site's check against the workspace and the total
    cat >"$prefix/fam-pages.sql" <<SQL
SELECT * FROM pages WHERE site_id = '$fsid' ORDER BY position, created_at, id LIMIT 20;
SQL
    fam_read "GET .../sites/{id}/pages?limit=20" \
        "/v1/workspaces/$ws/sites/$fsid/pages?limit=20" fam-pages \
        "the plain page read of the site" "" -- "${sess[@]}"

    # a page's published sections (secret key; the public read of them is run.sh's)
    cat >"$prefix/fam-sections.sql" <<SQL
SELECT * FROM sections WHERE page_id = '$fpage' AND locale = 'en'
 AND published_version IS NOT NULL ORDER BY section_key;
SQL
    fam_read "GET /v1/api/pages/{id}/sections" "/v1/api/pages/$fpage/sections" fam-sections \
        "the plain read of the page's published sections" "" -- "${fauth[@]}"

    # webhooks: the 10 endpoints (webhooks_workspace_idx); no total
    cat >"$prefix/fam-webhooks.sql" <<SQL
SELECT * FROM webhooks WHERE workspace_id = '$ws' ORDER BY created_at, id LIMIT 20;
SQL
    fam_read "GET /v1/api/webhooks?limit=20" "/v1/api/webhooks?limit=20" fam-webhooks \
        "the plain read of the endpoints" "" -- "${fauth[@]}"

    # an endpoint's deliveries: the page of 20 of 10,000 (webhook_deliveries_list_idx)
    # with their attempts (one each), which the route answers in each delivery; no total
    cat >"$prefix/fam-deliveries.sql" <<SQL
SELECT d.*, a.* FROM (SELECT * FROM webhook_deliveries WHERE webhook_id = '$hook'
 ORDER BY created_at DESC, id DESC LIMIT 20) d LEFT
 JOIN webhook_delivery_attempts a ON a.delivery_id = d.id
 ORDER BY d.created_at DESC, d.id DESC, a.attempt;
SQL
    fam_read "GET webhooks/{id}/deliveries" "/v1/api/webhooks/$hook/deliveries?limit=20" \
        fam-deliveries "the plain page read with the attempts" "" -- "${fauth[@]}"

    # members (studio, a member's session): the oldest 20 of 10,000 with their users;
    # members has no index in this order (created_at, user_id): the route and the
    # reference both sort the workspace's members; no total
    cat >"$prefix/fam-members.sql" <<SQL
SELECT m.*, u.* FROM members m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = '$ws'
 ORDER BY m.created_at, m.user_id LIMIT 20;
SQL
    fam_read "GET /v1/workspaces/{ws}/members" "/v1/workspaces/$ws/members?limit=20" \
        fam-members "the plain page read with the users" "" -- "${sess[@]}"

    # extensions (admin credential): the first page by name (the facility's unique
    # index); the route reads 21 rows to say has_more, so does the reference
    cat >"$prefix/fam-extensions.sql" <<SQL
SELECT * FROM extensions WHERE facility_id = '$fac' ORDER BY name LIMIT 21;
SQL
    fam_max=20
    fam_wrk=(-s "$prefix/fam-admin.lua")
    fam_read "GET /v1/extensions?limit=20" "/v1/extensions?limit=20" fam-extensions \
        "the plain read of the first 20 by name (and one more)" "" \
        -- -H "Authorization: Bearer $akey"

    # ---- The public surface (publishable key in ?key=): only a page's sections are
    # answered from cms_public_cache (bodies are kept for section reads alone); the
    # site, the site map and the entries reach PostgreSQL on every request (the site's
    # key itself comes from the cache). No route can be asked to bypass the cache.

    # the site: its row (the key's site is known from the cache)
    cat >"$prefix/fam-public-site.sql" <<SQL
SELECT * FROM sites WHERE id = '$fsid';
SQL
    fam_read "GET /v1/public/site" "/v1/public/site?key=$fpk" fam-public-site \
        "the plain read of the site's row" "" --

    # the site map: the site's pages in order, at most 1,000 of 10,000 (pages_list_idx)
    cat >"$prefix/fam-public-pages.sql" <<SQL
SELECT * FROM pages WHERE site_id = '$fsid' ORDER BY position, created_at, id LIMIT 1000;
SQL
    fam_read "GET /v1/public/pages (1,000)" "/v1/public/pages?key=$fpk" fam-public-pages \
        "the plain read of the first 1,000 pages" "" --

    # a page's sections by its path: from the shared-memory cache after the first
    # request (no bypass: this row is the cache against PostgreSQL's plain read)
    cat >"$prefix/fam-public-path.sql" <<SQL
SELECT s.* FROM pages p JOIN sections s ON s.page_id = p.id WHERE p.site_id = '$fsid'
 AND p.slug = '/families' AND s.locale = 'en' AND s.published_version IS NOT NULL
 ORDER BY s.section_key;
SQL
    fam_read "GET /v1/public/sections?path" \
        "/v1/public/sections?path=/families&key=$fpk" fam-public-path \
        "the plain read of the page by path and its published sections" "" --

    # the module's published entries, a page of 20 (custom_entries_list_idx, the
    # status filtered); not in the reference: the module by its slug and the total
    cat >"$prefix/fam-public-entries.sql" <<SQL
SELECT * FROM custom_entries WHERE module_id = '$mid' AND status = 'published'
 ORDER BY created_at DESC, id DESC LIMIT 20;
SQL
    fam_read "GET /v1/public/custom/{s}/entries" \
        "/v1/public/custom/catalog/entries?limit=20&key=$fpk" fam-public-entries \
        "the plain page read of the module" "" --

    # one published entry by its id (the module by its slug not in the reference)
    eid=$(fam_val "SELECT id FROM custom_entries WHERE module_id = '$mid'
                    ORDER BY created_at DESC LIMIT 1 OFFSET 100")
    cat >"$prefix/fam-public-entry.sql" <<SQL
SELECT * FROM custom_entries WHERE id = '$eid' AND module_id = '$mid' AND status = 'published';
SQL
    # (row name: GET /v1/public/custom/{slug}/entries/{id}, shortened to 34 columns)
    fam_read "GET /v1/public/custom/{s}/entry" \
        "/v1/public/custom/catalog/entries/$eid?key=$fpk" fam-public-entry \
        "the plain read of the entry's row" "" --
}

fam_writes() {
    # ================================ writes ================================
    # Each against pgbench running the plain INSERT or UPDATE of the same row (the
    # table's triggers run on both sides; the route's own work around it, its checks,
    # revision, outbox event, is what the ratio shows); and where the route's contract
    # writes a second row (an article's revision, a comment's or a section's event), a
    # "/same rows" row against pgbench writing both in one statement (fam_same).

    # POST /v1/api/articles: a draft of a unique title (its slug derived from it)
    cat >"$prefix/fam-article-create.lua" <<LUA
$fam_lua_head
local n = 0
local h = { ["Authorization"] = "Bearer $key", ["Content-Type"] = "application/json" }
request = function()
    n = n + 1
    return wrk.format("POST", "/v1/api/articles", h, string.format(
        '{"title":"Families article %d-%d","body":"<p>A short article of the bench.</p>"}',
        tid, n))
end
LUA
    cat >"$prefix/fam-article-create.sql" <<SQL
INSERT INTO articles (workspace_id, title, slug, body, locale, author_id)
 VALUES ('$ws', 'Families insert', 'families-insert-' || gen_random_uuid(),
         '<p>A short article of the bench.</p>', 'en', '$owner');
SQL
    fam_try "POST /v1/api/articles" "${auth[@]}" -H 'Content-Type: application/json' \
        -d '{"title":"Families article 0","body":"<p>A short article of the bench.</p>"}' \
        "$url/v1/api/articles"
    fam_write "POST /v1/api/articles" fam-article-create "the plain INSERT of the row" \
        "$prefix/fam-article-create.lua" 1 --
    cat >"$prefix/fam-article-create-same.sql" <<SQL
WITH a AS (INSERT INTO articles (workspace_id, title, slug, body, locale, author_id)
           VALUES ('$ws', 'Families insert', 'families-same-' || gen_random_uuid(),
                   '<p>A short article of the bench.</p>', 'en', '$owner') RETURNING *)
INSERT INTO article_revisions (article_id, created_by, snapshot)
SELECT a.id, a.author_id, to_jsonb(a) - 'search' FROM a;
SQL
    fam_same "POST /v1/api/articles" fam-article-create-same \
        "the plain INSERT of the row and of its first revision"

    # PATCH /v1/api/articles/{id}: the subtitle of one of the 2,500 drafts, at random
    # (drafts: no event, no publish rules); pgbench updates one by its slug
    # (articles_slug_key), as the route finds one by its id
    fam_val "SELECT id FROM articles WHERE workspace_id = '$ws' AND status = 'draft'
              AND slug ~ '^bench-article-[0-9]+$' AND substr(slug, 15)::int % 4 = 1
              AND substr(slug, 15)::int > 10" >"$prefix/fam-drafts.txt"
    cat >"$prefix/fam-article-patch.lua" <<LUA
$fam_lua_head
local ids, n = {}, 0
for line in io.lines("$prefix/fam-drafts.txt") do ids[#ids + 1] = line end
local h = { ["Authorization"] = "Bearer $key", ["Content-Type"] = "application/json" }
request = function()
    n = n + 1
    return wrk.format("PATCH", "/v1/api/articles/" .. ids[math.random(#ids)], h,
        string.format('{"subtitle":"Patched %d-%d"}', tid, n))
end
LUA
    cat >"$prefix/fam-article-patch.sql" <<SQL
\\set k random(3, 2499)
UPDATE articles SET subtitle = 'Patched ' || :k::text, updated_at = now()
 WHERE workspace_id = '$ws' AND locale = 'en' AND deleted_at IS NULL
   AND slug = 'bench-article-' || (4 * :k::int + 1);
SQL
    fam_try "PATCH /v1/api/articles/{id}" -X PATCH "${auth[@]}" \
        -H 'Content-Type: application/json' -d '{"subtitle":"Patched"}' \
        "$url/v1/api/articles/$(head -1 "$prefix/fam-drafts.txt")"
    fam_write "PATCH /v1/api/articles/{id}" fam-article-patch "the plain UPDATE of the row" \
        "$prefix/fam-article-patch.lua" 1 --
    cat >"$prefix/fam-article-patch-same.sql" <<SQL
\\set k random(3, 2499)
WITH a AS (UPDATE articles SET subtitle = 'Patched ' || :k::text, updated_at = now()
            WHERE workspace_id = '$ws' AND locale = 'en' AND deleted_at IS NULL
              AND slug = 'bench-article-' || (4 * :k::int + 1) RETURNING *)
INSERT INTO article_revisions (article_id, created_by, snapshot)
SELECT a.id, a.author_id, to_jsonb(a) - 'search' FROM a;
SQL
    fam_same "PATCH /v1/api/articles/{id}" fam-article-patch-same \
        "the plain UPDATE of the row and the INSERT of its revision"

    # POST /v1/api/custom/catalog/entries: an entry of the module (its sort rows and
    # search vector made by triggers on both sides)
    cat >"$prefix/fam-entry-create.lua" <<LUA
$fam_lua_head
local n = 0
local h = { ["Authorization"] = "Bearer $fkey", ["Content-Type"] = "application/json" }
request = function()
    n = n + 1
    return wrk.format("POST", "/v1/api/custom/catalog/entries", h, string.format(
        '{"data":{"title":"Item %d-%d","colour":"red","price":%d}}', tid, n, n % 10000))
end
LUA
    cat >"$prefix/fam-entry-create.sql" <<SQL
\\set k random(1, 10000)
INSERT INTO custom_entries (workspace_id, module_id, data)
 VALUES ('$ws', '$mid',
         jsonb_build_object('title', 'Item ' || :k::text, 'colour', 'red', 'price', :k::int));
SQL
    fam_try "POST custom entry" "${fauth[@]}" -H 'Content-Type: application/json' \
        -d '{"data":{"title":"Item 0","colour":"red","price":0}}' \
        "$url/v1/api/custom/catalog/entries"
    fam_write "POST /v1/api/custom/{slug}/entries" fam-entry-create \
        "the plain INSERT of the row" "$prefix/fam-entry-create.lua" 1 --

    # POST /v1/api/comments: a comment on one of the drafts at random; pgbench inserts
    # one on an article found by its slug (the route checks the article by its id)
    cat >"$prefix/fam-comment-create.lua" <<LUA
$fam_lua_head
local ids, n = {}, 0
for line in io.lines("$prefix/fam-drafts.txt") do ids[#ids + 1] = line end
local h = { ["Authorization"] = "Bearer $fkey", ["Content-Type"] = "application/json" }
request = function()
    n = n + 1
    return wrk.format("POST", "/v1/api/comments", h, string.format(
        '{"article_id":"%s","author_name":"Reader %d","content":"A comment, number %d-%d"}',
        ids[math.random(#ids)], tid, tid, n))
end
LUA
    cat >"$prefix/fam-comment-create.sql" <<SQL
\\set k random(3, 2499)
INSERT INTO comments (workspace_id, article_id, author_name, content)
 SELECT '$ws', a.id, 'Reader', 'A comment, number ' || :k::text FROM articles a
  WHERE a.workspace_id = '$ws' AND a.locale = 'en' AND a.deleted_at IS NULL
    AND a.slug = 'bench-article-' || (4 * :k::int + 1);
SQL
    comment='"author_name":"Reader","content":"A comment"'
    fam_try "POST /v1/api/comments" "${fauth[@]}" -H 'Content-Type: application/json' \
        -d "{\"article_id\":\"$(head -1 "$prefix/fam-drafts.txt")\",$comment}" \
        "$url/v1/api/comments"
    fam_write "POST /v1/api/comments" fam-comment-create "the plain INSERT of the row" \
        "$prefix/fam-comment-create.lua" 1 --
    cat >"$prefix/fam-comment-create-same.sql" <<SQL
\\set k random(3, 2499)
WITH c AS (INSERT INTO comments (workspace_id, article_id, author_name, content)
           SELECT '$ws', a.id, 'Reader', 'A comment, number ' || :k::text FROM articles a
            WHERE a.workspace_id = '$ws' AND a.locale = 'en' AND a.deleted_at IS NULL
              AND a.slug = 'bench-article-' || (4 * :k::int + 1) RETURNING *)
INSERT INTO outbox_events (workspace_id, type, data)
SELECT c.workspace_id, 'comment.created', to_jsonb(c) FROM c;
SQL
    fam_same "POST /v1/api/comments" fam-comment-create-same \
        "the plain INSERT of the row and of its comment.created event"

    # Sections: the content API's routes (the studio's mirror them with a session),
    # on the hero section of one of the site's 10,000 pages at random
    fam_val "SELECT id FROM pages WHERE site_id = '$fsid' AND slug ~ '^/page-[0-9]+$'" \
        >"$prefix/fam-pages.txt"
    # PUT /v1/api/pages/{id}/sections: a save of the draft (no base_version); pgbench
    # updates the row found by the page's slug
    cat >"$prefix/fam-section-save.lua" <<LUA
$fam_lua_head
local ids, n = {}, 0
for line in io.lines("$prefix/fam-pages.txt") do ids[#ids + 1] = line end
local h = { ["Authorization"] = "Bearer $fkey", ["Content-Type"] = "application/json" }
request = function()
    n = n + 1
    return wrk.format("PUT", "/v1/api/pages/" .. ids[math.random(#ids)] .. "/sections", h,
        string.format('{"section_key":"hero","data":{"title":"Saved %d-%d"}}', tid, n))
end
LUA
    sql="UPDATE sections s SET data = jsonb_build_object('title', 'Saved ' || :k::text),"
    sql+=" version = s.version + 1, updated_at = now() FROM pages p"
    sql+=" WHERE p.site_id = '$fsid' AND p.slug = '/page-' || :k::text AND s.page_id = p.id"
    sql+=" AND s.locale = 'en' AND s.section_key = 'hero';"
    printf '\\set k random(1, 10000)\n%s\n' "$sql" >"$prefix/fam-section-save.sql"
    fam_try "PUT /v1/api/pages/{id}/sections" -X PUT "${fauth[@]}" \
        -H 'Content-Type: application/json' -d '{"section_key":"hero","data":{"title":"Saved"}}' \
        "$url/v1/api/pages/$(head -1 "$prefix/fam-pages.txt")/sections"
    fam_write "PUT /v1/api/pages/{id}/sections" fam-section-save \
        "the plain UPDATE of the section" "$prefix/fam-section-save.lua" 1 --
    printf '\\set k random(1, 10000)\nWITH s AS (%s RETURNING s.*)\n%s\n' "${sql%;}" \
        "INSERT INTO outbox_events (workspace_id, type, data) SELECT s.workspace_id, 'page.updated', jsonb_build_object('site_id', '$fsid', 'page_id', s.page_id, 'section_key', s.section_key, 'locale', s.locale, 'version', s.version, 'published', false) FROM s;" \
        >"$prefix/fam-section-save-same.sql"
    fam_same "PUT /v1/api/pages/{id}/sections" fam-section-save-same \
        "the plain UPDATE of the section and the INSERT of its page.updated event"

    # A save and its publish, in pairs (a publish with nothing changed writes nothing):
    # each thread PUTs a page's hero, then POSTs its publish; the rate is pairs/s
    # (requests / 2). pgbench: the save's UPDATE, then in one transaction the
    # publish's UPDATE of the section and of the site's content_version (one row for
    # the site: publishes wait on each other on both sides)
    cat >"$prefix/fam-section-publish.lua" <<LUA
$fam_lua_head
local ids, n, page = {}, 0, nil
for line in io.lines("$prefix/fam-pages.txt") do ids[#ids + 1] = line end
local h = { ["Authorization"] = "Bearer $fkey", ["Content-Type"] = "application/json" }
request = function()
    n = n + 1
    if n % 2 == 1 then
        page = ids[math.random(#ids)]
        return wrk.format("PUT", "/v1/api/pages/" .. page .. "/sections", h,
            string.format('{"section_key":"hero","data":{"title":"Published %d-%d"}}', tid, n))
    end
    return wrk.format("POST", "/v1/api/pages/" .. page .. "/sections/publish", h, "{}")
end
LUA
    printf '\\set k random(1, 10000)\n%s\n' "$sql" >"$prefix/fam-section-publish.sql"
    cat >>"$prefix/fam-section-publish.sql" <<SQL
BEGIN;
UPDATE sections s SET published_data = s.data, published_version = s.version,
       published_at = now() FROM pages p
 WHERE p.site_id = '$fsid' AND p.slug = '/page-' || :k::text AND s.page_id = p.id
   AND s.published_version IS DISTINCT FROM s.version;
UPDATE sites SET content_version = content_version + 1 WHERE id = '$fsid';
END;
SQL
    fam_try "POST .../sections/publish" -X POST "${fauth[@]}" \
        -H 'Content-Type: application/json' -d '{}' \
        "$url/v1/api/pages/$(head -1 "$prefix/fam-pages.txt")/sections/publish"
    fam_write "PUT+POST publish sections (pairs)" fam-section-publish \
        "the plain UPDATE of the section, then the publish's two" \
        "$prefix/fam-section-publish.lua" 2 --
    # the publishes published: the drafts the pairs saved are live
    n=$(fam_val "SELECT count(*) FROM sections WHERE page_id IN (SELECT id FROM pages
                  WHERE site_id = '$fsid') AND published_data->>'title' LIKE 'Published %'")
    [ "$n" -gt 0 ] || { echo "bench: the section publishes published nothing" >&2; exit 1; }
    echo "sections published by the pairs: $n"
}
