"""Secrets: a token and a private key's path never appear in any output, log line, state file
or agent log; a configuration holding a token that others can read is warned about."""

from __future__ import annotations

import json
import os
import signal

from agent_memory.sync.agent.channel import socket_path as agent_socket
from amtest import message_args, open_args, wait_for

TOKEN = "tok-7f3a9c1e5b-very-secret"


def test_a_token_and_a_key_path_never_show(synced_project, fleet, tmp_path,
                                           unique_session_id):
    p, sid = synced_project, unique_session_id
    from ops.fleet.tls import make_pki
    pki = make_pki(tmp_path / "pki")  # a real certificate and its key: validate reads them
    secret_dir = tmp_path / "hidden-key-dir-9d2e"
    secret_dir.mkdir()
    key = secret_dir / "client.key"
    key.write_bytes(open(pki["client_key"], "rb").read())
    os.chmod(key, 0o600)
    document = json.load(open(fleet.config_path))
    for name in ("ailogger_client", "embedding_client"):
        document[name]["auth"] = {"token": TOKEN}
    config = tmp_path / "with-token.json"
    config.write_text(json.dumps(document))
    os.chmod(config, 0o600)
    p.config = str(config)
    outputs = []
    for args in (["config", "validate"], ["--no-agent", *open_args(sid)],
                 ["--no-agent", *message_args(sid, "with a token")], ["status", "--probe"],
                 ["--no-agent", "read", "--session-id", sid], ["verify"]):
        result = p.cli(*args)
        outputs.append(result.stdout + result.stderr)
    watcher = p.popen("sync", "--watch")
    try:
        wait_for(lambda: os.path.exists(agent_socket(p.store)), "the agent")
        served = p.cli(*message_args(sid, "through the agent"), "--wait", "10")
        outputs.append(served.stdout + served.stderr)
    finally:
        watcher.send_signal(signal.SIGTERM)
        out, err = watcher.communicate(timeout=60)
    outputs.append(out.decode() + err.decode())
    # a key file that is missing: the problem names the field, not the path
    cert = tmp_path / "client.crt"
    cert.write_bytes(open(pki["client_cert"], "rb").read())
    document["ailogger_client"]["ssl"] = {"cert": str(cert), "key": str(secret_dir / "gone.key")}
    document["ailogger_client"]["protocol"] = "mtls"
    config.write_text(json.dumps(document))
    broken = p.cli("config", "validate")
    assert broken.rc == 6 and "ailogger_client.ssl.key: file not found" in broken.stdout
    outputs.append(broken.stdout + broken.stderr)
    document["ailogger_client"]["ssl"]["key"] = str(key)
    config.write_text(json.dumps(document))
    shown = p.cli("config", "validate")
    assert shown.rc == 0 and shown.data["config"]["ailogger_client"]["ssl"]["key"] == "***"
    outputs.append(shown.stdout + shown.stderr)
    for name in os.listdir(p.store):
        path = os.path.join(p.store, name)
        if os.path.isfile(path) and not name.endswith(".lock"):
            outputs.append(open(path, errors="replace").read())
    everything = "\n".join(outputs)
    assert TOKEN not in everything
    assert "hidden-key-dir-9d2e" not in everything


def test_a_readable_configuration_with_a_token_is_warned_about(synced_project, fleet,
                                                               tmp_path):
    document = json.load(open(fleet.config_path))
    document["ailogger_client"]["auth"] = {"token": TOKEN}
    config = tmp_path / "readable.json"
    config.write_text(json.dumps(document))
    os.chmod(config, 0o644)
    synced_project.config = str(config)
    checked = synced_project.cli("config", "validate")
    assert checked.rc == 0 and len(checked.data["warnings"]) == 1
    assert "chmod 600" in checked.data["warnings"][0]
    listed = synced_project.cli("sessions")  # every command that loads it says so on stderr
    assert "other users can read it" in listed.stderr and TOKEN not in listed.stderr
    os.chmod(config, 0o600)
    assert synced_project.cli("config", "validate").data["warnings"] == []
