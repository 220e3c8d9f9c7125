# The OpenAPI description (openapi/openapi.yaml) against the module: it is what
# openapi/build writes; scripts/openapi-check finds every route of the route tables in
# it and nothing else, and only error codes the catalogue gives (and does notice a route
# missing, one too many, a parameter misnamed, a credential or permission changed, a
# code under the wrong status); @redocly/cli's lint (tools/node, installed by
# scripts/deps.sh test) passes without an error or an unexplained warning.
# Needs no services: it reads the sources and the document.
use strict;
use warnings;
use Test::More;
use File::Basename qw(dirname);
use File::Temp qw(tempdir);

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

done_testing;
