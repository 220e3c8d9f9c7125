package Cms::Hostile;

=head1 NAME

Cms::Hostile - the hostile-input corpus of t/042-hostile.t: loading it, filling its
placeholders, sending its cases (through Cms::Test::http, or raw bytes through Cms::Test::raw_http) and checking
every answer against the error contract

=head1 SYNOPSIS

    use Cms::Test;
    use Cms::Hostile qw(load_corpus fill send_case check_case);

    my @cases = load_corpus('t/data/hostile/gen-corpus.pl');
    my %fill = (n => sub { ++$n }, 'cred:api' => sub { $key }, ...);
    for my $c (@cases) {
        my $r = send_case($c, \%fill);
        my @bad = check_case($c, $r);
        ok !@bad, $c->{name} or diag join "\n", @bad;
    }

The corpus is made by C<t/data/hostile/gen-corpus.pl> (its header describes a case).
Load it after C<Cms::Test> (C<use Cms::Test;> sets the file up).

=cut

use strict;
use warnings;
use Cms::Test ();
use JSON::PP ();
use Exporter qw(import);

our @EXPORT_OK = qw(load_corpus fill send_case check_case problem_kind short);

my $JSON = JSON::PP->new->utf8;

=head1 FUNCTIONS

=over

=item load_corpus($generator)

The cases the corpus generator (t/data/hostile/gen-corpus.pl) writes, made afresh on
every run so that the route table in it is the only thing to edit, with their strings
as byte strings.

=cut

