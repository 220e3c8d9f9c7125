# Articles through the studio mirrors (/v1/workspaces/{id}/articles...) with a session:
# every role lists and reads; authors and up create, patch and delete their drafts, a
# viewer none (403 forbidden); the publish-rights matrix by the member's role on the
# member's own articles (t/036-roles.t has the whole role matrix, others' articles
# too); non-members, missing or bad sessions, keys;
# another workspace's article ids through one's own workspace path; the same records and
# rules as the secret-key routes (validation, slugs, paging, revisions by the session's
# user); the session cookie.
use strict;
use warnings;
use utf8;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp check_err one signup signup_defaults workspace key mk revisions);
use JSON::PP ();

my $JSON = JSON::PP->new->utf8->canonical;
my ($T, $F) = (JSON::PP::true, JSON::PP::false);

signup_defaults(email_prefix => 'studio');

my $NOBODY = '0190a4d6-2f5e-7c3a-9b1d-4e5f60718293';

start_nginx();

my %m = (owner => signup());
my $wid = workspace($m{owner}{token}, 'Studio');
for my $role (qw(admin editor author viewer)) {
    $m{$role} = signup();
    psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$m{$role}{user}{id}', '$role')");
}
my $K = key($m{owner}{token}, $wid, 'rw', 'articles:read', 'articles:write');
my $base = "/v1/workspaces/$wid/articles";

my $other = signup();
my $wid2 = workspace($other->{token}, 'Other');
my $K2 = key($other->{token}, $wid2, 'other rw', 'articles:read', 'articles:write');
my $obase = "/v1/workspaces/$wid2/articles";
my $theirs = mk($other->{token}, { title => 'Theirs' }, $obase);

# --- every role that writes: drafts ----------------------------------------------------

