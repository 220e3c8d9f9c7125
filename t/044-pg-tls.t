# PostgreSQL over TLS. A PostgreSQL of this file's own (its data folder under the file's
# prefix, a free loopback port) accepts TLS only (pg_hba: hostssl, and hostnossl reject),
# with a server certificate for db.test from a throwaway CA made here with openssl.
# cms_postgres connects to hostaddr=127.0.0.1 with host=db.test sslmode=verify-full
# sslrootcert=CA (and to host=db.test alone, resolved through nginx's resolver from a
# test DNS server): the smoke routes pass through it, and so do answers larger than libpq's
# buffer (pages of 1 to 100 articles, a 450 KB article, 50 large reads at once), whole.
# The same again through a relay that writes 16 KiB records: PostgreSQL 15 writes 8 KiB
# ones, which libpq's reads (never into less than 8 KiB of room) always take whole, while
# part of a 16 KiB record stays decrypted in OpenSSL when libpq reads it into less room,
# with no event to announce it; the debug log shows the pool finding such bytes (libpq
# 15.19 and later read them themselves: the pool then finds none, and the reads are
# whole either way). Another CA, or a host= the certificate does not name, answers 503
# service_unavailable with the TLS failure in error.log; sslmode=require works without a
# root certificate; nginx -t refuses verify-* without sslrootcert=, verify-full without
# host=, prefer and allow (they may fall back to plain text), TLS over a unix socket, and
# certificate paths that are relative, missing or given without sslmode.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp check_err signup workspace key);
use Cms::Dns;
use File::Path qw(make_path);
use IO::Select ();
use IO::Socket::INET ();
use POSIX ();

my ($bin) = grep { -x "$_/pg_ctl" } '/usr/lib/postgresql/15/bin', glob '/usr/lib/postgresql/*/bin';
plan skip_all => 'no PostgreSQL server binaries' unless $bin;
plan skip_all => 'no openssl command' unless grep { -x "$_/openssl" } split /:/, $ENV{PATH};
plan skip_all => 'no IO::Socket::SSL (libio-socket-ssl-perl)'
    unless eval { require IO::Socket::SSL };

my $dir = prefix() . '/pgtls';
my $port = free_port();
my $db = 'cms_tls';

sub run_ok {
    my $out = `@_ 2>&1`;
    die "@_: $out" if $?;
    return $out;
}
sub write_file { my ($f, $t) = @_; open my $fh, '>', $f or die "$f: $!"; print $fh $t; close $fh }
my $BASE0 = "hostaddr=127.0.0.1 port=$port user=postgres";

# psql over TLS on the file's server: the first column of the first row
sub q_tls {
    my ($sql, $d) = @_;
    my $ci = "$BASE0 sslmode=require dbname=" . ($d // $db);
    my $out = `psql -X -q -At -d "$ci" -c "$sql" 2>&1`;
    chomp $out;
    return $out;
}

# A TLS relay in front of the shared (plain text) PostgreSQL on $upstream: it answers the
# SSLRequest with 'S', shakes hands with db.test's certificate and writes what the server
# sends back to back in records of 16 KiB, the largest TLS has. Returns its port; each
# connection is a process of its own, ending with either side.
my $relay_pid;
sub start_relay {
    my ($upstream) = @_;
    my $l = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Listen => 16,
                                  Proto => 'tcp', ReuseAddr => 1) or die "listen: $!";
    $relay_pid = fork // die "fork: $!";
    return $l->sockport if $relay_pid;
    $SIG{CHLD} = 'IGNORE';
    while (1) {
        my $c = $l->accept or next;
        my $k = fork;
        if (defined $k && !$k) {
            close $l;
            eval { relay($c, $upstream) };
            POSIX::_exit(0);                    # never the parent's END blocks
        }
        close $c;
    }
}
sub relay {
    my ($c, $upstream) = @_;
    my $req = '';
    while (length $req < 8) { sysread($c, $req, 8 - length $req, length $req) or return }
    return unless (unpack 'NN', $req)[1] == 80877103;       # SSLRequest
    syswrite $c, 'S';
    IO::Socket::SSL->start_SSL($c, SSL_server => 1, SSL_cert_file => "$dir/server.crt",
                               SSL_key_file => "$dir/server.key") or return;
    my $u = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $upstream,
                                  Proto => 'tcp') or return;
    my $sel = IO::Select->new($c, $u);
    while (1) {
        for my $s ($c->pending ? ($c) : $sel->can_read) {
            if ($s == $c) {
                my $n = sysread($c, my $buf, 16384) or return;
                syswrite($u, $buf) == $n or return;
                next;
            }
            # what the server wrote back to back (8 KiB at a time), up to 64 KiB
            my ($buf, $eof) = ('', 0);
            while (!$eof && length $buf < 65536
                   && IO::Select->new($u)->can_read(length $buf ? 0.005 : 0)) {
                $eof = !sysread($u, $buf, 65536 - length $buf, length $buf);
            }
            while (length $buf) {
                my $chunk = substr $buf, 0, 16384, '';
                syswrite($c, $chunk) == length $chunk or return;
            }
            return if $eof;
        }
    }
}

