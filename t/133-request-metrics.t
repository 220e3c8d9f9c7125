# Request metrics in cms_status (issue 33, docs/operations.md "Request metrics"): after a
# mixed load on two workers, cms_http_requests_total, summed over the workers, equals the
# requests sent per route family, method and status class (the scrape's own location,
# outside /v1/, is not counted); each family's histogram counts as many requests as its
# counters, its buckets never fall and end at +Inf; promtool (Debian's prometheus package)
# finds the whole text valid.
use strict;
use warnings;
use Cms::Test;
use Cms::Prom;
use Cms::Fixtures qw(req signup signup_defaults workspace key);
use File::Temp ();

signup_defaults(email_prefix => 'rqm');

start_nginx(workers => 2, config => "location = /status { cms_status; }\n");
my $owner = signup();                                       # account POST 2xx
my $wid = workspace($owner->{token}, 'Metrics');            # studio POST 2xx
my $K = key($owner->{token}, $wid, 'metrics', 'articles:read');   # studio POST 2xx

my %want;
sub send_n {
    my ($n, $family, $class, @req) = @_;
    for (1 .. $n) {
        my $r = http(@req);
        die "$req[0] $req[1]: $r->{status}, not ${class}xx" unless int($r->{status} / 100) == $class;
    }
    $want{"$family $req[0] ${class}xx"} += $n;
}
$want{'account POST 2xx'} = 1;
$want{'studio POST 2xx'} = 2;

send_n(20, 'health', 2, GET => '/v1/health/live');
send_n(5, 'health', 2, HEAD => '/v1/health/live');
send_n(7, 'api', 4, GET => '/v1/api/articles');
send_n(9, 'api', 2, GET => '/v1/api/articles', [Authorization => "Bearer $K"]);
send_n(3, 'api', 4, DELETE => '/v1/api/articles/00000000-0000-4000-8000-000000000000',
       [Authorization => "Bearer $K"]);
send_n(4, 'other', 4, GET => '/v1/no-such-family');
send_n(2, 'studio', 2, GET => "/v1/workspaces/$wid", [Authorization => "Bearer $owner->{token}"]);
send_n(6, 'account', 4, POST => '/v1/auth/login', ['Content-Type' => 'application/json'],
       '{"email":"nobody@example.com","password":"wrong password"}');
send_n(1, 'docs', 2, GET => '/v1/openapi.json');
send_n(3, 'files', 4, GET => '/v1/files/none/such.png');
my $total = 0;
$total += $_ for values %want;

sub scrape {
    my $r = http(GET => '/status');
    die "status: $r->{status}" unless $r->{status} == 200;
    return $r->{body};
}
sub counted {
    my ($m) = @_;
    my %got;
    for my $s (@{ $m->{families}{cms_http_requests_total}{samples} // [] }) {
        $got{"$s->{labels}{family} $s->{labels}{method} $s->{labels}{status}"} += $s->{value};
    }
    return \%got;
}

# the log phase follows the answer: wait (bounded) until the last ones are counted
my ($text, $m, $err, $got);
ok wait_until(10, sub {
        $text = scrape();
        ($m, $err) = Cms::Prom::parse($text);
        return 0 if $err;
        $got = counted($m);
        my $n = 0;
        $n += $_ for values %$got;
        return $n >= $total;
    }), "every request counted ($total)" or diag $err // explain $got;
is_deeply $got, \%want, 'counted by family, method and status class, as sent';

my $h = $m->{families}{cms_http_request_duration_seconds};
is $h->{type}, 'histogram', 'cms_http_request_duration_seconds is a histogram';
my (%count, %buckets);
for my $s (@{ $h->{samples} }) {
    my $k = "$s->{labels}{worker} $s->{labels}{family}";
    $count{$s->{labels}{family}} += $s->{value} if $s->{name} =~ /_count$/;
    push @{ $buckets{$k} }, [$s->{labels}{le}, $s->{value}] if $s->{name} =~ /_bucket$/;
}
my %per_family;
$per_family{(split / /, $_)[0]} += $want{$_} for keys %want;
is_deeply \%count, \%per_family, 'each family\'s histogram counts its requests';
my @bad;
for my $k (sort keys %buckets) {
    my @b = @{ $buckets{$k} };
    push @bad, "$k: no +Inf last" unless $b[-1][0] eq '+Inf';
    push @bad, "$k: falls" if grep { $b[$_][1] < $b[$_ - 1][1] } 1 .. $#b;
}
is_deeply \@bad, [], 'every histogram rises and ends at +Inf';

my $f = File::Temp->new;
print $f $text;
close $f;
my $out = `promtool check metrics < $f 2>&1`;
is $?, 0, 'promtool check metrics: valid' or diag $out;

done_testing();
