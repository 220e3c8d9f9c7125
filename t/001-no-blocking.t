# No blocking libpq, hiredis or resolver call anywhere in the worker's code.
# src/tools/ (cms-admin, a command-line tool, not in a worker) may block.
use strict;
use warnings;
use Test::More;
use File::Find;

my $root = $ENV{TEST_CMS_ROOT} // '.';
my @files;
find(sub { push @files, $File::Find::name if /\.[ch]$/ }, "$root/src");
@files = grep { !m{/src/tools/} } @files;

ok scalar(@files) > 10, 'found the module sources';

my $banned = qr/\b(PQexec|PQexecParams|PQexecPrepared|PQprepare|PQconnectdb
                  |PQconnectdbParams|PQsetdbLogin|PQcancel|PQgetCancel|PQping
                  |PQpingParams|PQreset|redisCommand|redisCommandArgv
                  |redisAppendCommand|redisGetReply|redisConnect\w*
                  |getaddrinfo|gethostbyname\w*|sleep|usleep|nanosleep
                  |system|popen)\s*\(/x;

for my $f (sort @files) {
    open my $fh, '<', $f or die "$f: $!";
    my $n = 0;
    my @hits;
    while (my $line = <$fh>) {
        $n++;
        next if $line =~ m{^\s*(/?\*|//)};     # comments
        (my $code = $line) =~ s/"(?:[^"\\]|\\.)*"//g;   # string literals
        push @hits, "$n: $line" if $code =~ $banned;
    }
    (my $rel = $f) =~ s{^\Q$root\E/}{};
    is join('', @hits), '', "$rel has no blocking call";
}

done_testing();
