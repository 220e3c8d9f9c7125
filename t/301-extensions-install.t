# POST /v1/extensions: install from a local development manifest (file:, from the
# cms_extensions_manifests folder) and from a registry URL served by a second nginx over
# HTTPS on loopback (allow-listed with cms_extensions_registry; fetched by nginx itself
# through the internal /_cms_fetch location, without blocking the worker); the answer
# {name, version, status: installing, api_key_id, api_key}, then running once the consumer
# group ext:<name> exists on the facility's stream; the issued key works on /v1/ext with the
# manifest's privileges; the same name twice is 409 conflict; every file of the broken
# manifest corpus (t/data/manifests/bad) is a 422 naming the problem and no worker dies; the
# good corpus installs; file: names cannot leave the folder; registry failures (404, a
# redirect, a 500, over 64 KiB, a timeout, a refused connection, hosts not allow-listed,
# http:) are 422 param manifest_url; the request body's own checks.  Strict URLs (issue
# 11): the allow-list bypasses (a "#" or "%23" in the host, userinfo, CR/LF in the path,
# an IDN homograph, a trailing dot, octal/hex/dword addresses) are 422 naming the rule
# broken, and the registry never hears of them; "%0d%0a" reaches it still encoded; the
# URL fetched and stored is the one rebuilt from the parsed parts.
use strict;
use IO::Select ();
use warnings;
use Cms::Test;
use JSON::PP ();
use Digest::SHA qw(hmac_sha256);
use Time::HiRes qw(time sleep);
use File::Path qw(make_path);
use File::Copy qw(copy);
use IO::Socket::INET ();

# --- helpers: t/lib/Cms/Fixtures.pm (shared with the other API tests) and
# t/lib/Cms/ExtFixtures.pm (admin keys, cms-admin, manifests, installs) ------------
use Cms::Fixtures qw(base62 crc32 make_key master_secret one req_spec req idem post diag_resp
                     facility redis_cli $UUID);
use Cms::ExtFixtures qw(:all);

my $ROOT = $ENV{TEST_CMS_ROOT} || '.';
my $NGINX = $ENV{TEST_NGINX_BINARY} || '/usr/sbin/nginx';

# --- the registry: a second nginx serving files over HTTPS on loopback ------------------
my $REG_PORT = free_port();
my $REG_STATUS_PORT = free_port();   # stub_status, plain HTTP, not logged
my $REG = prefix() . '-registry';
my $REG_MASTER;
sub reg_file {
    my ($name, $text) = @_;
    open my $fh, '>:raw', "$REG/www/$name" or die "$REG/www/$name: $!";
    print $fh $text;
    close $fh;
    chmod 0644, "$REG/www/$name";
}
sub start_registry {
    make_path(map { "$REG/$_" } qw(conf logs temp www));
    chmod 0755, $REG, map { "$REG/$_" } qw(conf logs temp www);
    my $out = `openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -days 1 -keyout $REG/conf/key.pem -out $REG/conf/cert.pem 2>&1`;
    die "openssl: $out" if $?;
    open my $fh, '>', "$REG/conf/nginx.conf" or die $!;
    print $fh <<"EOF";
worker_processes 1;
error_log logs/error.log info;
pid logs/nginx.pid;
events { worker_connections 64; }
http {
    log_format reg '\$request_method \$request_uri inj=[\$http_x_injected] auth=[\$http_authorization] idem=[\$http_idempotency_key]';
    access_log logs/access.log reg;
    client_body_temp_path temp/body;
    proxy_temp_path temp/proxy;
    fastcgi_temp_path temp/fastcgi;
    uwsgi_temp_path temp/uwsgi;
    scgi_temp_path temp/scgi;
    default_type application/toml;
    server {
        listen 127.0.0.1:$REG_PORT ssl;
        ssl_certificate $REG/conf/cert.pem;
        ssl_certificate_key $REG/conf/key.pem;
        root $REG/www;
        location = /redirect.toml { return 302 https://127.0.0.1:$REG_PORT/reg-demo.toml; }
        location = /error.toml { return 500; }
    }
    server {
        listen 127.0.0.1:$REG_STATUS_PORT;
        access_log off;
        location = /status { stub_status; }
    }
}
EOF
    close $fh;
    $out = `$NGINX -p $REG/ -c $REG/conf/nginx.conf 2>&1`;
    die "the registry did not start: $out" if $?;
    wait_until(10, sub { IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $REG_PORT, Proto => 'tcp') })
        or die 'the registry does not accept connections';
    ($REG_MASTER) = (`cat $REG/logs/nginx.pid` =~ /(\d+)/);
}
sub stop_registry {
    return unless $REG_MASTER && kill 0, $REG_MASTER;
    kill 'QUIT', $REG_MASTER;
    wait_until(10, sub { !kill 0, $REG_MASTER }) or kill 'KILL', $REG_MASTER;
    $REG_MASTER = undef;
}
END { stop_registry() }
sub reg_lines { open my $fh, '<', "$REG/logs/access.log" or return (); my @l = <$fh>; chomp @l; @l }
# nginx writes a request's access-log line after its answer is sent, so a fetch the module has
# already answered may not be logged yet. The registry's log is read once it has settled: every
# request the registry counted (stub_status "requests") is logged, except the status requests
# themselves (not logged). Bounded: after 10 s the log is read as it is.
my $REG_STATUS_N = 0;
sub reg_requests {
    $REG_STATUS_N++;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $REG_STATUS_PORT,
                                  Proto => 'tcp', Timeout => 5) or return -1;
    print $s "GET /status HTTP/1.0\r\nHost: s\r\n\r\n";
    local $/;
    my $body = <$s> // '';
    return $body =~ /^\s*\d+\s+\d+\s+(\d+)\s*$/m ? $1 : -1;
}
sub reg_log {
    my @l;
    wait_until(10, sub { @l = reg_lines(); scalar(@l) == reg_requests() - $REG_STATUS_N });
    @l;
}

