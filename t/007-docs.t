# The served API description (src/ngx_http_cms_docs.c), with no credential:
# GET /v1/openapi.json is openapi/openapi.yaml as JSON (the same document once both are
# loaded), GET /v1/docs the reference page rendered at build time, whose scripts are all
# inline (none from another host) and allowed by its Content-Security-Policy by their
# hashes. Both carry a strong ETag that is the body's (computed at build time), answer a
# matching If-None-Match with 304 and are cacheable five minutes; HEAD has no body. Headless
# Chromium (when installed; CI requires it) runs the page under its policy.
use strict;
use Compress::Zlib ();
use warnings;
use Cms::Test;
use Digest::SHA qw(sha256 sha256_hex);
use MIME::Base64 qw(encode_base64);
use JSON::PP ();
use YAML::XS ();
use File::Temp ();

my $root = $ENV{TEST_CMS_ROOT} // do { (my $d = __FILE__) =~ s{/t/[^/]+$}{}; $d eq __FILE__ ? '.' : $d };

start_nginx();

# the checks both routes share; returns the GET answer
sub cached {
    my ($path, $type) = @_;
    my $r = http(GET => $path);
    is $r->{status}, 200, "$path: 200 without a credential" or diag $r->{error} // explain $r->{headers};
    like $r->{headers}{'content-type'} // '', $type, "$path: content type";
    is $r->{headers}{'cache-control'}, 'public, max-age=300', "$path: Cache-Control";
    like $r->{headers}{'x-request-id'} // '', qr/^[0-9a-f]{32}$/, "$path: a request id";
    is $r->{headers}{'content-length'}, length $r->{body}, "$path: Content-Length";
    my $etag = $r->{headers}{etag} // '';
    is $etag, '"' . substr(sha256_hex($r->{body}), 0, 32) . '"',
        "$path: a strong ETag, the body's (128 bits of its SHA-256)";

    my $nm = http(GET => $path, { 'If-None-Match' => $etag });
    is $nm->{status}, 304, "$path: If-None-Match with the ETag is 304";
    is $nm->{body}, '', "$path: ... without a body";
    is $nm->{headers}{etag}, $etag, "$path: ... with the ETag";

    is http(GET => $path, { 'If-None-Match' => '"0123456789abcdef0123456789abcdef"' })->{status},
        200, "$path: another ETag is 200";
    is http(GET => $path, { 'If-None-Match' => "W/$etag" })->{status}, 304,
        "$path: its weak form is 304 too (If-None-Match compares weakly)";

    my $h = http(HEAD => $path);
    is $h->{status}, 200, "$path: HEAD 200";
    is $h->{body}, '', "$path: HEAD has no body";
    is $h->{headers}{etag}, $etag, "$path: HEAD has the ETag";
    is $h->{headers}{'content-length'}, length $r->{body}, "$path: HEAD has the GET's length";

    my $post = http(POST => $path, { 'Content-Type' => 'application/json' }, '{}');
    is $post->{status}, 405, "$path: POST is 405";
    like $post->{headers}{allow} // '', qr/\bGET\b/, "$path: ... Allow: GET";
    return $r;
}

# --- /v1/openapi.json ---------------------------------------------------------------------

my $r = cached('/v1/openapi.json', qr{^application/json$});
my $json = eval { JSON::PP->new->utf8->decode($r->{body}) };
ok ref $json eq 'HASH', '/v1/openapi.json parses as JSON' or diag $@;
my $yaml = do {
    local $YAML::XS::Boolean = 'JSON::PP';
    YAML::XS::LoadFile("$root/openapi/openapi.yaml");
};
is_deeply $json, $yaml, '... and is openapi/openapi.yaml, the same document';
is $json->{openapi}, '3.0.3', '... OpenAPI 3.0.3';
ok $json->{paths}{'/v1/openapi.json'}{get} && $json->{paths}{'/v1/docs'}{get},
    '... which describes both routes';
