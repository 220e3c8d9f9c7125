# Bounded thread lanes (issue 11): argon2id and the HTML sanitizer each run at most
# cms_*_jobs at once per worker and keep at most cms_*_queue waiting; beyond that the
# request is refused at once with 503 service_unavailable and Retry-After, never an
# unbounded wait. Here both lanes are cut to one running and one waiting, so that a
# dozen requests at once must overflow them; the counters of /v1/_test/pool show the
# lanes drained afterwards, also when clients hang up while they wait.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp check_err signup workspace key);
use JSON::PP ();

my $JSON = JSON::PP->new->utf8->canonical;
my $N = 12;

sub lanes { http(GET => '/v1/_test/pool')->{json} || {} }
sub ncpu { my $n = () = `cat /proc/cpuinfo` =~ /^processor\s*:/mg; $n || 1 }

# The defaults: as many running as CPUs, 64 waiting.
start_nginx(workers => 1);
my $l = lanes();
is $l->{password}{jobs}, ncpu(), 'password lane: as many running as CPUs by default';
is $l->{password}{queue}, 64, 'password lane: 64 waiting by default';
is $l->{sanitizer}{jobs}, ncpu(), 'sanitizer lane: as many running as CPUs by default';
is $l->{sanitizer}{queue}, 64, 'sanitizer lane: 64 waiting by default';

# Fixtures before the lanes shrink.
my $owner = signup();
my $wid = workspace($owner->{token}, 'Lanes');
my $key = key($owner->{token}, $wid, 'w', 'articles:read', 'articles:write');

start_nginx(workers => 1, http_config => join "\n",
            'cms_password_jobs 1;', 'cms_password_queue 1;',
            'cms_sanitize_jobs 1;', 'cms_sanitize_queue 1;');
$l = lanes();
is_deeply [map { @{$l->{$_}}{qw(jobs queue running queued)} } qw(password sanitizer)],
    [1, 1, 0, 0, 1, 1, 0, 0], 'both lanes: 1 running, 1 waiting at most; idle';

# Checks a burst of answers: 2xx or 503 with Retry-After; returns how many of each.
sub overflow {
    my ($what, $ok, @r) = @_;
    my @good = grep { $_->{status} == $ok } @r;
    my @busy = grep { $_->{status} == 503 } @r;
    is @good + @busy, scalar(@r), "$what: every answer $ok or 503"
        or diag join "\n", map { diag_resp($_) } grep { $_->{status} != $ok && $_->{status} != 503 } @r;
    cmp_ok scalar(@good), '>=', 2, "$what: the running one and the waiting one done ($ok)";
    cmp_ok scalar(@busy), '>=', 1, "$what: the rest refused at once (" . scalar(@busy) . ' x 503)';
    if (@busy) {
        check_err($busy[0], 503, 'service_unavailable', "$what, lane full");
        is $busy[0]{headers}{'retry-after'}, '1', "$what, lane full: Retry-After: 1";
        my ($slow) = sort { $b <=> $a } map { $_->{elapsed} } @busy;
        my ($fast) = sort { $b <=> $a } map { $_->{elapsed} } @good;
        cmp_ok $slow, '<', $fast, sprintf('%s: a refusal came before the last accepted answer '
               . '(%.0f ms < %.0f ms): nobody waited for a turn', $what, 1000 * $slow, 1000 * $fast);
    }
    return (scalar @good, scalar @busy);
}

# --- the password lane -----------------------------------------------------------------

my @emails = map { sprintf 'lane%02d-%d@example.com', $_, $$ } 1 .. $N;
my @su = parallel_requests(map {
    { method => 'POST', path => '/v1/auth/signup', timeout => 120,
      headers => ['Content-Type' => 'application/json'],
      body => $JSON->encode({ email => $_, password => 'a long enough password' }) }
} @emails);
my ($made, $busy) = overflow("$N signups at once", 201, @su);
is psql("SELECT count(*) FROM users WHERE email LIKE 'lane%-$$\@example.com'")->[0][0], $made,
    'a refused signup created no user';
$l = lanes()->{password};
is_deeply [@{$l}{qw(running queued held)}], [0, 0, 0], 'password lane idle afterwards';
is $l->{refused}, $busy, 'password lane counted every refusal';
my ($user) = map { $emails[$_] } grep { $su[$_]{status} == 201 } 0 .. $#su;

# Logins hold their place before the lookup: the overflow is refused before any query.
my @li = parallel_requests(map {
    { method => 'POST', path => '/v1/auth/login', timeout => 120,
      headers => ['Content-Type' => 'application/json'],
      body => $JSON->encode({ email => $_, password => 'a wrong password' }) }
} @emails);
overflow("$N wrong logins at once", 401, @li);
$l = lanes()->{password};
is_deeply [@{$l}{qw(running queued held)}], [0, 0, 0], 'password lane idle afterwards';

# Clients that hang up while they wait give their place back.
abort_requests($N, { method => 'POST', path => '/v1/auth/login', headers => ['Content-Type' => 'application/json'],
                     body => $JSON->encode({ email => $user, password => 'a wrong password' }) }, 300);
ok wait_until(60, sub { my $p = lanes()->{password}; !$p->{running} && !$p->{queued} && !$p->{held} }),
    'after aborted logins the password lane drains to idle';
my $in = req(POST => '/v1/auth/login', undef, { email => $user, password => 'a long enough password' });
is $in->{status}, 200, 'and a login goes through' or diag diag_resp($in);

# --- the sanitizer lane ----------------------------------------------------------------

# Bodies near the 512 KiB limit and full of markup: the sanitizer works on each a while.
my $html = '<p>' . ('<b>bold</b> <a href="https://example.com/x?y=1">link</a> <i>it</i> ' x 5000) . '</p>';
my @ar = parallel_requests(map {
    { method => 'POST', path => '/v1/api/articles', timeout => 120,
      headers => ['Content-Type' => 'application/json', Authorization => "Bearer $key"],
      body => $JSON->encode({ title => "Lane $_", body => $html }) }
} 1 .. $N);
my ($saved) = overflow("$N article writes with large bodies at once", 201, @ar);
is psql("SELECT count(*) FROM articles WHERE title LIKE 'Lane %'")->[0][0], $saved,
    'a refused write saved nothing';
$l = lanes()->{sanitizer};
is_deeply [@{$l}{qw(running queued)}], [0, 0], 'sanitizer lane idle afterwards';

done_testing();
