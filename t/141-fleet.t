# A fleet (docs/fleet.md): three nginx hosts, A (the harness's), B and C (Cms::Hosts), each
# its own prefix, port, pid and logs with the same rendered config, over one PostgreSQL
# primary with one streaming replica (Cms::Replica; reads of every host may go to it), one
# Redis and one bucket (Cms::S3). Shown:
# - scheduled publishing: 200 articles due at one moment, the announcing job of the three
#   hosts' worker 0 racing every 100 ms: each article gets exactly one article.published
#   (none missing, none twice), also after every host's jobs ran again;
# - a publish on A is on B's and C's /v1/public (read from the replica) within 10 s, a
#   rotated publishable key and a revoked secret key stop resolving on B and C within it;
# - an upload through A (raw PUT of its content) is served byte for byte by B and C;
# - an idempotent POST to A retried with its Idempotency-Key on B: one payment, one event,
#   the answer replayed;
# - webhooks, cms_webhook_delivery on on the three hosts: 1,000 events to a loopback
#   receiver of this file that answers the first 500 requests and holds the later ones
#   until told; with host C's claims in flight (held), kill -9 of C's master and workers.
#   Every event is delivered in the end; the events delivered twice are exactly those C
#   had in flight (one batch at most, concurrency=8), same webhook-id and body, sent
#   again only once C's lease ran out. The lease is the delivery timeout plus the
#   PostgreSQL pool's waits (src/ngx_http_cms_deliver.c): this file sets timeout=10s to
#   keep it short (about 50 s), and reads its length from the claims themselves.
# Each host's error.log ends without [alert], [crit] or [emerg] (C's killed processes log
# nothing: its master died with them).
use strict;
use warnings;
use Cms::Test;
use Cms::S3;
use Cms::Prom ();
use Cms::Replica qw(:all);
use Cms::Hosts qw(:all);
use Cms::Fixtures qw(req diag_resp check_err signup signup_defaults workspace key api_key
                     make_key pepper idem record_path);
use Digest::SHA qw(hmac_sha256 hmac_sha256_hex sha256_hex);
use IO::Select;
use IO::Socket::INET;
use JSON::PP ();
use POSIX ();
use Time::HiRes qw(time);

signup_defaults(email_prefix => 'fleet');
my $JSON = JSON::PP->new->canonical(1);
my $CONCURRENCY = 8;

# --- the webhook receiver ----------------------------------------------------------------
# One process, non-blocking: every request read whole is logged (a JSON line: webhook-id,
# the body's id and SHA-256, the signature checked, the client's port, the time, held or
# not); the first $answer_first are answered 200 at once, later ones are held unanswered
# until the file "release" appears, then answered with every one after.
my $rdir = prefix() . '/receiver';
mkdir $rdir or die "$rdir: $!";

sub slurp { my $f = shift; open my $fh, '<', $f or return undef; local $/; <$fh> }

