# Extension configuration: the validation matrix at install (POST /v1/extensions config) and
# on PUT /v1/extensions/:name/config (unknown keys, wrong types for string, secret, number
# and boolean, required fields without a value or default, over-long strings: 422 with
# param = the field; a body that is not an object: 400); defaults applied; numbers and
# booleans answered as their JSON text; non-secret values replaced as a whole, secrets
# replaced only when given and answered only as {is_configured: true}; a refused PUT
# changes nothing. Secrets: never in any response, in error.log, access.log, Redis, the
# PostgreSQL log, or a pg_dump of the database (neither as text nor hex nor base64); stored
# as AES-256-GCM (nonce 12 + ciphertext + tag 16), a fresh nonce each time, decrypting with
# the key derived from cms_secret only under the row's own associated data
# ("<extension id>:<field>").
use strict;
use warnings;
use Cms::Test;
use JSON::PP ();
use Digest::SHA qw(hmac_sha256);
use Time::HiRes qw(time sleep);
use File::Path qw(make_path);
use MIME::Base64 qw(encode_base64);
use File::Temp ();

# --- helpers: t/lib/Cms/Fixtures.pm (shared with the other API tests) and
# t/lib/Cms/ExtFixtures.pm (admin keys, cms-admin, manifests, installs) ------------
use Cms::Fixtures qw(base62 crc32 make_key master_secret one req_spec req idem post diag_resp
                     facility redis_cli $UUID);
use Cms::ExtFixtures qw(:all);

set_conf_defaults(http_config => "cms_extensions_manifests $MDIR;");
start_nginx();

# every answer is kept: none may hold a secret
my @ANSWERS;
{
    no warnings 'redefine';
    my $orig = \&req;
    # post and install send through Cms::Fixtures::req: keep theirs too
    my $keep = sub { my $r = $orig->(@_); push @ANSWERS, $r; $r };
    *req = $keep;
    *Cms::Fixtures::req = $keep;
}

my @SECRETS;
sub secret { my $s = 'sekrit-' . join('', map { sprintf '%02x', int rand 256 } 1 .. 12); push @SECRETS, $s; $s }

put_manifest('cfg.toml', manifest(name => 'cfg-demo', fields => [
    [s       => { type => 'string', required => JSON::PP::true }],
    [s_def   => { type => 'string', default => 'd' }],
    [n       => { type => 'number', required => JSON::PP::true }],
    [n_def   => { type => 'number', default => \'5' }],
    [b       => { type => 'boolean' }],
    [b_req   => { type => 'boolean', required => JSON::PP::true, default => JSON::PP::true }],
    [sec     => { type => 'secret', required => JSON::PP::true }],
    [sec_opt => { type => 'secret' }],
]));

