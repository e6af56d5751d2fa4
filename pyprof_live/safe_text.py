"""Text from files, made safe to print: control characters escaped, so it stays on its line and
cannot drive the terminal.

Op, kernel and file names come from traces and exports anyone can write. An ESC in a name could
set the window title or clear the screen, a newline would split a table row or a one-line error,
and a lone surrogate (``"\\ud800"`` in JSON) cannot be encoded at all. Every text renderer and every
error message passes such text through :func:`printable`, which writes those characters as
Python-style escapes (``\\x1b``, ``\\n``, ``\\ud800``); everything else, non-ASCII names included,
is left as it is. Records keep the text as the file gave it.
"""

from __future__ import annotations

import re

# C0 controls (newline, tab, ESC...), DEL and the C1 controls (0x9b is a CSI on some terminals),
# Unicode line/paragraph separators and bidirectional overrides (they reorder what follows them),
# and surrogates, which a str holds only unpaired.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def printable(text: str) -> str:
    """``text`` with control characters, separators, bidi overrides and lone surrogates escaped."""
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


def is_printable(text: str) -> bool:
    """Whether :func:`printable` leaves ``text`` as it is."""
    return _UNSAFE.search(text) is None


def printable_cells(texts: list) -> list:
    """The texts of one row, each made :func:`printable`; one search over the row when none needs it."""
    if _UNSAFE.search("".join(texts)) is None:
        return texts
    return [printable(text) for text in texts]


def printable_rows(rows: list, columns) -> list:
    """``rows`` (dicts keyed by column name) with the text of ``columns`` made :func:`printable`.

    Each column is searched once, as one joined string; only rows holding such text are copied."""
    unsafe = [
        column
        for column in columns
        if _UNSAFE.search("".join(v for v in (row.get(column) for row in rows) if v.__class__ is str))
    ]
    if not unsafe:
        return rows
    out = []
    for row in rows:
        fixed = {c: printable(row[c]) for c in unsafe if row.get(c).__class__ is str and _UNSAFE.search(row[c])}
        out.append({**row, **fixed} if fixed else row)
    return out
