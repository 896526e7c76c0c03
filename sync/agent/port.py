"""What the agent's service (sync.agent.service) needs of the watcher, and nothing more: the
service answers requests through this port, so it never reaches into the loop, the lock, the
scheduler or the published state, and can be driven by a stand-in.

The watcher (sync.agent.watcher) builds it from its own members; every callable is thread-safe
(the service runs in the server's request threads).
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable


class AgentPort:
    """- `store`: the Store served; `pid`: the agent's.
    - `identity()`, `config()`: who the agent is now (they follow the document on disk);
      `autostarted`; `refused_holdoff`, the watcher's own (a `sync` round keeps it).
    - `describe()`: the agent's part of the published state and its status, for `ping`.
    - `stopping()`, `stop(reason)`: whether it leaves; leave as on SIGTERM.
    - `touch()`: a request came, the idle clock starts again.
    - `follow_config()`: look at the document on disk now (True when it changed).
    - `deliver(session_id, name, wait, embed)`: the handoff's Delivery of a file.
    - `pool()`: the fleet links' pool (sync.links.resident), for a Route.
    - `serving_loop(timeout)`, `sync_now(limits)`: the running loop (None when stopping), and
      a coroutine running a full round there (sync.agent.rounds.RoundResult)."""

    def __init__(self, *, store, pid: int, identity: Callable[[], dict[str, Any]],
                 config: Callable[[], Any], autostarted: bool, refused_holdoff: float,
                 describe: Callable[[], dict[str, Any]], stopping: Callable[[], bool],
                 stop: Callable[[str], None], touch: Callable[[], None],
                 follow_config: Callable[[], bool], deliver: Callable[..., Any],
                 pool: Callable[[], Any], serving_loop: Callable[[float], Any],
                 sync_now: Callable[[Any], Awaitable[Any]]) -> None:
        self.store = store
        self.pid = pid
        self.identity = identity
        self.config = config
        self.autostarted = autostarted
        self.refused_holdoff = refused_holdoff
        self.describe = describe
        self.stopping = stopping
        self.stop = stop
        self.touch = touch
        self.follow_config = follow_config
        self.deliver = deliver
        self.pool = pool
        self.serving_loop = serving_loop
        self.sync_now = sync_now
