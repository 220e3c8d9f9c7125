# Sourced by scripts/services.sh and scripts/fleet.sh: where PostgreSQL's server programs
# are, and how to run them (they refuse root: as root, as the postgres user). The sourcing
# script defines die().

pg_bindir() {
    local d
    for d in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
        [ -x "$d/pg_ctl" ] && { echo "$d"; return; }
    done
    die "PostgreSQL server binaries not found (scripts/deps.sh run)"
}

as_pg() {
    if [ "$(id -u)" = 0 ]; then
        (cd / && runuser -u postgres -- "$@")
    else
        "$@"
    fi
}
