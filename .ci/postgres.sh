#!/usr/bin/env bash
# CI: install PostgreSQL from Debian's packages and start a throwaway server for the tests.
#
# Idempotent; run as root on a Debian machine without systemd. Uses its own cluster
# (`debategraph`, tuned for speed over durability: never point it at data you want to keep)
# on 127.0.0.1, port 5432 or the next free one, with a role and database `debategraph`
# (password `debategraph`, allowed to create databases: each test gets its own).
# Progress goes to stderr; the last line on stdout is the URL for the tests:
#   eval "$(bash .ci/postgres.sh | tail -1)"
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
CLUSTER=debategraph
ROLE=debategraph
PASSWORD=debategraph
DATABASE=debategraph

log() { echo "postgres.sh: $*" >&2; }

if ! compgen -G "/usr/lib/postgresql/*/bin/pg_ctl" >/dev/null || ! command -v pg_createcluster >/dev/null; then
    log "installing postgresql"
    apt-get update -q >&2
    apt-get install -y -q postgresql >&2
fi
VERSION=$(ls /usr/lib/postgresql | sort -V | tail -1)

port_free() {
    python3 - "$1" <<'PY'
import socket, sys
with socket.socket() as s:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as postgres binds
    try:
        s.bind(("127.0.0.1", int(sys.argv[1])))
    except OSError:
        sys.exit(1)
PY
}

cluster_line() { pg_lsclusters --no-header | awk -v v="$VERSION" -v c="$CLUSTER" '$1 == v && $2 == c'; }

if [ -z "$(cluster_line)" ]; then
    PORT=5432
    while ! port_free "$PORT"; do PORT=$((PORT + 1)); done
    log "creating cluster $VERSION/$CLUSTER on port $PORT"
    pg_createcluster "$VERSION" "$CLUSTER" --port="$PORT" \
        -- --auth-local=peer --auth-host=scram-sha-256 >&2
fi
PORT=$(cluster_line | awk '{print $3}')

if cluster_line | grep -q " down "; then
    # A test server: speed over durability (conf.d is read after postgresql.conf).
    cat >"/etc/postgresql/$VERSION/$CLUSTER/conf.d/debategraph-ci.conf" <<CONF
listen_addresses = '127.0.0.1'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
CONF
    if ! port_free "$PORT"; then
        OLD=$PORT
        while ! port_free "$PORT"; do PORT=$((PORT + 1)); done
        log "port $OLD is taken: moving cluster $VERSION/$CLUSTER to port $PORT"
        pg_conftool "$VERSION" "$CLUSTER" set port "$PORT"
    fi
    log "starting cluster $VERSION/$CLUSTER"
    # Without systemd pg_ctlcluster runs pg_ctl as the cluster owner (postgres).
    pg_ctlcluster "$VERSION" "$CLUSTER" start >&2
fi

for _ in $(seq 60); do
    pg_isready -q -h 127.0.0.1 -p "$PORT" && break
    sleep 0.5
done
pg_isready -h 127.0.0.1 -p "$PORT" >&2

as_postgres() { runuser -u postgres -- "$@"; }
as_postgres psql -q -p "$PORT" -v ON_ERROR_STOP=1 -d postgres >&2 <<SQL
DO \$\$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$ROLE') THEN
        CREATE ROLE $ROLE LOGIN CREATEDB CREATEROLE PASSWORD '$PASSWORD';
    ELSE
        ALTER ROLE $ROLE LOGIN CREATEDB CREATEROLE PASSWORD '$PASSWORD';
    END IF;
END
\$\$;
-- CREATEROLE: the serving tests make a role with a password of their own, to look for it.
-- Lets DROP DATABASE ... WITH (FORCE) end an autovacuum worker in a test's database.
GRANT pg_signal_backend TO $ROLE;
SQL
if [ -z "$(as_postgres psql -p "$PORT" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DATABASE'")" ]; then
    as_postgres createdb -p "$PORT" -O "$ROLE" "$DATABASE"
fi

URL="postgresql://$ROLE:$PASSWORD@127.0.0.1:$PORT/$DATABASE"
PGPASSWORD=$PASSWORD psql -q "$URL" -v ON_ERROR_STOP=1 -c "SELECT 1" >/dev/null
log "ready: $URL"
echo "export DEBATEGRAPH_TEST_POSTGRES_URL=$URL"
