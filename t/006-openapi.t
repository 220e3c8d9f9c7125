# The OpenAPI description (openapi/openapi.yaml) against the module: it is what
# openapi/build writes; scripts/openapi-check finds every route of the route tables in
# it and nothing else, and only error codes the catalogue gives (and does notice a route
# missing, one too many, a parameter misnamed, a credential or permission changed, a
# code under the wrong status); @redocly/cli's lint (tools/node, installed by
# scripts/deps.sh test) passes without an error or an unexplained warning.
# Cms::OpenApi, which checks every answer of the suite against the document, fails a test
# for each made-up answer that drifts and for no other.
# Needs no services: it reads the sources and the document.
use strict;
use warnings;
use Test::More;
use File::Basename qw(dirname);
use File::Temp qw(tempdir);
use Test2::API qw(intercept);
use lib dirname(__FILE__) . '/lib';
use Cms::OpenApi ();

my $root = $ENV{TEST_CMS_ROOT} // dirname(__FILE__) . '/..';

my $out = `perl $root/openapi/build --check 2>&1`;
is $?, 0, 'openapi/openapi.yaml is what openapi/build writes' or diag $out;

$out = `perl $root/scripts/openapi-check 2>&1`;
is $?, 0, 'scripts/openapi-check: every route described, every operation a route' or diag $out;
like $out, qr/^openapi-check: \d+ operations/m, 'it counted the operations';

# the check notices what it is there to notice
SKIP: {
    skip 'YAML::XS missing (scripts/deps.sh test installs libyaml-libyaml-perl)', 7
        unless eval { require YAML::XS; 1 };
    my $doc = YAML::XS::LoadFile("$root/openapi/openapi.yaml");
    delete $doc->{paths}{'/v1/api/videos/{id}'}{delete};
    $doc->{paths}{'/v1/api/nowhere'} = { get => { security => [], 'x-permission' => '-' } };
    $doc->{paths}{'/v1/api/categories/{termId}'} = delete $doc->{paths}{'/v1/api/categories/{id}'};
    $doc->{paths}{'/v1/api/articles'}{get}{'x-permission'} = 'articles:write, creator viewer or up';
    $doc->{paths}{'/v1/workspaces/{id}/api-keys'}{get}{security} = [{ secretKey => [] }];
    push @{ $doc->{paths}{'/v1/api/articles'}{post}{responses}{409}{content}{'application/json'}{schema}
                {allOf}[1]{properties}{code}{enum} }, 'title_required';
    my $dir = tempdir(CLEANUP => 1);
    YAML::XS::DumpFile("$dir/bad.yaml", $doc);
    $out = `perl $root/scripts/openapi-check --doc $dir/bad.yaml 2>&1`;
    isnt $?, 0, 'a doctored document fails the check';
    like $out, qr{missing from the document: DELETE /v1/api/videos/:id}, '... naming the missing route';
    like $out, qr{not a route of the module: GET /v1/api/nowhere}, '... the operation that is no route';
    like $out, qr{GET /v1/api/categories/:id: the document spells it /v1/api/categories/\{termId\}},
        '... a path parameter named otherwise than the table';
    like $out, qr{GET /v1/api/articles: x-permission}, '... a permission changed';
    like $out, qr{GET /v1/workspaces/:id/api-keys: security}, '... a credential changed';
    like $out, qr{POST /v1/api/articles 409: code title_required is not a 409 of the error catalogue},
        '... an error code the catalogue gives another status';
}

my $redocly = "$root/tools/node/node_modules/.bin/redocly";
ok -x $redocly, 'redocly is installed in tools/node (scripts/deps.sh test)'
    or BAIL_OUT('no tools/node/node_modules/.bin/redocly: run scripts/deps.sh test');
{
    local $ENV{REDOCLY_TELEMETRY} = 'off';
    local $ENV{REDOCLY_SUPPRESS_UPDATE_NOTICE} = 'true';
    local $ENV{NO_COLOR} = '1';
    $out = `$redocly lint --format=stylish --config $root/openapi/redocly.yaml $root/openapi/openapi.yaml 2>&1`;
}
is $?, 0, 'redocly lint: no error' or diag $out;
like $out, qr/Your API description is valid/, 'redocly lint: the description is valid' or diag $out;
unlike $out, qr/^\s*\d+:\d+\s+(warning|error)\s|You have \d+ warning/m,
    'redocly lint: no warning (the two it cannot avoid are ignored in openapi/.redocly.lint-ignore.yaml, each with its reason)'
    or diag $out;

