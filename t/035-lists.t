# The list engine on the identity lists: GET /v1/workspaces/{id}/api-keys and
# GET /v1/workspaces answer {<list>: [...], pagination: {total, limit, offset}} written
# from columns: every page in the stored order, limit and offset honoured, out-of-range
# values falling back (limit 50, offset 0) as docs/api-notes.md says, a page past the end empty
# with the total, rows bounded at 100 a page, other workspaces' and users' rows never
# counted; a record reads the same in the list, in the create answer and (keys) from
# GET /v1/api/key; every body is compact JSON.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp check_err signup api_key workspace one $UUID $TS);
use JSON::PP ();

start_nginx();

my $owner = signup();
my $ot = $owner->{token};
my $wid = workspace($ot, 'Lists');
my $stranger = signup();
my $swid = workspace($stranger->{token}, 'Elsewhere');
api_key($stranger->{token}, $swid, 'not ours', 'articles:read');

my %created;
for my $i (1 .. 7) {
    my $j = api_key($ot, $wid, "key $i", 'articles:read', ($i % 2 ? 'categories:write' : ()));
    $created{$j->{api_key}{id}} = $j;
}

sub compact_ok {
    my ($r, $name) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    unlike $r->{body} // '', qr/" : |":\s|,\s"|\{\s|\[\s/, "$name: compact JSON";
}

