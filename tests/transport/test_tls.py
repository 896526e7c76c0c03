"""The production transport, end to end against the reference fleet: mTLS with a token, https
with a token, and each way a credential goes wrong (no client certificate, one from another CA,
an expired one, a server this configuration does not trust, a host name mismatch, a wrong
token). A credential problem is told apart from an outage everywhere: writes stay in the outbox
and say so, `--store logger` exits 6, reads fall back with a warning, `status` names it, and
nothing is lost or written twice once it is fixed."""

from __future__ import annotations

import copy
import json
import os
import shutil
import signal
import stat

import pytest

from amtest import make_project, message_args, open_args, wait_for
from fleetutil import read_all


def document(fleet) -> dict:
    with open(fleet.config_path) as handle:
        return json.load(handle)


def write_document(path, doc: dict) -> str:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(doc, handle)
    return str(path)


def both_sections(doc: dict, change) -> dict:
    changed = copy.deepcopy(doc)
    for name in ("ailogger_client", "embedding_client"):
        change(changed[name])
    return changed


def no_secret_anywhere(project, token: str, *outputs: str) -> None:
    """The token is in no output, and in no file of the store (logs and state included)."""
    for text in outputs:
        assert token not in text
    for folder, _dirs, files in os.walk(project.store):
        for name in files:
            path = os.path.join(folder, name)
            if stat.S_ISREG(os.lstat(path).st_mode):
                with open(path, "rb") as handle:
                    assert token.encode() not in handle.read(), path


def test_every_command_over_mtls_with_a_token(tls_fleet, tmp_path, unique_session_id):
    sid = unique_session_id
    token = tls_fleet.security["token"]
    project = make_project(tmp_path, config=str(tls_fleet.config_path))
    outputs = []

    def run(*args):
        result = project.cli(*args)
        outputs.extend((result.stdout, result.stderr))
        assert result.rc == 0, result.stdout
        return result

    assert run(*open_args(sid)).out["store"] == "logger"
    first = run(*message_args(sid, "over mutual TLS, inline"))
    assert first.out["store"] == "logger" and first.data["sequence_number"] == 0
    assert run("--store", "file", *message_args(sid, "waits for a sync")).out["store"] == "file"
    synced = run("sync")
    assert synced.data["totals"]["imported"] == 1
    vectors = run("embed")
    assert vectors.data["remaining"] == 0
    project.env["AGENT_MEMORY_AGENT"] = "auto"  # the agent's served writes and vectors
    try:
        run(*message_args(sid, "starts the agent"))
        agent = wait_for(lambda: (lambda s: s if s["running"] else None)(
            run("agent", "status").data), "the agent to answer")
        assert agent["matches"] is True
        served = run(*message_args(sid, "served by the agent over mTLS"))
        assert served.out["store"] == "logger", served.stdout
        for args in (["read", "--session-id", sid], ["get", first.data["message_id"]],
                     ["sessions", "--project-id", "proj"],
                     ["search", "--query", "mutual TLS", "--scope", "session", "--target", sid],
                     ["working-set", "--session-id", sid, "--anchor-text", "TLS"]):
            answer = run(*args)
            assert answer.out["store"] == "logger", (args, answer.stdout)
        probe = run("status", "--probe").data["probe"]
        assert probe["logger"]["answers"] is True and probe["embedder"]["answers"] is True
        assert run("agent", "status").data["requests"] >= 7
    finally:
        project.cli("agent", "stop")
    assert [m["text"] for m in read_all(tls_fleet, sid)] == [
        "over mutual TLS, inline", "waits for a sync", "starts the agent",
        "served by the agent over mTLS"]
    assert run("embed").data["remaining"] == 0  # the agent's vectors came over mTLS too
    no_secret_anywhere(project, token, *outputs)  # the agent's log is in the store


