"""Fault-injection soak: `kill -9` of writes, one-shot syncs and the project's agent at random
moments, hundreds of times, while the reference logger is slowed, drops connections, goes down
and comes back. Then one clean sync, and the checks that matter:

- every message whose `write` returned success is in the logger exactly once, with its
  original message id and time;
- no message is in the logger twice, and nothing the logger holds is unknown to the store;
- nothing is left pending but the poison (messages the logger refuses for the whole run),
  none of which reaches the logger and nothing else is quarantined;
- `verify` finds no damaged file, and no temporary is left (a killed writer leaves only a
  temporary, never a half-written record under a final name, and the clean sync removes it).

Seeded (`--seed`), so a failing run can be replayed. The slow test runs it with 200 iterations;

    python -m ops.bench.kill_soak [--iterations 1000] [--seed 7]

prints one JSON report (and exits 1 when a check failed). Progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ops.agents import agent_pids
from agent_memory.outbox.names import parse_final_name

CLI = os.path.join(os.path.dirname(sys.executable), "agent-memory")
ACTIONS = ("write", "write_killed", "write_poison", "sync_killed", "agent_killed", "fault")
WEIGHTS = (40, 30, 4, 10, 8, 12)
FAULTS = ("clear", "delay", "drop", "down", "up")
# The logger refuses every message whose text matches, for the whole run: a record it will never
# take must not block the ones around it, and must never reach it.
POISON = "soak poison"


def kill_agents(root: str) -> int:
    killed = 0
    for pid in agent_pids(root):
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except ProcessLookupError:
            pass
    return killed


class Soak:
    def __init__(self, fleet, base: Path, seed: int, log=lambda message: None) -> None:
        self.fleet = fleet
        self.rng = random.Random(seed)
        self.log = log
        self.root = str(base / "project")
        os.makedirs(self.root)
        subprocess.run(["git", "init", "-q", self.root], check=True)
        self.env = {**os.environ, "HOME": str(base), "AGENT_MEMORY_AGENT": "auto",
                    "AGENT_MEMORY_CONFIG": str(fleet.config_path)}
        self.sessions = [f"soak-{seed}-{k}" for k in range(3)]
        self.written: dict[str, str] = {}  # message id -> occurred_at, for each success
        self.poison: set[str] = set()  # message ids of texts the logger refuses
        self.failures: list[str] = []
        self.counts: Counter = Counter()
        self.down = False
        self.clock = datetime(2026, 1, 1, tzinfo=timezone.utc)

    def cli(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([CLI, *args], cwd=self.root, env=self.env, capture_output=True,
                              timeout=timeout)

    def popen(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen([CLI, *args], cwd=self.root, env=self.env,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def setup(self) -> None:
        self.cli("store", "init")
        self.refuse_poison()
        for sid in self.sessions:
            done = self.cli("--no-agent", "session", "open", "--session-id", sid,
                            "--project-id", "soak", "--dialogue-kind", "human,model",
                            "--participant", "alice", "claude")
            if done.returncode != 0:
                raise RuntimeError(f"session open failed: {done.stdout!r}")

    def refuse_poison(self) -> None:
        """The one switch that stays on all run (clearing the faults clears it too)."""
        self.fleet.control.set_faults("logger", refuse_pattern=f"^{POISON}")

    def write(self, killed: bool, poison: bool = False) -> None:
        message_id = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        text = f"{POISON} {message_id}" if poison else f"soak message {message_id}"
        self.clock += timedelta(milliseconds=self.rng.randint(1, 5000))
        occurred = self.clock.isoformat(timespec="microseconds").replace("+00:00", "Z")
        sid = self.rng.choice(self.sessions)
        proc = self.popen("write", "--session-id", sid, "--sender-kind", "human",
                          "--sender-identity", "alice", "--receiver-kind", "model",
                          "--receiver-identity", "claude", "--message-id", message_id,
                          "--occurred-at", occurred, "--text", text)
        self.counts["writes"] += 1
        if killed:
            time.sleep(self.rng.uniform(0.0, 0.25))
            proc.kill()
            proc.communicate()
            self.counts["writes_killed"] += 1
            return
        out, _ = proc.communicate(timeout=120)
        try:
            answer = json.loads(out)
        except ValueError:
            answer = {}
        if poison:
            # Refused at once (exit 1) or kept for later (exit 0, "file"): either way it stays
            # in the outbox, refused on each try, until it is quarantined.
            self.poison.add(message_id)
            self.counts["poison_written"] += 1
            if (proc.returncode, answer.get("success")) not in ((1, False), (0, True)):
                self.failures.append(f"poison {message_id}: rc {proc.returncode} {out[:300]!r}")
            return
        if proc.returncode == 0 and answer.get("success"):
            self.written[message_id] = occurred
            self.counts[f"answered_{answer['store']}"] += 1
        else:
            self.failures.append(f"write {message_id}: rc {proc.returncode} {out[:300]!r}")

    def sync_killed(self) -> None:
        proc = self.popen("--no-agent", "sync")
        time.sleep(self.rng.uniform(0.0, 0.6))
        proc.kill()
        proc.communicate()
        self.counts["syncs_killed"] += 1

    def fault(self) -> None:
        control = self.fleet.control
        fault = self.rng.choice(FAULTS)
        if fault == "clear":
            control.clear_faults()
            self.refuse_poison()
        elif fault == "delay":
            control.set_faults("logger", delay=self.rng.uniform(0.05, 0.4))
        elif fault == "drop":
            control.set_faults("logger", drop=True)
        elif fault == "down" and not self.down:
            control.go_down("logger")
            self.down = True
        elif fault == "up" and self.down:
            control.come_up("logger")
            self.down = False
        self.counts[f"fault_{fault}"] += 1

    def run(self, iterations: int) -> None:
        for i in range(iterations):
            action = self.rng.choices(ACTIONS, WEIGHTS)[0]
            if action in ("write", "write_killed", "write_poison"):
                self.write(killed=action == "write_killed", poison=action == "write_poison")
            elif action == "sync_killed":
                self.sync_killed()
            elif action == "agent_killed":
                self.counts["agents_killed"] += kill_agents(self.root)
            else:
                self.fault()
            if i % 50 == 49:
                self.log(f"{i + 1}/{iterations}: {dict(self.counts)}")

    def settle(self) -> None:
        """Faults off (the poison stays refused), agents stopped, then one-shot syncs until
        nothing but poison is pending."""
        self.fleet.control.clear_faults()
        self.refuse_poison()
        if self.down:
            self.fleet.control.come_up("logger")
            self.down = False
        self.cli("agent", "stop", "--timeout", "30")
        kill_agents(self.root)
        time.sleep(1.5)  # a temporary of the last killed write is old enough to be removed
        for _ in range(5):
            done = self.cli("--no-agent", "sync")
            answer = json.loads(done.stdout)
            # exit 1 while the poison is still refused: the report is in error.details then
            report = answer.get("data") or answer.get("error", {}).get("details") or {}
            if report.get("skipped") is False and not self.pending():
                return
            time.sleep(1.0)
        self.failures.append(f"the clean sync did not finish: {done.stdout[-500:]!r}")

    def pending(self) -> list[str]:
        """Pending messages and events other than the poison."""
        return [n for sid in self.sessions
                for n in _final(os.path.join(self.root, ".agent-memory", sid))
                if parse_final_name(n)[1] not in self.poison]

    def check(self) -> dict[str, Any]:
        in_logger: dict[str, str] = {}
        duplicated = 0
        for sid in self.sessions:
            for message in self.fleet.read_session(sid):
                if message["message_id"] in in_logger:
                    duplicated += 1
                in_logger[message["message_id"]] = message["occurred_at"]
        lost = sorted(set(self.written) - set(in_logger))
        moved_time = sorted(m for m, at in self.written.items()
                            if m in in_logger and _instant(in_logger[m]) != _instant(at))
        stored = set()
        for area in ("", ".imported"):
            for sid in self.sessions:
                folder = os.path.join(self.root, ".agent-memory", area, sid)
                if os.path.isdir(folder):
                    stored |= {parsed[1] for parsed in map(parse_final_name, os.listdir(folder))
                               if parsed is not None and parsed[2] == ".msg"}
        unknown = sorted(set(in_logger) - stored)
        pending = self.pending()
        temporaries = [n for sid in self.sessions
                       for n in _listing(os.path.join(self.root, ".agent-memory", sid))
                       if n.startswith(".tmp-")]
        quarantine = os.path.join(self.root, ".agent-memory", ".quarantine")
        quarantined = {parsed[1] for sid in self.sessions
                       for parsed in map(parse_final_name,
                                         _listing(os.path.join(quarantine, sid)))
                       if parsed is not None and parsed[2] == ".msg"}
        verify = json.loads(self.cli("verify").stdout)
        damage = verify["data"]["damage"] if verify.get("success") else \
            verify["error"].get("details", {}).get("damage", [verify["error"]])
        return {"iterations_counts": dict(self.counts), "writes_succeeded": len(self.written),
                "messages_in_logger": len(in_logger), "lost": len(lost),
                "duplicated": duplicated, "time_changed": len(moved_time),
                "unknown_to_the_store": len(unknown), "left_pending": len(pending),
                "temporaries_left": len(temporaries), "poison_written": len(self.poison),
                "poison_in_logger": len(self.poison & set(in_logger)),
                "poison_quarantined": len(self.poison & quarantined),
                "quarantined_not_poison": len(quarantined - self.poison),
                "damaged_files": len(damage), "failures": self.failures[:20],
                "examples": {"lost": lost[:5], "time_changed": moved_time[:5],
                             "unknown": unknown[:5], "pending": pending[:5],
                             "damage": damage[:5]}}


def _listing(folder: str) -> list[str]:
    return os.listdir(folder) if os.path.isdir(folder) else []


def _final(folder: str) -> list[str]:
    return [n for n in _listing(folder) if n.endswith((".msg", ".ses"))]


def _instant(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def passed(report: dict[str, Any]) -> bool:
    return (not report["lost"] and not report["duplicated"] and not report["time_changed"]
            and not report["unknown_to_the_store"] and not report["left_pending"]
            and not report["temporaries_left"] and not report["poison_in_logger"]
            and not report["quarantined_not_poison"]
            and not report["damaged_files"] and not report["failures"])


def soak(fleet, base: Path, iterations: int, seed: int, log=lambda message: None
         ) -> dict[str, Any]:
    runner = Soak(fleet, base, seed, log)
    try:
        runner.setup()
        started = time.monotonic()
        runner.run(iterations)
        runner.settle()
        report = runner.check()
        report["seconds"] = round(time.monotonic() - started, 1)
        report["seed"], report["iterations"] = seed, iterations
        return report
    finally:
        kill_agents(runner.root)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    from ops.bench.timing import fleet_in_scratch
    with fleet_in_scratch() as (base, fleet, _env):
        report = soak(fleet, base, args.iterations, args.seed,
                      log=lambda message: print(message, file=sys.stderr, flush=True))
    report["passed"] = passed(report)
    print(json.dumps(report, indent=1))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
