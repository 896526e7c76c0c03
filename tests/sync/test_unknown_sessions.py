"""Which sessions exist is answered the same with the logger up (`--store auto`) as from the
files alone: a session neither side knows, or one deleted here whose delete still waits in the
outbox, is refused with the logger's code; one the outbox knows (opened here, not forwarded yet)
answers from the files, never SESSION_UNKNOWN."""

from amtest import SESSION_READS, message_args, open_args, session_read


def _code(read):
    return "SCOPE_SESSION_UNKNOWN" if read[0] == "search" else "SESSION_UNKNOWN"


def test_auto_reads_know_the_sessions_the_outbox_knows(synced_project, unique_session_id):
    p = synced_project
    offline, deleted = unique_session_id + "-offline", unique_session_id + "-deleted"
    assert p.cli("--store", "file", *open_args(offline)).rc == 0  # the logger never heard
    assert p.cli(*open_args(deleted)).out["store"] == "logger"
    written = p.cli(*message_args(deleted, "soon deleted"))
    assert written.out["store"] == "logger"
    assert p.cli("--store", "file", "session", "delete", "--session-id", deleted,
                 "--confirm", deleted).rc == 0  # the delete waits in the outbox
    assert p.cli("--store", "logger", "read", "--session-id", deleted).data["messages"]
    for read in SESSION_READS:
        refused = session_read(p, read, deleted)
        assert (refused.rc, refused.code) == (1, _code(read)), (read, refused.stdout)
        known = session_read(p, read, offline)
        if read[0] in ("path", "graph"):  # the session is known, the node is not
            assert known.code == "MESSAGE_UNKNOWN", (read, known.stdout)
        else:
            assert known.rc == 0 and known.out["store"] == "file", (read, known.stdout)
    # the reads across sessions leave it out too, as the files do
    assert p.cli("read", "--preview", "--session-id", deleted).data["entries"] == []
    assert deleted not in {e["session_id"] for e in p.cli("read", "--preview").data["entries"]}
    found = p.cli("search", "--query", "soon deleted", "--scope", "all_projects").data
    assert deleted not in {m["session_id"] for m in found["matches"]}
    gone = p.cli("get", written.data["message_id"])
    assert (gone.rc, gone.code) == (5, "MESSAGE_UNKNOWN"), gone.stdout
