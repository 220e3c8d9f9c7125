# The field tables of every route with a fixed body (cms_fields through
# ngx_http_cms_json_read/_patch): what each table answers that the route tests do not
# already pin.  Per route: a wrong JSON type for each field is the field's "invalid" code
# (not its rule's: status 5 is invalid_field_value, status "live" invalid_status), null
# is what the route says it is (absent, unset, missing or a bad value), an array's items
# are checked one by one and the message names the item, limits count characters, an
# unknown field is refused naming it and read-only fields are dropped, and a refused
# write changes nothing.  Billing answers in the extension shape: missing 400, present
# but bad (null included) 422, both naming param.
use strict;
use warnings;
use utf8;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp check_err check_ext_err one signup signup_defaults
                     new_email workspace api_key key mk post facility extension ext_key
                     invoice record_path fail_path);
use JSON::PP ();

my ($T, $F) = (JSON::PP::true, JSON::PP::false);

signup_defaults(email_prefix => 'fields');

start_nginx();

my $owner = signup();
my $tok = $owner->{token};
my $wid = workspace($tok, 'Fields');
my $K = key($tok, $wid, 'fields', qw(articles:read articles:write categories:read categories:write));

# the message of a content error names what was wrong
sub says {
    my ($r, $re, $name) = @_;
    like(($r->{json} // {})->{error} // '', $re, "$name: the message says so");
}

# --- signup and login ---------------------------------------------------------------------

my $pw = 'long enough password';
for my $t (
    [{ email => [], password => $pw }, 400, 'invalid_field_value', 'email an array'],
    [{ email => undef, password => $pw }, 400, 'email_required', 'email null'],
    [{ email => new_email(), password => undef }, 400, 'invalid_request', 'password null'],
    [{ email => new_email(), password => $pw, name => 5 }, 400, 'invalid_field_value', 'name a number'],
    [{ email => new_email(), password => $pw, name => 'n' x 201 }, 400, 'invalid_field_value',
     'name of 201 characters'],
    [{ email => new_email(), password => 'p' x 1025 }, 400, 'invalid_field_value',
     'password of 1025 characters (too long, not too short)'],
    [{ email => new_email(), password => $pw, role => 'owner' }, 400, 'invalid_request',
     'unknown field role'],
) {
    my ($body, $status, $code, $name) = @$t;
    check_err(req(POST => '/v1/auth/signup', undef, $body), $status, $code, "signup, $name");
}
my $r = req(POST => '/v1/auth/signup', undef, { email => new_email(), password => $pw, role => 1 });
says($r, qr/\brole\b/, 'signup, unknown field');
$r = req(POST => '/v1/auth/signup', undef, { email => new_email(), password => $pw, name => 'é' x 200 });
is $r->{status}, 201, 'signup, name of 200 two-byte characters: 201' or diag diag_resp($r);
$r = req(POST => '/v1/auth/signup', undef, { email => new_email(), password => $pw, name => undef });
is $r->{status}, 201, 'signup, name null: 201' or diag diag_resp($r);
is(($r->{json}{user} // {})->{name}, '', 'signup, name null: ""');

for my $t (
    [{ email => 5, password => $pw }, 400, 'invalid_field_value', 'email a number'],
    [{ email => $owner->{email}, password => {} }, 400, 'invalid_field_value', 'password an object'],
    [{ email => $owner->{email}, password => $pw, remember => $T }, 400, 'invalid_request',
     'unknown field remember'],
    [{ password => $pw }, 400, 'email_required', 'email missing'],
    # no rule on a login's values: a short password is only a wrong one
    [{ email => $owner->{email}, password => 'short' }, 401, 'invalid_credentials', 'a short password'],
    [{ email => 'not an email', password => $pw }, 401, 'invalid_credentials', 'not an email'],
) {
    my ($body, $status, $code, $name) = @$t;
    check_err(req(POST => '/v1/auth/login', undef, $body), $status, $code, "login, $name");
}

# --- workspaces ---------------------------------------------------------------------------

for my $t (
    [{ name => undef }, 'name_required', 'name null'],
    [{ name => '' }, 'name_required', 'name ""'],
    [{ name => 'n' x 201 }, 'invalid_field_value', 'name of 201 characters'],
    [{ name => 'W', default_locale => 5 }, 'invalid_field_value', 'default_locale a number'],
    [{ name => 'W', default_locale => 'x y' }, 'invalid_field_value', "default_locale 'x y'"],
    [{ name => 'W', default_locale => 'toolongsubtag' }, 'invalid_field_value',
     'default_locale a subtag of 13 letters'],
    [{ name => 'W', owner => 'me' }, 'invalid_request', 'unknown field owner'],
) {
    my ($body, $code, $name) = @$t;
    check_err(req(POST => '/v1/workspaces', $tok, $body), 400, $code, "create workspace, $name");
}
$r = req(POST => '/v1/workspaces', $tok, { name => 'W', default_locale => undef, id => 'x', plan => 'pro' });
is $r->{status}, 201, 'create workspace, default_locale null and read-only fields: 201' or diag diag_resp($r);
is(($r->{json}{workspace} // {})->{default_locale}, 'en', 'default_locale null: en');
isnt(($r->{json}{workspace} // {})->{id}, 'x', 'a read-only id is dropped');

# --- API keys -----------------------------------------------------------------------------

my $kp = "/v1/workspaces/$wid/api-keys";
my $nkeys = one("SELECT count(*) FROM api_keys");
for my $t (
    [{ name => 5, scopes => ['articles:read'] }, 'invalid_field_value', 'name a number'],
    [{ name => undef, scopes => ['articles:read'] }, 'name_required', 'name null'],
    [{ name => 'k', scopes => 'articles:read' }, 'invalid_scope', 'scopes a string'],
    [{ name => 'k', scopes => undef }, 'invalid_scope', 'scopes null'],
    [{ name => 'k', scopes => ['articles:read', 5] }, 'invalid_scope', 'a scope a number'],
    [{ name => 'k', scopes => [undef] }, 'invalid_scope', 'a scope null'],
    [{ name => 'k', scopes => [('articles:read') x 65] }, 'invalid_scope', '65 scopes'],
    [{ name => 'k', scopes => ['articles:read'], id => 'x' }, 'invalid_request', 'id (not taken here)'],
) {
    my ($body, $code, $name) = @$t;
    check_err(req(POST => $kp, $tok, $body), 400, $code, "create key, $name");
}
is one("SELECT count(*) FROM api_keys"), $nkeys, 'the refused keys wrote nothing';
$r = req(POST => $kp, $tok, { name => 'k', scopes => ['categories:read', 'articles:read', 'nope'] });
says($r, qr/scopes\[2\]/, 'create key, an unknown scope');
my $rk = api_key($tok, $wid, 'repeats', qw(categories:read articles:read categories:read));
is_deeply $rk->{api_key}{scopes}, [qw(categories:read articles:read)],
    'a repeated scope is kept once, in the order given';
$rk = api_key($tok, $wid, 'sixty-four', ('articles:read') x 64);
is_deeply $rk->{api_key}{scopes}, ['articles:read'], '64 scopes (the bound) are taken';

# --- articles -----------------------------------------------------------------------------

my $na = one("SELECT count(*) FROM articles");
for my $t (
    [{ title => 'x', status => 5 }, 'invalid_field_value', 'status a number (a wrong type)'],
    [{ title => 'x', status => '' }, 'invalid_status', 'status "" (not a status)'],
    [{ title => 'x', status => 'x' x 21 }, 'invalid_field_value', 'status of 21 characters'],
    [{ title => 'x', slug => 5 }, 'invalid_field_value', 'slug a number'],
    [{ title => 'x', slug => '' }, 'invalid_slug', 'slug ""'],
    [{ title => 'x', slug => 'Not A Slug' }, 'invalid_slug', 'slug with spaces'],
    [{ title => 'x', slug => 'a' x 1001 }, 'invalid_field_value', 'slug of 1001 characters'],
    [{ title => 'x', tags => undef }, 'invalid_field_value', 'tags null'],
    [{ title => 'x', tags => [('t') x 51] }, 'invalid_field_value', '51 tags'],
    [{ title => 'x', tags => ['ok', 'x' x 101] }, 'invalid_field_value', 'a tag of 101 characters'],
    [{ title => 'x', tags => ['ok', undef] }, 'invalid_field_value', 'a tag null'],
    [{ title => 'x', tags => [['nested']] }, 'invalid_field_value', 'a tag an array'],
    [{ title => 'x', clear_category => 1 }, 'invalid_field_value', 'clear_category a number'],
    [{ title => 'x', autosave => 'no' }, 'invalid_field_value', 'autosave a string'],
    [{ title => 'x', read_time_minutes => 10001 }, 'invalid_field_value', 'read_time_minutes 10001'],
    [{ title => 'x', published_at => [] }, 'invalid_field_value', 'published_at an array'],
    [{ title => 'x', author_id => 5 }, 'invalid_field_value', 'author_id a number'],
    [{ title => 'x', focus_keyword => 'k' x 201 }, 'invalid_field_value', 'focus_keyword of 201 characters'],
    [{ title => 'x', image_url => 'u' x 2049 }, 'invalid_field_value', 'image_url of 2049 characters'],
    [{ title => 'x', excerpt => 'e' x 2001 }, 'invalid_field_value', 'excerpt of 2001 characters'],
    [{ title => 'x', workspace => $wid }, 'invalid_request', 'unknown field workspace'],
) {
    my ($body, $code, $name) = @$t;
    check_err(req(POST => '/v1/api/articles', $K, $body), 400, $code, "create article, $name");
}
is one("SELECT count(*) FROM articles"), $na, 'the refused articles wrote nothing';
$r = req(POST => '/v1/api/articles', $K, { title => 'x', tags => ['ok', 'fine', ''] });
says($r, qr/tags\[2\]/, 'create article, an empty tag');
$r = req(POST => '/v1/api/articles', $K, { title => 'x', status => 'live' });
says($r, qr/status must be one of: draft, in_review, scheduled, published, archived/,
     'create article, status live');

# accepted shapes: the bounds themselves, nulls that mean "leave it", 50 tags
my $a = mk($K, { title => 't' x 500, tags => [map { "t$_" } 1 .. 50], is_featured => undef,
                 read_time_minutes => -3, published_at => '', category_id => undef,
                 autosave => undef, slug => undef, id => 'ignored', comment_count => 9 });
is scalar @{$a->{tags}}, 50, 'create with 50 tags';
is $a->{is_featured}, $F, 'is_featured null: the default';
is $a->{published_at}, undef, 'published_at "": none';
is $a->{category_id}, undef, 'category_id null: none';
is $a->{comment_count}, 0, 'comment_count (read-only) dropped';
like $a->{slug}, qr/^t+$/, 'slug null: derived from the title';
is $a->{read_time_minutes}, 1, 'read_time_minutes not > 0: estimated';

my $ap = "/v1/api/articles/$a->{id}";
$r = req(PATCH => $ap, $K, { title => undef, subtitle => undef, is_featured => undef, tags => ['a'] });
is $r->{status}, 200, 'patch title, subtitle and is_featured null: 200' or diag diag_resp($r);
is(($r->{json}{article} // {})->{title}, 't' x 500, 'title null: unchanged');
is_deeply(($r->{json}{article} // {})->{tags}, ['a'], 'tags replaced');
$r = req(PATCH => $ap, $K, { excerpt => 'from the alias' });
is(($r->{json}{article} // {})->{subtitle}, 'from the alias', 'excerpt sets subtitle');
$r = req(PATCH => $ap, $K, { subtitle => 'wins', excerpt => 'loses' });
is(($r->{json}{article} // {})->{subtitle}, 'wins', 'subtitle wins over excerpt');
check_err(req(PATCH => $ap, $K, { title => '' }), 400, 'title_required', 'patch title ""');
check_err(req(PATCH => $ap, $K, { status => [] }), 400, 'invalid_field_value', 'patch status an array');
check_err(req(PATCH => $ap, $K, { tags => [1] }), 400, 'invalid_field_value', 'patch a tag a number');
is one("SELECT title FROM articles WHERE id = '$a->{id}'"), 't' x 500, 'the refused patches changed nothing';

# --- billing (extension shape) ------------------------------------------------------------

my $fa = facility();
my $ea = extension($fa);
my $EK = ext_key(fac => $fa, ext => $ea);
my $inv = invoice($fa, 1, '100');
for my $t (
    ['{"reference": "a", "amount": null}', 400, 'invalid_request', 'amount', 'amount null'],
    ['{"reference": "a", "amount": 1e16}', 422, 'validation_error', 'amount', 'amount over 10^15'],
    ['{"reference": "a", "amount": -0.0}', 422, 'validation_error', 'amount', 'amount -0.0'],
    ['{"reference": "a", "amount": 100, "method": null, "note": 1}', 400, 'invalid_request', 'note',
     'unknown field note'],
) {
    my ($body, $status, $type, $param, $name) = @$t;
    check_ext_err(post(record_path($inv), $EK, $body), $status, $type, $param, "record, $name");
}
$r = post(record_path($inv), $EK, { reference => 'é' x 255, amount => 100, method => undef });
is $r->{status}, 200, 'record, reference of 255 two-byte characters and method null: 200'
    or diag diag_resp($r);
my $inv2 = invoice($fa, 1, '100');
check_ext_err(post(fail_path($inv2), $EK, {}), 400, 'invalid_request', 'reason', 'fail, reason missing');
check_ext_err(post(fail_path($inv2), $EK, { reason => 'a', extra => 1 }), 400, 'invalid_request', 'extra',
              'fail, unknown field');

done_testing();
