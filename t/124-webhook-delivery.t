# Webhook delivery (issue 16): outbox events fanned out to webhook_deliveries in the
# transaction that wrote them, sent by worker 0 of each host over the module's own
# non-blocking HTTP/1.1 client (nginx's resolver, TLS verified against a test CA, SNI),
# retried on the Standard Webhooks schedule (scaled down here: cms_webhook_delivery
# retry_scale=0.005), and the delivery log and the redeliver and test routes.
#
# The receiver is an HTTPS server of this file (IO::Socket::SSL, a certificate from a
# throwaway CA made here, 24 children each serving a connection at a time) on 127.0.0.1 behind names of
# the test DNS server. It verifies both signatures of every delivery (x-service-signature
# and webhook-signature v1, with every secret the endpoint has) and refuses a stale
# webhook-timestamp, and logs every request.
#
# Attacks: a receiver failing twice then answering (exactly one success, attempts at the
# scaled schedule's times); 410 (the delivery failed, the endpoint disabled with its
# reason); a receiver slower than the timeout (timed out, retried); an endless body (cut
# off at 64 KiB, the attempt settled long before the timeout); kept-alive connections (a
# 204 without a length, three deliveries on one connection; one closed by the receiver
# under the next request, sent again on a new one within the attempt; a chunked answer
# not kept); a name that resolved to 127.0.0.1 at registration and to 10.0.0.5 at
# delivery, names re-pointed to an address of every refused range (IPv4 and IPv6: each
# refused by registration, then at delivery), and an IP literal of a private range
# written into the row (refused on the address actually connected to: nothing reaches
# any); an untrusted certificate; the events filter and a disabled endpoint
# (no fan-out); a rotated secret (two v1 entries, each verifies); two nginx hosts
# draining 40 events at once (each sent exactly once); redeliver (same event id, same
# body) and webhook.test; kill -9 of worker 0 mid-delivery (pending, sent again by the
# next worker once the lease ends, one webhook-id); a PostgreSQL restart with 40 events
# queued and in flight (each reaches the receiver, none more than twice); a graceful quit with a delivery in flight (nginx does not wait
# for it; sent again after the restart, one webhook-id); the log paged newest first; every route without or with a bad
# credential, a missing scope, a demoted key, each role below admin, unknown, malformed
# and another workspace's ids; settled rows and content events past the retention purged.
use strict;
use warnings;
use Cms::Test;
use Cms::Dns;
use Cms::Hosts qw(start_host_b stop_host_b host_b_errors);
use Cms::Fixtures qw(req diag_resp check_err one signup signup_defaults workspace key demoted_key);
use Digest::SHA qw(hmac_sha256 hmac_sha256_hex);
use MIME::Base64 qw(encode_base64 decode_base64);
use File::Path qw(make_path);
use IO::Socket::INET;
use IO::Socket::SSL;
use JSON::PP ();
use POSIX ();
use Fcntl qw(:flock);
use Time::HiRes ();

plan skip_all => 'no openssl command' unless grep { -x "$_/openssl" } split /:/, $ENV{PATH};

signup_defaults(email_prefix => 'deliver');
my $JSON = JSON::PP->new->canonical(1);

# --- a CA, the receiver's certificate (hooks.test, flip.test, 127.0.0.1), another CA ----

my $dir = prefix() . '/hooktls';
make_path($dir);
chmod 0755, $dir;
sub run_ok { my $out = `@_ 2>&1`; die "@_: $out" if $?; $out }
sub write_file { my ($f, $t) = @_; open my $fh, '>', $f or die "$f: $!"; print $fh $t; close $fh; $f }
my $ec = '-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes';
for my $ca (qw(ca other)) {
    run_ok("openssl req -x509 $ec -keyout $dir/$ca.key -out $dir/$ca.pem -days 2"
           . " -subj /CN=cms-hooks-$ca -addext basicConstraints=critical,CA:TRUE"
           . " -addext keyUsage=keyCertSign,cRLSign");
}
for my $leaf (['server', 'ca'], ['stranger', 'other']) {
    my ($n, $ca) = @$leaf;
    run_ok("openssl req $ec -keyout $dir/$n.key -out $dir/$n.csr -subj /CN=hooks.test");
    write_file("$dir/$n.ext", "subjectAltName=DNS:hooks.test,DNS:flip.test,DNS:stranger.test,DNS:keep.test\n"
                              . "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n");
    run_ok("openssl x509 -req -in $dir/$n.csr -CA $dir/$ca.pem -CAkey $dir/$ca.key"
           . " -CAcreateserial -out $dir/$n.crt -days 2 -extfile $dir/$n.ext");
}
chmod 0644, glob("$dir/*");

# --- the receiver ------------------------------------------------------------------------

write_file("$dir/secrets.json", '{}');
write_file("$dir/requests", '');

