# Article locks and SEO records (issue 15, studio):
# POST/DELETE /v1/workspaces/{id}/articles/{articleId}/lock and GET/PUT .../seo.
#
# Locks (Redis, one Lua script per operation): a free lock is taken, the holder's POST
# refreshes it (a new TTL, acquired_at kept), anyone else's POST answers 200 with the
# holder (name, email) and mine false and changes nothing; 20 concurrent POSTs of two
# members split over two nginx hosts on the same Redis agree on one holder; host B (with
# cms_lock_ttl 1s) sees host A's holder and the other way round; a lock left alone
# expires after its TTL (waited for with a bound) and the next member gets it; DELETE by
# the holder releases, by another member is a no-op 204, by an owner or an admin releases
# anyone's; a uuid in capitals is the same lock; Redis down is 503 and nothing is
# pretended. Roles: authors and up lock the articles they may edit (an author only their
# own), viewers are refused, as are outsiders and no session.
#
# SEO records: an article never analysed reads as an empty record; a PUT merges (a field
# left out kept, null clears it); the validation matrix (types, ranges, the 16 KiB bound
# of data, score above max_score once merged, unknown fields) refuses with nothing
# written; roles as for the article itself (viewers read, an author writes their own).
# Both: malformed JSON, unknown and malformed ids, another workspace's article, a
# deleted article.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(req req_spec diag_resp check_err one signup signup_defaults workspace mk
                     redis_cli $UUID $TS);
use Cms::Hosts qw(:all);
use JSON::PP ();

signup_defaults(email_prefix => 'locks', name => sub { "Member $_[0]" });

set_conf_defaults(workers => 2, http_config => 'cms_lock_ttl 30s;');
start_nginx();
start_host_b(edit => sub { my $c = shift; $c =~ s/cms_lock_ttl 30s;/cms_lock_ttl 1s;/ or die "no ttl in\n$c"; $c });
my $A = port();
my $B = host_b_port();

my $owner = signup();
my $wid = workspace($owner->{token}, 'Locks');
my %m = (owner => $owner);
for my $role (qw(admin editor author viewer)) {
    $m{$role} = signup();
    psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$m{$role}{user}{id}', '$role')");
}
$m{author2} = signup();
psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$m{author2}{user}{id}', 'author')");
my $outsider = signup();
my $other = signup();
my $wid2 = workspace($other->{token}, 'Elsewhere');

