#!/usr/bin/perl
# Prints the hostile-input corpus that t/042-hostile.t sends (it runs this script on
# every run), from the route table and the mutation catalogue in __DATA__ below:
#
#   perl t/data/hostile/gen-corpus.pl | less
#
# A new route family adds its routes to "routes" (and, when its bodies share a shape,
# a "fieldsets" entry); nothing in t/042-hostile.t is per route.
#
# What comes out, per route:
#   - one control request (benign values, expected 2xx: proves the credential and the
#     base request are valid, so that the hostile cases reach the input checks);
#   - every path parameter x every "path" mutation;
#   - every query parameter x every "query" mutation;
#   - every body field x the mutations of its type ("types"), minus "null" for a
#     field that takes null as "not given" (an optional field, unless the fieldset says
#     "null": "error"): null is not a wrong type there;
#   - for a route with a JSON body, an unknown field with a 5,000-byte name;
#   - duplicate headers: two Authorization headers on every route; under /v1/ext and
#     /v1/extensions two Service-Version headers, and on their POSTs two
#     Idempotency-Key headers.
# Then the raw-HTTP cases ("raw"), each over its paths (a content route, /v1/ext/...,
# /v1/extensions, so that both error shapes are exercised).
#
# A route whose body is a file's raw bytes gives them as "raw_body" (a string, its
# placeholders filled by the test) with their "content_type", instead of "body".
#
# The output: {"cases": [...]} (one case a line).  A case:
#   name      what failed, for the failure list (method, route, what was mutated)
#   route     "METHOD /v1/path/:param" as in the C route tables ("*param": the rest
#             of the path)
#   target    path.P, query.P, body.F, header.H, or "control"
#   mutation  the mutation's id (see "mutations")
#   method, path, headers ([[name, value]...]), body (null: none)   -- an HTTP request
#   raw       the request bytes, sent as they are over a socket      -- a raw case
#   shape     "content" ({"error": text, "code": text}) or "ext" ({"error": {"type",
#             "message"}}): the error shape the answer must have
#   control   true: a 2xx is required (the benign request)
#   ok_2xx    a reason: a 2xx answer is also right for this case (README)
#   status    a list: the only statuses accepted (501, 505 cases); else 4xx, or 503
#             with Retry-After
#   type      the Content-Type of a 2xx answer when it is not JSON (a feed); errors
#             are JSON still
# Strings are byte strings: each character is one byte (code points 0-255; JSON
# "\u00ff" is the byte 0xff).  {{NAME}} placeholders are filled in by the test when it
# sends the case: {{a*5000}} is 5,000 'a' (any one character), {{cred:KIND}} a valid
# credential of that kind, {{idem}} a fresh Idempotency-Key, {{n}} a fresh number, the
# others a fixture (an id, a fresh email, a fresh manifest file...): see %FILL in
# t/042-hostile.t.
use strict;
use warnings;
use JSON::PP ();

my $IN = JSON::PP->new->utf8->relaxed;
my $OUT = JSON::PP->new->ascii->canonical;

my $data = do { local $/; <DATA> };
$data =~ s/^\s*#.*$//mg;                       # whole-line comments
my $T = $IN->decode($data);
my $M = $T->{mutations};

my @cases;

# "METHOD /path" -> (method, path)
sub split_route { my ($m, $p) = $_[0] =~ /^(\S+)\s+(\S+)$/ or die "bad route '$_[0]'\n"; ($m, $p) }

sub shape_of {
    my $p = shift;
    return $p =~ m{^/v1/ext(?:/|$|ensions(?:/|$))} ? 'ext' : 'content';
}

# The path with its :params filled in; %over replaces some of them.
sub fill_path {
    my ($tmpl, $params, %over) = @_;
    (my $p = $tmpl) =~ s{[:*](\w+)}{
        exists $over{$1} ? $over{$1}
        : defined $params->{$1} ? $params->{$1} : die "no value for :$1 in $tmpl\n"
    }ge;
    return $p;
}

