# Custom modules (/v1/workspaces/{id}/custom-modules, session) and their entries
# (/v1/api/custom/{slug}/entries, secret key, and the studio mirrors): every route; the
# schema-of-schema errors naming their path; roles (members read modules, owners and
# admins write them; viewers read entries, authors write them); data checked against the
# schema per type, keys the schema lacks dropped, required fields, PATCH merging per key
# and checking the merged result; richtext sanitized; media ids of this workspace only;
# status default and the custom_entry.published event; a disabled module (403
# module_disabled on key and studio routes); isolation (another workspace's slug is 404);
# schema changes never rewrite stored entries; filters and sorts, and on 10,000 entries
# the plans of a filtered and a sorted page (no sequential scan); DELETE of a module
# takes its entries.
use strict;
use warnings;
use utf8;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp check_err one signup signup_defaults workspace key rows_read $UUID $TS);
use JSON::PP ();

signup_defaults(email_prefix => 'custom');

start_nginx();

# EXPLAIN of a statement's generic plan ($1 uuid, $2 jsonb, $3 int), as the module's
# connections plan it
sub generic_plan {
    my ($sql, $args) = @_;
    my $rows = psql("SET plan_cache_mode = force_generic_plan;"
                    . " PREPARE p(uuid, jsonb, int) AS $sql; EXPLAIN EXECUTE p($args)");
    return join "\n", map { $_->[0] // '' } @$rows;
}

my $T = JSON::PP::true;
my $F = JSON::PP::false;

my $owner = signup();
my $wid = workspace($owner->{token}, 'Custom');
my $K = key($owner->{token}, $wid, 'rw', qw(custom:read custom:write));
my $KR = key($owner->{token}, $wid, 'ro', 'custom:read');
my $KA = key($owner->{token}, $wid, 'articles', qw(articles:read articles:write));

my $other = signup();
my $wid2 = workspace($other->{token}, 'Other');
my $K2 = key($other->{token}, $wid2, 'other', qw(custom:read custom:write));

my $MODS = "/v1/workspaces/$wid/custom-modules";

sub mkmod {
    my ($body, $tok, $path) = @_;
    my $r = req(POST => $path // $MODS, $tok // $owner->{token}, $body);
    die 'create module: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{custom_module};
}

sub entries { "/v1/api/custom/$_[0]/entries" . (defined $_[1] ? "/$_[1]" : '') }

sub mkentry {
    my ($slug, $body, $cred) = @_;
    my $r = req(POST => entries($slug), $cred // $K, $body);
    die 'create entry: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{custom_entry};
}

my @TYPES = (
    { key => 'title', label => 'Title', type => 'text', required => $T },
    { key => 'price', label => 'Price', type => 'number' },
    { key => 'in_stock', label => 'In stock', type => 'boolean' },
    { key => 'site', label => 'Site', type => 'url' },
    { key => 'day', label => 'Day', type => 'date' },
    { key => 'at', label => 'At', type => 'datetime' },
    { key => 'mail', label => 'Mail', type => 'email' },
    { key => 'colour', label => 'Colour', type => 'select', options => [qw(red green blue)] },
    { key => 'tags', label => 'Tags', type => 'multiselect', options => [qw(new sale eco)] },
    { key => 'photo', label => 'Photo', type => 'media' },
    { key => 'body', label => 'Body', type => 'richtext' },
);

# --- modules ----------------------------------------------------------------------------

my $r = req(POST => $MODS, $owner->{token}, { slug => 'products', name => 'Products', tagline => 'Things',
                                               schema => { fields => \@TYPES } });
is $r->{status}, 201, 'create a module: 201' or diag diag_resp($r);
my $mod = $r->{json}{custom_module} // {};
is_deeply [sort keys %$mod], [sort qw(id workspace_id slug name tagline schema enabled created_at updated_at)],
    'module: every field';
like $mod->{id} // '', $UUID, 'module id is a uuid';
like $mod->{created_at} // '', $TS, 'created_at is RFC 3339';
is $mod->{enabled}, $T, 'enabled by default';
is $mod->{workspace_id}, $wid, 'workspace_id';
is $mod->{schema}{fields}[1]{required}, $F, 'schema in normal form: required written as false';
is_deeply $mod->{schema}{fields}[7]{options}, [qw(red green blue)], 'options kept';

my $bare = mkmod({ slug => 'bare', name => 'Bare' });
is_deeply $bare->{schema}, { fields => [] }, 'no schema: no fields';
is $bare->{tagline}, '', 'no tagline: empty';

for my $t (
    [{ name => 'x' }, 'slug_required', 'slug', 'no slug'],
    [{ slug => '', name => 'x' }, 'slug_required', 'slug', 'empty slug'],
    [{ slug => 'Bad Slug', name => 'x' }, 'invalid_slug', 'slug', 'bad slug'],
    [{ slug => 'a--b', name => 'x' }, 'invalid_slug', 'slug', 'double dash'],
    [{ slug => 'okslug' }, 'name_required', 'name', 'no name'],
    [{ slug => 'okslug', name => '' }, 'name_required', 'name', 'empty name'],
    [{ slug => 'okslug', name => 'x', enabled => 'yes' }, 'invalid_field_value', 'enabled', 'enabled a string'],
    [{ slug => 'okslug', name => 'x', schema => [] }, 'invalid_field_value', 'schema', 'schema an array'],
    [{ slug => 'okslug', name => 'x', schema => { fields => [{ key => 'a', label => 'A', type => 'nope' }] } },
     'invalid_field_value', 'schema.fields[0].type', 'unknown type'],
    [{ slug => 'okslug', name => 'x', schema => { fields => [{ key => 'a', label => 'A', type => 'text' },
                                                             { key => 'b', label => 'B', type => 'text' },
                                                             { key => 'c', label => 'C', type => 'text' },
                                                             { key => 'd', label => 'D', type => 'tetx' }] } },
     'invalid_field_value', 'schema.fields[3].type', 'the fourth field\'s type'],
    [{ slug => 'okslug', name => 'x', schema => { fields => [{ key => 'A', label => 'A', type => 'text' }] } },
     'invalid_field_value', 'schema.fields[0].key', 'key not slug-like'],
    [{ slug => 'okslug', name => 'x', schema => { fields => [{ key => 'a', label => 'A', type => 'text' },
                                                             { key => 'a', label => 'B', type => 'text' }] } },
     'invalid_field_value', 'schema.fields[1].key', 'keys repeated'],
    [{ slug => 'okslug', name => 'x', schema => { fields => [{ key => 'a', label => '', type => 'text' }] } },
     'invalid_field_value', 'schema.fields[0].label', 'empty label'],
    [{ slug => 'okslug', name => 'x', schema => { fields => [{ key => 'a', label => 'A', type => 'select' }] } },
     'invalid_field_value', 'schema.fields[0].options', 'select without options'],
    [{ slug => 'okslug', name => 'x', schema => { fields => [{ key => 'a', label => 'A', type => 'select',
                                                               options => [] }] } },
     'invalid_field_value', 'schema.fields[0].options', 'select with no options'],
    [{ slug => 'okslug', name => 'x', schema => { fields => [{ key => 'a', label => 'A', type => 'text',
                                                               options => ['x'] }] } },
     'invalid_field_value', 'schema.fields[0].options', 'options on a text field'],
    [{ slug => 'okslug', name => 'x', schema => { fields => [map { { key => "f$_", label => 'F', type => 'text' } }
                                                             1 .. 101] } },
     'invalid_field_value', 'schema.fields', '101 fields'],
    [{ slug => 'okslug', name => 'x', colour => 1 }, 'invalid_request', 'colour', 'an unknown member'],
) {
    my ($body, $code, $param, $name) = @$t;
    my $r = req(POST => $MODS, $owner->{token}, $body);
    check_err($r, 400, $code, "create module, $name");
    like $r->{json}{error} // '', qr/\Q$param\E/, "create module, $name: the message names $param"
        if $param =~ /^schema/;
}
is one("SELECT count(*) FROM custom_modules WHERE slug = 'okslug'"), 0, 'no refused module was stored';
check_err(req(POST => $MODS, $owner->{token}, { slug => 'products', name => 'Again' }), 409, 'slug_taken',
          'slug taken in the workspace');
is req(POST => "/v1/workspaces/$wid2/custom-modules", $other->{token}, { slug => 'products', name => 'P' })->{status},
    201, 'the same slug in another workspace';

$r = req(GET => $MODS, $owner->{token});
is $r->{status}, 200, 'list modules: 200';
is_deeply [map { $_->{slug} } @{$r->{json}{custom_modules} // []}], [qw(products bare)], 'list: oldest first';

$r = req(PATCH => "$MODS/$bare->{id}", $owner->{token}, { name => 'Renamed', tagline => 'T' });
is $r->{status}, 200, 'patch a module: 200' or diag diag_resp($r);
is_deeply [@{$r->{json}{custom_module}}{qw(name tagline slug)}], ['Renamed', 'T', 'bare'], 'patch: changed, kept';
check_err(req(PATCH => "$MODS/$bare->{id}", $owner->{token},
              { schema => { fields => [{ key => 'a', label => 'A', type => 'bogus' }] } }),
          400, 'invalid_field_value', 'patch with a bad schema');
check_err(req(PATCH => "$MODS/00000000-0000-4000-8000-000000000000", $owner->{token}, { name => 'x' }),
          404, 'not_found', 'patch a module that is not there');
check_err(req(PATCH => "$MODS/nope", $owner->{token}, { name => 'x' }), 404, 'not_found', 'patch a malformed id');

# roles: a viewer reads modules, an editor does not write them
{
    my %m;
    for my $role (qw(editor viewer)) {
        my $u = signup();
        psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$u->{user}{id}', '$role')");
        $m{$role} = $u;
    }
    is req(GET => $MODS, $m{viewer}{token})->{status}, 200, 'a viewer lists modules';
    check_err(req(POST => $MODS, $m{editor}{token}, { slug => 'ed', name => 'Ed' }), 403, 'forbidden',
              'an editor creates a module');
    check_err(req(DELETE => "$MODS/$bare->{id}", $m{editor}{token}), 403, 'forbidden', 'an editor deletes one');
    check_err(req(GET => $MODS, $other->{token}), 403, 'not_workspace_member', 'a stranger lists modules');

    # entries in the studio: viewers read, authors write
    my $vs = "/v1/workspaces/$wid/custom/products/entries";
    check_err(req(POST => $vs, $m{viewer}{token}, { data => { title => 'x' } }), 403, 'forbidden',
              'a viewer creates an entry');
    $r = req(POST => $vs, $m{editor}{token}, { data => { title => 'By the studio' }, status => 'draft' });
    is $r->{status}, 201, 'an editor creates an entry in the studio' or diag diag_resp($r);
    $r = req(GET => $vs, $m{viewer}{token});
    is $r->{status}, 200, 'a viewer lists entries in the studio (drafts included)';
    ok((grep { $_->{data}{title} eq 'By the studio' } @{$r->{json}{custom_entries} // []}), 'the draft is listed');
}

# --- entries ------------------------------------------------------------------------------

for my $t ([GET => entries('products'), undef, 'read'], [POST => entries('products'), { data => {} }, 'write']) {
    my ($m, $p, $b, $need) = @$t;
    check_err(req($m, $p, undef, $b), 401, 'missing_token', "$m entries without a key");
    check_err(req($m, $p, $KA, $b), 403, 'missing_scope', "$m entries without custom:$need");
}
check_err(req(POST => entries('products'), $KR, { data => { title => 'x' } }), 403, 'missing_scope',
          'a read-only key creates');

psql("INSERT INTO media_assets (id, workspace_id, title) VALUES ('0190a4d6-2f5e-7c3a-9b1d-4e5f60718293', '$wid', 'P')");
psql("INSERT INTO media_assets (id, workspace_id, title) VALUES ('0190a4d6-2f5e-7c3a-9b1d-4e5f60718294', '$wid2', 'Q')");

my %full = (title => 'Lamp', price => 19.5, in_stock => $T, site => 'https://example.com/lamp',
            day => '2024-02-29', at => '2024-03-01T10:00:00+02:00', mail => 'shop@münchen.de',
            colour => 'green', tags => [qw(new eco)], photo => '0190a4d6-2f5e-7c3a-9b1d-4e5f60718293',
            body => '<p>Bright <script>alert(1)</script><b>lamp</b></p>');
$r = req(POST => entries('products'), $K, { data => { %full, unknown => 'dropped' } });
is $r->{status}, 201, 'create an entry with every type: 201' or diag diag_resp($r);
my $e = $r->{json}{custom_entry} // {};
is_deeply [sort keys %$e], [sort qw(id workspace_id module_id data status created_at updated_at)], 'entry: every field';
is $e->{status}, 'published', 'status defaults to published';
is $e->{module_id}, $mod->{id}, 'module_id';
ok !exists $e->{data}{unknown}, 'a key the schema lacks is dropped';
is $e->{data}{$_}, $full{$_}, "data.$_ kept" for qw(title price site day at mail colour photo);
is $e->{data}{in_stock}, $T, 'data.in_stock kept';
is_deeply $e->{data}{tags}, [qw(new eco)], 'data.tags kept';
unlike $e->{data}{body}, qr/script|alert/, 'richtext sanitized';
like $e->{data}{body}, qr{<b>lamp</b>}, 'richtext keeps what is allowed';
is_deeply req(GET => entries('products', $e->{id}), $KR)->{json}, { custom_entry => $e }, 'get: the same entry';
is one("SELECT count(*) FROM outbox_events WHERE type = 'custom_entry.published' AND data->>'id' = '$e->{id}'"), 1,
   'custom_entry.published in the outbox';

my @bad = (
    [{}, 'data.title', 'required missing'],
    [{ title => undef }, 'data.title', 'required null'],
    [{ title => 5 }, 'data.title', 'text a number'],
    [{ title => 'x' x 10001 }, 'data.title', 'text too long'],
    [{ title => 'x', price => '5' }, 'data.price', 'number a string'],
    [{ title => 'x', price => $T }, 'data.price', 'number a boolean'],
    [{ title => 'x', in_stock => 'true' }, 'data.in_stock', 'boolean a string'],
    [{ title => 'x', site => 'javascript:alert(1)' }, 'data.site', 'url javascript:'],
    [{ title => 'x', site => '/relative' }, 'data.site', 'url relative'],
    [{ title => 'x', day => '2024-02-30' }, 'data.day', 'date 2024-02-30'],
    [{ title => 'x', day => '2023-02-29' }, 'data.day', 'date 2023-02-29'],
    [{ title => 'x', at => '2024-03-01T10:00:00' }, 'data.at', 'datetime without a zone'],
    [{ title => 'x', mail => '"a b"@example.com' }, 'data.mail', 'email quoted'],
    [{ title => 'x', mail => 'nope' }, 'data.mail', 'email without @'],
    [{ title => 'x', colour => 'purple' }, 'data.colour', 'select not an option'],
    [{ title => 'x', tags => ['new', 'new'] }, 'data.tags', 'multiselect repeated'],
    [{ title => 'x', tags => 'new' }, 'data.tags', 'multiselect a string'],
    [{ title => 'x', photo => 'not-a-uuid' }, 'data.photo', 'media not a uuid'],
    [{ title => 'x', photo => '0190a4d6-2f5e-7c3a-9b1d-4e5f60718294' }, 'data.photo',
     'media of another workspace'],
    [{ title => 'x', photo => '0190a4d6-2f5e-7c3a-9b1d-4e5f60718299' }, 'data.photo', 'media not there'],
);
my $before = one("SELECT count(*) FROM custom_entries");
for my $t (@bad) {
    my ($data, $param, $name) = @$t;
    my $r = req(POST => entries('products'), $K, { data => $data });
    check_err($r, 400, 'invalid_field_value', "create entry, $name");
    like $r->{json}{error} // '', qr/\Q$param\E|\Q${\ substr($param, 5)}\E/, "create entry, $name: names the key"
        unless $param eq 'data.photo' && $name =~ /workspace|there/;
}
check_err(req(POST => entries('products'), $K, '{"data":{"title":"x","price":1e309}}'), 400, 'invalid_request',
          'a number out of range (1e309)');
check_err(req(POST => entries('products'), $K, { data => [] }), 400, 'invalid_field_value', 'data an array');
check_err(req(POST => entries('products'), $K, { data => { title => 'x' }, status => 'live' }), 400,
          'invalid_status', 'unknown status');
check_err(req(POST => entries('products'), $K, { data => { title => 'x' }, extra => 1 }), 400,
          'invalid_request', 'an unknown member');
is one("SELECT count(*) FROM custom_entries"), $before, 'no refused entry was stored';
is mkentry('products', { data => { title => 'Zero', price => -0 } })->{data}{price}, 0, '-0 is a number';

# PATCH merges per key and checks the merged data
$r = req(PATCH => entries('products', $e->{id}), $K, { data => { price => 25, colour => undef } });
is $r->{status}, 200, 'patch: 200' or diag diag_resp($r);
my $p = $r->{json}{custom_entry}{data} // {};
is $p->{price}, 25, 'patch: the given key changed';
is $p->{title}, 'Lamp', 'patch: the others kept';
ok exists $p->{colour} && !defined $p->{colour}, 'patch: null clears an optional field';
check_err(req(PATCH => entries('products', $e->{id}), $K, { data => { title => undef } }), 400,
          'invalid_field_value', 'patch: clearing a required field');
check_err(req(PATCH => entries('products', '00000000-0000-4000-8000-000000000000'), $K, { data => {} }), 404,
          'not_found', 'patch: an entry that is not there');

# status: a draft becoming published writes the event once
my $d = mkentry('products', { data => { title => 'Draft' }, status => 'draft' });
is one("SELECT count(*) FROM outbox_events WHERE data->>'id' = '$d->{id}'"), 0, 'a draft: no event';
is req(PATCH => entries('products', $d->{id}), $K, { status => 'published' })->{json}{custom_entry}{status},
   'published', 'publish a draft';
req(PATCH => entries('products', $d->{id}), $K, { data => { price => 1 } });
is one("SELECT count(*) FROM outbox_events WHERE type = 'custom_entry.published' AND data->>'id' = '$d->{id}'"), 1,
   'published once: one event';

# the list: total and offset only
$r = req(GET => entries('products') . '?limit=2&offset=1', $KR);
is $r->{status}, 200, 'list entries: 200';
is scalar @{$r->{json}{custom_entries} // []}, 2, 'list: the page';
is_deeply [sort keys %{$r->{json}{pagination} // {}}], [qw(offset total)], 'pagination holds total and offset';
is $r->{json}{pagination}{total}, one("SELECT count(*) FROM custom_entries WHERE module_id = '$mod->{id}'"),
   'pagination total';
# the total is the module's counters (sql/0044): a status change and a deletion keep it
# what a count of the rows says, the studio's and the public surface's counts alike
{
    my $total = sub { req(GET => entries('products'), $KR)->{json}{pagination}{total} };
    my ($x) = @{psql("INSERT INTO custom_entries (workspace_id, module_id, data, status)"
                     . " SELECT workspace_id, id, '{}', 'draft' FROM custom_modules"
                     . " WHERE id = '$mod->{id}' RETURNING id")};
    my $n = one("SELECT count(*) FROM custom_entries WHERE module_id = '$mod->{id}'");
    is $total->(), $n, 'an entry written by SQL: counted';
    psql("UPDATE custom_entries SET status = CASE status WHEN 'draft' THEN 'published' ELSE 'draft' END"
         . " WHERE id = '$x->[0]'");
    is $total->(), $n, 'a status change: the total stays';
    is one("SELECT sum(n) FROM record_counts WHERE kind = 'entries' AND value LIKE '$mod->{id}:%'"), $n,
       'the counters hold every entry of the module';
    psql("DELETE FROM custom_entries WHERE id = '$x->[0]'");
    is $total->(), $n - 1, 'a deletion: one fewer';
}

# isolation
check_err(req(GET => entries('products', $e->{id}), $K2), 404, 'not_found', 'another workspace: entry');
check_err(req(GET => entries('bare'), $K2), 404, 'not_found', 'another workspace\'s slug');
check_err(req(GET => entries('nothing'), $K), 404, 'not_found', 'no such module');
check_err(req(DELETE => entries('products', $e->{id}), $K2), 404, 'not_found', 'another workspace: delete');

# a disabled module
req(PATCH => "$MODS/$mod->{id}", $owner->{token}, { enabled => $F });
check_err(req(GET => entries('products'), $K), 403, 'module_disabled', 'disabled: list');
check_err(req(GET => entries('products', $e->{id}), $K), 403, 'module_disabled', 'disabled: get');
check_err(req(POST => entries('products'), $K, { data => { title => 'x' } }), 403, 'module_disabled',
          'disabled: create');
check_err(req(DELETE => entries('products', $e->{id}), $K), 403, 'module_disabled', 'disabled: delete');
check_err(req(GET => "/v1/workspaces/$wid/custom/products/entries", $owner->{token}), 403, 'module_disabled',
          'disabled: studio list');
req(PATCH => "$MODS/$mod->{id}", $owner->{token}, { enabled => $T });
is req(GET => entries('products', $e->{id}), $K)->{status}, 200, 'enabled again';

# a plan without custom modules: the one check (cms_custom_modules_allowed) says no
psql("CREATE OR REPLACE FUNCTION cms_custom_modules_allowed(p_workspace uuid) RETURNS boolean
      LANGUAGE sql STABLE AS \$\$ SELECT p_workspace <> '$wid2' \$\$");
check_err(req(GET => entries('products'), $K2), 403, 'module_not_allowed', 'plan: list');
check_err(req(POST => entries('products'), $K2, { data => {} }), 403, 'module_not_allowed', 'plan: create entry');
check_err(req(POST => "/v1/workspaces/$wid2/custom-modules", $other->{token}, { slug => 'more', name => 'M' }), 403,
          'module_not_allowed', 'plan: create module');
is req(GET => entries('products'), $K)->{status}, 200, 'plan: another workspace is not touched';
psql("CREATE OR REPLACE FUNCTION cms_custom_modules_allowed(p_workspace uuid) RETURNS boolean
      LANGUAGE sql STABLE AS \$\$ SELECT true \$\$");

# a schema change never rewrites stored entries
{
    my $m = mkmod({ slug => 'notes', name => 'Notes', schema => { fields => [
        { key => 'a', label => 'A', type => 'text' }, { key => 'b', label => 'B', type => 'number' }] } });
    my $n = mkentry('notes', { data => { a => 'x', b => 1 } });
    req(PATCH => "$MODS/$m->{id}", $owner->{token},
        { schema => { fields => [{ key => 'a', label => 'A', type => 'number' }] } });
    is_deeply req(GET => entries('notes', $n->{id}), $K)->{json}{custom_entry}{data}, { a => 'x', b => 1 },
        'reads return what was stored, removed field included';
    check_err(req(PATCH => entries('notes', $n->{id}), $K, { data => {} }), 400, 'invalid_field_value',
              'a write checks the stored data against the new schema');
    $r = req(PATCH => entries('notes', $n->{id}), $K, { data => { a => 7 } });
    is_deeply $r->{json}{custom_entry}{data}, { a => 7 }, 'the next write drops the removed field';
}

# filters and sorts
{
    my $m = mkmod({ slug => 'books', name => 'Books', schema => { fields => [
        { key => 'title', label => 'T', type => 'text' }, { key => 'pages', label => 'P', type => 'number' },
        { key => 'genre', label => 'G', type => 'select', options => [qw(sf crime)] },
        { key => 'tags', label => 'Tags', type => 'multiselect', options => [qw(a b c)] },
        { key => 'done', label => 'D', type => 'boolean' }, { key => 'html', label => 'H', type => 'richtext' }] } });
    mkentry('books', { data => $_ }) for
        { title => 'B', pages => 300, genre => 'sf', tags => ['a'], done => $T },
        { title => 'A', pages => 120, genre => 'crime', tags => ['a', 'b'], done => $F },
        { title => 'C', pages => 1000, genre => 'sf', tags => ['c'] },
        { title => 'D' };
    my $list = sub { my $r = req(GET => entries('books') . $_[0], $K);
                     [$r->{status}, [map { $_->{data}{title} } @{$r->{json}{custom_entries} // []}],
                      $r->{json}{pagination}{total}] };
    is_deeply $list->('?filter[genre]=sf&sort=title'), [200, [qw(B C)], 2], 'filter by select, sort by text';
    is_deeply $list->('?filter%5Bgenre%5D=sf&sort=-title'), [200, [qw(C B)], 2], 'encoded brackets, descending';
    is_deeply $list->('?filter[tags]=a&sort=pages'), [200, [qw(A B)], 2], 'multiselect holds the value';
    is_deeply $list->('?filter[pages]=120'), [200, ['A'], 1], 'filter by number';
    is_deeply $list->('?filter[pages]=120.0'), [200, ['A'], 1], 'a number equals whatever its form';
    is_deeply $list->('?filter[done]=false'), [200, ['A'], 1], 'filter by boolean';
    is_deeply $list->('?sort=pages'), [200, [qw(A B C D)], 4], 'sort by number: missing last';
    is_deeply $list->('?sort=-pages&limit=2'), [200, [qw(D C)], 4], 'descending: missing first (as SQL)';
    is_deeply $list->('?filter[genre]=sf&filter[tags]=c'), [200, ['C'], 1], 'two filters: both hold';
    for my $t (['?filter[nope]=1', 'unknown filter key'], ['?sort=nope', 'unknown sort key'],
               ['?sort=tags', 'sort by multiselect'], ['?filter[pages]=abc', 'a number filter not a number'],
               ['?filter[done]=yes', 'a boolean filter not a boolean'], ['?filter[html]=x', 'filter by richtext'],
               ['?filter[]=x', 'an empty filter key']) {
        check_err(req(GET => entries('books') . $t->[0], $K), 400, 'invalid_field_value', $t->[1]);
    }
    check_err(req(GET => entries('books') . '?filter[genre]=sf&filter[genre]=crime', $K), 400, 'invalid_request',
              'a repeated filter');
    is req(GET => "/v1/workspaces/$wid/custom/books/entries?filter[genre]=crime", $owner->{token})->{json}
        {pagination}{total}, 1, 'the studio filters too';

    # 10,000 entries: the plans use the indexes
    my $mid = $m->{id};
    psql("INSERT INTO custom_entries (workspace_id, module_id, data)
          SELECT '$wid', '$mid', jsonb_build_object('title', 't' || i, 'pages', i,
                 'genre', CASE WHEN i % 100 = 0 THEN 'crime' ELSE 'sf' END)
            FROM generate_series(1, 10000) i");
    psql('ANALYZE custom_entries; ANALYZE custom_entry_sort');
    is one("SELECT count(*) FROM custom_entry_sort WHERE module_id = '$mid' AND key = 'pages'"), 10004,
       'a sort row per entry';
    is_deeply $list->('?filter[genre]=crime&sort=-pages&limit=3'), [200, [qw(t10000 t9900 t9800)], 101],
        'a filtered, sorted page of 10,000';
    is_deeply $list->('?sort=pages&limit=2'), [200, [qw(t1 t2)], 10004], 'sorted page of 10,000';

    # the plans the module's connections use: generic ones (planned once per connection,
    # parameters unknown), as src/ngx_http_cms_pg_conf.c sets plan_cache_mode
    my $explain = sub {
        my ($f, $k, $dir) = @_;
        my $sql = $k ? "SELECT e.id FROM custom_entry_sort s JOIN custom_entries e ON e.id = s.entry_id
                         WHERE s.module_id = \$1 AND s.key = '$k'"
                         . ($f ? " AND e.data @> \$2" : '') . " ORDER BY s.num$dir, s.txt$dir, s.entry_id$dir LIMIT \$3"
                     : "SELECT e.id FROM custom_entries e WHERE e.module_id = \$1 AND e.data @> \$2
                        ORDER BY e.created_at DESC, e.id DESC LIMIT \$3";
        generic_plan($sql, "'$mid', '" . ($f // '{}') . "', 20");
    };
    my $plan = $explain->('{"genre":"crime"}');
    unlike $plan, qr/Seq Scan/, 'filter: no sequential scan' or diag $plan;
    # generic: the module's entries in list order (its index), the filter checked on the
    # way, the page stopping at its limit; a constant's plan would take the GIN index
    like $plan, qr/Index Scan using custom_entries_list_idx.*\n.*Index Cond: \(module_id = \$1\)/,
         'filter: the module read from its list index, in order' or diag $plan;
    $plan = $explain->(undef, 'pages', ' DESC');
    unlike $plan, qr/Seq Scan|Sort Key/, 'sort: no sequential scan, no sort' or diag $plan;
    like $plan, qr/custom_entry_sort_idx/, 'sort: read in the order of its index' or diag $plan;
    $plan = generic_plan("SELECT count(*) FROM custom_entries e WHERE e.module_id = \$1 AND e.data @> \$2"
                         . " AND \$3::int IS NOT NULL", "'$mid', '{\"genre\":\"crime\"}', 20");
    unlike $plan, qr/Seq Scan/, 'filtered total: no sequential scan' or diag $plan;

    # one entry written makes its own sort rows, not the module's, under the generic
    # plans the module's connections use (sql/0048: one statement for both read every
    # entry of the module); what this transaction read, from its own statistics
    my ($read) = rows_read(['custom_entries', 'custom_entry_sort'],
         "INSERT INTO custom_entries (workspace_id, module_id, data)
          VALUES ('$wid', '$mid', '{\"title\": \"g1\", \"pages\": 1}') RETURNING id AS g1 \\gset
          INSERT INTO custom_entries (workspace_id, module_id, data)
          SELECT '$wid', '$mid', jsonb_build_object('title', 'g' || i, 'pages', i)
            FROM generate_series(2, 3) i;
          UPDATE custom_entries SET data = data || '{\"pages\": 7}' WHERE id = :'g1'");
    cmp_ok $read->{custom_entries} // 1e9, '<', 100,
           'an entry written reads its own row, not the module\'s 10,000 (generic plans)';
    cmp_ok $read->{custom_entry_sort} // 1e9, '<', 100, '... and its own sort rows';
    is one("SELECT string_agg(s.num::text, ',' ORDER BY e.data->>'title') FROM custom_entry_sort s
              JOIN custom_entries e ON e.id = s.entry_id
             WHERE s.module_id = '$mid' AND s.key = 'pages' AND e.data->>'title' LIKE 'g_'"),
       '7,2,3', '... which hold the values written';

    # deleting the module takes its entries
    is req(DELETE => "$MODS/$mid", $owner->{token})->{status}, 204, 'delete a module: 204';
    is one("SELECT count(*) FROM custom_entries WHERE module_id = '$mid'"), 0, 'its entries went with it';
    is one("SELECT count(*) FROM custom_entry_sort WHERE module_id = '$mid'"), 0, 'and their sort rows';
    check_err(req(GET => entries('books'), $K), 404, 'not_found', 'the slug is gone');
    check_err(req(DELETE => "$MODS/$mid", $owner->{token}), 404, 'not_found', 'delete it again');
}

# delete an entry
is req(DELETE => entries('products', $d->{id}), $K)->{status}, 204, 'delete an entry: 204';
check_err(req(GET => entries('products', $d->{id}), $K), 404, 'not_found', 'deleted entry');
check_err(req(DELETE => entries('products', $d->{id}), $K), 404, 'not_found', 'delete again');

done_testing();
