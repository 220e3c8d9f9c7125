# Credentials at rest and in caches (issue 11): after extension installs, key rotations
# (live and sandbox) and their idempotent replays, nothing in Redis (every key, every
# value, every stream entry), in the error and access logs or in the database holds a
# usable key (sk_, svc_, pk_, whsec_) or an extension's secret config value; the kept
# answers are sealed (AES-256-GCM, the record's Redis key as associated data: a record
# copied under another key does not open) and still replay byte for byte.  Every answer
# carrying a key or a token has Cache-Control: no-store, replays included.  Rotation
# covers sandbox keys ({"mode": "sandbox"}): a new sk_sandbox_ key, the old sandbox keys
# expire after the grace, live keys untouched; the mode is checked.
use strict;
use warnings;
use Cms::Test;
use JSON::PP ();
use Digest::SHA qw(sha256_hex);
use MIME::Base64 qw(decode_base64);

use Cms::Fixtures qw(make_key one req idem post diag_resp facility redis_cli extension ext_key
                     invoice invoice_path $UUID);
use Cms::ExtFixtures qw(:all);

my $GRACE = 2;
set_conf_defaults(http_config => "cms_extensions_manifests $MDIR;\n"
                  . "cms_extensions_rotation_grace ${GRACE}s;");
start_nginx();

# a config secret: sealed in the database, and never in Redis or a log
my $CFG_SECRET = 'cfg-' . join '', map { ('a' .. 'z')[rand 26] } 1 .. 24;
put_manifest('seal.toml', manifest(name => 'seal-demo', required_privilege => 'seal:view',
                                   fields => [[api_token => { type => 'secret', required => JSON::PP::true }]]));

my $fa = facility();
my $KA = admin_key($fa);
my $KA_ID = one("SELECT id FROM admin_credentials WHERE key_prefix = '" . substr($KA, 0, 13) . "'");
my @ISSUED;                                 # every key an answer gave out

sub no_store {
    my ($r, $what) = @_;
    is $r->{headers}{'cache-control'}, 'no-store', "$what: Cache-Control: no-store";
}

# --- install, and its replay ---------------------------------------------------------------
my $k_install = idem();
my $inst = install($KA, 'file:seal.toml', { api_token => $CFG_SECRET }, 'Idempotency-Key' => $k_install);
is $inst->{status}, 201, 'install: 201' or diag diag_resp($inst);
like $inst->{json}{api_key} // '', qr/^sk_live_/, 'install: an sk_live_ key';
push @ISSUED, $inst->{json}{api_key};
no_store($inst, 'install');
my $inst2 = install($KA, 'file:seal.toml', { api_token => $CFG_SECRET }, 'Idempotency-Key' => $k_install);
is $inst2->{status}, 201, 'install replayed: 201';
is $inst2->{headers}{'idempotent-replayed'}, 'true', 'install replayed: Idempotent-Replayed';
is $inst2->{body}, $inst->{body}, 'install replayed: the same bytes';
no_store($inst2, 'install replayed');
my $EXT = one("SELECT id FROM extensions WHERE facility_id = '$fa' AND name = 'seal-demo'");

# --- rotations: live, sandbox; each replayed ------------------------------------------------
my $S0 = ext_key(fac => $fa, ext => $EXT, live => 0);       # a sandbox key made by cms-admin
my $inv_sandbox = invoice($fa, 0);
my $inv_live = invoice($fa, 1);
sub get_inv { req(GET => invoice_path($_[1]), $_[0])->{status} }
is get_inv($S0, $inv_sandbox), 200, 'the old sandbox key works';

