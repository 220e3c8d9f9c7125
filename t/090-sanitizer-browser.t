# The HTML sanitizer in a real browser: headless Chromium renders every vector of
# t/data/xss-vectors.txt after cms_sanitize() on one page whose first script hooks
# alert, confirm, prompt, print, fetch (and open, XMLHttpRequest, sendBeacon); the
# page then audits its own DOM as Chromium parsed it: only allow-listed HTML elements,
# no event-handler attribute, no URL attribute resolving to javascript:, vbscript: or
# data:.  A control run adds one unsanitized vector that must be seen calling alert
# exactly once, so a broken hook cannot pass for a clean corpus.
#
# Needs cc, libgumbo and Debian's chromium (packages chromium, chromium-driver);
# without chromium the test skips, except under CI=true where it fails.
# TEST_CMS_CHROMIUM names another browser binary.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use File::Spec;
use FindBin;
use JSON::PP;
use Cms::Browser qw(chromium_or_skip dump_dom run_limited slurp);

my $root = File::Spec->rel2abs("$FindBin::Bin/..");
my $vectors = "$root/t/data/xss-vectors.txt";

my $chromium = chromium_or_skip();

# Records: "=== <id> <source> <category> <length>\n" + payload + "\n".
sub count_vectors {
    open my $fh, '<:raw', $vectors or die "$vectors: $!\n";
    my $data = do { local $/; <$fh> };
    my $n = 0;
    while ($data =~ /\G(?:#[^\n]*\n)*=== \S+ \S+ \S+ (\d+)\n/gc) {
        pos($data) += $1 + 1;
        $n++;
    }
    return $n;
}

my $tmp = tempdir('cms-sanitizer-browser-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $count = count_vectors();
cmp_ok $count, '>=', 150, "corpus has $count vectors (150 or more)";

# The page writer: C, on the sanitizer under test.
my $render = "$tmp/render_corpus";
my $cc = $ENV{CC} || 'cc';
my @sources = glob "$root/src/lib/cms_sanitize*.c";
is run_limited(120, "$tmp/cc.out", "$tmp/cc.err", $cc, qw(-std=c99 -O1 -Wall),
               "-I$root/src/lib", '-o', $render, "$root/t/browser/render_corpus.c",
               @sources, '-lgumbo'), 0, 'page writer builds'
    or diag slurp("$tmp/cc.err");

# Renders one page; returns the audit the page wrote into its DOM.
sub render {
    my ($name, @args) = @_;
    my $page = "$tmp/$name.html";
    is run_limited(60, $page, "$tmp/$name.render.err", $render, @args, $vectors), 0,
        "$name: page written"
        or diag slurp("$tmp/$name.render.err");

    my $run = dump_dom($chromium, "file://$page", dir => $tmp, name => $name,
                     # vectors point at outside hosts: resolve none, stay offline
                     resolver_rules => 'MAP * ~NOTFOUND');
    is $run->{rc}, 0, "$name: chromium ran ($run->{secs} s)"
        or diag "exit $run->{rc}\n" . substr($run->{err}, -3000);

    my ($json) = $run->{dom} =~ /CMS-RESULT (\{.*?\}) CMS-END/s;
    ok defined $json, "$name: the page reported its audit"
        or diag substr($run->{dom}, -2000) . "\n" . substr($run->{err}, -2000);
    return $json ? decode_json($json) : {};
}

my $r = render('sanitized');
is $r->{vectors}, $count, "sanitized: all $count vectors rendered";
is $r->{calls}, 0, 'sanitized: no hooked function called'
    or diag explain $r->{names};
is_deeply $r->{handlers}, [], 'sanitized: no event-handler attribute in the DOM';
is_deeply $r->{script_urls}, [], 'sanitized: no javascript:, vbscript: or data: URL';
is_deeply $r->{bad_elements}, [], 'sanitized: only allow-listed HTML elements';
note "sanitized: $r->{elements} elements audited" if defined $r->{elements};

# Control: the same page plus one raw <img onerror=alert(1)>: the hooks must see it.
my $c = render('control', '--control');
is $c->{vectors}, $count + 1, 'control: corpus plus the control vector rendered';
is $c->{calls}, 1, 'control: the unsanitized vector called a hook once';
is_deeply $c->{names}, ['alert'], 'control: and the hook was alert';

done_testing();
