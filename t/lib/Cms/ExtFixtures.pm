package Cms::ExtFixtures;

=head1 NAME

Cms::ExtFixtures - helpers for the extension administration tests (t/30x-extensions-*.t):
admin credentials, cms-admin, manifests, installs

=head1 SYNOPSIS

    use Cms::Test;
    use Cms::Fixtures qw(base62 crc32 make_key master_secret one req_spec req idem post
                         diag_resp facility redis_cli $UUID);
    use Cms::ExtFixtures qw(:all);

    set_conf_defaults(http_config => "cms_extensions_manifests $MDIR;");
    start_nginx();
    my $fac = facility();
    my $k = admin_key($fac);
    put_manifest('one.toml', manifest(name => 'one'));
    check_err(install($k, 'file:one.toml'), 422, 'invalid_request', 'manifest_url', 'no folder');

What these files share with the other API tests (key format, secrets, requests, C<post>
with a fresh C<Idempotency-Key>, C<facility>, C<redis_cli>) comes from C<Cms::Fixtures>;
this module has only what is theirs. Nothing is exported by default; C<:all> exports
everything below.

Load it after C<Cms::Test> (C<use Cms::Test;> sets the file up): loading it reads the
file's C<conf/secret.key> (for C<$PEPPER>) and makes the manifests folder.

=cut

use strict;
use warnings;
use Cms::Test ();
use Cms::Fixtures ();
use JSON::PP ();
use Digest::SHA qw(hmac_sha256);
use File::Path qw(make_path);
use Exporter qw(import);

our @EXPORT_OK = qw(
    $JSON $TS $PEPPER $MDIR
    q_ check_err cms_admin admin_key put_manifest toml_value manifest install ext_status
    wait_status
);
our %EXPORT_TAGS = (all => \@EXPORT_OK);

=head1 VARIABLES

=over

=item $JSON

A C<JSON::PP> object (UTF-8, canonical).

=item $TS

C<qr//> for an RFC 3339 UTC time with exactly three fraction digits (milliseconds), as
the extension API writes it (stricter than C<Cms::Fixtures>' C<$TS>).

=item $PEPPER

C<Cms::Fixtures::pepper()>, computed when the module is loaded.

=item $MDIR

The file's manifests folder, C<PREFIX/manifests> (made, mode 0755, when the module is
loaded); for C<cms_extensions_manifests>.

=back

=cut

our $JSON = JSON::PP->new->utf8->canonical;
our $TS = qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
our $PEPPER = Cms::Fixtures::pepper();
our $MDIR = Cms::Test::prefix() . '/manifests';
make_path($MDIR);
chmod 0755, $MDIR;

=head1 HELPERS

=over

=item q_($text)

C<$text> as an SQL string literal (quotes doubled).

=item check_err($response, $status, $type, $param, $name)

C<Cms::Fixtures::check_ext_err> under the name these files use: one assertion on the
extension API's error shape.

=cut