my $fa = facility();
my $KA = admin_key($fa);
my $nreq = 0;
sub ka { $KA = admin_key($fa) if ++$nreq % 60 == 0; $KA }
sub config_rows {
    my ($fac, $name) = @_;
    my %c;
    for (@{psql("SELECT c.name, c.value, encode(c.ciphertext, 'hex') FROM extension_configs c
                 JOIN extensions e ON e.id = c.extension_id
                 WHERE e.facility_id = '$fac' AND e.name = " . q_($name))}) {
        $c{$_->[0]} = defined $_->[2] ? { cipher => $_->[2] } : { value => $_->[1] };
    }
    return \%c;
}
sub none_installed { one("SELECT count(*) FROM extensions WHERE facility_id = '$fa'") == 0 }

# --- install: the matrix -------------------------------------------------------------------
my $S1 = secret();
my %base = (s => 'x', n => 10, sec => $S1);
my $T = JSON::PP::true;
my $F = JSON::PP::false;
my @install_cases = (
    ['s missing', { n => 10, sec => $S1 }, 's'],
    ['s null', { %base, s => undef }, 's'],
    ['n missing', { s => 'x', sec => $S1 }, 'n'],
    ['n null', { %base, n => undef }, 'n'],
    ['sec missing (a required secret)', { s => 'x', n => 10 }, 'sec'],
    ['sec null', { %base, sec => undef }, 'sec'],
    ['an unknown key', { %base, nope => 1 }, 'nope'],
    ['an unknown key holding a secret', { %base, api_tokn => secret() }, 'api_tokn'],
    ['a key differing in case', { %base, S => 'x' }, 'S'],
    ['s a number', { %base, s => 5 }, 's'],
    ['s a boolean', { %base, s => $T }, 's'],
    ['s an array', { %base, s => ['x'] }, 's'],
    ['s an object', { %base, s => { v => 'x' } }, 's'],
    ['s over 4096 characters', { %base, s => 'y' x 4097 }, 's'],
    ['s_def a number', { %base, s_def => 1 }, 's_def'],
    ['n a string', { %base, n => '10' }, 'n'],
    ['n a boolean', { %base, n => $T }, 'n'],
    ['n an array', { %base, n => [10] }, 'n'],
    ['n_def a string', { %base, n_def => '5' }, 'n_def'],
    ['b a string', { %base, b => 'true' }, 'b'],
    ['b a number 1', { %base, b => 1 }, 'b'],
    ['b a number 0', { %base, b => 0 }, 'b'],
    ['b_req a string', { %base, b_req => 'false' }, 'b_req'],
    ['sec a number', { %base, sec => 123456789 }, 'sec'],
    ['sec a boolean', { %base, sec => $T }, 'sec'],
    ['sec an object', { %base, sec => { v => secret() } }, 'sec'],
    ['sec over 4096 characters', { %base, sec => 'z' x 4097 }, 'sec'],
    ['sec_opt a number', { %base, sec_opt => 5 }, 'sec_opt'],
);
for my $c (@install_cases) {
    my ($name, $cfg, $param) = @$c;
    check_err(install(ka(), 'file:cfg.toml', $cfg), 422, 'validation_error', $param, "install, $name");
}
{
    my $x = install(ka(), 'file:cfg.toml');
    check_err($x, 422, 'validation_error', undef, 'install without config: 422');
    like(($x->{json}{error} // {})->{param} // '', qr/^(s|n|sec)$/, 'naming a required field');
    $x = install(ka(), 'file:cfg.toml', {});
    like(($x->{json}{error} // {})->{param} // '', qr/^(s|n|sec)$/, 'config {}: 422 naming a required field')
        or diag diag_resp($x);
}
ok none_installed(), 'no refused install left an extension behind';
is one("SELECT count(*) FROM extension_keys WHERE facility_id = '$fa'"), 0, 'nor a key';

# --- install: success, defaults, values as text ------------------------------------------------
my $S_SEC = secret();
my $r = install(ka(), 'file:cfg.toml', { s => "Gr\x{fc}\x{df}e \"q\" \\ \x{1F600}", n => 2.5, sec => $S_SEC,
                                         b => $F, s_def => 'custom' });
is $r->{status}, 201, 'install with a valid config: 201' or diag diag_resp($r);
my $EXT = one("SELECT id FROM extensions WHERE facility_id = '$fa' AND name = 'cfg-demo'");
{
    my $c = config_rows($fa, 'cfg-demo');
    my %plain = map { $_ => $c->{$_}{value} } grep { exists $c->{$_}{value} } keys %$c;
    is_deeply \%plain, { s => "Gr\x{c3}\x{bc}\x{c3}\x{9f}e \"q\" \\ \x{f0}\x{9f}\x{98}\x{80}", s_def => 'custom', n => '2.5',
                         n_def => '5', b => 'false', b_req => 'true' },
        'stored: the values given, defaults for the rest, numbers and booleans as text, UTF-8 kept';
    ok $c->{sec}{cipher}, 'the secret is stored sealed (value NULL, ciphertext set)';
    ok !exists $c->{sec_opt}, 'an optional secret not given: no row';
    is length($c->{sec}{cipher} // '') / 2, 12 + length($S_SEC) + 16, 'sealed: nonce 12 + ciphertext + tag 16 bytes';
}

# --- PUT: the matrix ---------------------------------------------------------------------------
my $P = '/v1/extensions/cfg-demo/config';
my $before = config_rows($fa, 'cfg-demo');
my @put_cases = (
    ['{} (s and n required)', {}, qr/^(s|n)$/],
    ['s missing', { n => 1 }, 's'],
    ['n missing', { s => 'y' }, 'n'],
    ['s null', { s => undef, n => 1 }, 's'],
    ['an unknown key', { s => 'y', n => 1, extra => 'v' }, 'extra'],
    ['an unknown key holding a secret', { s => 'y', n => 1, sec_old => secret() }, 'sec_old'],
    ['s a number', { s => 1, n => 1 }, 's'],
    ['s over 4096 characters', { s => 'y' x 4097, n => 1 }, 's'],
    ['n a string', { s => 'y', n => '1' }, 'n'],
    ['n an object', { s => 'y', n => {} }, 'n'],
    ['b a string', { s => 'y', n => 1, b => 'no' }, 'b'],
    ['b_req a number', { s => 'y', n => 1, b_req => 1 }, 'b_req'],
    ['sec a number', { s => 'y', n => 1, sec => 42 }, 'sec'],
    ['sec an array', { s => 'y', n => 1, sec => [secret()] }, 'sec'],
    ['sec_opt a boolean', { s => 'y', n => 1, sec_opt => $F }, 'sec_opt'],
    ['a valid secret beside a wrong type', { s => 'y', n => 'one', sec => secret() }, 'n'],
);
for my $c (@put_cases) {
    my ($name, $cfg, $param) = @$c;
    my $x = req(PUT => $P, ka(), $cfg);
    if (ref $param) {
        check_err($x, 422, 'validation_error', undef, "PUT, $name");
        like(($x->{json}{error} // {})->{param} // '', $param, "PUT, $name: param names a required field");
    } else {
        check_err($x, 422, 'validation_error', $param, "PUT, $name");
    }
}
check_err(req(PUT => $P, ka(), '[]'), 400, 'invalid_request', undef, 'PUT, a JSON array');
check_err(req(PUT => $P, ka(), '"x"'), 400, 'invalid_request', undef, 'PUT, a JSON string');
check_err(req(PUT => $P, ka(), '{"s": "y",'), 400, 'invalid_request', undef, 'PUT, malformed JSON');
check_err(req(PUT => $P, ka()), 400, 'invalid_request', undef, 'PUT, no body');
check_err(req(PUT => '/v1/extensions/nope/config', ka(), { s => 'y', n => 1 }), 404, 'not_found', undef,
          'PUT, an unknown extension');
is_deeply config_rows($fa, 'cfg-demo'), $before, 'the refused PUTs changed nothing (secret ciphertext included)';

my $SEC_OPT;
# --- PUT: replace -------------------------------------------------------------------------------
{
    my $x = req(PUT => $P, ka(), { s => 'y', n => 1 });
    is $x->{status}, 200, 'PUT {s, n}: 200' or diag diag_resp($x);
    is_deeply $x->{json}, {
        s => { value => 'y' }, s_def => { value => 'd' }, n => { value => '1' }, n_def => { value => '5' },
        b_req => { value => 'true' }, sec => { is_configured => $T },
    }, 'the answer: every field with a value; b and s_def replaced as a whole (b gone, s_def back to its default); '
       . 'the secret kept, answered only as is_configured';
    my $c = config_rows($fa, 'cfg-demo');
    is $c->{sec}{cipher}, $before->{sec}{cipher}, 'the secret not given: its ciphertext unchanged';
    ok !exists $c->{b}, 'b removed';

    $x = req(PUT => $P, ka(), { s => '', n => -0.125, b => $T, b_req => $F, n_def => 1e3 });
    is $x->{status}, 200, 'PUT with other types: 200' or diag diag_resp($x);
    is_deeply [map { ($x->{json}{$_} // {})->{value} } qw(s n b b_req n_def)], ['', '-0.125', 'true', 'false', '1000'],
        'numbers and booleans answered as their JSON text, an empty string kept';

    my $S2 = secret();
    $x = req(PUT => $P, ka(), { s => 'y', n => 1, sec => $S2 });
    is $x->{status}, 200, 'PUT a new secret: 200' or diag diag_resp($x);
    is_deeply $x->{json}{sec}, { is_configured => $T }, 'answered as is_configured';
    ok !exists $x->{json}{sec_opt}, 'the optional secret never set: not in the answer';
    my $c2 = config_rows($fa, 'cfg-demo');
    ok $c2->{sec}{cipher} && $c2->{sec}{cipher} ne $before->{sec}{cipher}, 'the secret replaced (a new ciphertext)';

    my $S3 = $SEC_OPT = secret();
    $x = req(PUT => $P, ka(), { s => 'y', n => 1, sec_opt => $S3, sec => undef });
    is $x->{status}, 200, 'PUT the optional secret (sec null: kept)' or diag diag_resp($x);
    is_deeply [map { $x->{json}{$_} } qw(sec sec_opt)], [{ is_configured => $T }, { is_configured => $T }],
        'both secrets configured';
    my $c3 = config_rows($fa, 'cfg-demo');
    is $c3->{sec}{cipher}, $c2->{sec}{cipher}, 'sec unchanged';
    ok $c3->{sec_opt}{cipher}, 'sec_opt sealed';
    $x = req(PUT => $P, ka(), { s => 'z', n => 2 });
    is_deeply [map { $x->{json}{$_} } qw(sec sec_opt)], [{ is_configured => $T }, { is_configured => $T }],
        'a PUT without secrets keeps both';
    is one("SELECT updated_at > created_at FROM extensions WHERE id = '$EXT'"), 't', 'the extension\'s updated_at moved';
}

# --- a manifest without fields, and one whose required fields all have defaults -----------------
{
    put_manifest('nofields.toml', manifest(name => 'no-fields'));
    put_manifest('defaults.toml', manifest(name => 'all-defaults', fields => [
        [url => { type => 'string', required => $T, default => 'https://d.example' }],
        [max => { type => 'number', required => $T, default => \'7' }]]));
    my $x = install(ka(), 'file:nofields.toml');
    is $x->{status}, 201, 'no fields, no config: 201' or diag diag_resp($x);
    check_err(install(admin_key(facility()), 'file:nofields.toml', { any => 1 }), 422, 'validation_error', 'any',
              'no fields: any key is unknown');
    $x = req(PUT => '/v1/extensions/no-fields/config', ka(), {});
    ok $x->{status} == 200 && ref $x->{json} eq 'HASH' && !%{$x->{json}}, 'PUT {} on no fields: 200 {}' or diag diag_resp($x);
    $x = install(ka(), 'file:defaults.toml', {});
    is $x->{status}, 201, 'required fields with defaults: config {} installs' or diag diag_resp($x);
    $x = req(PUT => '/v1/extensions/all-defaults/config', ka(), {});
    is_deeply $x->{json}, { url => { value => 'https://d.example' }, max => { value => '7' } }, 'PUT {}: the defaults';
}

# --- sealing: a fresh nonce, the derived key, bound to the row ------------------------------------
my $S_SAME = secret();
{
    my $fb = facility();
    my $KB = admin_key($fb);
    my $x = install($KB, 'file:cfg.toml', { s => 'x', n => 1, sec => $S_SAME, sec_opt => $S_SAME });
    is $x->{status}, 201, 'install with the same secret in two fields' or diag diag_resp($x);
    my $c = config_rows($fb, 'cfg-demo');
    ok $c->{sec}{cipher} ne $c->{sec_opt}{cipher}, 'the same secret twice: two different ciphertexts';
    ok substr($c->{sec}{cipher}, 0, 24) ne substr($c->{sec_opt}{cipher}, 0, 24), 'with different nonces';
    my $ext_b = one("SELECT id FROM extensions WHERE facility_id = '$fb' AND name = 'cfg-demo'");
    my $key = unpack 'H*', hmac_sha256('cms aead v1', master_secret());
    my $open = sub {
        my ($hex, $aad) = @_;
        my $py = 'import sys\nfrom cryptography.hazmat.primitives.ciphers.aead import AESGCM\n'
               . 'k, b, a = bytes.fromhex(sys.argv[1]), bytes.fromhex(sys.argv[2]), sys.argv[3].encode()\n'
               . 'try:\n  sys.stdout.write(AESGCM(k).decrypt(b[:12], b[12:], a).decode())\n'
               . 'except Exception as e:\n  sys.stdout.write("FAIL:" + type(e).__name__)\n';
        $py =~ s/\\n/\n/g;
        open my $fh, '-|', 'python3', '-c', $py, $key, $hex, $aad or return undef;
        local $/;
        my $out = <$fh>;
        close $fh;
        return $? ? undef : $out;
    };
    SKIP: {
        my $probe = $open->('00' x 28, 'x');
        skip 'python3 with the cryptography package is needed to open AES-GCM', 5 unless defined $probe && $probe =~ /^FAIL:/;
        is $open->($c->{sec}{cipher}, "$ext_b:sec"), $S_SAME,
           'AES-256-GCM under HMAC-SHA256(cms_secret, "cms aead v1"), associated data "<extension id>:sec": the secret';
        is $open->($c->{sec_opt}{cipher}, "$ext_b:sec_opt"), $S_SAME, 'and sec_opt under its own';
        like $open->($c->{sec}{cipher}, "$ext_b:sec_opt"), qr/^FAIL:InvalidTag/, 'moved to another field: does not open';
        like $open->($c->{sec}{cipher}, "$EXT:sec"), qr/^FAIL:InvalidTag/, 'moved to another extension: does not open';
        my $ca = config_rows($fa, 'cfg-demo');
        my $got = $open->($ca->{sec_opt}{cipher}, "$EXT:sec_opt");
        is $got, $SEC_OPT, 'the first extension\'s sec_opt (set by PUT) opens under its own id';
    }
}

# --- where a secret must never be --------------------------------------------------------------------
{
    # a few more answers that could echo a body: replays of a refused and an accepted install
    my $k = idem();
    my $S4 = secret();
    my $body = $JSON->encode({ manifest_url => 'file:cfg.toml', config => { s => 1, n => 1, sec => $S4 } });
    req(POST => '/v1/extensions', ka(), $body, 'Idempotency-Key' => $k) for 1 .. 2;
    my $fc = facility();
    my $KC = admin_key($fc);
    my $S5 = secret();
    $body = $JSON->encode({ manifest_url => 'file:cfg.toml', config => { s => 'x', n => 1, sec => $S5 } });
    my $a = req(POST => '/v1/extensions', $KC, $body, 'Idempotency-Key' => $k);
    is $a->{status}, 201, 'an install with a secret' or diag diag_resp($a);
    my $b = req(POST => '/v1/extensions', $KC, $body, 'Idempotency-Key' => $k);
    is $b->{headers}{'idempotent-replayed'}, 'true', 'and its replay';
    req(GET => '/v1/extensions?limit=100', $KC);
    req(GET => '/v1/extensions?limit=100', $KA);

    my @enc = map { my $s = $_; ($s, unpack('H*', $s), encode_base64($s, ''), substr(encode_base64($s, ''), 0, 16)) } @SECRETS;
    my $find = sub { my $text = shift // ''; grep { index($text, $_) >= 0 } @enc };
    ok @SECRETS >= 10, scalar(@SECRETS) . ' secrets sent';
    ok scalar(@ANSWERS) > 60, scalar(@ANSWERS) . ' answers kept';
    my @in = grep { $find->(join "\n", $_->{body} // '', map { "@$_" } @{$_->{header_list} // []}) } @ANSWERS;
    ok !@in, 'no answer (headers or body) holds a secret' or diag join "\n", map { diag_resp($_) } @in[0 .. 2];

    my $log = join "\n", error_log_lines();
    ok !$find->($log), 'error.log holds no secret';
    my $alog = do { open my $fh, '<', prefix() . '/logs/access.log'; local $/; <$fh> // '' };
    ok !$find->($alog), 'access.log holds no secret';

    my $dump = `pg_dump -h 127.0.0.1 -p $ENV{TEST_CMS_PG_PORT} -U postgres --no-owner @{[db_name()]} 2>&1`;
    is $?, 0, 'pg_dump of the database' or diag substr($dump, 0, 500);
    like $dump, qr/COPY public\.extension_configs/, 'the dump has extension_configs';
    my $rows = () = $dump =~ /\\\\x[0-9a-f]{40,}/g;
    ok $rows >= 8, "with its ciphertexts ($rows)";
    my @hit = $find->($dump);
    ok !@hit, 'pg_dump holds no secret: not as text, hex or base64' or diag "found: @hit";
    ok index($dump, $S_SAME) < 0 && index($dump, unpack('H*', $S_SAME)) < 0, 'not even the one stored twice';

    # every string value in Redis, in one redis-cli run (GET on other types answers WRONGTYPE)
    my @keys = grep { length } split /\n/, redis_cli('--scan');
    my $cmds = File::Temp->new;
    print $cmds map { "GET \"$_\"\n" } grep { !/["\\\s]/ } @keys;
    close $cmds;
    my $rd = `redis-cli -p $ENV{TEST_CMS_REDIS_PORT} < @{[$cmds->filename]} 2>&1`;
    # the install's replay record is sealed (t/304): its D<fingerprint><base64> form shows
    # the values were read
    like $rd, qr/^D[0-9a-f]{64}[A-Za-z0-9+\/]{40,}={0,2}$/m,
         'the Redis values were read (the install\'s sealed replay record is there)';
    ok !$find->($rd), 'Redis holds no secret (' . scalar(@keys) . ' keys)';

    my $pglog = "$ENV{TEST_CMS_VAR}/pg.log";
    SKIP: {
        skip 'no PostgreSQL log', 1 unless -r $pglog;
        my $t = do { open my $fh, '<', $pglog; local $/; <$fh> // '' };
        ok !$find->($t), 'the PostgreSQL log holds no secret';
    }
}

done_testing();
