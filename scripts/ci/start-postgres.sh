# shellcheck shell=bash
# Sourced by .ci/run (and usable locally: `source scripts/ci/start-postgres.sh`, as root):
# installs PostgreSQL from Debian if missing, starts the newest cluster on loopback, makes
# sure role `keel` and database `keel` exist, and exports KEEL_PG_URL. Idempotent; quiet on
# success, loud (log tail, non-zero status) on failure.

keel_start_postgres() {
  local log=/tmp/keel-start-postgres.log
  : >"$log"
  keel_pg_fail() {
    echo "start-postgres: $1 (full log: $log)" >&2
    tail -n 40 "$log" >&2
    return 1
  }
  if [ "$(id -u)" != 0 ]; then
    keel_pg_fail "must run as root (it installs and starts the Debian PostgreSQL cluster)"
    return 1
  fi
  if ! command -v pg_ctlcluster >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql; } >>"$log" 2>&1 ||
      { keel_pg_fail "apt-get install postgresql failed"; return 1; }
  fi
  local version
  version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
  [ -n "$version" ] || { keel_pg_fail "no PostgreSQL version under /usr/lib/postgresql"; return 1; }
  if ! pg_lsclusters -h 2>>"$log" | awk -v v="$version" '$1 == v && $2 == "main" { found = 1 } END { exit !found }'; then
    pg_createcluster "$version" main >>"$log" 2>&1 || { keel_pg_fail "pg_createcluster $version main failed"; return 1; }
  fi
  local port status
  port=$(pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" { print $3 }')
  status=$(pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" { print $4 }')
  if [ "$status" != online ]; then
    pg_ctlcluster "$version" main start >>"$log" 2>&1 || { keel_pg_fail "pg_ctlcluster $version main start failed"; return 1; }
  fi
  local i
  for i in $(seq 1 60); do
    pg_isready -q -h 127.0.0.1 -p "$port" && break
    sleep 0.5
  done
  pg_isready -q -h 127.0.0.1 -p "$port" || { keel_pg_fail "PostgreSQL did not accept connections on 127.0.0.1:$port"; return 1; }
  local psql_cmd="psql -v ON_ERROR_STOP=1 -q -p $port -d postgres"
  runuser -u postgres -- $psql_cmd >>"$log" 2>&1 <<'SQL' || { keel_pg_fail "creating role keel failed"; return 1; }
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'keel') THEN
    CREATE ROLE keel LOGIN PASSWORD 'keel';
  ELSE
    ALTER ROLE keel LOGIN PASSWORD 'keel';
  END IF;
END $$;
SQL
  if ! runuser -u postgres -- psql -q -p "$port" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'keel'" 2>>"$log" | grep -q 1; then
    runuser -u postgres -- createdb -p "$port" -O keel keel >>"$log" 2>&1 || { keel_pg_fail "createdb keel failed"; return 1; }
  fi
  export KEEL_PG_URL="postgres://keel:keel@127.0.0.1:${port}/keel"
  PGPASSWORD=keel psql -q -h 127.0.0.1 -p "$port" -U keel -d keel -tAc 'SELECT 1' >>"$log" 2>&1 ||
    { keel_pg_fail "cannot log in as keel on 127.0.0.1:$port"; return 1; }
}

keel_start_postgres