my (%rot, @live);
for my $case (['live', undef, qr/^sk_live_/], ['live', {}, qr/^sk_live_/],
              ['live', { mode => 'live' }, qr/^sk_live_/],
              ['sandbox', { mode => 'sandbox' }, qr/^sk_sandbox_/]) {
    my ($mode, $body, $re) = @$case;
    my $name = "rotate " . (defined $body ? JSON::PP->new->canonical->encode($body) : 'without a body');
    my $k = idem();
    my $r = req(POST => '/v1/extensions/seal-demo/keys/rotate', $KA, $body, 'Idempotency-Key' => $k);
    is $r->{status}, 200, "$name: 200" or diag diag_resp($r);
    like $r->{json}{api_key} // '', $re, "$name: a $mode key";
    is_deeply [sort keys %{$r->{json} // {}}], [sort qw(name api_key_id previous_keys_expire_at api_key)],
        "$name: its fields";
    no_store($r, $name);
    push @ISSUED, $r->{json}{api_key};
    my $again = req(POST => '/v1/extensions/seal-demo/keys/rotate', $KA, $body, 'Idempotency-Key' => $k);
    is $again->{body}, $r->{body}, "$name replayed: the same bytes";
    is $again->{headers}{'idempotent-replayed'}, 'true', "$name replayed: Idempotent-Replayed";
    no_store($again, "$name replayed");
    $rot{$mode} = { resp => $r, idem => $k, body => $body };
    $rot{bare} //= $rot{$mode} if !defined $body;
    push @live, $r->{json}{api_key} if $mode eq 'live';
}
my $S1 = $rot{sandbox}{resp}{json}{api_key} // '';
is one("SELECT livemode FROM extension_keys WHERE id::text = '"
       . ($rot{sandbox}{resp}{json}{api_key_id} // '') . "'"), 'f',
    'the sandbox rotation stored a sandbox key';
is get_inv($S1, $inv_sandbox), 200, 'the new sandbox key reads sandbox invoices';
is get_inv($S1, $inv_live), 404, 'and not live ones';
is get_inv($S0, $inv_sandbox), 200, 'the old sandbox key works within the grace';
is one("SELECT count(*) FROM extension_keys WHERE extension_id = '$EXT' AND livemode
        AND expires_at IS NULL AND revoked_at IS NULL"), 1,
    'the sandbox rotation left the newest live key without an expiry';
ok wait_until($GRACE + 3, sub { get_inv($S0, $inv_sandbox) == 401 }),
    'the old sandbox key stops working after the grace';
is get_inv($S1, $inv_sandbox), 200, 'the new sandbox key still works';
is get_inv($live[0] // '', $inv_live), 401, 'a live key rotated away (by the later live rotations) stopped too';
is get_inv($live[-1] // '', $inv_live), 200, 'the newest live key works';

# the mode is checked
check_err(req(POST => '/v1/extensions/seal-demo/keys/rotate', $KA, { mode => 'test' }, 'Idempotency-Key' => idem()),
          422, 'validation_error', 'mode', 'rotate mode "test"');
check_err(req(POST => '/v1/extensions/seal-demo/keys/rotate', $KA, { mode => JSON::PP::true },
              'Idempotency-Key' => idem()), 422, 'validation_error', 'mode', 'rotate mode true');
check_err(req(POST => '/v1/extensions/seal-demo/keys/rotate', $KA, { livemode => JSON::PP::false },
              'Idempotency-Key' => idem()), 400, 'invalid_request', 'livemode', 'rotate with an unknown field');
check_err(req(POST => '/v1/extensions/seal-demo/keys/rotate', $KA, [], 'Idempotency-Key' => idem()),
          400, 'invalid_request', undef, 'rotate with an array body');

# --- the UI token: a bearer token, never cached ----------------------------------------------
{
    my $email = "seal-ui-$$\@example.com";
    my $s = req(POST => '/v1/auth/signup', undef, { email => $email, password => 'password for the ui' });
    cms_admin('facility', 'member', '--facility', $fa, '--email', $email, '--privileges', 'seal:view');
    my $r = req(GET => '/v1/extensions/seal-demo/ui-token', $s->{json}{token});
    is $r->{status}, 200, 'ui-token: 200' or diag diag_resp($r);
    no_store($r, 'ui-token');
    my $l = req(GET => '/v1/extensions?limit=10', $KA);
    is $l->{status}, 200, 'list extensions: 200';
    ok !defined $l->{headers}{'cache-control'}, 'an answer without a credential has no Cache-Control: no-store';
}

# --- Redis: every key, every value ------------------------------------------------------------
my $TOKEN = qr/(?:sk|svc|pk|whsec)_/;
sub redis_dump {
    my %v;
    for my $key (grep { length } split /\n/, redis_cli('--scan')) {
        my $type = redis_cli('TYPE', $key);
        $type =~ s/\s+//g;
        my @cmd = $type eq 'string' ? ('GET', $key)
                : $type eq 'stream' ? ('XRANGE', $key, '-', '+')
                : $type eq 'hash'   ? ('HGETALL', $key)
                : $type eq 'list'   ? ('LRANGE', $key, 0, -1)
                : $type eq 'set'    ? ('SMEMBERS', $key)
                : $type eq 'zset'   ? ('ZRANGE', $key, 0, -1, 'WITHSCORES')
                : ();
        $v{$key} = @cmd ? redis_cli(@cmd) : '';
    }
    return \%v;
}
my $dump = redis_dump();
my @records = grep { /^cms:idem:\{\Q$KA_ID\E\}:/ } keys %$dump;
ok @records >= 5, 'the admin credential\'s idempotency records are there (install, four rotations, refusals)';
my @bad = grep { $_ =~ $TOKEN || $dump->{$_} =~ $TOKEN } sort keys %$dump;
ok !@bad, 'no key in Redis holds sk_, svc_, pk_ or whsec_ (in its name or value)'
    or diag join "\n", map { "$_ => " . substr($dump->{$_}, 0, 300) } @bad;
my $all = join "\n", %$dump;
ok !grep({ index($all, $_) >= 0 } grep { length } @ISSUED), 'no issued key anywhere in Redis';
ok !grep({ index($dump->{$_}, $CFG_SECRET) >= 0 } keys %$dump), 'the config secret is nowhere in Redis';
ok !grep({ $dump->{$_} =~ /api_key|previous_keys/ } @records), 'the kept answers are not readable JSON';
for my $key (@records) {
    (my $v = $dump->{$key}) =~ s/\n\z//;
    like $v, qr/^D[0-9a-f]{64}[A-Za-z0-9+\/]+=*$/, "record $key: D, fingerprint, base64"
        or last;
}

# a record copied under another key of the same request does not open: the Redis key is
# its associated data (the fingerprint matches, the seal refuses)
{
    my $path = '/extensions/:name/keys/rotate';
    my $rkey = sub { "cms:idem:{$KA_ID}:" . sha256_hex("POST$path\n$_[0]") };
    my $src = $rkey->($rot{bare}{idem});
    ok exists $dump->{$src}, 'the first rotation\'s record is where it is expected';
    my $k2 = idem();
    my $dst = $rkey->($k2);
    # the same request (no body) under a fresh key, its record replaced by the copy
    my $first = req(POST => '/v1/extensions/seal-demo/keys/rotate', $KA, undef, 'Idempotency-Key' => $k2);
    is $first->{status}, 200, 'another rotation without a body';
    push @ISSUED, $first->{json}{api_key};
    (my $v = redis_cli('GET', $src)) =~ s/\n\z//;
    redis_cli('SET', $dst, $v);
    my $copy = req(POST => '/v1/extensions/seal-demo/keys/rotate', $KA, undef, 'Idempotency-Key' => $k2);
    check_err($copy, 500, 'internal_error', undef, 'a record copied under another key');
    ok index($copy->{body}, 'sk_') < 0, 'its answer holds no key';
    ok grep({ /kept idempotent answer does not open/ } error_log_lines()), 'the refusal is logged';
    my $orig = req(POST => '/v1/extensions/seal-demo/keys/rotate', $KA, undef,
                   'Idempotency-Key' => $rot{bare}{idem});
    is $orig->{body}, $rot{bare}{resp}{body}, 'the original record still replays';
}

# --- logs and database -------------------------------------------------------------------------
my @keys = grep { length } @ISSUED;
is scalar(@keys), 6, 'six keys were issued';
for my $log ('error.log', 'access.log') {
    open my $fh, '<:raw', prefix() . "/logs/$log" or die "$log: $!";
    local $/;
    my $text = <$fh> // '';
    ok !grep({ index($text, $_) >= 0 } @keys), "$log holds no issued key";
    ok index($text, $CFG_SECRET) < 0, "$log holds no config secret";
}
my $db_dump = do {
    open my $fh, '-|', 'pg_dump', '--data-only', '-h', '127.0.0.1', '-p', $ENV{TEST_CMS_PG_PORT},
        '-U', 'postgres', db_name() or die "pg_dump: $!";
    local $/;
    <$fh> // '';
};
ok length($db_dump) > 1000 && index($db_dump, 'seal-demo') >= 0, 'the database dump is readable';
ok !grep({ index($db_dump, $_) >= 0 } @keys), 'the database holds no issued key (hashes and prefixes only)';
ok index($db_dump, $CFG_SECRET) < 0, 'the database holds the config secret sealed only';
ok $db_dump !~ /(?:sk|svc|pk|whsec)_[a-z]+_[0-9A-Za-z]{20,}/, 'nothing in the database looks like a whole key';

done_testing();
