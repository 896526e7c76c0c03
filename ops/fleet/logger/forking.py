"""Keep the cost of starting one queued job independent of how many jobs came before.

queuemgr runs every job in a process forked from its manager process, and keeps each job's
state in `multiprocessing` manager proxies (8 per job: status, command, progress, description,
result, stdout, stderr, lock) for as long as the job is retained (completed jobs: minutes).
`multiprocessing` re-registers EVERY inherited proxy in a forked child: its after-fork hook
opens a new authenticated connection to the manager server and sends an INCREF, about 0.6 ms
each. A job started after 200 retained jobs therefore spent ~1 s in 1,600 round trips before
running a single line of the import, so draining N messages cost O(N^2) (measured: 10k took
6 s, 100k did not finish in 7 minutes).

A child never needs those increfs: it does not own the inherited proxies (they belong to the
manager process, which keeps their referents alive while the job exists; the child's own
job's proxies reconnect on first use without an INCREF, and the child registers no DECREF for
them either, since the after-fork reset clears the inherited finalizers). `install()` registers
an after-fork hook, before any proxy exists, that marks every inherited proxy
`_owned_by_manager` in the child: multiprocessing's own flag for "this proxy holds no
reference", which makes its INCREF a no-op. Proxies the child creates itself are unaffected.
"""

from __future__ import annotations

from multiprocessing import managers, util

_installed = False


class _Anchor:
    """Kept alive for the life of the process: the after-fork registry holds it weakly."""


_ANCHOR = _Anchor()


def _disown_inherited_proxies(_anchor: object) -> None:
    for (_index, _ident, func), obj in list(util._afterfork_registry.items()):
        if func is managers.BaseProxy._after_fork and isinstance(obj, managers.BaseProxy):
            obj._owned_by_manager = True


def install() -> None:
    """Register the hook (idempotent). Call before the queue manager starts."""
    global _installed
    if not _installed:
        # The registry runs hooks in registration order: this one precedes every proxy's.
        util.register_after_fork(_ANCHOR, _disown_inherited_proxies)
        _installed = True


def inherited_proxy_count() -> int:
    """How many manager proxies a child forked now would inherit (diagnostics and tests)."""
    return sum(1 for (_i, _d, func) in list(util._afterfork_registry.keys())
               if func is managers.BaseProxy._after_fork)
