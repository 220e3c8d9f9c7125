package Cms::Fixtures;

=head1 NAME

Cms::Fixtures - shared helpers for the API test files (requests, error checks, accounts,
keys, extension fixtures)

=head1 SYNOPSIS

    use Cms::Test;
    use Cms::Fixtures qw(req check_err diag_resp signup workspace key);

    start_nginx();
    my $owner = signup();
    my $wid = workspace($owner->{token}, 'Alpha');
    my $k = key($owner->{token}, $wid, 'rw', 'articles:read', 'articles:write');
    check_err(req(GET => '/v1/api/articles/nope', $k), 404, 'not_found', 'unknown article');

Nothing is exported by default: a file names what it uses (or a tag, below), so a file
may keep a local variant of a helper under the same name. Load it after C<Cms::Test>
(C<use Cms::Test;> sets the file up; this module only calls into it).

Tags: C<:content> (the content API: C<req diag_resp check_err check_subset one signup
new_email workspace api_key key>), C<:keyformat> (C<base62 crc32 random_bytes make_key
key_from_body checksum_ok bad_checksum>), C<:ext> (the extension API: C<req req_spec
diag_resp check_ext_err one post idem facility extension ext_key invoice invoice_path
record_path fail_path key_id redis_cli forget_redis idem_records lock_invoice_row invoice_row_locked
release_hold waiting_on_lock>).

Helpers that die (C<signup>, C<workspace>, C<api_key>, C<key>, C<mk>, C<mkcat>) are for
setting up: a failure there is not an assertion, it stops the file with the response.
The C<check_*> helpers are assertions (one C<ok> each) and report the caller's line.

=cut

use strict;
use warnings;
use Cms::Test ();
use Test::More ();
use JSON::PP ();
use Digest::SHA qw(hmac_sha256);
use POSIX ();
use MIME::Base64 ();
use IO::Select ();
use IO::Socket::INET ();
use Time::HiRes ();
use Exporter qw(import);

our @EXPORT_OK = qw(
    $UUID $TS
    req req_spec diag_resp check_err check_ext_err check_subset one
    master_secret session_key pepper account_token account_token_hash
    new_email signup signup_defaults workspace api_key key demoted_key mk mkcat revisions
    check_url_field upload_bytes
    base62 crc32 random_bytes make_key key_from_body checksum_ok bad_checksum
    idem post facility extension ext_key invoice invoice_path record_path fail_path
    key_id redis_cli forget_redis idem_records lock_invoice_row invoice_row_locked release_hold
    waiting_on_lock hold_in_session
    rss_kb stream_upload rows_read
);
our %EXPORT_TAGS = (
    content   => [qw(req diag_resp check_err check_subset one signup new_email workspace
                     api_key key)],
    keyformat => [qw(base62 crc32 random_bytes make_key key_from_body checksum_ok
                     bad_checksum)],
    ext       => [qw(req req_spec diag_resp check_ext_err one post idem facility extension
                     ext_key invoice invoice_path record_path fail_path key_id redis_cli
                     forget_redis idem_records lock_invoice_row invoice_row_locked
                     release_hold waiting_on_lock)],
);

my $JSON = JSON::PP->new->utf8->canonical;

=head1 PATTERNS

=over

=item $UUID, $TS

C<qr//> for a lowercase UUID and for an RFC 3339 UTC time (C<Z>, optional fraction).

=back

=cut

our $UUID = qr/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
our $TS = qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z$/;

=head1 REQUESTS AND CHECKS

=over

=item req_spec($method, $path, $credential, $body, @headers)

A request as C<parallel_requests> takes it: C<{method, path, headers, body}>.
C<$credential> (unless undef) goes in C<Authorization: Bearer>. C<$body>: a reference is
JSON-encoded, a string is sent as it is; either way C<Content-Type: application/json> is
set. C<@headers> (name, value pairs) come last.

=item req($method, $path, $credential, $body, @headers)

The same request sent with C<http>; returns its response.

=cut

sub req_spec {
    my ($m, $path, $cred, $body, @extra) = @_;
    my @h;
    push @h, Authorization => "Bearer $cred" if defined $cred;
    if (defined $body) {
        push @h, 'Content-Type' => 'application/json';
        $body = $JSON->encode($body) if ref $body;
    }
    push @h, @extra;
    return { method => $m, path => $path, headers => \@h, body => $body };
}

