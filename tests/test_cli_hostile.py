"""The CLI under attack (issue 8 §5-6, issue 11 §3): stored text, bad input, clean help,
global options after the command, exit codes of refused decisions, failed chat turns.

Every command runs in a subprocess and its whole output is captured: no raw control
character from stored data, one ``error:`` line and exit 2 for bad input, never a traceback.
"""

from __future__ import annotations

import json
import os
import re
import select
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from memory_graph import MemoryStore, Owner

ROOT = Path(__file__).resolve().parents[1]
ESC = "\x1b[2J\x1b[1;1H\x1b]0;pwned\x07\x9b31m\u202eevil\u202c"
MARKUP = "[bold red]approved[/bold red]"


def run(
    *args: str | bytes,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``python -m memory_graph.cli ARGS`` (bytes allowed) and capture its raw output."""
    base = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "MEMORY_GRAPH_DSN")}
    base["COLUMNS"] = "220"
    base.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "memory_graph.cli", *args],
        input=None if stdin is None else stdin.encode(),
        capture_output=True,
        env=base,
        timeout=timeout,
        check=False,
        cwd=ROOT,
    )


def text(done: subprocess.CompletedProcess[bytes]) -> str:
    return (done.stdout + done.stderr).decode("utf-8", "replace")


def ok(done: subprocess.CompletedProcess[bytes]) -> str:
    out = text(done)
    assert done.returncode == 0, out
    assert "Traceback" not in out
    return done.stdout.decode()


def one_error(done: subprocess.CompletedProcess[bytes], code: int = 2) -> str:
    out = text(done)
    assert done.returncode == code, out
    assert "Traceback" not in out
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out
    assert len(lines[0]) <= 420
    return lines[0]


def no_control(done: subprocess.CompletedProcess[bytes]) -> None:
    raw = done.stdout + done.stderr
    assert b"\x1b" not in raw and b"\x07" not in raw and b"\xc2\x9b" not in raw, raw[-400:]
    assert "\u202e".encode() not in raw


# -- stored text reaches the terminal only through the rule ------------------------------------


@pytest.fixture
def hostile(pg_dsn: str) -> str:
    owner = Owner("mallory")
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
        store.patch_profile(owner, {"name": "Mal" + ESC + MARKUP})
        store.set_preference(owner, "tools.editor", "Vim" + ESC + MARKUP)
        store.add(owner, "fact", "Likes tea" + ESC + MARKUP)
        store.propose(
            owner, "add", {"kind": "fact", "content": "Owns a cat" + ESC + MARKUP}, level="user"
        )
    return pg_dsn


def test_show_writes_no_control_characters_and_no_markup(hostile: str) -> None:
    done = run("--dsn", hostile, "show", "-u", "mallory", "--memory-md", "--context")
    out = ok(done)
    no_control(done)
    assert out.count(MARKUP) == 3  # profile, preference, record tables: printed literally
    assert "&#91;bold red&#93;approved" in out  # MEMORY.md and the context block: escaped
    assert "\\u001b[2J" in out and "\\u202e" in out  # made visible, not dropped


def test_inbox_and_json_output_write_no_control_characters(hostile: str) -> None:
    done = run("--dsn", hostile, "inbox", "-u", "mallory")
    out = ok(done)
    no_control(done)
    assert MARKUP in out and "\\u001b" in out
    done = run("--dsn", hostile, "inbox", "-u", "mallory", "--json")
    no_control(done)
    items = json.loads(ok(done))
    assert items[0]["args"]["content"] == "Owns a cat" + ESC + MARKUP  # same value, escaped
    done = run("--dsn", hostile, "export", "-u", "mallory")
    no_control(done)
    assert json.loads(ok(done))["profile"]["name"] == "Mal" + ESC + MARKUP


def test_chat_review_writes_no_control_characters(pg_dsn: str) -> None:
    said = "Call me Eve. I use Vim\x1b[2J\x1b[31m[bold]approved[/bold]."
    done = run(
        "--dsn",
        pg_dsn,
        "chat",
        "-u",
        "eve",
        "-t",
        "t-esc",
        stdin=said + "\napprove\napprove\n/quit\n",
    )
    out = ok(done)
    no_control(done)
    assert "Review" in out and "[bold]approved[/bold]" in out, out  # the quote, literally
    assert "\\u001b[2J" in out


# -- bad input: one error line, exit 2 ---------------------------------------------------------


def test_invalid_utf8_arguments_are_one_error_line(pg_dsn: str) -> None:
    bad = b"ad\xff\xfea"
    for argv in (
        [b"show", b"--user", bad],
        [b"show", b"--user", b"ada", b"--workspace", bad],
        [b"show", b"--user", b"ada", b"--agent", bad],
        [b"inbox", b"--user", b"ada", b"--thread", bad],
        [b"inbox", b"decide", bad, b"--user", b"ada", b"--approve"],
        [b"chat", b"--user", b"ada", b"--thread", bad],
    ):
        line = one_error(run(b"--dsn", pg_dsn.encode(), *argv))
        assert "not valid UTF-8" in line


@pytest.mark.parametrize(
    "dsn", ["garbage dsn ===", "mysql://root:s3cret@db.example:3306/app", "dbname='unclosed"]
)
def test_malformed_dsn_is_one_error_line_without_echoing_it(dsn: str) -> None:
    for argv in (["--dsn", dsn, "show", "-u", "ada"], ["show", "-u", "ada", "--dsn", dsn]):
        line = one_error(run(*argv))
        assert "--dsn" in line and "s3cret" not in line


def test_deep_json_and_huge_numbers_are_one_error_line(pg_dsn: str, tmp_path: Path) -> None:
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
        proposal = store.propose(
            Owner("ada"), "set_preference", {"key": "k", "value": "v"}, level="user"
        )
    deep = "[" * 50_000 + "]" * 50_000
    nested = json.dumps({"key": "k", "value": "v", "x": json.loads("[" * 40 + "]" * 40)})
    huge = '{"key": "k", "value": ' + "9" * 5000 + "}"
    for edit in (deep, nested, huge, '{"value": "' + "x" * 100_000 + '"'):
        line = one_error(
            run("--dsn", pg_dsn, "inbox", "decide", proposal.id, "-u", "ada", "--edit", edit)
        )
        assert "x" * 500 not in line
    for name, body in (("deep", deep), ("nested", nested), ("huge", huge)):
        path = tmp_path / f"{name}.json"
        path.write_text(body, encoding="utf-8")
        one_error(run("--dsn", pg_dsn, "import", str(path), "-u", "ada"))
    (tmp_path / "latin1.json").write_bytes(b'{"x": "\xff"}')
    one_error(run("--dsn", pg_dsn, "import", str(tmp_path / "latin1.json"), "-u", "ada"))
    one_error(run("--dsn", pg_dsn, "demo-session", "9" * 5000, "-u", "ada"))
    with MemoryStore.from_dsn(pg_dsn) as store:  # nothing was decided
        assert store.get_proposal(Owner("ada"), proposal.id).status == "pending"


def test_usage_errors_are_one_error_line() -> None:
    for argv in (["show", "--bogus"], ["nope"], ["inbox", "decide"], ["show", "--user"]):
        one_error(run(*argv))


# -- help --------------------------------------------------------------------------------------


def _commands() -> list[list[str]]:
    import typer.main

    from memory_graph.cli import app

    found: list[list[str]] = [[]]

    def walk(command: Any, prefix: list[str]) -> None:
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            found.append([*prefix, name])
            walk(sub, [*prefix, name])

    walk(typer.main.get_command(app), [])
    return found


def test_every_command_has_clean_help() -> None:
    commands = _commands()
    assert ["inbox", "decide"] in commands and ["import"] in commands and len(commands) >= 8
    for command in commands:
        out = ok(run(*command, "--help"))
        for garbage in ("ForwardRef", "<bool>", "<str>", "{file}", "Traceback"):
            assert garbage not in out, (command, garbage, out)
        assert not re.search(r"<[a-zA-Z ]+>|\{[a-z_]+\}", out), (command, out)
        assert "Usage: memory-graph" in out and "--help" in out
        if command:
            assert "--dsn" in out  # the global options are accepted after the command too
    imp = ok(run("import", "--help"))
    assert re.search(r"Usage: memory-graph import \[OPTIONS\] FILE\b", imp)
    assert re.search(r"--user\s+-u\s+TEXT", imp)
    assert re.search(r"--json\s+Print JSON", imp)


# -- global options after the command ----------------------------------------------------------


def test_global_options_work_after_the_command(pg_dsn: str) -> None:
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
        store.set_preference(Owner("ada"), "tools.editor", "Helix")
        proposal = store.propose(
            Owner("ada"), "add", {"kind": "fact", "content": "Likes tea"}, level="user"
        )
    assert "Helix" in ok(run("show", "--user", "ada", "--dsn", pg_dsn))
    assert "Helix" in ok(run("show", f"--dsn={pg_dsn}", "-u", "ada"))
    pending = json.loads(ok(run("inbox", "-u", "ada", "--json", "--dsn", pg_dsn)))
    assert [p["proposal_id"] for p in pending] == [proposal.id]
    done = run("inbox", "decide", proposal.id, "-u", "ada", "--approve", "--dsn", pg_dsn)
    assert "approved" in ok(done)
    # a value that looks like the option is still the value of the option before it
    done = run(
        "inbox", "decide", proposal.id, "-u", "ada", "--reject", "-m", "--dsn", "--dsn", pg_dsn
    )
    assert done.returncode == 1  # reject an approved proposal: refused (see below)


# -- exit codes of inbox decide ----------------------------------------------------------------


def test_rejecting_an_approved_proposal_exits_non_zero(pg_dsn: str) -> None:
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
        p = store.propose(
            Owner("ada"), "add", {"kind": "fact", "content": "Likes tea"}, level="user"
        )
        store.decide(Owner("ada"), p.id, "approve")
    again = run("--dsn", pg_dsn, "inbox", "decide", p.id, "-u", "ada", "--approve")
    assert "already approved" in ok(again)  # the same decision replays: success
    refused = run("--dsn", pg_dsn, "inbox", "decide", p.id, "-u", "ada", "--reject", "--json")
    assert refused.returncode == 1, text(refused)
    assert json.loads(refused.stdout)[0]["status"] == "approved"
    err = [ln for ln in refused.stderr.decode().splitlines() if ln.startswith("error: ")]
    assert len(err) == 1 and "refused" in err[0] and "Traceback" not in text(refused)


def test_guard_blocked_edit_in_a_thread_review_keeps_the_review_pending(pg_dsn: str) -> None:
    # The chat ends with its review pending: two proposals wait in thread t-g.
    ok(run("--dsn", pg_dsn, "chat", "-u", "gus", "-t", "t-g", stdin="Call me Gus. I use Vim.\n"))
    pending = json.loads(ok(run("--dsn", pg_dsn, "inbox", "-u", "gus", "--json")))
    assert len(pending) == 2
    first, second = pending
    ok(run("--dsn", pg_dsn, "inbox", "decide", first["proposal_id"], "-u", "gus", "--approve"))
    edit = dict(second["args"])
    field = "value" if "value" in edit else "patch"
    edit[field] = (
        "my card number is 4111 1111 1111 1111"
        if field == "value"
        else {k: "my card number is 4111 1111 1111 1111" for k in edit["patch"]}
    )
    done = run(
        "--dsn",
        pg_dsn,
        "inbox",
        "decide",
        second["proposal_id"],
        "-u",
        "gus",
        "--edit",
        json.dumps(edit),
    )
    line = one_error(done)
    assert "guard" in line and "4111" not in line
    # nothing was decided and the thread still waits for its review
    still = json.loads(ok(run("--dsn", pg_dsn, "inbox", "-u", "gus", "--json")))
    assert [p["proposal_id"] for p in still] == [second["proposal_id"]]
    assert still[0]["status"] == "pending"
    done = run("--dsn", pg_dsn, "inbox", "decide", second["proposal_id"], "-u", "gus", "--reject")
    assert "resumed thread t-g" in ok(done)


# -- chat: failed turns do not end the session -------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_chat_survives_an_unreachable_model_endpoint(pg_dsn: str) -> None:
    env = {
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": f"http://127.0.0.1:{_closed_port()}/v1",
    }
    done = run(
        "--dsn",
        pg_dsn,
        "chat",
        "-u",
        "ned",
        "-t",
        "t-n",
        stdin="hello\n/retry\nagain\n/quit\n",
        env=env,
    )
    out = text(done)
    assert done.returncode == 0, out
    assert "Traceback" not in out
    errors = [ln for ln in done.stderr.decode().splitlines() if ln.startswith("error: ")]
    assert len(errors) == 3 and all("model endpoint" in e or "failed" in e for e in errors)
    assert out.count("you> ") == 4  # the session asked again after every failure


def test_chat_survives_the_database_going_down(pg_dsn: str) -> None:
    params = conninfo_to_dict(pg_dsn)
    dbname = params["dbname"]
    admin_dsn = make_conninfo(**{**params, "dbname": "postgres"})  # type: ignore[arg-type]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memory_graph.cli",
            "--dsn",
            pg_dsn,
            "chat",
            "-u",
            "dot",
            "-t",
            "t-d",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={**{k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}, "COLUMNS": "200"},
    )
    assert proc.stdin is not None and proc.stdout is not None
    _read_until(proc, b"you> ")
    proc.stdin.write(b"hello\n")
    proc.stdin.flush()
    _read_until(proc, b"you> ")
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        admin.execute(f'ALTER DATABASE "{dbname}" ALLOW_CONNECTIONS false')
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
            [dbname],
        )
    proc.stdin.write(b"hello while down\n")
    proc.stdin.flush()
    _read_until(proc, b"you> ")
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        admin.execute(f'ALTER DATABASE "{dbname}" ALLOW_CONNECTIONS true')
    # The database is back: /retry until the turn goes through (a pooled connection that
    # died in the outage may fail one more attempt, reported on its own error line).
    answered = False
    for _ in range(3):
        proc.stdin.write(b"/retry\n")
        proc.stdin.flush()
        if b"assistant> " in _read_until(proc, b"you> "):
            answered = True
            break
    proc.stdin.write(b"/quit\n")
    proc.stdin.flush()
    out, err = proc.communicate(timeout=120)
    everything = (out + err).decode("utf-8", "replace")
    assert answered, everything
    assert proc.returncode == 0, everything
    assert "Traceback" not in everything
    lines = err.decode().splitlines()
    assert lines and all(line.startswith("error: ") for line in lines), everything
    assert "database is unavailable" in lines[0]


def _read_until(proc: subprocess.Popen[bytes], marker: bytes, limit: float = 120) -> bytes:
    """Read the chat's stdout until ``marker`` (a deadline guards against a hang, not speed)."""
    assert proc.stdout is not None
    seen = b""
    while not seen.endswith(marker):
        ready, _, _ = select.select([proc.stdout], [], [], limit)
        chunk = proc.stdout.read1(4096) if ready else b""  # type: ignore[attr-defined]
        if not chunk:
            proc.kill()
            raise AssertionError(f"chat stalled or ended: {seen[-800:]!r}")
        seen += chunk
    return seen