like $r->{body}, qr/^\{"openapi":"3\.0\.3","info":/, '... written compact, openapi and info first';

# --- /v1/docs -----------------------------------------------------------------------------

$r = cached('/v1/docs', qr{^text/html; charset=utf-8$});
my $html = $r->{body};
like $html, qr/^<!DOCTYPE html>/i, '/v1/docs is an HTML page';
like $html, qr/ngx_http_cms_module API/, '... titled with the document\'s title';
like $html, qr/getPodcastFeed|A show's RSS 2\.0 feed/, '... holding the operations';

(my $markup = $html) =~ s{(<script\b[^>]*>).*?</script>}{$1</script>}gsi;
my @scripts = $html =~ m{<script\b[^>]*>(.*?)</script>}gsi;
ok @scripts >= 1, 'the page has its scripts inline';
is_deeply [ $markup =~ m{(<script\b[^>]*\bsrc\s*=[^>]*>)}gi ], [], 'no <script src=...>';
is_deeply [ $markup =~ m{(<link\b[^>]*\bhref\s*=\s*["']?(?:https?:)?//[^>]*>)}gi ], [],
    'no style sheet, font or preload from another host';
unlike $markup, qr/\bcdn\.redoc/i, 'Redocly\'s CDN is not named outside the scripts';

my $csp = $r->{headers}{'content-security-policy'} // '';
my %dir = map { my ($k, @v) = split ' '; ($k => join ' ', @v) } split /\s*;\s*/, $csp;
is $dir{'default-src'}, "'none'", 'CSP: default-src \'none\'';
my %allowed = map { $_ => 1 } split ' ', $dir{'script-src'} // '';
my @missing = grep { !$allowed{$_} }
    map { "'sha256-" . encode_base64(sha256($_), '') . "'" } @scripts;
is_deeply \@missing, [], 'CSP: every inline script of the page is allowed by its hash';
is scalar(keys %allowed), scalar(@scripts), 'CSP: and nothing else runs';
is $dir{'frame-ancestors'}, "'none'", 'CSP: the page is not framed';
is $dir{'base-uri'}, "'none'", 'CSP: no <base>';
unlike $csp, qr/unsafe-eval|https?:/, 'CSP: no eval, no other host';

my $h = http(HEAD => '/v1/docs');
is $h->{headers}{'content-security-policy'}, $csp, 'HEAD: the same CSP';

# the page gzipped at build time, for a client that takes it
{
    like $r->{headers}{vary} // '', qr/Accept-Encoding/, '/v1/docs varies by Accept-Encoding';
    my $gz = http(GET => '/v1/docs', { 'Accept-Encoding' => 'gzip, deflate, br' }, undef, openapi => 0);
    is $gz->{status}, 200, 'gzip: 200';
    is $gz->{headers}{'content-encoding'}, 'gzip', 'gzip: Content-Encoding: gzip';
    like $gz->{headers}{vary} // '', qr/Accept-Encoding/, 'gzip: Vary: Accept-Encoding';
    my $copy = $gz->{body};    # memGunzip() eats its argument
    is Compress::Zlib::memGunzip($copy), $r->{body}, 'gzip: the same page once inflated';
    cmp_ok length $gz->{body}, '<', length($r->{body}) / 3,
        'gzip: under a third of the bytes (' . length($gz->{body}) . ' of ' . length($r->{body}) . ')';
    my $gtag = $gz->{headers}{etag} // '';
    is $gtag, '"' . substr(sha256_hex($gz->{body}), 0, 32) . '"', 'gzip: a strong ETag of its own bytes';
    is http(GET => '/v1/docs', { 'Accept-Encoding' => 'gzip', 'If-None-Match' => $gtag }, undef,
            openapi => 0)->{status}, 304, 'gzip: If-None-Match with its ETag is 304';
    is http(GET => '/v1/docs', { 'Accept-Encoding' => 'gzip', 'If-None-Match' => $r->{headers}{etag} },
            undef, openapi => 0)->{status}, 200, 'gzip: the plain page\'s ETag is another representation: 200';
    is $gz->{headers}{'content-security-policy'}, $csp, 'gzip: the same CSP';
    is http(GET => '/v1/docs', { 'Accept-Encoding' => 'identity' }, undef, openapi => 0)->{headers}
        {'content-encoding'}, undef, 'Accept-Encoding: identity: the plain page';
}

# --- the page in a browser, under its CSP -------------------------------------------------
# Headless Chromium (Debian's chromium, scripts/deps.sh test) loads /v1/docs from nginx,
# offline: the first inline script marks <html> with the colour mode, Redoc's bundle greets
# the console, and the only refusal the policy gives is the Redocly logo on their CDN.

SKIP: {
    my ($chromium) = grep { -x } map { my $d = $_; map { "$d/$_" } qw(chromium chromium-browser) }
        split /:/, $ENV{PATH} // '';
    $chromium = $ENV{TEST_CMS_CHROMIUM} if $ENV{TEST_CMS_CHROMIUM};
    unless ($chromium && -x $chromium) {
        fail('chromium not found (scripts/deps.sh test)') if $ENV{CI};
        skip 'chromium not found (scripts/deps.sh test installs it)', 4;
    }
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    my @flags = ('--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
                 '--disable-background-networking', '--disable-component-update',
                 '--disable-sync', "--user-data-dir=$dir/profile", '--disable-dev-shm-usage',
                 '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
                 '--enable-logging=stderr', '--v=0', '--virtual-time-budget=8000',
                 '--dump-dom', 'http://127.0.0.1:' . port() . '/v1/docs');
    my $pid = fork // die "fork: $!\n";
    if ($pid == 0) {
        open STDOUT, '>', "$dir/dom" or die;
        open STDERR, '>', "$dir/err" or die;
        local $ENV{HOME} = $dir;
        exec 'timeout', '90', $chromium, @flags or exit 127;
    }
    waitpid $pid, 0;
    is $?, 0, 'chromium loaded /v1/docs';
    my ($dom, $err) = map { open my $fh, '<', "$dir/$_" or die; local $/; <$fh> } qw(dom err);
    like $dom, qr/<html[^>]*\bclass="[^"]*\b(light|dark)\b/, 'the first inline script ran'
        or diag substr($dom, 0, 500);
    like $err, qr/%c Redoc %c/, 'Redoc\'s bundle ran' or diag substr($err, -3000);
    my @refused = grep { !/'https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini[\w-]*\.svg' violates .*"img-src/ }
        $err =~ /^.*(?:violates the following Content Security Policy|Refused to).*$/mg;
    is_deeply \@refused, [], 'the policy refuses nothing but the CDN logo';
}

done_testing();
