"""The fleet client's import freezes the collector's view (gc.freeze) to spare the drain that
follows from walking its 60,000 objects again; in a process of our own only. A host process
running the Python API keeps its collector as it had it: a freeze there would exempt the
host's own objects from every later collection."""

from __future__ import annotations

import json
import subprocess
import sys

HOST = """
import gc, json, sys
import agent_memory
memory = agent_memory.Memory(sys.argv[1], sys.argv[2])
memory.open_session(sys.argv[3], "host-gc", ["human", "model"])
written = memory.write(sys.argv[3], "hello", sender_kind="human", sender_identity="alice",
                       receiver_kind="model", receiver_identity="claude")
print(json.dumps({"forwarded": written.forwarded,
                  "client": "ailogger_client" in sys.modules,
                  "frozen": gc.get_freeze_count(), "enabled": gc.isenabled()}))
"""

OWN = """
import gc, json
from agent_memory.sync.links.logger import import_client
import_client()
print(json.dumps({"frozen": gc.get_freeze_count(), "enabled": gc.isenabled()}))
"""


def _run(code: str, project, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=project.env, cwd=project.root, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_host_process_is_not_frozen(api_project, unique_session_id):
    host = _run(HOST, api_project, api_project.root, api_project.config, unique_session_id)
    assert host["forwarded"] is True and host["client"] is True  # the client was imported
    assert host["frozen"] == 0 and host["enabled"] is True


def test_a_process_of_our_own_is(api_project):
    own = _run(OWN, api_project)
    assert own["frozen"] > 10_000 and own["enabled"] is True
