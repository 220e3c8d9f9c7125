package Cms::Prom;

=head1 NAME

Cms::Prom - a strict parser of the Prometheus text exposition format (0.0.4)

=head1 SYNOPSIS

    my ($m, $err) = Cms::Prom::parse($text);
    die $err if $err;
    # $m->{families}{cms_pool_size} = { type => 'gauge', help => '...',
    #     samples => [ { name, labels => {worker => 0, ...}, value } ] }
    my $v = Cms::Prom::sum($m, 'cms_pool_waits_total', pool => 'postgres');

promtool is not packaged in Debian 12, so the tests check the format with this. What it
refuses: a body not ending in a newline; a line that is neither a comment, a HELP, a TYPE
nor a sample; a metric or label name outside the grammar (C<[a-zA-Z_:][a-zA-Z0-9_:]*>,
C<[a-zA-Z_][a-zA-Z0-9_]*>, no C<__> prefix); a label value with an escape other than
C<\\ \" \n> or a raw newline; a duplicate label name; a value that is not a float (Go's
ParseFloat forms, C<NaN>, C<+Inf>, C<-Inf>); a timestamp that is not an integer; TYPE or
HELP given twice for a name, or TYPE after the family's first sample; an unknown type; a
family whose samples are not contiguous; a sample without a TYPE (ours: every family is
typed); the same series twice; a counter not named C<_total> or below zero.

=cut

use strict;
use warnings;

my $NAME = qr/[a-zA-Z_:][a-zA-Z0-9_:]*/;
my $LABEL = qr/[a-zA-Z_][a-zA-Z0-9_]*/;
my $FLOAT = qr/(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?Inf|NaN)/;
my %TYPES = map { $_ => 1 } qw(counter gauge histogram summary untyped);

# the family a sample belongs to: histogram and summary samples carry suffixes
sub _family_of {
    my ($fam, $name) = @_;
    return $name if $fam->{$name};
    for my $s (qw(_bucket _sum _count)) {
        (my $base = $name) =~ s/\Q$s\E$// or next;
        return $base if $fam->{$base} && $fam->{$base}{type} =~ /^(histogram|summary)$/;
    }
    return $name;
}

sub _labels {
    my ($s, $where) = @_;
    my %l;
    while (length $s) {
        $s =~ s/^($LABEL)="((?:[^"\\\n]|\\[\\"n])*)"// or return (undef, "$where: bad label at '$s'");
        my ($k, $v) = ($1, $2);
        return (undef, "$where: label name '$k' is reserved") if $k =~ /^__/;
        return (undef, "$where: label '$k' twice") if exists $l{$k};
        $v =~ s/\\(.)/$1 eq 'n' ? "\n" : $1/ge;
        $l{$k} = $v;
        last unless length $s;
        $s =~ s/^,// or return (undef, "$where: expected ',' at '$s'");
    }
    return (\%l, undef);
}

sub parse {
    my ($text) = @_;
    return (undef, 'empty body') unless defined $text && length $text;
    return (undef, 'the body does not end with a newline') unless $text =~ /\n\z/;
    my (%fam, %seen, %closed, $current);
    my $n = 0;
    for my $line (split /\n/, $text, -1) {
        $n++;
        my $where = "line $n";
        next if $line eq '';
        if ($line =~ /^#\s*(HELP|TYPE)\s+(\S+)(?:\s+(.*))?$/) {
            my ($kw, $name, $rest) = ($1, $2, $3 // '');
            return (undef, "$where: bad metric name '$name'") unless $name =~ /^$NAME$/;
            my $f = $fam{$name} //= { samples => [] };
            if ($kw eq 'TYPE') {
                return (undef, "$where: TYPE of $name twice") if defined $f->{type};
                return (undef, "$where: unknown type '$rest'") unless $TYPES{$rest};
                return (undef, "$where: TYPE of $name after its samples") if @{$f->{samples}};
                $f->{type} = $rest;
            } else {
                return (undef, "$where: HELP of $name twice") if defined $f->{help};
                return (undef, "$where: bad escape in HELP") if $rest =~ /\\[^\\n]/;
                $f->{help} = $rest;
            }
            next;
        }
        next if $line =~ /^#/;
        $line =~ /^($NAME)(?:\{(.*)\})?[ \t]+(\S+)(?:[ \t]+(-?\d+))?$/
            or return (undef, "$where: not a sample: '$line'");
        my ($name, $ls, $value) = ($1, $2 // '', $3);
        return (undef, "$where: value '$value' is not a float") unless $value =~ /^$FLOAT$/;
        my ($labels, $err) = _labels($ls, $where);
        return (undef, $err) if $err;
        my $fname = _family_of(\%fam, $name);
        my $f = $fam{$fname};
        return (undef, "$where: $name has no TYPE") unless $f && defined $f->{type};
        return (undef, "$where: the samples of $fname are not together") if $closed{$fname};
        if (defined $current && $current ne $fname) { $closed{$current} = 1 }
        $current = $fname;
        my $key = join "\0", $name, map { "$_=$labels->{$_}" } sort keys %$labels;
        return (undef, "$where: series $name\{$ls} twice") if $seen{$key}++;
        if ($f->{type} eq 'counter') {
            return (undef, "$where: counter $name not named _total") unless $name =~ /_total$/;
            return (undef, "$where: counter $name below zero") if $value !~ /NaN/ && $value < 0;
        }
        push @{$f->{samples}}, { name => $name, labels => $labels, value => $value + 0 };
    }
    return ({ families => \%fam }, undef);
}

# the samples of a family whose labels include every pair given
sub samples {
    my ($m, $name, %want) = @_;
    my $f = $m->{families}{$name} or return ();
    return grep {
        my $s = $_;
        !grep { !defined $s->{labels}{$_} || $s->{labels}{$_} ne $want{$_} } keys %want;
    } @{$f->{samples}};
}

sub sum {
    my $t = 0;
    $t += $_->{value} for samples(@_);
    return $t;
}

=head1 SCRAPING A TEST'S NGINX

C<scrape($path)> GETs the status location (C</status> by default: the file's config has
C<location = /status { cms_status; }>) and returns the parsed answer; it dies when the
answer does not parse. C<job_runs($job)> is the rounds of a background job (C<purge>,
C<relay>, C<extensions>) completed so far; C<wait_job_runs($job, $n, $secs)> waits (at most
C<$secs>) until C<$n> more rounds than now have completed: a test that asserts a state a
job could change waits for the job to have run, rather than sleeping.

=cut

sub scrape {
    my $r = Cms::Test::http(GET => $_[0] // '/status');
    die "scrape: $r->{status} " . ($r->{error} // '') . "\n" unless $r->{status} == 200;
    my ($m, $err) = parse($r->{body});
    die "scrape: $err\n" if $err;
    return $m;
}

sub job_runs { sum(scrape(), 'cms_job_runs_total', job => $_[0]) }

sub wait_job_runs {
    my ($job, $n, $secs) = @_;
    my $start = job_runs($job);
    return Cms::Test::wait_until($secs // 10, sub { job_runs($job) >= $start + $n });
}

1;
