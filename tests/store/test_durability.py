"""Concurrent writers lose nothing; a writer killed between its file and the link leaves no
visible partial message (and, through an unnamed file, nothing at all)."""

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from amtest import message_args, open_args

WRITER = textwrap.dedent("""
    import sys
    from agent_memory.cli.main import main
    for i in range(int(sys.argv[2])):
        rc = main(["--store", "file", "write", "--session-id", "shared", "--sender-kind", "model",
                   "--sender-identity", "w" + sys.argv[1], "--receiver-kind", "human",
                   "--receiver-identity", "h", "--text", f"writer {sys.argv[1]} message {i}"])
        if rc != 0:
            sys.exit(rc)
""")


@pytest.mark.slow
def test_eight_concurrent_writers_lose_nothing(project):
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(w), "100"], cwd=project.root,
                              env=project.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for w in range(8)]
    for proc in procs:
        _out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
    names = project.files("shared")
    assert len(names) == 800
    texts = set()
    for name in names:
        with open(os.path.join(project.store, "shared", name), "rb") as handle:
            record = json.loads(handle.read())
        assert record["message_id"] in name
        texts.add(record["text"])
    assert texts == {f"writer {w} message {i}" for w in range(8) for i in range(100)}
    read = project.cli("read", "--session-id", "shared", "--block-size", "1000", "--mode", "full",
                       "--max-chars", "0")
    assert len(read.data["messages"]) == 800 and "warnings" not in read.data


KILLED_WRITER = textwrap.dedent("""
    import os, signal, sys
    real_link = os.link
    def die_before_link(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)
    os.link = die_before_link
    if sys.argv[1] == "named":  # as on a system without unnamed files (no O_TMPFILE)
        from agent_memory.outbox import atomic
        atomic._UNNAMED = False
    from agent_memory.cli.main import main
    main(sys.argv[2:])
""")


def _killed_writer(way: str, *argv: str) -> list[str]:
    """A writer killed at its link, its file written whole and fsynced: `way` "unnamed" (an
    O_TMPFILE file, as here) or "named" (a named temporary)."""
    return [sys.executable, "-c", KILLED_WRITER, way, *argv]


def _unnamed_files_here(directory: str) -> bool:
    """Does this file system give unnamed files (O_TMPFILE) in `directory`?"""
    try:
        os.close(os.open(directory, os.O_TMPFILE | os.O_WRONLY, 0o600))
    except (AttributeError, OSError):
        return False
    return os.path.isdir("/proc/self/fd")


@pytest.mark.slow
@pytest.mark.parametrize("way", ["unnamed", "named"])
def test_writer_killed_between_temporary_and_link_leaves_nothing_visible(project, way):
    if way == "unnamed" and not _unnamed_files_here(project.store):
        pytest.skip("this file system has no unnamed files (the named way is tested)")
    proc = subprocess.run(_killed_writer(way, *message_args("s1", "doomed")),
                          cwd=project.root, env=project.env, capture_output=True)
    assert proc.returncode == -9
    leftovers = project.files("s1")
    if way == "unnamed":
        assert leftovers == []  # the file system freed the unnamed file
    else:
        assert len(leftovers) == 1 and leftovers[0].startswith(".tmp-")  # the temporary
    read = project.cli("read", "--session-id", "s1")  # a temporary is no record: no session
    assert read.rc == 1 and read.code == "SESSION_UNKNOWN", read.stdout
    assert project.cli(*message_args("s1", "survivor")).data["sequence_number"] == 0
    texts = [m["text"] for m in project.cli("read", "--session-id", "s1").data["messages"]]
    assert texts == ["survivor"]


def test_a_session_directory_removed_while_a_write_holds_it_open_is_made_again(project):
    """The Store opens a session's directories once per operation; an empty one a purge takes
    away meanwhile can hold nothing new, so the create makes the directory again instead of
    failing (as a create that opened it at that moment would)."""
    from agent_memory.outbox.store import PENDING, Store, StoredFile
    session_dir = os.path.join(project.store, "emptied")
    os.mkdir(session_dir, 0o700)
    name = "2026-01-02T03.04.05.678-0e3b3f1c-1d2e-4f00-8a00-123456789abc.ses"
    with Store(project.root) as store:
        dirs = store._session_dirs("emptied", (PENDING,))
        try:
            os.rmdir(session_dir)
            store._create_in(dirs, StoredFile("emptied", PENDING, name), b"{}\n")
        finally:
            os.close(dirs[PENDING])
    assert project.files("emptied") == [name]
    with open(os.path.join(session_dir, name), "rb") as handle:
        assert handle.read() == b"{}\n"


