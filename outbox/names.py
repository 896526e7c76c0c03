"""File names of the store: `<UTC time>-<uuid4>.<ext>`, sortable by time then uuid.

Only names matching the final pattern are ever read; temporaries and anything else a person or
tool leaves in the directory are ignored by every scan.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

TYPE_CHECKING = False  # typing costs the write path: annotations only
if TYPE_CHECKING:
    from typing import Iterable

STORE_DIR = ".agent-memory"
IMPORTED_DIR = ".imported"
QUARANTINE_DIR = ".quarantine"
PURGE_DIR = ".purge"  # unfinished purges (sync.forgetting)
MESSAGE_EXT = ".msg"
VECTOR_EXT = ".emb"
EVENT_EXT = ".ses"
FINAL_EXTS = (MESSAGE_EXT, VECTOR_EXT, EVENT_EXT)
TEMP_PREFIX = ".tmp-"

# A final name, matched whole (fullmatch: `$` would let a name end in "\n"); compiled when
# first matched (re's cache keeps it): a write never parses a name.
_FINAL = (r"(\d{4}-\d{2}-\d{2}T\d{2}\.\d{2}\.\d{2}\.\d{3})-"
          r"([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})\.(msg|emb|ses)")
# Where a final name holds its uuid (the time stamp is 23 characters, then "-", then the uuid's
# 36): a name from a scan is read by slicing, not parsed again.
ITEM_ID = slice(24, 60)


def time_stamp(moment: datetime) -> str:
    """UTC, milliseconds, `:` written as `.` (portable and sortable)."""
    utc = moment.astimezone(timezone.utc)
    return (f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}.{utc.minute:02d}."
            f"{utc.second:02d}.{utc.microsecond // 1000:03d}")


def moment_of(stamp: str) -> datetime:
    """The UTC moment a time stamp (time_stamp's form, `YYYY-MM-DDTHH.MM.SS.mmm`) names."""
    if len(stamp) != 23:
        raise ValueError(f"not a time stamp: {stamp!r}")
    return datetime(int(stamp[0:4]), int(stamp[5:7]), int(stamp[8:10]), int(stamp[11:13]),
                    int(stamp[14:16]), int(stamp[17:19]), int(stamp[20:23]) * 1000,
                    tzinfo=timezone.utc)


def final_name(moment: datetime, item_id: str, ext: str) -> str:
    """The final name of a record created at `moment` with identity `item_id`."""
    return f"{time_stamp(moment)}-{item_id}{ext}"


def parse_final_name(name: str) -> tuple[str, str, str] | None:
    """(time stamp, uuid, extension with dot) of a final name, or None for anything else."""
    match = re.fullmatch(_FINAL, name, re.ASCII)
    if match is None:
        return None
    return match.group(1), match.group(2), "." + match.group(3)


def is_final(name: str, ext: str | None = None) -> bool:
    """True when `name` is a final record name (of extension `ext` when given)."""
    parsed = parse_final_name(name)
    return parsed is not None and (ext is None or parsed[2] == ext)


def finals(entries: "Iterable[str]", ext: str | None = None) -> list[str]:
    """The final record names among a directory's `entries` (of extension `ext` when given),
    sorted (time order): the one scan of a listing, whatever else lies there ignored."""
    match = re.compile(_FINAL, re.ASCII).fullmatch
    return sorted(n for n in entries if match(n) and (ext is None or n.endswith(ext)))


def sibling(name: str, ext: str) -> str:
    """The same record's file of another extension (the `.emb` beside a `.msg`)."""
    return name[: name.rindex(".")] + ext


def moment_after(held: "Iterable[str]", now: datetime) -> datetime:
    """The one naming rule of a file appended now (a message dated now, every event): the
    moment that sorts after every name of `held` (its session's pending and imported files),
    so now, or 1 ms after the latest of them when that one is not earlier (names carry
    milliseconds). So files written one after another, within one millisecond or behind a
    message dated ahead, are named, forwarded and numbered by the logger in the order they
    were acknowledged."""
    latest = max(held, default=None)
    if latest is None:
        return now
    stamp_now = time_stamp(now)
    stamp = latest[:len(stamp_now)]
    if stamp_now > stamp:
        return now
    return moment_of(stamp) + timedelta(milliseconds=1)


def name_after(held: "Iterable[str]", now: datetime, item_id: str,
               ext: str) -> tuple[datetime, str]:
    """The moment (moment_after) and the final name of a record appended now."""
    moment = moment_after(held, now)
    return moment, final_name(moment, item_id, ext)