# The body as JSON text with field $f (dotted: config.note) set to the raw JSON $raw.
sub body_with {
    my ($base, $f, $raw) = @_;
    my $b = $OUT->decode($OUT->encode($base));        # a deep copy
    return $OUT->encode($b) unless defined $f;
    my $sentinel = "\x01HOSTILE\x01";
    my @parts = split /\./, $f;
    my $o = $b;
    for my $k (@parts[0 .. $#parts - 1]) {
        $o->{$k} = {} unless ref $o->{$k} eq 'HASH';
        $o = $o->{$k};
    }
    $o->{$parts[-1]} = $sentinel;
    my $text = $OUT->encode($b);
    my $n = ($text =~ s/"\\u0001HOSTILE\\u0001"/$raw/);
    die "sentinel not found for $f\n" unless $n == 1;
    return $text;
}

sub desc { my $id = shift; ($M->{$id} // die "unknown mutation $id\n")->{desc} }

sub json_of {
    my $id = shift;
    if ($id =~ /^\[(\w+)\]$/) {                        # the value inside an array
        return '[' . json_of($1) . ']';
    }
    my $m = $M->{$id} // die "unknown mutation $id\n";
    return $m->{json} // die "mutation $id has no JSON form\n";
}

sub mdesc { my $id = shift; $id =~ /^\[(\w+)\]$/ ? 'an array holding ' . desc($1) : desc($id) }

for my $r (@{$T->{routes}}) {
    my ($method, $tmpl) = split_route($r->{route});
    my $shape = shape_of($tmpl);
    my $cred = $r->{cred} // die "$r->{route}: no cred\n";
    my $params = $r->{params} // {};
    my $query = $r->{query} // {};                  # name -> {value, ok_2xx}
    my $base = $r->{body};                          # undef: no body
    my $raw = $r->{raw_body};                       # a file's bytes as the body instead
    my $fs = $r->{fields};
    $fs = $T->{fieldsets}{$fs} // die "$r->{route}: no fieldset $fs\n" if defined $fs && !ref $fs;
    $fs //= {};
    my %required = map { $_ => 1 } @{$r->{required} // []};
    my %ok2 = %{$r->{ok_2xx} // {}};                 # "target mutation" -> reason

    my $auth = $cred eq 'none' ? () : ['Authorization', "Bearer {{cred:$cred}}"];
    my $idem = ($method eq 'POST' && $shape eq 'ext') ? ['Idempotency-Key', '{{idem}}'] : ();
    my $ctype = defined $base ? ['Content-Type', 'application/json']
              : defined $raw ? ['Content-Type', $r->{content_type} // 'application/octet-stream'] : ();

    my $add = sub {
        my (%c) = @_;
        my $path = $c{path} // fill_path($tmpl, $params);
        my @h = $c{headers} ? @{$c{headers}} : grep { defined } ($auth, $idem, $ctype);
        my %case = (
            name => "$r->{route} [$c{what}]", route => $r->{route}, target => $c{target},
            mutation => $c{mutation}, method => $method, path => $path, headers => \@h,
            body => exists $c{body} ? $c{body} : (defined $base ? body_with($base) : $raw),
            shape => $shape,
        );
        $case{control} = JSON::PP::true if $c{control};
        $case{type} = $r->{type} if defined $r->{type};
        my $why = $c{ok_2xx} // $ok2{"$c{target} $c{mutation}"};
        $case{ok_2xx} = $why if defined $why;
        push @cases, \%case;
    };

    # the control: every query parameter with its benign value
    my $qs = join '&', map { "$_=$query->{$_}{value}" } sort keys %$query;
    $add->(what => 'control: benign values', target => 'control', mutation => 'none', control => 1,
           path => fill_path($tmpl, $params) . (length $qs ? "?$qs" : ''));

    for my $p (sort keys %$params) {
        for my $id (@{$T->{path_mutations}}) {
            $add->(what => "path :$p = " . desc($id), target => "path.$p", mutation => $id,
                   path => fill_path($tmpl, $params, $p => $M->{$id}{query}));
        }
    }

    for my $q (sort keys %$query) {
        for my $id (@{$T->{query_mutations}}) {
            my $v = $query->{$q}{value};
            my $s = $id eq 'dup' ? "$q=$v&$q=$v" : "$q=$M->{$id}{query}";
            $add->(what => "query $q = " . desc($id), target => "query.$q", mutation => $id,
                   path => fill_path($tmpl, $params) . "?$s",
                   ok_2xx => ($query->{$q}{ok_2xx} // {})->{$id});
        }
    }

    for my $f (sort keys %$fs) {
        my $spec = $fs->{$f};
        my $list = $T->{types}{$spec->{type}} // die "$r->{route}: no type $spec->{type}\n";
        my $null_ok = !$required{$f} && ($spec->{null} // 'ok') ne 'error';
        for my $id (@$list) {
            next if $id eq 'null' && $null_ok;
            $add->(what => "body.$f = " . mdesc($id), target => "body.$f", mutation => $id,
                   body => body_with($base, $f, json_of($id)),
                   ok_2xx => ($spec->{ok_2xx} // {})->{$id});
        }
    }

    if (defined $base) {
        my $b = $OUT->decode($OUT->encode($base));
        $b->{'{{x*5000}}'} = 1;
        $add->(what => 'body: an unknown field with a 5000-byte name', target => 'body.*',
               mutation => 'long_name', body => $OUT->encode($b));
    }

    # duplicate headers
    my @dup_auth = $cred eq 'none' ? (['Authorization', 'Bearer {{cred:session}}']) x 2 : ($auth, $auth);
    $add->(what => 'two Authorization headers', target => 'header.Authorization', mutation => 'dup',
           headers => [@dup_auth, grep { defined } ($idem, $ctype)]);
    if ($shape eq 'ext') {
        if ($method eq 'POST') {
            $add->(what => 'two Idempotency-Key headers', target => 'header.Idempotency-Key',
                   mutation => 'dup',
                   headers => [grep { defined } ($auth, ['Idempotency-Key', '{{idem}}'],
                                                 ['Idempotency-Key', '{{idem}}'], $ctype)]);
        }
        $add->(what => 'two Service-Version headers', target => 'header.Service-Version',
               mutation => 'dup',
               headers => [grep { defined } ($auth, $idem, $ctype, ['Service-Version', '2024-06-01'],
                                             ['Service-Version', '2024-07-01'])]);
    }
}

# --- raw HTTP ------------------------------------------------------------------------

for my $c (@{$T->{raw}}) {
    my $set = ref $c->{paths} ? $c->{paths} : $T->{raw_paths}{$c->{paths}} // die "no path set $c->{paths}\n";
    for my $p (@$set) {
        my ($path, $shape, $cred) = @$p;
        my $req = $c->{request};
        my $authline = defined $cred ? "Authorization: Bearer {{cred:$cred}}\r\n" : '';
        $req =~ s/\{\{path\}\}/$path/g;
        $req =~ s/\{\{auth\}\}/$authline/g;
        $req =~ s/\{\{auth_value\}\}/defined $cred ? "Bearer {{cred:$cred}}" : 'Bearer x'/ge;
        my ($line) = $req =~ /^([^\r\n]*)/;
        $line =~ s/\{\{(.)\*(\d+)\}\}/<$2 x $1>/g;
        $line = substr($line, 0, 70) . '...' if length $line > 73;
        my %case = (name => "raw: $c->{case} [$line]", route => 'raw', target => 'raw', mutation => $c->{id},
                    raw => $req, shape => $shape);
        $case{status} = $c->{status} if $c->{status};
        push @cases, \%case;
    }
}

binmode STDOUT;
print "{\"generated_by\": \"t/data/hostile/gen-corpus.pl\",\n \"count\": " . scalar(@cases) . ",\n \"cases\": [\n";
print join(",\n", map { '  ' . $OUT->encode($_) } @cases), "\n]}\n";
printf STDERR "%d cases\n", scalar @cases;

__DATA__
{
# --- the mutations ---------------------------------------------------------------------
# "query": the value as it goes into a query string or a path segment (percent-encoded);
# "json": the JSON value that replaces a body field.  Bytes: "\u00ff" is the byte 0xff.
"mutations": {
  "utf8_ff":     {"desc": "invalid UTF-8 (\\xff)", "query": "%ff", "json": "\"a\u00ffb\""},
  "utf8_c328":   {"desc": "invalid UTF-8 (\\xc3\\x28)", "query": "%c3%28", "json": "\"a\u00c3(b\""},
  "nul":         {"desc": "a NUL byte (%00, \\u0000)", "query": "%00", "json": "\"a\\u0000b\""},
  "long":        {"desc": "5000 bytes", "query": "{{a*5000}}", "json": "\"{{a*5000}}\""},
  "long_digits": {"desc": "a 5000-digit number", "json": "{{1*5000}}"},
  "digits30":    {"desc": "a 30-digit number", "query": "123456789012345678901234567890",
                  "json": "123456789012345678901234567890"},
  "dup":         {"desc": "given twice"},
  "num":         {"desc": "wrong type: a number", "json": "42"},
  "str":         {"desc": "wrong type: a string", "json": "\"5\""},
  "bool":        {"desc": "wrong type: a boolean", "json": "true"},
  "object":      {"desc": "wrong type: an object", "json": "{\"a\":1}"},
  "array":       {"desc": "wrong type: an array", "json": "[1]"},
  "null":        {"desc": "wrong type: null", "json": "null"},
  "url_js":      {"desc": "a javascript: URL", "json": "\"javascript:alert(1)\""},
  "url_data":    {"desc": "a data: URL", "json": "\"data:text/html,<script>alert(1)</script>\""},
  "url_crlf":    {"desc": "CR/LF in a URL", "json": "\"https://a.example/\\r\\nX: 1\""},
  "url_userinfo": {"desc": "userinfo in a URL", "json": "\"https://a.example@evil.example/\""},
  "url_octal":   {"desc": "an octal address in a URL", "json": "\"https://0177.0.0.1/\""}
},
"path_mutations": ["utf8_ff", "utf8_c328", "nul", "long", "digits30"],
"query_mutations": ["utf8_ff", "utf8_c328", "nul", "long", "digits30", "dup"],
# "[x]": mutation x inside an array (for arrays of strings)
"types": {
  "string":   ["utf8_ff", "utf8_c328", "nul", "long", "digits30", "num", "bool", "object", "array", "null"],
  "url":      ["utf8_ff", "utf8_c328", "nul", "long", "digits30", "num", "bool", "object", "array", "null",
               "url_js", "url_data", "url_crlf", "url_userinfo", "url_octal"],
  "integer":  ["utf8_ff", "utf8_c328", "nul", "long_digits", "digits30", "str", "bool", "object", "array", "null"],
  "number":   ["utf8_ff", "utf8_c328", "nul", "long_digits", "digits30", "str", "bool", "object", "array", "null"],
  "boolean":  ["utf8_ff", "utf8_c328", "nul", "long", "digits30", "str", "num", "object", "array", "null"],
  "string[]": ["[utf8_ff]", "[utf8_c328]", "[nul]", "[long]", "[digits30]", "str", "num", "object", "null"],
  "object":   ["utf8_ff", "utf8_c328", "nul", "long", "digits30", "str", "num", "array", "null"]
},

# --- body shapes shared by several routes -----------------------------------------------
# "null": "error": null is refused even when the field is optional (not "not given").
# "ok_2xx": {mutation: reason}: a 2xx answer is right too.  A field a route ignores (a
# comment's status on create: always pending) is not in its set.
"fieldsets": {
  "article": {
    "title": {"type": "string"}, "slug": {"type": "string"}, "subtitle": {"type": "string"},
    "excerpt": {"type": "string"},
    "body": {"type": "string", "ok_2xx": {"long": "an article body is HTML of up to 512 KiB (spec: body string, sanitized server-side)"}},
    "status": {"type": "string"}, "locale": {"type": "string"}, "image_url": {"type": "url"},
    "category_id": {"type": "string"}, "clear_category": {"type": "boolean"},
    "author_id": {"type": "string"}, "tags": {"type": "string[]", "null": "error"},
    "is_featured": {"type": "boolean"}, "is_breaking": {"type": "boolean"},
    "is_opinion": {"type": "boolean"}, "focus_keyword": {"type": "string"},
    "read_time_minutes": {"type": "integer"}, "published_at": {"type": "string"},
    "autosave": {"type": "boolean"}
  },
  "category": {
    "name": {"type": "string"}, "slug": {"type": "string"},
    "description": {"type": "string", "ok_2xx": {"long": "a category description takes up to 5000 characters"}},
    "accent_color": {"type": "string"}, "image_url": {"type": "url"}, "locale": {"type": "string"},
    "display_order": {"type": "integer"}
  },
  "comment": {
    "article_id": {"type": "string"}, "parent_id": {"type": "string"}, "author_name": {"type": "string"},
    "author_email": {"type": "string"},
    "content": {"type": "string", "ok_2xx": {"long": "a comment takes up to 10,000 characters (README, API notes)"}}
  },
  "comment_patch": {
    "status": {"type": "string"},
    "content": {"type": "string", "null": "error", "ok_2xx": {"long": "a comment takes up to 10,000 characters (README, API notes)"}}
  },
  "subscriber": {"email": {"type": "string"}, "name": {"type": "string"}, "status": {"type": "string"}},
  "podcast_show": {
    "title": {"type": "string"}, "slug": {"type": "string"},
    "description": {"type": "string", "ok_2xx": {"long": "a show description takes up to 10,000 characters"}},
    "image_url": {"type": "url"}, "link": {"type": "url"}, "author": {"type": "string"},
    "language": {"type": "string"}, "category": {"type": "string"}, "explicit": {"type": "boolean"}
  },
  "podcast_episode": {
    "show_id": {"type": "string"}, "title": {"type": "string"},
    "description": {"type": "string", "ok_2xx": {"long": "an episode description takes up to 10,000 characters"}},
    "audio_url": {"type": "url"}, "audio_type": {"type": "string"}, "audio_size_bytes": {"type": "integer"},
    "duration_seconds": {"type": "integer"}, "episode_number": {"type": "integer"}, "status": {"type": "string"},
    "published_at": {"type": "string"}
  },
  "custom_module": {
    "slug": {"type": "string"}, "name": {"type": "string"}, "tagline": {"type": "string"},
    "enabled": {"type": "boolean"}, "schema": {"type": "object"}
  },
  "custom_entry": {
    "data": {"type": "object"}, "status": {"type": "string"},
    "data.title": {"type": "string", "ok_2xx": {"long": "a text field takes up to 10,000 characters (README, Custom modules)"}}
  },
  "video": {
    "title": {"type": "string"}, "slug": {"type": "string"},
    "description": {"type": "string", "ok_2xx": {"long": "a video description takes up to 5000 characters"}},
    "poster_url": {"type": "url"}, "stream_video_id": {"type": "string"},
    "stream_library_id": {"type": "string"}, "stream_status": {"type": "string"},
    "source_url": {"type": "url"}, "duration_seconds": {"type": "number"},
    "status": {"type": "string"}, "locale": {"type": "string"}, "published_at": {"type": "string"},
    "clear_stream": {"type": "boolean"}
  },
  "video_upload": {
    "title": {"type": "string"}
  },
  "media": {
    "type": {"type": "string"}, "title": {"type": "string"}, "url": {"type": "url"},
    "thumbnail_url": {"type": "url"}, "mime_type": {"type": "string"}, "size_bytes": {"type": "integer"},
    "folder": {"type": "string"}, "width": {"type": "integer"}, "height": {"type": "integer"}
  },
  "upload": {
    "filename": {"type": "string"}, "content_type": {"type": "string"}, "type": {"type": "string"},
    "title": {"type": "string"}, "size_bytes": {"type": "integer"}, "folder": {"type": "string"}
  },
  "finalize": {
    "data_base64": {"type": "string"}, "url": {"type": "url"}, "title": {"type": "string"},
    "thumbnail_url": {"type": "url"}, "width": {"type": "integer"}, "height": {"type": "integer"}
  },
  "site": {
    "name": {"type": "string"}, "mode": {"type": "string"}, "origin": {"type": "url"},
    "status": {"type": "string"}
  },
  "webhook": {
    "url": {"type": "url"}, "events": {"type": "string[]"}, "enabled": {"type": "boolean"},
    "description": {"type": "string"}
  },
  "page": {
    "slug": {"type": "string"}, "title": {"type": "string"}, "seo_title": {"type": "string"},
    "seo_description": {"type": "string"}, "og_image": {"type": "url"}, "position": {"type": "integer"}
  },
  "seo": {
    "score": {"type": "integer"}, "max_score": {"type": "integer"},
    "grade": {"type": "string", "ok_2xx": {"digits30": "a grade is any text of 1 to 32 characters (README, Article SEO records)"}},
    "focus_keyword": {"type": "string", "ok_2xx": {"digits30": "a focus keyword is any text up to 200 characters"}},
    "data": {"type": "object"}
  },
  "section_put": {
    "section_key": {"type": "string"}, "locale": {"type": "string"}, "data": {"type": "object"},
    "base_version": {"type": "integer"}
  },
  "section_field": {
    "section": {"type": "string"}, "field": {"type": "string"}, "locale": {"type": "string"},
    "value": {"type": "string", "ok_2xx": {"long": "a text value is up to 64 KiB (README, Page sections)"}}
  },
  "section_publish": {
    "section_key": {"type": "string"}, "locale": {"type": "string"}
  },
  "ext_config": {
    "note": {"type": "string"}, "count": {"type": "number"}, "flag": {"type": "boolean"},
    "token": {"type": "string"}
  }
},

# --- the routes (src/*.c: grep 'ngx_string("/') -----------------------------------------
# cred: none, session (the workspace owner), fresh_session (one per request: logout),
# fresh_user (a new account per request, password "hostile password 1": password change),
# api (svc_live_ with every scope), ext (sk_live_), admin (sk_admin_ with view and
# manage), ui_session (a user holding the extension's required_privilege).
# params: the values of the path's :params; query: name -> {value (benign), ok_2xx};
# body: the benign body (absent: none); fields: a fieldset or {name: {type...}};
# required: the fields the route requires (null is wrong for them).
"routes": [
  {"route": "GET /v1/health", "cred": "none"},
  {"route": "GET /v1/health/live", "cred": "none"},
  {"route": "GET /v1/health/ready", "cred": "none"},
  {"route": "GET /v1/openapi.json", "cred": "none", "type": "application/json"},
  {"route": "GET /v1/docs", "cred": "none", "type": "text/html"},
  {"route": "GET /v1/files/*key", "cred": "none", "params": {"key": "{{file_key}}"}, "type": "image/png"},
  {"route": "GET /v1/files/size/:width/*key", "cred": "none",
   "params": {"width": "w320", "key": "{{image_key}}"}, "type": "image/png"},
  {"route": "GET /v1/files/size/:width/format/:format/*key", "cred": "none",
   "params": {"width": "w320", "format": "webp", "key": "{{image_key}}"}, "type": "image/webp"},

  {"route": "POST /v1/auth/signup", "cred": "none",
   "body": {"email": "{{email}}", "password": "password number 1", "name": "Hostile"},
   "fields": {"email": {"type": "string"}, "password": {"type": "string"}, "name": {"type": "string"},
              "invitation": {"type": "string"}},
   "required": ["email", "password"]},
  {"route": "POST /v1/auth/login", "cred": "none",
   "body": {"email": "{{login_email}}", "password": "{{login_password}}"},
   "fields": {"email": {"type": "string"}, "password": {"type": "string"}},
   "required": ["email", "password"]},
  {"route": "POST /v1/auth/password-reset", "cred": "none", "body": {"email": "{{email}}"},
   "fields": {"email": {"type": "string"}}, "required": ["email"]},
  {"route": "POST /v1/auth/password-reset/confirm", "cred": "none",
   "body": {"token": "{{reset_token}}", "new_password": "hostile password 2"},
   "fields": {"token": {"type": "string"}, "new_password": {"type": "string"}},
   "required": ["token", "new_password"]},
  {"route": "POST /v1/auth/verify-email/request", "cred": "none", "body": {"email": "{{email}}"},
   "fields": {"email": {"type": "string"}}, "required": ["email"]},
  {"route": "POST /v1/auth/verify-email", "cred": "none", "body": {"token": "{{verify_token}}"},
   "fields": {"token": {"type": "string"}}, "required": ["token"]},
  {"route": "POST /v1/auth/logout", "cred": "fresh_session"},
  {"route": "GET /v1/me", "cred": "session"},

  {"route": "POST /v1/workspaces", "cred": "session",
   "body": {"name": "Hostile {{n}}"},
   "fields": {"name": {"type": "string"}, "default_locale": {"type": "string"}}, "required": ["name"]},
  {"route": "GET /v1/workspaces", "cred": "session",
   "query": {"limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "GET /v1/workspaces/:id", "cred": "session", "params": {"id": "{{ws}}"}},
  {"route": "POST /v1/workspaces/:id/api-keys", "cred": "session", "params": {"id": "{{ws}}"},
   "body": {"name": "hostile {{n}}", "scopes": ["articles:read"]},
   "fields": {"name": {"type": "string"}, "scopes": {"type": "string[]"}}, "required": ["name", "scopes"]},
  {"route": "GET /v1/workspaces/:id/api-keys", "cred": "session", "params": {"id": "{{ws}}"},
   "query": {"limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "DELETE /v1/workspaces/:id/api-keys/:key", "cred": "session",
   "params": {"id": "{{ws}}", "key": "{{victim_key}}"}},
  {"route": "GET /v1/api/key", "cred": "api"},

  {"route": "GET /v1/workspaces/:id/members", "cred": "session", "params": {"id": "{{ws}}"},
   "query": {"limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "PATCH /v1/workspaces/:id/members/:user", "cred": "session",
   "params": {"id": "{{ws}}", "user": "{{member}}"}, "body": {"role": "viewer"},
   "fields": {"role": {"type": "string"}}, "required": ["role"]},
  {"route": "DELETE /v1/workspaces/:id/members/:user", "cred": "session",
   "params": {"id": "{{ws}}", "user": "{{victim_member}}"}},
  {"route": "POST /v1/workspaces/:id/invitations", "cred": "session", "params": {"id": "{{ws}}"},
   "body": {"email": "{{email}}", "role": "viewer"},
   "fields": {"email": {"type": "string"}, "role": {"type": "string"}}, "required": ["email", "role"]},
  {"route": "GET /v1/workspaces/:id/invitations", "cred": "session", "params": {"id": "{{ws}}"},
   "query": {"limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "DELETE /v1/workspaces/:id/invitations/:inv", "cred": "session",
   "params": {"id": "{{ws}}", "inv": "{{victim_invitation}}"}},
  {"route": "POST /v1/invitations/:token/accept", "cred": "session", "params": {"token": "{{invite_token}}"}},
  {"route": "GET /v1/workspaces/:id/plan", "cred": "session", "params": {"id": "{{ws}}"}},
  {"route": "GET /v1/workspaces/:id/audit-events", "cred": "session", "params": {"id": "{{ws}}"},
   "query": {"limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "PATCH /v1/me", "cred": "session", "body": {"name": "Hostile {{n}}"},
   "fields": {"name": {"type": "string"}}},
  {"route": "POST /v1/me/password", "cred": "fresh_user",
   "body": {"current_password": "hostile password 1", "new_password": "hostile password 2"},
   "fields": {"current_password": {"type": "string"}, "new_password": {"type": "string"}},
   "required": ["current_password", "new_password"]},
  {"route": "PUT /v1/me/avatar", "cred": "session", "raw_body": "{{png}}", "content_type": "image/png"},
  {"route": "DELETE /v1/me/avatar", "cred": "session"},

  {"route": "GET /v1/api/articles", "cred": "api",
   "query": {"locale": {"value": "en"}, "status": {"value": "draft"},
             "limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "POST /v1/api/articles", "cred": "api", "body": {"title": "Hostile {{n}}"},
   "fields": "article", "required": ["title"]},
  {"route": "GET /v1/api/articles/:id", "cred": "api", "params": {"id": "{{article}}"}},
  {"route": "PATCH /v1/api/articles/:id", "cred": "api", "params": {"id": "{{article}}"},
   "body": {"title": "Patched {{n}}"}, "fields": "article"},
  {"route": "DELETE /v1/api/articles/:id", "cred": "api", "params": {"id": "{{victim_article}}"}},

  {"route": "GET /v1/workspaces/:ws/articles", "cred": "session", "params": {"ws": "{{ws}}"},
   "query": {"locale": {"value": "en"}, "status": {"value": "draft"},
             "limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "POST /v1/workspaces/:ws/articles", "cred": "session", "params": {"ws": "{{ws}}"},
   "body": {"title": "Hostile {{n}}"}, "fields": "article", "required": ["title"]},
  {"route": "GET /v1/workspaces/:ws/articles/:id", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{article}}"}},
  {"route": "PATCH /v1/workspaces/:ws/articles/:id", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{article}}"}, "body": {"title": "Patched {{n}}"}, "fields": "article"},
  {"route": "DELETE /v1/workspaces/:ws/articles/:id", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{victim_article}}"}},

  {"route": "GET /v1/api/categories", "cred": "api"},
  {"route": "POST /v1/api/categories", "cred": "api", "body": {"name": "Hostile {{n}}"},
   "fields": "category", "required": ["name"]},
  {"route": "GET /v1/api/categories/:id", "cred": "api", "params": {"id": "{{category}}"}},
  {"route": "PATCH /v1/api/categories/:id", "cred": "api", "params": {"id": "{{category}}"},
   "body": {"name": "Patched {{n}}"}, "fields": "category"},
  {"route": "DELETE /v1/api/categories/:id", "cred": "api", "params": {"id": "{{victim_category}}"}},

  {"route": "GET /v1/workspaces/:ws/categories", "cred": "session", "params": {"ws": "{{ws}}"}},
  {"route": "POST /v1/workspaces/:ws/categories", "cred": "session", "params": {"ws": "{{ws}}"},
   "body": {"name": "Hostile {{n}}"}, "fields": "category", "required": ["name"]},
  {"route": "GET /v1/workspaces/:ws/categories/:id", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{category}}"}},
  {"route": "PATCH /v1/workspaces/:ws/categories/:id", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{category}}"}, "body": {"name": "Patched {{n}}"}, "fields": "category"},
  {"route": "DELETE /v1/workspaces/:ws/categories/:id", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{victim_category}}"}},

  {"route": "GET /v1/api/comments", "cred": "api",
   "query": {"article_id": {"value": "{{article}}"}, "status": {"value": "pending"},
             "limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "POST /v1/api/comments", "cred": "api",
   "body": {"article_id": "{{article}}", "author_name": "Hostile", "content": "Hostile {{n}}"},
   "fields": "comment", "required": ["article_id", "author_name", "content"]},
  {"route": "PATCH /v1/api/comments/:id", "cred": "api", "params": {"id": "{{comment}}"},
   "body": {"status": "approved"}, "fields": "comment_patch"},
  {"route": "DELETE /v1/api/comments/:id", "cred": "api", "params": {"id": "{{victim_comment}}"}},
  {"route": "GET /v1/workspaces/:ws/comments", "cred": "session", "params": {"ws": "{{ws}}"},
   "query": {"article_id": {"value": "{{article}}"}, "status": {"value": "pending"},
             "limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "POST /v1/workspaces/:ws/comments", "cred": "session", "params": {"ws": "{{ws}}"},
   "body": {"article_id": "{{article}}", "author_name": "Hostile", "content": "Hostile {{n}}"},
   "fields": "comment", "required": ["article_id", "author_name", "content"]},
  {"route": "PATCH /v1/workspaces/:ws/comments/:id", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{comment}}"}, "body": {"status": "approved"}, "fields": "comment_patch"},
  {"route": "DELETE /v1/workspaces/:ws/comments/:id", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{victim_comment}}"}},

  {"route": "GET /v1/api/subscribers", "cred": "api", "query": {"status": {"value": "subscribed"}, "limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "POST /v1/api/subscribers", "cred": "api", "body": {"email": "{{email}}"},
   "fields": "subscriber", "required": ["email"]},
  {"route": "GET /v1/workspaces/:ws/subscribers", "cred": "session", "params": {"ws": "{{ws}}"},
   "query": {"status": {"value": "subscribed"}, "limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "POST /v1/workspaces/:ws/subscribers", "cred": "session", "params": {"ws": "{{ws}}"},
   "body": {"email": "{{email}}"}, "fields": "subscriber", "required": ["email"]},
  {"route": "POST /v1/unsubscribe/:token", "cred": "none", "params": {"token": "{{unsubscribe_token}}"}},

  {"route": "GET /v1/api/podcast-shows", "cred": "api", "query": {"limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "GET /v1/api/podcast-shows/:id", "cred": "api", "params": {"id": "{{show}}"}},
  {"route": "GET /v1/workspaces/:ws/podcast-shows", "cred": "session", "params": {"ws": "{{ws}}"},
   "query": {"limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "GET /v1/workspaces/:ws/podcast-shows/:id", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{show}}"}},
  {"route": "POST /v1/workspaces/:ws/podcast-shows", "cred": "session", "params": {"ws": "{{ws}}"},
   "body": {"title": "Hostile {{n}}"}, "fields": "podcast_show", "required": ["title"]},
  {"route": "PATCH /v1/workspaces/:ws/podcast-shows/:id", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{show}}"}, "body": {"description": "Patched {{n}}"},
   "fields": "podcast_show"},
  {"route": "DELETE /v1/workspaces/:ws/podcast-shows/:id", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{victim_show}}"}},
  {"route": "GET /v1/api/podcast-episodes", "cred": "api",
   "query": {"show_id": {"value": "{{show}}"}, "status": {"value": "published"}, "limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "POST /v1/api/podcast-episodes", "cred": "api",
   "body": {"show_id": "{{show}}", "title": "Hostile {{n}}", "audio_url": "https://cdn.example.com/h.mp3"},
   "fields": "podcast_episode", "required": ["show_id", "title", "audio_url"]},
  {"route": "GET /v1/workspaces/:ws/podcast-episodes", "cred": "session", "params": {"ws": "{{ws}}"},
   "query": {"show_id": {"value": "{{show}}"}, "status": {"value": "published"}, "limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "POST /v1/workspaces/:ws/podcast-episodes", "cred": "session", "params": {"ws": "{{ws}}"},
   "body": {"show_id": "{{show}}", "title": "Hostile {{n}}", "audio_url": "https://cdn.example.com/h.mp3"},
   "fields": "podcast_episode", "required": ["show_id", "title", "audio_url"]},
  {"route": "GET /v1/feeds/podcasts/:file", "cred": "none", "params": {"file": "{{show}}.xml"},
   "type": "application/rss+xml"},
  {"route": "GET /v1/workspaces/:id/custom-modules", "cred": "session", "params": {"id": "{{ws}}"}},
  {"route": "POST /v1/workspaces/:id/custom-modules", "cred": "session", "params": {"id": "{{ws}}"},
   "body": {"slug": "hx-{{n}}", "name": "Hostile {{n}}"}, "fields": "custom_module", "required": ["slug", "name"]},
  {"route": "PATCH /v1/workspaces/:id/custom-modules/:module", "cred": "session",
   "params": {"id": "{{ws}}", "module": "{{custom_module}}"}, "body": {"name": "Patched {{n}}"},
   "fields": "custom_module"},
  {"route": "DELETE /v1/workspaces/:id/custom-modules/:module", "cred": "session",
   "params": {"id": "{{ws}}", "module": "{{victim_module}}"}},

  {"route": "GET /v1/api/custom/:slug/entries", "cred": "api", "params": {"slug": "{{custom}}"},
   "query": {"sort": {"value": "-title"}, "filter[title]": {"value": "x", "ok_2xx": {"long": "a text filter takes up to 10,000 characters: a value no entry holds is an empty page", "digits30": "digits are text for a text field: an empty page"}},
             "limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "POST /v1/api/custom/:slug/entries", "cred": "api", "params": {"slug": "{{custom}}"},
   "body": {"data": {"title": "Hostile {{n}}"}}, "fields": "custom_entry"},
  {"route": "GET /v1/api/custom/:slug/entries/:id", "cred": "api",
   "params": {"slug": "{{custom}}", "id": "{{custom_entry}}"}},
  {"route": "PATCH /v1/api/custom/:slug/entries/:id", "cred": "api",
   "params": {"slug": "{{custom}}", "id": "{{custom_entry}}"}, "body": {"data": {"title": "Patched {{n}}"}},
   "fields": "custom_entry"},
  {"route": "DELETE /v1/api/custom/:slug/entries/:id", "cred": "api",
   "params": {"slug": "{{custom}}", "id": "{{victim_entry}}"}},

  {"route": "GET /v1/workspaces/:ws/custom/:slug/entries", "cred": "session",
   "params": {"ws": "{{ws}}", "slug": "{{custom}}"}, "query": {"sort": {"value": "title"}}},
  {"route": "POST /v1/workspaces/:ws/custom/:slug/entries", "cred": "session",
   "params": {"ws": "{{ws}}", "slug": "{{custom}}"}, "body": {"data": {"title": "Hostile {{n}}"}},
   "fields": "custom_entry"},
  {"route": "GET /v1/workspaces/:ws/custom/:slug/entries/:id", "cred": "session",
   "params": {"ws": "{{ws}}", "slug": "{{custom}}", "id": "{{custom_entry}}"}},
  {"route": "PATCH /v1/workspaces/:ws/custom/:slug/entries/:id", "cred": "session",
   "params": {"ws": "{{ws}}", "slug": "{{custom}}", "id": "{{custom_entry}}"},
   "body": {"data": {"title": "Patched {{n}}"}}, "fields": "custom_entry"},
  {"route": "DELETE /v1/workspaces/:ws/custom/:slug/entries/:id", "cred": "session",
   "params": {"ws": "{{ws}}", "slug": "{{custom}}", "id": "{{victim_entry}}"}},
  {"route": "GET /v1/api/videos", "cred": "api",
   "query": {"status": {"value": "draft"},
             "limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "POST /v1/api/videos", "cred": "api", "body": {"title": "Hostile {{n}}"},
   "fields": "video", "required": ["title"]},
  {"route": "GET /v1/api/videos/:id", "cred": "api", "params": {"id": "{{video}}"}},
  {"route": "PATCH /v1/api/videos/:id", "cred": "api", "params": {"id": "{{video}}"},
   "body": {"title": "Patched {{n}}"}, "fields": "video"},
  {"route": "DELETE /v1/api/videos/:id", "cred": "api", "params": {"id": "{{victim_video}}"}},

  {"route": "GET /v1/workspaces/:ws/videos", "cred": "session", "params": {"ws": "{{ws}}"},
   "query": {"status": {"value": "draft"},
             "limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "POST /v1/workspaces/:ws/videos", "cred": "session", "params": {"ws": "{{ws}}"},
   "body": {"title": "Hostile {{n}}"}, "fields": "video", "required": ["title"]},
  {"route": "GET /v1/workspaces/:ws/videos/:id", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{video}}"}},
  {"route": "PATCH /v1/workspaces/:ws/videos/:id", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{video}}"}, "body": {"title": "Patched {{n}}"}, "fields": "video"},
  {"route": "DELETE /v1/workspaces/:ws/videos/:id", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{victim_video}}"}},
  {"route": "POST /v1/workspaces/:id/videos/upload-credentials", "cred": "session", "params": {"id": "{{ws}}"},
   "body": {"title": "Hostile {{n}}"}, "fields": "video_upload"},
  {"route": "GET /v1/workspaces/:id/videos/stream/:stream/status", "cred": "session",
   "params": {"id": "{{ws}}", "stream": "{{stream}}"}},

  {"route": "GET /v1/api/media", "cred": "api",
   "query": {"type": {"value": "image"},
             "limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "GET /v1/workspaces/:id/sites", "cred": "session", "params": {"id": "{{ws}}"}},
  {"route": "POST /v1/workspaces/:id/sites", "cred": "session", "params": {"id": "{{siteless_ws}}"},
   "body": {"name": "Hostile {{n}}"}, "fields": "site", "required": ["name"]},
  {"route": "GET /v1/workspaces/:id/sites/:site", "cred": "session",
   "params": {"id": "{{ws}}", "site": "{{site}}"}},
  {"route": "PATCH /v1/workspaces/:id/sites/:site", "cred": "session",
   "params": {"id": "{{ws}}", "site": "{{site}}"}, "body": {"name": "Hostile {{n}}"}, "fields": "site"},
  {"route": "DELETE /v1/workspaces/:id/sites/:site", "cred": "session",
   "params": {"id": "{{victim_site_ws}}", "site": "{{victim_site}}"}},
  {"route": "POST /v1/workspaces/:id/sites/:site/publishable-key/rotate", "cred": "session",
   "params": {"id": "{{ws}}", "site": "{{site}}"}},
  {"route": "GET /v1/workspaces/:id/sites/:site/pages", "cred": "session",
   "params": {"id": "{{ws}}", "site": "{{site}}"},
   "query": {"limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "POST /v1/workspaces/:id/sites/:site/pages", "cred": "session",
   "params": {"id": "{{ws}}", "site": "{{site}}"}, "body": {"slug": "/hostile-{{n}}", "title": "Hostile"},
   "fields": "page", "required": ["slug", "title"]},
  {"route": "GET /v1/workspaces/:id/sites/:site/pages/:page", "cred": "session",
   "params": {"id": "{{ws}}", "site": "{{site}}", "page": "{{page}}"}},
  {"route": "PATCH /v1/workspaces/:id/sites/:site/pages/:page", "cred": "session",
   "params": {"id": "{{ws}}", "site": "{{site}}", "page": "{{page}}"}, "body": {"title": "Hostile {{n}}"},
   "fields": "page"},
  {"route": "DELETE /v1/workspaces/:id/sites/:site/pages/:page", "cred": "session",
   "params": {"id": "{{ws}}", "site": "{{site}}", "page": "{{victim_page}}"}},

  {"route": "GET /v1/api/webhooks", "cred": "api",
   "query": {"limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "POST /v1/api/webhooks", "cred": "api", "body": {"url": "https://93.184.216.34/hostile-{{n}}"},
   "fields": "webhook", "required": ["url"]},
  {"route": "GET /v1/api/webhooks/:id", "cred": "api", "params": {"id": "{{webhook}}"}},
  {"route": "PATCH /v1/api/webhooks/:id", "cred": "api", "params": {"id": "{{webhook}}"},
   "body": {"description": "Patched {{n}}"}, "fields": "webhook"},
  {"route": "DELETE /v1/api/webhooks/:id", "cred": "api", "params": {"id": "{{victim_webhook}}"}},
  {"route": "POST /v1/api/webhooks/:id/secret/rotate", "cred": "api", "params": {"id": "{{webhook}}"}},
  {"route": "GET /v1/workspaces/:ws/webhooks", "cred": "session", "params": {"ws": "{{ws}}"}},
  {"route": "POST /v1/workspaces/:ws/webhooks", "cred": "session", "params": {"ws": "{{ws}}"},
   "body": {"url": "https://93.184.216.34/hostile-{{n}}"}, "fields": "webhook", "required": ["url"]},
  {"route": "GET /v1/workspaces/:ws/webhooks/:id", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{webhook}}"}},
  {"route": "PATCH /v1/workspaces/:ws/webhooks/:id", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{webhook}}"}, "body": {"description": "Patched {{n}}"}, "fields": "webhook"},
  {"route": "DELETE /v1/workspaces/:ws/webhooks/:id", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{victim_webhook}}"}},
  {"route": "POST /v1/workspaces/:ws/webhooks/:id/secret/rotate", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{webhook}}"}},
  {"route": "GET /v1/api/webhooks/:id/deliveries", "cred": "api", "params": {"id": "{{webhook}}"},
   "query": {"limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "POST /v1/api/webhooks/:id/deliveries/:deliveryId/redeliver", "cred": "api",
   "params": {"id": "{{webhook}}", "deliveryId": "{{delivery}}"}},
  {"route": "POST /v1/api/webhooks/:id/test", "cred": "api", "params": {"id": "{{webhook}}"}},
  {"route": "GET /v1/workspaces/:ws/webhooks/:id/deliveries", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{webhook}}"}},
  {"route": "POST /v1/workspaces/:ws/webhooks/:id/deliveries/:deliveryId/redeliver", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{webhook}}", "deliveryId": "{{delivery}}"}},
  {"route": "POST /v1/workspaces/:ws/webhooks/:id/test", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{webhook}}"}},
  {"route": "POST /v1/workspaces/:id/articles/:article/lock", "cred": "session",
   "params": {"id": "{{ws}}", "article": "{{article}}"}},
  {"route": "DELETE /v1/workspaces/:id/articles/:article/lock", "cred": "session",
   "params": {"id": "{{ws}}", "article": "{{article}}"}},
  {"route": "GET /v1/workspaces/:id/articles/:article/seo", "cred": "session",
   "params": {"id": "{{ws}}", "article": "{{article}}"}},
  {"route": "PUT /v1/workspaces/:id/articles/:article/seo", "cred": "session",
   "params": {"id": "{{ws}}", "article": "{{article}}"}, "body": {"score": 1, "max_score": 10}, "fields": "seo"},

  {"route": "GET /v1/api/pages/:id/sections", "cred": "api", "params": {"id": "{{page}}"}, "query": {"locale": {"value": "en"}}},
  {"route": "PUT /v1/api/pages/:id/sections", "cred": "api", "params": {"id": "{{page}}"},
   "body": {"section_key": "hostile", "data": {"t": "x"}}, "fields": "section_put", "required": ["section_key"]},
  {"route": "POST /v1/api/pages/:id/sections/fields", "cred": "api", "params": {"id": "{{page}}"},
   "body": {"section": "hostile", "field": "f", "value": "v"}, "fields": "section_field",
   "required": ["section", "field", "value"]},
  {"route": "POST /v1/api/pages/:id/sections/publish", "cred": "api", "params": {"id": "{{page}}"}, "body": {}, "fields": "section_publish"},
  {"route": "GET /v1/workspaces/:ws/pages/:id/sections", "cred": "session", "params": {"ws": "{{ws}}", "id": "{{page}}"}, "query": {"locale": {"value": "en"}}},
  {"route": "PUT /v1/workspaces/:ws/pages/:id/sections", "cred": "session", "params": {"ws": "{{ws}}", "id": "{{page}}"},
   "body": {"section_key": "hostile", "data": {"t": "x"}}, "fields": "section_put", "required": ["section_key"]},
  {"route": "POST /v1/workspaces/:ws/pages/:id/sections/fields", "cred": "session", "params": {"ws": "{{ws}}", "id": "{{page}}"},
   "body": {"section": "hostile", "field": "f", "value": "v"}, "fields": "section_field",
   "required": ["section", "field", "value"]},
  {"route": "POST /v1/workspaces/:ws/pages/:id/sections/publish", "cred": "session", "params": {"ws": "{{ws}}", "id": "{{page}}"}, "body": {}, "fields": "section_publish"},

  {"route": "GET /v1/public/site", "cred": "pk"},
  {"route": "GET /v1/public/pages", "cred": "pk"},
  {"route": "GET /v1/public/pages/:id/sections", "cred": "pk", "params": {"id": "{{page}}"},
   "query": {"locale": {"value": "en"}}},
  {"route": "GET /v1/public/sections", "cred": "pk", "query": {"path": {"value": "/target"}, "locale": {"value": "en"}}},
  {"route": "GET /v1/public/custom/:slug/entries", "cred": "pk", "params": {"slug": "{{custom}}"},
   "query": {"limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "GET /v1/public/custom/:slug/entries/:id", "cred": "pk",
   "params": {"slug": "{{custom}}", "id": "{{custom_entry}}"}},

  {"route": "POST /v1/api/media", "cred": "api", "body": {"title": "Hostile {{n}}", "mime_type": "image/png"},
   "fields": "media"},
  {"route": "GET /v1/api/media/:id", "cred": "api", "params": {"id": "{{media}}"}},

  {"route": "GET /v1/workspaces/:ws/media", "cred": "session", "params": {"ws": "{{ws}}"},
   "query": {"type": {"value": "image"},
             "limit": {"value": "10", "ok_2xx": {"digits30": "README, Pagination: a limit out of 1-100 falls back to 50"}},
             "offset": {"value": "0", "ok_2xx": {"digits30": "README, Pagination: a non-numeric or out-of-range offset is 0"}}}},
  {"route": "POST /v1/workspaces/:ws/media", "cred": "session", "params": {"ws": "{{ws}}"},
   "body": {"title": "Hostile {{n}}", "mime_type": "image/png"}, "fields": "media"},
  {"route": "GET /v1/workspaces/:ws/media/:id", "cred": "session",
   "params": {"ws": "{{ws}}", "id": "{{media}}"}},
  {"route": "DELETE /v1/workspaces/:id/media/:key", "cred": "session",
   "params": {"id": "{{ws}}", "key": "{{victim_media}}"}},
  {"route": "POST /v1/workspaces/:id/media/uploads", "cred": "session", "params": {"id": "{{ws}}"},
   "body": {"title": "Hostile {{n}}", "content_type": "image/png"}, "fields": "upload"},
  {"route": "POST /v1/workspaces/:id/media/:key/finalize", "cred": "session",
   "params": {"id": "{{ws}}", "key": "{{pending_upload}}"}, "body": {}, "fields": "finalize"},
  {"route": "PUT /v1/workspaces/:id/media/:key/content", "cred": "session",
   "params": {"id": "{{ws}}", "key": "{{pending_upload}}"}, "body": {"hostile": 1},
   "ok_2xx": {"body.* long_name": "README, Uploads: the raw body is the file; a JSON text is a file like any other"}},

  {"route": "GET /v1/ext/billing/invoices/:id", "cred": "ext", "params": {"id": "{{invoice}}"}},
  {"route": "POST /v1/ext/billing/payments/:id/record", "cred": "ext", "params": {"id": "{{fresh_invoice}}"},
   "body": {"reference": "ref-{{n}}", "amount": 5000},
   "fields": {"reference": {"type": "string"}, "amount": {"type": "number"}, "method": {"type": "string"}},
   "required": ["reference", "amount"]},
  {"route": "POST /v1/ext/billing/payments/:id/fail", "cred": "ext", "params": {"id": "{{fresh_invoice}}"},
   "body": {"reason": "insufficient_funds"}, "fields": {"reason": {"type": "string"}}, "required": ["reason"]},
  {"route": "POST /v1/ext/control/drain-complete", "cred": "ext", "body": {}},

  {"route": "GET /v1/extensions", "cred": "admin",
   "query": {"category": {"value": "payment", "ok_2xx": {"digits30": "a category is a filter: one no extension has is an empty page (t/300)"}},
             "enabled": {"value": "true"},
             "starting_after": {"value": "a", "ok_2xx": {"digits30": "README: starting_after is a name; one not installed pages from the next name (t/300)"}},
             "limit": {"value": "5"}}},
  {"route": "POST /v1/extensions", "cred": "admin",
   "body": {"manifest_url": "file:{{manifest}}", "config": {"note": "x"}},
   "fields": {"manifest_url": {"type": "string"}, "config": {"type": "object", "null": "error"},
              "config.note": {"type": "string"}, "config.count": {"type": "number"},
              "config.flag": {"type": "boolean"}, "config.token": {"type": "string"}},
   "required": ["manifest_url"]},
  {"route": "PUT /v1/extensions/:name/config", "cred": "admin", "params": {"name": "{{ext_conf}}"},
   "body": {"note": "x"}, "fields": "ext_config"},
  {"route": "POST /v1/extensions/:name/reload", "cred": "admin", "params": {"name": "{{ext_running}}"}},
  {"route": "POST /v1/extensions/:name/keys/rotate", "cred": "admin", "params": {"name": "{{ext_conf}}"}},
  {"route": "GET /v1/extensions/:name/ui-token", "cred": "ui_session", "params": {"name": "{{ext_conf}}"},
   "query": {"facility_id": {"value": "{{facility}}"}}}
],

# --- raw HTTP ---------------------------------------------------------------------------
# {{path}}: each of the case's paths; {{auth}}: an Authorization line with a valid
# credential for that path (none for a route without one); {{auth_value}}: its value.
"raw_paths": {
  "get":  [["/v1/me", "content", "session"],
           ["/v1/ext/billing/invoices/{{invoice}}", "ext", "ext"],
           ["/v1/extensions", "ext", "admin"]],
  "post": [["/v1/auth/login", "content", null],
           ["/v1/ext/control/drain-complete", "ext", "ext"],
           ["/v1/extensions/{{ext_conf}}/keys/rotate", "ext", "admin"]]
},
"raw": [
  {"id": "dup_authorization", "case": "two Authorization headers (a valid one, then another)", "paths": "get",
   "request": "GET {{path}} HTTP/1.1\r\nHost: localhost\r\nAuthorization: {{auth_value}}\r\nAuthorization: Bearer x\r\nConnection: close\r\n\r\n"},
  {"id": "big_header", "case": "a header over 8 KB", "paths": "get",
   "request": "GET {{path}} HTTP/1.1\r\nHost: localhost\r\n{{auth}}X-Filler: {{f*9000}}\r\nConnection: close\r\n\r\n"},
  {"id": "big_url", "case": "a URL over 8 KB", "paths": "get",
   "request": "GET {{path}}?pad={{p*9000}} HTTP/1.1\r\nHost: localhost\r\n{{auth}}Connection: close\r\n\r\n"},
  {"id": "bad_content_length", "case": "a non-numeric Content-Length", "paths": "post",
   "request": "POST {{path}} HTTP/1.1\r\nHost: localhost\r\n{{auth}}Idempotency-Key: {{idem}}\r\nContent-Type: application/json\r\nContent-Length: abc\r\nConnection: close\r\n\r\n{}"},
  {"id": "cl_and_te", "case": "Content-Length beside Transfer-Encoding: chunked", "paths": "post",
   "request": "POST {{path}} HTTP/1.1\r\nHost: localhost\r\n{{auth}}Idempotency-Key: {{idem}}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n"},
  {"id": "trace", "case": "TRACE", "paths": "get",
   "request": "TRACE {{path}} HTTP/1.1\r\nHost: localhost\r\n{{auth}}Connection: close\r\n\r\n"},
  {"id": "nul_in_path", "case": "%00 in the path", "paths": "get",
   "request": "GET {{path}}%00 HTTP/1.1\r\nHost: localhost\r\n{{auth}}Connection: close\r\n\r\n"},
  {"id": "bad_host_slash", "case": "Host: a/b", "paths": "get",
   "request": "GET {{path}} HTTP/1.1\r\nHost: a/b\r\n{{auth}}Connection: close\r\n\r\n"},
  {"id": "bad_host_dots", "case": "Host: ..", "paths": "get",
   "request": "GET {{path}} HTTP/1.1\r\nHost: ..\r\n{{auth}}Connection: close\r\n\r\n"},
  {"id": "http_9_9", "case": "HTTP/9.9 (505)", "paths": "get", "status": [505],
   "request": "GET {{path}} HTTP/9.9\r\nHost: localhost\r\n{{auth}}Connection: close\r\n\r\n"},
  {"id": "te_gzip", "case": "Transfer-Encoding: gzip (501)", "paths": "post", "status": [501],
   "request": "POST {{path}} HTTP/1.1\r\nHost: localhost\r\n{{auth}}Idempotency-Key: {{idem}}\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip\r\nConnection: close\r\n\r\n{}"},
  {"id": "no_slash", "case": "a path without its trailing slash",
   "paths": [["/v1", "content", null], ["/v1/ext", "ext", "ext"]],
   "request": "GET {{path}} HTTP/1.1\r\nHost: localhost\r\n{{auth}}Connection: close\r\n\r\n"},
  {"id": "outside", "case": "a path outside /v1/ or no route",
   "paths": [["/index.html", "content", null], ["/", "content", null],
             ["/v1/ext/nope", "ext", "ext"], ["/v1/extensions/", "ext", "admin"]],
   "request": "GET {{path}} HTTP/1.1\r\nHost: localhost\r\n{{auth}}Connection: close\r\n\r\n"}
]
}
