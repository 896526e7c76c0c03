"""Property-based fuzzing (hypothesis): arbitrary command lines give one JSON object on stdout
and a documented exit code, and never leave a partial or temporary file; arbitrary bytes given
to the record decoder give a record or a RecordError, nothing else.

The CLI runs in-process here (thousands of cases; a process each would take minutes), with
stdout a strict UTF-8 stream as a terminal's is, and the file store only (no configuration)."""

from __future__ import annotations

import io
import json
import os
import sys

from hypothesis import HealthCheck, assume, event, given, settings, strategies as st

from amtest import git_init
from agent_memory.cli.exit_codes import TABLE
from agent_memory.outbox import records
from agent_memory.outbox.store import Store
from agent_memory.outbox.verify import verify

DOCUMENTED_EXIT_CODES = {row.code for row in TABLE}
# A valid command line per command; the fuzzer breaks values and adds options to it.
BASE = {
    "write": ["write", "--session-id", "s1", "--sender-kind", "human", "--sender-identity",
              "alice", "--receiver-kind", "model", "--receiver-identity", "claude", "--text",
              "hello"],
    "read": ["read", "--session-id", "s1"],
    "get": ["get", "00000000-0000-4000-8000-000000000000"],
    "sessions": ["sessions"],
    "search": ["search", "--query", "hello", "--scope", "session", "--target", "s1"],
    "working-set": ["working-set", "--session-id", "s1", "--anchor-text", "hello"],
    "open": ["session", "open", "--session-id", "s1", "--project-id", "p", "--dialogue-kind",
             "human,model", "--participant", "alice"],
    "close": ["session", "close", "--session-id", "s1"],
    "reopen": ["session", "reopen", "--session-id", "s1"],
    "status": ["status"], "verify": ["verify"], "gc": ["gc", "--older-than", "1d"],
    "embed": ["embed"],
}
OPTIONS = ["--priority", "--message-id", "--occurred-at", "--relation", "--corrects",
           "--attributes", "--wait", "--embed-budget", "--start", "--block-size",
           "--continuation", "--mode", "--project-id", "--lifecycle", "--participant",
           "--dialogue-kind", "--page-size", "--page-offset", "--ranking", "--anchor-message-id",
           "--recency-count", "--similarity-count", "--title", "--metadata", "--sender-kind",
           "--occurred-from", "--occurred-to", "--filter-session-id", "--batch", "--store"]

weird_text = st.one_of(
    st.text(max_size=40),
    st.binary(max_size=40).map(lambda raw: raw.decode("utf-8", "surrogateescape")),
    st.sampled_from(["", "-", "--", "0", "-1", "1e999", "nan", "human", "model", "tool",
                     "reply:x", "{}", "[]", "{\"a\": 1}", "2026-01-01T00:00:00Z",
                     "00000000-0000-4000-8000-000000000000", "..", "../x", "s1", "1d"]))


@st.composite
def command_lines(draw) -> list[str]:
    argv = list(BASE[draw(st.sampled_from(sorted(BASE)))])
    values = [i for i in range(1, len(argv)) if not argv[i].startswith("-")
              and argv[i] not in ("open", "close", "reopen")]
    for index in draw(st.lists(st.sampled_from(values), max_size=2, unique=True)
                      if values else st.just([])):
        argv[index] = draw(weird_text)
    for _ in range(draw(st.integers(0, 3))):
        argv += [draw(st.sampled_from(OPTIONS)), draw(weird_text)]
    if draw(st.booleans()):
        argv = ["--store", "file", *argv]
    if draw(st.integers(0, 9)) == 0:
        argv.insert(draw(st.integers(0, len(argv))), draw(weird_text))
    return argv


def _is_help(token: str) -> bool:
    return token == "-h" or (len(token) >= 3 and "--help".startswith(token))


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(argv=command_lines(), stdin=st.binary(max_size=64))
def test_any_command_line_gives_one_json_object_and_a_documented_exit_code(
        tmp_path_factory, argv, stdin):
    assume(not any(_is_help(token) for token in argv) and "--watch" not in argv)
    root = _project(tmp_path_factory)
    stdout_bytes = io.BytesIO()
    saved = sys.stdout, sys.stdin, os.getcwd()
    fake_out = io.TextIOWrapper(stdout_bytes, encoding="utf-8", errors="strict",
                                write_through=True)
    fake_in = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout, sys.stdin = fake_out, fake_in
    try:
        os.chdir(root)
        from agent_memory.cli.main import main
        rc = main(list(argv))
    finally:
        sys.stdout, sys.stdin = saved[0], saved[1]
        os.chdir(saved[2])
    fake_out.flush()
    raw = stdout_bytes.getvalue()
    fake_out.detach(), fake_in.detach()
    lines = raw.decode("utf-8").splitlines()
    assert len(lines) == 1, (argv, lines)
    answer = json.loads(lines[0])
    assert answer["success"] is (rc == 0), (argv, answer)
    assert rc in DOCUMENTED_EXIT_CODES, (argv, rc, answer)
    event(f"exit {rc}")
    if rc:
        assert answer["error"]["code"] != "INTERNAL_ERROR", (argv, answer)
    store = os.path.join(root, ".agent-memory")
    for directory, _dirs, files in os.walk(store):
        assert not [f for f in files if f.startswith(".tmp-")], (argv, directory, files)
    with Store(root) as opened:
        assert verify(opened)["damage"] == [], argv


_ROOTS: dict[str, str] = {}


def _project(tmp_path_factory) -> str:
    """One scratch git project with a store for the whole fuzz run (made once)."""
    if "root" not in _ROOTS:
        root = tmp_path_factory.mktemp("fuzz") / "project"
        root.mkdir()
        git_init(str(root))
        os.makedirs(root / ".agent-memory", mode=0o700)
        (root / ".gitignore").write_text("/.agent-memory/\n")
        _ROOTS["root"] = str(root)
    return _ROOTS["root"]


@settings(max_examples=1500, deadline=None)
@given(data=st.one_of(
    st.binary(max_size=300),
    st.builds(lambda base, cut: base[:cut], st.sampled_from([
        b'{"format_version":1,"message_id":"m","session_id":"s","sequence_number":0,'
        b'"text":"t","sender_kind":"human","sender_identity":"a","receiver_kind":"model",'
        b'"receiver_identity":"b","priority":0,"relations":[],"occurred_at":"x",'
        b'"written_at":"y"}',
        b'{"format_version":1,"message_id":"m","model":"x","dimension":2,"embedding":[1,2]}',
    ]), st.integers(0, 300)),
    st.recursive(st.none() | st.booleans() | st.floats(allow_nan=False) | st.text(max_size=8),
                 lambda inner: st.lists(inner, max_size=4)
                 | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                 max_leaves=12).map(lambda value: json.dumps(value).encode())),
       kind=st.sampled_from(sorted(records.KINDS)))
def test_record_decoding_gives_a_record_or_a_record_error(data, kind):
    try:
        record = records.decode(data, records.KINDS[kind])
    except records.RecordError:
        return
    assert record.format_version == records.FORMAT_VERSION
