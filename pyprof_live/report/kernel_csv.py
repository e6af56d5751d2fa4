"""The CSV of ``p.table()`` (``p.export_csv``), written as text lines without a dict per row.

The rows and their cells are those of :func:`.views.kernel_rows` (the reference: ``p.kernel_view``,
``p.table`` and ``export_csv(sort=...)`` use it), made from the same launch order and the same cell
functions; only the way to the text differs. A report of a million kernels repeats a few dozen
ops' cells (a training step, many times) and a few hundred kernels' launch shapes, so the cells of
ops alike (:func:`_op_keys`) are made into text once, each distinct kernel (name, device, stream,
grid, block) or memcpy/memset once, and a row is its op's texts with the row's own cells (idx, sub,
sil, the first row's costs) put in place.
The bytes are those of :func:`pyprof_live.render.text.write_csv` on the reference rows: every field
quoted, a row holding a quote or text :func:`~pyprof_live.safe_text.printable` would change goes
through the csv module with its cells made printable (tests/test_kernel_csv.py compares the two).
"""

from __future__ import annotations

import csv
from dataclasses import fields
from itertools import count
from operator import attrgetter, lt

from ..analysis import roofline as roofline_cells
from ..gcpause import paused_gc
from ..records import COMPILED, NO_LINK, KernelRecord, OpRecord
from ..render.text import cell
from ..safe_text import is_printable, printable_cells
from . import views

_BATCH = 4096


def _text(v) -> str:
    """A cell's CSV text, as write_csv makes it."""
    return v if v.__class__ is str else "-" if v is None else str(v) if v.__class__ is int else cell(v)


def _plain(texts) -> bool:
    """Whether a row of these texts is written as one quoted line (no quote to double, nothing to escape)."""
    joined = "".join(texts)
    return '"' not in joined and is_printable(joined)


