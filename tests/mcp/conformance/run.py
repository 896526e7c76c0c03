"""The official MCP conformance suite against `agent-memory mcp --listen`, directly over
streamable HTTP (no bridge): one server in a scratch project, every scenario of scenarios.txt
at each protocol version it names, the per-check exceptions of expected-failures.yml. Fails
unless every run reported checks and passed, scenarios.txt judged every server scenario of the
pinned suite, and the server then stopped cleanly on SIGTERM (exit 0).

    .venv/bin/python tests/mcp/conformance/run.py      (make conformance; CI: .ci/run)

Installs the pinned suite here (npm) on first use. Listens on 127.0.0.1 only.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CLI = os.path.join(os.path.dirname(sys.executable), "agent-memory")
NODE = os.path.join(HERE, "node_modules", ".bin", "node")
SUITE = os.path.join(HERE, "node_modules", "@modelcontextprotocol", "conformance", "dist",
                     "index.js")
BASELINE = os.path.join(HERE, "expected-failures.yml")


def install() -> None:
    if not (os.path.exists(NODE) and os.path.exists(SUITE)):
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent"], cwd=HERE,
                       check=True, timeout=600)


def judged(path: str) -> tuple[list[tuple[str, str]], set[str]]:
    """scenarios.txt: the (scenario, version) runs, and the scenarios set aside."""
    runs, aside = [], set()
    with open(path, encoding="utf-8") as handle:
        for raw in handle:
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("- "):
                aside.add(line[2:].split(":", 1)[0].strip())
                continue
            name, *versions = line.split("#", 1)[0].split()
            assert versions, f"scenarios.txt: {name} names no protocol version"
            runs += [(name, version) for version in versions]
    return runs, aside


def suite(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([NODE, SUITE, *args], capture_output=True, text=True, **kwargs)


def server_scenarios() -> set[str]:
    listed = suite("list", "--server", check=True, timeout=120).stdout
    return set(re.findall(r"^\s+- (\S+)", listed, re.MULTILINE))


def start_server(root: str) -> tuple[subprocess.Popen, str, str]:
    """`agent-memory --store file --no-agent mcp --listen 127.0.0.1:0` in a scratch project:
    the process, its URL (from its stderr) and its stderr's file."""
    subprocess.run(["git", "init", "-q", root], check=True)
    subprocess.run([CLI, "store", "init"], cwd=root, check=True, capture_output=True)
    errors = os.path.join(root, "server.err")
    env = {k: v for k, v in os.environ.items()
           if k not in ("AGENT_MEMORY_CONFIG", "AGENT_MEMORY_MCP_TOKEN")}
    with open(errors, "w") as sink:
        server = subprocess.Popen([CLI, "--store", "file", "--no-agent", "mcp", "--listen",
                                   "127.0.0.1:0"], cwd=root, env=env, stdout=subprocess.PIPE,
                                  stderr=sink, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with open(errors, encoding="utf-8") as handle:
            found = re.search(r"serving (http://\S+)", handle.read())
        if found:
            return server, found.group(1), errors
        if server.poll() is not None:
            break
        time.sleep(0.1)
    server.kill()
    raise SystemExit(f"conformance: the server did not start:\n{open(errors).read()}")


def run_one(url: str, scenario: str, version: str, out: str) -> tuple[bool, str]:
    """One scenario at one version: (passed, what to show)."""
    done = suite("server", "--url", url, "--scenario", scenario, "--spec-version", version,
                 "--expected-failures", BASELINE, "-o", out, timeout=300)
    text = done.stdout + done.stderr
    if "SKIPPED" in text and not os.path.isdir(out):
        return False, f"skipped by the suite:\n{text}"
    checks = []
    for folder, _dirs, files in os.walk(out):
        if "checks.json" in files:
            with open(os.path.join(folder, "checks.json"), encoding="utf-8") as handle:
                checks += json.load(handle)
    if not checks:
        return False, f"no checks were reported:\n{text}"
    if done.returncode != 0:
        return False, text[-4000:]
    ran = sum(1 for c in checks if c["status"] == "SUCCESS")
    return True, f"{ran} of {len(checks)} checks passed"


def main() -> int:
    install()
    runs, aside = judged(os.path.join(HERE, "scenarios.txt"))
    known = server_scenarios()
    named = {name for name, _ in runs} | aside
    unjudged, unknown = sorted(known - named), sorted(named - known)
    if unjudged or unknown:
        print(f"conformance: scenarios.txt does not match the pinned suite: not judged "
              f"{unjudged}, not in the suite {unknown}", file=sys.stderr)
        return 1
    failed = []
    with tempfile.TemporaryDirectory(prefix="am-conformance.") as scratch:
        root = os.path.join(scratch, "project")
        server, url, errors = start_server(root)
        try:
            for scenario, version in runs:
                ok, shown = run_one(url, scenario, version,
                                    os.path.join(scratch, "results", f"{scenario}@{version}"))
                print(f"conformance: {'PASS' if ok else 'FAIL'} {scenario} at {version}: "
                      f"{shown}", flush=True)
                if not ok:
                    failed.append(f"{scenario}@{version}")
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                rc = server.wait(60)
            except subprocess.TimeoutExpired:
                server.kill()
                rc = server.wait()
            closing = server.stdout.read()
        if rc != 0 or '"success":true' not in closing:
            print(f"conformance: the server did not stop cleanly on SIGTERM (exit {rc}):\n"
                  f"{closing}\n{open(errors).read()}", file=sys.stderr)
            failed.append("clean stop")
    print(f"conformance: {len(runs) + 1 - len(failed)} passed, {len(failed)} failed"
          + (f" ({', '.join(failed)})" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
