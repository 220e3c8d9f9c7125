# The publishable-key surface, /v1/public, in a real browser through CORS: headless
# Chromium loads t/browser/public-page.html from a second loopback origin (another
# server block of the same nginx, on another port of 127.0.0.1), whose script fetches
# /v1/public/sections?path=/about from the API's origin and renders what it reads.
# A site without an origin (CORS "*"): the published section is rendered, the later
# draft never, with the key as ?key= (a simple request: no preflight) and as Bearer
# (the browser's OPTIONS preflight, 204, then the GET).  A site whose origin is another
# (https://93.184.216.34, public: a loopback origin cannot be stored): the server
# answers the browser 200 naming that origin, and the browser refuses the answer (the
# page sees a failed fetch, never the body), both ways.  The API's own log of what the
# browser sent (method, status, Origin) shows which requests were made.
#
# Needs Debian's chromium (packages chromium, chromium-driver); without it the test
# skips, except under CI=true where it fails.  TEST_CMS_CHROMIUM names another binary.
# Everything stays on 127.0.0.1: the browser resolves no name.
use strict;
use warnings;
use Cms::Test;
use Cms::Browser qw(chromium_or_skip dump_dom slurp);
use Cms::Fixtures qw(req diag_resp signup signup_defaults workspace key);
use File::Temp qw(tempdir);
use Time::HiRes ();
use FindBin;

my $chromium = chromium_or_skip();

signup_defaults(email_prefix => 'pubbrowser');

# The page's origin: a static server block; the API's server logs what browsers send.
my $page_port = free_port();
my $html = prefix() . '/html';
mkdir $html or die "$html: $!\n";
{
    my $src = slurp("$FindBin::Bin/browser/public-page.html");
    open my $fh, '>:raw', "$html/page.html" or die "$html/page.html: $!\n";
    print $fh $src;
    close $fh or die "$html/page.html: $!\n";
}
start_nginx(
    http_config => <<"EOF",
    log_format cors '\$request_method \$uri \$status origin=\$http_origin'
                    ' ua=\$http_user_agent';
    server {
        listen 127.0.0.1:$page_port;
        root $html;
        location = /favicon.ico { access_log off; return 204; }
    }
EOF
    config => 'access_log logs/cors.log cors;');

my $api = 'http://127.0.0.1:' . port();
my $page_origin = "http://127.0.0.1:$page_port";
my $cors_log = prefix() . '/logs/cors.log';

sub must {
    my ($what, $status, $r) = @_;
    die "$what: " . diag_resp($r) . "\n" unless $r->{status} == $status;
    return $r->{json};
}