END {
    kill 'TERM', $relay_pid if $relay_pid;
    if ($dir && -f "$dir/data/postmaster.pid") {
        as_postgres("$bin/pg_ctl", '-D', "$dir/data", '-m', 'immediate', '-w', 'stop');
    }
}

# --- a CA, a server certificate for db.test, and a CA that signed nothing here
make_path($dir);
chmod 0755, $dir;
my $ec = '-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes';
for my $ca (qw(ca other)) {
    run_ok("openssl req -x509 $ec -keyout $dir/$ca.key -out $dir/$ca.pem -days 2"
           . " -subj /CN=cms-test-$ca -addext basicConstraints=critical,CA:TRUE"
           . " -addext keyUsage=keyCertSign,cRLSign");
    chmod 0644, "$dir/$ca.pem";
}
run_ok("openssl req $ec -keyout $dir/server.key -out $dir/server.csr -subj /CN=db.test");
write_file("$dir/server.ext", "subjectAltName=DNS:db.test\nbasicConstraints=CA:FALSE\n"
                              . "extendedKeyUsage=serverAuth\n");
run_ok("openssl x509 -req -in $dir/server.csr -CA $dir/ca.pem -CAkey $dir/ca.key"
       . " -CAcreateserial -out $dir/server.crt -days 2 -extfile $dir/server.ext");
if ($> == 0) {
    my $uid = getpwnam('postgres');
    chown $uid, -1, $dir, "$dir/server.key", "$dir/server.crt";
}
chmod 0600, "$dir/server.key";

# --- the TLS-only server
my ($rc, $out) = as_postgres("$bin/initdb", '-D', "$dir/data", '-A', 'trust', '-U', 'postgres',
                             '-E', 'UTF8', '--locale=C', '--no-sync');
die "initdb: $out" if $rc;
open my $conf, '>>', "$dir/data/postgresql.conf" or die;
print $conf "listen_addresses = '127.0.0.1'\nport = $port\nunix_socket_directories = '$dir'\n"
    . "fsync = off\nssl = on\nssl_cert_file = '$dir/server.crt'\n"
    . "ssl_key_file = '$dir/server.key'\n";
close $conf;
write_file("$dir/data/pg_hba.conf", "local all all trust\n"
                                    . "hostssl all all 127.0.0.1/32 trust\n"
                                    . "hostnossl all all 0.0.0.0/0 reject\n");
($rc, $out) = as_postgres("$bin/pg_ctl", '-D', "$dir/data", '-l', "$dir/postgres.log",
                          '-w', '-t', '30', 'start');
die "pg_ctl start: $out" if $rc;
is q_tls('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()', 'postgres'), 't',
    'psql reaches the server over TLS';
