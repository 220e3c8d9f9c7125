package Yaml;
# A small YAML writer for openapi/build: maps keep the order they are
# written in (an "ordered map" is an array blessed into Yaml::Map, made by
# Yaml::o(k => v, ...)), so the document reads top-down as written.  Plain
# Perl hashes are written with sorted keys.  Strings that YAML could read
# as something else (numbers, booleans, null, anything with ':' '#' and
# the like) are written double-quoted; multi-line strings as '|' blocks.
# Booleans are \1 and \0.  No CPAN: only core Perl.
use strict;
use warnings;
use B ();
use Exporter 'import';

our @EXPORT_OK = qw(o dump_yaml);

sub o { return bless [@_], 'Yaml::Map' }

my %plain_word = map { $_ => 1 } qw(true false null yes no on off y n ~);

sub _is_number {
    my ($v) = @_;
    my $f = B::svref_2object(\$v)->FLAGS;
    return ($f & (B::SVf_IOK | B::SVf_NOK)) && !($f & B::SVf_POK);
}

sub _quote {
    my ($s) = @_;
    $s =~ s/\\/\\\\/g;
    $s =~ s/"/\\"/g;
    $s =~ s/\t/\\t/g;
    $s =~ s/([\x00-\x1f])/sprintf('\\x%02x', ord $1)/ge;
    return "\"$s\"";
}

sub _scalar {
    my ($v, $is_key) = @_;
    return 'null' unless defined $v;
    if (ref $v eq 'SCALAR') {
        return $$v ? 'true' : 'false';
    }
    return $v if !$is_key && _is_number($v);
    return _quote($v)
        if $v eq '' || $plain_word{lc $v} || $v =~ /^[-+.]?\d/
        || $v !~ m{^[A-Za-z_/\$][A-Za-z0-9_ ./\-\$(),'{}*+]*\z}
        || $v =~ /\s\z/;
    return $v;
}

sub _pairs {
    my ($node) = @_;
    return @$node if ref $node eq 'Yaml::Map';
    return map { ($_, $node->{$_}) } sort keys %$node;
}

sub _empty {
    my ($node) = @_;
    return ref $node eq 'Yaml::Map' ? !@$node
         : ref $node eq 'HASH' ? !%$node
         : ref $node eq 'ARRAY' ? !@$node : 0;
}

sub _is_coll {
    my ($v) = @_;
    my $r = ref $v;
    return $r eq 'Yaml::Map' || $r eq 'HASH' || $r eq 'ARRAY';
}

sub _emit {
    my ($node, $ind, $out) = @_;
    my $pad = '  ' x $ind;
    if (ref $node eq 'ARRAY') {
        for my $v (@$node) {
            if (_is_coll($v) && !_empty($v)) {
                my @lines;
                _emit($v, $ind + 1, \@lines);
                # the first line of the item goes after "- "
                $lines[0] =~ s/^\s+//;
                push @$out, "$pad- $lines[0]", @lines[1 .. $#lines];
            } else {
                push @$out, "$pad- " . _inline($v, $ind);
            }
        }
        return;
    }
    my @p = _pairs($node);
    while (@p) {
        my ($k, $v) = splice @p, 0, 2;
        my $key = _scalar($k, 1);
        if (_is_coll($v) && !_empty($v)) {
            push @$out, "$pad$key:";
            _emit($v, ref $v eq 'ARRAY' ? $ind : $ind + 1, $out);
        } else {
            push @$out, "$pad$key: " . _inline($v, $ind);
        }
    }
}

sub _inline {
    my ($v, $ind) = @_;
    if (ref $v eq 'ARRAY') { return '[]' }
    if (ref $v eq 'HASH' || ref $v eq 'Yaml::Map') { return '{}' }
    if (defined $v && !ref $v && $v =~ /\n/) {
        my $pad = '  ' x ($ind + 1);
        (my $t = $v) =~ s/\n+\z//;
        return "|\n" . join("\n", map { length ? "$pad$_" : '' } split /\n/, $t, -1);
    }
    return _scalar($v, 0);
}

sub dump_yaml {
    my ($doc) = @_;
    my @out;
    _emit($doc, 0, \@out);
    return join("\n", @out) . "\n";
}

1;
