"""Configuration: lookup order, generate (0600), validate (redacted), invalid = exit 6."""

import json
import os
import stat

from amtest import message_args


def write_doc(path, document):
    with open(path, "w") as handle:
        json.dump(document, handle) if not isinstance(document, str) else handle.write(document)
    return str(path)


def test_no_configuration_means_file_store_only(project):
    result = project.cli("config", "validate")
    assert result.rc == 0
    assert result.data["source"] is None and result.data["file_store_only"] is True
    assert result.data["config"]["embedding_model"] == {"model": "BAAI/bge-m3", "dimension": 1024}
    assert project.cli(*message_args("s1", "x")).out["store"] == "file"


def test_generate_writes_private_document_and_validate_redacts_token(project, tmp_path):
    from ops.fleet.tls import make_pki
    pki = make_pki(tmp_path / "pki")  # validate reads the certificates: real ones
    certs = tmp_path / "certs"
    certs.mkdir()
    for name, made in (("client.crt", "client_cert"), ("client.key", "client_key"),
                       ("ca.crt", "ca")):
        (certs / name).write_bytes(open(pki[made], "rb").read())
    os.chmod(certs / "client.key", 0o600)
    output = tmp_path / "cfg" / "config.json"
    generated = project.cli("config", "generate", "--output", str(output), "--logger-host",
                            "10.0.0.5", "--embed-host", "10.0.0.6", "--logger-cert", "client.crt",
                            "--logger-key", "client.key", "--logger-ca", "ca.crt",
                            "--token", "s3cret-token", cwd=str(certs))
    assert generated.rc == 0, generated.stdout
    assert "s3cret-token" not in generated.stdout
    assert stat.S_IMODE(os.stat(output).st_mode) == 0o600
    document = json.loads(output.read_text())
    logger = document["ailogger_client"]
    assert logger["protocol"] == "mtls" and logger["server"] == {"host": "10.0.0.5", "port": 8443}
    assert logger["ssl"]["cert"] == str(certs / "client.crt")
    assert document["embedding_client"]["server"]["host"] == "10.0.0.6"
    checked = project.cli("--config", str(output), "config", "validate")
    assert checked.rc == 0 and checked.data["file_store_only"] is False
    assert checked.data["config"]["ailogger_client"]["auth"]["token"] == "***"
    assert "s3cret-token" not in checked.stdout + checked.stderr
    again = project.cli("config", "generate", "--output", str(output), "--logger-host", "h",
                        "--embed-host", "h")
    assert again.rc == 2  # no silent overwrite without --force


def test_generate_refuses_missing_certificate(project, tmp_path):
    output = tmp_path / "c.json"
    result = project.cli("config", "generate", "--output", str(output), "--logger-host", "h",
                         "--embed-host", "h", "--logger-cert", str(tmp_path / "nope.crt"),
                         "--logger-key", str(tmp_path / "nope.key"))
    assert result.rc == 6 and result.code == "CONFIG_INVALID"
    assert not output.exists()


def test_relative_paths_resolve_against_the_document(project, tmp_path):
    folder = tmp_path / "conf"
    folder.mkdir()
    from ops.fleet.tls import make_pki
    (folder / "ca.pem").write_bytes(open(make_pki(tmp_path / "pki")["ca"], "rb").read())
    path = write_doc(folder / "config.json", {
        "ailogger_client": {"protocol": "https", "server": {"host": "h", "port": 1},
                            "ssl": {"ca": "ca.pem"}}})
    result = project.cli("--config", path, "config", "validate")
    assert result.rc == 0
    assert result.data["config"]["ailogger_client"]["ssl"]["ca"] == str(folder / "ca.pem")


def test_environment_variable_and_default_location(project, tmp_path):
    bad = write_doc(tmp_path / "env.json", "{broken")
    project.env["AGENT_MEMORY_CONFIG"] = bad
    env_result = project.cli("config", "validate")
    assert env_result.rc == 6 and bad in env_result.out["error"]["message"]
    del project.env["AGENT_MEMORY_CONFIG"]
    default = os.path.join(project.home, ".config", "vvz-agent-memory")
    os.makedirs(default)
    write_doc(os.path.join(default, "config.json"), {"embedding_model": {"model": "m", "dimension": 8}})
    result = project.cli("config", "validate")
    assert result.rc == 0 and result.data["config"]["embedding_model"] == {"model": "m", "dimension": 8}


def test_invalid_documents_are_exit_6_with_every_problem(project, tmp_path):
    path = write_doc(tmp_path / "bad.json", {
        "ailogger_client": {"protocol": "gopher", "server": {"host": "", "port": "80"},
                            "client": {"timeout": -1}},
        "embedding_model": {"dimension": 0},
        "surprise": {}})
    result = project.cli("--config", path, "config", "validate")
    assert result.rc == 6 and result.code == "CONFIG_INVALID"
    problems = result.out["error"]["details"]["problems"]
    assert len(problems) == 6, problems
    # every command refuses to run on an invalid configuration, before writing anything
    assert project.cli("--config", path, *message_args("s1", "x")).rc == 6
    assert project.files("s1") == []


def test_an_infinite_idle_exit_is_refused(project, tmp_path):
    # JSON's 1e400 reads as infinity: the agent started with it would refuse its --idle-exit
    path = tmp_path / "inf.json"
    path.write_text('{"agent": {"mode": "auto", "idle_exit": 1e400}}')
    result = project.cli("--config", str(path), "config", "validate")
    assert result.rc == 6 and result.code == "CONFIG_INVALID", result.stdout
    assert result.out["error"]["details"]["problems"] == [
        "agent.idle_exit must be a number of seconds above 0, got inf"]


def test_sections_that_are_not_objects_are_reported_not_fatal(project, tmp_path):
    """The Config takes its sections when it is made, before the validation: a section of the
    wrong shape must still come out as the validation's problem (exit 6), not a crash."""
    path = write_doc(tmp_path / "bad.json", {"outbox": [1], "output": "big",
                                             "ailogger_client": 3, "embedding_client": []})
    result = project.cli("--config", path, *message_args("s1", "x"))
    assert result.rc == 6 and result.code == "CONFIG_INVALID", result.stdout
    assert sorted(result.out["error"]["details"]["problems"]) == [
        "ailogger_client must be an object", "embedding_client must be an object",
        "outbox must be an object with max_pending_messages and/or max_pending_bytes",
        "output must be an object with max_chars"]
    assert project.files("s1") == []


def test_named_but_missing_configuration_is_invalid(project, tmp_path):
    result = project.cli("--config", str(tmp_path / "absent.json"), "config", "validate")
    assert result.rc == 6 and "not found" in result.out["error"]["message"]


def test_mtls_requires_certificate_and_key(project, tmp_path):
    path = write_doc(tmp_path / "m.json", {
        "embedding_client": {"protocol": "mtls", "server": {"host": "h", "port": 1}}})
    result = project.cli("--config", path, "config", "validate")
    assert result.rc == 6 and "mtls" in result.out["error"]["message"]
