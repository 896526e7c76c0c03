"""The least a process can do to drain an outbox with the fleet client: the yardstick of
`sync`'s drain (ops.bench.sync_bench). It imports the client (as the sync does, through
sync.links.logger, whose link polls an import job at the same pace), and per session, four
sessions at once: sends each pending event, then the messages in `messages_import` batches,
and renames each confirmed batch into `.imported/` with one fsync of each directory. No lock,
no plan, no order beyond the names, no refusal handling, no report: everything `sync` does
beyond that is its cost over this.

    python -m ops.bench.minimal_drain PROJECT_ROOT CONFIG [BATCH_ITEMS]

Prints the number of messages imported.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from agent_memory.outbox.encoding import import_item
from agent_memory.sync import config as config_mod, events
from agent_memory.sync.links.logger import BATCH, LoggerLink


def fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


async def drain_session(link: LoggerLink, store: str, sid: str, batch_items: int) -> int:
    pending = os.path.join(store, sid)
    done_dir = os.path.join(store, ".imported", sid)
    os.makedirs(done_dir, exist_ok=True)
    names = sorted(n for n in os.listdir(pending) if n.endswith((".msg", ".ses")))
    imported = 0
    batch: list[tuple[str, dict]] = []

    async def flush() -> None:
        nonlocal imported
        outcomes = await link.import_batch([item for _name, item in batch])
        for (name, _item), outcome in zip(batch, outcomes):
            if outcome.get("success"):
                os.rename(os.path.join(pending, name), os.path.join(done_dir, name))
                imported += 1
        fsync_dir(pending)
        fsync_dir(done_dir)
        batch.clear()

    for name in names:
        with open(os.path.join(pending, name), "rb") as handle:
            record = json.loads(handle.read())
        if name.endswith(".ses"):
            if batch:
                await flush()
            command, params = events.call(record["event"], record)
            await link.call(command, **params)
            os.rename(os.path.join(pending, name), os.path.join(done_dir, name))
            continue
        batch.append((name, import_item(record)))
        if len(batch) >= batch_items:
            await flush()
    if batch:
        await flush()
    return imported


async def drain(root: str, config_path: str, batch_items: int) -> int:
    config = config_mod.load(config_path)
    store = os.path.join(root, ".agent-memory")
    sessions = sorted(n for n in os.listdir(store) if not n.startswith("."))
    async with LoggerLink(config, BATCH) as link:
        queue = list(reversed(sessions))
        counts: list[int] = []

        async def worker() -> None:
            while queue:
                counts.append(await drain_session(link, store, queue.pop(), batch_items))
        await asyncio.gather(*(worker() for _ in range(min(4, len(sessions)))))
    return sum(counts)


def main() -> None:
    root, config_path = sys.argv[1], sys.argv[2]
    batch_items = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    print(asyncio.run(drain(root, config_path, batch_items)))


if __name__ == "__main__":
    main()