sub locked_append {
    my ($f, $line) = @_;
    open my $fh, '>>', $f or die "$f: $!";
    flock $fh, LOCK_EX;
    print $fh $line;
    close $fh;
}
# how many requests this path had before, counted under a lock
sub bump {
    my ($name) = @_;
    open my $fh, '+>>', "$dir/count-$name" or die $!;
    flock $fh, LOCK_EX;
    seek $fh, 0, 0;
    my $n = <$fh> // 0;
    truncate $fh, 0;
    print $fh $n + 1;
    close $fh;
    return $n + 0;
}
sub secrets_of {
    open my $fh, '<', "$dir/secrets.json" or return [];
    local $/;
    my $all = $JSON->decode(<$fh>);
    return $all->{$_[0]} // [];
}
# the receiver's check of one request: (ok, why)
sub verify {
    my ($secrets, $h, $body) = @_;
    my ($id, $ts, $sig, $hex) = @$h{qw(webhook-id webhook-timestamp webhook-signature x-service-signature)};
    return (0, 'headers missing') unless defined $id && defined $ts && defined $sig && defined $hex;
    return (0, 'stale timestamp') if $ts !~ /^\d+$/ || abs(time - $ts) > 300;
    return (0, 'no secret') unless @$secrets;
    return (0, 'x-service-signature') unless $hex eq hmac_sha256_hex($body, $secrets->[0]);
    my %sent = map { $_ => 1 } split / /, $sig;
    for my $s (@$secrets) {
        my $mine = 'v1,' . encode_base64(hmac_sha256("$id.$ts.$body", decode_base64(substr $s, 6)), '');
        return (0, "webhook-signature lacks the entry of $s") unless $sent{$mine};
    }
    return (0, 'entries') unless keys %sent == @$secrets;
    return (1, '');
}
# One connection: requests served one after another while the answer keeps it open
# (keep*: 204 without a length; drop*: 200 with a length, but its second request on a
# connection is read and the connection closed unanswered; chunky*: a chunked 200, kept
# open; early*: a 103 first, then drop*'s 200); every other answer says Connection: close.
my $CONN = 0;
sub serve {
    my ($c, $cert) = @_;
    IO::Socket::SSL->start_SSL($c, SSL_server => 1, SSL_cert_file => "$dir/$cert.crt",
                               SSL_key_file => "$dir/$cert.key", Timeout => 5) or return;
    my $conn = "$$-" . ++$CONN;
    for (my $seq = 0; ; $seq++) {
        serve_one($c, $conn, $seq) or return;
    }
}
# one request; true when the connection stays open for the next
sub serve_one {
    my ($c, $conn, $seq) = @_;
    my $buf = '';
    while ($buf !~ /\r\n\r\n/) { sysread($c, $buf, 65536, length $buf) or return }
    my ($head, $body) = split /\r\n\r\n/, $buf, 2;
    my ($line, @lines) = split /\r\n/, $head;
    my ($method, $path) = split / /, $line;
    my %h = map { my ($k, $v) = split /:\s*/, $_, 2; (lc $k => $v) } @lines;
    while (length $body < ($h{'content-length'} // 0)) { sysread($c, $body, 65536, length $body) or last }
    my ($name) = $path =~ m{^/(\w+)};
    my ($ok, $why) = verify(secrets_of($name), \%h, $body);
    my $n = bump($name);
    my $dropped = $name =~ /^drop/ && $seq > 0;
    my $status = !$ok ? ($why eq 'stale timestamp' ? 400 : 401)
               : $name =~ /^flaky/ ? ($n < 2 ? 500 : 200)
               : $name =~ /^gone/ ? 410 : $name =~ /^keep/ ? 204 : $dropped ? 0 : 200;
    locked_append("$dir/requests", $JSON->encode({ name => $name, path => $path, method => $method,
        t => Time::HiRes::time(), headers => \%h, body => $body, ok => $ok ? 1 : 0,
        why => $why, n => $n, status => $status, conn => $conn, seq => $seq }) . "\n");
    if ($name =~ /^slow/ && $n == 0) {
        sleep 7;
    }
    if ($name =~ /^(hang|crash)/ && $n == 0) {
        sleep 60;
    }
    if ($name =~ /^endless/) {
        syswrite $c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n";
        my ($sent, $chunk) = (0, 'x' x 16384);
        while (1) { my $w = syswrite $c, $chunk; last unless $w; $sent += $w; last if $sent > 200e6 }
        write_file("$dir/endless-sent", $sent);
        return;
    }
    return if $dropped;
    if ($ok && $name =~ /^(keep|drop|chunky|early)/) {
        syswrite $c, "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n" if $name =~ /^early/;
        syswrite $c, $name =~ /^keep/ ? "HTTP/1.1 204 No Content\r\nServer: t\r\n\r\n"
                   : $name =~ /^(drop|early)/ ? "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
                   : "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n";
        return 1;
    }
    syswrite $c, "HTTP/1.1 $status X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
    return;
}
sub receiver {
    my ($cert) = @_;
    my $ls = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Proto => 'tcp',
                                   Listen => 128, ReuseAddr => 1) or die "receiver: $!";
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        # a process group of 24 children, each serving one connection at a time
        setpgrp(0, 0);
        $SIG{PIPE} = 'IGNORE';
        for (1 .. 24) {
            my $k = fork // next;
            next if $k;
            while (1) {
                my $c = $ls->accept or next;
                eval { serve($c, $cert) };
                close $c;
            }
        }
        sleep 3600 while 1;
    }
    my $port = $ls->sockport;
    close $ls;
    return ($pid, $port);
}
my ($rpid, $RPORT) = receiver('server');
my ($spid, $SPORT) = receiver('stranger');
END { kill 'KILL', map { -$_ } grep { $_ } $rpid, $spid }

sub requests {
    open my $fh, '<', "$dir/requests" or return ();
    my @r = map { $JSON->decode($_) } grep { /\S/ } <$fh>;
    close $fh;
    return @r;
}
sub requests_of { my $n = shift; grep { $_->{name} eq $n } requests() }

# --- nginx ------------------------------------------------------------------------------

my $dns = Cms::Dns->start(records => {
    'hooks.test' => ['127.0.0.1'], 'flip.test' => ['127.0.0.1'], 'keep.test' => ['127.0.0.1'], 'stranger.test' => ['127.0.0.1'],
});
my $CONF = 'resolver 127.0.0.1:' . $dns->port . ' valid=1s; resolver_timeout 3s;'
    . " cms_outbound_loopback on; cms_events_interval 100ms; cms_purge_interval 300ms;"
    . " cms_webhook_delivery on ca=$dir/ca.pem timeout=4s retry_scale=0.005 retention=1h concurrency=8;";
set_conf_defaults(http_config => $CONF);
start_nginx();

