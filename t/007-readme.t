# The README is a front page that works: README.md has at most 300 lines and links every
# file under docs/; no link of README.md or docs/*.md leaves the repository (`../`, an
# absolute path) or names a file, or a heading of a Markdown file, that is not there; and
# the nginx.conf the README shows (the ```nginx block right after the line
# `<!-- nginx.conf: checked by t/007-readme.t -->`) passes `nginx -t` with this run's
# module. For that the conf is copied to a scratch folder with the module path
# (/usr/lib/nginx/modules/ngx_http_cms_module.so) replaced by TEST_CMS_MODULE, the secret
# (/etc/nginx/cms.key) by a file of 48 random bytes in base64 (cms_secret wants 32 bytes at
# least, trailing white space dropped), the cms_storage folder (it must exist when the
# configuration loads) by an empty one, `listen` by a free loopback port, and pid, error
# log, access log and temp paths pointed into the scratch folder, so that nothing of the
# machine's nginx is touched. The documentation checks need no services; nginx -t needs
# TEST_CMS_MODULE (make test, scripts/test-env.sh) and is skipped without it (failed
# under CI).
use strict;
use warnings;
use Test::More;
use File::Basename qw(dirname);
use File::Find ();
use File::Spec;
use File::Temp ();
use IO::Socket::INET;
use POSIX ();

my $root = $ENV{TEST_CMS_ROOT} // dirname(__FILE__) . '/..';

sub slurp {
    my $path = shift;
    open my $fh, '<:encoding(UTF-8)', $path or die "$path: $!";
    local $/;
    return scalar <$fh>;
}

