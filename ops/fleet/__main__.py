"""`python -m ops.fleet up|down|status --data DIR`: the reference fleet from a shell.

stdout carries exactly one JSON object; the servers log to files in DIR. Exit status: 0 done /
both answer, 1 failure / not both answering, 2 usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ops.fleet import launcher


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m ops.fleet",
                                     description="the reference AI Logger and embedder")
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="start both services in the background")
    up.add_argument("--data", required=True, type=Path, help="data directory of this fleet")
    up.add_argument("--logger-port", type=int, default=0, help="default: a free port")
    up.add_argument("--embed-port", type=int, default=0, help="default: a free port")
    up.add_argument("--embed-model", default=launcher.DEFAULT_MODEL,
                    help="hash-<dimension> (default hash-1024) or all-MiniLM-L6-v2")
    up.add_argument("--real-embedder", action="store_true",
                    help="run embedding-service 2.0.0 (all-MiniLM-L6-v2) as the embedder "
                         "instead of the stand-in (needs `make install-real-embedder`)")
    up.add_argument("--timeout", type=float, default=60.0)
    up.add_argument("--tls", choices=("https", "mtls"), default=None,
                    help="serve TLS with certificates made for this fleet (DATA/tls/); mtls "
                         "also requires a client certificate of its CA (default: plain http)")
    up.add_argument("--token", default=None,
                    help="every call must carry this token (header X-API-Key)")
    faults = up.add_argument_group("fault switches (also settable at run time: "
                                   "ops.fleet.control)")
    faults.add_argument("--refuse-pattern", default=None,
                        help="logger refuses messages whose text matches this regex")
    faults.add_argument("--delay", type=float, default=0.0,
                        help="logger waits this many seconds before each answer")
    faults.add_argument("--drop", action="store_true",
                        help="logger closes connections without answering")
    faults.add_argument("--hold-vectors", action="store_true",
                        help="logger leaves every message without a vector")
    faults.add_argument("--embed-delay", type=float, default=0.0)
    faults.add_argument("--embed-drop", action="store_true")
    for name in ("down", "status"):
        cmd = sub.add_parser(name, help=f"{name} the fleet in DIR")
        cmd.add_argument("--data", required=True, type=Path)
        if name == "down":
            cmd.add_argument("--grace", type=float, default=5.0,
                             help="seconds between SIGTERM and SIGKILL")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "up":
            initial = {"logger": {"refuse_pattern": args.refuse_pattern, "delay": args.delay,
                                  "drop": args.drop, "hold_vectors": args.hold_vectors},
                       "embedder": {"delay": args.embed_delay, "drop": args.embed_drop}}
            result, code = launcher.start(args.data, args.logger_port, args.embed_port,
                                          args.embed_model, initial, args.timeout,
                                          real_embedder=args.real_embedder,
                                          protocol=args.tls or "http", token=args.token), 0
        elif args.command == "down":
            result, code = launcher.stop(args.data, args.grace), 0
        else:
            result = launcher.status(args.data)
            code = 0 if all(result.get(s) and result[s]["answers"]
                            for s in ("logger", "embedder")) else 1
    except (launcher.FleetError, ValueError, OSError) as exc:
        result, code = {"error": str(exc)}, 1
    sys.stdout.write(json.dumps(result) + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
