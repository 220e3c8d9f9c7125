#!/usr/bin/perl
# Prints N extension keys for the benchmark: "key<TAB>hex hash" lines, the
# key in the module's format (prefix + base62(32 random bytes) + base62
# CRC-32) and its stored hash HMAC-SHA256(pepper, key), pepper derived from
# the cms_secret file as the module does (src/lib/cms_kdf.h).
#   bench/extkeys.pl SECRET_FILE N [PREFIX]
use strict;
use warnings;
use Digest::SHA qw(hmac_sha256 hmac_sha256_hex);

my ($file, $n, $prefix) = @ARGV;
$prefix //= 'sk_live_';
open my $fh, '<', $file or die "$file: $!";
my $secret = do { local $/; <$fh> };
$secret =~ s/\s+\z//;
my $pepper = hmac_sha256('cms api key pepper v1', $secret);

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

open my $rnd, '<:raw', '/dev/urandom' or die "urandom: $!";
for (1 .. $n) {
    read($rnd, my $bytes, 32) == 32 or die "urandom: short read";
    my $k = $prefix . base62($bytes, 43);
    $k .= base62(pack('N', crc32($k)), 6);
    print $k, "\t", hmac_sha256_hex($k, $pepper), "\n";
}
