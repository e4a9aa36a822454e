#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the specs (and CI): loopback only, trust auth, its data
# and its unix socket in DIR, tuned for tests (no fsync: nothing here must survive the run).
#
#   postgres.sh start DIR [PORT]   → prints the URL (postgres://postgres@127.0.0.1:PORT/postgres);
#                                    a DIR that has a cluster already starts it again
# DIR's parent must be traversable by the postgres user.
#   postgres.sh stop DIR
#
# As root, initdb and pg_ctl run as the `postgres` user (they refuse root), which gets DIR.
set -euo pipefail
cmd=${1:?usage: postgres.sh start|stop DIR [PORT]}
dir=${2:?usage: postgres.sh start|stop DIR [PORT]}

bindir=""
if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then bindir=$(pg_config --bindir)
else bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
fi
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
  echo "PostgreSQL is not installed: install it (Debian/Ubuntu: apt-get install postgresql; macOS: brew install postgresql) or set HOOKRELAY_TEST_PG_URL to a server the specs may use" >&2
  exit 2
fi

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$cmd" in
  start)
    port=${3:-$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')}
    mkdir -p "$dir"
    if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
    chmod 700 "$dir"
    # A cluster started before (and stopped) is started again as it was: same data.
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      as_pg "$bindir/initdb" -D "$dir/data" -U postgres -A trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
      start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
  stop)
    if [ -f "$dir/data/postmaster.pid" ]; then as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null; fi
    ;;
  *) echo "usage: postgres.sh start|stop DIR [PORT]" >&2; exit 2 ;;
esac
