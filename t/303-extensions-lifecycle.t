# The extension lifecycle after install: reload (running -> reloading; back to running on
# POST /v1/ext/control/drain-complete from the extension's own key, or when
# cms_extensions_reload_grace passes, on worker 0's tick; 409 invalid_state unless running);
# the UI token (a user session, Bearer or cookie; the manifest's required_privilege checked
# against the user's privileges in the extension's facility: 403 without it, 404 outside
# the user's facilities, 422 facility_id when several match unless ?facility_id= picks one;
# an HS256 JWT {sub, ext, fac, aud, iat, exp} signed with HMAC-SHA256(cms_secret, "cms ui
# token v1"), verified here, and never accepted as a session); key rotation (a new live key;
# the previous ones keep working until cms_extensions_rotation_grace passes, then 401; the
# new one keeps working).
use strict;
use warnings;
use Cms::Test;
use JSON::PP ();
use Digest::SHA qw(hmac_sha256);
use Time::HiRes qw(time sleep);
use File::Path qw(make_path);
use MIME::Base64 qw(encode_base64url decode_base64url);
use POSIX ();

# --- helpers: t/lib/Cms/Fixtures.pm (shared with the other API tests) and
# t/lib/Cms/ExtFixtures.pm (admin keys, cms-admin, manifests, installs) ------------
use Cms::Fixtures qw(base62 crc32 make_key master_secret one req_spec req idem post diag_resp
                     facility redis_cli $UUID);
use Cms::ExtFixtures qw(:all);
use Cms::Prom;

# Both graces are an hour: no check made inside one can outlive it, however slow the
# machine; a test ends a grace by moving its stored deadline (reload_deadline, a key's
# expires_at) to now, which is what the clock would have done.
my $RELOAD_GRACE = 3600;
my $ROTATION_GRACE = 3600;
set_conf_defaults(http_config => "cms_extensions_manifests $MDIR;\n"
                  . "cms_extensions_reload_grace ${RELOAD_GRACE}s;\n"
                  . "cms_extensions_rotation_grace ${ROTATION_GRACE}s;\n"
                  . "cms_ui_token_ttl 2m;",
                  config => "location = /status { cms_status; }\n");
start_nginx();

put_manifest('lc.toml', manifest(name => 'lc-demo', required_privilege => 'lc:view'));
put_manifest('lc2.toml', manifest(name => 'lc-other', required_privilege => 'lc:view'));
put_manifest('nocontrol.toml', manifest(name => 'no-control', privileges => ['ext:billing:read']));
put_manifest('open.toml', manifest(name => 'open-view', required_privilege => 'open:view'));

my $fa = facility();
my $KA = admin_key($fa);
my %KEY;
for my $f (qw(lc lc2 nocontrol open)) {
    my $r = install($KA, "file:$f.toml");
    is $r->{status}, 201, "install $f.toml" or diag diag_resp($r);
    $KEY{$f} = $r->{json}{api_key};
}
ok wait_until(5, sub { one("SELECT count(*) FROM extensions WHERE facility_id = '$fa' AND status = 'running'") == 4 }),
   'all four running';