# A file's text without what is code: fenced blocks and code spans (which may wrap).
sub prose {
    my $t = shift;
    $t =~ s/^```.*?^```[^\n]*$//msg;
    $t =~ s/`[^`]*`//g;
    return $t;
}

# The anchors GitHub gives a Markdown file's headings.
sub anchors {
    my $t = shift;
    $t =~ s/^```.*?^```[^\n]*$//msg;
    my (%seen, %anchors);
    for my $h ($t =~ /^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/mg) {
        (my $a = lc $h) =~ s/[^\w\- ]//g;
        $a =~ s/ /-/g;
        my $n = $seen{$a}++;
        $anchors{$n ? "$a-$n" : $a} = 1;
    }
    return \%anchors;
}

my @docs;
File::Find::find({ no_chdir => 1, wanted => sub {
    push @docs, File::Spec->abs2rel($_, $root) if -f $_;
} }, "$root/docs");
@docs = sort @docs;
ok scalar(@docs), 'docs/ has files';

my $readme = slurp("$root/README.md");
my $lines = () = $readme =~ /\n/g;
cmp_ok $lines, '<=', 300, "README.md has at most 300 lines ($lines)";

# every link of README.md and docs/*.md: [text](target), text possibly wrapped
my (%linked, @outside, @missing);
for my $file ('README.md', grep { /\.md$/ } @docs) {
    my $dir = dirname($file);
    my $text = prose(slurp("$root/$file"));
    while ($text =~ /\[[^\]]*\]\(\s*([^)\s]+)(?:\s+"[^"]*")?\s*\)/g) {
        my $target = $1;
        next if $target =~ /^[A-Za-z][A-Za-z0-9+.-]*:/;    # https:, mailto:
        my ($path, $anchor) = $target =~ /^([^#]*)(?:#(.*))?$/;
        if ($path =~ m{^/} || $path =~ m{(?:^|/)\.\.(?:/|$)}) {
            push @outside, "$file: $target";
            next;
        }
        my $rel = $path eq '' ? $file
                : File::Spec->canonpath($dir eq '.' ? $path : "$dir/$path");
        $linked{$rel} = 1 if $file eq 'README.md';
        if (!-e "$root/$rel") {
            push @missing, "$file: $target";
            next;
        }
        next unless defined $anchor && $anchor ne '' && $rel =~ /\.md$/;
        push @missing, "$file: $target (no such heading)"
            unless anchors(slurp("$root/$rel"))->{$anchor};
    }
}
is_deeply \@outside, [], 'no link of README.md or docs/ leaves the repository'
    or diag join "\n", @outside;
is_deeply \@missing, [], 'every link of README.md and docs/ names a file (and heading) that is there'
    or diag join "\n", @missing;
is_deeply [grep { !$linked{$_} } @docs], [], 'README.md links every file under docs/';

# the README's nginx.conf
my @blocks = $readme =~ /^<!-- nginx\.conf: checked by t\/007-readme\.t -->\n```nginx\n(.*?)^```[ \t]*$/msg;
if (!is scalar(@blocks), 1, 'README.md has one marked nginx.conf') {
    done_testing();
    exit;
}
my $conf = $blocks[0];
like $conf, qr{^load_module /usr/lib/nginx/modules/ngx_http_cms_module\.so;$}m,
    'the conf loads the module from where Debian\'s package installs it';
like $conf, qr{^\s*cms_secret\s+/etc/nginx/cms\.key;$}m, 'the conf reads the secret from /etc/nginx/cms.key';
like $conf, qr/^events\s*\{/m, 'the conf has an events block';
like $conf, qr/^http\s*\{/m, 'the conf has an http block';

SKIP: {
    my $module = $ENV{TEST_CMS_MODULE} // '';
    my $nginx = $ENV{TEST_NGINX_BINARY} || '/usr/sbin/nginx';
    my $why = $module eq '' ? 'TEST_CMS_MODULE is not set'
            : !-f $module ? "module $module not found (make build)"
            : !-x $nginx ? "nginx binary $nginx not executable" : undef;
    if (defined $why) {
        fail("nginx -t on the README's nginx.conf: $why") if $ENV{CI};
        skip "$why (run through make test)", 1;
    }

    my $tmp = File::Temp->newdir('readme-conf-XXXXXX',
                                 DIR => $ENV{TEST_CMS_VAR} // File::Spec->tmpdir);
    my $dir = $tmp->dirname;
    mkdir "$dir/$_" or die "$dir/$_: $!" for qw(files temp);

    open my $rnd, '<:raw', '/dev/urandom' or die "/dev/urandom: $!";
    read($rnd, my $bytes, 48) == 48 or die 'short read from /dev/urandom';
    require MIME::Base64;
    open my $key, '>', "$dir/cms.key" or die "$dir/cms.key: $!";
    print $key MIME::Base64::encode_base64($bytes);
    close $key or die "$dir/cms.key: $!";
    chmod 0600, "$dir/cms.key";

    my $port = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0,
                                     Proto => 'tcp', Listen => 1)->sockport;
    my $c = $conf;
    $c =~ s{/usr/lib/nginx/modules/ngx_http_cms_module\.so}{$module}g;
    $c =~ s{/etc/nginx/cms\.key}{$dir/cms.key}g;
    $c =~ s{^(\s*cms_storage\s+)/[^\s;]+}{${1}$dir/files}mg;
    $c =~ s{^(\s*listen\s+)[^;]+;}{${1}127.0.0.1:$port;}mg;
    $c =~ s{^\s*(?:pid|error_log)\s[^;]*;[^\n]*\n}{}mg;    # given with -g below
    # a user this machine lacks (a bare container): nobody, as the test harness runs
    if (my ($user) = $c =~ /^\s*user\s+([^\s;]+)/m) {
        $c =~ s/^(\s*user\s+)[^\s;]+/${1}nobody/m unless defined getpwnam($user);
    }
    # the uploads' folder belongs to the workers' user, as the README has it (chown
    # www-data:): nginx -t refuses a folder they cannot write in
    if (my ($user) = $c =~ /^\s*user\s+([^\s;]+)/m) {
        my ($uid, $gid) = (getpwnam $user)[2, 3];
        chown $uid, $gid, "$dir/files" or die "chown $dir/files: $!";
    }
    my $paths = join '', map { "    ${_}_temp_path $dir/temp/$_;\n" }
                            qw(client_body proxy fastcgi uwsgi scgi);
    $c =~ s{^(http\s*\{\n)}{$1    access_log $dir/access.log;\n$paths}m;
    open my $out, '>', "$dir/nginx.conf" or die "$dir/nginx.conf: $!";
    print $out $c;
    close $out or die "$dir/nginx.conf: $!";

    my %env;
    if ($ENV{TEST_CMS_ASAN}) {    # as Cms::Test starts an ASan build
        my @pre = grep { m{/} && -e } map { my $p = `gcc -print-file-name=$_`; chomp $p; $p }
                  qw(libasan.so libubsan.so);
        %env = (LD_PRELOAD => "@pre", ASAN_OPTIONS => 'detect_leaks=0');
    }
    my @cmd = ($nginx, '-t', '-p', "$dir/", '-c', "$dir/nginx.conf",
               '-g', "pid $dir/nginx.pid; error_log $dir/error.log info;");
    my $pid = open(my $ph, '-|') // die "fork: $!";
    if (!$pid) {
        @ENV{keys %env} = values %env;
        open STDERR, '>&', \*STDOUT or POSIX::_exit(127);
        exec @cmd or POSIX::_exit(127);
    }
    my $said = do { local $/; <$ph> } // '';
    close $ph;
    is $? >> 8, 0, "nginx -t passes the README's nginx.conf" or diag "$said\n$c";
}

done_testing();