@paused_gc()
def write_kernel_csv(stream, profile, columns, heads) -> int:
    """Write the header and every row of ``p.kernel_view(columns=columns)`` (launch order) to the text
    ``stream`` as CSV; returns the rows written."""
    order, costs, device_work, _ = views.kernel_order(profile)
    ops = profile.records.ops
    fused = costs.fused if "fused" in columns else None
    writer = csv.writer(stream, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(heads)
    pos = {c: k for k, c in enumerate(columns)}
    idx_at, sub_at = pos.get("idx"), pos.get("sub")
    sil_at = pos.get("sil")
    devices: dict = {}  # a device record's cells but sil -> ([(column position, text)], plain)
    # (op content key, device record content key) -> (the row's texts but its own cells, plain, the line as
    # a format of idx, sub and sil, or None): most rows are an op's 2nd..nth kernel, written from this line.
    shared: dict = {}
    lines: list = []
    empty = ["-"] * len(columns)
    keys = _op_keys(ops)
    op_texts: dict = {}  # an op's content key -> (its cells' texts, plain)
    last, key, base, base_plain = NO_LINK, None, [], True
    own_cells = (idx_at, sub_at, sil_at)
    plain_texts: set = set()  # cost and roofline cell texts seen to need no escaping
    # Where idx, sub and sil go among the 7 pieces of a shared line (_with_device_texts, which makes none
    # when one of them is not shown): 1, 3, 5 by column order.
    shown = sorted(k for k in own_cells if k is not None)
    idx_slot, sub_slot, sil_slot = (1 + 2 * shown.index(k) if k is not None else 0 for k in own_cells)
    slots_in_order = (idx_slot, sub_slot, sil_slot) == (1, 3, 5)  # idx, sub, sil in this column order
    host_at, flops_at, bytes_at = pos.get("host"), pos.get("flops"), pos.get("bytes")
    roofline_at = [(c, pos[c]) for c in ("ideal", "sol%", "bound") if c in pos]
    cost_texts: dict = {}  # id of an op's cost -> its flops and bytes texts placed, plain
    held: list = []  # the costs cost_texts holds the ids of

    def cost_texts_of(cost) -> tuple:
        """The flops and bytes texts of a cost, placed, and whether plain: the costs repeat (training
        steps make the same calls), so each cost object's are made once."""
        made = cost_texts.get(id(cost))
        if made is None:
            made = cost_texts[id(cost)] = _cells_texts(
                ((flops_at, views._cost_cell(cost.flops)), (bytes_at, views._cost_cell(cost.bytes))), plain_texts
            )
            held.append(cost)  # its id stays its own while this runs
        return made

    # (op content key, id of its cost) -> the line of an op that launched nothing, as 3 pieces around its
    # idx and host, or None when it is not plain: made when both columns are shown.
    op_lines: dict = {}
    op_line_at = (idx_at, host_at) if idx_at is not None and host_at is not None else None
    idx_before_host = op_line_at is not None and op_line_at[0] < op_line_at[1]
    idx = 0
    for idx, (_, sub, i, item, cost) in enumerate(order, start=1):
        if len(lines) >= _BATCH:  # the lines made so far, written in batches
            stream.write("".join(lines))
            lines.clear()
        if i == NO_LINK:  # unattributed device work: rare, made as the reference makes it
            row = views._device_cells(item)
            label = (
                f"replay of graph {item.graph_id}"
                if item.__class__ is KernelRecord and item.graph_id
                else "(unattributed)"
            )
            row.update(op=label, ops=label, idx=idx)
            texts = [_text(row.get(c)) for c in columns]
            plain = _plain(texts)
        else:
            if i != last:
                last, key = i, keys[i]
                made = op_texts.get(key) if key is not None else None
                if made is None:
                    base = empty.copy()  # a cell the row has not reads None: "-"
                    for column, v in views._op_cells(ops, i, columns, fused).items():
                        at = pos.get(column)
                        if at is not None:  # _text inlined: this runs for every cell of every op
                            base[at] = (
                                v
                                if v.__class__ is str
                                else "-"
                                if v is None
                                else str(v)
                                if v.__class__ is int
                                else cell(v)
                            )
                    made = base, _plain(base)
                    if key is not None:
                        op_texts[key] = made
                base, base_plain = made
            if item is None:
                # An op that launched nothing: its line, with its idx and host put in.
                if op_line_at is not None and key is not None:
                    host = ops[i].end - ops[i].start
                    made = op_lines.get((key, id(cost)))
                    if made is None:
                        made = op_lines[key, id(cost)] = _op_line(base, base_plain, cost_texts_of(cost), *op_line_at)
                    if made is not None and host.__class__ is int:
                        first, second = (idx, host) if idx_before_host else (host, idx)
                        lines.append(f"{made[0]}{first}{made[1]}{second}{made[2]}")
                        continue
                texts = base.copy()
                plain = base_plain
            else:
                if item.__class__ is KernelRecord:
                    item_key: tuple = (key, item.name, item.device, item.stream, item.grid, item.block)
                else:
                    item_key = (key, item.__class__, item.kind, item.copy_kind, item.device, item.stream)
                try:
                    made = shared.get(item_key) if key is not None else None
                except TypeError:  # an unhashable field (a list from some reader): no reuse
                    made = None
                    item_key = ()
                if made is None:
                    made = _with_device_texts(base, base_plain, item, devices, pos, own_cells)
                    if key is not None and item_key:
                        shared[item_key] = made
                texts, plain, line = made
                sil = item.end - item.start
                if cost is None and line is not None and sil.__class__ is int:
                    if slots_in_order:  # an f-string of the 4 fixed pieces and 3 ints: no list copy
                        lines.append(f"{line[0]}{idx}{line[2]}{sub}{line[4]}{sil}{line[6]}")
                    else:
                        line = line.copy()
                        line[idx_slot], line[sub_slot], line[sil_slot] = str(idx), str(sub), str(sil)
                        lines.append("".join(line))
                    continue
                texts = texts.copy()
                if sil_at is not None:
                    texts[sil_at] = str(sil) if sil.__class__ is int else _text(sil)
                if sub_at is not None:
                    texts[sub_at] = str(sub) if sub.__class__ is int else _text(sub)
            if cost is not None:  # the op's first row: its costs, put in place without a dict per op
                if host_at is not None:
                    op = ops[i]
                    host = op.end - op.start
                    texts[host_at] = str(host) if host.__class__ is int else _text(host)
                placed, cells_plain = cost_texts_of(cost)
                for k, text in placed:
                    texts[k] = text
                plain = plain and cells_plain
                if item is not None and roofline_at:
                    line_cells = roofline_cells.cells(device_work.roofline(i, cost))
                    placed, cells_plain = _cells_texts([(k, line_cells[c]) for c, k in roofline_at], plain_texts)
                    for k, text in placed:
                        texts[k] = text
                    plain = plain and cells_plain
        if idx_at is not None:
            texts[idx_at] = str(idx)
        if plain:
            lines.append('"' + '","'.join(texts) + '"\n')
        else:
            stream.write("".join(lines))
            lines.clear()
            writer.writerow(printable_cells(texts))  # quotes doubled by the csv module
    stream.write("".join(lines))
    return idx  # one row per entry of the launch order


def _op_line(base: list, base_plain: bool, cost_texts: tuple, idx_at: int, host_at: int) -> list | None:
    """The line of an op that launched nothing (its cells ``base`` with its cost texts put in) as 3 pieces,
    idx and host going between them in column order; None when the row is not plain."""
    placed, cells_plain = cost_texts
    if not (base_plain and cells_plain):
        return None
    fields = base.copy()
    for k, text in placed:
        fields[k] = text
    fields[idx_at] = fields[host_at] = "\x00"  # never in a plain text (safe_text: a control character)
    return ('"' + '","'.join(fields) + '"\n').split("\x00")


def _cells_texts(cells, plain_texts: set) -> tuple:
    """``(column position or None, value)`` of cost or roofline cells -> ([(position, text)] of those
    shown, whether none needs escaping); ``plain_texts`` remembers the texts seen to need none ("na",
    "-", "memory", a sol%: a few hundred texts repeat)."""
    placed = []
    plain = True
    for k, value in cells:
        if k is None:
            continue
        if value.__class__ is int:  # digits: nothing to quote or escape
            placed.append((k, str(value)))
            continue
        text = _text(value)
        placed.append((k, text))
        if text not in plain_texts:
            if _plain((text,)):
                plain_texts.add(text)
            else:
                plain = False
    return placed, plain


def _with_device_texts(base: list, base_plain: bool, item, devices: dict, pos: dict, own: tuple) -> tuple:
    """An op's texts with a device record's cells put in: (texts, plain, line or None). ``line``: when
    plain and ``own`` (the column positions of idx, sub and sil) has no None, the row's text as 7 pieces,
    the three cells going at 1, 3 and 5 in column order (a str.format would parse the ~300 characters
    of the line for each row)."""
    device_texts, device_plain = _device_texts(item, devices, pos)
    texts = base.copy()
    for k, text in device_texts:
        texts[k] = text
    plain = base_plain and device_plain
    if not plain:
        return texts, False, None
    if None in own:
        return texts, True, None
    fields = texts.copy()
    for k in own:
        fields[k] = "\x00"  # never in a plain text (safe_text: a control character)
    pieces = ('"' + '","'.join(fields) + '"\n').split("\x00")
    return texts, True, [pieces[0], "", pieces[1], "", pieces[2], "", pieces[3]]


def _device_texts(item, devices: dict, pos: dict) -> tuple:
    """The texts of a kernel's or memcpy/memset's cells but ``sil`` (a row's own), placed by column
    position, and whether they need no escaping; made once per distinct record content."""
    if item.__class__ is KernelRecord:
        key: tuple = (KernelRecord, item.name, item.device, item.stream, item.grid, item.block)
    else:
        key = (item.__class__, item.kind, item.copy_kind, item.device, item.stream)
    try:
        return devices[key]
    except KeyError:
        pass
    except TypeError:  # an unhashable field (a list from some reader): no reuse
        key = ()
    cells_ = views._device_cells(item)
    cells_.pop("sil")
    placed = [(pos[c], _text(v)) for c, v in cells_.items() if c in pos]
    made = (placed, _plain([t for _, t in placed]))
    if key:
        devices[key] = made
    return made


#: What an op's shared cells (views._op_cells) may read of it and, through ``parent``, of its enclosing
#: ops: every field but its times, links and profiler overhead (tests/test_kernel_csv.py checks that
#: _op_cells reads nothing else).
OP_CELL_FIELDS = tuple(f.name for f in fields(OpRecord) if f.name not in ("start", "end", "parent", "fwd", "overhead"))
_op_fields = attrgetter(*OP_CELL_FIELDS)


def _op_keys(ops) -> list:
    """Per op, a number equal for two ops exactly when their OP_CELL_FIELDS and those of every
    enclosing op are equal (so are their cells: the 20000 copies of a training step share them), or
    None: a compiled kernel call (its cells name its fused ops, by index) or an unhashable field."""
    keys: list = [None] * len(ops)
    known: dict = {}
    for i in _parents_first(ops):
        op = ops[i]
        parent = op.parent
        outer = keys[parent] if parent != NO_LINK else -1
        if outer is None or op.kind == COMPILED:
            continue
        try:
            keys[i] = known.setdefault((_op_fields(op), outer), len(known))
        except TypeError:  # an unhashable value in a field: this op's cells are made every time
            pass
    return keys


_parent = attrgetter("parent")


def _parents_first(ops) -> range | list:
    """Op indices, each op's enclosing op before it: index order when every op's parent comes before it
    in the list (importers and live capture give ops by start; checked in C), else made by walking up."""
    if all(map(lt, map(_parent, ops), count())):  # NO_LINK (-1) is below every index
        return range(len(ops))
    order: list = []
    done = [False] * len(ops)
    for i in range(len(ops)):
        chain = []
        j = i
        while j != NO_LINK and not done[j]:  # the enclosing ops not placed yet, innermost first
            done[j] = True
            chain.append(j)
            j = ops[j].parent
        order.extend(reversed(chain))
    return order