sub req { my $s = req_spec(@_); Cms::Test::http($s->{method}, $s->{path}, $s->{headers}, $s->{body}) }

=item diag_resp($response)

C<"got STATUS BODY"> (or the connection error) for a diagnostic, the body cut at 400
characters.

=cut

sub diag_resp { my $r = shift; "got $r->{status} " . substr($r->{error} // $r->{body} // '', 0, 400) }

=item check_err($response, $status, $code, $name)

One assertion: the content API's error shape. The status, a JSON object
C<{"error": non-empty text, "code": $code}> and an C<X-Request-Id> of 32 hex digits. The
test is named C<"$name: $status $code">. Returns whether it passed.

=cut

sub check_err {
    my ($r, $status, $code, $name) = @_;
    my $j = $r->{json};
    my $ok = $r->{status} == $status && ref $j eq 'HASH' && defined $j->{code}
        && $j->{code} eq $code && defined $j->{error} && !ref $j->{error}
        && length $j->{error} && ($r->{headers}{'x-request-id'} // '') =~ /^[0-9a-f]{32}$/;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    Test::More::ok($ok, "$name: $status $code") or Test::More::diag(diag_resp($r));
    return $ok;
}

=item check_ext_err($response, $status, $type, $param, $name)

One assertion: the extension API's error shape,
C<{"error": {"type": $type, "message": non-empty text, "param": ...}}> with the status;
C<param> must be there, and equal C<$param> when that is defined. Named
C<"$name: $status $type"> (plus C<" param $param">). Returns whether it passed.

=cut

sub check_ext_err {
    my ($r, $status, $type, $param, $name) = @_;
    my $e = ref $r->{json} eq 'HASH' ? $r->{json}{error} : undef;
    my $ok = $r->{status} == $status && ref $e eq 'HASH' && ($e->{type} // '') eq $type
        && defined $e->{message} && !ref $e->{message} && length $e->{message}
        && exists $e->{param}
        && (defined $param ? (defined $e->{param} && $e->{param} eq $param) : 1);
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    Test::More::ok($ok, "$name: $status $type" . (defined $param ? " param $param" : ''))
        or Test::More::diag(diag_resp($r));
    return $ok;
}

=item check_subset($expected, $got, $name)

One assertion: C<json_subset($expected, $got)> finds no difference; on failure the
difference and C<$got> (as JSON) are shown.

=cut

sub check_subset {
    my ($exp, $got, $name) = @_;
    my $err = Cms::Test::json_subset($exp, $got);
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    Test::More::ok(!defined $err, $name) or Test::More::diag($err . "\n  got: " . $JSON->encode($got));
}

=item one($sql)

The first column of the first row of C<psql($sql)> on the file's database.

=back

=cut

sub one { Cms::Test::psql($_[0])->[0][0] }

=over

=item rows_read(\@tables, $statements [, $result])

Runs C<$statements> in one transaction under the generic plans the module's connections use
(C<plan_cache_mode = force_generic_plan>) and returns what they read of each of C<@tables>
(rows scanned plus rows fetched through an index, from the transaction's own statistics),
as a hash, and the rows of the query C<$result> run after them in the same transaction.

=back

=cut

sub rows_read {
    my ($tables, $statements, $result) = @_;
    my $names = join ', ', map { "('$_')" } @$tables;
    my $r = "SELECT t.relname, coalesce(s.seq_tup_read, 0) + coalesce(s.idx_tup_fetch, 0) AS n
               FROM (VALUES $names) t (relname)
               LEFT JOIN pg_stat_xact_user_tables s ON s.relname = t.relname";
    # (the session's counts not yet flushed show in the view too: what changed in it; one
    # result set, the reads beside each row of $result, as psql ends a set with no separator)
    my $rows = Cms::Test::psql("BEGIN; SET LOCAL plan_cache_mode = force_generic_plan;
          CREATE TEMP TABLE cms_reads ON COMMIT DROP AS $r;
          $statements;
          SELECT a.reads, q.* FROM (SELECT string_agg(x.relname || '=' || (x.n - r.n), ',') AS reads
                                      FROM ($r) x JOIN cms_reads r USING (relname)) a
            LEFT JOIN (" . ($result // 'SELECT') . ") q ON true;
          COMMIT");
    my %read = map { split /=/ } split /,/, $rows->[0][0];
    $rows = [map { [@$_[1 .. $#$_]] } @$rows];
    $rows = [] if @$rows == 1 && !grep { defined } @{$rows->[0]};
    return (\%read, $rows);
}

=head1 SECRETS

=over

=item master_secret()

The text of the file's C<conf/secret.key> (hex, trailing white space removed).

=item session_key()

The session JWT key: C<HMAC-SHA256(key = master secret, 'cms session jwt v1')>.

=item pepper()

The API key pepper: C<HMAC-SHA256(key = master secret, 'cms api key pepper v1')>; a key
is stored as C<HMAC-SHA256(key = pepper, secret)>.

=item account_token(%opts)

An account token as src/lib/cms_token.c makes it (invitations, password resets,
verifications): C<kind> (default C<inv>), C<exp> (Unix seconds, default an hour ahead),
C<rnd> (16 bytes, default random), C<key> (default the file's account-token key,
C<HMAC-SHA256(key = master secret, 'cms account token v1')>).

=item account_token_hash($token)

What the database stores for a token: C<HMAC-SHA256(key = token key, 'cms token id:' token)>,
in hex.

=back

=cut

sub master_secret {
    open my $fh, '<', Cms::Test::prefix() . '/conf/secret.key' or die "secret.key: $!";
    local $/;
    my $s = <$fh>;
    $s =~ s/\s+\z//;
    return $s;
}

sub session_key { hmac_sha256('cms session jwt v1', master_secret()) }

my $PEPPER;
sub pepper { $PEPPER //= hmac_sha256('cms api key pepper v1', master_secret()) }

sub _token_key { hmac_sha256('cms account token v1', master_secret()) }

sub account_token {
    my (%o) = @_;
    my $kind = $o{kind} // 'inv';
    my $payload = pack('Q>', $o{exp} // time + 3600) . ($o{rnd} // random_bytes(16));
    my $mac = substr hmac_sha256("cms token mac:${kind}_$payload", $o{key} // _token_key()), 0, 16;
    return "${kind}_" . MIME::Base64::encode_base64url($payload . $mac);
}

sub account_token_hash { Digest::SHA::hmac_sha256_hex("cms token id:$_[0]", _token_key()) }

=head1 ACCOUNTS, WORKSPACES, CONTENT

=over

=item new_email()

A fresh address, C<PREFIXN-PID@example.com> (C<PREFIX> from C<signup_defaults>, C<user>
unless set; C<N> counts up).

=item signup(%opts)

Signs a user up (dies unless 201). C<%opts>: C<email> (default C<new_email()>),
C<password> (default C<"password number N">), C<name> (sent only when defined); a code
reference for C<password> or C<name> is called with the counter C<N>. Returns the
response's JSON (C<token>, C<user>) with C<email>, C<password> and C<resp> (the response)
added.

=item signup_defaults(%opts)

Defaults for every later C<signup> of the file: the options above and C<email_prefix>,
e.g. C<signup_defaults(email_prefix =E<gt> 'art', name =E<gt> sub { "U$_[0]" })>.

=cut

my $SEQ = 0;
my %SIGNUP = (email_prefix => 'user', password => sub { "password number $_[0]" });

sub signup_defaults { %SIGNUP = (%SIGNUP, @_) }

sub new_email { sprintf '%s%d-%d@example.com', $SIGNUP{email_prefix}, ++$SEQ, $$ }

sub signup {
    my %o = (%SIGNUP, @_);
    my $email = $o{email} // new_email();
    my ($pw, $name) = map { ref $_ eq 'CODE' ? $_->($SEQ) : $_ } @o{qw(password name)};
    my $r = req(POST => '/v1/auth/signup', undef,
                { email => $email, password => $pw, defined $name ? (name => $name) : () });
    die "signup $email: " . diag_resp($r) unless $r->{status} == 201;
    return { %{$r->{json}}, email => $email, password => $pw, resp => $r };
}

=item workspace($token, $name)

Creates a workspace with a session token (dies unless 201); returns its id.

=cut

sub workspace {
    my ($tok, $name) = @_;
    my $r = req(POST => '/v1/workspaces', $tok, { name => $name });
    die "workspace $name: " . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{workspace}{id};
}

=item api_key($token, $workspace_id, $name, @scopes)

Mints a secret API key (dies unless 201); returns the response's JSON:
C<{api_key =E<gt> record, secret =E<gt> text}>.

=item key($token, $workspace_id, $name, @scopes)

The same; returns only the secret.

=cut

sub api_key {
    my ($tok, $wid, $name, @scopes) = @_;
    my $r = req(POST => "/v1/workspaces/$wid/api-keys", $tok, { name => $name, scopes => \@scopes });
    die "key $name: " . diag_resp($r) unless $r->{status} == 201;
    return $r->{json};
}

sub key { api_key(@_)->{secret} }

# A key with @scopes minted by a new admin of $wid who is then demoted to editor: the key
# acts for an editor from then on.
sub demoted_key {
    my ($wid, @scopes) = @_;
    my $u = signup();
    Cms::Test::psql("INSERT INTO members (workspace_id, user_id, role) VALUES ('$wid', '$u->{user}{id}', 'admin')");
    my $k = key($u->{token}, $wid, 'demoted', @scopes);
    Cms::Test::psql("UPDATE members SET role = 'editor' WHERE user_id = '$u->{user}{id}'");
    return $k;
}

=item mk($credential, \%fields, $path), mkcat($credential, \%fields, $path)

POSTs an article (C<$path> default C</v1/api/articles>) or a category (default
C</v1/api/categories>), dying unless 201; returns the created record.

=item revisions($article_id)

How many rows C<article_revisions> holds for the article.

=back

=cut

sub _create {
    my ($what, $cred, $fields, $path) = @_;
    my $r = req(POST => $path, $cred, $fields);
    die "create $what: " . diag_resp($r) unless $r->{status} == 201;
    return $r->{json}{$what};
}

sub mk { _create(article => $_[0], $_[1], $_[2] // '/v1/api/articles') }
sub mkcat { _create(category => $_[0], $_[1], $_[2] // '/v1/api/categories') }

sub revisions { one("SELECT count(*) FROM article_revisions WHERE article_id = '$_[0]'") }

=item check_url_field($credential, $what, $path, \%base, $field)

The URL rule (README, API notes: an absolute http or https URL, or "" for none) on
C<$field> of the collection at C<$path> (C<$what> the record's wrapper: article,
category): every value of C<@BAD_URLS> is a 400 C<invalid_url> whose message names the
field, on POST (C<%base> plus the field) and on PATCH of one record, which keeps its
value; the good ones are taken and read back as sent.  C<%base>'s values get a counter
appended, so that derived slugs differ.

=cut

our @BAD_URLS = (
    ['javascript:alert(1)', 'javascript:'], ['JaVaScRiPt:alert(document.cookie)', 'JavaScript: in mixed case'],
    ["java\tscript:alert(1)", 'java<TAB>script:'], ['data:image/png;base64,iVBORw0KGgo=', 'data: image'],
    ['data:text/html,<script>alert(1)</script>', 'data: HTML'], ['vbscript:msgbox(1)', 'vbscript:'],
    ['/images/a.png', 'relative path'], ['a.png', 'relative name'], ['//cdn.example.com/a.png', 'scheme-relative'],
    ['http://', 'http:// alone'], ['https://', 'https:// alone'], ['ftp://cdn.example.com/a.png', 'ftp:'],
    ['https://cdn.example.com/a b.png', 'a space'], [' https://cdn.example.com/a.png', 'a leading space'],
    ["https://cdn.example.com/a.png\n", 'a trailing LF'], ["https://cdn.example.com/\r\nX: 1", 'CR/LF'],
    ["https://cdn.example.com/\x{1}.png", 'a control character'], ["https://cdn.exa\x{43c}ple.com/a.png", 'a non-ASCII host'],
    ['https://user:pw@cdn.example.com/a.png', 'userinfo'], ['https://cdn.example.com\\@evil.example/a.png', 'a backslash'],
    ['https://0x7f.0.0.1/a.png', 'a hex address'], ['https://cdn.example.com:99999/a.png', 'port 99999'],
    ['https://cdn.example.com/"onerror="alert(1)', 'a quote'],
);
our @GOOD_URLS = ('https://cdn.example.com/a.png', 'http://cdn.example.com/a.png?w=200&h=1#top',
                  'https://[2001:db8::1]:8443/a.png', 'https://xn--bcher-kva.example/a%20b.png', '');

sub check_url_field {
    my ($cred, $what, $path, $base, $field) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my $n = 0;
    my $body = sub { $n++; return { (map { $_ => "$base->{$_} $n" } keys %$base), $field => $_[0] } };
    my $keep = 'https://cdn.example.com/keep.png';
    my $rec = _create($what => $cred, $body->($keep), $path);
    for my $b (@BAD_URLS) {
        my ($u, $name) = @$b;
        for my $m ('POST', 'PATCH') {
            my $r = $m eq 'POST' ? req(POST => $path, $cred, $body->($u))
                                 : req(PATCH => "$path/$rec->{id}", $cred, { $field => $u });
            check_err($r, 400, 'invalid_url', "$m $path, $field $name");
            Test::More::like(ref $r->{json} eq 'HASH' ? $r->{json}{error} // '' : '', qr/\Q$field\E/,
                             "$m $path, $field $name: the message names $field");
            req(DELETE => "$path/$r->{json}{$what}{id}", $cred)
                if $r->{status} == 201 && ref $r->{json}{$what} eq 'HASH';
        }
    }
    my $g = req(GET => "$path/$rec->{id}", $cred);
    Test::More::is(((ref $g->{json} eq 'HASH' ? $g->{json}{$what} : undef) // {})->{$field}, $keep,
                   "$path: the refused PATCHes left $field as it was");
    for my $u (@GOOD_URLS) {
        my $r = req(POST => $path, $cred, $body->($u));
        Test::More::is($r->{status}, 201, "$path, $field '$u': 201") or Test::More::diag(diag_resp($r));
        Test::More::is((($r->{json} // {})->{$what} // {})->{$field}, $u, "$path, $field '$u': kept");
        $r = req(PATCH => "$path/$rec->{id}", $cred, { $field => $u });
        Test::More::is($r->{status}, 200, "$path, PATCH $field '$u': 200") or Test::More::diag(diag_resp($r));
        Test::More::is((($r->{json} // {})->{$what} // {})->{$field}, $u, "$path, PATCH $field '$u': kept");
    }
}

=head1 KEY FORMAT

Key format (DESIGN.md, src/lib/cms_key.h): prefix + base62(32 bytes) in 43 characters +
base62(CRC-32 of prefix + body) in 6, alphabet C<0-9A-Za-z>, left-padded with C<0>.

=over

=item base62($bytes, $width)

The big-endian number in C<$bytes> in base 62, left-padded with C<0> to C<$width>.

=item crc32($bytes)

zlib's CRC-32 (C<crc32('123456789') == 0xcbf43926>).

=item random_bytes($n)

C<$n> random bytes (C<rand>, not for secrets).

=item make_key($prefix, $bytes)

A well-formed key with a right checksum: C<$prefix> (default C<svc_live_>), C<$bytes>
(default 32 random bytes) in base62.

=item key_from_body($prefix, $body)

C<$prefix . $body> with its checksum appended (C<$body> as given, e.g. out of range).

=item checksum_ok($key)

Whether the last 6 characters are the checksum of the rest.

=item bad_checksum($key)

The key with the last character of its body changed (the body stays below 2^256), so the
checksum no longer matches.

=back

=cut

my @B62 = ('0' .. '9', 'A' .. 'Z', 'a' .. 'z');

sub base62 {
    my ($bytes, $width) = @_;
    my @n = unpack 'C*', $bytes;
    my $out = '';
    while (grep { $_ } @n) {
        my $rem = 0;
        for my $i (0 .. $#n) {
            my $v = $rem * 256 + $n[$i];
            $n[$i] = int($v / 62);
            $rem = $v % 62;
        }
        $out = $B62[$rem] . $out;
    }
    return ('0' x ($width - length $out)) . $out;
}

sub crc32 {
    my $crc = 0xffffffff;
    for my $c (unpack 'C*', shift) {
        $crc ^= $c;
        $crc = ($crc & 1) ? (($crc >> 1) ^ 0xedb88320) : ($crc >> 1) for 1 .. 8;
    }
    return $crc ^ 0xffffffff;
}

sub random_bytes { join '', map { chr int rand 256 } 1 .. $_[0] }

sub make_key {
    my ($prefix, $bytes) = @_;
    my $s = ($prefix // 'svc_live_') . base62($bytes // random_bytes(32), 43);
    return $s . base62(pack('N', crc32($s)), 6);
}

sub key_from_body {
    my ($prefix, $body) = @_;
    return "$prefix$body" . base62(pack('N', crc32("$prefix$body")), 6);
}

sub checksum_ok {
    my $k = shift;
    return length $k > 6 && base62(pack('N', crc32(substr $k, 0, -6)), 6) eq substr($k, -6);
}

sub bad_checksum {
    my $k = shift;
    my $i = length($k) - 7;
    substr($k, $i, 1) = substr($k, $i, 1) eq '0' ? '1' : '0';
    return $k;
}

=head1 EXTENSION API

Rows are written with C<psql> straight into the file's database; names and patient ids
take a counter so that every row is new.

=over

=item facility()

A new facility; returns its id.

=item extension($facility_id, $status)

A new extension of the facility (category C<payment>, C<$status> default C<running>) with
the privileges C<ext:billing:read ext:billing:write ext:control:write>; returns its id.

=item ext_key(%opts)

A new extension key, stored as the module stores one (prefix = its first 12 characters,
hash = C<HMAC-SHA256(pepper, key)>); returns the key. C<%opts>: C<fac>, C<ext> (ids),
C<live> (default 1: C<sk_live_>, else C<sk_sandbox_>), C<privs> (array reference, default
the three above), C<expires>, C<revoked> (SQL times, default NULL), C<prefix> (another key
prefix, e.g. to store a key of another family).

=item invoice($facility_id, $live, $amount)

A new invoice (C<$live> default 1, C<$amount> default 5000, XOF); returns its id.

=item idem()

A fresh C<Idempotency-Key> value.

=item post($path, $key, $body, @headers)

C<req(POST =E<gt> ...)> with a fresh C<Idempotency-Key> unless C<@headers> has one.

=item invoice_path($id), record_path($id), fail_path($id)

C</v1/ext/billing/invoices/ID>, C</v1/ext/billing/payments/ID/record> and C<.../fail>.

=item key_id($key)

The C<extension_keys> id of a key (looked up by its 12-character prefix).

=item redis_cli(@args)

Runs C<redis-cli -p TEST_CMS_REDIS_PORT @args>; returns its output (C<''> when none).

=item forget_redis($key)

Deletes every Redis idempotency record of an extension key (C<cms:idem:{KEY_ID}:*>):
what a lost Redis write looks like. Returns how many there were.

=item idem_records($key, $kind)

The Redis idempotency records of an extension key whose value starts with C<$kind>
(C<P>: a claim held, C<D>: a kept answer), as C<< { redis key => PTTL in ms } >>. A test
ends a lock or a retention by deleting them (C<redis_cli('DEL', keys %$h)>), which is
what their expiry does, instead of waiting for a window of wall-clock time.

=item lock_invoice_row($invoice_id)

Forks a child that holds C<SELECT ... FOR UPDATE> on the invoice row in its own
PostgreSQL session until C<release_hold> (or 120 seconds at most); returns the
handle.

=item hold_in_session($sql)

The same for any statements: runs C<$sql> in a transaction of a session of its own and
keeps the transaction open (its locks held) until C<release_hold($handle)>.

=item invoice_row_locked($invoice_id)

Waits up to 10 seconds until that session holds the lock (its statement done, its
transaction open); returns whether it does.

=item release_hold($handle)

Commits the child's transaction and waits for it; returns whether it committed.

=back

=cut

my $NFAC = 0;

sub facility { one("INSERT INTO facilities (name) VALUES ('facility " . ++$NFAC . "') RETURNING id") }

sub extension {
    my ($fac, $status) = @_;
    one("INSERT INTO extensions (facility_id, name, version, category, status, privileges)
         VALUES ('$fac', 'billing-" . ++$NFAC . "', '1.0.0', 'payment', '" . ($status || 'running') . "',
                 '{ext:billing:read,ext:billing:write,ext:control:write}') RETURNING id");
}

sub ext_key {
    my %o = @_;
    my $live = $o{live} // 1;
    my $k = make_key($o{prefix} // ($live ? 'sk_live_' : 'sk_sandbox_'));
    my $privs = join ',', @{$o{privs} // [qw(ext:billing:read ext:billing:write ext:control:write)]};
    my $hash = unpack 'H*', hmac_sha256($k, pepper());
    Cms::Test::psql(sprintf "INSERT INTO extension_keys (extension_id, facility_id, livemode, privileges,
                  key_prefix, secret_hash, expires_at, revoked_at)
                  VALUES ('%s', '%s', %s, '{%s}', '%s', decode('%s', 'hex'), %s, %s)",
         $o{ext}, $o{fac}, $live ? 'true' : 'false', $privs, substr($k, 0, 12), $hash,
         defined $o{expires} ? "'$o{expires}'" : 'NULL', defined $o{revoked} ? "'$o{revoked}'" : 'NULL');
    return $k;
}

sub invoice {
    my ($fac, $live, $amount) = @_;
    one(sprintf "INSERT INTO invoices (facility_id, livemode, patient_id, amount, currency)
                 VALUES ('%s', %s, 'patient-%d', %s, 'XOF') RETURNING id",
        $fac, ($live // 1) ? 'true' : 'false', ++$NFAC, $amount // 5000);
}

my $IDEM = 0;
sub idem { sprintf 'idem-%d-%d-%s', $$, ++$IDEM, int rand 1e9 }

sub post {
    my ($path, $key, $body, @extra) = @_;
    my %e = @extra;
    push @extra, 'Idempotency-Key' => idem() unless grep { lc $_ eq 'idempotency-key' } keys %e;
    return req(POST => $path, $key, $body, @extra);
}

sub invoice_path { "/v1/ext/billing/invoices/$_[0]" }
sub record_path { "/v1/ext/billing/payments/$_[0]/record" }
sub fail_path { "/v1/ext/billing/payments/$_[0]/fail" }

sub key_id { one("SELECT id FROM extension_keys WHERE key_prefix = '" . substr($_[0], 0, 12) . "'") }

sub redis_cli {
    open my $fh, '-|', 'redis-cli', '-p', $ENV{TEST_CMS_REDIS_PORT}, @_ or die "redis-cli: $!";
    local $/;
    my $out = <$fh>;
    close $fh;
    return $out // '';
}

sub forget_redis {
    my $kid = key_id($_[0]);
    my @keys = grep { length } split /\n/, redis_cli('--scan', '--pattern', "cms:idem:{$kid}:*");
    redis_cli('DEL', @keys) if @keys;
    return scalar @keys;
}

sub idem_records {
    my ($key, $kind) = @_;
    my $kid = key_id($key);
    my %h;
    for my $k (grep { length } split /\n/, redis_cli('--scan', '--pattern', "cms:idem:{$kid}:*")) {
        next unless substr(redis_cli('GET', $k), 0, 1) eq $kind;
        ($h{$k} = redis_cli('PTTL', $k)) =~ s/\s+//g;
    }
    return \%h;
}

sub lock_invoice_row {
    my $id = shift;
    return hold_in_session("SELECT 1 /* cms-hold $id */ FROM invoices WHERE id = '$id' FOR UPDATE;");
}

my %HOLDS;          # the write ends of the holds not yet released, by pid

sub hold_in_session {
    my $sql = shift;
    pipe(my $r, my $w) or die "pipe: $!";
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        # another hold's write end kept open here would keep that hold from ending
        close $_ for $w, values %HOLDS;
        # a psql of its own: the harness's ends each script with DISCARD ALL, which a
        # transaction left open refuses (its rows not in the test's output)
        open STDOUT, '>', '/dev/null' or POSIX::_exit(1);
        open my $ps, '|-', Cms::Test::psql_cmd(Cms::Test::db_name()) or POSIX::_exit(1);
        $ps->autoflush(1);
        print $ps "BEGIN;\n$sql\n";
        IO::Select->new($r)->can_read(120);         # the parent closes its end to release
        print $ps "COMMIT;\n";
        POSIX::_exit(close($ps) ? 0 : 1);
    }
    close $r;
    $HOLDS{$pid} = $w;
    return {pid => $pid, w => $w};
}

sub invoice_row_locked {
    my $id = shift;
    return Cms::Test::wait_until(10, sub {
        one("SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%cms-hold $id%'
             AND state = 'idle in transaction' AND pid <> pg_backend_pid()") > 0 });
}

sub release_hold {
    my $h = shift;
    delete $HOLDS{$h->{pid}};
    close $h->{w};
    waitpid $h->{pid}, 0;
    return $? == 0;
}

# a request's statement waits for that lock: it holds its claim meanwhile (bounded wait)
sub waiting_on_lock {
    return Cms::Test::wait_until($_[0] // 5, sub {
        one("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'
             AND pid <> pg_backend_pid()") > 0 });
}

=item rss_kb($pid)

The process's resident memory (VmRSS) in kB, 0 when it is gone.

=item upload_bytes($token, $workspace, $filename, $content_type, $bytes)

A file stored the studio's way: C<POST .../media/uploads> reserves it, C<PUT
.../media/{id}/content> sends the bytes. Dies unless both succeed; returns the media record
with C<key> (the storage key) added.

=cut

sub upload_bytes {
    my ($tok, $ws, $file, $type, $bytes) = @_;
    my $r = req(POST => "/v1/workspaces/$ws/media/uploads", $tok,
                { filename => $file, content_type => $type, size_bytes => length $bytes });
    die "reserve $file: " . diag_resp($r) unless $r->{status} == 201;
    my $u = $r->{json}{upload};
    $r = Cms::Test::http(PUT => "/v1/workspaces/$ws/media/$u->{asset_id}/content",
                         [Authorization => "Bearer $tok", 'Content-Type' => 'application/octet-stream'],
                         $bytes);
    die "upload $file: " . diag_resp($r) unless $r->{status} == 200;
    return { %{$r->{json}{media}}, key => $u->{storage_key} };
}

=item stream_upload(%o)

A raw upload too big to hold: C<PUT $o{path}> with C<Authorization: Bearer $o{token}>,
C<Content-Type: $o{type}> and C<Content-Length: $o{size}>, the body C<$o{chunk}-E<gt>($i)>
for C<$i> from 0 to C<$o{chunks} - 1> written as it is made, the answer read until the
server closes (C<$o{timeout}> seconds at most). The worker C<$o{worker}>'s RSS is sampled
while it runs. Returns C<{ status, answer, json, sha256 (of the body sent), before, peak,
after }> (kB).

=cut

sub rss_kb {
    open my $fh, '<', "/proc/$_[0]/status" or return 0;
    while (<$fh>) { return $1 if /^VmRSS:\s+(\d+)\s+kB/ }
    return 0;
}

sub stream_upload {
    my %o = @_;
    my $before = rss_kb($o{worker});
    my $peak = $before;
    my $sample = sub { my $now = rss_kb($o{worker}); $peak = $now if $now > $peak };
    my $sock = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => Cms::Test::port(), Proto => 'tcp')
        or die "connect: $!";
    print $sock "PUT $o{path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer $o{token}\r\n"
              . "Content-Type: $o{type}\r\nContent-Length: $o{size}\r\nConnection: close\r\n\r\n";
    my $sha = Digest::SHA->new(256);
    for my $i (0 .. $o{chunks} - 1) {
        my $c = $o{chunk}->($i);
        print $sock $c or die "write: $!";
        $sha->add($c);
        $sample->() if $i % 8 == 0;
    }
    my $answer = '';
    my $t0 = Time::HiRes::time();
    $sock->blocking(0);
    while (Time::HiRes::time() - $t0 < ($o{timeout} // 120)) {
        my $n = sysread($sock, my $buf, 65536);
        if (defined $n && $n == 0) { last }
        if (defined $n) { $answer .= $buf; next }
        $sample->();
        Time::HiRes::sleep(0.05);
    }
    close $sock;
    my ($status) = $answer =~ m{^HTTP/1\.1 (\d+)};
    my $json = eval { JSON::PP->new->decode(substr($answer, index($answer, "\r\n\r\n") + 4)) } // {};
    return { status => $status, answer => $answer, json => $json, sha256 => $sha->hexdigest,
             before => $before, peak => $peak, after => rss_kb($o{worker}) };
}

1;
