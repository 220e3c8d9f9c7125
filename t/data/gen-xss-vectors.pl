#!/usr/bin/perl
# Writes t/data/xss-vectors.txt, the XSS corpus read by t/unit/test_sanitize.c and
# t/090-sanitizer-browser.t, from the shared public-vector file plus the
# hand-written vectors below.  Run again after either changes:
#
#   perl t/data/gen-xss-vectors.pl .../shared/data/xss-public.json > t/data/xss-vectors.txt
#
# Output format (easy to read from C): "#" comment lines, then one record per
# vector: "=== <id> <source> <category> <length>\n", <length> raw payload bytes, "\n".
use strict;
use warnings;
use JSON::PP;

my $src = shift or die "usage: $0 xss-public.json > xss-vectors.txt\n";
open my $fh, '<:raw', $src or die "$src: $!\n";
my $doc = JSON::PP->new->utf8->decode(do { local $/; <$fh> });

# Project-written vectors aimed at this sanitizer's own rules: scheme checks on
# decoded values, parser-differential (mXSS) shapes, nesting the walk must not
# let through, and dropped containers.  Each must come out inert.
my @local = (
    '<a href="java&#x09;script:alert(1)">tab entity</a>',
    '<a href="&#106;avascript:alert(1)">decimal entity</a>',
    '<a href="&#x6A;avascript&#x3A;alert(1)">hex entities</a>',
    '<a href="javascript&colon;alert(1)">named colon</a>',
    '<a href="JaVaScRiPt:alert(1)">mixed case</a>',
    '<a href="  javascript:alert(1)">leading spaces</a>',
    "<a href=\"\x01\x02javascript:alert(1)\">leading controls</a>",
    '<a href="&#1;&#31;javascript:alert(1)">controls as entities</a>',
    "<a href=\"java\nscript:alert(1)\">newline</a>",
    '<a href="jav&#x0D;ascript:alert(1)">carriage return</a>',
    '<a href="javascript&#0000058alert(1)">padded colon, no semicolon</a>',
    '<a href="vbscript:msgbox(1)">vbscript</a>',
    '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">data</a>',
    '<a href="DATA:text/html,<script>alert(1)</script>">DATA</a>',
    '<img src="javascript:alert(1)">',
    '<img src="data:image/svg+xml,<svg onload=alert(1)>">',
    '<img src="https://example.com/a.png" onerror="alert(1)" onload="alert(2)">',
    '<img src=x onerror=alert(1)>',
    '<img srcset="x 1x" src="https://example.com/a.png" onerror=alert(1)>',
    '<p><svg><style><img src=x onerror=alert(1)></style></svg></p>',
    '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
    '<math><mtext><table><mglyph><style><!--</style><img title="--&gt;&lt;/mglyph&gt;&lt;img src=1 onerror=alert(1)&gt;">',
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>',
    '<!--<img src="--><img src=x onerror=alert(1)//">',
    '<xmp><p title="</xmp><img src=x onerror=alert(1)>"></xmp>',
    '<textarea><p title="</textarea><img src=x onerror=alert(1)>"></textarea>',
    '<title><img src=x onerror=alert(1)></title>',
    '<template><img src=x onerror=alert(1)></template>',
    '<select><template><style><img src=x onerror=alert(1)></style></template></select>',
    '<form><math><mtext></form><form><mglyph><style></math><img src=x onerror=alert(1)>',
    '<svg><p><style><img src=x onerror=alert(1)></style></p></svg>',
    '<svg><a xlink:href="javascript:alert(1)"><text x="20" y="20">XSS</text></a></svg>',
    '<svg><animate attributeName=href values=javascript:alert(1) /><a><text>X</text></a></svg>',
    '<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>',
    '<iframe src="javascript:alert(1)"></iframe>',
    '<object data="javascript:alert(1)"></object>',
    '<embed src="javascript:alert(1)">',
    '<base href="javascript:alert(1)//"><a href="/x">relative</a>',
    '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    '<link rel="import" href="data:text/html,<script>alert(1)</script>">',
    '<form action="javascript:alert(1)"><button>go</button></form>',
    '<button formaction="javascript:alert(1)">go</button>',
    '<input autofocus onfocus=alert(1)>',
    '<details open ontoggle=alert(1)>x</details>',
    '<video><source onerror=alert(1)></video>',
    '<audio src=x onerror=alert(1)></audio>',
    '<body onload=alert(1)>',
    '<div style="background:url(javascript:alert(1))">style</div>',
    '<a href="https://example.com/" onclick="alert(1)" style="x:expression(alert(1))">ok</a>',
    '<a href="https://example.com/" target="_top">target</a>',
    '<table background="javascript:alert(1)"><tr><td onclick=alert(1)>x</td></tr></table>',
    '<isindex action="javascript:alert(1)" type="image">',
    '<marquee onstart=alert(1)>x</marquee>',
    '<p><marquee><p>nested p via marquee</p></marquee></p>',
    '<li><section><li>nested li via section</li></section></li>',
    '<h1><span><h2>heading in heading</h2></span></h1>',
    '<a href="/a"><font><a href="/b">nested a</a></font></a>',
    '<pre><span>' . "\n" . 'leading newline</span></pre>',
    '<table><caption><table><td>x</td></table></caption></table>',
    '<scr<script>ipt>alert(1)</scr</script>ipt>',
    '<<script>script>alert(1)<</script>/script>',
    '<script/src=data:,alert(1)></script>',
    '<img/src=x/onerror=alert(1)>',
    '<img """><script>alert(1)</script>">',
    '<a href="javas&Tab;cript:alert(1)">Tab entity</a>',
    '<a href="&NewLine;javascript:alert(1)">NewLine entity</a>',
    '<a href="javascript&colon;alert&lpar;1&rpar;">parens</a>',
    '<a href="mailto:someone@example.com">mail</a>',
    '<a href="//example.com/x">protocol-relative</a>',
    '<a href="?q=javascript:alert(1)">query</a>',
    '<style>@import "javascript:alert(1)";</style><p>after style</p>',
    '<div><![CDATA[<img src=x onerror=alert(1)>]]></div>',
    '<?xml version="1.0"?><img src=x onerror=alert(1)>',
    '<svg><![CDATA[><image xlink:href="]]><img src=x onerror=alert(1)//"></svg>',
);

my @out;
for my $v (@{ $doc->{vectors} }) {
    push @out, [$v->{id}, $v->{source}, $v->{category}, $v->{payload}];
}
my $n = 0;
push @out, ['local-' . $n++, 'local', 'attack', $_] for @local;

my $s = $doc->{sources};
binmode STDOUT, ':raw';
print "# XSS vectors for the HTML sanitizer tests (t/unit/test_sanitize.c,\n",
      "# t/090-sanitizer-browser.t).  Generated by t/data/gen-xss-vectors.pl from\n",
      "# shared/data/xss-public.json (generated $doc->{generated}); do not edit.\n",
      "#\n# Sources:\n";
for my $k (sort keys %$s) {
    print "#   $k: $s->{$k}{repo} $s->{$k}{path} at $s->{$k}{commit},\n",
          "#     $s->{$k}{entries} entries, license $s->{$k}{license}\n";
}
print "#   local: ", scalar(@local), " vectors written for this project (in the generator)\n",
      "#\n# ", scalar(@out), " records: \"=== <id> <source> <category> <length>\\n\",\n",
      "# <length> payload bytes, \"\\n\".\n";
for my $r (@out) {
    my $bytes = $r->[3];
    utf8::encode($bytes);
    print "=== $r->[0] $r->[1] $r->[2] ", length($bytes), "\n", $bytes, "\n";
}