# Cms::OpenApi (every answer of the suite is checked against the document): answers made
# up here, through the same hook Cms::Test calls, each drift a failing test of its own
SKIP: {
    skip 'TEST_CMS_OPENAPI=0', 9 unless Cms::OpenApi::enabled();
    my $U = '0b6f4a52-2a8e-4c43-9d0e-8f1f2b7c9a11';
    my $json = [['Content-Type', 'application/json'], ['X-Request-Id', 'r1']];
    my @answers = (
        # [method, path, status, headers, body, drifts (a part of the message) or undef]
        [GET => '/v1/health', 200, $json, '{"postgres":"ok","redis":"ok"}', undef],
        [HEAD => '/v1/health', 200, $json, '', undef],
        [GET => '/v1/health', 200, $json, '{"postgres":"ok"}', qr/must have required property 'redis'/],
        [GET => '/v1/health', 418, $json, '{}', qr/status 418 is not a response/],
        [GET => '/v1/health', 200, [['Content-Type', 'text/plain']], 'ok', qr{Content-Type text/plain}],
        [GET => "/v1/api/articles/$U", 404, $json, '{"error":"x","code":"slug_taken"}', qr/allowed values/],
        [GET => "/v1/api/articles/$U", 404, $json, '{"error":"Not found","code":"not_found"}', undef],
        # a header the document requires: WWW-Authenticate on every 401
        [GET => "/v1/api/articles/$U", 401, $json, '{"error":"x","code":"missing_token"}',
         qr/no WWW-Authenticate header/],
        [GET => "/v1/api/articles/$U", 401, [@$json, ['WWW-Authenticate', 'Bearer']],
         '{"error":"x","code":"missing_token"}', undef],
        [POST => '/v1/api/articles', 201, $json, '{"article":{"id":"' . $U . '"}}', qr/required property/],
        [GET => '/v1/nowhere', 200, $json, '{}', qr/no path of the document/],
        [GET => '/v1/nowhere', 404, $json, '{"error":"Not found","code":"not_found"}', undef],
        [PUT => '/v1/health', 405, [@$json, ['Allow', 'GET, HEAD']],
         '{"error":"Method not allowed","code":"method_not_allowed"}', undef],
        [PUT => '/v1/health', 200, $json, '{}', qr/no such operation/],
        [GET => "/v1/feeds/podcasts/$U.xml", 200, [['Content-Type', 'application/rss+xml']], '<rss/>', undef],
        [GET => '/v1/workspaces/' . $U . '/api-keys', 200, $json, '{"api_keys":[],"pagination":{"total":0,'
         . '"limit":50,"offset":0}}', undef],
        [GET => '/v1/_test/sleep', 200, $json, 'not JSON', undef],     # a test-only route: not checked
        [GET => '/plain/x', 200, [['Content-Type', 'text/plain']], 'x', undef],    # not the module's
    );
    my $events = intercept {
        for my $a (@answers) {
            my ($m, $path, $st, $h, $body) = @$a;
            Cms::OpenApi::observe({ method => $m, path => $path }, { status => $st, header_list => $h, body => $body });
        }
        # sent as raw bytes: never checked (hostile on purpose)
        Cms::OpenApi::observe({ raw => "GET / HTTP/1.1\r\n\r\n" }, { status => 200, header_list => [], body => '' });
        Cms::OpenApi::finish();
    };
    my @fails = grep { $_->isa('Test2::Event::Fail') || ($_->can('causes_fail') && $_->causes_fail) } @$events;
    my @diag = map { $_->message } grep { $_->isa('Test2::Event::Diag') } @$events;
    my @drift = grep { $_->[5] } @answers;
    is scalar(@fails), scalar(@drift), 'each drifting answer fails a test, and only those'
        or diag explain [map { $_->summary } @$events];
    for my $a (@drift) {
        my $what = "$a->[0] $a->[1] -> $a->[2]";
        ok((grep { $_->summary =~ /\Q$what\E/ } @fails) && (grep { $_ =~ $a->[5] } @diag),
           "a failure names $what and says what drifts ($a->[5])");
    }
}

done_testing;