sub q_ { (my $s = shift) =~ s/'/''/g; "'$s'" }

# An alias, not a wrapper: check_ext_err's Test::Builder level then names the caller's line.
*check_err = \&Cms::Fixtures::check_ext_err;

=item cms_admin(@args)

Runs cms-admin (C<TEST_CMS_ADMIN>, else C<TEST_CMS_ROOT/build-test/cms-admin>) with the
file's database and secret; returns its stdout (trailing white space removed), dies on
failure.

=item admin_key($facility_id, %opts)

An admin credential (C<sk_admin_>) made by SQL (fast; cms-admin makes the others);
returns the key. C<%opts>: C<privs> (array reference, default
C<admin:extensions:view admin:extensions:manage>), C<revoked> (true: revoked now).

=cut

my $ADMIN_BIN = $ENV{TEST_CMS_ADMIN} || (($ENV{TEST_CMS_ROOT} || '.') . '/build-test/cms-admin');

sub cms_admin {
    my @args = @_;
    local $ENV{CMS_DATABASE_URL} = "hostaddr=127.0.0.1 port=$ENV{TEST_CMS_PG_PORT} dbname="
        . Cms::Test::db_name() . ' user=postgres';
    local $ENV{CMS_SECRET_FILE} = Cms::Test::prefix() . '/conf/secret.key';
    open my $fh, '-|', $ADMIN_BIN, @args or die "cms-admin: $!";
    local $/;
    my $out = <$fh> // '';
    close $fh;
    die "cms-admin @args: exit " . ($? >> 8) . "\n" if $?;
    $out =~ s/\s+\z//;
    return $out;
}

sub admin_key {
    my ($fac, %o) = @_;
    my $k = Cms::Fixtures::make_key('sk_admin_');
    my $privs = join ',', @{$o{privs} // [qw(admin:extensions:view admin:extensions:manage)]};
    Cms::Test::psql(sprintf "INSERT INTO admin_credentials (facility_id, name, privileges, key_prefix, secret_hash, revoked_at)
                  VALUES ('%s', 'test', '{%s}', '%s', decode('%s', 'hex'), %s)",
         $fac, $privs, substr($k, 0, 13), unpack('H*', hmac_sha256($k, $PEPPER)),
         $o{revoked} ? 'now()' : 'NULL');
    return $k;
}

=item put_manifest($file, $text)

Writes C<$text> to C<$MDIR/$file> (mode 0644).

=item toml_value($value)

A TOML value: a C<JSON::PP> boolean as C<true>/C<false>, an array reference as an array,
a scalar reference as a bare number (C<\'42'>), anything else as a string.

=item manifest(%m)

A manifest's TOML text. C<%m>: C<name>, C<version> (default C<1.0.0>), C<category>
(default C<payment>), C<required_privilege> (default C<billing:view>), C<privileges>
(default C<ext:billing:read ext:billing:write ext:control:write>), C<fields>
(C<[[field, {type, required, default}], ...]>, each an C<[extension.config.FIELD]> table).

=cut

sub put_manifest {
    my ($file, $text) = @_;
    open my $fh, '>:raw', "$MDIR/$file" or die "$MDIR/$file: $!";
    print $fh $text;
    close $fh;
    chmod 0644, "$MDIR/$file";
}

sub toml_value {
    my $v = shift;
    return $v ? 'true' : 'false' if JSON::PP::is_bool($v);
    return '[' . join(', ', map { toml_value($_) } @$v) . ']' if ref $v eq 'ARRAY';
    return $$v if ref $v eq 'SCALAR';                 # \'42': a bare number
    return $JSON->encode("$v");
}

sub manifest {
    my %m = @_;
    my $t = "[extension]\n";
    $t .= "name = " . toml_value($m{name}) . "\n";
    $t .= "version = " . toml_value($m{version} // '1.0.0') . "\n";
    $t .= "category = " . toml_value($m{category} // 'payment') . "\n";
    $t .= "required_privilege = " . toml_value($m{required_privilege} // 'billing:view') . "\n";
    $t .= "privileges = " . toml_value($m{privileges} // [qw(ext:billing:read ext:billing:write ext:control:write)]) . "\n";
    for my $f (@{$m{fields} // []}) {
        my ($fname, $spec) = @$f;
        $t .= "\n[extension.config.$fname]\n";
        $t .= "$_ = " . toml_value($spec->{$_}) . "\n" for grep { exists $spec->{$_} } qw(type required default);
    }
    return $t;
}

=item install($key, $manifest_url, $config, @headers)

C<POST /v1/extensions> (with a fresh C<Idempotency-Key> unless C<@headers> has one) of
C<{manifest_url, config}> (C<config> only when defined); returns the response.

=item ext_status($facility_id, $name)

The C<status> of the facility's extension of that name (undef when there is none).

=item wait_status($facility_id, $name, $status, $seconds)

Waits up to C<$seconds> (default 4) until C<ext_status> is C<$status>; returns whether
it is.

=back

=cut

sub install {
    my ($key, $url, $config, @extra) = @_;
    return Cms::Fixtures::post('/v1/extensions', $key,
        { manifest_url => $url, (defined $config ? (config => $config) : ()) }, @extra);
}

sub ext_status {
    Cms::Fixtures::one("SELECT status FROM extensions WHERE facility_id = '$_[0]' AND name = " . q_($_[1]))
}

sub wait_status {
    my ($fac, $name, $st, $secs) = @_;
    Cms::Test::wait_until($secs // 4, sub { (ext_status($fac, $name) // '') eq $st });
}

1;
