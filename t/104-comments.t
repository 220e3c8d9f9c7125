# Comments over /v1/api (secret key) and the studio mirrors (session): credentials and
# scopes on every route; create (always pending, even when asked otherwise; threaded
# replies; the comment.created event in the outbox); every error code that applies
# (id_required, name_required, content_required, comment_too_long at 10,001 characters,
# invalid_email, a parent of another article, a thread deeper than 8, a missing, deleted
# or foreign article: 404); the content kept as plain text; PATCH (moderation and edits)
# and DELETE (a thread goes with its first comment); the list (article_id and status
# filters, paging edges, another workspace's ids); the studio roles (every member
# comments, editors and up moderate); and the article's comment_count, exact after 200
# concurrent approvals, un-approvals and deletions (compared with a COUNT).
use strict;
use warnings;
use utf8;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp check_err one signup signup_defaults workspace key mk $UUID $TS);
use JSON::PP ();

signup_defaults(email_prefix => 'com');

my @FIELDS = sort qw(id article_id parent_id author_name author_email content status created_at);
my $NOBODY = '0190a4d6-2f5e-7c3a-9b1d-4e5f60718293';

start_nginx();

my $owner = signup();
my $wid = workspace($owner->{token}, 'Comments');
my $K = key($owner->{token}, $wid, 'rw', qw(comments:read comments:write articles:read articles:write));
my $KR = key($owner->{token}, $wid, 'ro', 'comments:read');
my $KW = key($owner->{token}, $wid, 'wo', 'comments:write');
my $KA = key($owner->{token}, $wid, 'articles', qw(articles:read articles:write));

my $other = signup();
my $wid2 = workspace($other->{token}, 'Other');
my $K2 = key($other->{token}, $wid2, 'other', qw(comments:read comments:write articles:read articles:write));

