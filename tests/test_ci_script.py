"""The CI script's behaviour (issue 29 §5): every stage runs and the summary reports each one;
the lowest-versions constraints pin every declared lower bound."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = (ROOT / ".ci" / "test").read_text(encoding="utf-8")


def _stage_function() -> str:
    match = re.search(r"^stage\(\) \{.*?^\}\n", SCRIPT, re.S | re.M)
    assert match, "no stage() function in .ci/test"
    return match.group(0)


def test_a_failing_stage_does_not_stop_the_next_and_fails_the_run() -> None:
    snippet = (
        "set -uo pipefail\nsummary=()\nfailed=0\n"
        + _stage_function()
        + 'stage "first" false\nstage "second" echo ran-second\n'
        + 'printf "%s\\n" "${summary[@]}"\nexit "$failed"\n'
    )
    done = subprocess.run(["bash", "-c", snippet], capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "ran-second" in done.stdout
    assert re.search(r"FAILED\s+\d+s\s+first \(exit 1\)", done.stdout), done.stdout
    assert re.search(r"ok\s+\d+s\s+second", done.stdout), done.stdout


def test_every_stage_of_the_script_goes_through_stage() -> None:
    # No bare pytest/ruff/mypy line outside stage(): one of them failing would stop or hide.
    body = SCRIPT.split("stage \"ruff\"", 1)[1].split("\n", 1)[1]
    continued = False  # a line after a trailing backslash is the stage's command
    for line in body.splitlines():
        stripped = line.strip()
        if not continued and stripped.startswith(("pytest", "ruff", "mypy")):
            raise AssertionError(f"a stage runs outside stage(): {stripped}")
        continued = stripped.endswith("\\")
    assert "set -e\n" not in body, "set -e after the stages begin stops at the first failure"


def test_lowest_constraints_pin_every_declared_lower_bound() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "lowest.py")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    pins = dict(line.split("==", 1) for line in out)
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    spec = r'^\s*"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*(?:>=|==)\s*([0-9][^",;]*)'
    deps = re.findall(spec, text, re.M)
    assert deps
    for name, bound in deps:
        if name in ("setuptools",):
            continue
        if name in pins:
            assert pins[name] == bound, (name, pins[name], bound)
    for name in ("langgraph", "psycopg", "pydantic", "typer", "pycryptodome", "langchain"):
        assert name in pins, name
