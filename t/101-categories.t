# Categories over /v1/api (secret key) and the studio mirrors (session): credentials and
# scopes on every route; create with every field and with none (defaults); validation;
# slugs derived, validated and unique per workspace and locale; the list (not paginated,
# ordered by display_order then name); get, patch, delete; another workspace's ids; a
# deleted category is unset on its articles; the studio role matrix (any member reads,
# editors and up write).
use strict;
use warnings;
use utf8;
use Cms::Test;
use Cms::Fixtures qw(check_url_field req diag_resp check_err one signup signup_defaults workspace key mkcat $UUID $TS);
use JSON::PP ();

signup_defaults(email_prefix => 'cat');

my @FIELDS = sort qw(id name slug description accent_color image_url locale display_order created_at updated_at);
my $NOBODY = '0190a4d6-2f5e-7c3a-9b1d-4e5f60718293';

start_nginx();

my $owner = signup();
my $wid = workspace($owner->{token}, 'Categories');
my $K = key($owner->{token}, $wid, 'rw', qw(categories:read categories:write articles:read articles:write));
my $KR = key($owner->{token}, $wid, 'ro', 'categories:read');
my $KW = key($owner->{token}, $wid, 'wo', 'categories:write');
my $KA = key($owner->{token}, $wid, 'articles', 'articles:read', 'articles:write');

my $other = signup();
my $wid2 = workspace($other->{token}, 'Other');
my $K2 = key($other->{token}, $wid2, 'other', qw(categories:read categories:write articles:read articles:write));

# --- credentials and scopes ------------------------------------------------------------

{
    my $c = mkcat($K, { name => 'Auth target' });
    my $bad = 'svc_live_' . ('A' x 49);
    for my $t ([GET => '/v1/api/categories', undef, 'read'],
               [POST => '/v1/api/categories', { name => 'x' }, 'write'],
               [GET => "/v1/api/categories/$c->{id}", undef, 'read'],
               [PATCH => "/v1/api/categories/$c->{id}", { name => 'x' }, 'write'],
               [DELETE => "/v1/api/categories/$c->{id}", undef, 'write']) {
        my ($m, $p, $b, $need) = @$t;
        check_err(req($m, $p, undef, $b), 401, 'missing_token', "$m $p without a key");
        check_err(req($m, $p, $bad, $b), 401, 'invalid_api_key', "$m $p with a bad key");
        check_err(req($m, $p, $owner->{token}, $b), 401, 'invalid_api_key', "$m $p with a session token");
        check_err(req($m, $p, $need eq 'read' ? $KW : $KR, $b), 403, 'missing_scope', "$m $p without categories:$need");
        check_err(req($m, $p, $KA, $b), 403, 'missing_scope', "$m $p with only articles scopes");
    }
    is_deeply req(GET => "/v1/api/categories/$c->{id}", $KR)->{json}, { category => $c },
        'read-only key reads; the refused writes changed nothing';
    is req(POST => '/v1/api/categories', $KW, { name => 'By the write-only key' })->{status}, 201, 'write-only key creates';
    is one("SELECT count(*) FROM categories WHERE name = 'x'"), 0, 'no refused create was stored';
}

# --- create ----------------------------------------------------------------------------

