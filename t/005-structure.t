# The shape of src/ that the next route families are written on (src/README.md): no include
# or call circle and every arrow pointing down the floors (scripts/deps-check); no file in
# src/ over 1,000 lines; no function over 80 lines, and those over 50 with a reason
# (scripts/func-lengths); the route table of docs/routes.md is the one the route tables give.
# Needs no services: it reads the sources.
use strict;
use warnings;
use Test::More;
use File::Basename qw(dirname);

my $root = $ENV{TEST_CMS_ROOT} // dirname(__FILE__) . '/..';

my $deps = `perl $root/scripts/deps-check 2>&1`;
is $?, 0, 'scripts/deps-check: no circle, every arrow points down' or diag $deps;

my $funcs = `cd $root && perl scripts/func-lengths 2>&1`;
is $?, 0, 'scripts/func-lengths: no function over 80 lines, a reason for each over 50'
    or diag join "\n", grep { !/^ok / } split /\n/, $funcs;

my @big;
for my $f (glob("$root/src/*.[ch]"), glob("$root/src/lib/*.[ch]"), glob("$root/src/tools/*.[ch]")) {
    open my $fh, '<', $f or die "$f: $!";
    my $n = () = <$fh>;
    push @big, "$f: $n lines" if $n > 1000;
}
is_deeply \@big, [], 'no source file over 1,000 lines';

my @wide;
for my $f (glob("$root/src/*.[ch]"), glob("$root/src/lib/*.[ch]")) {
    open my $fh, '<', $f or die "$f: $!";
    while (<$fh>) {
        chomp;
        push @wide, "$f:$.: " . length($_) if length($_) > 80;
    }
}
is_deeply \@wide, [], 'no line of src/ over 80 columns';

# the schema the module needs is the newest migration (src/ngx_http_cms_schema.h)
my ($newest) = map { m{([^/]+)\.sql$} } (sort glob("$root/sql/[0-9][0-9][0-9][0-9]_*.sql"))[-1];
my ($needed) = `grep -h 'define NGX_HTTP_CMS_SCHEMA ' $root/src/ngx_http_cms_schema.h` =~ /"([^"]+)"/;
is $needed, $newest, 'NGX_HTTP_CMS_SCHEMA names the newest migration of sql/';

my $table = `perl $root/scripts/routes --markdown`;
open my $fh, '<', "$root/docs/routes.md" or die "docs/routes.md: $!";
my $doc = do { local $/; <$fh> };
my ($have) = $doc =~ /<!-- routes: begin[^>]*-->\n(.*?)<!-- routes: end -->/s;
is $have, $table, 'docs/routes.md route table is current (scripts/routes --readme rewrites it)';

done_testing();