sub receiver {
    my ($answer_first) = @_;
    my $ls = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Proto => 'tcp',
                                   Listen => 1024, ReuseAddr => 1) or die "receiver: $!";
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        $SIG{PIPE} = 'IGNORE';
        $ls->blocking(0);
        my $sel = IO::Select->new($ls);
        my (%in, @held, $secret);
        my ($answered, $released) = (0, 0);
        open my $log, '>>', "$rdir/requests" or POSIX::_exit(1);
        $log->autoflush(1);
        my $reply = sub {
            my $c = shift;
            syswrite $c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
            close $c;
        };
        while (1) {
            for my $s ($sel->can_read(0.05)) {
                if ($s == $ls) {
                    while (my $c = $ls->accept) { $c->blocking(0); $sel->add($c); $in{$c} = '' }
                    next;
                }
                my $n = sysread $s, my $buf, 65536;
                next if !defined $n && ($!{EAGAIN} || $!{EINTR});
                if (!$n) { $sel->remove($s); delete $in{$s}; close $s; next }
                $in{$s} .= $buf;
                my $i = index $in{$s}, "\r\n\r\n";
                next if $i < 0;
                my ($line, @lines) = split /\r\n/, substr($in{$s}, 0, $i);
                my %h = map { my ($k, $v) = split /:\s*/, $_, 2; (lc $k => $v) } @lines;
                my $body = substr $in{$s}, $i + 4;
                next if length $body < ($h{'content-length'} // 0);
                $sel->remove($s);
                delete $in{$s};
                $secret //= slurp("$rdir/secret");
                my $hold = !$released && $answered >= $answer_first;
                my $id = eval { JSON::PP::decode_json($body)->{id} } // '';
                print $log $JSON->encode({
                    hook => $h{'webhook-id'} // '', id => $id, sha => sha256_hex($body),
                    sig => (defined $secret && ($h{'x-service-signature'} // '') eq
                            hmac_sha256_hex($body, $secret)) ? 1 : 0,
                    port => $s->peerport, t => time, held => $hold ? 1 : 0,
                    line => $line }) . "\n";
                if ($hold) { push @held, $s } else { $reply->($s); $answered++ }
            }
            if (!$released && -e "$rdir/release") {
                $released = 1;
                $reply->($_) for @held;
                @held = ();
            }
        }
    }
    my $port = $ls->sockport;
    close $ls;
    return ($pid, $port);
}

# the receiver's log so far (a line still being written is left for the next read)
sub received {
    my $t = slurp("$rdir/requests") // '';
    $t =~ s/[^\n]*\z//;
    return map { $JSON->decode($_) } split /\n/, $t;
}

my ($rpid, $RPORT) = receiver(500);
END { kill 'KILL', $rpid if $rpid }

# --- the fleet -------------------------------------------------------------------------------

my $R = start_replicated();
my $s3 = Cms::S3->start;
my $pg = qq{cms_postgres "$R->{primary_conninfo}" max=4;\n}
       . qq{    cms_postgres_replica "$R->{replica_conninfo}" max=4 max_lag=60s;};
set_conf_defaults(
    workers => 2, postgres => $pg, storage => $s3->storage,
    config => $s3->locations . "        location = /status { cms_status; }\n",
    http_config => "    cms_events_interval 100ms;\n    cms_outbound_loopback on;\n"
                 . "    cms_webhook_delivery on timeout=10s concurrency=$CONCURRENCY;");
start_nginx();
my $A = port();
my $B = start_host('b');
my $C = start_host('c');
my %PORT = (A => $A, B => $B, C => $C);

sub sql { primary_psql($_[0]) }
# a socket listening on 127.0.0.1:$port (/proc/net/tcp; connecting could meet itself)
sub listening {
    my $want = sprintf '0100007F:%04X', shift;
    open my $fh, '<', '/proc/net/tcp' or die "/proc/net/tcp: $!";
    return scalar grep { my @f = split ' '; @f > 3 && $f[1] eq $want && $f[3] eq '0A' } <$fh>;
}
sub log_of {
    my $h = shift;
    return error_log_lines() if $h eq 'A';
    return split /\n/, slurp(host_prefix(lc $h) . '/logs/error.log') // '';
}

for my $h (qw(A B C)) {
    ok wait_until(20, sub { (grep { /postgres replica 1 is read from/ } log_of($h)) >= 2 }),
        "host $h: both workers read from the replica";
}

my $owner = signup();
my $ot = $owner->{token};
my $wid = workspace($ot, 'Fleet');
my $K = key($ot, $wid, 'fleet', qw(articles:read articles:write pages:read pages:write));

# --- scheduled publishing: exactly once across the fleet -----------------------------------

sub relay_runs {
    my $r = http(GET => '/status', undef, undef, port => $_[0]);
    die "status on $_[0]: $r->{status}\n" unless $r->{status} == 200;
    my ($m, $err) = Cms::Prom::parse($r->{body});
    die "status on $_[0]: $err\n" if $err;
    return Cms::Prom::sum($m, 'cms_job_runs_total', job => 'relay');
}
sub published_of {
    my $ids = join ',', map { "'$_'" } @_;
    my %n;
    for (split /\n/, sql("SELECT data->>'id', count(*) FROM outbox_events"
                         . " WHERE type = 'article.published' AND data->>'id' IN ($ids)"
                         . " GROUP BY 1")) {
        my ($id, $c) = split /\|/;
        $n{$id} = $c;
    }
    return \%n;
}

