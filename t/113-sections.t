# Page sections over /v1/api/pages/{pageId}/sections (secret key, pages:read and
# pages:write) and the studio mirrors (session): credentials and scopes on every route;
# PUT replaces a draft (version raised, has_unpublished_changes), base_version conflicts
# (a stale one 409 conflict; two concurrent PUTs with the same base: one 200, one 409);
# POST .../fields writes one field (and makes the section); every value a string, an
# {html} (sanitized: scripts and handlers gone) or an {src, alt} with an absolute http(s)
# src, anything else 400 invalid_field_value; GET answers published snapshots only, in
# the workspace's default locale unless asked; publish (all, one key, one locale) copies
# drafts and raises the site's content_version; page.updated in the outbox for saves and
# publishes; another workspace's page and unknown pages are 404; roles on the mirrors
# (viewers read, authors write drafts, editors publish); malformed JSON, wrong types,
# unknown fields; a PUT without section_key is 400 section_key_required.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp check_err one signup signup_defaults workspace key $UUID $TS);

signup_defaults(email_prefix => 'sect');

start_nginx();

my $owner = signup();
my $ot = $owner->{token};
my $wid = workspace($ot, 'Sections');
my $K = key($ot, $wid, 'rw', qw(pages:read pages:write));
my $KR = key($ot, $wid, 'ro', 'pages:read');
my $KW = key($ot, $wid, 'wo', 'pages:write');
my $KA = key($ot, $wid, 'articles', 'articles:read', 'articles:write');

my %m;
for my $role (qw(viewer author editor)) {
    $m{$role} = signup();
    Cms::Test::psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$m{$role}{user}{id}', '$role')");
}

sub mkpage {
    my ($token, $ws, $slug) = @_;
    my $s = req(GET => "/v1/workspaces/$ws/sites", $token)->{json}{sites}[0];
    $s //= req(POST => "/v1/workspaces/$ws/sites", $token, { name => 'Site' })->{json}{site};
    my $r = req(POST => "/v1/workspaces/$ws/sites/$s->{id}/pages", $token, { slug => $slug, title => 'Page' });
    die 'page: ' . diag_resp($r) unless $r->{status} == 201;
    return ($r->{json}{page}{id}, $s->{id});
}
my ($pid, $sid) = mkpage($ot, $wid, '/home');
my $base = "/v1/api/pages/$pid/sections";

my $other = signup();
my $wid2 = workspace($other->{token}, 'Other');
my ($pid2) = mkpage($other->{token}, $wid2, '/theirs');
my $K2 = key($other->{token}, $wid2, 'other', qw(pages:read pages:write));

sub events { one("SELECT count(*) FROM outbox_events WHERE type = 'page.updated' AND data->>'page_id' = '$pid'") }
sub content_version { one("SELECT content_version FROM sites WHERE id = '$sid'") }

my @DRAFT = sort qw(id page_id section_key locale data version published_version published_at
                    has_unpublished_changes updated_at);
my @PUBLISHED = sort qw(id page_id section_key locale data version published_at);

# --- credentials and scopes -------------------------------------------------------------

{
    my $bad = 'svc_live_' . ('A' x 49);
    for my $t ([GET => $base, undef, 'read'], [PUT => $base, { section_key => 'x' }, 'write'],
               [POST => "$base/fields", { section => 'x', field => 'f', value => 'v' }, 'write'],
               [POST => "$base/publish", {}, 'write']) {
        my ($mth, $p, $b, $need) = @$t;
        check_err(req($mth, $p, undef, $b), 401, 'missing_token', "$mth $p without a key");
        check_err(req($mth, $p, $bad, $b), 401, 'invalid_api_key', "$mth $p with a bad key");
        check_err(req($mth, $p, $ot, $b), 401, 'invalid_api_key', "$mth $p with a session token");
        check_err(req($mth, $p, $need eq 'read' ? $KW : $KR, $b), 403, 'missing_scope', "$mth $p without pages:$need");
        check_err(req($mth, $p, $KA, $b), 403, 'missing_scope', "$mth $p with only articles scopes");
    }
    is one("SELECT count(*) FROM sections"), 0, 'no refused write made a section';
    check_err(req(DELETE => $base, $K), 405, 'method_not_allowed', 'DELETE sections');
}

# --- PUT ---------------------------------------------------------------------------------

