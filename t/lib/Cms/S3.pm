package Cms::S3;

=head1 NAME

Cms::S3 - an S3-compatible server on loopback that checks every signature, for the tests

=head1 SYNOPSIS

    use Cms::S3;
    my $s3 = Cms::S3->start;                 # tools/node/s3-server.js: s3rver + SigV4 check
    start_nginx(storage => $s3->storage, config => $s3->locations);
    $s3->requests;                           # what it was asked, [{method, url, payload, status}]
    $s3->object('ws/key.png');               # the bytes it holds at a key, or undef
    $s3->keys('ws/');                        # the keys under a prefix
    $s3->refuse_delete(1);                   # every DELETE of an object answered 500
    $s3->object_file('ws/key.png');          # the server's file of an object
    $s3->sdk(get => 'ws/key.png');           # the same through the AWS SDK for JavaScript
    $s3->sdk(put => 'ws/key.png', $bytes, 'image/png');
    $s3->stop;                               # also at exit

=head1 DESCRIPTION

Starts C<node tools/node/s3-server.js> on a free loopback port, its folder under the
test's prefix, bucket C<media>, region C<us-east-1> and a key pair of its own, and writes
the credentials file (mode 0600) the module reads. C<storage> is the C<cms_storage s3 ...>
line's value (C<path_style=on>, a stage folder under the prefix; C<%opts> to
C<storage(...)> are more parameters, C<secret =E<gt> ...> writes another credentials
file). C<locations> is the two locations of docs/object-storage.md, as
conf/nginx.conf.in has them. C<object> reads an object back through the server with a
signature of C<curl --aws-sigv4> (a third implementation).

=cut

use strict;
use warnings;
use Cms::Test ();
use Cms::Service;
use File::Path qw(make_path);
use JSON::PP ();

our ($KEY, $SECRET, $BUCKET, $REGION) = ('AKCMSTEST0000000000', 'cms-test-secret-0123456789', 'media', 'us-east-1');
sub start {
    my ($class, %o) = @_;
    my $port = Cms::Test::free_port();
    my $dir = Cms::Test::prefix() . "/s3-$port";
    make_path("$dir/data", "$dir/stage");
    chmod 0755, $dir;
    if ($> == 0) {
        # the workers (nobody) write the stage folder, as the test's storage
        my $uid = getpwnam('nobody');
        chown $uid, -1, "$dir/stage" if defined $uid;
    }
    my $root = $ENV{TEST_CMS_ROOT} or die 'TEST_CMS_ROOT is not set';
    my $svc = Cms::Service->start(
        name => 's3-server', port => $port, log => "$dir/server.log",
        cmd => ['node', "$root/tools/node/s3-server.js", '--dir', "$dir/data", '--port', $port,
                '--bucket', $BUCKET, '--key', $KEY, '--secret', $SECRET, '--region', $REGION,
                '--log', "$dir/requests.jsonl"]);
    my $self = bless { svc => $svc, port => $port, dir => $dir }, $class;
    $self->credentials("$dir/credentials", $SECRET);
    return $self;
}

sub port { $_[0]{port} }
sub dir { $_[0]{dir} }
sub endpoint { "http://127.0.0.1:$_[0]{port}" }