{
    my @due = split /\n/, sql(
        "INSERT INTO articles (workspace_id, title, slug, status, locale, published_at)"
        . " SELECT '$wid', 'Due ' || g, 'due-' || g, 'scheduled', 'en',"
        . " date_trunc('second', now()) + interval '3 seconds'"
        . " FROM generate_series(1, 200) g RETURNING id");
    is scalar(@due), 200, '200 articles scheduled for one moment, 3 s ahead';
    is sql("SELECT count(DISTINCT published_at) FROM articles WHERE workspace_id = '$wid'"), 1,
        'all at the same published_at';
    my $n;
    ok wait_until(30, sub { $n = published_of(@due); keys %$n == 200 }),
        'all 200 announced' or diag scalar(keys %$n) . ' announced';
    # the jobs run again on every host, and the announcing job once more somewhere
    my %runs = map { $_ => relay_runs($PORT{$_}) } keys %PORT;
    my $canary = sql("INSERT INTO articles (workspace_id, title, slug, status, locale,"
                     . " published_at) VALUES ('$wid', 'Canary', 'canary', 'scheduled', 'en',"
                     . " now() + interval '1 second') RETURNING id");
    for my $h (sort keys %PORT) {
        ok wait_until(15, sub { relay_runs($PORT{$h}) >= $runs{$h} + 5 }),
            "host $h: its worker 0's jobs ran 5 more rounds";
    }
    ok wait_until(15, sub { (published_of($canary)->{$canary} // 0) == 1 }),
        'a later article announced: the announcing job ran again';
    $n = published_of(@due);
    is scalar(grep { !$n->{$_} } @due), 0, 'none missing';
    is scalar(grep { ($n->{$_} // 0) > 1 } @due), 0, 'none announced twice';
    is sql("SELECT count(*) FROM outbox_events WHERE type = 'article.published'"
           . " AND workspace_id = '$wid'"), 201, 'exactly 201 article.published in the outbox';
    is sql("SELECT count(*) FROM outbox_events e JOIN articles a ON a.id::text = e.data->>'id'"
           . " WHERE e.type = 'article.published' AND e.created_at < a.published_at"), 0,
        'none written before its time';
    my $r = at($C, GET => "/v1/api/articles/$due[0]", $K);
    is(($r->{json}{article} // {})->{status}, 'published', 'host C reads it published')
        or diag diag_resp($r);
}

# --- a publish, a rotated key and a revoked key, seen by the other hosts ---------------

{
    my $r = req(POST => "/v1/workspaces/$wid/sites", $ot, { name => 'Fleet site' });
    die 'site: ' . diag_resp($r) unless $r->{status} == 201;
    my $site = $r->{json}{site};
    my $pk = $site->{publishable_key};
    $r = req(POST => "/v1/workspaces/$wid/sites/$site->{id}/pages", $ot,
             { slug => '/fleet', title => 'Fleet' });
    die 'page: ' . diag_resp($r) unless $r->{status} == 201;
    my $page = $r->{json}{page}{id};
    my $sec = sub { at($_[0], GET => "/v1/public/pages/$page/sections?key=" . ($_[1] // $pk)) };
    my $title = sub { ((($_[0]{json} // {})->{sections} // [])->[0] // {})->{data}{title} // '' };
    for my $h (qw(B C)) {
        ok wait_until(10, sub { my $x = $sec->($PORT{$h}); $x->{status} == 200
                                && !@{ $x->{json}{sections} // [1] } }),
            "host $h: the page, nothing published yet";
    }
    $r = req(PUT => "/v1/api/pages/$page/sections", $K,
             { section_key => 'hero', data => { title => 'Fleet v1' } });
    is $r->{status}, 200, 'a section saved on A' or diag diag_resp($r);
    $r = req(POST => "/v1/api/pages/$page/sections/publish", $K, {});
    is $r->{status}, 200, 'and published on A' or diag diag_resp($r);
    my $t0 = time;
    my %seen;
    ok wait_until(10, sub {
            for my $h (grep { !$seen{$_} } qw(B C)) {
                $seen{$h} = time - $t0 if $title->($sec->($PORT{$h})) eq 'Fleet v1';
            }
            keys %seen == 2 }),
        'the publish is on B\'s and C\'s /v1/public within 10 s';
    diag sprintf 'publish seen on B after %.2f s, on C after %.2f s', $seen{B} // -1,
        $seen{C} // -1;

    # a rotated publishable key
    $r = req(POST => "/v1/workspaces/$wid/sites/$site->{id}/publishable-key/rotate", $ot);
    is $r->{status}, 200, 'the publishable key rotated on A' or diag diag_resp($r);
    my $pk2 = ($r->{json}{site} // {})->{publishable_key} // '';
    $t0 = time;
    ok wait_until(10, sub { !grep { $sec->($PORT{$_})->{status} != 401 } qw(B C) }),
        'the old publishable key stops on B and C within 10 s';
    diag sprintf 'the old publishable key refused everywhere after %.2f s', time - $t0;
    check_err($sec->($PORT{$_}), 401, 'invalid_api_key', "host $_: the old publishable key")
        for qw(B C);
    ok wait_until(10, sub { !grep { $title->($sec->($PORT{$_}, $pk2)) ne 'Fleet v1' } qw(B C) }),
        'the new one reads the page on B and C';

    # a revoked secret key
    my $rk = api_key($ot, $wid, 'to revoke', 'pages:read');
    is at($PORT{$_}, GET => '/v1/api/key', $rk->{secret})->{status}, 200,
        "host $_: a secret key made a moment ago works at once" for qw(B C);
    $r = req(DELETE => "/v1/workspaces/$wid/api-keys/$rk->{api_key}{id}", $ot);
    is $r->{status}, 204, 'the secret key revoked on A' or diag diag_resp($r);
    $t0 = time;
    ok wait_until(10, sub {
            !grep { at($PORT{$_}, GET => '/v1/api/key', $rk->{secret})->{status} != 401 } qw(B C)
        }), 'the revoked key stops on B and C within 10 s';
    diag sprintf 'the revoked key refused everywhere after %.2f s', time - $t0;
    check_err(at($PORT{$_}, GET => '/v1/api/key', $rk->{secret}), 401, 'invalid_api_key',
              "host $_: the revoked secret key") for qw(B C);
}

# --- an upload through A, read on C -------------------------------------------------

{
    my $bytes = "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"
              . join('', map { chr int rand 256 } 1 .. 200_000) . "\n%%EOF\n";
    my $base = "/v1/workspaces/$wid/media";
    my $r = req(POST => "$base/uploads", $ot, { filename => 'fleet.pdf', type => 'file',
                content_type => 'application/pdf', size_bytes => length $bytes });
    die 'reserve: ' . diag_resp($r) unless $r->{status} == 201;
    my $u = $r->{json}{upload};
    $r = http(PUT => "$base/$u->{asset_id}/content",
              [Authorization => "Bearer $ot", 'Content-Type' => 'application/octet-stream'],
              $bytes);
    is $r->{status}, 200, 'the content PUT through A' or diag diag_resp($r);
    for my $h (qw(C B)) {
        my $f = at($PORT{$h}, GET => "/v1/files/$u->{storage_key}");
        is $f->{status}, 200, "host $h: GET /v1/files of it" or diag diag_resp($f);
        ok $f->{body} eq $bytes, sprintf 'host %s serves it byte for byte (%d bytes, sha256 %s)',
            $h, length $bytes, substr sha256_hex($bytes), 0, 12
            or diag sprintf '%d bytes, sha256 %s', length $f->{body}, sha256_hex($f->{body});
    }
}

# --- an idempotent POST on A, retried on B ---------------------------------------------------

{
    my $privs = '{ext:billing:read,ext:billing:write,ext:control:write}';
    my $fac = sql("INSERT INTO facilities (name) VALUES ('fleet') RETURNING id");
    my $ext = sql("INSERT INTO extensions (facility_id, name, version, category, status,"
                  . " privileges) VALUES ('$fac', 'billing-fleet', '1.0.0', 'payment',"
                  . " 'running', '$privs') RETURNING id");
    my $ek = make_key('sk_live_');
    sql(sprintf "INSERT INTO extension_keys (extension_id, facility_id, livemode, privileges,"
        . " key_prefix, secret_hash) VALUES ('%s', '%s', true, '%s', '%s', decode('%s', 'hex'))",
        $ext, $fac, $privs, substr($ek, 0, 12), unpack('H*', hmac_sha256($ek, pepper())));
    my $inv = sql("INSERT INTO invoices (facility_id, livemode, patient_id, amount, currency)"
                  . " VALUES ('$fac', true, 'patient-fleet', 700, 'XOF') RETURNING id");
    my @post = (POST => record_path($inv), $ek,
                '{"reference":"fleet","amount":700,"method":"cash"}',
                'Idempotency-Key' => idem());
    my $a = at($A, @post);
    is $a->{status}, 200, 'a payment recorded on A' or diag diag_resp($a);
    ok !$a->{headers}{'idempotent-replayed'}, 'the original answer';
    my $b = at($B, @post);
    is $b->{status}, 200, 'the same request, same Idempotency-Key, on B: 200' or diag diag_resp($b);
    is $b->{headers}{'idempotent-replayed'}, 'true', 'Idempotent-Replayed: true';
    is $b->{body}, $a->{body}, 'the original answer replayed byte for byte';
    is sql("SELECT count(*) FROM payments WHERE invoice_id = '$inv'"), 1, 'one payment row';
    is sql("SELECT count(*) FROM ext_events WHERE data->'invoice'->>'id' = '$inv'"), 1,
        'one event';
}

# --- webhooks over the fleet, host C killed mid-delivery -------------------------------------

{
    my $wid2 = workspace($ot, 'Fleet hooks');
    my $KH = key($ot, $wid2, 'hooks', qw(webhooks:read webhooks:write));
    my $r = req(POST => '/v1/api/webhooks', $KH,
                { url => "http://127.0.0.1:$RPORT/fleet", events => ['page.updated'] });
    die 'webhook: ' . diag_resp($r) unless $r->{status} == 201;
    my $hook = $r->{json}{webhook}{id};
    open my $fh, '>', "$rdir/secret.tmp" or die $!;
    print $fh $r->{json}{secret};
    close $fh;
    rename "$rdir/secret.tmp", "$rdir/secret" or die $!;

    my @events = split /\n/, sql(
        "INSERT INTO outbox_events (workspace_id, type, data) SELECT '$wid2', 'page.updated',"
        . " jsonb_build_object('n', g) FROM generate_series(1, 1000) g RETURNING id");
    is scalar(@events), 1000, '1,000 events written';
    my $delivered = sub {
        sql("SELECT count(*) FROM webhook_deliveries WHERE webhook_id = '$hook'"
            . " AND status = 'delivered'");
    };

    # half answered and recorded, and C's worker 0 full of held requests
    my (%c_ports, @held);
    ok wait_until(60, sub {
            my @q = received();
            return 0 unless @q >= 500 && $delivered->() == 500;
            my %held = map { $_->{port} => $_ } grep { $_->{held} } @q;
            %c_ports = map { $_ => 1 } host_connections('c', $RPORT);
            @held = grep { $c_ports{$_} } keys %held;
            @held == $CONCURRENCY }),
        "500 delivered and recorded; host C holds $CONCURRENCY more in flight"
        or diag sprintf 'received %d, delivered %d, C holds %d', scalar(received()),
                        $delivered->(), scalar(@held);
    my %on_c = map { $_->{id} => 1 } grep { $_->{held} && $c_ports{$_->{port}} } received();
    my $ids = join(',', map { "'$_'" } keys %on_c) || 'NULL';
    my %lease_end = map { split /\|/ } split /\n/, sql(
        "SELECT event_id, extract(epoch FROM locked_until) FROM webhook_deliveries"
        . " WHERE webhook_id = '$hook' AND event_id IN ($ids)");
    my $lease = sql("SELECT extract(epoch FROM max(locked_until - updated_at))"
                    . " FROM webhook_deliveries WHERE webhook_id = '$hook' AND event_id IN ($ids)");

    my @pids = kill_host('c');
    my $t_kill = time;
    # bounded: the kernel closes the listening socket as the last holder exits
    ok wait_until(10, sub { !listening($C) }), 'kill -9 of host C\'s master and workers ('
        . scalar(@pids) . ' processes): gone, nothing listens on its port';
    open $fh, '>', "$rdir/release" or die $!;
    close $fh;
    diag sprintf 'host C killed with %d deliveries in flight; their lease %.0f s',
        scalar(keys %on_c), $lease;

    ok wait_until(60, sub { $delivered->() >= 1000 - keys %on_c }),
        'A and B deliver every other event';
    my ($end) = sort { $b <=> $a } values %lease_end;
    my $bound = (($end // 0) > time ? $end - time : 0) + 30;
    ok wait_until($bound, sub { $delivered->() == 1000 }),
        sprintf 'all 1,000 delivered once C\'s lease ran out (%.0f s after the kill)',
                time - $t_kill;

    my @q = received();
    my %n;
    $n{$_->{id}}++ for @q;
    is_deeply [sort keys %n], [sort @events], 'every event reached the receiver';
    is scalar(grep { !$_->{sig} || $_->{hook} ne $_->{id} || $_->{line} ne 'POST /fleet HTTP/1.1' }
              @q), 0, 'every request signed, its webhook-id the event\'s id';
    my @twice = sort grep { $n{$_} == 2 } keys %n;
    my $once = grep { $n{$_} == 1 } keys %n;
    diag sprintf 'delivered once: %d, delivered twice: %d', $once, scalar @twice;
    is scalar(grep { $n{$_} > 2 } keys %n), 0, 'none more than twice';
    is_deeply \@twice, [sort keys %on_c], 'the events delivered twice: those in flight on C';
    ok @twice <= $CONCURRENCY, "at most one batch (concurrency=$CONCURRENCY)";
    my %first;
    my @late;
    for my $q (grep { $on_c{$_->{id}} } @q) {
        if (!$first{$q->{id}}) { $first{$q->{id}} = $q; next }
        push @late, $q->{id} if $q->{t} < $lease_end{$q->{id}} || $q->{sha} ne $first{$q->{id}}{sha}
                                || $q->{hook} ne $first{$q->{id}}{hook};
    }
    is_deeply \@late, [], 'each sent again with the same webhook-id and body, after its lease';
    is sql("SELECT count(*) FROM webhook_deliveries WHERE webhook_id = '$hook'"
           . " AND attempt <> CASE WHEN event_id IN ($ids) THEN 2 ELSE 1 END"), 0,
        'C\'s deliveries at their second attempt, every other at its first';
    is sql("SELECT count(*) FROM webhook_delivery_attempts a JOIN webhook_deliveries d"
           . " ON d.id = a.delivery_id WHERE d.webhook_id = '$hook'"
           . " AND (a.status_code IS DISTINCT FROM 200 OR a.attempt <> d.attempt)"), 0,
        'one attempt recorded each, a 200 (C\'s lost attempts left none)';
}

# --- the other hosts' logs ---------------------------------------------------------------------

stop_host('b');
for my $h (qw(b c)) {
    my @bad = host_errors($h);
    ok !@bad, "host \U$h\E: error.log has no [alert], [crit] or [emerg]" or diag join '', @bad;
}

done_testing();
