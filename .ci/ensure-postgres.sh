# Sourced by .ci/test: make sure a PostgreSQL server answers for the tests.
# Sets MEMORY_GRAPH_TEST_DSN. Uses $MEMORY_GRAPH_TEST_DSN as given when set; otherwise the
# system server on 127.0.0.1:5432, started (and installed from Debian, as root) if needed.
if [ -n "${MEMORY_GRAPH_TEST_DSN:-}" ]; then
  return 0
fi
_pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
if ! command -v pg_isready >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing PostgreSQL from Debian packages..."
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
if ! _pg_up && command -v pg_ctlcluster >/dev/null 2>&1; then
  ver="$(ls /etc/postgresql | sort -V | tail -n 1)"
  hba="/etc/postgresql/$ver/main/pg_hba.conf"
  # The tests connect as postgres over TCP on loopback with trust auth.
  if [ -w "$hba" ] && ! grep -qE '^host\s+all\s+all\s+127\.0\.0\.1/32\s+trust' "$hba"; then
    sed -i '1i host all all 127.0.0.1/32 trust' "$hba"
  fi
  pg_ctlcluster --skip-systemctl-redirect "$ver" main start || true
  for _ in $(seq 1 30); do _pg_up && break; sleep 1; done
fi
if _pg_up; then
  export MEMORY_GRAPH_TEST_DSN="postgresql://postgres@127.0.0.1:5432/postgres"
else
  echo "no system PostgreSQL on 127.0.0.1:5432: the tests use the embedded server only" >&2
fi