is_deeply req(GET => $base, $KR)->{json}, { sections => [] }, 'no section yet: an empty list';

my $r = req(PUT => $base, $K, { section_key => 'hero', data => { title => 'Hello', body => { html => '<p>Hi<script>alert(1)</script></p><img src="https://cdn.example.com/a.png" onerror="x()">' }, image => { src => 'https://cdn.example.com/h.png', alt => 'Hero' } } });
is $r->{status}, 200, 'PUT a new section: 200' or diag diag_resp($r);
my $s = $r->{json}{section} // {};
is_deeply [sort keys %$s], \@DRAFT, 'the draft view: every field, nothing else';
like $s->{id} // '', $UUID, 'an id';
is $s->{page_id}, $pid, 'page_id';
is $s->{locale}, 'en', "the workspace's default locale";
is $s->{version}, 1, 'version 1';
is $s->{published_version}, undef, 'never published';
is $s->{published_at}, undef, 'no published_at';
ok $s->{has_unpublished_changes}, 'has_unpublished_changes';
like $s->{updated_at} // '', $TS, 'updated_at';
is $s->{data}{title}, 'Hello', 'a string value';
unlike $s->{data}{body}{html} // '', qr/script|alert|onerror/, 'html sanitized: script and handler gone';
like $s->{data}{body}{html} // '', qr{<p>Hi</p>}, 'html sanitized: the text kept';
is_deeply $s->{data}{image}, { src => 'https://cdn.example.com/h.png', alt => 'Hero' }, 'an image value';
is one("SELECT data->'body'->>'html' FROM sections WHERE id = '$s->{id}'"), $s->{data}{body}{html},
    'the sanitized html is what is stored';
is events(), 1, 'page.updated written for the save';
is_deeply req(GET => $base, $KR)->{json}, { sections => [] }, 'a draft is never read by GET';

$r = req(PUT => $base, $K, { section_key => 'hero', data => { title => 'Hello again' }, base_version => 1 });
is $r->{status}, 200, 'PUT with the current base_version' or diag diag_resp($r);
is $r->{json}{section}{version}, 2, 'version 2';
is_deeply $r->{json}{section}{data}, { title => 'Hello again' }, 'data replaced, not merged';
check_err(req(PUT => $base, $K, { section_key => 'hero', data => {}, base_version => 1 }), 409, 'conflict',
          'a stale base_version');
check_err(req(PUT => $base, $K, { section_key => 'fresh', data => {}, base_version => 3 }), 409, 'conflict',
          'a base_version for a section not there yet');
is one("SELECT count(*) FROM sections WHERE section_key = 'fresh'"), 0, 'the refused create wrote nothing';
$r = req(PUT => $base, $K, { section_key => 'hero', data => { title => 'No check' }, base_version => undef });
is $r->{json}{section}{version}, 3, 'base_version null: no check';
$r = req(PUT => $base, $K, { section_key => 'hero', locale => 'fr', data => { title => 'Bonjour' }, base_version => 0 });
is $r->{status}, 200, 'another locale is another section (base 0 creates)' or diag diag_resp($r);
is $r->{json}{section}{locale}, 'fr', 'locale fr';
is $r->{json}{section}{version}, 1, 'its own version';
$r = req(PUT => $base, $K, { section_key => 'empty' });
is_deeply $r->{json}{section}{data}, {}, 'no data: an empty object';

# two concurrent PUTs with the same base_version: one wins
my $v = req(GET => "/v1/workspaces/$wid/pages/$pid/sections", $ot)->{status};
my @race = parallel_requests(map {
    { method => 'PUT', path => $base,
      headers => { Authorization => "Bearer $K", 'Content-Type' => 'application/json' },
      body => qq({"section_key":"hero","data":{"title":"race $_"},"base_version":3}) } } 1 .. 2);
is_deeply [sort map { $_->{status} } @race], [200, 409], 'two concurrent PUTs, one base: one 200, one 409';
is one("SELECT version FROM sections WHERE section_key = 'hero' AND locale = 'en'"), 4, 'one save counted';

# eight concurrent first saves of one section, no base: the first makes it, each other
# is a save of it (none refused, each its own version)
my @first = parallel_requests(map {
    { method => 'PUT', path => $base,
      headers => { Authorization => "Bearer $K", 'Content-Type' => 'application/json' },
      body => qq({"section_key":"crowd","data":{"title":"first $_"}}) } } 1 .. 8);
