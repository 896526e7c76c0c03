"""`python -m pipeline`: every promise of agent-memory checked against the live logger and
embedder that the configuration names (found as the CLI finds it, or `--config`).

    python -m pipeline              run every check
    python -m pipeline NAME...      run the named checks
    python -m pipeline --list       the names, with a line each
    python -m pipeline --jobs 4     four checks at once (each has its own scratch project)

One JSON line per check (name, passed, seconds; expected and seen when it failed), then the
summary line `N passed, N failed`. Exit 0 only when every check passed; 2 for a usage error
(an unknown check name); 6 when the configuration is invalid or names no logger.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from . import checks, navigation_checks  # noqa: F401  (register the checks)
from .registry import CHECKS, CheckFailed


def _line(obj: dict) -> None:
    print(json.dumps(obj, ensure_ascii=False), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipeline", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", metavar="PATH", help="configuration document (default: as "
                        "the CLI finds it)")
    parser.add_argument("--list", action="store_true", help="list the checks and exit")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="checks run at once (default 1); each has its own scratch "
                             "project and sessions, and the lines still come in check order")
    parser.add_argument("names", nargs="*", metavar="NAME", help="checks to run (default: all)")
    args = parser.parse_args(argv)
    if args.list:
        for check in CHECKS.values():
            print(f"{check.name}\t{check.description}")
        return 0
    unknown = [n for n in args.names if n not in CHECKS]
    if unknown:
        _line({"error": "usage", "message": f"unknown check(s): {', '.join(unknown)}; "
                                            "see --list"})
        return 2
    from agent_memory.sync.config import ConfigInvalid, load, locate
    try:
        config = load(args.config)
    except ConfigInvalid as exc:
        _line({"error": "config", "message": str(exc)})
        return 6
    if config.logger is None:
        _line({"error": "config", "message": "the configuration names no logger "
                                             "(ailogger_client section): nothing to check"})
        return 6
    from .scratch import Run
    run = Run(config.source or locate(args.config)[0])
    passed = failed = 0
    from concurrent.futures import ThreadPoolExecutor
    if args.jobs > 1:  # imported here once: first imports racing in threads can deadlock
        import ailogger_client  # noqa: F401
        import embed_client  # noqa: F401
    pool = ThreadPoolExecutor(max_workers=max(1, args.jobs))
    try:
        running = [pool.submit(_run_check, CHECKS[name], run)
                   for name in args.names or list(CHECKS)]
        for future in running:  # in check order, each as soon as it and those before are done
            result = future.result()
            _line(result)
            passed += result["passed"]
            failed += not result["passed"]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        from .logger import delete_sessions
        try:
            left = delete_sessions(config, run.sessions)
        except Exception as exc:
            left = run.sessions
            print(f"cleanup failed: {exc}", file=sys.stderr)
        if left:
            print(f"sessions left in the logger: {left}", file=sys.stderr)
        run.close()
    print(f"{passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


def _run_check(check, run) -> dict:
    """One check: its result line (a check that breaks is a failed check, not a crash)."""
    started = time.monotonic()
    result: dict = {"name": check.name, "passed": True}
    try:
        check.run(run)
    except CheckFailed as exc:
        result.update(passed=False, failed=exc.what, expected=exc.expected, seen=exc.seen)
    except Exception as exc:
        result.update(passed=False, failed="the check raised",
                      error=f"{type(exc).__name__}: {exc}")
    result["seconds"] = round(time.monotonic() - started, 3)
    return result


if __name__ == "__main__":
    sys.exit(main())
