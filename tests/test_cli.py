"""The ``memory-graph`` CLI, run in subprocesses against a fresh database (``--dsn``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from memory_graph import MemoryStore, Owner

ROOT = Path(__file__).resolve().parents[1]


def run(
    dsn: str | None, *args: str, stdin: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m memory_graph.cli [--dsn DSN] ARGS`` and capture its output."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "MEMORY_GRAPH_DSN")}
    env["COLUMNS"] = "220"  # wide tables: assertions do not depend on wrapping
    command = [sys.executable, "-m", "memory_graph.cli"]
    if dsn is not None:
        command += ["--dsn", dsn]
    return subprocess.run(
        [*command, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
        cwd=ROOT,
    )


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    return done.stdout


def as_json(done: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(ok(done))


@pytest.fixture
def seeded(pg_dsn: str) -> str:
    """A database where user ``ada`` has a profile, two preferences and a fact."""
    owner = Owner("ada")
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
        store.patch_profile(owner, {"name": "Ada", "call_them": "Ada L."})
        store.set_preference(owner, "reply.language", "English")
        store.set_preference(owner, "tools.editor", "Vim")
        store.add(owner, "fact", "Works on the analytical engine project")
    return pg_dsn


def test_demo_runs_two_sessions_in_two_processes(pg_dsn: str) -> None:
    out = ok(run(pg_dsn, "demo", timeout=180))
    # session 1: extraction, guard block (category + count), interrupt, decisions, commit
    assert "guard blocked 2 candidate(s)" in out
    assert "finance x1" in out and "health x1" in out
    assert "Approval interrupt" in out and "action_requests" in out
    assert "review_configs" in out
    assert re.search(r"\bedit\b.*Neovim \(LazyVim\)", out)
    assert "approved" in out and "rejected" in out
    # two sessions, two processes
    pids = re.findall(r"Session (\d): process (\d+)", out)
    assert [s for s, _ in pids] == ["1", "2"]
    assert pids[0][1] != pids[1][1]
    # session 2 knows the user: name and language preference
    session2 = out.split("Session 2:", 1)[1]
    assert "call_them: Mei" in session2
    assert re.search(r"assistant> .*Mei", session2)
    assert "ok: addressed the user by the remembered name (Mei)" in session2
    # blocked content appears only in the user's own words, never after them
    after_input = out.split("assistant>", 1)[1]
    assert "diabetes" not in after_input and "4111" not in after_input
    user = re.search(r"user id: (\S+)", out)
    assert user is not None
    exported = json.dumps(as_json(run(pg_dsn, "export", "--user", user.group(1))))
    assert "Mei" in exported and "LazyVim" in exported
    assert "diabetes" not in exported and "4111" not in exported and "zsh" not in exported


@pytest.mark.slow
def test_demo_reruns_on_the_same_database(pg_dsn: str) -> None:
    first = ok(run(pg_dsn, "demo", timeout=180))
    second = ok(run(pg_dsn, "demo", timeout=180))
    ids = [re.search(r"user id: (\S+)", text) for text in (first, second)]
    assert ids[0] and ids[1] and ids[0].group(1) != ids[1].group(1)


def test_show(seeded: str) -> None:
    out = ok(run(seeded, "show", "--user", "ada", "--memory-md", "--context"))
    for text in ("Ada L.", "reply.language", "English", "tools.editor", "Vim"):
        assert text in out
    assert "analytical engine" in out
    assert "# MEMORY.md" in out
    assert "<user_context>" in out
    other = ok(run(seeded, "show", "--user", "bob"))
    assert "Vim" not in other and "analytical" not in other


def test_export_import_inbox_decide(seeded: str, tmp_path: Path) -> None:
    document = as_json(run(seeded, "export", "--user", "ada"))
    assert document["profile"]["call_them"] == "Ada L."
    target = tmp_path / "ada.json"
    ok(run(seeded, "export", "--user", "ada", "--out", str(target)))
    assert json.loads(target.read_text(encoding="utf-8"))["profile"] == document["profile"]

    proposals = as_json(run(seeded, "import", str(target), "--user", "bea", "--json"))
    assert len(proposals) == 4
    assert {p["status"] for p in proposals} == {"pending"}
    table = ok(run(seeded, "import", str(target), "--user", "bea"))  # a replay: same ids
    assert all(p["proposal_id"] in table for p in proposals)
    assert "Nothing is written yet" in table
    assert as_json(run(seeded, "export", "--user", "bea"))["preferences"] == []

    inbox = as_json(run(seeded, "inbox", "--user", "bea", "--json"))
    assert [p["proposal_id"] for p in inbox] == [p["proposal_id"] for p in proposals]
    assert "4 pending" in ok(run(seeded, "inbox", "--user", "bea"))

    by_op: dict[str, list[dict[str, Any]]] = {}
    for p in proposals:
        by_op.setdefault(p["operation"], []).append(p)
    editor = next(p for p in by_op["set_preference"] if p["args"]["key"] == "tools.editor")
    language = next(p for p in by_op["set_preference"] if p["args"]["key"] == "reply.language")
    fact = by_op["add"][0]
    profile = by_op["patch_profile"][0]

    res = as_json(
        run(seeded, "inbox", "decide", profile["proposal_id"], "-u", "bea", "--approve", "--json")
    )
    assert res[0]["status"] == "approved"
    edited = json.dumps({"key": "tools.editor", "value": "Helix"})
    res = as_json(
        run(
            seeded,
            "inbox",
            "decide",
            editor["proposal_id"],
            "-u",
            "bea",
            "--edit",
            edited,
            "--json",
        )
    )
    assert (res[0]["status"], res[0]["decision"]) == ("approved", "edit")
    res = as_json(
        run(seeded, "inbox", "decide", language["proposal_id"], "-u", "bea", "--reject", "--json")
    )
    assert res[0]["status"] == "rejected"
    out = ok(run(seeded, "inbox", "decide", fact["proposal_id"], "-u", "bea", "--approve"))
    assert "approved" in out
    # deciding again replays the stored result; asking the opposite is refused (exit 1)
    again = ok(run(seeded, "inbox", "decide", fact["proposal_id"], "-u", "bea", "--approve"))
    assert "already approved" in again
    refused = run(seeded, "inbox", "decide", fact["proposal_id"], "-u", "bea", "--reject")
    assert refused.returncode == 1 and "already approved" in refused.stdout
    assert refused.stderr.startswith("error: ") and "refused" in refused.stderr

    assert "No pending proposals." in ok(run(seeded, "inbox", "--user", "bea"))
    shown = ok(run(seeded, "show", "--user", "bea"))
    assert "Helix" in shown and "Ada L." in shown and "analytical engine" in shown
    assert "reply.language" not in shown


def test_chat_offline_with_terminal_approval(pg_dsn: str) -> None:
    done = run(
        pg_dsn,
        "chat",
        "--user",
        "cy",
        "--thread",
        "t-chat",
        stdin="Call me Cy. I use Emacs.\napprove\nreject\nnot now\nhello again\n/quit\n",
    )
    out = ok(done)
    assert "the offline model" in out
    assert "approved" in out and "rejected" in out
    assert "Hello, Cy!" in out  # the next turn of the same chat recalls the approved name
    shown = ok(run(pg_dsn, "show", "--user", "cy"))
    assert "Cy" in shown and "Emacs" not in shown


def test_chat_commands_stay_local_and_an_edit_changes_one_field(pg_dsn: str) -> None:
    done = run(
        pg_dsn,
        "chat",
        "--user",
        "fay",
        "--thread",
        "t-cmd",
        stdin="/help\n/retry\n/bogus\nCall me Fay. I use Emacs.\napprove\nedit\n"
        "value=my insulin pump for diabetes\n"  # the guard refuses this edit: asked again
        "approve\nedit\ncolour=red\nvalue=Vim\n/retry\n/quit\n",
    )
    out = ok(done)
    assert "the review is asked again" in out and "type /retry" not in out
    assert "commands: /retry" in out  # /help answered here
    assert out.count("nothing to retry") == 2  # before any turn, and after one that succeeded
    assert "unknown command" in out
    assert out.count("assistant>") == 1  # only the real message reached the model
    assert "no field 'colour'" in out
    shown = ok(run(pg_dsn, "show", "--user", "fay"))
    assert "Vim" in shown and "Emacs" not in shown


def test_proposals_imported_from_another_users_threads_can_be_decided(
    pg_dsn: str, tmp_path: Path
) -> None:
    # gil's memories come from his chat thread: their provenance names thread t-gil.
    said = "I work at Initech. I love hiking.\na\na\n"
    ok(run(pg_dsn, "chat", "-u", "gil", "-t", "t-gil", stdin=said))
    target = tmp_path / "gil.json"
    ok(run(pg_dsn, "export", "--user", "gil", "--out", str(target)))
    assert "t-gil" in target.read_text(encoding="utf-8")
    imported = as_json(run(pg_dsn, "import", str(target), "--user", "hal", "--json"))
    assert imported
    for p in imported:
        done = as_json(
            run(pg_dsn, "inbox", "decide", p["proposal_id"], "-u", "hal", "--approve", "--json")
        )
        assert [r["status"] for r in done] == ["approved"], done
    assert "Initech" in ok(run(pg_dsn, "show", "--user", "hal"))


def test_inbox_decide_resumes_a_graph_thread_in_another_process(pg_dsn: str) -> None:
    # The chat ends (end of input) while its review is pending: the thread stays paused.
    out = ok(run(pg_dsn, "chat", "-u", "dee", "-t", "t-dee", stdin="Call me Dee. I use Vim.\n"))
    assert "Review left pending" in out
    pending = as_json(run(pg_dsn, "inbox", "--user", "dee", "--json"))
    assert {p["thread_id"] for p in pending} == {"t-dee"} and len(pending) == 2
    first = ok(run(pg_dsn, "inbox", "decide", pending[0]["proposal_id"], "-u", "dee", "--approve"))
    assert "still pending" in first
    last = run(pg_dsn, "inbox", "decide", pending[1]["proposal_id"], "-u", "dee", "--reject")
    assert "resumed thread t-dee" in ok(last)
    assert as_json(run(pg_dsn, "inbox", "--user", "dee", "--json")) == []
    # The resumed thread finished; a new chat turn on it sees the approved name.
    out = ok(run(pg_dsn, "chat", "-u", "dee", "-t", "t-dee", stdin="hi\n/quit\n"))
    assert "Hello, Dee!" in out


BAD_INPUT: list[tuple[str, Sequence[str]]] = [
    ("no user", ["show"]),
    ("workspace without user", ["show", "--workspace", "/repo"]),
    ("blank user", ["export", "--user", "  "]),
    ("malformed import", ["import", "{malformed}", "--user", "ada"]),
    ("invalid import", ["import", "{invalid}", "--user", "ada"]),
    ("missing import file", ["import", "/nonexistent/file.json", "--user", "ada"]),
    ("unknown proposal", ["inbox", "decide", "no-such-proposal", "--user", "ada", "--approve"]),
    ("two decisions", ["inbox", "decide", "p", "--user", "ada", "--approve", "--reject"]),
    ("no decision", ["inbox", "decide", "p", "--user", "ada"]),
    ("edit not an object", ["inbox", "decide", "p", "--user", "ada", "--edit", "[1]"]),
    ("edit not JSON", ["inbox", "decide", "p", "--user", "ada", "--edit", "{x"]),
]


@pytest.mark.parametrize(("name", "argv"), BAD_INPUT, ids=[n for n, _ in BAD_INPUT])
def test_bad_input_is_one_error_line(
    seeded: str, tmp_path: Path, name: str, argv: Sequence[str]
) -> None:
    (tmp_path / "malformed.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "invalid.json").write_text(json.dumps({"version": "x", "bogus": 1}))
    args = [
        str(tmp_path / "malformed.json")
        if a == "{malformed}"
        else str(tmp_path / "invalid.json")
        if a == "{invalid}"
        else a
        for a in argv
    ]
    done = run(seeded, *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr


def test_guard_blocks_an_edit(pg_dsn: str) -> None:
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
        proposal = store.propose(
            Owner("eve"), "set_preference", {"key": "note", "value": "tea"}, level="user"
        )
    edit = json.dumps({"key": "note", "value": "my card number is 4111 1111 1111 1111"})
    done = run(pg_dsn, "inbox", "decide", proposal.id, "-u", "eve", "--edit", edit)
    assert done.returncode == 2 and done.stderr.startswith("error: ")
    assert "finance" in done.stderr and "4111" not in done.stderr
    assert "Traceback" not in done.stderr


def test_help_does_not_import_the_graph_layer() -> None:
    code = (
        "import sys, memory_graph.cli; "
        "assert 'nodes' not in sys.modules and 'langgraph' not in sys.modules, "
        "sorted(m for m in sys.modules if m.split('.')[0] in ('nodes', 'langgraph'))"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
    out = ok(run(None, "--help"))
    for name in ("demo", "chat", "inbox", "show", "export", "import"):
        assert name in out
    assert "demo-session" not in out


def _commands() -> list[str]:
    import typer.main

    from memory_graph.cli import app

    names: list[str] = []

    def walk(command: Any, prefix: str) -> None:
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            if getattr(sub, "hidden", False):
                continue
            names.append(f"{prefix}{name}")
            if getattr(sub, "commands", None):
                walk(sub, f"{prefix}{name} ")

    walk(typer.main.get_command(app), "")
    return names


def test_every_command_is_documented_in_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = _commands()
    assert {"demo", "chat", "inbox", "inbox decide", "show", "export", "import"} <= set(commands)
    missing = [c for c in commands if f"memory-graph {c}" not in readme]
    assert not missing, f"README.md does not document: {missing}"


def test_help_paragraphs_wrap_at_the_width_not_mid_sentence() -> None:
    """A docstring's line breaks inside a paragraph never reach the help (issue 29 §5)."""
    import typer.main

    from memory_graph.cli import app
    from memory_graph.cli.core import reflow

    def walk(command: Any) -> list[Any]:
        subs = list(getattr(command, "commands", {}).values())
        return [command, *[c for sub in subs for c in walk(sub)]]

    for command in walk(typer.main.get_command(app)):
        for paragraph in (command.help or "").split("\n\n"):
            lines = paragraph.splitlines()
            assert all(line.startswith((" ", "-", "*")) for line in lines[1:]), (
                command.name,
                paragraph,
            )
    env_run = run(None, "inbox", "decide", "--help")
    flat = " ".join(ok(env_run).split())
    assert "is resumed through the out-of-band approval API once every proposal" in flat
    assert reflow("a\nb\n\n- c\n- d") == "a b\n\n- c\n- d"