for my $role (qw(owner admin editor author)) {
    my $t = $m{$role}{token};
    my $uid = $m{$role}{user}{id};
    my $r = req(POST => $base, $t, { title => "Draft by $role", body => '<p>some text</p>', tags => ['s'] });
    is $r->{status}, 201, "$role: create a draft: 201" or diag diag_resp($r);
    my $a = $r->{json}{article} // {};
    is_deeply [sort keys %{$r->{json} // {}}], ['article'], "$role: wrapped in {article}";
    is $a->{author_id}, $uid, "$role: the author is the session's user";
    is $a->{status}, 'draft', "$role: draft";
    is_deeply psql("SELECT created_by FROM article_revisions WHERE article_id = '$a->{id}'"), [[$uid]],
        "$role: a revision by the session's user";
    is_deeply req(GET => "$base/$a->{id}", $t)->{json}, { article => $a }, "$role: get 200, the same record";
    is_deeply req(GET => "/v1/api/articles/$a->{id}", $K)->{json}, { article => $a }, "$role: the key reads the same";
    my $p = req(PATCH => "$base/$a->{id}", $t, { title => "Draft by $role, edited" });
    is $p->{status}, 200, "$role: patch a draft: 200" or diag diag_resp($p);
    is(($p->{json}{article} // {})->{title}, "Draft by $role, edited", "$role: patched");
    is revisions($a->{id}), 2, "$role: a revision for the title change";
    $p = req(PATCH => "$base/$a->{id}", $t, { title => "Draft by $role, autosaved", autosave => $T });
    is revisions($a->{id}), 2, "$role: no revision for an autosave";
    $p = req(PATCH => "$base/$a->{id}", $t, { status => 'in_review' });
    is(($p->{json}{article} // {})->{status}, 'in_review', "$role: to in_review");
    my $l = req(GET => "$base?status=in_review", $t);
    is $l->{status}, 200, "$role: list: 200" or diag diag_resp($l);
    ok grep({ $_->{id} eq $a->{id} } @{$l->{json}{articles} // []}), "$role: the list has it";
    my $d = req(DELETE => "$base/$a->{id}", $t);
    is $d->{status}, 204, "$role: delete a draft: 204" or diag diag_resp($d);
    is $d->{body}, '', "$role: delete: no body";
    check_err(req(GET => "$base/$a->{id}", $t), 404, 'not_found', "$role: get after delete");
    check_err(req(GET => "/v1/api/articles/$a->{id}", $K), 404, 'not_found', "$role: the key cannot get it either");
}

# --- a viewer reads and writes nothing ------------------------------------------------

{
    my $t = $m{viewer}{token};
    my $a = mk($K, { title => 'For the viewer', author_id => $m{viewer}{user}{id} });
    is_deeply req(GET => "$base/$a->{id}", $t)->{json}, { article => $a }, 'viewer: get 200, the same record';
    my $l = req(GET => $base, $t);
    is $l->{status}, 200, 'viewer: list: 200' or diag diag_resp($l);
    ok grep({ $_->{id} eq $a->{id} } @{$l->{json}{articles} // []}), 'viewer: the list has it';
    check_err(req(POST => $base, $t, { title => 'Draft by viewer' }), 403, 'forbidden', 'viewer: create a draft');
    check_err(req(PATCH => "$base/$a->{id}", $t, { title => 'Edited by viewer' }), 403, 'forbidden',
              'viewer: patch a draft that names it the author');
    check_err(req(PATCH => "$base/$a->{id}", $t, { title => 'Autosaved by viewer', autosave => $T }), 403,
              'forbidden', 'viewer: autosave');
    check_err(req(DELETE => "$base/$a->{id}", $t), 403, 'forbidden', 'viewer: delete');
    is_deeply req(GET => "/v1/api/articles/$a->{id}", $K)->{json}, { article => $a }, 'viewer: the draft is unchanged';
    is revisions($a->{id}), 1, 'viewer: no revision';
    is one("SELECT count(*) FROM articles WHERE title = 'Draft by viewer'"), 0, 'viewer: no create stored';
}

# --- publish rights by role ------------------------------------------------------------
# On the member's own articles (an author writes only those); a viewer writes nothing.

my %can = (owner => 1, admin => 1, editor => 1, author => 1, viewer => 0);
for my $role (qw(owner admin editor author viewer)) {
    my $t = $m{$role}{token};
    my $c = $can{$role};
    my $r = req(POST => $base, $t, { title => "Published by $role", status => 'published' });
    $c ? is($r->{status}, 201, "$role: create published: 201") : check_err($r, 403, 'forbidden', "$role: create published");
    $r = req(POST => $base, $t, { title => "Scheduled by $role", status => 'scheduled', published_at => '2099-01-01T00:00:00Z' });
    $c ? is($r->{status}, 201, "$role: create scheduled: 201") : check_err($r, 403, 'forbidden', "$role: create scheduled");
    $r = req(POST => $base, $t, { title => "Archived by $role", status => 'archived' });
    $c ? is($r->{status}, 201, "$role: create archived: 201") : check_err($r, 403, 'forbidden', "$role: create archived");

    my %mine = (author_id => $m{$role}{user}{id});
    my $d = mk($m{owner}{token}, { title => "Draft for $role to publish", %mine }, $base);
    $r = req(PATCH => "$base/$d->{id}", $t, { status => 'published' });
    $c ? is($r->{status}, 200, "$role: patch to published: 200") : check_err($r, 403, 'forbidden', "$role: patch to published");
    $r = req(PATCH => "$base/$d->{id}", $t, { status => 'scheduled', published_at => '2099-03-03T00:00:00Z' });
    $c ? is($r->{status}, 200, "$role: patch to scheduled: 200") : check_err($r, 403, 'forbidden', "$role: patch to scheduled");

    for my $live (['published', {}], ['scheduled', { published_at => '2099-01-01T00:00:00Z' }]) {
        my ($st, $extra) = @$live;
        my $a = mk($m{owner}{token}, { title => "Live $st for $role", status => $st, %$extra, %mine }, $base);
        $r = req(PATCH => "$base/$a->{id}", $t, { title => "Live $st, edited by $role" });
        $c ? is($r->{status}, 200, "$role: patch a $st article: 200")
           : check_err($r, 403, 'forbidden', "$role: patch a $st article");
        $r = req(PATCH => "$base/$a->{id}", $t, { status => 'draft' });
        $c ? is($r->{status}, 200, "$role: unpublish a $st article: 200")
           : check_err($r, 403, 'forbidden', "$role: unpublish a $st article");
        is_deeply req(GET => "$base/$a->{id}", $t)->{json}{article}, $a, "$role: the $st article is unchanged" unless $c;
        my $b = mk($m{owner}{token}, { title => "Live $st to delete for $role", status => $st, %$extra, %mine },
                   $base);
        $r = req(DELETE => "$base/$b->{id}", $t);
        $c ? is($r->{status}, 204, "$role: delete a $st article: 204")
           : check_err($r, 403, 'forbidden', "$role: delete a $st article");
        is req(GET => "$base/$b->{id}", $t)->{status}, 200, "$role: the $st article is still there" unless $c;
    }
}
is one("SELECT count(*) FROM articles WHERE title IN ('Published by viewer', 'Scheduled by viewer',"
       . " 'Archived by viewer')"), 0,
    'the viewer\'s refused creates stored nothing';

# A role change holds on the next request.
psql("UPDATE members SET role = 'viewer' WHERE workspace_id = '$wid' AND user_id = '$m{author}{user}{id}'");
check_err(req(POST => $base, $m{author}{token}, { title => 'Demoted author', status => 'published' }), 403,
          'forbidden', 'author demoted to viewer: cannot publish at once');
psql("UPDATE members SET role = 'author' WHERE workspace_id = '$wid' AND user_id = '$m{author}{user}{id}'");
is req(POST => $base, $m{author}{token}, { title => 'Promoted author', status => 'published' })->{status}, 201,
    'author again: publishes at once';

# --- credentials and membership --------------------------------------------------------

{
    my $a = mk($m{owner}{token}, { title => 'Credential target' }, $base);
    my @routes = ([GET => $base], [POST => $base, { title => 'x' }], [GET => "$base/$a->{id}"],
                  [PATCH => "$base/$a->{id}", { title => 'x' }], [DELETE => "$base/$a->{id}"]);
    for my $t (@routes) {
        my ($meth, $p, $b) = @$t;
        check_err(req($meth, $p, undef, $b), 401, 'missing_token', "$meth $p without a session");
        check_err(req($meth, $p, 'not.a.jwt', $b), 401, 'invalid_token', "$meth $p with a bad token");
        check_err(req($meth, $p, $K, $b), 401, 'invalid_token', "$meth $p with an API key");
        check_err(req($meth, $p, $other->{token}, $b), 403, 'not_workspace_member', "$meth $p as a non-member");
    }
    is_deeply req(GET => "$base/$a->{id}", $m{owner}{token})->{json}{article}, $a, 'the refused requests changed nothing';
    is one("SELECT count(*) FROM articles WHERE title = 'x'"), 0, 'no refused create was stored';
    for my $t ([GET => $obase], [POST => $obase, { title => 'Intruder' }], [GET => "$obase/$theirs->{id}"],
               [PATCH => "$obase/$theirs->{id}", { title => 'Intruder' }], [DELETE => "$obase/$theirs->{id}"]) {
        my ($meth, $p, $b) = @$t;
        check_err(req($meth, $p, $m{owner}{token}, $b), 403, 'not_workspace_member',
                  "$meth on the other workspace's path");
    }
    check_err(req(GET => '/v1/workspaces/not-a-uuid/articles', $m{owner}{token}), 403, 'not_workspace_member',
              'malformed workspace id');
    check_err(req(GET => "/v1/workspaces/$NOBODY/articles", $m{owner}{token}), 403, 'not_workspace_member',
              'unknown workspace id');

    # Another workspace's article id through my own path.
    for my $id ($theirs->{id}, $NOBODY, 'not-a-uuid') {
        check_err(req(GET => "$base/$id", $m{owner}{token}), 404, 'not_found', "get $id through my path");
        check_err(req(PATCH => "$base/$id", $m{owner}{token}, { title => 'Mine now' }), 404, 'not_found',
                  "patch $id through my path");
        check_err(req(DELETE => "$base/$id", $m{owner}{token}), 404, 'not_found', "delete $id through my path");
    }
    is_deeply req(GET => "/v1/api/articles/$theirs->{id}", $K2)->{json}{article}, $theirs,
        'the other workspace\'s article is untouched';
    ok !grep({ $_->{id} eq $theirs->{id} } @{req(GET => "$base?limit=100", $m{owner}{token})->{json}{articles} // []}),
        'my list does not have it';

    # A member of both sees each workspace's own articles through each path.
    psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid2', '$m{viewer}{user}{id}', 'viewer')");
    is_deeply req(GET => "$obase/$theirs->{id}", $m{viewer}{token})->{json}{article}, $theirs,
        'a member of both: the other article through its own path';
    check_err(req(GET => "$base/$theirs->{id}", $m{viewer}{token}), 404, 'not_found',
              'a member of both: the other article through the wrong path');
    psql("DELETE FROM members WHERE workspace_id = '$wid2' AND user_id = '$m{viewer}{user}{id}'");

    # The cookie works as the bearer token does.
    my $ck = ['Cookie' => "cms_session=$m{editor}{token}", 'Content-Type' => 'application/json'];
    my $c = http(POST => $base, $ck, $JSON->encode({ title => 'By cookie' }));
    is $c->{status}, 201, 'create by cookie: 201' or diag diag_resp($c);
    is(($c->{json}{article} // {})->{author_id}, $m{editor}{user}{id}, 'by cookie: the cookie\'s user is the author');
    my $id = ($c->{json}{article} // {})->{id} // $NOBODY;
    is http(GET => "$base/$id", $ck)->{status}, 200, 'get by cookie: 200';
    is http(PATCH => "$base/$id", $ck, $JSON->encode({ title => 'By cookie, edited' }))->{status}, 200, 'patch by cookie';
    is http(DELETE => "$base/$id", $ck)->{status}, 204, 'delete by cookie';
}

# --- the same rules as the key routes (a sample) ---------------------------------------

{
    my $t = $m{editor}{token};
    check_err(req(POST => $base, $t, {}), 400, 'title_required', 'studio: title required');
    check_err(req(POST => $base, $t, { title => 'x', slug => 'Bad' }), 400, 'invalid_slug', 'studio: invalid slug');
    check_err(req(POST => $base, $t, { title => 'x', status => 'nope' }), 400, 'invalid_status', 'studio: invalid status');
    check_err(req(POST => $base, $t, { title => 'x', tags => 'x' }), 400, 'invalid_field_value', 'studio: tags a string');
    check_err(req(POST => $base, $t, { title => 'x', nope => 1 }), 400, 'invalid_request', 'studio: unknown field');
    my $a = mk($t, { title => 'Studio slug', slug => 'studio-slug' }, $base);
    check_err(req(POST => $base, $t, { title => 'Studio slug 2', slug => 'studio-slug' }), 409, 'slug_taken',
              'studio: slug taken');
    check_err(req(POST => '/v1/api/articles', $K, { title => 'Key slug', slug => 'studio-slug' }), 409, 'slug_taken',
              'the key sees the studio\'s slug taken');
    is req(POST => $base, $t, { title => 'Studio slug fr', slug => 'studio-slug', locale => 'fr' })->{status}, 201,
        'studio: same slug in fr';
    my $s = req(POST => $base, $t, { title => 'Sanitize', body => '<p>a<script>b()</script></p>' })->{json}{article} // {};
    is $s->{body}, '<p>a</p>', 'studio: the body is sanitized';
    my $k = mk($K, { title => 'Made by a key' }, '/v1/api/articles');
    is_deeply req(GET => "$base/$k->{id}", $t)->{json}{article}, $k, 'studio reads what the key made';
    check_err(req(PATCH => "$base/$k->{id}", $t, { status => 'bogus' }), 400, 'invalid_status', 'studio: patch invalid status');

    # Lists: same shape and paging rules.
    my $key_list = req(GET => '/v1/api/articles?limit=100', $K)->{json};
    my $st_list = req(GET => "$base?limit=100", $t)->{json};
    is_deeply $st_list, $key_list, 'studio list = key list';
    my $total = $key_list->{pagination}{total};
    ok $total > 5, "studio: $total articles to page";
    for my $lim ('0', '101', '-1', 'abc') {
        is_deeply req(GET => "$base?limit=$lim", $t)->{json}{pagination}, { total => $total, limit => 50, offset => 0 },
            "studio: limit=$lim falls back to 50";
    }
    my $p = req(GET => "$base?limit=2&offset=1", $t)->{json};
    is_deeply [map { $_->{id} } @{$p->{articles}}], [map { $_->{id} } @{$key_list->{articles}}[1, 2]],
        'studio: limit=2&offset=1';
    is_deeply $p->{pagination}, { total => $total, limit => 2, offset => 1 }, 'studio: its pagination';
    is_deeply req(GET => "$base?offset=-4&limit=3", $t)->{json}{pagination}, { total => $total, limit => 3, offset => 0 },
        'studio: offset=-4 is 0';
    check_err(req(GET => "$base?status=nope", $t), 400, 'invalid_status', 'studio: list status=nope');
    is req(GET => "$base?locale=fr", $t)->{json}{pagination}{total}, 1, 'studio: list locale=fr';
}

done_testing();
