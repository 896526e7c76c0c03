"""Terminal WebSocket deliveries kept only until someone receives them.

embed-client's `wait=True` goes through the adapter's `execute_async`: the server runs the
command, then `WsDeliveryManager.notify_terminal_delivery` pushes the result to the /ws
subscriber of its `ws_id`. mcp-proxy-adapter 8.11.3 also keeps a deep copy of EVERY terminal
payload in a `TerminalReplayStore` for one hour (up to 10,000 entries), in case the subscriber
arrives after the result. An embed answer of 256 texts x 1024 floats is about 10 MB as Python
objects, so the embedder grew by ~10 MB per call (4.7 GB over a 100,000-message drain).

`LeanDeliveryManager` keeps the same ordering guarantee (the payload is parked BEFORE the
subscribers are looked up, and a subscriber is registered BEFORE the replay is flushed, so one
of the two paths always reaches it) but forgets the payload as soon as one subscriber received
it, hands a parked payload out once, and bounds what is parked for subscribers that never come
(at most MAX_PARKED payloads, none older than PARKED_TTL seconds). It also skips the two deep
copies per delivery (the payload is built fresh for each delivery and never mutated after).

`with_lean_delivery(app)` installs it when the app's lifespan startup completes (that is where
the adapter creates its manager), before any request is served.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from typing import Any

log = logging.getLogger(__name__)

PARKED_TTL = 120.0
MAX_PARKED = 32


def _manager_class():
    from mcp_proxy_adapter.core.delivery.ws_delivery_manager import WsDeliveryManager
    from mcp_proxy_adapter.core.job_push.subscriptions import SubscriptionCategory

    class LeanDeliveryManager(WsDeliveryManager):
        """WsDeliveryManager whose terminal payloads live only until delivered."""

        def __init__(self, registry: Any, job_status_accumulator: Any = None,
                     ttl: float = PARKED_TTL, max_parked: int = MAX_PARKED) -> None:
            super().__init__(registry, job_status_accumulator=job_status_accumulator)
            self._parked: OrderedDict[str, tuple[float, dict]] = OrderedDict()
            self._ttl = ttl
            self._max_parked = max_parked

        def parked_count(self) -> int:
            return len(self._parked)

        def _park(self, wid: str, payload: dict) -> None:
            now = time.monotonic()
            self._parked.pop(wid, None)
            self._parked[wid] = (now, payload)
            while self._parked:
                oldest_wid, (parked_at, _) = next(iter(self._parked.items()))
                if len(self._parked) <= self._max_parked and now - parked_at <= self._ttl:
                    break
                del self._parked[oldest_wid]

        async def notify_terminal_delivery(self, ws_id: str, payload: dict) -> None:
            wid = str(ws_id).strip()
            if wid == "":
                return
            self._park(wid, payload)  # before the lookup: a later subscriber flushes it
            subs = await self._registry.get_subscribers(wid, SubscriptionCategory.WS_DELIVERY)
            delivered = False
            for sub in subs:
                try:
                    await sub.send(payload)
                    delivered = True
                except Exception as exc:  # noqa: BLE001 - a closed socket, as the adapter does
                    log.warning("delivery send failed for ws_id=%s: %s", wid, exc)
            if delivered:
                parked = self._parked.get(wid)
                if parked is not None and parked[1] is payload:
                    del self._parked[wid]
            if self._job_status is not None:
                await self._job_status.record_ws_delivery(wid, payload)

        async def flush_replay_to_subscriber(self, ws_id: str, subscriber: Any) -> None:
            wid = str(ws_id).strip()
            parked = self._parked.pop(wid, None)
            if parked is None:
                return
            if time.monotonic() - parked[0] > self._ttl:
                return
            try:
                await subscriber.send(parked[1])
            except Exception as exc:  # noqa: BLE001
                log.warning("delivery replay failed for ws_id=%s: %s", wid, exc)
                self._parked.setdefault(wid, parked)

    return LeanDeliveryManager


_CLASS = None


def manager_class():
    global _CLASS
    if _CLASS is None:
        _CLASS = _manager_class()
    return _CLASS


def install(app: Any) -> bool:
    """Replace the adapter's delivery manager on `app` (True when replaced)."""
    state = getattr(app, "state", None)
    old = getattr(state, "ws_delivery_manager", None) if state is not None else None
    cls = manager_class()
    if old is None or isinstance(old, cls):
        return False
    new = cls(old._registry, job_status_accumulator=old._job_status)
    new._job_to_ws.update(old._job_to_ws)
    state.ws_delivery_manager = new
    return True


def with_lean_delivery(app: Any) -> Any:
    """ASGI wrapper: install LeanDeliveryManager as the lifespan startup completes."""

    async def wrapped(scope: dict, receive: Any, send: Any) -> None:
        if scope.get("type") != "lifespan":
            await app(scope, receive, send)
            return

        async def send_startup(message: dict) -> None:
            if message.get("type") == "lifespan.startup.complete":
                try:
                    install(app)
                except Exception:  # noqa: BLE001 - keep the adapter's own manager then
                    log.exception("could not install the lean delivery manager")
            await send(message)

        await app(scope, receive, send_startup)

    wrapped.state = getattr(app, "state", None)  # type: ignore[attr-defined]
    return wrapped
