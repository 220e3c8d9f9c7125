package Cms::FakeBunny;
# A fake Bunny Stream API on loopback (Cms::FakeHttp) and the nginx configuration that
# points cms_video_provider at it (t/119, t/042):
#
#   my $b = Cms::FakeBunny->start;            # library 4242, a random key in a file
#   start_nginx(http_config => $b->http_config, config => $b->location);
#   $b->set(videos => { $guid => { status => 4, length => 93 } });
#   $b->set(mode => 'status500');             # see below; 'ok' again afterwards
#   $b->requests;                             # what nginx sent (Cms::FakeHttp)
#
# It answers as Bunny does, when the AccessKey header is the key (else 401):
#   POST /library/{lib}/videos {"title"}   -> 200 {guid (fresh), title, status 0, length 0}
#   GET  /library/{lib}/videos/{guid}      -> 200 {guid, status, length} from "videos";
#        a guid not there: status 0, length 0, or 404 with strict => 1.
# Modes: ok, status500, status401, garbage (200, not JSON), hang (never answers), close
# (drops the connection), badguid (a created video without a UUID), otherguid (a poll
# answered with another video).
use strict;
use warnings;
use Cms::FakeHttp;
use File::Temp ();
use JSON::PP ();

my $SEQ = 0;

sub start {
    my ($class, %o) = @_;
    my $self = bless { library => $o{library} // '4242',
                       key => 'bunny-key-' . join('', map { ('a' .. 'z', 0 .. 9)[rand 36] } 1 .. 24) },
                     $class;
    my ($lib, $key) = @$self{qw(library key)};
    $self->{fake} = Cms::FakeHttp->start(handler => sub { _answer($lib, $key, @_) });
    $self->{dir} = File::Temp::tempdir('cms-bunny-XXXXXX', TMPDIR => 1, CLEANUP => 1);
    chmod 0755, $self->{dir};
    $self->{keyfile} = $self->file('bunny.key', "$key\n");
    return $self;
}

sub library { $_[0]{library} }
sub key { $_[0]{key} }
sub keyfile { $_[0]{keyfile} }
sub dir { $_[0]{dir} }
sub api { 'http://127.0.0.1:' . $_[0]{fake}->port }
sub set { my $s = shift; $s->{fake}->set(@_) }
sub requests { $_[0]{fake}->requests }
sub stop { $_[0]{fake}->stop }

# a key file in the key folder, read by the master (others may not: nginx -t refuses a
# secret they can read); returns its path
sub file {
    my ($self, $name, $text) = @_;
    open my $fh, '>', "$self->{dir}/$name" or die $!;
    print $fh $text;
    close $fh;
    chmod 0600, "$self->{dir}/$name";
    return "$self->{dir}/$name";
}

# the directive, with api= (and any other parameters) given
sub http_config {
    my ($self, %o) = @_;
    my $api = $o{api} // $self->api . '/';
    my $extra = join '', map { " $_=$o{$_}" } grep { $_ ne 'api' } sort keys %o;
    return "cms_video_provider bunny library=$self->{library} api_key_file=$self->{keyfile} api=$api$extra;";
}

# the internal location the module calls the API through (README, Video provider)
sub location {
    return <<'EOF';
        location = /_cms_video {
            internal;
            proxy_pass $cms_fetch_url;
            proxy_method $cms_fetch_method;
            proxy_pass_request_headers off;
            proxy_set_header AccessKey $cms_video_access_key;
            proxy_set_header Content-Type application/json;
            proxy_set_header Accept application/json;
            proxy_set_body $cms_fetch_body;
            subrequest_output_buffer_size 64k;
            proxy_connect_timeout 1s;
            proxy_send_timeout 1s;
            proxy_read_timeout 1s;
        }
EOF
}

sub _guid { sprintf '%08x-%04x-4%03x-8%03x-%012x', $$, int rand 65536, ++$SEQ % 4096, 0, int rand 2**40 }

# runs in the fake's process
sub _answer {
    my ($lib, $key, $q, $s) = @_;
    my $mode = $s->{mode} // 'ok';
    return $mode if $mode eq 'hang' || $mode eq 'close';
    my $json = { 'Content-Type' => 'application/json' };
    return [500, $json, '{"Message":"down"}'] if $mode eq 'status500';
    return [200, $json, 'not json'] if $mode eq 'garbage';
    return [401, $json, '{"Message":"Unauthorized"}']
        if $mode eq 'status401' || ($q->{headers}{accesskey} // '') ne $key;
    my $enc = JSON::PP->new->canonical;
    if ($q->{method} eq 'POST' && $q->{path} eq "/library/$lib/videos") {
        my $b = eval { JSON::PP->new->decode($q->{body}) } // {};
        return [400, $json, '{"Message":"title"}'] unless defined $b->{title};
        return [200, $json, $enc->encode({ guid => $mode eq 'badguid' ? 'nope' : _guid(), title => $b->{title},
                                           status => 0, length => 0, videoLibraryId => $lib + 0 })];
    }
    if ($q->{method} eq 'GET' && $q->{path} =~ m{^/library/\Q$lib\E/videos/([0-9a-fA-F-]+)$}) {
        my $v = ($s->{videos} // {})->{$1};
        return [404, $json, '{"Message":"not found"}'] if !$v && $s->{strict};
        $v //= { status => 0, length => 0 };
        return [200, $json, $enc->encode({ guid => $mode eq 'otherguid' ? _guid() : $1,
                                           status => $v->{status}, length => $v->{length} // 0 })];
    }
    return [404, $json, '{}'];
}

1;