my $owner = signup();
my $ot = $owner->{token};
my $wid = workspace($ot, 'Deliveries');
my $K = key($ot, $wid, 'rw', qw(webhooks:read webhooks:write));
# more endpoints than the free plan's 16 (a receiver each: the refused ranges alone are 22)
Cms::Test::psql("INSERT INTO plans (name, storage_limit_bytes, upload_limit_bytes) VALUES ('hooks-any', 0, 0)");
Cms::Test::psql("UPDATE workspaces SET plan = 'hooks-any' WHERE id = '$wid'");

sub hook {
    my ($name, %f) = @_;
    my $host = delete $f{host} // 'hooks.test';
    my $port = delete $f{port} // $RPORT;
    my $r = req(POST => '/v1/api/webhooks', $K, { url => "https://$host:$port/$name", %f });
    die "webhook $name: " . diag_resp($r) unless $r->{status} == 201;
    open my $fh, '<', "$dir/secrets.json" or die;
    my $all = do { local $/; $JSON->decode(<$fh>) };
    close $fh;
    $all->{$name} = [$r->{json}{secret}];
    write_file("$dir/secrets.json.tmp", $JSON->encode($all));
    rename "$dir/secrets.json.tmp", "$dir/secrets.json" or die;
    return $r->{json}{webhook};
}
sub event {
    my ($type, $data) = @_;
    return Cms::Test::psql("INSERT INTO outbox_events (workspace_id, type, data) VALUES"
                           . " ('$wid', '$type', '" . $JSON->encode($data // { n => 1 }) . "') RETURNING id")->[0][0];
}
sub delivery {
    my ($hook, $event) = @_;
    my $l = req(GET => "/v1/api/webhooks/$hook/deliveries?limit=100", $K);
    my ($d) = grep { $_->{event_id} eq $event } @{ $l->{json}{deliveries} // [] };
    return $d;
}
sub settled {
    my ($hook, $event, $secs) = @_;
    my $d;
    wait_until($secs // 10, sub { $d = delivery($hook, $event); $d && $d->{status} ne 'pending' });
    return $d // {};
}

# --- a delivery: both signatures, the body, the headers -------------------------------

my $ok = hook('ok', events => ['article.published']);
my $e1 = event('article.published', { id => 'a1', title => 'Hello' });
my $d1 = settled($ok->{id}, $e1);
is $d1->{status}, 'delivered', 'the event is delivered' or diag explain $d1;
is $d1->{attempt}, 1, 'at the first attempt';
is $d1->{status_code}, 200, 'the status code logged';
my ($q1) = grep { $_->{path} eq '/ok' } requests_of('ok');
ok $q1->{ok}, 'the receiver verified both signatures' or diag $q1->{why};
is $q1->{method}, 'POST', 'a POST';
is $q1->{headers}{'webhook-id'}, $e1, 'webhook-id: the event id';
is $q1->{headers}{'x-service-event'}, 'article.published', 'x-service-event';
is $q1->{headers}{'content-type'}, 'application/json', 'content-type';
like $q1->{headers}{'user-agent'} // '', qr/\S/, 'a user-agent';
my $b1 = eval { $JSON->decode($q1->{body}) } // {};
is_deeply [sort keys %$b1], [qw(created_at data id type workspace_id)], 'the payload: {id, type, created_at, workspace_id, data}';
is_deeply [$b1->{id}, $b1->{type}, $b1->{workspace_id}, $b1->{data}],
          [$e1, 'article.published', $wid, { id => 'a1', title => 'Hello' }], 'its values';

# the receiver refuses a stale timestamp and a forged signature (its checks are real)
{
    my $body = '{"x":1}';
    my $s = secrets_of('ok')->[0];
    for my $case ([time - 600, $s, 400, 'a stale timestamp: 400'],
                  [time, 'whsec_' . encode_base64('k' x 32, ''), 401, 'another secret: 401'],
                  [time, $s, 200, 'a fresh, well signed request: 200']) {
        my ($ts, $key, $want, $name) = @$case;
        my $id = 'replay-' . $ts;
        my $v1 = 'v1,' . encode_base64(hmac_sha256("$id.$ts.$body", decode_base64(substr $key, 6)), '');
        my $c = IO::Socket::SSL->new(PeerHost => '127.0.0.1', PeerPort => $RPORT, SSL_ca_file => "$dir/ca.pem",
                                     SSL_hostname => 'hooks.test', SSL_verifycn_name => 'hooks.test',
                                     SSL_verifycn_scheme => 'http') or die "client: $SSL_ERROR";
        print $c "POST /ok/replay HTTP/1.1\r\nHost: hooks.test\r\nContent-Length: " . length($body)
            . "\r\nwebhook-id: $id\r\nwebhook-timestamp: $ts\r\nwebhook-signature: $v1\r\n"
            . "x-service-signature: " . hmac_sha256_hex($body, $key) . "\r\n\r\n$body";
        my $answer = join '', <$c>;
        my ($st) = $answer =~ m{^HTTP/1\.1 (\d+)};
        is $st, $want, $name;
    }
}

# --- the events filter, a disabled endpoint ------------------------------------------

my $off = hook('off', enabled => JSON::PP::false);
my $e2 = event('comment.created');
my $e3 = event('article.published');
settled($ok->{id}, $e3);
is one("SELECT count(*) FROM webhook_deliveries WHERE event_id = '$e2'"), 0,
   'an event outside the filter, and a disabled endpoint: no delivery row';
is one("SELECT count(*) FROM webhook_deliveries WHERE webhook_id = '$off->{id}'"), 0, 'nothing for the disabled one';

# --- failing twice, then 200: one success, the schedule --------------------------------

my $flaky = hook('flaky');
my $e4 = event('article.updated');
my $d4 = settled($flaky->{id}, $e4, 15);
is $d4->{status}, 'delivered', 'delivered at last' or diag explain $d4;
is $d4->{attempt}, 3, 'at the third attempt';
my @a4 = @{ $d4->{attempts} // [] };
is_deeply [map { $_->{status_code} } @a4], [500, 500, 200], 'the log: 500, 500, 200';
is scalar(grep { $_->{status_code} == 200 } @a4), 1, 'exactly one success logged';
my @t4 = map { $_->{t} } requests_of('flaky');
is scalar(@t4), 3, 'the receiver saw three attempts';
# the schedule as the database set it: each failed attempt's retry, from the time it was
# recorded (one transaction: the same now())
my @due4 = map { $_->[0] } @{ Cms::Test::psql(
    "SELECT extract(epoch FROM a.next_attempt_at - a.created_at) FROM webhook_delivery_attempts a"
    . " JOIN webhook_deliveries d ON d.id = a.delivery_id"
    . " WHERE d.webhook_id = '$flaky->{id}' AND d.event_id = '$e4' AND a.attempt < 3 ORDER BY a.attempt") };
ok(($due4[0] // -1) >= 0.0225 - 1e-6 && $due4[0] <= 0.0275 + 1e-6, 'the second due 5 s x 0.005 (+-10%) after the first')
    or diag $due4[0];
ok(($due4[1] // -1) >= 1.35 - 1e-6 && $due4[1] <= 1.65 + 1e-6, 'the third due 5 min x 0.005 (+-10%) after the second')
    or diag $due4[1];
# at the receiver: none before it was due; once due, sent (the senders look every 100 ms;
# the upper bound only says none was left waiting)
ok $t4[1] - $t4[0] >= 0.02 && $t4[1] - $t4[0] < ($due4[0] // 0) + 5, 'the second sent once due, not before'
    or diag $t4[1] - $t4[0];
ok $t4[2] - $t4[1] >= 1.3 && $t4[2] - $t4[1] < ($due4[1] // 0) + 5, 'the third sent once due, not before'
    or diag $t4[2] - $t4[1];
is scalar(keys %{{ map { $_->{headers}{'webhook-id'} => 1 } requests_of('flaky') }}), 1,
   'one webhook-id over the retries';
is scalar(keys %{{ map { $_->{body} => 1 } requests_of('flaky') }}), 1, 'the same body bytes each time';
ok !grep({ !$_->{ok} } requests_of('flaky')), 'each retry verifies (a fresh timestamp signed each time)';

# --- 410 disables -------------------------------------------------------------------------

my $gone = hook('gone');
my $e5 = event('page.updated');
my $d5 = settled($gone->{id}, $e5);
is $d5->{status}, 'failed', '410: failed at once';
is $d5->{attempt}, 1, 'no retry after a 410';
my $g = req(GET => "/v1/api/webhooks/$gone->{id}", $K)->{json}{webhook};
is $g->{enabled}, JSON::PP::false, 'the endpoint is disabled';
like $g->{disabled_reason} // '', qr/410/, 'with its reason';

# --- slower than the timeout: timed out, retried -----------------------------------------

my $slow = hook('slow');
my $e6 = event('article.updated');
my $d6 = settled($slow->{id}, $e6, 20);
is $d6->{status}, 'delivered', 'a slow receiver: delivered by the retry' or diag explain $d6;
like $d6->{attempts}[0]{error} // '', qr/timed out/, 'the first attempt timed out';
ok !defined $d6->{attempts}[0]{status_code}, 'no status code for it';
ok $d6->{attempts}[0]{duration_ms} >= 3900 && $d6->{attempts}[0]{duration_ms} < 6000,
   'it lasted the 4 s timeout' or diag $d6->{attempts}[0]{duration_ms};

# --- an endless body: cut off --------------------------------------------------------------

my $endless = hook('endless');
my $elog7 = error_log_size();
my $e7 = event('article.updated');
my $d7 = settled($endless->{id}, $e7);
is $d7->{status}, 'delivered', 'an endless 200: delivered (the status counts)';
# the timeout would have left its error ("timed out ...")
ok !defined $d7->{error}, 'no error: settled before the timeout';
ok scalar(grep { /the answer of "hooks\.test" was cut off after \d+ bytes of body/ } error_log_lines($elog7)),
   sprintf 'the body was cut off (%s ms)', $d7->{duration_ms} // '?';
ok wait_until(5, sub { -s "$dir/endless-sent" }), 'the receiver saw the connection closed under it';

# --- kept-alive connections ---------------------------------------------------------------
# An answer read to its end (HTTP/1.1, a length or no body, no Connection: close) leaves
# the connection open for the next delivery to the same host and port.  These endpoints
# are on a name of their own (connections are kept per host and port) and take an event
# type each, so that no other delivery takes their connections.

my $keep = hook('keep', host => 'keep.test', events => ['video.published']);
my @k = map { my $e = event('video.published'); [$e, settled($keep->{id}, $e)] } 1 .. 3;
is_deeply [map { $_->[1]{status} } @k], [('delivered') x 3], 'a 204 without a length: delivered'
    or diag explain \@k;
# the timeout (4 s) would have left its error ("timed out waiting for the answer")
ok !grep({ defined $_->[1]{error} } @k), 'without waiting for a body or the timeout: no error'
    or diag explain [map { $_->[1]{error} } @k];
my @kr = requests_of('keep');
is scalar(@kr), 3, 'three requests';
is scalar(keys %{{ map { $_->{conn} => 1 } @kr }}), 1, 'all three on one connection'
    or diag explain [map { "$_->{conn}/$_->{seq}" } @kr];
ok !grep({ !$_->{ok} } @kr), 'each verifies';

# the server closes a kept connection as the next request comes: sent again at once on a
# new connection, within the same attempt
my $drop = hook('drop', host => 'keep.test', events => ['custom_entry.published']);
my $ea = event('custom_entry.published');
is settled($drop->{id}, $ea)->{status}, 'delivered', 'the first on a new connection';
my $eb = event('custom_entry.published');
my $db = settled($drop->{id}, $eb);
is $db->{status}, 'delivered', 'the next, on the kept connection closed unanswered: delivered'
    or diag explain $db;
is $db->{attempt}, 1, 'by its first attempt';
is_deeply [map { $_->{status_code} } @{ $db->{attempts} // [] }], [200], 'one attempt logged: 200';
my @dr = grep { $_->{headers}{'webhook-id'} eq $eb } requests_of('drop');
is_deeply [map { $_->{seq} } @dr], [1, 0], 'sent on the kept connection, then on a new one';
isnt $dr[0]{conn}, $dr[1]{conn}, 'two connections';

# a chunked answer is not read: the connection is closed, the status counts
my $chunky = hook('chunky', host => 'keep.test', events => ['article.unpublished']);
my $eu = event('article.unpublished');
my $dc = settled($chunky->{id}, $eu);
is $dc->{status}, 'delivered', 'a chunked 200: delivered';
ok !defined $dc->{error}, 'at once, not at the timeout: no error' or diag $dc->{error};
my $ec2 = event('article.unpublished');
settled($chunky->{id}, $ec2);
my @cr = requests_of('chunky');
is scalar(@cr), 2, 'two requests';
isnt $cr[0]{conn}, $cr[1]{conn}, 'the connection of a chunked answer is not used again';
is $cr[1]{seq}, 0, 'the next went on a new one';

# an interim 103 before the answer: skipped, the answer counts, the connection is kept
my $early = hook('early', host => 'keep.test', events => ['page.updated']);
my @ee = map { my $e = event('page.updated'); [$e, settled($early->{id}, $e)] } 1 .. 2;
is_deeply [map { [$_->[1]{status}, $_->[1]{status_code}, $_->[1]{attempt}] } @ee],
          [['delivered', 200, 1], ['delivered', 200, 1]], 'after a 103: the 200 counts, at once'
    or diag explain \@ee;
my @er = requests_of('early');
is_deeply [map { $_->{seq} } @er], [0, 1], 'and the next delivery goes on the same connection';

# --- the address actually connected to ------------------------------------------------------

my $flip = hook('flip', host => 'flip.test');
$dns->set('flip.test' => ['10.0.0.5']);
# nginx's resolver keeps the registration's answer for valid=1s: once a PATCH of the
# same URL is refused, it has the new one (the refused PATCH writes nothing)
ok wait_until(10, sub { req(PATCH => "/v1/api/webhooks/$flip->{id}", $K,
                            { url => "https://flip.test:$RPORT/flip" })->{status} == 400 }),
   'the name now answers 10.0.0.5 (registration refuses it)';
my $e8 = event('article.updated');
my $d8;
wait_until(10, sub { $d8 = delivery($flip->{id}, $e8); $d8 && $d8->{attempt} >= 2 });
like $d8->{attempts}[0]{error} // '', qr/^the host has no public address\z/, 'a name now at 10.0.0.5: refused at delivery'
    or diag explain $d8;
is scalar(requests_of('flip')), 0, 'nothing reached anyone';
my $lit = hook('literal', host => '127.0.0.1');
Cms::Test::psql("UPDATE webhooks SET url = 'https://192.168.1.20:$RPORT/literal' WHERE id = '$lit->{id}'");
my $e9 = event('article.updated');
my $d9;
wait_until(10, sub { $d9 = delivery($lit->{id}, $e9); $d9 && $d9->{attempt} >= 1 && @{ $d9->{attempts} } });
like $d9->{attempts}[0]{error} // '', qr/^the host has no public address\z/, 'an IP literal of a private range: refused at delivery';
allow_error_log(qr/cms: webhook host "(flip\.test|192\.168\.1\.20)" is at/);

# a name with no address now, and one that no longer exists: the same outcome as a private
# address, so the log a caller reads tells no internal name from a missing one
{
    $dns->set('nodata.test' => ['127.0.0.1'], 'nxname.test' => ['127.0.0.1']);
    my %h = map { ($_ => hook($_, host => "$_.test")) } qw(nodata nxname);
    $dns->set('nodata.test' => []);
    $dns->forget('nxname.test');
    for my $n (sort keys %h) {
        ok wait_until(10, sub { req(PATCH => "/v1/api/webhooks/$h{$n}{id}", $K,
                                    { url => "https://$n.test:$RPORT/$n" })->{status} == 400 }),
           "$n.test: resolved afresh (registration refuses it)";
    }
    my $e = event('article.updated');
    for my $n (sort keys %h) {
        my $d;
        wait_until(10, sub { $d = delivery($h{$n}{id}, $e); $d && @{ $d->{attempts} // [] } });
        is $d->{attempts}[0]{error}, 'the host has no public address',
           "$n.test: the same outcome as a private address" or diag explain $d;
        is scalar(requests_of($n)), 0, 'nothing reached anyone';
    }
    req(DELETE => "/v1/api/webhooks/$_->{id}", $K) for values %h;
}
for my $id ($flip->{id}, $lit->{id}) { req(DELETE => "/v1/api/webhooks/$id", $K) }

# every refused range, each behind a name that answered 127.0.0.1 when its endpoint was
# registered: refused by registration once the name answers it, and at delivery
{
    my @refused = qw(0.0.0.0 10.1.2.3 100.64.0.1 169.254.169.254 172.16.0.1 192.0.0.8
                     192.0.2.1 192.168.1.1 198.18.0.1 198.51.100.1 203.0.113.1 224.0.0.1
                     240.0.0.1 255.255.255.255 :: ::ffff:10.0.0.1 64:ff9b::a00:1
                     2002:a00:1::1 fc00::1 fe80::1 2001:db8::1 ff02::1);
    my @names = map { "r$_.test" } 0 .. $#refused;
    $dns->set(map { $_ => ['127.0.0.1'] } @names);
    my @hooks = map { hook("range$_", host => $names[$_], events => ['page.updated']) } 0 .. $#refused;
    $dns->set(map { $names[$_] => [$refused[$_]] } 0 .. $#refused);
    for my $i (0 .. $#refused) {
        ok wait_until(10, sub { req(PATCH => "/v1/api/webhooks/$hooks[$i]{id}", $K,
                                    { url => "https://$names[$i]:$RPORT/range$i" })->{status} == 400 }),
           "a name now at $refused[$i]: refused by registration";
    }
    my $e = event('page.updated');
    for my $i (0 .. $#refused) {
        my $d;
        wait_until(10, sub { $d = delivery($hooks[$i]{id}, $e); $d && @{ $d->{attempts} // [] } });
        like $d->{attempts}[0]{error} // "", qr/^the host has no public address\z/, "$refused[$i]: refused at delivery" or diag explain $d;
        is scalar(requests_of("range$i")), 0, 'nothing reached anyone';
    }
    allow_error_log(qr/cms: webhook host "r\d+\.test" is at/);
    req(DELETE => "/v1/api/webhooks/$_->{id}", $K) for @hooks;
}

# --- an untrusted certificate --------------------------------------------------------------

my $stranger = hook('stranger', host => 'stranger.test', port => $SPORT);
my $e10 = event('article.updated');
my $d10;
wait_until(10, sub { $d10 = delivery($stranger->{id}, $e10); $d10 && @{ $d10->{attempts} // [] } });
like $d10->{attempts}[0]{error} // '', qr/TLS certificate is not trusted/, 'a certificate of another CA: refused';
is scalar(requests_of('stranger')), 0, 'nothing was sent to it';
allow_error_log(qr/cms: the TLS certificate of a webhook endpoint at .* is not trusted/);
req(DELETE => "/v1/api/webhooks/$stranger->{id}", $K);

# --- a rotated secret: two v1 entries ----------------------------------------------------

{
    my $rot = hook('rotated');
    my $r = req(POST => "/v1/api/webhooks/$rot->{id}/secret/rotate", $K);
    is $r->{status}, 200, 'rotated';
    open my $fh, '<', "$dir/secrets.json" or die;
    my $all = do { local $/; $JSON->decode(<$fh>) };
    $all->{rotated} = [$r->{json}{secret}, $all->{rotated}[0]];
    write_file("$dir/secrets.json", $JSON->encode($all));
    my $e = event('article.updated');
    is settled($rot->{id}, $e)->{status}, 'delivered', 'delivered during the overlap';
    my ($q) = requests_of('rotated');
    ok $q->{ok}, 'x-service-signature with the new secret, a v1 entry for each' or diag $q->{why};
    is scalar(split / /, $q->{headers}{'webhook-signature'}), 2, 'two entries';
}

# --- redeliver and test ------------------------------------------------------------------

{
    my $r = req(POST => "/v1/api/webhooks/$ok->{id}/deliveries/$d1->{id}/redeliver", $K);
    is $r->{status}, 202, 'redeliver: 202' or diag diag_resp($r);
    my $nd = $r->{json}{delivery} // {};
    is_deeply [@$nd{qw(event_id event_type status attempt)}], [$e1, 'article.published', 'pending', 0],
              'a new pending delivery of the same event';
    isnt $nd->{id}, $d1->{id}, 'a new delivery id';
    ok wait_until(10, sub { (grep { $_->{headers}{'webhook-id'} eq $e1 } requests_of('ok')) == 2 }),
       'sent again';
    my @same = grep { $_->{headers}{'webhook-id'} eq $e1 } requests_of('ok');
    is $same[1]{body}, $same[0]{body}, 'the same body';
    ok $same[1]{ok}, 'verified';

    $r = req(POST => "/v1/api/webhooks/$ok->{id}/test", $K);
    is $r->{status}, 202, 'test: 202';
    my $t = $r->{json}{delivery} // {};
    is $t->{event_type}, 'webhook.test', 'a webhook.test event';
    is settled($ok->{id}, $t->{event_id})->{status}, 'delivered', 'delivered';
    my ($tq) = grep { $_->{headers}{'webhook-id'} eq $t->{event_id} } requests_of('ok');
    is eval { $JSON->decode($tq->{body})->{data}{webhook_id} }, $ok->{id}, 'its data names the endpoint';
    is one("SELECT count(*) FROM webhook_deliveries WHERE event_id = '$t->{event_id}'"), 1,
       'for that endpoint only';
}

# --- the log: paged, newest first ------------------------------------------------------

{
    my $all = req(GET => "/v1/api/webhooks/$ok->{id}/deliveries", $K);
    is $all->{status}, 200, 'the log';
    my @ds = @{ $all->{json}{deliveries} // [] };
    my $n = $all->{json}{pagination}{total};
    is $n, scalar(@ds), 'the total';
    is $n, one("SELECT count(*) FROM webhook_deliveries WHERE webhook_id = '$ok->{id}'"),
        'the total is the count of the rows';
    ok $n >= 4, 'four deliveries at least';
    is_deeply [map { $_->{created_at} } @ds], [sort { $b cmp $a } map { $_->{created_at} } @ds], 'newest first';
    my $p = req(GET => "/v1/api/webhooks/$ok->{id}/deliveries?limit=2&offset=1", $K)->{json};
    is_deeply [map { $_->{id} } @{ $p->{deliveries} }], [map { $_->{id} } @ds[1, 2]], 'limit and offset';
    is_deeply [sort keys %{ $ds[0] }],
              [sort qw(id webhook_id event_id event_type status attempt status_code duration_ms error
                       next_attempt_at created_at updated_at delivered_at attempts)], 'the fields';
    ok !grep({ /secret|payload/ } keys %{ $ds[0] }), 'no secret, no payload';
}

# --- credentials, scopes, roles, ids ------------------------------------------------------

{
    my %m;
    for my $role (qw(viewer author editor admin)) {
        $m{$role} = signup();
        Cms::Test::psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$m{$role}{user}{id}', '$role')");
    }
    my $KR = key($ot, $wid, 'ro', 'webhooks:read');
    my $KW = key($ot, $wid, 'wo', 'webhooks:write');
    my $KD = demoted_key($wid, qw(webhooks:read webhooks:write));
    my $outsider = signup();
    my $other = signup();
    my $wid2 = workspace($other->{token}, 'Other');
    my $K2 = key($other->{token}, $wid2, 'other', qw(webhooks:read webhooks:write));
    my $bad = 'svc_live_' . ('A' x 49);
    my $NOBODY = '0190a4d6-2f5e-7c3a-9b1d-4e5f60718293';
    my $before = one('SELECT count(*) FROM webhook_deliveries');
    for my $t ([GET => "/webhooks/$ok->{id}/deliveries", 'read'],
               [POST => "/webhooks/$ok->{id}/deliveries/$d1->{id}/redeliver", 'write'],
               [POST => "/webhooks/$ok->{id}/test", 'write']) {
        my ($m, $rest, $need) = @$t;
        my $p = "/v1/api$rest";
        check_err(req($m, $p), 401, 'missing_token', "$m $p without a key");
        check_err(req($m, $p, $bad), 401, 'invalid_api_key', "$m $p with a bad key");
        check_err(req($m, $p, $ot), 401, 'invalid_api_key', "$m $p with a session token");
        check_err(req($m, $p, $need eq 'read' ? $KW : $KR), 403, 'missing_scope', "$m $p without webhooks:$need");
        check_err(req($m, $p, $KD), 403, 'forbidden', "$m $p with a key whose creator is now an editor");
        check_err(req($m, $p, $K2), 404, 'not_found', "$m $p with another workspace's key");
        my $s = "/v1/workspaces/$wid$rest";
        check_err(req($m, $s), 401, 'missing_token', "$m $s without a session");
        check_err(req($m, $s, $outsider->{token}), 403, 'not_workspace_member', "$m $s as an outsider");
        check_err(req($m, $s, $m{$_}{token}), 403, 'forbidden', "$m $s as $_") for qw(viewer author editor);
        my $unknown = $rest =~ s/\Q$ok->{id}\E/$NOBODY/r;
        check_err(req($m, "/v1/api$unknown", $K), 404, 'not_found', "$m an unknown webhook");
        my $malformed = $rest =~ s/\Q$ok->{id}\E/not-a-uuid/r;
        check_err(req($m, "/v1/api$malformed", $K), 404, 'not_found', "$m a malformed id");
    }
    check_err(req(POST => "/v1/api/webhooks/$ok->{id}/deliveries/$NOBODY/redeliver", $K), 404, 'not_found',
              'redeliver an unknown delivery');
    check_err(req(POST => "/v1/api/webhooks/$ok->{id}/deliveries/x/redeliver", $K), 404, 'not_found',
              'redeliver a malformed delivery id');
    check_err(req(POST => "/v1/api/webhooks/$slow->{id}/deliveries/$d1->{id}/redeliver", $K), 404, 'not_found',
              "redeliver another endpoint's delivery");
    my $h2 = req(POST => '/v1/api/webhooks', $K2, { url => "https://hooks.test:$RPORT/other" })->{json}{webhook};
    check_err(req(GET => "/v1/api/webhooks/$h2->{id}/deliveries", $K), 404, 'not_found',
              "another workspace's webhook");
    check_err(req(POST => "/v1/api/webhooks/$h2->{id}/test", $K), 404, 'not_found',
              "test another workspace's webhook");
    is one('SELECT count(*) FROM webhook_deliveries'), $before, 'no refused call queued anything';
    is req(GET => "/v1/workspaces/$wid/webhooks/$ok->{id}/deliveries?limit=1", $m{admin}{token})->{status}, 200,
       'an admin reads the log in the studio';
    is req(POST => "/v1/workspaces/$wid/webhooks/$ok->{id}/test", $ot)->{status}, 202, 'the owner tests in the studio';
}

# --- retention ------------------------------------------------------------------------------

{
    Cms::Test::psql("UPDATE webhook_deliveries SET updated_at = now() - interval '2 hours' WHERE id = '$d5->{id}'");
    ok wait_until(10, sub { one("SELECT count(*) FROM webhook_deliveries WHERE id = '$d5->{id}'") == 0 }),
       'a settled delivery past the retention is purged';
    is one("SELECT count(*) FROM webhook_deliveries WHERE id = '$d1->{id}'"), 1, 'a recent one is kept';

    # the content events go with the same retention (sql/0047): their deliveries carry the payload
    Cms::Test::psql("UPDATE outbox_events SET created_at = now() - interval '2 hours' WHERE id = '$e5'");
    ok wait_until(10, sub { one("SELECT count(*) FROM outbox_events WHERE id = '$e5'") == 0 }),
       'a content event past the retention is purged'
        or diag explain Cms::Test::psql("SELECT id, created_at, now() FROM outbox_events WHERE id = '$e5'");
    is one("SELECT count(*) FROM outbox_events WHERE id = '$e1'"), 1, 'a recent event is kept';
}

# --- two hosts: 40 events, each sent once -------------------------------------------------

{
    start_host_b();
    my $many = hook('many');
    my @ids = map { event('article.updated', { n => $_ }) } 1 .. 40;
    ok wait_until(60, sub { one("SELECT count(*) FROM webhook_deliveries WHERE webhook_id = '$many->{id}'"
                                . " AND status = 'delivered'") == 40 }), 'all 40 delivered';
    my %seen;
    $seen{ $_->{headers}{'webhook-id'} }++ for requests_of('many');
    is scalar(keys %seen), 40, 'every event reached the receiver';
    is scalar(grep { $_ != 1 } values %seen), 0, 'none twice';
    is one("SELECT count(*) FROM webhook_deliveries WHERE webhook_id = '$many->{id}' AND attempt <> 1"), 0,
       'one attempt each';
    ok !grep({ !$_->{ok} } requests_of('many')), 'all verified';
    is_deeply [host_b_errors()], [], 'host B logged no alert';
    stop_host_b();
}

# --- kill -9 of the worker mid-delivery: not lost, sent again once its lease ends ---------

{
    my $crash = hook('crash', events => ['page.updated']);
    my $e = event('page.updated');
    ok wait_until(10, sub { requests_of('crash') == 1 }), 'a delivery in flight';
    my ($w) = worker_pids();
    kill 'KILL', $w;
    ok wait_until(10, sub { my @p = worker_pids(); @p && $p[0] != $w }), 'the worker killed, another started';
    is one("SELECT status FROM webhook_deliveries WHERE webhook_id = '$crash->{id}'"), 'pending',
       'the delivery is not lost: pending, under the dead sender\'s lease';
    # the lease (54 s here: the restart below says why) is all a crash leaves: ended here rather than waited for
    Cms::Test::psql("UPDATE webhook_deliveries SET locked_until = now() WHERE webhook_id = '$crash->{id}'");
    my $d = settled($crash->{id}, $e, 20);
    is $d->{status}, 'delivered', 'the new worker 0 sends it';
    is $d->{attempt}, 2, 'as the second attempt';
    is scalar(requests_of('crash')), 2, 'the receiver saw it twice';
    is scalar(keys %{{ map { $_->{headers}{'webhook-id'} => 1 } requests_of('crash') }}), 1, 'one webhook-id';
    allow_error_log(qr/worker process \d+ exited on signal 9/);
}

# --- a graceful quit with a delivery in flight: abandoned, sent again after ----------------

{
    my $hang = hook('hang', events => ['custom_entry.published']);
    my $e = event('custom_entry.published');
    ok wait_until(10, sub { requests_of('hang') == 1 }), 'a delivery in flight (the receiver holds it)';
    my $elog = error_log_size();
    my $t0 = Time::HiRes::time();
    ok stop_nginx(), 'nginx quits gracefully';
    # waiting for it would have ended the attempt at its 4 s timeout (the receiver holds it
    # 60 s), which the worker logs before it exits
    ok !grep({ /webhook delivery .* to "hooks\.test" failed: .*timed out/ } error_log_lines($elog)),
       sprintf 'without waiting for the delivery: no attempt ended at its timeout (quit in %.1f s)',
               Time::HiRes::time() - $t0
        or diag join '', grep { /webhook delivery/ } error_log_lines($elog);
    start_nginx();
    my $d = settled($hang->{id}, $e, 90);
    is $d->{status}, 'delivered', 'sent again after the restart, delivered';
    is scalar(requests_of('hang')), 2, 'the receiver saw it twice (at least once: same webhook-id)';
    is scalar(keys %{{ map { $_->{headers}{'webhook-id'} => 1 } requests_of('hang') }}), 1, 'one webhook-id';
}

# --- a PostgreSQL restart with deliveries queued and in flight: none lost, none twice ------

{
    my $pgr = hook('pgr', events => ['comment.created']);
    my @ids = map { event('comment.created', { n => $_ }) } 1 .. 30;
    ok wait_until(20, sub { requests_of('pgr') >= 1 }), 'deliveries under way';
    Cms::Test::pg_restart();
    my @more = map { event('comment.created', { n => $_ }) } 31 .. 40;
    # an attempt sent while the server was down could not be recorded: its lease
    # (timeout 4 s + twice the pool's queue_timeout 5 s + three times its query_timeout
    # 10 s + 10 s: 54 s) is what it leaves, as after a crash; ended here, not waited for
    ok wait_until(30, sub { (http(GET => '/v1/health')->{status} // 0) == 200 }),
       'the module is back on the database';
    my $back = one('SELECT now()');
    my $ended = sub {   # the leases taken before the restart (54 s, above)
        Cms::Test::psql("UPDATE webhook_deliveries SET locked_until = now()"
                        . " WHERE webhook_id = '$pgr->{id}' AND status = 'pending'"
                        . " AND locked_until > now()"
                        . " AND locked_until < '$back'::timestamptz + interval '54 s'");
    };
    ok wait_until(60, sub { $ended->(); one("SELECT count(*) FROM webhook_deliveries"
                                . " WHERE webhook_id = '$pgr->{id}' AND status = 'delivered'") == 40 }),
       'all 40 delivered after the restart';
    my %seen;
    $seen{ $_->{headers}{'webhook-id'} }++ for requests_of('pgr');
    is_deeply [sort keys %seen], [sort @ids, @more], 'every event reached the receiver (none lost)';
    is scalar(grep { $_ > 2 } values %seen), 0,
       'none more than twice (an attempt whose record the restart lost is sent again)';
    is one("SELECT count(*) FROM webhook_deliveries WHERE webhook_id = '$pgr->{id}'"), 40,
       'one delivery row an event';
    allow_error_log(qr/terminating connection|server closed the connection|connection to server|could not receive|PostgreSQL/i);
}

ok !grep({ !$_->{ok} && $_->{path} ne '/ok/replay' } requests()), 'every delivery the module made verified';

done_testing();