sub ids { [map { $_->{id} } @{$_[0] // []}] }

# --- API keys ---------------------------------------------------------------------------

my $KEYS = "/v1/workspaces/$wid/api-keys";
my @order = map { $_->[0] } @{psql("SELECT id FROM api_keys WHERE workspace_id = '$wid'"
                                   . " ORDER BY created_at DESC, id")};
is scalar(@order), 7, 'seven keys stored';

{
    my $r = req(GET => $KEYS, $ot);
    is $r->{status}, 200, 'keys: 200' or diag diag_resp($r);
    is_deeply [sort keys %{$r->{json}}], [qw(api_keys pagination)], 'keys: {api_keys, pagination}';
    is_deeply $r->{json}{pagination}, { total => 7, limit => 50, offset => 0 }, 'keys: total 7, limit 50, offset 0';
    is_deeply ids($r->{json}{api_keys}), \@order, 'keys: newest first, as stored';
    compact_ok($r, 'keys');
    my $it = $r->{json}{api_keys}[0];
    is_deeply [sort keys %$it],
        [sort qw(id workspace_id created_by name key_prefix scopes created_at revoked_at)], 'key: its fields, no secret';
    is_deeply $it, $created{$it->{id}}{api_key}, 'key: the list item equals the create answer\'s record';
    is ref $it->{scopes}, 'ARRAY', 'key: scopes an array';
    like $it->{created_at}, $TS, 'key: created_at';
    ok !defined $it->{revoked_at}, 'key: revoked_at null';
    is $it->{created_by}, $owner->{user}{id}, 'key: created_by the owner';
    unlike $r->{body}, qr/svc_live_[0-9A-Za-z]{20}/, 'keys: no secret in the list';
    my $self = req(GET => '/v1/api/key', $created{$it->{id}}{secret});
    is $self->{status}, 200, 'GET /v1/api/key: 200' or diag diag_resp($self);
    is_deeply $self->{json}, { api_key => $it }, 'GET /v1/api/key: the same record';
    compact_ok($self, 'GET /v1/api/key');
}
{
    my $c = req(POST => $KEYS, $ot, { name => 'shape', scopes => ['articles:read'] });
    is $c->{status}, 201, 'mint: 201' or diag diag_resp($c);
    is_deeply [sort keys %{$c->{json}}], [qw(api_key secret)], 'mint: {api_key, secret}';
    compact_ok($c, 'mint');
    is req(DELETE => "$KEYS/$c->{json}{api_key}{id}", $ot)->{status}, 204, 'revoke it';
    my ($it) = grep { $_->{id} eq $c->{json}{api_key}{id} } @{req(GET => $KEYS, $ot)->{json}{api_keys} // []};
    like $it->{revoked_at} // '', $TS, 'a revoked key is listed with revoked_at';
    psql("DELETE FROM api_keys WHERE id = '$c->{json}{api_key}{id}'");
}
{
    my $r = req(GET => "$KEYS?limit=3", $ot);
    is_deeply ids($r->{json}{api_keys}), [@order[0 .. 2]], 'limit=3: the first three';
    is_deeply $r->{json}{pagination}, { total => 7, limit => 3, offset => 0 }, 'limit=3: pagination';
    $r = req(GET => "$KEYS?limit=3&offset=3", $ot);
    is_deeply ids($r->{json}{api_keys}), [@order[3 .. 5]], 'limit=3&offset=3: the next three';
    is_deeply $r->{json}{pagination}, { total => 7, limit => 3, offset => 3 }, 'offset=3: pagination';
    $r = req(GET => "$KEYS?limit=3&offset=6", $ot);
    is_deeply ids($r->{json}{api_keys}), [$order[6]], 'offset=6: the last one';
    for my $off (7, 8, 1000, 100000) {
        $r = req(GET => "$KEYS?offset=$off", $ot);
        is $r->{status}, 200, "offset=$off: 200" or diag diag_resp($r);
        is_deeply $r->{json}, { api_keys => [], pagination => { total => 7, limit => 50, offset => $off } },
                  "offset=$off: past the end, empty with the total";
    }
    check_err(req(GET => "$KEYS?offset=100001", $ot), 400, 'invalid_field_value',
              'offset beyond the cap (100,000)');
    $r = req(GET => "$KEYS?limit=100", $ot);
    is $r->{json}{pagination}{limit}, 100, 'limit=100: taken';
    my (@seen, $pages);
    for (my $off = 0; $off < 20; $off += 2) {
        $r = req(GET => "$KEYS?limit=2&offset=$off", $ot);
        last unless @{$r->{json}{api_keys} // []};
        $pages++;
        push @seen, @{ids($r->{json}{api_keys})};
    }
    is_deeply \@seen, \@order, "pages of 2: every key once, in order ($pages pages)";
    is $pages, 4, 'pages of 2: four pages for seven keys';
}
for my $v ('0', '101', '-1', 'abc', '', '1e2', '99999999999999999999') {
    my $r = req(GET => "$KEYS?limit=$v", $ot);
    is $r->{status}, 200, "keys limit=$v: 200" or diag diag_resp($r);
    is_deeply $r->{json}{pagination}, { total => 7, limit => 50, offset => 0 }, "keys limit=$v: falls back to 50";
    is scalar(@{$r->{json}{api_keys} // []}), 7, "keys limit=$v: every key";
}
for my $v ('-1', 'abc', '', '99999999999999999999') {
    my $r = req(GET => "$KEYS?limit=2&offset=$v", $ot);
    is_deeply $r->{json}{pagination}, { total => 7, limit => 2, offset => 0 }, "keys offset=$v: falls back to 0";
    is_deeply ids($r->{json}{api_keys}), [@order[0, 1]], "keys offset=$v: the first page";
}
check_err(req(GET => "$KEYS?limit=2&limit=3", $ot), 400, 'invalid_request', 'keys: limit given twice');
check_err(req(GET => "$KEYS?offset=%ff", $ot), 400, 'invalid_request', 'keys: offset not UTF-8');
{
    # bounded: never more than 100 rows a page, whatever the workspace holds
    psql("INSERT INTO api_keys (workspace_id, created_by, name, key_prefix, secret_hash, scopes)"
         . " SELECT '$wid', '$owner->{user}{id}', 'bulk ' || i, 'svc_live_b' || i,"
         . " decode(md5(i::text) || md5('x' || i), 'hex'), '{articles:read}' FROM generate_series(1, 150) i");
    my $r = req(GET => "$KEYS?limit=1000", $ot);
    is scalar(@{$r->{json}{api_keys} // []}), 50, '157 keys, limit=1000: falls back to a page of 50';
    is $r->{json}{pagination}{total}, 157, 'total 157';
    $r = req(GET => "$KEYS?limit=100&offset=100", $ot);
    is scalar(@{$r->{json}{api_keys} // []}), 57, 'limit=100&offset=100: the last 57';
    is req(GET => "/v1/workspaces/$swid/api-keys", $stranger->{token})->{json}{pagination}{total}, 1,
       'another workspace counts only its own key';
}

# --- workspaces -------------------------------------------------------------------------

my $user = signup();
my $ut = $user->{token};
my %made;
for my $i (1 .. 4) {
    my $r = req(POST => '/v1/workspaces', $ut, { name => "W$i" });
    die diag_resp($r) unless $r->{status} == 201;
    $made{$r->{json}{workspace}{id}} = $r->{json}{workspace};
    compact_ok($r, "create W$i") if $i == 1;
}
psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$user->{user}{id}', 'editor')");
my @worder = map { $_->[0] } @{psql("SELECT w.id FROM members m JOIN workspaces w ON w.id = m.workspace_id"
                                    . " WHERE m.user_id = '$user->{user}{id}' ORDER BY w.created_at, w.id")};
is scalar(@worder), 5, 'five memberships';
{
    my $r = req(GET => '/v1/workspaces', $ut);
    is $r->{status}, 200, 'workspaces: 200' or diag diag_resp($r);
    is_deeply [sort keys %{$r->{json}}], [qw(pagination workspaces)], 'workspaces: {workspaces, pagination}';
    is_deeply $r->{json}{pagination}, { total => 5, limit => 50, offset => 0 }, 'workspaces: total 5';
    is_deeply ids($r->{json}{workspaces}), \@worder, 'workspaces: oldest first, as stored';
    compact_ok($r, 'workspaces');
    my %byid = map { $_->{id} => $_ } @{$r->{json}{workspaces}};
    is $byid{$wid}{role}, 'editor', 'the joined workspace: role editor';
    my $same = grep { JSON::PP->new->canonical->encode($byid{$_}) eq JSON::PP->new->canonical->encode($made{$_}) }
               keys %made;
    is $same, 4, 'each created workspace reads the same in the list as in its create answer';
    ok JSON::PP::is_bool($byid{$wid}{suspended}), 'suspended a boolean';
    like $byid{$wid}{storage_quota_bytes}, qr/^\d+$/, 'storage_quota_bytes a number';
    my $g = req(GET => "/v1/workspaces/$wid", $ut);
    is_deeply $g->{json}, { workspace => $byid{$wid} }, 'GET /v1/workspaces/{id}: the same record';
    compact_ok($g, 'GET /v1/workspaces/{id}');
}
{
    my $r = req(GET => '/v1/workspaces?limit=2', $ut);
    is_deeply ids($r->{json}{workspaces}), [@worder[0, 1]], 'workspaces limit=2: the first two';
    is_deeply $r->{json}{pagination}, { total => 5, limit => 2, offset => 0 }, 'limit=2: pagination';
    $r = req(GET => '/v1/workspaces?limit=2&offset=4', $ut);
    is_deeply ids($r->{json}{workspaces}), [$worder[4]], 'limit=2&offset=4: the last one';
    is_deeply $r->{json}{pagination}, { total => 5, limit => 2, offset => 4 }, 'offset=4: pagination';
    $r = req(GET => '/v1/workspaces?offset=5', $ut);
    is_deeply $r->{json}, { workspaces => [], pagination => { total => 5, limit => 50, offset => 5 } },
              'offset=5: past the end, empty with the total';
    for my $v ('0', '101', 'abc', '') {
        $r = req(GET => "/v1/workspaces?limit=$v", $ut);
        is $r->{json}{pagination}{limit}, 50, "workspaces limit=$v: falls back to 50";
    }
    check_err(req(GET => "/v1/workspaces?offset=100001", $ut), 400, 'invalid_field_value',
              'workspaces offset=100001: beyond the cap');
    for my $v ('-3', 'x') {
        $r = req(GET => "/v1/workspaces?limit=1&offset=$v", $ut);
        is_deeply [ids($r->{json}{workspaces}), $r->{json}{pagination}{offset}], [[$worder[0]], 0],
                  "workspaces offset=$v: falls back to 0";
    }
    check_err(req(GET => '/v1/workspaces?offset=1&offset=2', $ut), 400, 'invalid_request',
              'workspaces: offset given twice');
    is req(GET => '/v1/workspaces', $stranger->{token})->{json}{pagination}{total}, 1,
       'another user counts only their own workspace';
    my $nobody = signup();
    is_deeply req(GET => '/v1/workspaces', $nobody->{token})->{json},
              { workspaces => [], pagination => { total => 0, limit => 50, offset => 0 } },
              'a user with no workspace: empty, total 0';
}

done_testing();