sub load_corpus {
    my $file = shift;
    open my $fh, '-|', $^X, $file or die "$file: $!";
    binmode $fh;
    my $out = do { local $/; <$fh> };
    close $fh or die "$file failed (exit $?)\n";
    my $doc = $JSON->decode($out);
    my @cases = @{$doc->{cases} // die "$file: no cases\n"};
    for my $c (@cases) {
        for my $k (qw(path body raw)) {
            next unless defined $c->{$k};
            utf8::downgrade($c->{$k}) or die "$file: $c->{name}: $k is not bytes\n";
        }
        for my $h (@{$c->{headers} // []}) {
            utf8::downgrade($_) for @$h;
        }
    }
    return @cases;
}

=item fill($text, \%fill)

C<$text> with its C<{{NAME}}> placeholders replaced: C<{{c*N}}> by N times the character
c, any other by C<$fill{NAME}-E<gt>()> (each occurrence called once). An unknown name
dies: the corpus and the test must agree.

=cut

sub fill {
    my ($text, $f) = @_;
    return undef unless defined $text;
    $text =~ s{\{\{([^{}]+)\}\}}{
        my $name = $1;
        $name =~ /^(.)\*(\d+)$/ ? $1 x $2
            : $f->{$name} ? _bytes($f->{$name}->())
            : die "unknown placeholder {{$name}}\n"
    }ge;
    return $text;
}

sub _bytes { my $v = shift; utf8::encode($v) if utf8::is_utf8($v); $v }


=item send_case($case, \%fill)

Sends the case (filled in) and returns C<{status, headers =E<gt> {lowercased name =E<gt>
value (repeated: joined with ", ")}, header_list =E<gt> [[name, value]...], body,
error}> (status 0 and C<error> when no answer came). HTTP cases go through
Cms::Test::http (one connection each, Connection: close); raw cases through
Cms::Test::raw_http (5 s at most).

=cut

sub send_case {
    my ($c, $f) = @_;
    # the raw timeout: an unknown transfer coding or a bad head is answered at once,
    # anything slower is a failure, not a wait for client_header_timeout
    return Cms::Test::raw_http(fill($c->{raw}, $f), timeout => 5) if defined $c->{raw};
    my @h = map { ($_->[0], fill($_->[1], $f)) } @{$c->{headers}};
    return Cms::Test::http($c->{method}, fill($c->{path}, $f), \@h, fill($c->{body}, $f));
}

=item check_case($case, $response)

The contract every answer keeps; returns the broken rules (none: it kept them):

=over

=item *

a control: 2xx. Otherwise: 4xx, or 503 with C<Retry-After>; a case with C<status>:
only those; a case with C<ok_2xx>: 2xx too. Never 500.

=item *

C<Content-Type: application/json> and a body that is JSON (a 204 has none); an error
(not 2xx) in its shape: C<{"error": {"type": text, "message": text, ...}}> under
/v1/ext and /v1/extensions (C<shape> "ext"), else C<{"error": text, "code": text}>;
at most 1024 bytes.

=item *

C<X-Request-Id>; C<Server>, when there, without a version (no digit, no "/").

=item *

and, for the test's own sake, a case sent with one valid credential is not answered 401
or 429 (it would not have reached the input checks).

=back

=cut

sub check_case {
    my ($c, $r) = @_;
    return ('no answer: ' . ($r->{error} // '?')) unless $r->{status};
    my @bad;
    my $st = $r->{status};
    my $ok2 = $st >= 200 && $st < 300;
    my $is_err = !$ok2;
    if ($c->{control}) {
        push @bad, "status $st, want 2xx (control)" unless $ok2;
    } elsif ($c->{status}) {
        push @bad, "status $st, want " . join('/', @{$c->{status}}) unless grep { $_ == $st } @{$c->{status}};
    } elsif ($ok2) {
        push @bad, "status $st, want 4xx" unless $c->{ok_2xx};
    } elsif ($st == 503) {
        push @bad, 'status 503 without Retry-After' unless defined $r->{headers}{'retry-after'};
    } elsif ($st < 400 || $st > 499) {
        push @bad, "status $st, want 4xx";
    }
    # Not the contract but the test's own validity: a case sent with one (valid) credential
    # that is refused as unauthenticated or rate limited never reached the input checks.
    my $auths = grep { lc $_->[0] eq 'authorization' } @{$c->{headers} // []};
    push @bad, "status $st with a valid credential: the case did not reach the input checks"
        if $auths == 1 && ($st == 401 || $st == 429);
    my $ct = $r->{headers}{'content-type'};
    my $body = $r->{body} // '';
    if ($ok2 && defined $c->{type}) {
        # a 2xx of a route that answers another type (a feed): that type, not JSON
        push @bad, 'Content-Type: ' . ($ct // '(none)') . ", want $c->{type}"
            unless defined $ct && $ct =~ m{^\Q$c->{type}\E\s*(?:;|$)}i;
    } elsif (!($st == 204 || $st == 304)) {
        push @bad, 'Content-Type: ' . ($ct // '(none)') . ', want application/json'
            unless defined $ct && $ct =~ m{^application/json\s*(?:;|$)}i;
        my $j = eval { JSON::PP->new->utf8->allow_nonref->decode($body) };
        # every answer is compact JSON: no whitespace between tokens (PostgreSQL's json
        # text has {"a" : 1}; the one JSON writer compacts it)
        (my $bare = $body) =~ s/"(?:[^"\\]|\\.)*"//g;
        push @bad, 'body is not compact JSON: ' . short($body) if $bare =~ /\s/;
        if (!defined $j && $body !~ /^\s*null\s*$/) {
            push @bad, 'body is not JSON: ' . short($body);
        } elsif ($is_err) {
            if ($c->{shape} eq 'ext') {
                my $e = ref $j eq 'HASH' ? $j->{error} : undef;
                push @bad, 'error shape: want {"error": {"type", "message"}}, got ' . short($body)
                    unless ref $e eq 'HASH' && _text($e->{type}) && _text($e->{message});
            } else {
                push @bad, 'error shape: want {"error": text, "code": text}, got ' . short($body)
                    unless ref $j eq 'HASH' && _text($j->{error}) && _text($j->{code});
            }
        }
        push @bad, 'error body of ' . length($body) . ' bytes (over 1024)' if $is_err && length $body > 1024;
    }
    push @bad, 'no X-Request-Id' unless length($r->{headers}{'x-request-id'} // '');
    my $server = $r->{headers}{server};
    push @bad, "Server: $server (a version)" if defined $server && $server =~ m{[0-9/]};
    return @bad;
}

sub _text { defined $_[0] && !ref $_[0] && length $_[0] }

=item problem_kind($problem)

A problem with its variable parts (an echoed body, a size) taken out, to count alike
problems together.

=cut

sub problem_kind {
    my $p = shift;
    $p =~ s/, got .*//s;
    $p =~ s/^body is not JSON: .*/body is not JSON/s;
    $p =~ s/^error body of \d+ bytes/error body/;
    $p =~ s/^no answer: .*/no answer/s;
    return $p;
}

=item short($text)

The text cut to 120 bytes, with non-printable bytes escaped, for a diagnostic.

=cut

sub short {
    my $s = shift // '';
    my $n = length $s;
    $s = substr($s, 0, 120) . "...($n bytes)" if $n > 120;
    $s =~ s/([^\x20-\x7e])/sprintf '\\x%02x', ord $1/ge;
    return $s;
}

=back

=cut

1;