def test_a_whole_store_sync_removes_the_temporaries_of_killed_writers_only(synced_project,
                                                                           unique_session_id):
    p, sid = synced_project, unique_session_id
    assert p.cli("--store", "file", *open_args(sid)).rc == 0
    proc = subprocess.run(_killed_writer("named", "--config", p.config, "--store", "file",
                                         *message_args(sid, "doomed")),
                          cwd=p.root, env=p.env, capture_output=True)
    assert proc.returncode == -9
    session = os.path.join(p.store, sid)
    orphan = next(n for n in os.listdir(session) if n.startswith(".tmp-"))
    os.utime(os.path.join(session, orphan), (time.time() - 60, time.time() - 60))
    # a temporary of a writer still running (this test's own pid): never touched
    live = f".tmp-{os.getpid()}-{'0' * 32}"
    with open(os.path.join(session, live), "wb") as handle:
        handle.write(b"{}")
    os.utime(os.path.join(session, live), (time.time() - 60, time.time() - 60))
    synced = p.cli("--no-agent", "sync")
    assert synced.rc == 0, synced.stdout
    assert "removed 1 temporaries left by writers killed midway (none held a record)" in \
        synced.data["warnings"]
    assert sorted(n for n in os.listdir(session) if n.startswith(".tmp-")) == [live]
    assert "warnings" not in p.cli("--no-agent", "sync").data  # nothing more to remove


def test_temporaries_of_killed_writers_are_swept_from_every_area(synced_project,
                                                                 unique_session_id):
    """A process killed while it writes a vector beside an imported message (`embed`, or the
    agent's backfill) leaves its temporary in `.imported/`; one killed while it saves the
    vector index leaves one in `.index/`. A sync with nothing pending still sweeps them."""
    p, sid = synced_project, unique_session_id
    assert p.cli(*open_args(sid)).rc == 0
    written = p.cli(*message_args(sid, "imported without a vector"), "--embed-budget", "0")
    assert written.out["store"] == "logger", written.stdout
    imported = os.path.join(p.store, ".imported", sid)
    assert not [n for n in os.listdir(imported) if n.endswith(".emb")]
    proc = subprocess.run(_killed_writer("named", "--config", p.config, "--no-agent", "embed"),
                          cwd=p.root, env=p.env, capture_output=True)
    assert proc.returncode == -9, proc.stderr.decode()
    orphan = next(n for n in os.listdir(imported) if n.startswith(".tmp-"))
    os.utime(os.path.join(imported, orphan), (time.time() - 60, time.time() - 60))
    index = os.path.join(p.store, ".index")
    os.makedirs(index, exist_ok=True)
    dead_pid = subprocess.Popen([sys.executable, "-c", "pass"])  # a writer that is gone
    dead_pid.wait()
    index_orphan = os.path.join(index, f"state.json.tmp-{dead_pid.pid}")
    with open(index_orphan, "wb") as handle:
        handle.write(b"{")
    os.utime(index_orphan, (time.time() - 60, time.time() - 60))
    assert not os.listdir(os.path.join(p.store, sid))  # nothing pending: the early answer
    synced = p.cli("--no-agent", "sync")
    assert synced.rc == 0, synced.stdout
    assert "removed 2 temporaries left by writers killed midway (none held a record)" in \
        synced.data["warnings"], synced.stdout
    assert not [n for n in os.listdir(imported) if ".tmp-" in n]
    assert not os.path.exists(index_orphan)


@pytest.mark.parametrize("way", ["unnamed", "named"])
def test_a_create_never_overwrites_and_leaves_only_the_record(tmp_path, monkeypatch, way):
    """Both ways of creating a record (an unnamed file; a named temporary where a system has
    none): the record whole under its name, nothing else in the directory, and a second create
    under the name refused with the first one's bytes kept."""
    from agent_memory.outbox import atomic
    monkeypatch.setattr(atomic, "_UNNAMED", way == "unnamed" and atomic._UNNAMED)
    fd = atomic.open_dir(str(tmp_path))
    try:
        atomic.create_exclusive(fd, "record", b"first")
        with pytest.raises(FileExistsError):
            atomic.create_exclusive(fd, "record", b"second")
    finally:
        os.close(fd)
    assert os.listdir(tmp_path) == ["record"]
    assert (tmp_path / "record").read_bytes() == b"first"
    assert oct((tmp_path / "record").stat().st_mode & 0o777) == oct(0o600)
