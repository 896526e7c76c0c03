"""Run-time control of a running fleet, for tests: fault switches and going down / coming up.

    control = FleetControl(data_dir)
    control.set_faults("logger", refuse_pattern=r"poison", delay=0.5, drop=False)
    control.clear_faults()                 # every switch of every service off
    control.go_down("logger")              # returns once connect is refused
    control.come_up("logger")              # returns once it answers again (same port, same data)

Switches are written to the faults file of the data directory (ops.fleet.faults); the service
processes and the logger's queue worker read it on every request, so a change holds from the
next request on.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

from ops.fleet import faults, launcher, layout


class FleetControl:
    def __init__(self, data: Path) -> None:
        self.data = Path(data).resolve()
        self.faults_file = layout.faults_path(self.data)

    def port(self, service: str) -> int:
        state = launcher.read_state(self.data)
        if state is None:
            raise RuntimeError(f"no fleet was started in {self.data}")
        return int(state[service]["port"])

    def faults(self, service: str = "logger") -> dict[str, Any]:
        return faults.read_all(self.faults_file)[service]

    def set_faults(self, service: str = "logger", **switches: Any) -> dict[str, Any]:
        """Set some switches (refuse_pattern, delay, drop, hold_vectors) of one service."""
        if "down" in switches:
            raise ValueError("use go_down()/come_up() for the down switch")
        return faults.update(self.faults_file, service, **switches)

    def clear_faults(self, service: str | None = None) -> None:
        """Every switch off (of one service, or of both), `down` included."""
        for svc in ([service] if service else list(layout.SERVICES)):
            faults.update(self.faults_file, svc, **faults.DEFAULTS)
        for svc in ([service] if service else list(layout.SERVICES)):
            self._wait(svc, listening=True, timeout=5.0)

    def go_down(self, service: str = "logger", timeout: float = 5.0) -> None:
        """Stop listening on the service's port (connect refused); data and process stay."""
        faults.update(self.faults_file, service, down=True)
        self._wait(service, listening=False, timeout=timeout)

    def come_up(self, service: str = "logger", timeout: float = 5.0) -> None:
        """Listen again on the same port, with the same data."""
        faults.update(self.faults_file, service, down=False)
        self._wait(service, listening=True, timeout=timeout)

    def _wait(self, service: str, listening: bool, timeout: float) -> None:
        port = self.port(service)
        deadline = time.monotonic() + timeout
        while True:
            if _accepts(port) == listening:
                return
            if time.monotonic() > deadline:
                state = "listen" if listening else "stop listening"
                raise TimeoutError(f"{service} on port {port} did not {state} in {timeout} s")
            time.sleep(0.01)


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False
