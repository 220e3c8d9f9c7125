# W3C traceparent and the JSON access log (issue 33, docs/operations.md "Tracing" and
# "Access log"): a valid traceparent comes back on the answer (a 200, an error, a later
# version's first 55 bytes) and its trace-id is $cms_trace_id; a malformed one (uppercase,
# version ff, all-zero ids, version 00 with more after it, a wrong separator) is ignored:
# not echoed, not logged.  The access log format is the one conf/nginx.conf.in defines
# (cms_json), read from that file: every line parses as JSON, names the answer's
# X-Request-Id and the trace-id, carries the path without its query string (no key in a
# log), and stays JSON when the client sends quotes, backslashes and control bytes.
use strict;
use warnings;
use Cms::Test;
use JSON::PP;
use Time::HiRes ();

my $conf = do {
    open my $fh, '<', "$ENV{TEST_CMS_ROOT}/conf/nginx.conf.in" or die "nginx.conf.in: $!";
    local $/;
    <$fh>;
};
my ($format) = $conf =~ /^\s*(log_format cms_json .*?';)\s*$/ms;
ok $format, 'conf/nginx.conf.in defines log_format cms_json';

start_nginx(http_config => $format, config => 'access_log logs/json.log cms_json;');
my $log = prefix() . '/logs/json.log';

my $tp = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
my $n = 0;
my %sent;               # request id => what the log line must say

sub call {
    my ($path, %o) = @_;
    my $id = sprintf 'trace-test-%04d', ++$n;
    my @h = ('X-Request-Id' => $id);
    push @h, traceparent => $o{tp} if defined $o{tp};
    push @h, 'User-Agent' => $o{ua} if defined $o{ua};
    my $r = http(GET => $path, \@h);
    $sent{$id} = { trace_id => $o{trace_id} // '', status => $r->{status} };
    return $r;
}

my $r = call('/v1/health/live', tp => $tp, trace_id => '4bf92f3577b34da6a3ce929d0e0e4736');
is $r->{status}, 200, 'a valid traceparent: 200';
is $r->{headers}{traceparent}, $tp, '... echoed';

$r = call('/v1/api/articles', tp => $tp, trace_id => '4bf92f3577b34da6a3ce929d0e0e4736');
is $r->{status}, 401, 'an error answer';
is $r->{headers}{traceparent}, $tp, '... echoed too';

my $later = 'cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
$r = call('/v1/health/live', tp => "$later-more-to-come", trace_id => '0af7651916cd43dd8448eb211c80319c');
is $r->{headers}{traceparent}, $later, 'a later version: its first 55 bytes echoed';

for my $bad ('00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01',
             'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
             '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
             '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
             "$tp-extra", '00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
             'not a traceparent') {
    $r = call('/v1/health/live', tp => $bad);
    is $r->{status}, 200, "malformed '" . substr($bad, 0, 24) . "...': still served";
    ok !exists $r->{headers}{traceparent}, '... not echoed';
}

$r = call('/v1/health/live');
ok !exists $r->{headers}{traceparent}, 'no traceparent: none on the answer';
$r = call('/v1/public/sections?path=/about&key=pk_live_secretish&token=t0ps3cret');
$r = call('/v1/health/live', ua => qq{evil "quoted" \\ agent \x01\x1f end});

# the log: a line a request, written just after each answer; waited for with a bound
my @lines;
my $until = Time::HiRes::time() + 10;
while (1) {
    @lines = -e $log ? grep { /trace-test-/ } split /\n/, do {
        open my $fh, '<', $log or die "$log: $!";
        local $/;
        <$fh>;
    } : ();
    last if @lines >= $n || Time::HiRes::time() > $until;
    Time::HiRes::sleep(0.05);
}
is scalar(@lines), $n, "the log has a line for each of the $n requests";

my (%seen, @bad);
for my $line (@lines) {
    my $j = eval { JSON::PP->new->decode($line) };
    if (!$j) { push @bad, $line; next }
    $seen{$j->{request_id}} = $j;
}
is_deeply \@bad, [], 'every line parses as JSON' or diag join "\n", @bad;
is_deeply [sort keys %seen], [sort keys %sent], 'each line names its request\'s X-Request-Id';
is_deeply { map { $_ => { trace_id => $seen{$_}{trace_id}, status => $seen{$_}{status} } } keys %seen },
    \%sent, 'trace_id: the valid traceparent\'s trace-id, "" otherwise; status a number';

my ($q) = grep { $_->{path} =~ m{^/v1/public/sections} } values %seen;
is $q->{path}, '/v1/public/sections', 'the path without its query string';
ok !grep({ /pk_live_secretish|t0ps3cret/ } @lines), 'no key or token from a query in the log';
my ($ua) = grep { ($_->{user_agent} // '') =~ /evil/ } values %seen;
is $ua->{user_agent}, qq{evil "quoted" \\ agent \x01\x1f end}, 'a hostile user agent stays one JSON string';
for my $f (qw(time remote_addr method bytes_sent request_length request_time)) {
    ok defined $seen{'trace-test-0001'}{$f}, "field $f";
}
is scalar(grep { /"request_time":\d+\.\d{3},/ } @lines), $n, 'request_time in seconds, ms resolution';

done_testing();