def test_https_with_a_token(fleet_factory, tmp_path, unique_session_id):
    fleet = fleet_factory(protocol="https", token="an-https-token")
    project = make_project(tmp_path, config=str(fleet.config_path))
    sid = unique_session_id
    assert project.cli(*open_args(sid)).out["store"] == "logger"
    written = project.cli(*message_args(sid, "over https"))
    assert written.out["store"] == "logger", written.stdout
    assert project.cli("read", "--session-id", sid).out["store"] == "logger"
    assert project.cli("status", "--probe").data["probe"]["logger"]["answers"] is True
    assert project.cli("--store", "logger", "read", "--session-id", sid).rc == 0


def _variants(fleet) -> dict[str, dict]:
    """The six ways a credential goes wrong, as configuration documents."""
    doc = document(fleet)
    files = fleet.security["files"]

    def without_client_certificate(section):
        section["protocol"] = "https"
        section["ssl"].pop("cert"), section["ssl"].pop("key")

    return {
        "no client certificate": (both_sections(doc, without_client_certificate),
                                  "client_certificate"),
        "a client certificate of another CA": (both_sections(doc, lambda s: s["ssl"].update(
            cert=files["other_client_cert"], key=files["other_client_key"])),
            "client_certificate"),
        "an expired client certificate": (both_sections(doc, lambda s: s["ssl"].update(
            cert=files["expired_client_cert"], key=files["expired_client_key"])),
            "client_certificate"),
        "a server this configuration does not trust": (both_sections(
            doc, lambda s: s["ssl"].update(ca=files["other_ca"])), "server_trust"),
        "a wrong token": (both_sections(doc, lambda s: s["auth"].update(token="not-it")),
                          "token"),
    }


def _told_apart(project, config: str, kind: str, sid: str, text: str) -> None:
    """What every command says with a credential problem of `kind`."""
    with_it = ["--config", config]
    written = project.cli(*with_it, *message_args(sid, text))
    assert written.rc == 0 and written.out["store"] == "file", written.stdout
    assert written.data["forwarded"] is False
    assert f"does not accept this configuration's credentials ({kind})" in written.data["reason"]
    assert "delivered once that is fixed" in written.data["reason"]
    direct = project.cli(*with_it, "--store", "logger", *message_args(sid, "never written"))
    assert direct.rc == 6 and direct.code == "CREDENTIALS_REJECTED", direct.stdout
    assert direct.out["error"]["details"]["credentials"] == kind
    read = project.cli(*with_it, "read", "--session-id", sid)
    assert read.rc == 0 and read.out["store"] == "file", read.stdout
    assert [w["credentials"] for w in read.data["warnings"]
            if w["kind"] == "logger_credentials"] == [kind]
    probe = project.cli(*with_it, "status", "--probe").data["probe"]["logger"]
    assert probe["answers"] is False and probe["credentials"] == kind and probe["fix"]


def test_each_credential_problem_is_told_apart_from_an_outage(tls_fleet, tmp_path,
                                                              unique_session_id):
    sid = unique_session_id
    project = make_project(tmp_path, config=str(tls_fleet.config_path))
    assert project.cli(*open_args(sid)).out["store"] == "logger"
    texts = []
    for number, (name, (doc, kind)) in enumerate(_variants(tls_fleet).items()):
        config = write_document(tmp_path / f"variant-{number}.json", doc)
        texts.append(f"written with {name}")
        _told_apart(project, config, kind, sid, texts[-1])
    stuck = project.cli("--config", config, "sync")
    assert stuck.rc == 6 and stuck.code == "CREDENTIALS_REJECTED", stuck.stdout
    # an outage is still an outage: the logger down answers "unreachable", not credentials
    tls_fleet.control.go_down("logger")
    try:
        away = project.cli("--no-agent", *message_args(sid, "while the logger is down"))
        assert away.out["store"] == "file" and "logger unreachable" in away.data["reason"]
        assert project.cli("--no-agent", "--store", "logger", "read", "--session-id",
                           sid).rc == 4
    finally:
        tls_fleet.control.come_up("logger")
    texts.append("while the logger is down")
    fixed = project.cli("--no-agent", "sync")  # the good configuration: everything, once
    assert fixed.rc == 0 and fixed.data["totals"]["imported"] == len(texts), fixed.stdout
    assert [m["text"] for m in read_all(tls_fleet, sid)] == texts
    assert not [n for n in project.final_files(sid) if n.endswith(".msg")]