my $n = 0;
sub article { mk($_[0]{token}, { title => 'Article ' . ++$n, %{$_[1] // {}} }, "/v1/workspaces/$wid/articles")->{id} }
sub lock_path { "/v1/workspaces/" . ($_[1] // $wid) . "/articles/$_[0]/lock" }
sub seo_path { "/v1/workspaces/" . ($_[1] // $wid) . "/articles/$_[0]/seo" }
sub lkey { 'cms:lock:{' . ($_[1] // $wid) . "}:$_[0]" }
sub holder { my $v = redis_cli('HGET', lkey(@_), 'user'); chomp $v; $v }
sub pttl { my $v = redis_cli('PTTL', lkey(@_)); chomp $v; $v }
sub lock_at { my ($port, $who, $art) = @_; at($port, POST => lock_path($art), $m{$who}{token}) }
sub ms {    # an RFC 3339 time with milliseconds, as ms since the epoch
    my ($y, $mo, $d, $h, $mi, $s, $f) = $_[0] =~ /^(\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)\.(\d{3})Z$/ or return undef;
    require Time::Local;
    return Time::Local::timegm($s, $mi, $h, $d, $mo - 1, $y) * 1000 + $f;
}

# --- take, contend, refresh ----------------------------------------------------------------
my $art = article($m{editor});
my $r = lock_at($A, editor => $art);
is $r->{status}, 200, 'the editor takes a free lock: 200' or diag diag_resp($r);
my $lock = $r->{json}{lock};
is_deeply [sort keys %$lock],
    [qw(acquired_at article_id expires_at mine refreshed_at user_email user_id user_name)], 'the lock\'s fields';
is $lock->{article_id}, $art, 'article_id';
is $lock->{user_id}, $m{editor}{user}{id}, 'user_id: the holder';
is $lock->{user_email}, $m{editor}{email}, 'user_email: the holder\'s';
is $lock->{user_name}, $m{editor}{user}{name}, 'user_name: the holder\'s';
ok $lock->{mine} && JSON::PP::is_bool($lock->{mine}), 'mine: true';
like $lock->{$_}, $TS, $_ for qw(acquired_at refreshed_at expires_at);
is $lock->{refreshed_at}, $lock->{acquired_at}, 'a new lock: refreshed_at is acquired_at';
is ms($lock->{expires_at}) - ms($lock->{refreshed_at}), 30000, 'expires_at: refreshed_at + cms_lock_ttl (30s)';
is holder($art), $m{editor}{user}{id}, 'Redis holds the lock';

my $o = lock_at($A, admin => $art);
is $o->{status}, 200, 'another member\'s POST: 200 (not an error status)' or diag diag_resp($o);
is $o->{json}{lock}{user_id}, $m{editor}{user}{id}, 'and names the holder';
is $o->{json}{lock}{user_email}, $m{editor}{email}, 'with the holder\'s email';
ok !$o->{json}{lock}{mine} && JSON::PP::is_bool($o->{json}{lock}{mine}), 'mine: false';
is $o->{json}{lock}{acquired_at}, $lock->{acquired_at}, 'the same lock';

redis_cli('PEXPIRE', lkey($art), 5000);
$o = lock_at($A, admin => $art);
ok pttl($art) <= 5000, 'another member\'s POST does not refresh the lock';
my $f = lock_at($A, editor => $art);
is $f->{status}, 200, 'the holder refreshes: 200';
ok $f->{json}{lock}{mine}, 'mine: true';
is $f->{json}{lock}{acquired_at}, $lock->{acquired_at}, 'a refresh keeps acquired_at';
ok $f->{json}{lock}{refreshed_at} ge $lock->{refreshed_at}, 'and moves refreshed_at';
ok pttl($art) > 20000, 'the refresh gave the lock a whole TTL again (' . pttl($art) . ' ms)';

my $U = lock_at($A, admin => uc $art);
is $U->{json}{lock}{user_id}, $m{editor}{user}{id}, 'the id in capitals: the same lock';
is $U->{json}{lock}{article_id}, $art, 'article_id in lowercase';
is holder(uc $art) // '', '', 'no second key in capitals';

# --- release -------------------------------------------------------------------------------
is at($A, DELETE => lock_path($art), $m{author}{token})->{status}, 204, 'an author\'s DELETE of another\'s lock: 204';
is holder($art), $m{editor}{user}{id}, 'a no-op: the lock stays';
is at($A, DELETE => lock_path($art), $m{editor}{token})->{status}, 204, 'the holder\'s DELETE: 204';
is holder($art), '', 'released';
is at($A, DELETE => lock_path($art), $m{editor}{token})->{status}, 204, 'DELETE with no lock: 204';
for my $who (qw(owner admin)) {
    lock_at($A, editor => $art);
    is holder($art), $m{editor}{user}{id}, "locked again by the editor (for the $who)";
    is at($B, DELETE => lock_path($art), $m{$who}{token})->{status}, 204, "the ${who}'s DELETE: 204";
    is holder($art), '', "the $who force-released it (from host B)";
}

# --- two sessions at once, over two hosts -------------------------------------------------
{
    my $a2 = article($m{owner});
    my @r = on_hosts(map { [$_ % 2 ? $A : $B, req_spec(POST => lock_path($a2), $m{$_ % 4 < 2 ? 'editor' : 'admin'}{token})] }
                     0 .. 19);
    is scalar(grep { $_->{status} == 200 } @r), 20, '20 concurrent POSTs of two members over two hosts: all 200';
    my %holders = map { ($_->{json}{lock}{user_id} // 'none') => 1 } @r;
    is scalar(keys %holders), 1, 'all name one holder';
    my ($h) = keys %holders;
    is holder($a2), $h, 'the one Redis holds';
    my %acq = map { ($_->{json}{lock}{acquired_at} // '') => 1 } @r;
    is scalar(keys %acq), 1, 'one acquired_at';
    my @wrong = grep { my $who = $_ % 4 < 2 ? 'editor' : 'admin';
                       ($r[$_]{json}{lock}{mine} ? 1 : 0) != ($m{$who}{user}{id} eq $h ? 1 : 0) } 0 .. 19;
    is scalar(@wrong), 0, 'mine is true exactly for the holder\'s requests';
}

# host A's holder on host B, host B's on host A
{
    my $a3 = article($m{owner});
    lock_at($A, editor => $a3);
    my $b = lock_at($B, admin => $a3);
    is $b->{json}{lock}{user_id}, $m{editor}{user}{id}, 'host B sees host A\'s holder';
    ok !$b->{json}{lock}{mine}, 'mine: false on host B';
    my $bh = lock_at($B, editor => $a3);
    ok $bh->{json}{lock}{mine}, 'the holder refreshes on host B';
    is $bh->{json}{lock}{acquired_at}, lock_at($A, admin => $a3)->{json}{lock}{acquired_at},
        'host A sees the same lock';
    at($A, DELETE => lock_path($a3), $m{editor}{token});
}

# --- the TTL: a lock left alone expires ----------------------------------------------------
{
    my $a4 = article($m{author});
    my $t = lock_at($B, author => $a4)->{json}{lock};
    ok $t->{mine}, 'the author locks their own article on host B (cms_lock_ttl 1s)';
    is ms($t->{expires_at}) - ms($t->{refreshed_at}), 1000, 'expires_at: 1 s after refreshed_at';
    ok pttl($a4) > 0 && pttl($a4) <= 1000, 'Redis expires it within 1 s';
    my $e = lock_at($A, editor => $a4)->{json}{lock};
    # on a slow machine the lock may already have expired: then the editor's is newer
    ok((!$e->{mine} && $e->{user_id} eq $m{author}{user}{id})
       || ($e->{mine} && $e->{acquired_at} ge $t->{expires_at}),
       'while it lives the editor is told the author holds it');
    my $got = wait_until(10, sub { my $x = lock_at($A, editor => $a4)->{json}{lock}; $x->{mine} ? $x : undef });
    ok $got, 'left alone, it expires and the editor gets it (waited at most 10 s)';
    ok $got && $got->{acquired_at} ge $t->{expires_at}, 'not before it expired';
    is holder($a4), $m{editor}{user}{id}, 'Redis holds the editor\'s lock';
}

# --- roles, credentials, ids ----------------------------------------------------------------
{
    my $mine = article($m{author});
    my $theirs = article($m{author2});
    is lock_at($A, author => $mine)->{status}, 200, 'an author locks their own article';
    check_err(lock_at($A, author => $theirs), 403, 'forbidden', 'an author locks another\'s article');
    is holder($theirs), '', 'and nothing is locked';
    check_err(lock_at($A, viewer => $mine), 403, 'forbidden', 'a viewer locks');
    check_err(at($A, DELETE => lock_path($mine), $m{viewer}{token}), 403, 'forbidden', 'a viewer releases');
    is holder($mine), $m{author}{user}{id}, 'the refused release changed nothing';
    is lock_at($A, editor => $theirs)->{status}, 200, 'an editor locks any article';
    for my $mt (qw(POST DELETE)) {
        check_err(at($A, $mt => lock_path($mine), undef), 401, 'missing_token', "$mt lock, no session");
        check_err(at($A, $mt => lock_path($mine), 'not.a.jwt'), 401, 'invalid_token', "$mt lock, a bad token");
        check_err(at($A, $mt => lock_path($mine), $outsider->{token}), 403, 'not_workspace_member',
                  "$mt lock, an outsider");
        check_err(at($A, $mt => lock_path($mine), $m{editor}{token}, '{"x":'), 400, 'invalid_request',
                  "$mt lock, malformed JSON");
        check_err(at($A, $mt => lock_path($mine), $m{editor}{token}, { force => JSON::PP::true }), 400,
                  'invalid_request', "$mt lock, a body it does not take");
        check_err(at($A, $mt => lock_path($mine), $m{editor}{token}, '[1]'), 400, 'invalid_request',
                  "$mt lock, a body of the wrong type");
        check_err(at($A, $mt => lock_path('00000000-0000-4000-8000-000000000000'), $m{editor}{token}), 404,
                  'not_found', "$mt lock, an unknown article");
        check_err(at($A, $mt => lock_path('not-a-uuid'), $m{editor}{token}), 404, 'not_found',
                  "$mt lock, a malformed id");
    }
    is holder($mine), $m{author}{user}{id}, 'the refused requests changed nothing';

    my $far = mk($other->{token}, { title => 'Theirs' }, "/v1/workspaces/$wid2/articles")->{id};
    check_err(lock_at($A, owner => $far), 404, 'not_found', 'another workspace\'s article, through this workspace');
    check_err(at($A, DELETE => lock_path($far), $owner->{token}), 404, 'not_found',
              'release another workspace\'s article');
    is holder($far, $wid) . holder($far, $wid2), '', 'no lock made';
    check_err(at($A, POST => lock_path($far, $wid2), $owner->{token}), 403, 'not_workspace_member',
              'another workspace\'s article, through its workspace');

    my $gone = article($m{owner});
    is at($A, DELETE => "/v1/workspaces/$wid/articles/$gone", $owner->{token})->{status}, 204, 'an article deleted';
    check_err(lock_at($A, owner => $gone), 404, 'not_found', 'lock a deleted article');
    check_err(at($A, PATCH => lock_path($mine), $owner->{token}, {}), 405, 'method_not_allowed', 'PATCH lock');
}

# --- Redis down: 503, nothing pretended ----------------------------------------------------
{
    my $a5 = article($m{owner});
    redis_stop();
    my $d = lock_at($A, editor => $a5);
    redis_start();
    check_err($d, 503, 'service_unavailable', 'Redis down: lock');
    ok wait_until(10, sub { lock_at($A, editor => $a5)->{status} == 200 }), 'Redis back: locks again';
    allow_error_log(qr/redis|Connection refused/i);
}

# --- Redis lost its scripts (SCRIPT FLUSH): each is sent whole once, and works ---------------
{
    my $a6 = article($m{owner});
    like redis_cli('SCRIPT', 'FLUSH'), qr/OK/, 'SCRIPT FLUSH';
    my $l = lock_at($A, editor => $a6);
    is $l->{status}, 200, 'after SCRIPT FLUSH: a lock is taken' or diag diag_resp($l);
    is holder($a6), $m{editor}{user}{id}, 'and Redis holds it';
    like redis_cli('SCRIPT', 'FLUSH'), qr/OK/, 'SCRIPT FLUSH again';
    is at($A, DELETE => lock_path($a6), $m{editor}{token})->{status}, 204, 'after SCRIPT FLUSH: released';
    is holder($a6), '', 'and Redis holds it no more';
}

# --- SEO records ------------------------------------------------------------------------------
my $sa = article($m{author});
my $g = req(GET => seo_path($sa), $m{viewer}{token});
is $g->{status}, 200, 'a viewer reads the SEO record of an article never analysed' or diag diag_resp($g);
is_deeply $g->{json}, { seo => { article_id => $sa, score => undef, max_score => undef, grade => undef,
                                 focus_keyword => undef, data => {}, updated_at => undef } },
    'an empty record';

my $full = { score => 72, max_score => 100, grade => 'B', focus_keyword => 'nginx modules',
             data => { checks => [{ id => 'title-length', ok => JSON::PP::true }], words => 812 } };
my $p = req(PUT => seo_path($sa), $m{author}{token}, $full);
is $p->{status}, 200, 'the author PUTs the record of their article' or diag diag_resp($p);
my $seo = $p->{json}{seo};
is $seo->{$_}, $full->{$_}, $_ for qw(score max_score grade focus_keyword);
is_deeply $seo->{data}, $full->{data}, 'data';
like $seo->{updated_at}, $TS, 'updated_at';
is_deeply req(GET => seo_path($sa), $m{viewer}{token})->{json}{seo}, $seo, 'read back the same';
is one("SELECT workspace_id FROM article_seo WHERE article_id = '$sa'"), $wid, 'stored in the workspace';

$p = req(PUT => seo_path($sa), $m{author}{token}, { grade => 'A', score => 90 });
is $p->{status}, 200, 'a partial PUT';
is $p->{json}{seo}{grade}, 'A', 'grade changed';
is $p->{json}{seo}{focus_keyword}, 'nginx modules', 'a field left out is kept';
is_deeply $p->{json}{seo}{data}, $full->{data}, 'data left out is kept';
$p = req(PUT => seo_path($sa), $m{author}{token}, { focus_keyword => undef, data => undef, updated_at => 'y',
                                                    article_id => 'z' });
is $p->{status}, 200, 'null clears; read-only names are ignored' or diag diag_resp($p);
is $p->{json}{seo}{focus_keyword}, undef, 'focus_keyword cleared';
is_deeply $p->{json}{seo}{data}, {}, 'data null is {}';
is $p->{json}{seo}{score}, 90, 'score kept';
is req(PUT => seo_path($sa), $m{author}{token}, {})->{status}, 200, 'an empty PUT: 200';

# the validation matrix: each refused, nothing written
my $before = one("SELECT row_to_json(s)::text FROM article_seo s WHERE article_id = '$sa'");
my @bad = (
    [{ score => '72' }, 'score as a string'], [{ score => 7.5 }, 'score as a real'], [{ score => -1 }, 'score -1'],
    [{ score => 1000001 }, 'score over 1,000,000'], [{ score => JSON::PP::true }, 'score as a boolean'],
    [{ score => [1] }, 'score as an array'], [{ max_score => 0 }, 'max_score 0'], [{ max_score => '100' }, 'max_score as a string'],
    [{ max_score => 1e12 }, 'max_score over the range'], [{ grade => 5 }, 'grade as a number'], [{ grade => '' }, 'an empty grade'],
    [{ grade => 'x' x 33 }, 'grade of 33 characters'], [{ focus_keyword => 'k' x 201 }, 'focus_keyword of 201 characters'],
    [{ focus_keyword => 5 }, 'focus_keyword as a number'], [{ focus_keyword => { a => 1 } }, 'focus_keyword as an object'],
    [{ data => [] }, 'data as an array'], [{ data => 'x' }, 'data as a string'], [{ data => 5 }, 'data as a number'],
    [{ data => { k => 'x' x 16377 } }, 'data over 16 KiB'], [{ score => 101, max_score => 100 }, 'score above max_score'],
    [{ score => 91, max_score => 90 }, 'score above max_score, by one'], [{ max_score => 10 }, 'max_score below the stored score'],
    [{ score => 101 }, 'score above the stored max_score'],
);
for my $c (@bad) {
    check_err(req(PUT => seo_path($sa), $m{author}{token}, $c->[0]), 400, 'invalid_field_value', "PUT seo, $c->[1]");
}
check_err(req(PUT => seo_path($sa), $m{author}{token}, { score => 1, colour => 'red' }), 400, 'invalid_request',
          'PUT seo, an unknown field');
check_err(req(PUT => seo_path($sa), $m{author}{token}, '{"score":'), 400, 'invalid_request', 'PUT seo, malformed JSON');
check_err(req(PUT => seo_path($sa), $m{author}{token}, '{"grade":"a\u0000b"}'), 400, 'invalid_request',
          'PUT seo, a NUL in a string');
check_err(req(PUT => seo_path($sa), $m{author}{token}, '[1]'), 400, 'invalid_request', 'PUT seo, an array body');
check_err(req(PUT => seo_path($sa), $m{author}{token}, '"x"'), 400, 'invalid_request', 'PUT seo, a string body');
is one("SELECT row_to_json(s)::text FROM article_seo s WHERE article_id = '$sa'"), $before,
    'the refused PUTs changed nothing';

my $edge = req(PUT => seo_path($sa), $m{author}{token},
               { score => 1000000, max_score => 1000000, data => { k => 'x' x 16376 } });
is $edge->{status}, 200, 'the edges: score and max_score 1,000,000, data of exactly 16 KiB' or diag diag_resp($edge);
is length($edge->{json}{seo}{data}{k} // ''), 16376, 'the data whole';
is req(PUT => seo_path($sa), $m{author}{token}, { score => 0, max_score => 1, grade => 'x' x 32 })->{status}, 200,
    'score 0, max_score 1, a grade of 32 characters';

# roles, credentials, ids
{
    my $theirs = article($m{author2});
    check_err(req(PUT => seo_path($theirs), $m{author}{token}, { score => 1 }), 403, 'forbidden',
              'an author PUTs another\'s article');
    check_err(req(PUT => seo_path($sa), $m{viewer}{token}, { score => 1 }), 403, 'forbidden', 'a viewer PUTs');
    for my $mt (qw(GET PUT)) {
        my @b = $mt eq 'PUT' ? ({ score => 1 }) : ();
        check_err(req($mt => seo_path($sa), undef, @b), 401, 'missing_token', "$mt seo, no session");
        check_err(req($mt => seo_path($sa), 'not.a.jwt', @b), 401, 'invalid_token', "$mt seo, a bad token");
        check_err(req($mt => seo_path($sa), $outsider->{token}, @b), 403, 'not_workspace_member', "$mt seo, an outsider");
        check_err(req($mt => seo_path('00000000-0000-4000-8000-000000000000'), $owner->{token}, @b), 404, 'not_found',
                  "$mt seo, an unknown article");
        check_err(req($mt => seo_path('nope'), $owner->{token}, @b), 404, 'not_found', "$mt seo, a malformed id");
    }
    my $far = mk($other->{token}, { title => 'Far' }, "/v1/workspaces/$wid2/articles")->{id};
    req(PUT => seo_path($far, $wid2), $other->{token}, { score => 3, max_score => 5 });
    check_err(req(GET => seo_path($far), $owner->{token}), 404, 'not_found', 'GET seo of another workspace\'s article');
    check_err(req(PUT => seo_path($far), $owner->{token}, { score => 1 }), 404, 'not_found',
              'PUT seo of another workspace\'s article');
    is one("SELECT score FROM article_seo WHERE article_id = '$far'"), 3, 'its record untouched';
    is one("SELECT count(*) FROM article_seo WHERE article_id = '$theirs'"), 0, 'the refused PUT wrote nothing';
    is req(PUT => seo_path($theirs), $m{editor}{token}, { score => 1 })->{status}, 200, 'an editor PUTs any article';
    my $gone = article($m{owner});
    req(PUT => seo_path($gone), $owner->{token}, { score => 1 });
    is at($A, DELETE => "/v1/workspaces/$wid/articles/$gone", $owner->{token})->{status}, 204, 'an article deleted';
    check_err(req(GET => seo_path($gone), $owner->{token}), 404, 'not_found', 'GET seo of a deleted article');
    check_err(req(PUT => seo_path($gone), $owner->{token}, { score => 2 }), 404, 'not_found', 'PUT seo of a deleted article');
    check_err(req(POST => seo_path($sa), $owner->{token}, {}), 405, 'method_not_allowed', 'POST seo');
}

stop_host_b();
my @hb = grep { !/redis|Connection refused/i } host_b_errors();
ok !@hb, 'host B: error.log has no [alert], [crit] or [emerg]' or diag join '', @hb;

done_testing();