sub st { ext_status($fa, $_[0]) }
sub listed_status {
    my $x = req(GET => '/v1/extensions?limit=100', $KA);
    my ($e) = grep { $_->{name} eq $_[0] } @{$x->{json}{data} // []};
    return ($e // {})->{status};
}

# --- reload -> drain-complete -> running ---------------------------------------------------
{
    my $r = post('/v1/extensions/lc-demo/reload', $KA);
    is $r->{status}, 200, 'reload: 200' or diag diag_resp($r);
    is_deeply $r->{json}, { name => 'lc-demo', status => 'reloading' }, 'reload: {name, status: reloading}';
    is st('lc-demo'), 'reloading', 'stored reloading';
    is listed_status('lc-demo'), 'reloading', 'listed reloading';
    check_err(post('/v1/extensions/lc-demo/reload', $KA), 409, 'invalid_state', undef, 'reload while reloading: 409');
    is st('lc-other'), 'running', 'the other extensions still running';

    # drain-complete from other keys does not end this reload
    is post('/v1/ext/control/drain-complete', $KEY{lc2})->{status}, 200, 'another extension\'s drain-complete: 200';
    is st('lc-demo'), 'reloading', 'and lc-demo still reloading';
    check_err(post('/v1/ext/control/drain-complete', $KEY{nocontrol}), 403, 'insufficient_scope', undef,
              'drain-complete with a key without ext:control:write');
    check_err(req(POST => '/v1/ext/control/drain-complete', $KEY{lc}), 400, 'invalid_request', 'Idempotency-Key',
              'drain-complete without Idempotency-Key');
    check_err(post('/v1/ext/control/drain-complete', $KA), 401, 'unauthenticated', undef, 'drain-complete with an admin key');
    is st('lc-demo'), 'reloading', 'still reloading';

    my $t0 = time;
    my $d = post('/v1/ext/control/drain-complete', $KEY{lc});
    is $d->{status}, 200, 'drain-complete: 200' or diag diag_resp($d);
    is_deeply $d->{json}, { acknowledged => JSON::PP::true }, '{acknowledged: true}';
    is st('lc-demo'), 'running', sprintf 'running at once (%.2f s), not after the grace', time - $t0;
    is listed_status('lc-demo'), 'running', 'listed running';
    my $again = post('/v1/ext/control/drain-complete', $KEY{lc});
    ok $again->{status} == 200 && $again->{json}{acknowledged}, 'drain-complete when running: acknowledged, safe to repeat';
    is st('lc-demo'), 'running', 'still running';
    my $r2 = post('/v1/extensions/lc-demo/reload', $KA);
    is $r2->{status}, 200, 'a second reload cycle: 200' or diag diag_resp($r2);
    is post('/v1/ext/control/drain-complete', $KEY{lc})->{status}, 200, 'drained';
    is st('lc-demo'), 'running', 'running again';
}

# --- reload -> the grace period ends -> running ------------------------------------------
{
    my $r = post('/v1/extensions/lc-other/reload', $KA);
    is $r->{status}, 200, 'reload lc-other' or diag diag_resp($r);
    my $where = "facility_id = '$fa' AND name = 'lc-other'";
    is one("SELECT extract(epoch FROM reload_deadline - updated_at)::int FROM extensions WHERE $where"),
       $RELOAD_GRACE, 'reload_deadline is cms_extensions_reload_grace after the reload';
    # two rounds counted: the second began after the reload, and ran whole
    ok Cms::Prom::wait_job_runs('extensions', 2, 30), 'a whole tick ran since the reload';
    is st('lc-other'), 'reloading', 'within the grace a tick leaves it reloading';
    # the grace ends
    psql("UPDATE extensions SET reload_deadline = now() WHERE $where");
    ok Cms::Prom::wait_job_runs('extensions', 2, 30), 'a whole tick ran since the grace ended';
    is st('lc-other'), 'running', 'the first tick after the grace made it running, without drain-complete';
    is listed_status('lc-other'), 'running', 'listed running';
    is one("SELECT count(*) FROM extensions WHERE status = 'reloading'"), 0, 'nothing left reloading';
}

# --- reload: only a running extension, only one's own ------------------------------------
{
    # worker 0's tick may make it running again in between: then it reloaded; drain and try again
    my $x;
    for (1 .. 3) {
        psql("UPDATE extensions SET status = 'installing' WHERE facility_id = '$fa' AND name = 'open-view'");
        $x = post('/v1/extensions/open-view/reload', $KA);
        last unless $x->{status} == 200;
        post('/v1/ext/control/drain-complete', $KEY{open});
    }
    check_err($x, 409, 'invalid_state', undef, 'reload of an installing extension: 409')
        or diag 'status now: ' . st('open-view');
    ok wait_status($fa, 'open-view', 'running'), 'the tick finishes the install';
    check_err(post('/v1/extensions/nope/reload', $KA), 404, 'not_found', undef, 'reload an unknown extension');
    my $fb = facility();
    check_err(post('/v1/extensions/lc-demo/reload', admin_key($fb)), 404, 'not_found', undef,
              'reload another facility\'s extension');
    is st('lc-demo'), 'running', 'untouched';
}

# --- UI tokens ---------------------------------------------------------------------------------
my $seq = 0;
sub user {
    my $email = sprintf 'ui%d-%d@example.com', ++$seq, $$;
    my $r = req(POST => '/v1/auth/signup', undef, { email => $email, password => "password number $seq", name => "U$seq" });
    die 'signup: ' . diag_resp($r) unless $r->{status} == 201;
    return { id => $r->{json}{user}{id}, token => $r->{json}{token}, email => $email };
}
sub member { my ($fac, $u, @privs) = @_; cms_admin('facility', 'member', '--facility', $fac, '--email', $u->{email},
                                                   '--privileges', join(',', @privs)) }
my $UI_KEY = hmac_sha256('cms ui token v1', master_secret());
sub ui { my ($tok, $name, $q) = @_; req(GET => "/v1/extensions/$name/ui-token" . ($q // ''), $tok) }
sub jwt_parts {
    my $t = shift // '';
    my ($h, $p, $s) = split /\./, $t, -1;
    return (undef) unless defined $s;
    my $hj = eval { $JSON->decode(decode_base64url($h)) };
    my $pj = eval { $JSON->decode(decode_base64url($p)) };
    return ($hj, $pj, $s, "$h.$p");
}
{
    my $ext_id = one("SELECT id FROM extensions WHERE facility_id = '$fa' AND name = 'lc-demo'");
    my $u1 = user();
    member($fa, $u1, 'lc:view', 'other:thing');
    my $t0 = time;
    my $r = ui($u1->{token}, 'lc-demo');
    my $t1 = time;
    is $r->{status}, 200, 'ui-token: a member holding lc:view gets 200' or diag diag_resp($r);
    is_deeply [sort keys %{$r->{json} // {}}], [qw(expires_in token)], '{token, expires_in}';
    is $r->{json}{expires_in}, 120, 'expires_in = cms_ui_token_ttl (2m)';
    my ($h, $c, $sig, $signed) = jwt_parts($r->{json}{token});
    is_deeply $h, { alg => 'HS256', typ => 'JWT' }, 'an HS256 JWT';
    is $sig, encode_base64url(hmac_sha256($signed, $UI_KEY)),
       'signed with HMAC-SHA256 under HMAC-SHA256(cms_secret, "cms ui token v1")';
    isnt $sig, encode_base64url(hmac_sha256($signed, hmac_sha256('cms session jwt v1', master_secret()))),
       'not with the session key';
    is_deeply [sort keys %{$c // {}}], [qw(aud exp ext fac iat sub)], 'claims: sub, ext, fac, aud, iat, exp';
    is $c->{sub}, $u1->{id}, 'sub: the user';
    is $c->{ext}, $ext_id, 'ext: the extension id';
    is $c->{fac}, $fa, 'fac: the facility';
    is $c->{aud}, 'extension-ui', 'aud: extension-ui';
    ok $c->{iat} >= int($t0) && $c->{iat} <= $t1, 'iat: the time of the request';
    is $c->{exp} - $c->{iat}, 120, 'exp = iat + ttl';

    my $me = req(GET => '/v1/me', $u1->{token});
    is $me->{status}, 200, 'the session itself works on /v1/me' or diag diag_resp($me);
    is req(GET => '/v1/me', $r->{json}{token})->{status}, 401, 'the UI token is not a session: /v1/me 401';
    is http(GET => '/v1/me', [Cookie => "cms_session=$r->{json}{token}"])->{status}, 401, 'nor as the session cookie';
    check_err(ui($r->{json}{token}, 'lc-demo'), 401, 'unauthenticated', undef, 'nor to get another UI token');
    check_err(req(GET => '/v1/extensions', $r->{json}{token}), 401, 'unauthenticated', undef, 'nor as an admin credential');
    check_err(req(GET => "/v1/ext/billing/invoices/" . one("SELECT gen_random_uuid()"), $r->{json}{token}), 401,
              'unauthenticated', undef, 'nor as an extension key');

    my $ck = http(GET => '/v1/extensions/lc-demo/ui-token', [Cookie => "cms_session=$u1->{token}"]);
    is $ck->{status}, 200, 'the session as the cms_session cookie: 200' or diag diag_resp($ck);

    # refused
    check_err(ui(undef, 'lc-demo'), 401, 'unauthenticated', undef, 'ui-token without a session');
    check_err(ui('not.a.jwt', 'lc-demo'), 401, 'unauthenticated', undef, 'ui-token with garbage');
    check_err(ui($KA, 'lc-demo'), 401, 'unauthenticated', undef, 'ui-token with an admin key');
    check_err(ui($KEY{lc}, 'lc-demo'), 401, 'unauthenticated', undef, 'ui-token with the extension\'s key');
    {
        my ($hh, $pp) = split /\./, $u1->{token};
        my $forged = "$hh.$pp." . encode_base64url(hmac_sha256("$hh.$pp", $UI_KEY));
        check_err(ui($forged, 'lc-demo'), 401, 'unauthenticated', undef, 'a session re-signed with the UI key');
    }

    my $u2 = user();
    member($fa, $u2, 'other:thing', 'lc:vie', 'lc:view:x');
    check_err(ui($u2->{token}, 'lc-demo'), 403, 'insufficient_scope', undef, 'a member without lc:view: 403');
    my $u0 = user();
    member($fa, $u0);
    check_err(ui($u0->{token}, 'lc-demo'), 403, 'insufficient_scope', undef, 'a member without privileges: 403');
    is ui($u2->{token}, 'open-view')->{status}, 403, 'open-view needs open:view: 403 too';
    my $u3 = user();
    check_err(ui($u3->{token}, 'lc-demo'), 404, 'not_found', undef, 'a user outside the facility: 404');
    check_err(ui($u1->{token}, 'nope'), 404, 'not_found', undef, 'an unknown extension: 404');
    check_err(ui($u1->{token}, 'Bad_Name'), 404, 'not_found', undef, 'a malformed name: 404');

    # privileges change with the membership
    member($fa, $u2, 'lc:view');
    is ui($u2->{token}, 'lc-demo')->{status}, 200, 'granted lc:view: 200';
    member($fa, $u2, '');
    check_err(ui($u2->{token}, 'lc-demo'), 403, 'insufficient_scope', undef, 'privileges taken away: 403 at once');

    # logout ends it
    my $u4 = user();
    member($fa, $u4, 'lc:view');
    is ui($u4->{token}, 'lc-demo')->{status}, 200, 'before logout: 200';
    my $lo = post('/v1/auth/logout', $u4->{token});
    ok $lo->{status} =~ /^20[04]$/, 'logout' or diag diag_resp($lo);
    check_err(ui($u4->{token}, 'lc-demo'), 401, 'unauthenticated', undef, 'after logout: 401');

    # installed in two of the user's facilities
    my $fb = facility();
    my $KB = admin_key($fb);
    is install($KB, 'file:lc.toml')->{status}, 201, 'lc-demo in facility B too';
    my $ext_b = one("SELECT id FROM extensions WHERE facility_id = '$fb' AND name = 'lc-demo'");
    my $u5 = user();
    member($fa, $u5, 'lc:view');
    member($fb, $u5, 'lc:view');
    check_err(ui($u5->{token}, 'lc-demo'), 422, 'validation_error', 'facility_id', 'in two of the user\'s facilities: 422');
    my $pb = ui($u5->{token}, 'lc-demo', "?facility_id=$fb");
    is $pb->{status}, 200, '?facility_id= picks B' or diag diag_resp($pb);
    my (undef, $cb) = jwt_parts($pb->{json}{token});
    ok $cb && $cb->{fac} eq $fb && $cb->{ext} eq $ext_b, 'a token for B\'s extension in B';
    my (undef, $ca) = jwt_parts(ui($u5->{token}, 'lc-demo', "?facility_id=$fa")->{json}{token});
    ok $ca && $ca->{fac} eq $fa && $ca->{ext} eq $ext_id, '?facility_id= picks A';
    check_err(ui($u5->{token}, 'lc-demo', '?facility_id=nope'), 422, 'validation_error', 'facility_id',
              'facility_id not a UUID');
    my $fc = facility();
    check_err(ui($u5->{token}, 'lc-demo', "?facility_id=$fc"), 404, 'not_found', undef,
              'facility_id of a facility the user is not in');
    check_err(ui($u1->{token}, 'lc-demo', "?facility_id=$fb"), 404, 'not_found', undef,
              'facility_id of the other facility, where u1 is not a member');
    member($fb, $u5, 'other');
    check_err(ui($u5->{token}, 'lc-demo', "?facility_id=$fb"), 403, 'insufficient_scope', undef,
              'in B without the privilege: 403');
    is ui($u5->{token}, 'lc-demo', "?facility_id=$fa")->{status}, 200, 'in A with it: 200';
}

# --- key rotation -----------------------------------------------------------------------------
{
    my $inv = one("INSERT INTO invoices (facility_id, livemode, patient_id, amount, currency)
                   VALUES ('$fa', true, 'p', 10, 'XOF') RETURNING id");
    my $get = sub { req(GET => "/v1/ext/billing/invoices/$inv", $_[0])->{status} };
    my $K0 = $KEY{lc};
    is $get->($K0), 200, 'the install key works';
    my $ext = one("SELECT id FROM extensions WHERE facility_id = '$fa' AND name = 'lc-demo'");
    my $end_window = sub { psql("UPDATE extension_keys SET expires_at = now() WHERE extension_id = '$ext'"
                                . " AND expires_at > now()") };
    my $r = post('/v1/extensions/lc-demo/keys/rotate', $KA);
    is $r->{status}, 200, 'rotate: 200' or diag diag_resp($r);
    my $j = $r->{json} // {};
    is_deeply [sort keys %$j], [sort qw(name api_key_id previous_keys_expire_at api_key)], 'rotate: its fields';
    is $j->{name}, 'lc-demo', 'name';
    my $K1 = $j->{api_key};
    like $K1 // '', qr/^sk_live_[0-9A-Za-z]{40,}$/, 'a new sk_live_ key';
    isnt $K1, $K0, 'not the old one';
    is one("SELECT count(*) FROM extension_keys WHERE id = '$j->{api_key_id}' AND extension_id = '$ext'
            AND secret_hash = decode('" . unpack('H*', hmac_sha256($K1, $PEPPER)) . "', 'hex')"), 1,
       'api_key_id is the new key, stored as its HMAC';
    like $j->{previous_keys_expire_at} // '', $TS, 'previous_keys_expire_at in RFC 3339';
    # the new key's created_at is the rotation's now(): the window is exactly the grace
    # (to the millisecond it is written in)
    my $at = "'$j->{previous_keys_expire_at}'::timestamptz";
    is one("SELECT abs(extract(epoch FROM $at - created_at - make_interval(secs => $ROTATION_GRACE))) < 0.001"
           . " FROM extension_keys WHERE id = '$j->{api_key_id}'"), 't',
       'previous_keys_expire_at = the rotation + cms_extensions_rotation_grace';
    is one("SELECT count(*) FROM extension_keys WHERE extension_id = '$ext' AND id <> '$j->{api_key_id}'"
           . " AND abs(extract(epoch FROM expires_at - $at)) < 0.001"), 1, 'the previous key expires then';
    is one("SELECT array_to_string(privileges, ',') FROM extension_keys WHERE id = '$j->{api_key_id}'"),
       'ext:billing:read,ext:billing:write,ext:control:write', 'the new key holds the manifest\'s privileges';

    is $get->($K0), 200, 'inside the window: the old key works';
    is $get->($K1), 200, 'inside the window: the new key works';
    is post('/v1/ext/control/drain-complete', $K0)->{status}, 200, 'the old key writes too';

    # the window ends
    $end_window->();
    check_err(req(GET => "/v1/ext/billing/invoices/$inv", $K0), 401, 'unauthenticated', undef,
              'after the window: the old key 401');
    check_err(post('/v1/ext/control/drain-complete', $K0), 401, 'unauthenticated', undef, 'for writes too');
    is $get->($K1), 200, 'after the window: the new key works';

    # two rotations in a row: both earlier keys until their windows end, the newest after
    my $a = post('/v1/extensions/lc-demo/keys/rotate', $KA);
    my $K2 = $a->{json}{api_key};
    my $b = post('/v1/extensions/lc-demo/keys/rotate', $KA);
    my $K3 = $b->{json}{api_key};
    ok $K2 && $K3 && $K2 ne $K3, 'two more rotations';
    is_deeply [map { $get->($_) } $K0, $K1, $K2, $K3], [401, 200, 200, 200],
        'inside the window: K1 and K2 work, K0 stays expired';
    $end_window->();
    is_deeply [map { $get->($_) } $K0, $K1, $K2, $K3], [401, 401, 401, 200], 'after it: only the newest';
    is one("SELECT count(*) FROM extension_keys WHERE extension_id = '$ext' AND (expires_at IS NULL OR expires_at > now())"),
       1, 'one live key left';

    # refused rotations
    check_err(post('/v1/extensions/nope/keys/rotate', $KA), 404, 'not_found', undef, 'rotate an unknown extension');
    check_err(post('/v1/extensions/lc-demo/keys/rotate', admin_key(facility())), 404, 'not_found', undef,
              'rotate another facility\'s extension');
    check_err(post('/v1/extensions/lc-demo/keys/rotate', admin_key($fa, privs => ['admin:extensions:view'])), 403,
              'insufficient_scope', undef, 'rotate with a view-only credential');
    check_err(post('/v1/extensions/lc-demo/keys/rotate', $K3), 403, 'insufficient_scope', undef,
              'rotate with the extension\'s own key (a credential of the wrong kind)');
    is $get->($K3), 200, 'the newest key still works';

    # a revoked key is not revived by a rotation
    my $KR = post('/v1/extensions/lc-other/keys/rotate', $KA)->{json}{api_key};
    psql("UPDATE extension_keys SET revoked_at = now() WHERE secret_hash = decode('"
         . unpack('H*', hmac_sha256($KR, $PEPPER)) . "', 'hex')");
    is $get->($KR), 401, 'a revoked key: 401';
    post('/v1/extensions/lc-other/keys/rotate', $KA);
    is $get->($KR), 401, 'still 401 after another rotation';
}

done_testing();