my $n = 0;
sub article { mk($_[0] // $K, { title => 'Commented ' . ++$n, status => 'published' })->{id} }
sub comment {
    my ($art, %f) = @_;
    my $r = req(POST => '/v1/api/comments', $f{key} // $K,
                { article_id => $art, author_name => 'Ann', content => 'Comment ' . ++$n,
                  map { $_ eq 'key' ? () : ($_ => $f{$_}) } keys %f });
    die 'comment: ' . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{comment};
}
sub count_of { one("SELECT comment_count FROM articles WHERE id = '$_[0]'") }
sub approved { one("SELECT count(*) FROM comments WHERE article_id = '$_[0]' AND status = 'approved'") }

my $art = article();

# --- credentials and scopes ------------------------------------------------------------

{
    my $c = comment($art);
    my $bad = 'svc_live_' . ('A' x 49);
    for my $t ([GET => '/v1/api/comments', undef, 'read'],
               [POST => '/v1/api/comments', { article_id => $art, author_name => 'x', content => 'x' }, 'write'],
               [PATCH => "/v1/api/comments/$c->{id}", { status => 'spam' }, 'write'],
               [DELETE => "/v1/api/comments/$c->{id}", undef, 'write']) {
        my ($m, $p, $b, $need) = @$t;
        check_err(req($m, $p, undef, $b), 401, 'missing_token', "$m $p without a key");
        check_err(req($m, $p, $bad, $b), 401, 'invalid_api_key', "$m $p with a bad key");
        check_err(req($m, $p, $owner->{token}, $b), 401, 'invalid_api_key', "$m $p with a session token");
        check_err(req($m, $p, $need eq 'read' ? $KW : $KR, $b), 403, 'missing_scope', "$m $p without comments:$need");
        check_err(req($m, $p, $KA, $b), 403, 'missing_scope', "$m $p with only articles scopes");
    }
    check_err(req(PUT => '/v1/api/comments', $K, {}), 405, 'method_not_allowed', 'PUT /comments');
    check_err(req(GET => "/v1/api/comments/$c->{id}", $K), 405, 'method_not_allowed', 'GET one comment');
    is one("SELECT status FROM comments WHERE id = '$c->{id}'"), 'pending', 'the refused PATCHes changed nothing';
    is one("SELECT count(*) FROM comments WHERE content = 'x'"), 0, 'no refused create was stored';
}

# --- create ----------------------------------------------------------------------------

{
    my $before = one("SELECT count(*) FROM outbox_events WHERE type = 'comment.created'");
    my $r = req(POST => '/v1/api/comments', $K,
                { article_id => $art, author_name => 'Zoë', author_email => 'zoe@example.com',
                  content => "Nice <b>piece</b> & more: <script>alert(1)</script>\n\"quoted\"" });
    is $r->{status}, 201, 'create: 201' or diag diag_resp($r);
    is_deeply [sort keys %{$r->{json} // {}}], ['comment'], 'create: wrapped in {comment}';
    my $c = $r->{json}{comment} // {};
    is_deeply [sort keys %$c], \@FIELDS, 'create: every comment field';
    like $c->{id} // '', $UUID, 'create: id is a uuid';
    like $c->{created_at} // '', $TS, 'create: created_at';
    is_deeply { map { $_ => $c->{$_} } qw(article_id parent_id author_name author_email status) },
        { article_id => $art, parent_id => undef, author_name => 'Zoë', author_email => 'zoe@example.com',
          status => 'pending' }, 'create: the fields, pending';
    is $c->{content}, "Nice <b>piece</b> & more: <script>alert(1)</script>\n\"quoted\"",
        'create: the content is plain text, kept exactly (no HTML processing)';
    like $r->{headers}{'content-type'} // '', qr{^application/json}, 'create: answered as JSON';
    is one("SELECT count(*) FROM outbox_events WHERE type = 'comment.created'"), $before + 1,
        'create: one comment.created event';
    is one("SELECT data->>'content' FROM outbox_events WHERE type = 'comment.created' AND data->>'id' = '$c->{id}'"),
        $c->{content}, 'create: the event carries the comment';
    is one("SELECT workspace_id FROM outbox_events WHERE data->>'id' = '$c->{id}'"), $wid, 'create: the event\'s workspace';

    # Pending whatever the body says: status is read-only on create.
    for my $s (qw(approved spam pending)) {
        my $x = req(POST => '/v1/api/comments', $K, { article_id => $art, author_name => 'A', content => 'B', status => $s });
        is $x->{status}, 201, "create with status $s: 201";
        is(($x->{json}{comment} // {})->{status}, 'pending', "create with status $s: stored pending");
    }
    my $plain = comment($art);
    is $plain->{status}, 'pending', 'create without status: pending';
    ok exists $plain->{author_email} && !defined $plain->{author_email}, 'create without an email: null';
    is count_of($art), 0, 'pending comments are not counted';

    # Read-only fields are ignored.
    my $ro = comment($art, id => $NOBODY, created_at => '2000-01-01T00:00:00Z');
    ok $ro->{id} ne $NOBODY && $ro->{created_at} !~ /^2000/, 'create: read-only id, created_at ignored';

    # Exactly 10,000 characters (multi-byte ones count once) is accepted.
    my $long = comment($art, content => ('é' x 10000));
    is length($long->{content}), 10000, 'create: 10,000 characters accepted';
}

for my $t (
    [{ author_name => 'a', content => 'c' }, 'id_required', 'no article_id'],
    [{ article_id => undef, author_name => 'a', content => 'c' }, 'id_required', 'null article_id'],
    [{ article_id => 'nope', author_name => 'a', content => 'c' }, 'invalid_field_value', 'malformed article_id'],
    [{ article_id => 5, author_name => 'a', content => 'c' }, 'invalid_field_value', 'article_id a number'],
    [{ article_id => $art, content => 'c' }, 'name_required', 'no author_name'],
    [{ article_id => $art, author_name => '', content => 'c' }, 'name_required', 'empty author_name'],
    [{ article_id => $art, author_name => 'a' x 201, content => 'c' }, 'invalid_field_value', 'author_name too long'],
    [{ article_id => $art, author_name => 'a' }, 'content_required', 'no content'],
    [{ article_id => $art, author_name => 'a', content => '' }, 'content_required', 'empty content'],
    [{ article_id => $art, author_name => 'a', content => undef }, 'content_required', 'null content'],
    [{ article_id => $art, author_name => 'a', content => 'x' x 10001 }, 'comment_too_long', '10,001 characters'],
    [{ article_id => $art, author_name => 'a', content => 'é' x 10001 }, 'comment_too_long', '10,001 two-byte characters'],
    [{ article_id => $art, author_name => 'a', content => ['x'] }, 'invalid_field_value', 'content an array'],
    (map { [{ article_id => $art, author_name => 'a', content => 'c', author_email => $_ }, 'invalid_email',
            "author_email '$_'"] } 'nope', 'a@b', '@example.com', 'a b@example.com', ''),
    [{ article_id => $art, author_name => 'a', content => 'c', parent_id => 'nope' }, 'invalid_field_value',
     'malformed parent_id'],
    [{ article_id => $art, author_name => 'a', content => 'c', parent_id => $NOBODY }, 'invalid_field_value',
     'parent_id of no comment'],
    [{ article_id => $art, author_name => 'a', content => 'c', colour => 'red' }, 'invalid_request', 'an unknown field'],
) {
    my ($body, $code, $name) = @$t;
    check_err(req(POST => '/v1/api/comments', $K, $body), 400, $code, "create, $name");
}
check_err(req(POST => '/v1/api/comments', $K, '{"article_id":'), 400, 'invalid_request', 'create, malformed JSON');
check_err(req(POST => '/v1/api/comments', $K), 400, 'invalid_request', 'create, no body');
is one("SELECT count(*) FROM comments WHERE author_name = 'a'"), 0, 'no refused create was stored';

# The article must be a live one of the workspace.
{
    my $theirs = article($K2);
    my $gone = article();
    is req(DELETE => "/v1/api/articles/$gone", $K)->{status}, 204, 'an article deleted';
    for my $t ([$NOBODY, 'no such article'], [$theirs, 'another workspace\'s article'], [$gone, 'a deleted article']) {
        my ($id, $name) = @$t;
        check_err(req(POST => '/v1/api/comments', $K, { article_id => $id, author_name => 'a', content => 'c' }), 404,
                  'not_found', "create on $name");
    }
    is one("SELECT count(*) FROM comments WHERE article_id IN ('$theirs', '$gone')"), 0, 'nothing stored for them';
}

# --- threads ---------------------------------------------------------------------------

{
    my $a = article();
    my $b = article();
    my $top = comment($a);
    my $reply = comment($a, parent_id => $top->{id});
    is $reply->{parent_id}, $top->{id}, 'a reply names its parent';
    check_err(req(POST => '/v1/api/comments', $K, { article_id => $b, author_name => 'a', content => 'c',
                                                     parent_id => $top->{id} }),
              400, 'invalid_field_value', 'a reply to a comment of another article');
    my $theirs = comment(article($K2), key => $K2);
    check_err(req(POST => '/v1/api/comments', $K, { article_id => $a, author_name => 'a', content => 'c',
                                                     parent_id => $theirs->{id} }),
              400, 'invalid_field_value', 'a reply to another workspace\'s comment');
    # Eight levels: the first comment, the reply and six more; a ninth is refused.
    my $p = $reply;
    $p = comment($a, parent_id => $p->{id}) for 3 .. 8;
    is one("SELECT depth FROM comments WHERE id = '$p->{id}'"), 8, 'the eighth level is accepted';
    my $r = req(POST => '/v1/api/comments', $K, { article_id => $a, author_name => 'a', content => 'too deep',
                                                  parent_id => $p->{id} });
    check_err($r, 400, 'invalid_field_value', 'a ninth level');
    is one("SELECT count(*) FROM comments WHERE content = 'too deep'"), 0, 'the ninth level was not stored';

    # Deleting a comment deletes its thread, and the count follows.
    req(PATCH => "/v1/api/comments/$_", $K, { status => 'approved' })
        for map { $_->[0] } @{psql("SELECT id FROM comments WHERE article_id = '$a'")};
    is count_of($a), 8, 'eight approved comments counted';
    my $d = req(DELETE => "/v1/api/comments/$reply->{id}", $K);
    is $d->{status}, 204, 'delete a reply with replies: 204' or diag diag_resp($d);
    is $d->{body}, '', 'delete: no body';
    is one("SELECT count(*) FROM comments WHERE article_id = '$a'"), 1, 'its six descendants went with it';
    is count_of($a), 1, 'the count follows the deleted thread';
    check_err(req(DELETE => "/v1/api/comments/$reply->{id}", $K), 404, 'not_found', 'delete again');
}

# --- PATCH -----------------------------------------------------------------------------

{
    my $a = article();
    my $c = comment($a);
    my $p = req(PATCH => "/v1/api/comments/$c->{id}", $K, { status => 'approved' });
    is $p->{status}, 200, 'approve: 200' or diag diag_resp($p);
    is_deeply $p->{json}{comment}, { %$c, status => 'approved' }, 'approve: the comment, approved';
    is count_of($a), 1, 'approve: counted';
    is req(GET => "/v1/api/articles/$a", $K)->{json}{article}{comment_count}, 1, 'approve: the article says 1';
    is req(PATCH => "/v1/api/comments/$c->{id}", $K, { status => 'approved' })->{status}, 200, 'approve again: 200';
    is count_of($a), 1, 'approve again: still 1';
    $p = req(PATCH => "/v1/api/comments/$c->{id}", $K, { status => 'spam', content => 'Edited <i>text</i>' });
    is $p->{status}, 200, 'spam and edit: 200';
    is_deeply { map { $_ => $p->{json}{comment}{$_} } qw(status content) }, { status => 'spam', content => 'Edited <i>text</i>' },
        'spam and edit: both changed';
    is count_of($a), 0, 'spam: not counted';
    is req(PATCH => "/v1/api/comments/$c->{id}", $K, {})->{json}{comment}{status}, 'spam', 'empty patch: nothing changes';
    my $e = req(PATCH => "/v1/api/comments/$c->{id}", $K,
                { id => $NOBODY, article_id => $NOBODY, parent_id => undef, created_at => 'x', status => 'pending' });
    is $e->{status}, 200, 'patch: read-only fields sent back are ignored' or diag diag_resp($e);
    is $e->{json}{comment}{article_id}, $a, 'patch: the article stays';

    for my $t ([{ status => 'published' }, 'invalid_status', 'unknown status'],
               [{ status => 5 }, 'invalid_field_value', 'status a number'],
               [{ content => '' }, 'content_required', 'empty content'],
               [{ content => 'y' x 10001 }, 'comment_too_long', '10,001 characters'],
               [{ author_name => 'New' }, 'invalid_request', 'author_name (not editable)'],
               [{ colour => 'red' }, 'invalid_request', 'unknown field']) {
        my ($body, $code, $name) = @$t;
        check_err(req(PATCH => "/v1/api/comments/$c->{id}", $K, $body), 400, $code, "patch, $name");
    }
    is one("SELECT content FROM comments WHERE id = '$c->{id}'"), 'Edited <i>text</i>', 'refused patches changed nothing';

    my $theirs = comment(article($K2), key => $K2);
    for my $id ($NOBODY, 'not-a-uuid', $theirs->{id}) {
        check_err(req(PATCH => "/v1/api/comments/$id", $K, { status => 'approved' }), 404, 'not_found', "patch $id");
        check_err(req(DELETE => "/v1/api/comments/$id", $K), 404, 'not_found', "delete $id");
    }
    is one("SELECT status FROM comments WHERE id = '$theirs->{id}'"), 'pending', 'the other workspace\'s comment is untouched';

    # A deleted article's comments are gone from every route.
    my $g = article();
    my $gc = comment($g);
    is req(DELETE => "/v1/api/articles/$g", $K)->{status}, 204, 'the article deleted';
    check_err(req(PATCH => "/v1/api/comments/$gc->{id}", $K, { status => 'approved' }), 404, 'not_found',
              'patch a comment of a deleted article');
    is_deeply req(GET => "/v1/api/comments?article_id=$g", $K)->{json}{comments}, [],
        'list: a deleted article has no comments';
    ok !grep({ $_->{id} eq $gc->{id} } @{req(GET => '/v1/api/comments?limit=100', $K)->{json}{comments} // []}),
        'list: its comments are not in the workspace\'s list';
}

# --- list ------------------------------------------------------------------------------

{
    my $lu = signup();
    my $lw = workspace($lu->{token}, 'Comment list');
    my $LK = key($lu->{token}, $lw, 'l', qw(comments:read comments:write articles:read articles:write));
    is_deeply req(GET => '/v1/api/comments', $LK)->{json},
        { comments => [], pagination => { total => 0, limit => 50, offset => 0 } }, 'empty list';
    my ($a, $b) = (article($LK), article($LK));
    my @ca = map { comment($a, key => $LK) } 1 .. 7;
    my @cb = map { comment($b, key => $LK) } 1 .. 3;
    req(PATCH => "/v1/api/comments/$_->{id}", $LK, { status => 'approved' }) for @ca[0, 2, 4];
    req(PATCH => "/v1/api/comments/$_->{id}", $LK, { status => 'spam' }) for $cb[0];

    my $l = req(GET => '/v1/api/comments', $LK);
    is $l->{status}, 200, 'list: 200';
    is_deeply [sort keys %{$l->{json} // {}}], [qw(comments pagination)], 'list: {comments, pagination}';
    is_deeply $l->{json}{pagination}, { total => 10, limit => 50, offset => 0 }, 'list: pagination';
    is_deeply [map { $_->{id} } @{$l->{json}{comments}}], [map { $_->{id} } reverse @ca, @cb], 'list: newest first';
    is_deeply [sort keys %{$l->{json}{comments}[0]}], \@FIELDS, 'list: full records';

    my $fa = req(GET => "/v1/api/comments?article_id=$a", $LK)->{json};
    is_deeply [map { $_->{id} } @{$fa->{comments}}], [map { $_->{id} } reverse @ca], 'article_id: that article\'s comments';
    is $fa->{pagination}{total}, 7, 'article_id: total 7';
    my $fs = req(GET => "/v1/api/comments?article_id=$a&status=approved", $LK)->{json};
    is_deeply [map { $_->{id} } @{$fs->{comments}}], [map { $_->{id} } reverse @ca[0, 2, 4]], 'article_id + status';
    is $fs->{pagination}{total}, 3, 'article_id + status: total 3';
    is req(GET => '/v1/api/comments?status=pending', $LK)->{json}{pagination}{total}, 6, 'status=pending: 6';
    is req(GET => '/v1/api/comments?status=spam', $LK)->{json}{comments}[0]{id}, $cb[0]{id}, 'status=spam';
    is_deeply req(GET => "/v1/api/comments?article_id=$art", $LK)->{json},
        { comments => [], pagination => { total => 0, limit => 50, offset => 0 } },
        'article_id of another workspace: an empty list';
    is_deeply req(GET => "/v1/api/comments?article_id=$NOBODY", $LK)->{json}{comments}, [], 'article_id of nothing: empty';
    check_err(req(GET => '/v1/api/comments?status=published', $LK), 400, 'invalid_status', 'status filter unknown');
    check_err(req(GET => '/v1/api/comments?article_id=nope', $LK), 400, 'invalid_field_value', 'article_id malformed');
    check_err(req(GET => "/v1/api/comments?article_id=$a&article_id=$b", $LK), 400, 'invalid_request',
              'article_id twice');

    # Paging edges: out-of-range limits fall back to the default (the spec), offsets page.
    my $p = req(GET => "/v1/api/comments?article_id=$a&limit=2&offset=1", $LK)->{json};
    is_deeply [map { $_->{id} } @{$p->{comments}}], [map { $_->{id} } (reverse @ca)[1, 2]], 'limit=2&offset=1';
    is_deeply $p->{pagination}, { total => 7, limit => 2, offset => 1 }, 'limit=2&offset=1: pagination';
    for my $lim (qw(0 101 -1 abc 1.5)) {
        my $x = req(GET => "/v1/api/comments?limit=$lim", $LK);
        is $x->{status}, 200, "limit=$lim: 200";
        is $x->{json}{pagination}{limit}, 50, "limit=$lim: the default 50";
    }
    is req(GET => '/v1/api/comments?limit=100', $LK)->{json}{pagination}{limit}, 100, 'limit=100 taken';
    is req(GET => '/v1/api/comments?offset=-1', $LK)->{json}{pagination}{offset}, 0, 'offset=-1: 0';
    my $past = req(GET => '/v1/api/comments?offset=10', $LK)->{json};
    is_deeply $past, { comments => [], pagination => { total => 10, limit => 50, offset => 10 } }, 'past the end';
    check_err(req(GET => '/v1/api/comments?offset=100001', $LK), 400, 'invalid_field_value', 'offset too deep');
}

# --- studio mirrors --------------------------------------------------------------------

{
    my %m = (owner => $owner);
    for my $role (qw(admin editor author viewer)) {
        $m{$role} = signup();
        psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$m{$role}{user}{id}', '$role')");
    }
    my %moderates = (owner => 1, admin => 1, editor => 1, author => 0, viewer => 0);
    my $base = "/v1/workspaces/$wid/comments";
    my $a = article();
    for my $role (qw(owner admin editor author viewer)) {
        my $t = $m{$role}{token};
        my $c = req(POST => $base, $t, { article_id => $a, author_name => ucfirst $role, content => "By $role" });
        is $c->{status}, 201, "studio $role: comments" or diag diag_resp($c);
        my $id = ($c->{json}{comment} // {})->{id} // $NOBODY;
        my $l = req(GET => "$base?article_id=$a", $t);
        is $l->{status}, 200, "studio $role: list";
        ok grep({ $_->{id} eq $id } @{$l->{json}{comments} // []}), "studio $role: the list has it";
        if ($moderates{$role}) {
            is req(PATCH => "$base/$id", $t, { status => 'approved' })->{status}, 200, "studio $role: approves";
            is req(DELETE => "$base/$id", $t)->{status}, 204, "studio $role: deletes";
        } else {
            check_err(req(PATCH => "$base/$id", $t, { status => 'approved' }), 403, 'forbidden', "studio $role: approve");
            check_err(req(DELETE => "$base/$id", $t), 403, 'forbidden', "studio $role: delete");
            is one("SELECT status FROM comments WHERE id = '$id'"), 'pending', "studio $role: nothing changed";
        }
    }
    is count_of($a), approved($a), 'studio: the count matches';
    check_err(req(GET => "/v1/workspaces/$wid2/comments", $owner->{token}), 403, 'not_workspace_member',
              'studio: another workspace');
    check_err(req(GET => $base), 401, 'missing_token', 'studio without a session');
}

# --- comment_count under concurrency ------------------------------------------------------
# 60 comments on one article (threads of three among them), then 200 requests at once:
# approve, un-approve (pending or spam) and delete, on overlapping comments. Every answer
# is 200, 204 or 404 (a comment deleted first, or with its thread); none is a 5xx (no
# deadlock); the stored count equals a COUNT of the approved comments at the end.

{
    my $a = article();
    my @ids;
    for my $i (1 .. 20) {
        my $top = comment($a);
        my $r1 = comment($a, parent_id => $top->{id});
        my $r2 = comment($a, parent_id => $r1->{id});
        push @ids, $top->{id}, $r1->{id}, $r2->{id};
    }
    req(PATCH => "/v1/api/comments/$ids[$_]", $K, { status => 'approved' }) for grep { $_ % 2 } 0 .. $#ids;
    is count_of($a), 30, 'before: 30 approved';
    srand(12);
    my @specs;
    for my $i (1 .. 200) {
        my $id = $ids[int rand @ids];
        my $pick = $i % 5;
        push @specs, $pick == 4 ? [DELETE => "/v1/api/comments/$id", ['Authorization', "Bearer $K"]]
                   : [PATCH => "/v1/api/comments/$id",
                      ['Authorization', "Bearer $K", 'Content-Type', 'application/json'],
                      '{"status":"' . (qw(approved pending approved spam))[$pick] . '"}'];
    }
    my @r = parallel_requests(@specs);
    my %codes;
    $codes{$_->{status} // 'none'}++ for @r;
    is_deeply [sort grep { !/^(200|204|404)$/ } keys %codes], [], 'every answer is 200, 204 or 404'
        or diag explain \%codes;
    ok(($codes{200} // 0) > 50 && ($codes{204} // 0) > 0, 'approvals and deletions ran') or diag explain \%codes;
    my $count = approved($a);
    is count_of($a), $count, "comment_count is the COUNT of approved comments ($count)";
    is req(GET => "/v1/api/articles/$a", $K)->{json}{article}{comment_count}, $count, 'the article answers it';
    ok $count > 0 && $count < 60, 'a count the race could have got wrong';
    # the list's total comes from per-(article, status) counters (sql/0018): after the race
    # each equals a COUNT of its comments, and the list answers them
    my $counted = one("SELECT string_agg(status || '=' || n, ' ' ORDER BY status)"
        . " FROM (SELECT status, count(*) AS n FROM comments WHERE article_id = '$a' GROUP BY status) x");
    my $kept = one("SELECT string_agg(status || '=' || n, ' ' ORDER BY status) FROM comment_counts"
        . " WHERE article_id = '$a' AND n <> 0");
    is $kept, $counted, "the list counters equal a COUNT per status ($counted)";
    my $all = one("SELECT count(*) FROM comments WHERE article_id = '$a'");
    is req(GET => "/v1/api/comments?article_id=$a&limit=1", $K)->{json}{pagination}{total}, $all,
       "the article's list total is the COUNT ($all)";
    is req(GET => "/v1/api/comments?article_id=$a&status=approved&limit=1", $K)->{json}{pagination}{total}, $count,
       'the approved filter\'s total too';
}

done_testing();