is_deeply [map { $_->{status} } @first], [(200) x 8], 'eight concurrent first saves: each 200'
    or diag join "\n", map { diag_resp($_) } grep { $_->{status} != 200 } @first;
is_deeply [sort { $a <=> $b } map { ($_->{json} || {})->{section}{version} // 0 } @first], [1 .. 8],
    'versions 1 to 8, one each';
is one("SELECT count(*) || '/' || max(version) FROM sections WHERE section_key = 'crowd'"), '1/8',
    'one row, version 8';

# --- PUT refusals ------------------------------------------------------------------------

check_err(req(PUT => $base, $K, '{"section_key":'), 400, 'invalid_request', 'malformed JSON');
# a missing key is the required-field code, as title_required is an article's
check_err(req(PUT => $base, $K, {}), 400, 'section_key_required', 'no section_key');
check_err(req(PUT => $base, $K, { section_key => '' }), 400, 'section_key_required', 'an empty section_key');
check_err(req(PUT => $base, $K, { section_key => undef }), 400, 'section_key_required', 'section_key null');
check_err(req(PUT => "/v1/workspaces/$wid/pages/$pid/sections", $ot, { data => {} }), 400,
          'section_key_required', 'studio: no section_key');
check_err(req(PUT => $base, $K, { section_key => 5 }), 400, 'invalid_field_value', 'section_key a number');
check_err(req(PUT => $base, $K, { section_key => 'a b' }), 400, 'invalid_field_value', 'section_key with a space');
check_err(req(PUT => $base, $K, { section_key => 'k' x 101 }), 400, 'invalid_field_value', 'section_key too long');
check_err(req(PUT => $base, $K, { section_key => 'x', colour => 'red' }), 400, 'invalid_request', 'an unknown field');
check_err(req(PUT => $base, $K, { section_key => 'x', locale => 'not a locale' }), 400, 'invalid_field_value',
          'a bad locale');
for my $bad (['a string', '"text"'], ['an array', '[]'], ['a number', '5']) {
    check_err(req(PUT => $base, $K, qq({"section_key":"x","data":$bad->[1]})), 400, 'invalid_field_value',
              "data $bad->[0]");
}
for my $bad (['-1', 'negative'], ['"1"', 'a string'], ['1.5', 'a fraction'], ['true', 'a boolean'],
             ['99999999999', 'too large']) {
    check_err(req(PUT => $base, $K, qq({"section_key":"x","base_version":$bad->[0]})), 400,
              'invalid_field_value', "base_version $bad->[1]");
}
my @BAD_VALUES = (
    ['a number', 5], ['a boolean', JSON::PP::true], ['null', undef], ['an array', ['a']],
    ['an empty object', {}], ['html not a string', { html => 5 }], ['html with another key', { html => 'x', y => 1 }],
    ['src javascript:', { src => 'javascript:alert(1)' }], ['src data:', { src => 'data:image/png;base64,AA' }],
    ['src relative', { src => '/a.png' }], ['src not a string', { src => 5 }],
    ['alt not a string', { src => 'https://cdn.example.com/a.png', alt => 5 }],
    ['src with another key', { src => 'https://cdn.example.com/a.png', onload => 'x' }],
    ['text over 64 KiB', 'a' x 65537], ['nested object', { nested => { html => 'x' } }],
);
for my $b (@BAD_VALUES) {
    check_err(req(PUT => $base, $K, { section_key => 'x', data => { f => $b->[1] } }), 400, 'invalid_field_value',
              "PUT a value: $b->[0]");
    check_err(req(POST => "$base/fields", $K, { section => 'x', field => 'f', value => $b->[1] }), 400,
              'invalid_field_value', "fields: $b->[0]");
}
check_err(req(PUT => $base, $K, { section_key => 'x', data => { 'a b' => 'v' } }), 400, 'invalid_field_value',
          'a data key with a space');
check_err(req(PUT => $base, $K, { section_key => 'x', data => { map { ("f$_" => 'v') } 1 .. 101 } }), 400,
          'invalid_field_value', 'more than 100 fields');
is one("SELECT count(*) FROM sections WHERE section_key = 'x'"), 0, 'no refused write made a section';

# --- fields --------------------------------------------------------------------------------

$r = req(POST => "$base/fields", $K, { section => 'hero', field => 'subtitle', value => 'Sub' });
is $r->{status}, 200, 'fields: 200' or diag diag_resp($r);
is $r->{json}{section}{version}, 5, 'fields: version raised';
is $r->{json}{section}{data}{subtitle}, 'Sub', 'the field set';
like $r->{json}{section}{data}{title}, qr/^race /, 'the other fields kept';
$r = req(POST => "$base/fields", $K, { section => 'hero', field => 'body', value => { html => '<a href="javascript:x()">l</a><b>b</b>' } });
unlike $r->{json}{section}{data}{body}{html} // '', qr/javascript/, 'fields: html sanitized';
like $r->{json}{section}{data}{body}{html} // '', qr{<b>b</b>}, 'fields: html kept';
$r = req(POST => "$base/fields", $K, { section => 'footer', field => 'text', value => 'Bye', locale => 'de' });
is $r->{status}, 200, 'fields on a new section makes it' or diag diag_resp($r);
is_deeply [@{$r->{json}{section}}{qw(section_key locale version)}], ['footer', 'de', 1], 'footer de, version 1';
check_err(req(POST => "$base/fields", $K, { field => 'f', value => 'v' }), 400, 'invalid_field_value', 'fields: no section');
check_err(req(POST => "$base/fields", $K, { section => 'x', value => 'v' }), 400, 'invalid_field_value', 'fields: no field');
check_err(req(POST => "$base/fields", $K, { section => 'x', field => 'f' }), 400, 'invalid_field_value', 'fields: no value');
check_err(req(POST => "$base/fields", $K, { section => 'x', field => 'f', value => 'v', extra => 1 }), 400,
          'invalid_request', 'fields: an unknown field');

# --- publish and the published view --------------------------------------------------------

my $cv = content_version();
my $ev = events();
$r = req(POST => "$base/publish", $K, { section_key => 'hero', locale => 'en' });
is $r->{status}, 200, 'publish one section' or diag diag_resp($r);
is scalar @{ $r->{json}{sections} // [] }, 1, 'one section published';
my $p = $r->{json}{sections}[0];
is_deeply [@$p{qw(section_key locale published_version)}], ['hero', 'en', $p->{version}], 'published_version = version';
ok !$p->{has_unpublished_changes}, 'no unpublished changes';
like $p->{published_at} // '', $TS, 'published_at';
is content_version(), $cv + 1, "the site's content_version raised";
is events(), $ev + 1, 'page.updated written for the publish';

my $g = req(GET => $base, $KR);
is $g->{status}, 200, 'GET: 200';
is scalar @{ $g->{json}{sections} }, 1, 'GET: the published section only (en)';
is_deeply [sort keys %{ $g->{json}{sections}[0] }], \@PUBLISHED, 'the published view: its fields only';
is_deeply $g->{json}{sections}[0]{data}, $p->{data}, 'the published data';

req(PUT => $base, $K, { section_key => 'hero', data => { title => 'Draft only' } });
is req(GET => $base, $KR)->{json}{sections}[0]{data}{title}, $p->{data}{title}, 'a later draft is not read';
$r = req(GET => "$base?locale=fr", $KR);
is_deeply $r->{json}, { sections => [] }, 'fr: nothing published yet';
check_err(req(GET => "$base?locale=%ff", $KR), 400, 'invalid_request', 'a locale of invalid UTF-8');
check_err(req(GET => "$base?locale=no%20t", $KR), 400, 'invalid_field_value', 'a malformed locale');

$r = req(POST => "$base/publish", $K, {});
is $r->{status}, 200, 'publish everything' or diag diag_resp($r);
is_deeply [map { "$_->{section_key}/$_->{locale}" } @{ $r->{json}{sections} }],
    ['crowd/en', 'empty/en', 'footer/de', 'hero/en', 'hero/fr'],
    'every section with changes, in key order';
$r = req(POST => "$base/publish", $K);
is_deeply $r->{json}, { sections => [] }, 'nothing left to publish: an empty list (no body)';
is content_version(), $cv + 2, 'a publish of nothing does not raise content_version';
is req(GET => "$base?locale=fr", $KR)->{json}{sections}[0]{data}{title}, 'Bonjour', 'fr published';
check_err(req(POST => "$base/publish", $K, { section_key => 5 }), 400, 'invalid_field_value', 'publish: a wrong type');
check_err(req(POST => "$base/publish", $K, { other => 1 }), 400, 'invalid_request', 'publish: an unknown field');

# --- another workspace's page, unknown pages ---------------------------------------------------

for my $path ("/v1/api/pages/$pid2/sections", '/v1/api/pages/00000000-0000-4000-8000-000000000000/sections',
              '/v1/api/pages/not-a-uuid/sections') {
    check_err(req(GET => $path, $K), 404, 'not_found', "GET $path");
    check_err(req(PUT => $path, $K, { section_key => 'x' }), 404, 'not_found', "PUT $path");
    check_err(req(POST => "$path/fields", $K, { section => 'x', field => 'f', value => 'v' }), 404, 'not_found',
              "fields $path");
    check_err(req(POST => "$path/publish", $K, {}), 404, 'not_found', "publish $path");
}
is one("SELECT count(*) FROM sections WHERE page_id = '$pid2'"), 0, "nothing written on their page";
check_err(req(GET => $base, $K2), 404, 'not_found', "their key on our page");

# --- the studio mirrors and roles ----------------------------------------------------------------

my $sb = "/v1/workspaces/$wid/pages/$pid/sections";
is req(GET => $sb, $m{viewer}{token})->{status}, 200, 'a viewer reads';
check_err(req(PUT => $sb, $m{viewer}{token}, { section_key => 'v' }), 403, 'forbidden', 'a viewer cannot PUT');
check_err(req(POST => "$sb/fields", $m{viewer}{token}, { section => 'v', field => 'f', value => 'v' }), 403,
          'forbidden', 'a viewer cannot write a field');
$r = req(PUT => $sb, $m{author}{token}, { section_key => 'studio', data => { t => 'by an author' } });
is $r->{status}, 200, 'an author saves a draft' or diag diag_resp($r);
check_err(req(POST => "$sb/publish", $m{author}{token}, {}), 403, 'forbidden', 'an author cannot publish');
$r = req(POST => "$sb/publish", $m{editor}{token}, { section_key => 'studio' });
is $r->{status}, 200, 'an editor publishes' or diag diag_resp($r);
is $r->{json}{sections}[0]{data}{t}, 'by an author', 'the published draft';
check_err(req(GET => "/v1/workspaces/$wid2/pages/$pid2/sections", $ot), 403, 'not_workspace_member',
          "another workspace's mirror");
check_err(req(GET => "/v1/workspaces/$wid/pages/$pid2/sections", $ot), 404, 'not_found',
          "their page under our workspace");
check_err(req(GET => $sb, undef), 401, 'missing_token', 'the mirror without a session');

# The purge a publish queues (sql/0034, sql/0048): writes to one site share its waiting
# row (held FOR SHARE, not locked for update: a second writer does not queue behind the
# first), and no sender claims it before the write that holds it commits (no sender runs
# here: cms_cdn_purge is not set)
{
    my $key = 'cms-test-shared';
    psql("DELETE FROM cdn_purges WHERE keys = '$key'; SELECT cms_cdn_purge_queue('$key')");
    local $ENV{PGAPPNAME} = 'cms-test-held';
    open(my $held, '|-', qw(psql -X -q -o /dev/null -h 127.0.0.1 -U postgres -p), $ENV{TEST_CMS_PG_PORT},
         '-d', Cms::Test::db_name()) or die "psql: $!";
    $held->autoflush(1);
    print {$held} "BEGIN; SELECT cms_cdn_purge_queue('$key');\n";
    ok wait_until(30, sub { one("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'cms-test-held'"
                                . " AND state = 'idle in transaction'") == 1 }),
       'a write holds the waiting purge of its site';
    my $beside = eval { one("SET lock_timeout = '5s'; SELECT count(*) FROM (SELECT cms_cdn_purge_queue('$key')) q") };
    is $beside, 1, '... and another write queues the same key beside it, without waiting' or diag $@;
    my $claim = "SELECT count(*) FROM cms_cdn_purges_claim(100, interval '1 minute') c WHERE c.keys = '$key'";
    is one($claim), 0, 'a sender does not claim the purge while a write it covers is open';
    print {$held} "COMMIT;\n";
    close $held;
    is one($claim), 1, '... and claims it once the write committed';
    is one("SELECT count(*) FROM cdn_purges WHERE keys = '$key'"), 1, 'one row for the key throughout';
    psql("DELETE FROM cdn_purges WHERE keys = '$key'");
}

done_testing();
