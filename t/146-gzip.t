# JSON answers through nginx's gzip filter (issue 35; docs/operations.md, "Compression"): with the
# documented configuration a list answers gzip to a client that asks for it (Vary:
# Accept-Encoding), the same JSON once inflated, and plain to one that does not; a public
# section read keeps revalidating: gzip weakens its ETag (W/"..."), and the weak ETag, the
# strong one, with or without gzip, are each answered 304 while the content is the same, and
# 200 with a new ETag once it changed. Stored files (images) are not compressed.
use strict;
use warnings;
use Cms::Test;
use Cms::Fixtures qw(req diag_resp signup workspace key);
use Compress::Zlib ();
use JSON::PP ();

start_nginx(http_config => join "\n", 'gzip on;', 'gzip_types application/json;', 'gzip_min_length 256;',
                                      'gzip_vary on;', 'gzip_proxied any;');

my $owner = signup();
my $ot = $owner->{token};
my $wid = workspace($ot, 'Gzip');
my $K = key($ot, $wid, 'gz', qw(articles:read articles:write pages:read pages:write));

for my $i (1 .. 5) {
    my $r = req(POST => '/v1/api/articles', $K, { title => "Compressed $i", status => 'published',
                                                   body => '<p>' . ('words and more words ' x 40) . '</p>' });
    die 'article: ' . diag_resp($r) unless $r->{status} == 201;
}

my @GZ = ('Accept-Encoding' => 'gzip');
sub get { my ($path, @h) = @_; http(GET => $path, [@h], undef, openapi => 0) }
sub inflate { my $copy = $_[0] // ''; Compress::Zlib::memGunzip($copy) }    # it eats its argument

# --- a list ---------------------------------------------------------------------------------------

my $plain = get('/v1/api/articles?limit=20', Authorization => "Bearer $K");
is $plain->{status}, 200, 'the list, plain: 200' or diag diag_resp($plain);
is $plain->{headers}{'content-encoding'}, undef, '... not compressed for a client that did not ask';
my $gz = get('/v1/api/articles?limit=20', Authorization => "Bearer $K", @GZ);
is $gz->{status}, 200, 'the list, gzip: 200';
is $gz->{headers}{'content-encoding'}, 'gzip', '... Content-Encoding: gzip';
like $gz->{headers}{vary} // '', qr/Accept-Encoding/, '... Vary: Accept-Encoding';
my $json = inflate($gz->{body});
ok defined $json, '... a gzip stream';
is_deeply JSON::PP::decode_json($json // '{}'), $plain->{json}, '... the same JSON once inflated';
cmp_ok length $gz->{body}, '<', length($plain->{body}) / 3, '... under a third of the bytes ('
    . length($gz->{body}) . ' of ' . length($plain->{body}) . ')';

# --- a public section read: ETags and 304 ---------------------------------------------------------

my $r = req(POST => "/v1/workspaces/$wid/sites", $ot, { name => 'Site' });
die 'site: ' . diag_resp($r) unless $r->{status} == 201;
my $site = $r->{json}{site};
$r = req(POST => "/v1/workspaces/$wid/sites/$site->{id}/pages", $ot, { slug => '/about', title => 'About' });
die 'page: ' . diag_resp($r) unless $r->{status} == 201;
my $page = $r->{json}{page}{id};
sub publish {
    my $text = shift;
    my $x = req(PUT => "/v1/api/pages/$page/sections", $K,
                { section_key => 'hero', data => { title => $text, text => ($text x 100) } });
    die 'save: ' . diag_resp($x) unless $x->{status} == 200;
    $x = req(POST => "/v1/api/pages/$page/sections/publish", $K, {});
    die 'publish: ' . diag_resp($x) unless $x->{status} == 200;
}
publish('One ');
my $sec = "/v1/public/pages/$page/sections?key=$site->{publishable_key}";

my $s = get($sec);
is $s->{status}, 200, 'a section read, plain: 200' or diag diag_resp($s);
my $strong = $s->{headers}{etag} // '';
like $strong, qr/^"[^"]+"$/, '... a strong ETag';
my $w = get($sec, @GZ);
is $w->{headers}{'content-encoding'}, 'gzip', 'the same read, gzip: compressed';
is $w->{headers}{etag}, "W/$strong", '... its ETag weakened by the gzip filter';
is inflate($w->{body}), $s->{body}, '... the same bytes once inflated';

for my $c (["W/$strong", 1, 'the weak ETag, gzip'], ["W/$strong", 0, 'the weak ETag, plain'],
           [$strong, 1, 'the strong ETag, gzip'], [$strong, 0, 'the strong ETag, plain'])
{
    my ($tag, $zip, $what) = @$c;
    my $x = get($sec, 'If-None-Match' => $tag, $zip ? @GZ : ());
    is $x->{status}, 304, "If-None-Match with $what: 304" or diag diag_resp($x);
    is $x->{body}, '', '... no body';
}

publish('Two ');
my $after = get($sec, 'If-None-Match' => "W/$strong", @GZ);
is $after->{status}, 200, 'the content changed: the old weak ETag is a 200';
isnt $after->{headers}{etag}, "W/$strong", '... with a new ETag';
like inflate($after->{body}) // '', qr/Two /, '... and the new content';

# --- stored files are not compressed ---------------------------------------------------------------

{
    my $dir = prefix() . "/storage/$wid";
    mkdir $dir, 0755;
    open my $fh, '>:raw', "$dir/plain.png" or die $!;
    print $fh "\x89PNG\r\n\x1a\n" . ("\x00" x 4096);
    close $fh;
    chmod 0644, "$dir/plain.png";
    my $f = get("/v1/files/$wid/plain.png", @GZ);
    is $f->{status}, 200, 'a stored PNG: 200';
    is $f->{headers}{'content-encoding'}, undef, '... not compressed (not a gzip_types type)';
    like $f->{headers}{etag} // '', qr/^"/, '... its strong ETag kept';
}

done_testing();
