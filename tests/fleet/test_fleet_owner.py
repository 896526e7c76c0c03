"""A fleet started for an owner process stops by itself when that process dies without its
teardown (a test run killed by a timeout), leaving no service or queue worker behind."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

OWNER = textwrap.dedent("""
    import json, os, sys, time
    from pathlib import Path
    from ops.fleet.handle import Fleet
    fleet = Fleet(Path(sys.argv[1]), owner_pid=os.getpid()).start()
    print(json.dumps({"logger": fleet.logger_pid, "embedder": fleet.embedder_pid}), flush=True)
    time.sleep(600)
""")


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
def test_the_fleet_follows_its_owner_down(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(tmp_path / "fleet")], cwd=root,
                             stdout=subprocess.PIPE, text=True)
    try:
        pids = json.loads(owner.stdout.readline())
        groups = [pids["logger"], pids["embedder"]]  # each service leads its own group
        assert all(group_alive(g) for g in groups)
        owner.send_signal(signal.SIGKILL)  # no teardown runs
        owner.wait(timeout=10)
        deadline = time.monotonic() + 30
        while any(group_alive(g) for g in groups):
            assert time.monotonic() < deadline, "the fleet outlived its owner by 30 s"
            time.sleep(0.2)
    finally:
        if owner.poll() is None:
            owner.kill()
        from ops.fleet import launcher
        launcher.stop(tmp_path / "fleet", grace=2.0)  # a no-op when it already stopped
