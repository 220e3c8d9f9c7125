# A fleet's first start (docs/fleet.md; docs/operations.md, "Schema and upgrades"): three
# hosts, A (the harness's nginx) and B and C (Cms::Hosts), each its own prefix, port, pid
# and logs, start at the same moment against an EMPTY database. Each host's start is
# `cms-admin migrate` then nginx, as a deployment's start step is; the three are released
# together from one pipe. Shown: every start step exits 0, the migrations are applied once
# in all (the others find them recorded: cms-admin's advisory lock), schema_migrations has
# each version of sql/ exactly once, and every host is ready (/v1/health/ready 200, the
# schema current) and serves the API (a signup, 201) within a bounded wait.
use strict;
use warnings;
use Cms::Test;
use Cms::Hosts qw(:all);
use Cms::Fixtures qw(req_spec);
use POSIX ();

my $admin = $ENV{TEST_CMS_ADMIN} or die 'TEST_CMS_ADMIN is not set';
my @files = map { m{([^/]+)\.sql$} }
            sort glob("$ENV{TEST_CMS_ROOT}/sql/[0-9][0-9][0-9][0-9]_*.sql");
my $empty = "cms_fleet_empty_$$";
psql_admin(qq{CREATE DATABASE "$empty"});
my $conn = "hostaddr=127.0.0.1 port=$ENV{TEST_CMS_PG_PORT} dbname=$empty user=postgres";
set_conf_defaults(workers => 2, postgres => qq{cms_postgres "$conn" max=4;});
sub in_empty {
    my $out = `psql -X -At -h 127.0.0.1 -p $ENV{TEST_CMS_PG_PORT} -U postgres -d $empty -c "$_[0]"`;
    die "psql: $_[0]" if $?;
    chomp $out;
    return $out;
}
is in_empty("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"), 0,
    'the database is empty';

# the three hosts' configs: A's where the harness keeps it, B's and C's in their prefixes
{
    open my $fh, '>', prefix() . '/conf/nginx.conf' or die $!;
    print $fh render_conf();
    close $fh;
}
prepare_host($_) for qw(b c);
my $nginx = $ENV{TEST_NGINX_BINARY} || '/usr/sbin/nginx';
my %cmd = (A => [$nginx, '-p', prefix() . '/', '-c', prefix() . '/conf/nginx.conf'],
           B => [host_command('b')], C => [host_command('c')]);
my %port = (A => port(), B => host_port('b'), C => host_port('c'));

# --- the start steps, released at once ------------------------------------------------------
pipe(my $go_r, my $go_w) or die "pipe: $!";
my %env = Cms::Test->can('_nginx_env') ? Cms::Test::_nginx_env() : ();
my %kid;
for my $h (sort keys %cmd) {
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        close $go_w;
        sysread $go_r, my $x, 1;        # returns when the parent closes its end
        open STDOUT, '>', prefix() . "/start-$h.log" or POSIX::_exit(2);
        open STDERR, '>&', \*STDOUT or POSIX::_exit(2);
        system($admin, '--db', $conn, 'migrate') == 0 or POSIX::_exit(3);
        @ENV{keys %env} = values %env;
        exec @{ $cmd{$h} } or POSIX::_exit(4);
    }
    $kid{$h} = $pid;
}
close $go_r;
close $go_w;                            # go
my %exit = map { waitpid($kid{$_}, 0); ($_ => $? >> 8) } sort keys %kid;
is_deeply \%exit, { A => 0, B => 0, C => 0 }, 'three start steps at once: each exits 0'
    or diag join '', map { "--- $_\n" . (`cat ${\ prefix()}/start-$_.log` // '') } sort keys %kid;
adopt_host($_) for qw(b c);
ok wait_until(10, sub { master_pid() }), 'host A runs';

my ($applied, %by) = (0);
for my $h (sort keys %kid) {
    my $log = `cat ${\ prefix()}/start-$h.log`;
    my ($a, $t) = $log =~ /migrate: (\d+) applied, (\d+) already there/;
    is(($a // 0) + ($t // 0), scalar(@files), "host $h: migrate saw every migration");
    $applied += $by{$h} = $a // 0;
}
is $applied, scalar(@files), 'the migrations applied once in all (' . scalar(@files) . ')';
diag 'applied by each start step: ' . join ', ', map { "$_ $by{$_}" } sort keys %by;
is in_empty('SELECT count(*), count(DISTINCT version) FROM schema_migrations'),
    scalar(@files) . '|' . scalar(@files), 'schema_migrations: each version once';
is_deeply [split /\n/, in_empty('SELECT version FROM schema_migrations ORDER BY version')],
    \@files, '... the versions of sql/';

# --- every host ready and serving ------------------------------------------------------------
for my $h (sort keys %port) {
    my $r;
    ok wait_until(30, sub { $r = http(GET => '/v1/health/ready', undef, undef, port => $port{$h});
                            $r->{status} == 200 }),
        "host $h: /v1/health/ready 200" or diag "got $r->{status} $r->{body}";
    is(($r->{json} // {})->{schema}, 'current', "host $h: the schema current");
    my ($s) = on_hosts([$port{$h}, req_spec(POST => '/v1/auth/signup', undef,
                        { email => "first-$h-$$\@example.com",
                          password => "correct horse battery $h" })]);
    is $s->{status}, 201, "host $h: a signup (201)" or diag "got $s->{status} $s->{body}";
}

stop_host($_) for qw(b c);
for my $h (qw(b c)) {
    my @bad = host_errors($h);
    ok !@bad, "host \U$h\E: error.log has no [alert], [crit] or [emerg]" or diag join '', @bad;
}
stop_nginx();
psql_admin(qq{DROP DATABASE "$empty" WITH (FORCE)});

done_testing();
