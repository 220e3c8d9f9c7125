# The release number is one: VERSION, the module's and cms-admin's CMS_VERSION
# (src/lib/cms_version.h), CHANGELOG.md's newest heading and debian/changelog's newest
# entry (the package's version) name the same, and the package's files are in place.
use strict;
use warnings;
use Test::More;
use FindBin;

my $root = "$FindBin::Bin/..";
sub slurp {
    open my $fh, '<', "$root/$_[0]" or die "$_[0]: $!\n";
    local $/;
    return <$fh>;
}

my ($version) = slurp('VERSION') =~ /\A(\d+\.\d+\.\d+)\n\z/;
ok defined $version, 'VERSION holds one X.Y.Z line';
$version //= '?';

my ($header) = slurp('src/lib/cms_version.h') =~ /#define CMS_VERSION\s+"([^"]+)"/;
is $header, $version, 'CMS_VERSION is VERSION';

my ($changes) = slurp('CHANGELOG.md') =~ /^## (\S+)/m;
is $changes, $version, "CHANGELOG.md's newest heading is VERSION";

my ($deb) = slurp('debian/changelog') =~ /\A\S+ \(([^)]+)\)/;
is $deb, $version, "debian/changelog's newest entry is VERSION (a native package)";

like slurp('debian/control'), qr/^Package: libnginx-mod-http-cms$/m,
    'the package is named as Debian names nginx modules (dh_nginx enables it)';
ok -x "$root/debian/rules", 'debian/rules is executable';
like slurp('LICENSE'), qr/BSD 2-Clause/, 'LICENSE';

done_testing();