my $r = req(POST => '/v1/api/categories', $K, { name => 'World News' });
is $r->{status}, 201, 'create with a name only: 201' or diag diag_resp($r);
is_deeply [sort keys %{$r->{json} // {}}], ['category'], 'create: wrapped in {category}';
my $wn = $r->{json}{category} // {};
is_deeply [sort keys %$wn], \@FIELDS, 'create: every category field, nothing else';
like $wn->{id} // '', $UUID, 'create: id is a uuid';
like $wn->{$_} // '', $TS, "create: $_ is an RFC 3339 UTC time" for qw(created_at updated_at);
is_deeply { map { $_ => $wn->{$_} } qw(name slug description accent_color image_url locale display_order) },
    { name => 'World News', slug => 'world-news', description => '', accent_color => '#8b5cf6', image_url => '',
      locale => 'en', display_order => 0 }, 'create: defaults (#8b5cf6, en, 0, slug from the name)';

my %full = (name => 'Économie & Société', slug => 'eco', description => 'Money', accent_color => '#A1b2C3',
            image_url => 'https://img.example.com/c.png', locale => 'fr', display_order => -3);
$r = req(POST => '/v1/api/categories', $K, \%full);
is $r->{status}, 201, 'create with every field: 201' or diag diag_resp($r);
my $eco = $r->{json}{category} // {};
is $eco->{$_}, $full{$_}, "create: $_ kept" for sort keys %full;
is mkcat($K, { name => 'Économie & Société' })->{slug}, 'economie-societe', 'slug derived with transliteration';
is mkcat($K, { name => '日本' })->{slug}, 'untitled', 'slug derived from nothing usable: untitled';
is mkcat($K, { name => 'Short', accent_color => '#abc' })->{accent_color}, '#abc', 'accent_color #rgb';
my $ro = mkcat($K, { name => 'Read only', id => $NOBODY, created_at => '2000-01-01T00:00:00Z' });
ok $ro->{id} ne $NOBODY && $ro->{created_at} !~ /^2000/, 'read-only fields ignored';
is_deeply req(GET => "/v1/api/categories/$eco->{id}", $KR)->{json}, { category => $eco }, 'get: the same record';

for my $t (
    [{}, 'name_required', 'no name'],
    [{ name => '' }, 'name_required', 'empty name'],
    [{ name => undef }, 'name_required', 'null name'],
    [{ description => 'd' }, 'name_required', 'description without a name'],
    (map { [{ name => 'x', slug => $_ }, 'invalid_slug', "slug '$_'"] } 'Bad Slug', 'a--b', '-a', 'a-', 'ABC', 'é', ''),
    (map { [{ name => 'x', accent_color => $_ }, 'invalid_field_value', "accent_color '$_'"] }
         'red', '#abcd', '#ggg', '8b5cf6', '#12345', '#1234567', '', '#'),
    [{ name => 'x', accent_color => 123 }, 'invalid_field_value', 'accent_color a number'],
    [{ name => 'x', display_order => 'x' }, 'invalid_field_value', 'display_order a string'],
    [{ name => 'x', display_order => 1.5 }, 'invalid_field_value', 'display_order a fraction'],
    [{ name => 'x', display_order => '3' }, 'invalid_field_value', 'display_order a numeric string'],
    [{ name => 'x', display_order => $JSON::PP::true }, 'invalid_field_value', 'display_order a boolean'],
    (map { [{ name => 'x', locale => $_ }, 'invalid_field_value', "locale '$_'"] } 'e', '!!', 'english language', ''),
    [{ name => 'x', description => 5 }, 'invalid_field_value', 'description a number'],
    [{ name => 'x', image_url => [] }, 'invalid_field_value', 'image_url an array'],
    [{ name => 5 }, 'invalid_field_value', 'name a number'],
    [{ name => 'x', colour => 'red' }, 'invalid_request', 'an unknown field'],
) {
    my ($body, $code, $name) = @$t;
    my $r = req(POST => '/v1/api/categories', $K, $body);
    check_err($r, 400, $code, "create, $name");
    req(DELETE => "/v1/api/categories/$r->{json}{category}{id}", $K) if $r->{status} == 201;
}
check_err(req(POST => '/v1/api/categories', $K, '{"name":'), 400, 'invalid_request', 'create, malformed JSON');
check_err(req(POST => '/v1/api/categories', $K, '[]'), 400, 'invalid_request', 'create, a JSON array');
check_err(req(POST => '/v1/api/categories', $K), 400, 'invalid_request', 'create, no body');
is one("SELECT count(*) FROM categories WHERE name = 'x'"), 0, 'no refused create was stored';

# --- slugs: unique per workspace and locale --------------------------------------------

{
    my $a = mkcat($K, { name => 'Sport', slug => 'sport' });
    check_err(req(POST => '/v1/api/categories', $K, { name => 'Sport 2', slug => 'sport' }), 409, 'slug_taken',
              'same slug, same locale');
    check_err(req(POST => '/v1/api/categories', $K, { name => 'Sport' }), 409, 'slug_taken', 'same derived slug');
    my $fr = req(POST => '/v1/api/categories', $K, { name => 'Sport FR', slug => 'sport', locale => 'fr' });
    is $fr->{status}, 201, 'same slug, another locale: 201' or diag diag_resp($fr);
    my $o = req(POST => '/v1/api/categories', $K2, { name => 'Sport', slug => 'sport' });
    is $o->{status}, 201, 'same slug, another workspace: 201' or diag diag_resp($o);
    my $b = mkcat($K, { name => 'Culture' });
    check_err(req(PATCH => "/v1/api/categories/$b->{id}", $K, { slug => 'sport' }), 409, 'slug_taken',
              'patch to a taken slug');
    is req(GET => "/v1/api/categories/$b->{id}", $K)->{json}{category}{slug}, 'culture', 'the refused patch changed nothing';
    is req(PATCH => "/v1/api/categories/$a->{id}", $K, { slug => 'sport', name => 'Sports' })->{status}, 200,
        'patch keeping its own slug: 200';
    is req(DELETE => "/v1/api/categories/$a->{id}", $K)->{status}, 204, 'delete sport';
    is req(POST => '/v1/api/categories', $K, { name => 'Sport again', slug => 'sport' })->{status}, 201,
        'after a delete the slug is free';
}

# --- list ------------------------------------------------------------------------------

{
    my $lu = signup();
    my $lw = workspace($lu->{token}, 'Category list');
    my $LK = key($lu->{token}, $lw, 'l', 'categories:read', 'categories:write');
    is_deeply req(GET => '/v1/api/categories', $LK)->{json}, { categories => [] }, 'empty list: {categories: []}';
    my @made = map { mkcat($LK, $_) } (
        { name => 'Zebra', display_order => 1 }, { name => 'Apple', display_order => 2 },
        { name => 'Mango', display_order => 1 }, { name => 'Kiwi', display_order => -5 },
        { name => 'Banana' }, { name => 'Cherry', locale => 'fr', display_order => 1 },
    );
    my @want = map { $_->{name} } sort { $a->{display_order} <=> $b->{display_order} || $a->{name} cmp $b->{name} } @made;
    my $l = req(GET => '/v1/api/categories', $LK);
    is $l->{status}, 200, 'list: 200';
    is_deeply [sort keys %{$l->{json} // {}}], ['categories'], 'list: {categories} only, no pagination';
    is_deeply [map { $_->{name} } @{$l->{json}{categories} // []}], \@want, 'list: by display_order, then name';
    is_deeply [sort keys %{$l->{json}{categories}[0] // {}}], \@FIELDS, 'list: full records';
    my %byname = map { $_->{name} => $_ } @made;
    is_deeply $l->{json}{categories}[0], $byname{$want[0]}, 'list: the records as created';
    is scalar @{req(GET => '/v1/api/categories?limit=1&offset=2', $LK)->{json}{categories} // []}, 6,
        'list: limit and offset do not page it';
    mkcat($LK, { name => "Bulk $_", display_order => 10 }) for 1 .. 55;
    is scalar @{req(GET => '/v1/api/categories', $LK)->{json}{categories} // []}, 61, 'list: all 61, not 50';
    my %ids = map { $_->{id} => 1 } @{req(GET => '/v1/api/categories', $K2)->{json}{categories} // []};
    ok !grep({ $ids{$_->{id}} } @made), 'another workspace\'s list has none of them';
}

# --- get, patch, delete ----------------------------------------------------------------

my $theirs = mkcat($K2, { name => 'Theirs' });
{
    my $c = mkcat($K, { name => 'Patch me', description => 'old' });
    select(undef, undef, undef, 0.05);    # core sleep takes whole seconds
    my $p = req(PATCH => "/v1/api/categories/$c->{id}", $K,
                { name => 'Patched', description => 'new', accent_color => '#000', image_url => 'https://i.example/p.png',
                  display_order => 7 });
    is $p->{status}, 200, 'patch: 200' or diag diag_resp($p);
    my $n = $p->{json}{category} // {};
    is_deeply { map { $_ => $n->{$_} } qw(id name slug description accent_color image_url display_order locale created_at) },
        { id => $c->{id}, name => 'Patched', slug => 'patch-me', description => 'new', accent_color => '#000',
          image_url => 'https://i.example/p.png', display_order => 7, locale => 'en', created_at => $c->{created_at} },
        'patch: fields change, the slug is not derived again';
    isnt $n->{updated_at}, $c->{updated_at}, 'patch: updated_at moves';
    is_deeply req(GET => "/v1/api/categories/$c->{id}", $K)->{json}{category}, $n, 'patch: read back';
    $p = req(PATCH => "/v1/api/categories/$c->{id}", $K, {});
    is $p->{status}, 200, 'empty patch: 200';
    is(($p->{json}{category} // {})->{name}, 'Patched', 'empty patch: nothing changes');
    $p = req(PATCH => "/v1/api/categories/$c->{id}", $K, { slug => 'new-slug' });
    is(($p->{json}{category} // {})->{slug}, 'new-slug', 'patch slug');

    for my $t ([{ name => '' }, 'name_required', 'empty name'],
               [{ slug => 'No Good' }, 'invalid_slug', 'bad slug'],
               [{ accent_color => 'blue' }, 'invalid_field_value', 'bad accent_color'],
               [{ display_order => 'first' }, 'invalid_field_value', 'display_order a string'],
               [{ name => 5 }, 'invalid_field_value', 'name a number'],
               [{ colour => 'red' }, 'invalid_request', 'unknown field']) {
        my ($body, $code, $name) = @$t;
        check_err(req(PATCH => "/v1/api/categories/$c->{id}", $K, $body), 400, $code, "patch, $name");
    }
    is req(GET => "/v1/api/categories/$c->{id}", $K)->{json}{category}{name}, 'Patched', 'refused patches changed nothing';

    for my $id ($NOBODY, 'not-a-uuid', $theirs->{id}) {
        check_err(req(GET => "/v1/api/categories/$id", $K), 404, 'not_found', "get $id");
        check_err(req(PATCH => "/v1/api/categories/$id", $K, { name => 'mine' }), 404, 'not_found', "patch $id");
        check_err(req(DELETE => "/v1/api/categories/$id", $K), 404, 'not_found', "delete $id");
    }
    is_deeply req(GET => "/v1/api/categories/$theirs->{id}", $K2)->{json}{category}, $theirs,
        'the other workspace\'s category is untouched';

    # Deleting a category unsets it on its articles (drafts and published alike).
    my $d = mkcat($K, { name => 'Doomed' });
    my @arts = map { req(POST => '/v1/api/articles', $K, { title => "In doomed $_", category_id => $d->{id},
                                                          status => $_ })->{json}{article}{id} } qw(draft published);
    my $keep = req(POST => '/v1/api/articles', $K, { title => 'In patched', category_id => $c->{id} })->{json}{article}{id};
    is req(GET => "/v1/api/articles/$arts[0]", $K)->{json}{article}{category_id}, $d->{id}, 'the article is in the category';
    my $dr = req(DELETE => "/v1/api/categories/$d->{id}", $K);
    is $dr->{status}, 204, 'delete: 204';
    is $dr->{body}, '', 'delete: no body';
    check_err(req(GET => "/v1/api/categories/$d->{id}", $K), 404, 'not_found', 'get after delete');
    check_err(req(DELETE => "/v1/api/categories/$d->{id}", $K), 404, 'not_found', 'delete again');
    ok !grep({ $_->{id} eq $d->{id} } @{req(GET => '/v1/api/categories', $K)->{json}{categories} // []}),
        'delete: gone from the list';
    for my $i (0, 1) {
        my $a = req(GET => "/v1/api/articles/$arts[$i]", $K)->{json}{article} // {};
        ok exists $a->{category_id} && !defined $a->{category_id}, "delete: the article ($i) has no category now";
    }
    is req(GET => "/v1/api/articles/$keep", $K)->{json}{article}{category_id}, $c->{id},
        'delete: articles of other categories keep theirs';
    check_err(req(POST => '/v1/api/articles', $K, { title => 'Into the void', category_id => $d->{id} }), 400,
              'invalid_field_value', 'an article cannot take a deleted category');
}

# --- studio mirrors ---------------------------------------------------------------------

{
    my %m = (owner => $owner);
    for my $role (qw(admin editor author viewer)) {
        $m{$role} = signup();
        psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$m{$role}{user}{id}', '$role')");
    }
    my %writes = (owner => 1, admin => 1, editor => 1, author => 0, viewer => 0);
    my $base = "/v1/workspaces/$wid/categories";
    my $target = mkcat($K, { name => 'Studio target' });
    for my $role (qw(owner admin editor author viewer)) {
        my $t = $m{$role}{token};
        my $l = req(GET => $base, $t);
        is $l->{status}, 200, "studio $role: list 200" or diag diag_resp($l);
        is_deeply $l->{json}, req(GET => '/v1/api/categories', $K)->{json}, "studio $role: the same list as the key";
        is_deeply req(GET => "$base/$target->{id}", $t)->{json}, { category => $target }, "studio $role: get";
        if ($writes{$role}) {
            my $c = req(POST => $base, $t, { name => "Studio $role" });
            is $c->{status}, 201, "studio $role: create 201" or diag diag_resp($c);
            my $id = $c->{json}{category}{id} // 'none';
            is_deeply req(GET => "/v1/api/categories/$id", $K)->{json}, $c->{json}, "studio $role: the key sees it";
            my $p = req(PATCH => "$base/$id", $t, { description => "by $role" });
            is $p->{status}, 200, "studio $role: patch 200" or diag diag_resp($p);
            is(($p->{json}{category} // {})->{description}, "by $role", "studio $role: patched");
            is req(DELETE => "$base/$id", $t)->{status}, 204, "studio $role: delete 204";
            check_err(req(POST => $base, $t, { name => 'Studio target' }), 409, 'slug_taken', "studio $role: slug taken");
            check_err(req(POST => $base, $t, {}), 400, 'name_required', "studio $role: name required");
        } else {
            check_err(req(POST => $base, $t, { name => "Studio $role" }), 403, 'forbidden', "studio $role: create");
            check_err(req(PATCH => "$base/$target->{id}", $t, { name => 'Nope' }), 403, 'forbidden', "studio $role: patch");
            check_err(req(DELETE => "$base/$target->{id}", $t), 403, 'forbidden', "studio $role: delete");
        }
    }
    is_deeply req(GET => "/v1/api/categories/$target->{id}", $K)->{json}, { category => $target },
        'studio: the refused writes changed nothing';
    is one("SELECT count(*) FROM categories WHERE name IN ('Studio author', 'Studio viewer')"), 0,
        'studio: no refused create was stored';

    # Cookie session.
    my $ck = http(GET => "$base/$target->{id}", ['Cookie' => "cms_session=$owner->{token}"]);
    is $ck->{status}, 200, 'studio by cookie: get 200' or diag diag_resp($ck);

    # Another workspace: not a member; its ids through my path are not found.
    my $obase = "/v1/workspaces/$wid2/categories";
    for my $t ([GET => $obase], [POST => $obase, { name => 'Intruder' }], [GET => "$obase/$theirs->{id}"],
               [PATCH => "$obase/$theirs->{id}", { name => 'Intruder' }], [DELETE => "$obase/$theirs->{id}"]) {
        my ($meth, $p, $b) = @$t;
        check_err(req($meth, $p, $owner->{token}, $b), 403, 'not_workspace_member', "studio non-member: $meth $p");
    }
    for my $t ([GET => "$base/$theirs->{id}"], [PATCH => "$base/$theirs->{id}", { name => 'Mine' }],
               [DELETE => "$base/$theirs->{id}"], [GET => "$base/$NOBODY"], [GET => "$base/nope"]) {
        my ($meth, $p, $b) = @$t;
        check_err(req($meth, $p, $owner->{token}, $b), 404, 'not_found', "studio: $meth $p (not in my workspace)");
    }
    is_deeply req(GET => "/v1/api/categories/$theirs->{id}", $K2)->{json}{category}, $theirs,
        'studio: the other workspace\'s category is untouched';
    check_err(req(GET => $base), 401, 'missing_token', 'studio without a session');
    check_err(req(GET => $base, 'not.a.jwt'), 401, 'invalid_token', 'studio with a bad token');
    check_err(req(GET => $base, $K), 401, 'invalid_token', 'studio with an API key');
    check_err(req(GET => "/v1/workspaces/not-a-uuid/categories", $owner->{token}), 403, 'not_workspace_member',
              'studio, malformed workspace id');
}

# --- image_url: an absolute http(s) URL, or "" for none (issue 11) -----------------------
# javascript:, data:, vbscript:, relative and scheme-relative URLs, "http://" alone, spaces,
# control characters, userinfo, non-ASCII hosts: 400 invalid_url on POST and PATCH, over the
# secret-key routes and the studio mirror (t/lib/Cms/Fixtures.pm, check_url_field).

check_url_field($K, category => '/v1/api/categories', { name => 'URL check' }, 'image_url');
check_url_field($owner->{token}, category => "/v1/workspaces/$wid/categories", { name => 'Studio URL check' },
                'image_url');

done_testing();
