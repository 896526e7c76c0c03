"""A refused message is not resent on every watcher round: rounds come with every new file of
its session, and resending would count a refusal each time and quarantine it within seconds."""

import json
import os
import signal

from amtest import make_project, message_args, open_args


def test_watcher_rounds_do_not_repeat_a_fresh_refusal(tmp_path, fleet_factory, watchers,
                                                      unique_session_id):
    private = fleet_factory()
    private.control.set_faults("logger", refuse_pattern="poison")
    p = make_project(tmp_path, config=str(private.config_path))
    sid = unique_session_id
    assert p.cli(*open_args(sid)).out["store"] == "logger"
    watcher = watchers.start(p, "--retry-refused-after", "600").wait_ready()
    refused = p.cli(*message_args(sid, "a poison message"), "--wait", "30")
    assert refused.rc == 1 and refused.out["error"]["code"] == "INJECTED_REFUSAL", \
        (refused.stdout, watcher.read_stderr()[-4000:])
    for i in range(4):  # each write makes a round of the same session
        later = p.cli(*message_args(sid, f"a good message {i}"), "--wait", "30")
        assert later.rc == 0 and later.out["store"] == "logger", later.stdout
    pending = [n for n in p.final_files(sid) if n.endswith(".msg")]
    assert len(pending) == 1 and refused.out["error"]["message"].count(pending[0]) == 1
    assert not [n for n in p.files(sid, ".quarantine") if n.endswith(".msg")]
    with open(os.path.join(p.store, ".sync-state.json")) as handle:
        [entry] = json.load(handle)["refusals"].values()
    assert entry["count"] == 1 and entry["code"] == "INJECTED_REFUSAL"
    assert watcher.stop(signal.SIGTERM) == 0
