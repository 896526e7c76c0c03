"""The checks of an option's value, on the command line (argparse's `type`) and in a typed call
(cli.typed): each takes the value's text whole. int() and float() would also take surrounding
whitespace (a trailing newline), `_`, other scripts' digits, "inf" and "nan"."""

from __future__ import annotations

import argparse
import re  # already loaded by outbox.contract on every path

# compiled when first matched (re's cache keeps them): most commands take no number
_INTEGER = r"-?[0-9]+"
_NUMBER = r"-?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?"


def integer(text: str) -> int:
    """An integer option's value, checked whole."""
    if not re.fullmatch(_INTEGER, text, re.ASCII):
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}")
    return int(text)


def seconds(text: str) -> float:
    """A number of seconds, checked whole. (Its range is each command's to check, with its
    own words.)"""
    if not re.fullmatch(_NUMBER, text, re.ASCII):
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}")
    return float(text)


def not_utf8_at(text: str) -> int | None:
    """Where a text stops being UTF-8 (bytes that are not arrive as lone surrogates), or None:
    every argument must be UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def first_not_utf8(texts: list[str]) -> tuple[int, int] | None:
    """The first of `texts` that is not UTF-8, as (its position from 1, where it stops being
    UTF-8), or None: a whole command line checked in one call."""
    for position, text in enumerate(texts, 1):
        at = not_utf8_at(text)
        if at is not None:
            return position, at
    return None