def test_a_host_name_the_server_certificate_does_not_carry(fleet_factory, tmp_path,
                                                           unique_session_id):
    fleet = fleet_factory(protocol="https")
    fleet.stop()  # serve a certificate of the right CA, for another host name
    from ops.fleet import security
    secured = security.read(fleet.data_dir)
    secured["files"].update(server_cert=secured["files"]["wrong_host_server_cert"],
                            server_key=secured["files"]["wrong_host_server_key"])
    security.write(fleet.data_dir, secured)
    fleet.start()
    checked = document(fleet)
    project = make_project(tmp_path, config=write_document(tmp_path / "checked.json", checked))
    sid = unique_session_id
    assert project.cli("--store", "file", *open_args(sid)).rc == 0
    _told_apart(project, project.config, "hostname", sid, "the wrong host")
    unchecked = both_sections(checked, lambda s: s["ssl"].update(check_hostname=False))
    relaxed = write_document(tmp_path / "unchecked.json", unchecked)
    synced = project.cli("--config", relaxed, "sync")  # any certificate of the CA: accepted
    assert synced.rc == 0 and synced.data["totals"]["imported"] == 1, synced.stdout


def test_the_watcher_backs_off_long_and_takes_a_certificate_renewed_in_place(
        tls_fleet, tmp_path, unique_session_id):
    from ops.fleet import tls
    sid = unique_session_id
    files = tls_fleet.security["files"]
    mine = tmp_path / "mine"
    mine.mkdir()
    cert, key = mine / "client.crt", mine / "client.key"
    shutil.copy(files["expired_client_cert"], cert)
    shutil.copy(files["expired_client_key"], key)
    os.chmod(key, 0o600)
    doc = both_sections(document(tls_fleet), lambda s: s["ssl"].update(cert=str(cert),
                                                                        key=str(key)))
    config = write_document(tmp_path / "renewing.json", doc)
    project = make_project(tmp_path, config=config)
    validated = project.cli("config", "validate")
    assert validated.rc == 6 and "expired on" in validated.out["error"]["message"]
    assert project.cli("--store", "file", *open_args(sid)).rc == 0
    assert project.cli("--store", "file", *message_args(sid, "kept until renewed")).rc == 0
    watcher = project.popen("sync", "--watch")
    try:
        def refused():
            shown = project.cli("status").data
            return (shown.get("credentials") or {}).get("refused")
        seen = wait_for(refused, "the watcher to meet the refusal and publish it")
        assert seen["credentials"] == "client_certificate" and seen["retry_in_s"] >= 30
        assert "expired on" in project.cli("status").data["credentials"]["problems"][0]
        renewed_cert, renewed_key = tls.issue_client(os.path.dirname(files["ca"]),
                                                     f"renewed-{sid}")
        shutil.copy(renewed_key, key)  # renewed in place: same paths, new content
        shutil.copy(renewed_cert, cert)
        wait_for(lambda: not [n for n in project.final_files(sid) if n.endswith(".msg")],
                 "the renewed certificate to deliver the message at once", timeout=30)
        assert [m["text"] for m in read_all(tls_fleet, sid)] == ["kept until renewed"]
        assert project.cli("config", "validate").rc == 0
    finally:
        watcher.send_signal(signal.SIGTERM)
        out, err = watcher.communicate(timeout=60)
    events = [json.loads(line)["event"] for line in err.decode().splitlines()
              if line.startswith("{")]
    assert "logger_credentials" in events and "config_reloaded" in events
    assert "logger_unreachable" not in events
    no_secret_anywhere(project, tls_fleet.security["token"], out.decode(), err.decode())