my $plain = `psql -X -At -d "$BASE0 dbname=postgres sslmode=disable" -c 'SELECT 1' 2>&1`;
like $plain, qr/reject|no encryption/, 'the server refuses plain text';
is q_tls("CREATE DATABASE $db", 'postgres'), '', 'the database is created';
is system("$ENV{TEST_CMS_ROOT}/scripts/migrate.sh",
          "hostaddr=127.0.0.1 port=$port dbname=$db user=postgres sslmode=require") >> 8, 0,
    'the database is migrated over TLS';

my $BASE = "$BASE0 dbname=$db";
sub pg_line { qq{cms_postgres "$BASE @_" max=4 connect_timeout=2s query_timeout=5s;} }
my $VERIFY = "host=db.test sslmode=verify-full sslrootcert=$dir/ca.pem";

# --- nginx -t --------------------------------------------------------------------------
for my $case (["sslmode=verify-full host=db.test", qr/"verify-full" needs "sslrootcert="/],
              ["sslmode=verify-ca", qr/"verify-ca" needs "sslrootcert="/],
              ["sslmode=verify-full sslrootcert=$dir/ca.pem", qr/"verify-full" needs "host="/],
              ["sslmode=prefer", qr/sslmode "prefer" is not supported.*plain text/],
              ["sslmode=allow", qr/sslmode "allow" is not supported/],
              ["sslmode=bogus", qr/invalid conninfo|"bogus" is not supported/],
              ["requiressl=0", qr/sslmode "prefer" is not supported/],
              ["sslrootcert=$dir/ca.pem", qr/"sslrootcert=" needs "sslmode="/],
              ["sslmode=verify-ca sslrootcert=ca.pem", qr/"sslrootcert=" must be an absolute path/],
              ["sslmode=verify-ca sslrootcert=$dir/none.pem",
               qr/sslrootcert ".*none.pem" cannot be read/],
              ["sslmode=require sslcert=$dir/none.crt", qr/sslcert ".*none.crt" cannot be read/]) {
    my $t = nginx_test(postgres => pg_line($case->[0]));
    isnt $t->{rc}, 0, "nginx -t refuses $case->[0]";
    like $t->{out}, $case->[1], '... saying why' or diag $t->{out};
}
my $t = nginx_test(postgres => qq{cms_postgres "host=$dir port=$port dbname=$db user=postgres}
                               . qq{ sslmode=require";});
isnt $t->{rc}, 0, 'nginx -t refuses TLS over a unix socket';
like $t->{out}, qr/needs "hostaddr=": libpq does not use TLS over a unix socket/, '... saying why';
for my $ok ($VERIFY, "sslmode=verify-ca sslrootcert=$dir/ca.pem", 'sslmode=require',
            'requiressl=1', 'sslmode=disable') {
    $t = nginx_test(postgres => pg_line($ok));
    is $t->{rc}, 0, "nginx -t takes $ok" or diag $t->{out};
}

# --- verify-full against hostaddr, host=db.test: the smoke routes ----------------------
start_nginx(workers => 1, postgres => pg_line($VERIFY));
my $h = http(GET => '/v1/health');
is $h->{status}, 200, 'health: 200' or diag $h->{body};
my $u = signup();
my $login = req(POST => '/v1/auth/login', undef,
                { email => $u->{email}, password => $u->{password} });
is $login->{status}, 200, 'login: 200' or diag diag_resp($login);
ok(($login->{json} // {})->{token}, 'login: a token');
my $wid = workspace($u->{token}, 'TLS');
my $K = key($u->{token}, $wid, 'rw', 'articles:read', 'articles:write');
my $a = req(POST => '/v1/api/articles', $K, { title => 'Over TLS', body => 'Encrypted.' });
is $a->{status}, 201, 'create an article: 201' or diag diag_resp($a);
my $l = req(GET => '/v1/api/articles', $K);
is $l->{status}, 200, 'list articles: 200' or diag diag_resp($l);
is_deeply [map { $_->{title} } @{($l->{json} // {})->{articles} // []}], ['Over TLS'],
    'the list has the article';
like q_tls("SELECT count(*) FILTER (WHERE s.ssl) || ' ' || count(*) FILTER (WHERE NOT s.ssl)"
           . " FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)"
           . " WHERE a.application_name = 'ngx_http_cms'"), qr/^[1-4] 0$/,
    "the module's connections are encrypted, all of them";

# --- answers larger than libpq's buffer and than a TLS record --------------------------
my $big = join '', map { sprintf "word%06d ", $_ } 1 .. 40960;      # 450 KB, plain text

# In a workspace of its own ($name): 99 articles of 4 KB written 50 and 49 at once, then
# pages of 1 to 99 of them read one after the other (on connections whose libpq buffer is
# still 16 KiB, answers of many records). Returns the key.
sub many_pages {
    my ($name) = @_;
    my $u = signup();
    my $K = key($u->{token}, workspace($u->{token}, $name), 'rw', 'articles:read',
                'articles:write');
    my $small = 'x' x 4000;
    for my $round ([1 .. 50], [51 .. 99]) {
        my @w = parallel_requests(map {
            my $s = Cms::Fixtures::req_spec(POST => '/v1/api/articles', $K,
                                            { title => "Many $_", body => "$_ $small" });
            +{ %$s, timeout => 20 }
        } @$round);
        is scalar(grep { $_->{status} == 201 } @w), scalar(@$round),
            "$name: " . @$round . " writes at once: all 201"
            or diag join "\n", map { diag_resp($_) } grep { $_->{status} != 201 } @w;
    }
    my @short;
    for my $n (grep { $_ % 2 } 1 .. 99) {
        my $p = req(GET => "/v1/api/articles?limit=$n", $K);
        push @short, "limit=$n: " . diag_resp($p)
            unless $p->{status} == 200 && @{($p->{json} // {})->{articles} // []} == $n;
    }
    is scalar(@short), 0, "$name: 50 pages of 1 to 99 articles, each whole"
        or diag join "\n", @short;
    return $K;
}

# Then a 450 KB article read back, a page of 100 (the 99 and that one), and 50 of those
# reads at once, all whole.
sub large_reads {
    my ($name, $K) = @_;
    my $b = req(POST => '/v1/api/articles', $K, { title => 'Large', body => $big });
    is $b->{status}, 201, "$name: a 400 KiB article: 201" or diag diag_resp($b);
    my $bid = (($b->{json} // {})->{article} // {})->{id} // 'none';
    my $g = req(GET => "/v1/api/articles/$bid", $K);
    is $g->{status}, 200, "$name: read it back: 200" or diag diag_resp($g);
    ok((($g->{json} // {})->{article} // {})->{body} eq $big, "$name: the whole body came back")
        or diag 'got ' . length((($g->{json} // {})->{article} // {})->{body} // '') . ' bytes';

    my $l = req(GET => '/v1/api/articles?limit=100', $K);
    my $rows = ($l->{json} // {})->{articles} // [];
    is $l->{status}, 200, "$name: a page of 100: 200" or diag diag_resp($l);
    is scalar(@$rows), 100, "$name: a page of 100: 100 articles";
    is((($l->{json} // {})->{pagination} // {})->{total}, 100, "$name: a page of 100: total 100");
    my ($large) = grep { $_->{id} eq $bid } @$rows;
    ok $large && $large->{body} eq $big, "$name: the page carries the large body whole";

    my @burst = parallel_requests(map {
        my $s = Cms::Fixtures::req_spec(GET => $_ % 2 ? '/v1/api/articles?limit=100'
                                                      : "/v1/api/articles/$bid", $K);
        +{ %$s, timeout => 120 }
    } 1 .. 50);
    my @bad = grep { $_->{status} != 200 || $_->{error} } @burst;
    is scalar(@bad), 0, "$name: 50 large reads at once: all 200"
        or diag join "\n", map { diag_resp($_) } @bad;
    is scalar(grep { length($_->{body}) > 400_000 } @burst), 50,
        "$name: ... each with its whole answer";
}
large_reads('TLS', many_pages('TLS'));

# --- host=db.test without hostaddr=: nginx's resolver finds the address, libpq verifies the
# certificate against the name (t/052 has the rest of host names)
{
    my $dns = Cms::Dns->start(records => { 'db.test' => ['127.0.0.1'] });
    restart_nginx(workers => 1,
                  postgres => qq{cms_postgres "host=db.test port=$port dbname=$db user=postgres}
                            . qq{ sslmode=verify-full sslrootcert=$dir/ca.pem" max=4 connect_timeout=2s;},
                  http_config => 'resolver 127.0.0.1:' . $dns->port . ' valid=1s;');
    my $r = req(GET => '/v1/api/articles', $K);
    is $r->{status}, 200, 'host=db.test resolved by nginx, verify-full against the name: 200'
        or diag diag_resp($r);
    cmp_ok $dns->queries('db.test'), '>=', 1, '... the test DNS server was asked for db.test';
}

# --- the wrong CA, then a host name the certificate does not carry: 503 ------------------
for my $case (["host=db.test sslmode=verify-full sslrootcert=$dir/other.pem",
               qr/PQconnectPoll\(\) failed: .*certificate verify failed/, 'another CA'],
              ["host=other.test sslmode=verify-full sslrootcert=$dir/ca.pem",
               qr/PQconnectPoll\(\) failed: .*"db\.test" does not match host name "other\.test"/,
               'another host name']) {
    restart_nginx(workers => 1, postgres => pg_line($case->[0]));
    my $off = error_log_size();
    my $r = req(GET => '/v1/api/articles', $K);
    check_err($r, 503, 'service_unavailable', "$case->[2]: a database route");
    ok wait_until(5, sub { grep { /\[error\].*$case->[1]/ } error_log_lines($off) }),
        "$case->[2]: error.log names the TLS failure"
        or diag join '', error_log_lines($off);
    $r = req(GET => '/v1/api/articles', $K);
    check_err($r, 503, 'service_unavailable', "$case->[2]: the next request");
}

# --- sslmode=require: encrypted, not verified ---------------------------------------------
restart_nginx(workers => 1, postgres => pg_line('sslmode=require'));
$l = req(GET => '/v1/api/articles', $K);
is $l->{status}, 200, 'sslmode=require without a root certificate: 200' or diag diag_resp($l);
is_deeply [map { $_->{title} } @{($l->{json} // {})->{articles} // []}], ['Over TLS'],
    '... with the page';

# --- the same answers through a relay that writes 16 KiB records ---------------------------
my $relay = start_relay($ENV{TEST_CMS_PG_PORT});
my $RELAYED = qq{cms_postgres "hostaddr=127.0.0.1 port=$relay dbname=%%DB%% user=postgres}
             . qq{ $VERIFY" max=4 query_timeout=5s;};
restart_nginx(workers => 1, postgres => $RELAYED, error_log => 'logs/error.log debug');
my $off = error_log_size();
$K = many_pages('relayed');
# libpq 15.19 and later take what OpenSSL holds themselves (the same relay, the same reads:
# the module then never finds any); earlier ones leave it, and the module must find it
my $libpq = (http(GET => '/v1/_test/pool')->{json} // {})->{libpq} // 0;
my $found = grep { /cms pg tls: \d+ bytes decrypted, not read yet/ } error_log_lines($off);
if ($libpq >= 150019) {
    is $found, 0, "relayed, libpq $libpq: it reads what OpenSSL holds itself, none left for the pool";
} else {
    ok $found, "relayed, libpq $libpq: reads found bytes OpenSSL held (the debug log says so)";
}
restart_nginx(workers => 1, postgres => $RELAYED);
large_reads('relayed', $K);

done_testing();