# A workspace and its site (%{$o{site}}: more fields) with a page /about whose section
# "hero" is published with the title $o{published}, then saved again as $o{draft}.
sub site_with_about {
    my (%o) = @_;
    my $t = signup()->{token};
    my $wid = workspace($t, $o{name});
    my $site = must(site => 201, req(POST => "/v1/workspaces/$wid/sites", $t,
                                     { name => $o{name}, %{ $o{site} // {} } }))->{site};
    my $page = must(page => 201, req(POST => "/v1/workspaces/$wid/sites/$site->{id}/pages", $t,
                                     { slug => '/about', title => 'About' }))->{page}{id};
    my $k = key($t, $wid, 'pages', qw(pages:read pages:write));
    my $save = sub {
        must(save => 200, req(PUT => "/v1/api/pages/$page/sections", $k,
                              { section_key => 'hero', data => { title => $_[0] } }));
    };
    $save->($o{published});
    must(publish => 200, req(POST => "/v1/api/pages/$page/sections/publish", $k, {}));
    $save->($o{draft});
    return $site->{publishable_key};
}

my $open_pk = site_with_about(name => 'Open', published => 'Welcome from the published hero',
                              draft => 'Unpublished draft of the hero');
my $closed_pk = site_with_about(name => 'Closed', site => { origin => 'https://93.184.216.34' },
                                published => 'Published for the other origin only',
                                draft => 'Draft for the other origin');

# The server's side of the refusal: a 200 that names the site's origin, with the body.
my $plain = req(GET => "/v1/public/sections?path=/about&key=$closed_pk", undef, undef,
                Origin => $page_origin);
is $plain->{status}, 200, 'plain HTTP, the closed site: 200' or diag diag_resp($plain);
is $plain->{headers}{'access-control-allow-origin'}, 'https://93.184.216.34',
    'plain HTTP: Access-Control-Allow-Origin names the site\'s origin, not the page\'s';
is $plain->{json}{sections}[0]{data}{title}, 'Published for the other origin only',
    'plain HTTP: the body is there (what the browser must not hand the page)';

my $tmp = tempdir('cms-public-browser-XXXXXX', TMPDIR => 1, CLEANUP => 1);

# Loads the page with a key and a mode; returns (the lines #out shows, the API's log
# lines for this load, the browser's CORS refusals from its console).
sub browse {
    my ($name, $pk, $mode, $want) = @_;
    my $offset = -s $cors_log || 0;
    my $run = dump_dom($chromium,
                       "$page_origin/page.html?api=" . uri($api) . "&key=$pk&mode=$mode",
                       dir => $tmp, name => $name,
                       # loopback only: no name resolves, the IP literals are ours
                       resolver_rules => 'MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
                       # the page's console on stderr: the browser says why it refused
                       flags => ['--enable-logging=stderr', '--v=0']);
    is $run->{rc}, 0, "$name: chromium ran ($run->{secs} s)"
        or diag "exit $run->{rc}\n" . substr($run->{err}, -3000);
    my ($state, $out) = $run->{dom} =~ m{<div id="out" data-state="(\w+)">(.*?)</div>}s;
    is $state, 'done', "$name: the page's fetch settled within the budget"
        or diag substr($run->{dom}, -2000) . "\n" . substr($run->{err}, -2000);
    my @lines = map { s/&amp;/&/gr } ($out // '') =~ m{<p>(.*?)</p>}g;
    # The browser's own requests (its user agent names Chrome; the harness's client
    # never does), read once the log holds as many as the mode sends: a worker writes
    # its log line just after the answer's last byte, so it may follow the page by a
    # little on a busy machine.  Waited for with a bound, then compared whole.
    my @log;
    my $until = Time::HiRes::time() + 10;
    while (1) {
        @log = map { s/ ua=.*//r }
            grep { m{^\S+ /v1/public/} && m{ ua=.*Chrome/} }
            split /\n/, substr(slurp($cors_log), $offset);
        last if @log >= $want || Time::HiRes::time() > $until;
        Time::HiRes::sleep(0.05);
    }
    my @refused = $run->{err} =~ /blocked by CORS policy: ([^"]*)/g;
    return (\@lines, \@log, \@refused);
}

sub uri { my $s = shift; $s =~ s/([^A-Za-z0-9._~-])/sprintf '%%%02X', ord $1/ge; $s }

my $from_page = "origin=$page_origin";
my %sent = (                     # what the API gets from the browser, per mode
    query => ["GET /v1/public/sections 200 $from_page"],
    bearer => ["OPTIONS /v1/public/sections 204 $from_page",
               "GET /v1/public/sections 200 $from_page"],
);
my %want = map { $_ => scalar @{ $sent{$_} } } keys %sent;
my %how = (query => '?key= (a simple request, no preflight)',
           bearer => 'Bearer (the preflight, 204, then the GET)');

# --- a site without an origin: readable from any page ---------------------------------

for my $mode (qw(query bearer)) {
    my ($dom, $log, $refused) = browse("open-$mode", $open_pk, $mode, $want{$mode});
    is_deeply $dom, ['SECTION hero: Welcome from the published hero'],
        "$mode: the page renders the published section";
    ok !grep(/Unpublished draft/, @$dom), "$mode: the draft never appears";
    is_deeply $log, $sent{$mode}, "$mode: the browser sent $how{$mode} from the page's origin"
        or diag join "\n", 'the log since the load:', @$log;
    is_deeply $refused, [], "$mode: no CORS refusal in the console";
}

# --- a site with another origin: the browser refuses the answer ------------------------

for my $mode (qw(query bearer)) {
    my ($dom, $log, $refused) = browse("closed-$mode", $closed_pk, $mode, $want{$mode});
    is_deeply $dom, ['BLOCKED TypeError'],
        "$mode, another origin's site: the fetch fails in the page";
    ok !grep(/other origin/, @$dom), "$mode: the body never reaches the page";
    is_deeply $log, $sent{$mode},
        "$mode: $how{$mode} answered 200: the refusal is the browser's CORS check"
        or diag join "\n", 'the log since the load:', @$log;
    is scalar(@$refused), 1, "$mode: the browser refused once";
    like $refused->[0] // '',
        qr{'Access-Control-Allow-Origin' header has a value 'https://93\.184\.216\.34' that is not equal},
        "$mode: the console says why: the answer names another origin";
}

done_testing();