# A port that accepts TCP connections (the kernel's backlog) and never answers: a timeout.
my $HANG = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Proto => 'tcp', Listen => 16)
    or die "listen: $!";
my $HANG_PORT = $HANG->sockport;
my $REFUSED_PORT = free_port();       # nothing listens there

start_registry();

my $FETCH = <<'EOF';
        location = /_cms_fetch {
            internal;
            proxy_pass $cms_fetch_url;
            proxy_method GET;
            proxy_pass_request_headers off;
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
            subrequest_output_buffer_size 256k;
            proxy_buffer_size 64k;
            proxy_buffers 4 64k;
            proxy_connect_timeout 2s;
            proxy_read_timeout 2s;
            proxy_ssl_verify off;
        }
EOF
set_conf_defaults(
    http_config => "cms_extensions_manifests $MDIR;\n"
                   . "cms_extensions_registry 127.0.0.1:$REG_PORT 127.0.0.1:$HANG_PORT 127.0.0.1:$REFUSED_PORT"
                   . " Registry.Example.com;",
    config => $FETCH,
);
start_nginx();
my @WORKERS;
wait_until(5, sub { @WORKERS = worker_pids() });

my $fa = facility();
my $fb = facility();
my $n_key = 0;
my $KA;
# a fresh credential every 50 requests: the rate limit is 120 per credential
sub ka { $KA = admin_key($fa) if !$KA || ++$n_key % 50 == 0; $KA }
sub invoice {
    my ($fac) = @_;
    one("INSERT INTO invoices (facility_id, livemode, patient_id, amount, currency)
         VALUES ('$fac', true, 'patient-1', 100, 'XOF') RETURNING id");
}
my $inv_a = invoice($fa);
my $inv_b = invoice($fb);
sub xgroups { redis_cli('XINFO', 'GROUPS', "cms:events:{$_[0]}:live") }
sub has_group { my ($fac, $name) = @_; grep { $_ eq "ext:$name" } split /\n/, xgroups($fac) }

# --- the sample: examples/extensions/billing-demo.toml with its config --------------------
copy("$ROOT/examples/extensions/billing-demo.toml", "$MDIR/billing-demo.toml") or die "copy: $!";
chmod 0644, "$MDIR/billing-demo.toml";
my $demo_config = do {
    open my $fh, '<', "$ROOT/examples/extensions/billing-demo.config.json" or die $!;
    local $/;
    $JSON->decode(<$fh>);
};
{
    my $t0 = time;
    my $r = install(ka(), 'file:billing-demo.toml', $demo_config);
    is $r->{status}, 201, 'install file:billing-demo.toml: 201' or diag diag_resp($r);
    my $j = $r->{json} // {};
    is_deeply [sort keys %$j], [sort qw(name version status api_key_id api_key)], 'the install result\'s fields';
    is $j->{name}, 'billing-demo', 'name';
    is $j->{version}, '1.2.0', 'version';
    is $j->{status}, 'installing', 'status installing';
    like $j->{api_key_id} // '', $UUID, 'api_key_id a UUID';
    like $j->{api_key} // '', qr/^sk_live_[0-9A-Za-z]{40,}$/, 'api_key an sk_live_ key';
    is one("SELECT count(*) FROM extension_keys WHERE id = '$j->{api_key_id}' AND livemode
            AND secret_hash = decode('" . unpack('H*', hmac_sha256($j->{api_key}, $PEPPER)) . "', 'hex')"), 1,
       'api_key_id is the stored key; only HMAC(pepper, key) is kept';
    is one("SELECT count(*) FROM extension_keys WHERE key_prefix = " . q_($j->{api_key})), 0, 'not the key itself';
    ok wait_status($fa, 'billing-demo', 'running', 4), sprintf 'running after %.1f s', time - $t0;
    ok has_group($fa, 'billing-demo'), 'consumer group ext:billing-demo on cms:events:{facility}:live'
        or diag xgroups($fa);
    my $row = psql("SELECT version, category, required_privilege, array_to_string(privileges, ','), manifest_url,
                           manifest->>'name', is_enabled
                    FROM extensions WHERE facility_id = '$fa' AND name = 'billing-demo'")->[0];
    is_deeply $row, ['1.2.0', 'payment', 'billing:view', 'ext:billing:read,ext:billing:write,ext:control:write',
                     'file:billing-demo.toml', 'billing-demo', 't'], 'the extension row';
    is_deeply psql("SELECT c.name, c.value, c.ciphertext IS NOT NULL FROM extension_configs c
                    JOIN extensions e ON e.id = c.extension_id WHERE e.facility_id = '$fa' AND e.name = 'billing-demo'
                    ORDER BY c.name"),
        [['api_token', undef, 't'], ['api_url', 'https://pay.example.com', 'f'], ['sandbox', 'true', 'f'],
         ['timeout_ms', '3000', 'f']], 'the configuration: the secret sealed, the others as text';
    my $lst = req(GET => '/v1/extensions', ka());
    is_deeply [map { [$_->{name}, $_->{status}, $_->{category}] } @{$lst->{json}{data} // []}],
        [['billing-demo', 'running', 'payment']], 'listed running';

    my $K = $j->{api_key};
    my $x = req(GET => "/v1/ext/billing/invoices/$inv_a", $K);
    is $x->{status}, 200, 'the issued key reads an invoice of its facility (ext:billing:read)' or diag diag_resp($x);
    is $x->{json}{id}, $inv_a, 'the invoice';
    check_err(req(GET => "/v1/ext/billing/invoices/$inv_b", $K), 404, 'not_found', undef,
              'the issued key: another facility\'s invoice is not found');
    $x = post("/v1/ext/billing/payments/$inv_a/fail", $K, { reason => 'insufficient_funds' });
    is $x->{status}, 200, 'the issued key writes (ext:billing:write)' or diag diag_resp($x);
    is post('/v1/ext/control/drain-complete', $K)->{status}, 200, 'and has ext:control:write';

    check_err(install(ka(), 'file:billing-demo.toml', $demo_config), 409, 'conflict', undef,
              'the same name again in the facility: 409 conflict');
    is one("SELECT count(*) FROM extensions WHERE facility_id = '$fa' AND name = 'billing-demo'"), 1, 'still one';
    is one("SELECT count(*) FROM extension_keys k JOIN extensions e ON e.id = k.extension_id
            WHERE e.facility_id = '$fa' AND e.name = 'billing-demo'"), 1, 'still one key';
    my $kb = admin_key($fb);
    $x = install($kb, 'file:billing-demo.toml', $demo_config);
    is $x->{status}, 201, 'the same manifest in another facility: 201' or diag diag_resp($x);
    ok wait_status($fb, 'billing-demo', 'running', 4), 'running there too';
    ok has_group($fb, 'billing-demo'), 'with its own consumer group on that facility\'s stream';
    check_err(req(GET => "/v1/ext/billing/invoices/$inv_a", $x->{json}{api_key}), 404, 'not_found', undef,
              'facility B\'s key does not see facility A\'s invoice');
}

# --- the good corpus ------------------------------------------------------------------------
{
    my $fg = facility();
    my $KG = admin_key($fg);
    my %cfg = (
        'inline.toml' => { sender => 'CLINIC', api_key => 'inline-secret-value' },
        'max-fields.toml' => { map { sprintf('field_%02d', $_) => "secret $_" } 9, 21, 33, 45, 57 },
        'all-kinds.toml' => { webhook_secret => 'whsec-value' },
    );
    my %name;
    for my $path (sort glob "$ROOT/t/data/manifests/good/*.toml") {
        (my $file = $path) =~ s{.*/}{};
        copy($path, "$MDIR/good-$file") or die "copy: $!";
        chmod 0644, "$MDIR/good-$file";
        my $r = install($KG, "file:good-$file", $cfg{$file} // {});
        is $r->{status}, 201, "good/$file installs" or diag diag_resp($r);
        $name{$file} = $r->{json}{name} // '';
    }
    is $name{'all-kinds.toml'}, 'all-kinds-2', 'all-kinds: the quoted key "name"';
    is $name{'bom-crlf.toml'}, 'bom-crlf', 'bom-crlf: a BOM and CRLF lines';
    is $name{'limits.toml'}, ('a' x 31) . '-' . ('b' x 32), 'limits: a 64-character name';
    ok wait_until(5, sub { one("SELECT count(*) FROM extensions WHERE facility_id = '$fg' AND status <> 'running'") == 0 }),
       'every good manifest\'s extension running';
    my %v = map { $_->[0] => $_->[1] } @{psql("SELECT c.name, coalesce(c.value, '<sealed>') FROM extension_configs c
                                               JOIN extensions e ON e.id = c.extension_id
                                               WHERE e.facility_id = '$fg' AND e.name = 'all-kinds-2'")};
    is_deeply \%v, {
        greeting => "Gr\x{c3}\x{bc}\x{c3}\x{9f}e, \"world\"\t\x{f0}\x{9f}\x{98}\x{80} caf\x{c3}\x{a9} \x{e2}\x{80}\x{94} "
                    . "\x{c3}\x{bc}n\x{c3}\x{af}c\x{c3}\x{b6}d\x{c3}\x{a9}",
        path => 'C:\payments\in', max_amount => '-1000000', fee_rate => '0.025', enabled => 'false',
        empty_default => '', webhook_secret => '<sealed>',
    }, 'all-kinds: defaults decoded (escapes, UTF-8, literal strings, 1_000_000, 2.5e-2) and stored as text';
    is one("SELECT array_to_string(privileges, ',') FROM extension_keys WHERE facility_id = '$fg'
            AND extension_id = (SELECT id FROM extensions WHERE facility_id = '$fg' AND name = 'inline-demo')"),
       'ext:control:write', 'inline-demo: the key holds exactly the manifest\'s privileges';
    is one("SELECT count(*) FROM extension_configs c JOIN extensions e ON e.id = c.extension_id
            WHERE e.facility_id = '$fg' AND e.name = 'many-fields'"), 64 - 11, 'max-fields: 64 fields stored but the 11 optional secrets left unset';
    my $hello = one("SELECT id FROM extensions WHERE facility_id = '$fg' AND name = 'hello'");
    my $kh = psql("SELECT coalesce(nullif(array_to_string(privileges, ','), ''), '<none>') FROM extension_keys WHERE extension_id = '$hello'")->[0][0];
    is $kh, '<none>', 'minimal: a key without privileges';
}
{
    # the privileges of the issued key bound what it may do
    my $fp = facility();
    my $KP = admin_key($fp);
    put_manifest('ro.toml', manifest(name => 'read-only', privileges => ['ext:billing:read']));
    put_manifest('none.toml', manifest(name => 'nothing', privileges => []));
    my $inv = invoice($fp);
    my $ro = install($KP, 'file:ro.toml')->{json}{api_key};
    my $no = install($KP, 'file:none.toml')->{json}{api_key};
    ok wait_status($fp, 'read-only', 'running') && wait_status($fp, 'nothing', 'running'), 'both running';
    is req(GET => "/v1/ext/billing/invoices/$inv", $ro)->{status}, 200, 'read-only key: reads';
    check_err(post("/v1/ext/billing/payments/$inv/fail", $ro, { reason => 'x' }), 403, 'insufficient_scope', undef,
              'read-only key: no write');
    check_err(post('/v1/ext/control/drain-complete', $ro), 403, 'insufficient_scope', undef, 'read-only key: no control');
    check_err(req(GET => "/v1/ext/billing/invoices/$inv", $no), 403, 'insufficient_scope', undef,
              'a key without privileges: no read');
}

# --- the broken corpus: every file a 422 naming the problem, no worker dies -----------------
{
    my @bad = sort glob "$ROOT/t/data/manifests/bad/*.toml";
    ok @bad >= 30, 'at least 30 broken manifests (' . scalar(@bad) . ')';
    my $fx = facility();
    my ($n, $k) = (0, undef);
    my @fails;
    for my $path (@bad) {
        (my $file = $path) =~ s{.*/}{};
        copy($path, "$MDIR/bad-$file") or die "copy: $!";
        chmod 0644, "$MDIR/bad-$file";
        my $expect = do { open my $fh, '<:raw', $path or die; my $l = <$fh> // ''; $l =~ /^# expect: (.*?)\r?\n/ ? $1 : undef };
        ok defined $expect, "bad/$file has an expect line" or next;
        $k = admin_key($fx) if $n++ % 50 == 0;
        my $r = install($k, "file:bad-$file", {});
        my $e = ref $r->{json} eq 'HASH' ? $r->{json}{error} // {} : {};
        my $msg = $e->{message} // '';
        # the module refuses a file over 64 KiB before parsing, with its own words
        my $names = $file eq 'too-large.toml' ? $msg =~ /too large/i : index($msg, $expect) >= 0;
        my $ok = $r->{status} == 422 && ($e->{type} // '') eq 'validation_error'
            && ($e->{param} // '') eq 'manifest_url' && $names;
        ok $ok, "bad/$file: 422 validation_error param manifest_url naming \""
                . ($file eq 'too-large.toml' ? 'too large' : $expect) . '"'
            or do { diag diag_resp($r); push @fails, $file };
        like $msg, qr/^manifest: /, "bad/$file: the message says it is the manifest" unless $file eq 'too-large.toml';
    }
    is one("SELECT count(*) FROM extensions WHERE facility_id = '$fx'"), 0, 'no broken manifest installed anything';
    is_deeply [worker_pids()], \@WORKERS, 'the same worker after the corpus: none died';
    my $h = http(GET => '/v1/health');
    is $h->{status}, 200, 'and it answers' or diag diag_resp($h);
    my @crash = grep { /signal|exited|\[alert\]|\[crit\]|\[emerg\]/ } error_log_lines();
    ok !@crash, 'error.log: no crash, no alert' or diag join "\n", @crash;
}

# --- file: names stay in the folder ------------------------------------------------------------
{
    my $ff = facility();
    my $KF = admin_key($ff);
    put_manifest('.hidden.toml', manifest(name => 'hidden'));
    make_path("$MDIR/sub");
    chmod 0755, "$MDIR/sub";
    put_manifest('sub/inner.toml', manifest(name => 'inner'));
    open my $fh, '>', prefix() . '/outside.toml' or die $!;
    print $fh manifest(name => 'outside');
    close $fh;
    chmod 0644, prefix() . '/outside.toml';
    symlink(prefix() . '/outside.toml', "$MDIR/link.toml") or die "symlink: $!";
    for my $u ('file:../outside.toml', 'file:..', 'file:.hidden.toml', 'file:sub/inner.toml', 'file:sub',
               'file:/etc/passwd', 'file:%2e%2e%2foutside.toml', 'file:missing.toml', 'file:link.toml',
               'file:' . ('a' x 129), 'file:', 'file:bad name.toml',
               'FILE:billing-demo.toml') {
        (my $show = $u) =~ s/\x{0}/\\0/g;
        check_err(install($KF, $u, {}), 422, 'validation_error', 'manifest_url', "manifest_url $show");
    }
    # a FIFO in the folder: open() must not wait for a writer (a stuck pool thread, no answer, no clean stop)
    system('mkfifo', "$MDIR/fifo.toml") == 0 or die "mkfifo: $?";
    chmod 0666, "$MDIR/fifo.toml";
    my $h = start_request(POST => '/v1/extensions',
                          [Authorization => "Bearer $KF", 'Content-Type' => 'application/json', 'Idempotency-Key' => idem()],
                          '{"manifest_url":"file:fifo.toml"}', timeout => 3);
    my $x = finish_request($h);
    unless ($x->{status}) {
        # unblock the reader, so that the pool thread and nginx can finish
        if (open my $w, '>', "$MDIR/fifo.toml") { close $w }
    }
    check_err($x, 422, 'validation_error', 'manifest_url', 'file:fifo.toml (a FIFO): 422 at once, not a hang');
    unlink "$MDIR/fifo.toml";
    is one("SELECT count(*) FROM extensions WHERE facility_id = '$ff'"), 0, 'nothing installed from outside the folder';
}

# --- concurrent installs of one name: one wins, the others 409 -------------------------------
{
    my $fc = facility();
    my $KC = admin_key($fc);
    put_manifest('race.toml', manifest(name => 'race'));
    my @r = parallel_requests(map { req_spec(POST => '/v1/extensions', $KC, '{"manifest_url":"file:race.toml"}',
                                             'Idempotency-Key' => idem()) } 1 .. 8);
    is scalar(grep { $_->{status} == 201 } @r), 1, '8 concurrent installs of one name: one 201';
    is scalar(grep { $_->{status} == 409 && (($_->{json} // {})->{error} // {})->{type} eq 'conflict' } @r), 7,
       'seven 409 conflict' or diag join ' ', map { $_->{status} } @r;
    is one("SELECT count(*) FROM extension_keys WHERE facility_id = '$fc'"), 1, 'one key issued';
}

# --- the request body ---------------------------------------------------------------------------
{
    my $fr = facility();
    my $KR = admin_key($fr);
    check_err(post('/v1/extensions', $KR, {}), 400, 'invalid_request', 'manifest_url', 'no manifest_url');
    check_err(post('/v1/extensions', $KR, { manifest_url => undef }), 400, 'invalid_request', 'manifest_url',
              'manifest_url null');
    check_err(post('/v1/extensions', $KR, { config => {} }), 400, 'invalid_request', 'manifest_url',
              'config without manifest_url');
    for my $u (42, JSON::PP::true, [], {}, '', 'billing-demo.toml', 'ftp://127.0.0.1/x.toml', 'https://',
               'https:/127.0.0.1/x', 'x' x 3000) {
        my $show = ref $u ? $JSON->encode($u) : length $u > 40 ? 'a 3000-character string' : "'$u'";
        check_err(post('/v1/extensions', $KR, { manifest_url => $u }), 422, 'validation_error', 'manifest_url',
                  "manifest_url $show");
    }
    for my $c ('x', 5, [], JSON::PP::true) {
        check_err(install($KR, 'file:billing-demo.toml', $c), 422, 'validation_error', 'config',
                  'config ' . $JSON->encode($c));
    }
    check_err(post('/v1/extensions', $KR, { manifest_url => 'file:billing-demo.toml', config => undef }), 422,
              'validation_error', 'config', 'config null');
    check_err(post('/v1/extensions', $KR, { manifest_url => 'file:billing-demo.toml', config => $demo_config, extra => 1 }),
              400, 'invalid_request', undef, 'an unknown body field');
    check_err(post('/v1/extensions', $KR, '{"manifest_url": "file:billing-demo.toml"'), 400, 'invalid_request', undef,
              'malformed JSON');
    check_err(post('/v1/extensions', $KR, '[]'), 400, 'invalid_request', undef, 'a JSON array body');
    check_err(post('/v1/extensions', $KR), 400, 'invalid_request', undef, 'no body');
    my $x = http(POST => '/v1/extensions', [Authorization => "Bearer $KR", 'Idempotency-Key' => idem()],
                 '{"manifest_url":"file:billing-demo.toml"}');
    ok $x->{status} == 415 || $x->{status} == 400, 'no Content-Type: refused (' . $x->{status} . ')' or diag diag_resp($x);
    is one("SELECT count(*) FROM extensions WHERE facility_id = '$fr'"), 0, 'nothing installed';
}

# --- from the registry over HTTPS ---------------------------------------------------------------
{
    my $fr = facility();
    my $KR = admin_key($fr);
    my $reg = "https://127.0.0.1:$REG_PORT";
    reg_file('reg-demo.toml', manifest(name => 'reg-demo', version => '3.1.4', category => 'insurance',
                                       fields => [[endpoint => { type => 'string', required => JSON::PP::true }]]));
    my $t0 = time;
    my $r = install($KR, "$reg/reg-demo.toml?v=3", { endpoint => 'https://x.example' });
    is $r->{status}, 201, 'install from the registry: 201' or diag diag_resp($r);
    is_deeply [@{$r->{json} // {}}{qw(name version status)}], [qw(reg-demo 3.1.4 installing)], 'name, version, installing';
    ok wait_status($fr, 'reg-demo', 'running', 4), sprintf 'running after %.1f s', time - $t0;
    ok has_group($fr, 'reg-demo'), 'its consumer group exists';
    is one("SELECT manifest_url FROM extensions WHERE facility_id = '$fr' AND name = 'reg-demo'"), "$reg/reg-demo.toml?v=3",
       'the manifest URL kept';
    my @got = grep { m{^GET /reg-demo\.toml\?v=3 } } reg_log();
    is scalar(@got), 1, 'the registry was asked once, by nginx' or diag join "\n", reg_log();
    like $got[0] // '', qr/auth=\[-?\] idem=\[-?\]$/, 'without the caller\'s Authorization or Idempotency-Key';
    is req(GET => "/v1/ext/billing/invoices/" . invoice($fr), $r->{json}{api_key})->{status}, 200, 'its key works';
    check_err(install($KR, "$reg/reg-demo.toml", { endpoint => 'y' }), 409, 'conflict', undef,
              'the same name from the registry again: 409');

    # near the limit: a 60 KiB manifest installs; 70 KiB does not
    my $pad = sub { my ($name, $size) = @_; my $m = manifest(name => $name);
                    $m .= ('# ' . ('p' x 76) . "\n") x int(($size - length $m) / 79); $m };
    reg_file('six-k.toml', $pad->('six-k', 6 * 1024));
    $r = install($KR, "$reg/six-k.toml");
    is $r->{status}, 201, 'a 6 KiB manifest (comments) from the registry: 201' or diag diag_resp($r);
    reg_file('big-ok.toml', $pad->('big-ok', 60 * 1024));
    reg_file('too-big.toml', $pad->('too-big', 70 * 1024));
    $r = install($KR, "$reg/big-ok.toml");
    is $r->{status}, 201, 'a 60 KiB manifest from the registry: 201' or diag diag_resp($r);
    check_err(install($KR, "$reg/too-big.toml"), 422, 'validation_error', 'manifest_url', 'a 70 KiB manifest: 422');
    copy("$ROOT/t/data/manifests/bad/too-large.toml", "$REG/www/too-large.toml");
    chmod 0644, "$REG/www/too-large.toml";
    check_err(install($KR, "$reg/too-large.toml"), 422, 'validation_error', 'manifest_url', 'bad/too-large.toml from the registry: 422');
    check_err(install($KR, "$reg/missing.toml"), 422, 'validation_error', 'manifest_url', 'a 404 from the registry: 422');
    check_err(install($KR, "$reg/redirect.toml"), 422, 'validation_error', 'manifest_url', 'a redirect: 422, not followed');
    check_err(install($KR, "$reg/error.toml"), 422, 'validation_error', 'manifest_url', 'a 500: 422');
    reg_file('empty.toml', '');
    check_err(install($KR, "$reg/empty.toml"), 422, 'validation_error', 'manifest_url', 'an empty body: 422');
    copy("$ROOT/t/data/manifests/bad/duplicate-key.toml", "$REG/www/dup.toml");
    chmod 0644, "$REG/www/dup.toml";
    $r = install($KR, "$reg/dup.toml");
    check_err($r, 422, 'validation_error', 'manifest_url', 'a broken manifest from the registry');
    like(($r->{json}{error} // {})->{message} // '', qr/^manifest: .*duplicate key "name"/, 'its message names the problem');

    # a timeout: the worker keeps serving meanwhile
    my $h = start_request(POST => '/v1/extensions',
                          [Authorization => "Bearer $KR", 'Content-Type' => 'application/json', 'Idempotency-Key' => idem()],
                          $JSON->encode({ manifest_url => "https://127.0.0.1:$HANG_PORT/slow.toml" }));
    ok wait_until(5, sub { IO::Select->new($HANG)->can_read(0) }),
       'the fetch is in flight (its connection waits at the registry)';
    my $mid = http(GET => '/v1/health');
    # answered while the install still waits for its fetch (nothing on its socket yet): a
    # worker blocked on the fetch would answer only after it
    ok $mid->{status} == 200 && !IO::Select->new($h->{sock})->can_read(0),
       sprintf 'during the fetch the one worker answers others (%.2f s)', $mid->{elapsed};
    my $slow = finish_request($h);
    check_err($slow, 422, 'validation_error', 'manifest_url', 'a registry that never answers');
    # not before the location's 2 s timeouts; the upper bound only says it did not hang
    # (nginx's own default is 60 s; the client gives up at 30 s)
    ok $slow->{elapsed} >= 1.5 && $slow->{elapsed} < 17, sprintf 'after the fetch timeout (%.1f s)', $slow->{elapsed};
    check_err(install($KR, "https://127.0.0.1:$REFUSED_PORT/x.toml"), 422, 'validation_error', 'manifest_url',
              'a registry that refuses the connection');

    # hosts and schemes not allowed: no fetch at all
    my $before = scalar(reg_log());
    my $other = free_port();
    for my $u ("https://127.0.0.1:$other/reg-demo.toml", "https://localhost:$REG_PORT/reg-demo.toml",
               'https://127.0.0.1/reg-demo.toml', "https://127.0.0.1:${REG_PORT}0/reg-demo.toml",
               "https://user\@127.0.0.1:$REG_PORT/reg-demo.toml", "https://127.0.0.1:$REG_PORT\@evil.example/x.toml",
               "http://127.0.0.1:$REG_PORT/reg-demo.toml", "https://127.0.0.2:$REG_PORT/reg-demo.toml",
               "https://127.0.0.1:$REG_PORT\\\@evil/x", "https://evil.example/?h=127.0.0.1:$REG_PORT") {
        check_err(install($KR, $u), 422, 'validation_error', 'manifest_url', "not allowed: $u");
    }
    is scalar(reg_log()), $before, 'the registry got no request for them';
    is one("SELECT count(*) FROM extensions WHERE facility_id = '$fr'"), 3, 'only reg-demo, six-k and big-ok installed';
}

# --- strict URLs: the allow-list bypasses of issue 11 ------------------------------------------
{
    my $fs = facility();
    my $KS = admin_key($fs);
    my $reg = "https://127.0.0.1:$REG_PORT";
    reg_file('strict.toml', manifest(name => 'strict'));
    my $before = scalar(reg_log());
    my @attacks = (
        # nginx ends a host at "/" or "?", the old check also at "#": another host and port
        ['https://registry.example.com#.attacker.example:6379/x', qr/fragment/, 'a "#" in the host'],
        ["$reg#.attacker.example:6379/strict.toml", qr/fragment/, 'a "#" after an allowed host:port'],
        ["$reg/strict.toml#top", qr/fragment/, 'a fragment after the path'],
        ['https://registry.example.com%23.attacker.example/x', qr/host/, '"%23" in the host'],
        ['https://registry.example.com%2fx@evil.example/', qr/userinfo/, '"%2f" and "@" in the host'],
        ['https://registry.example.com@evil/', qr/userinfo/, 'userinfo: an allowed host as the user name'],
        ['https://user:pw@registry.example.com/x.toml', qr/userinfo/, 'userinfo: user:pw@'],
        ["https://x\@127.0.0.1:$REG_PORT/strict.toml", qr/userinfo/, 'userinfo before the registry'],
        ["$reg/strict.toml\r\nX-Injected: 1", qr/path/, 'raw CR/LF in the path'],
        ["$reg/strict.toml?a=1\r\nX-Injected: 1", qr/query/, 'raw CR/LF in the query'],
        ["$reg/strict.toml\nX-Injected: 1", qr/path/, 'a raw LF in the path'],
        ["$reg/strict .toml", qr/path/, 'a space in the path'],
        ["$reg/strict\\.toml", qr/path/, 'a backslash in the path'],
        ["$reg/strict.toml\x{7f}", qr/path/, 'DEL in the path'],
        ["$reg/str\x{e9}ct.toml", qr/path/, 'a non-ASCII character in the path'],
        ["https://registry.ex\x{430}mple.com/x.toml", qr/non-ASCII|punycode/, 'an IDN homograph (Cyrillic a)'],
        ['https://registry.xn--exmple-4nf.com/x.toml', qr/punycode/, 'an IDN homograph as xn--'],
        ['https://XN--registry-4nf.example.com/x.toml', qr/punycode/, 'an xn-- label in capitals'],
        ['https://registry.example.com./x.toml', qr/host/, 'a trailing dot'],
        ["https://127.0.0.1.:$REG_PORT/strict.toml", qr/host/, 'a trailing dot after the registry address'],
        ["https://0177.0.0.1:$REG_PORT/strict.toml", qr/IP address/, 'an octal address'],
        ["https://0x7f.0.0.1:$REG_PORT/strict.toml", qr/IP address/, 'a hex address'],
        ["https://0x7f000001:$REG_PORT/strict.toml", qr/IP address/, 'a hex dword address'],
        ["https://2130706433:$REG_PORT/strict.toml", qr/IP address/, 'a decimal dword address'],
        ["https://127.1:$REG_PORT/strict.toml", qr/IP address/, 'a short address (127.1)'],
        ["https://127.0.0.01:$REG_PORT/strict.toml", qr/IP address/, 'a zero-padded address'],
        ["https://[::ffff:127.0.0.1%25lo]:$REG_PORT/strict.toml", qr/IP address/, 'an IPv6 zone id'],
        ["https://127.0.0.1:0$REG_PORT/strict.toml", qr/port/, 'a zero-padded port'],
        ['https://registry.example.com:65536/x.toml', qr/port/, 'port 65536'],
        ["https://127.0.0.1:$REG_PORT:1/strict.toml", qr/host/, 'two ports'],
        ["https://127.0.0.1:$REG_PORT/%zz.toml", qr/path/, 'a bad percent escape'],
    );
    for my $a (@attacks) {
        my ($u, $why, $name) = @$a;
        my $r = install($KS, $u);
        check_err($r, 422, 'validation_error', 'manifest_url', "refused: $name");
        like(((ref $r->{json} eq 'HASH' ? $r->{json}{error} : undef) // {})->{message} // '', $why,
             "refused: $name: the message names the rule");
    }
    is scalar(reg_log()), $before, 'the registry got no request for any of them' or diag join "\n", reg_log();
    is one("SELECT count(*) FROM extensions WHERE facility_id = '$fs'"), 0, 'nothing installed';

    # "%0d%0a" is data: it reaches the registry encoded, never as a header
    my $r = install($KS, "$reg/crlf%0d%0aX-Injected:%201.toml");
    check_err($r, 422, 'validation_error', 'manifest_url', '%0d%0a: fetched, the registry has no such file: 422');
    my @got = grep { m{^GET /crlf} } reg_log();
    is scalar(@got), 1, '%0d%0a: the registry was asked once' or diag join "\n", reg_log();
    like $got[0] // '', qr{^GET /crlf%0d%0aX-Injected:%201\.toml inj=\[-?\] }, '%0d%0a: still encoded, no X-Injected header';

    # what is fetched and stored: the URL rebuilt (scheme and host in lowercase, the default
    # port dropped, the path and query as sent)
    $r = install($KS, "HTTPS://127.0.0.1:$REG_PORT/strict.toml?v=%41b");
    is $r->{status}, 201, 'an upper-case scheme installs' or diag diag_resp($r);
    is one("SELECT manifest_url FROM extensions WHERE facility_id = '$fs' AND name = 'strict'"),
       "https://127.0.0.1:$REG_PORT/strict.toml?v=%41b", 'the manifest URL stored is the rebuilt one';
    ok((grep { m{^GET /strict\.toml\?v=%41b } } reg_log()), 'the registry was asked for the rebuilt path and query')
        or diag join "\n", reg_log();
}

# --- another fetch location name -------------------------------------------------------------
{
    (my $loc = $FETCH) =~ s{/_cms_fetch}{/_registry_fetch};
    restart_nginx(config => $loc,
                  http_config => "cms_extensions_registry 127.0.0.1:$REG_PORT;\ncms_extensions_fetch_location /_registry_fetch;");
    my $fo = facility();
    reg_file('other-loc.toml', manifest(name => 'other-loc'));
    my $r = install(admin_key($fo), "https://127.0.0.1:$REG_PORT/other-loc.toml");
    is $r->{status}, 201, 'cms_extensions_fetch_location /_registry_fetch: installs' or diag diag_resp($r);
    my $x = http(GET => '/_registry_fetch');
    is $x->{status}, 404, 'the fetch location is internal: 404 from outside';
    check_err(install(admin_key($fo), 'file:billing-demo.toml'), 422, 'validation_error', 'manifest_url',
              'file: without the folder directive');
}

stop_registry();
{
    my @bad = grep { /\[(alert|crit|emerg)\]/ } do { open my $fh, '<', "$REG/logs/error.log"; <$fh> };
    ok !@bad, 'the registry\'s error.log is clean' or diag join '', @bad;
}
close $HANG;
done_testing();