@pytest.mark.parametrize("case", ["soon", "mismatched key", "open key"])
def test_config_validate_checks_the_certificate_files(tls_fleet, tmp_path, case):
    files = tls_fleet.security["files"]
    key = tmp_path / "client.key"
    shutil.copy(files["client_key"] if case != "mismatched key" else files["other_client_key"],
                key)
    os.chmod(key, 0o644 if case == "open key" else 0o600)
    cert = files["soon_client_cert"] if case == "soon" else files["client_cert"]
    if case == "soon":
        shutil.copy(files["soon_client_key"], key)
    doc = both_sections(document(tls_fleet), lambda s: s["ssl"].update(cert=cert, key=str(key)))
    project = make_project(tmp_path, config=write_document(tmp_path / "c.json", doc))
    result = project.cli("config", "validate")
    if case == "mismatched key":
        assert result.rc == 6 and "does not match" in result.out["error"]["message"]
    elif case == "soon":
        assert result.rc == 0 and any("expires on" in w for w in result.data["warnings"])
    else:
        assert result.rc == 0 and any("may be read by others" in w
                                      for w in result.data["warnings"])
    assert str(key) not in result.stdout  # a key's path is never shown


def test_config_generate_check_hostname_and_a_setting_a_client_would_ignore(tmp_path,
                                                                            tls_fleet):
    project = make_project(tmp_path)
    files = tls_fleet.security["files"]
    out = tmp_path / "generated.json"
    made = project.cli("config", "generate", "--output", str(out), "--logger-host", "localhost",
                       "--embed-host", "localhost", "--logger-cert", files["client_cert"],
                       "--logger-key", files["client_key"], "--logger-ca", files["ca"],
                       "--check-hostname")
    assert made.rc == 0, made.stdout
    generated = json.loads(out.read_text())
    for name in ("ailogger_client", "embedding_client"):
        assert generated[name]["ssl"]["check_hostname"] is True
    misplaced = copy.deepcopy(generated)
    misplaced["ailogger_client"]["ssl"].pop("check_hostname")
    misplaced["ailogger_client"]["client"]["ssl"] = {"check_hostname": True}
    refused = project.cli("--config", write_document(tmp_path / "m.json", misplaced),
                          "config", "validate")
    assert refused.rc == 6 and "is not read there" in refused.out["error"]["message"]


def test_a_client_certificate_the_embedder_refuses_during_a_backfill_is_credentials(
        tls_fleet, tmp_path, unique_session_id):
    """The watcher's backfill meets the embedder refusing this configuration's client
    certificate (the logger takes it): the agent reports it as the same kind the logger's
    health and every command report (credentials, with what to fix), not as an outage, and
    waits long before trying again."""
    files = tls_fleet.security["files"]
    doc = document(tls_fleet)
    doc["embedding_client"]["ssl"].update(cert=files["other_client_cert"],
                                          key=files["other_client_key"])
    project = make_project(tmp_path, config=write_document(tmp_path / "refused.json", doc))
    sid = unique_session_id
    assert project.cli(*open_args(sid)).rc == 0
    assert project.cli("--store", "file", *message_args(sid, "a text to embed")).rc == 0
    watcher = project.popen("sync", "--watch")
    try:
        def refused():
            state = project.cli("status").data["watcher"].get("state") or {}
            return (state.get("embedder") or {}).get("last_error")
        seen = wait_for(refused, "the backfill to meet the embedder's refusal")
        assert seen["kind"] == "credentials" and seen["credentials"] == "client_certificate", seen
        assert seen["fix"] and seen["retry_in_s"] >= 30, seen
    finally:
        watcher.send_signal(signal.SIGTERM)
        _out, err = watcher.communicate(timeout=60)
    events = [json.loads(line)["event"] for line in err.decode().splitlines()
              if line.startswith("{")]
    assert "embedder_credentials" in events and "embedder_unreachable" not in events