# an AWS credentials file at $path (0600 unless $mode)
sub credentials {
    my ($self, $path, $secret, $mode) = @_;
    open my $fh, '>', $path or die "$path: $!";
    print $fh "[default]\naws_access_key_id = $KEY\naws_secret_access_key = $secret\n";
    close $fh;
    chmod($mode // 0600, $path);
    return $path;
}

sub storage {
    my ($self, %o) = @_;
    my $creds = "$self->{dir}/credentials";
    $creds = $self->credentials("$self->{dir}/credentials-other", delete $o{secret}) if defined $o{secret};
    my $extra = join ' ', map { "$_=$o{$_}" } sort keys %o;
    return "s3 endpoint=" . $self->endpoint . " bucket=$BUCKET region=$REGION credentials=$creds"
         . " stage=$self->{dir}/stage path_style=on $extra";
}

sub locations {
    my $headers = <<'EOF';
            proxy_pass_request_headers off;
            proxy_set_header Host $cms_s3_host;
            proxy_set_header Authorization $cms_s3_authorization;
            proxy_set_header x-amz-date $cms_s3_date;
            proxy_set_header x-amz-content-sha256 $cms_s3_content_sha256;
            proxy_set_header x-amz-security-token $cms_s3_token;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
EOF
    return <<"EOF";
        location \@cms_s3 {
            proxy_pass \$cms_s3_url;
            proxy_method \$cms_s3_method;
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
$headers
            proxy_set_header Range \$http_range;
            proxy_set_header If-Range \$http_if_range;
            proxy_set_header If-None-Match \$http_if_none_match;
            proxy_set_header If-Modified-Since \$http_if_modified_since;
            proxy_hide_header x-amz-request-id;
            proxy_hide_header x-amz-id-2;
        }
        location = /_cms_s3 {
            internal;
            proxy_pass \$cms_s3_url;
            proxy_method \$cms_s3_method;
            proxy_set_header Content-Type \$cms_s3_content_type;
$headers
            client_max_body_size 0;
            proxy_next_upstream off;
            subrequest_output_buffer_size 16k;
        }
EOF
}

# the server's log of requests, oldest first
sub requests {
    my $self = shift;
    open my $fh, '<', "$self->{dir}/requests.jsonl" or return [];
    return [map { JSON::PP::decode_json($_) } grep { /\S/ } <$fh>];
}

# the object's bytes, read with curl's own SigV4 (undef when the server has none)
sub object {
    my ($self, $key) = @_;
    my $url = $self->endpoint . "/$BUCKET/$key";
    my $out = `curl -s -o - -w '\\n%{http_code}' --aws-sigv4 'aws:amz:$REGION:s3' --user '$KEY:$SECRET' -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' '$url'`;
    $out =~ s/\n(\d{3})\z// or die "curl: $out";
    return $1 eq '200' ? $out : undef;
}

# the keys the bucket holds under $prefix (ListObjectsV2 through curl's SigV4)
sub keys {
    my ($self, $prefix) = @_;
    (my $q = $prefix) =~ s{([^A-Za-z0-9._~-])}{sprintf '%%%02X', ord $1}ge;
    my $url = $self->endpoint . "/$BUCKET?list-type=2&max-keys=1000&prefix=$q";
    my $out = `curl -s -o - --aws-sigv4 'aws:amz:$REGION:s3' --user '$KEY:$SECRET' -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' '$url'`;
    die "ListObjectsV2: $out" unless $out =~ /<ListBucketResult/;
    return [sort $out =~ m{<Key>([^<]+)</Key>}g];
}

# part $n of every multipart upload answered 500 from now on; undef: none
sub refuse_part {
    my ($self, $n) = @_;
    my $f = "$self->{dir}/data.refuse-part";
    return unlink $f unless defined $n;
    open my $fh, '>', $f or die "$f: $!";
    print $fh "$n\n";
    close $fh;
}

# every object's DELETE answered 500 from now on ($on true), or none
sub refuse_delete {
    my ($self, $on) = @_;
    my $f = "$self->{dir}/data.refuse-delete";
    return unlink $f unless $on;
    open my $fh, '>', $f or die "$f: $!";
    close $fh;
}

# where the server keeps the object at $key (its file's mtime is the LastModified)
sub object_file { "$_[0]{dir}/data/$BUCKET/$_[1]._S3rver_object" }

# the multipart uploads begun and neither completed nor aborted (s3rver's folder of them)
sub open_uploads {
    my $self = shift;
    return [map { s{.*/}{}r } grep { -d } glob("$self->{dir}/data/$BUCKET/._S3rver_uploads/*")];
}

# the AWS SDK for JavaScript: get (the bytes, or undef) or put an object
sub sdk {
    my ($self, $cmd, $key, $bytes, $type) = @_;
    my $root = $ENV{TEST_CMS_ROOT};
    local $ENV{NODE_NO_WARNINGS} = 1;    # the SDK's notice about Node.js 22
    my @cmd = ('node', "$root/tools/node/s3-sdk.js", $cmd, '--endpoint', $self->endpoint,
               '--bucket', $BUCKET, '--key', $KEY, '--secret', $SECRET, '--region', $REGION,
               '--object', $key, (defined $type ? ('--type', $type) : ()));
    if ($cmd eq 'put') {
        open my $fh, '|-', @cmd or die "s3-sdk: $!";
        binmode $fh;
        print $fh $bytes;
        close $fh;
        return $? == 0;
    }
    open my $fh, '-|', @cmd or die "s3-sdk: $!";
    binmode $fh;
    my $out = do { local $/; <$fh> };
    close $fh;
    return $? == 0 ? $out : undef;
}

sub stop { $_[0]{svc}->stop }

1;
