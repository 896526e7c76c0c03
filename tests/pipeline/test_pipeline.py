"""`python -m pipeline`: its arguments, its output, and that a failing check fails the run."""

import json
import subprocess
import sys

from fleetutil import logger_sessions

ROOT = __file__.rsplit("/tests/", 1)[0]


def pipeline(*args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


def test_list_names_every_check_with_a_description():
    done = pipeline("--list")
    assert done.returncode == 0
    rows = [line.split("\t") for line in done.stdout.splitlines()]
    names = [r[0] for r in rows]
    assert {"config-valid", "logger-answers", "write-auto-lands-in-logger",
            "import-keeps-id-and-time", "exit-6-config-invalid"} <= set(names)
    assert all(len(r) == 2 and r[1] for r in rows)
    assert len(names) == len(set(names))


def test_unknown_check_is_a_usage_error():
    done = pipeline("no-such-check")
    assert done.returncode == 2
    assert "no-such-check" in json.loads(done.stdout)["message"]


def test_a_configuration_without_logger_is_exit_6(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"embedding_model": {"model": "m", "dimension": 4}}))
    assert pipeline("--config", str(path)).returncode == 6


def test_passing_checks_print_one_line_each_and_the_summary(fleet):
    done = pipeline("--config", str(fleet.config_path), "--jobs", "3", "config-valid",
                    "logger-answers", "write-auto-lands-in-logger")  # at once, lines in order
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    results = [json.loads(line) for line in lines[:-1]]
    assert [r["name"] for r in results] == ["config-valid", "logger-answers",
                                            "write-auto-lands-in-logger"]
    assert all(r["passed"] is True and r["seconds"] >= 0 for r in results)
    assert lines[-1] == "3 passed, 0 failed"
    left = [s for s in logger_sessions(fleet)
            if (s["project_id"] or "").startswith("agent-memory-pipeline-")]
    assert left == []  # the run deleted the sessions it opened


def test_one_failing_check_fails_the_run(fleet_factory):
    private = fleet_factory()
    private.control.set_faults("logger", refuse_pattern="pipeline check")
    done = pipeline("--config", str(private.config_path), "logger-answers",
                    "write-auto-lands-in-logger")
    assert done.returncode == 1, done.stdout
    lines = done.stdout.splitlines()
    ok, bad = (json.loads(line) for line in lines[:2])
    assert ok["passed"] is True
    assert bad["passed"] is False and bad["expected"] and bad["seen"]
    assert lines[-1] == "1 passed, 1 failed"
