"""Views across the ranks of a run, as DuckDB queries over its Parquet store (run/store.py).

Definitions (times in ns):

- **Steps**: ``ProfilerStep#N`` ranges (Kineto) or live ``step N`` ranges; a worker without any is
  one step, shown as ``-``. A kernel or memcpy/memset belongs to the step its launching API call
  started in (its own start when the launch is unknown), as HTA assigns kernels to iterations.
- **Kinds of device work**: communication = kernels named ``nccl…Kernel``/``rccl…Kernel`` (HTA's
  rule), memory = memcpy/memset, computation = every other kernel.
- ``ranks()``: per rank and step, each kind's busy time is the union of its intervals;
  ``overlap`` = time communication and computation both run (comm + compute - their union);
  ``overlap%`` = overlap / comm (HTA's ``get_comm_comp_overlap``); ``wall`` = from the step's start
  to the later of its end and its last device work; ``idle`` = wall - union of all device work.
- ``stragglers()``: at a collective every rank waits for the last one to arrive, so that rank is
  charged the others' wait: ``at_stake`` = sum over the collectives of the step it reached last of
  (its arrival - each other rank's arrival); slowest (largest at_stake) first.
- ``skew()``: the k-th communication kernel of each rank is the same collective (SPMD order). Clocks
  are aligned on the first collective's end (every rank leaves a collective together); per collective:
  how far apart the ranks started (``skew``) and ended it, who came first and last, and ``wait``:
  the time all ranks spent waiting for the last one to arrive.
- ``ops()``/``kernels()``: per name, calls and time summed over ranks, and the per-rank totals' min,
  median and max with the rank holding each.
"""

from __future__ import annotations

from ..analysis.kernel_names import short_name
from ..report.columns import RUN
from ..report.view import View

#: Communication kernels, HTA's rule (hta/utils/utils.py: ``^nccl.*Kernel``), RCCL's too.
COMM_KERNEL = r"^(nccl|rccl).*Kernel"

_STEPS = r"""
CREATE OR REPLACE TEMP TABLE steps AS
WITH marked AS (
    SELECT rank, file, TRY_CAST(regexp_extract(name, '(\d+)$', 1) AS BIGINT) AS step, start, "end"
    FROM records
    WHERE record = 'ranges' AND (name LIKE 'ProfilerStep#%' OR (kind = 'step' AND name LIKE 'step %'))
)
SELECT rank, file, step, row_number() OVER (PARTITION BY rank, step ORDER BY start) - 1 AS rep, start, "end"
FROM marked
UNION ALL
SELECT rank, file, NULL AS step, 0 AS rep, min(start) AS start, max("end") AS "end"
FROM records
WHERE file NOT IN (SELECT file FROM marked) AND record IN ('ops', 'apis', 'kernels', 'memops', 'ranges')
GROUP BY rank, file
"""

_DEVICE = rf"""
CREATE OR REPLACE TEMP TABLE device AS
WITH work AS (
    SELECT d.rank, d.file, d.record, d.name, d.start, d."end", d.stream,
           coalesce(a.start, d.start) AS launched,
           CASE WHEN d.record = 'memops' THEN 'memory'
                WHEN regexp_matches(d.name, '{COMM_KERNEL}') THEN 'comm'
                ELSE 'compute' END AS cls
    FROM records d
    LEFT JOIN (SELECT file, row, start FROM records WHERE record = 'apis') a
        ON a.file = d.file AND a.row = d.launch
    WHERE d.record IN ('kernels', 'memops')
)
SELECT w.*, s.step, s.rep, s.start AS step_start, s."end" AS step_end
FROM work w
ASOF JOIN steps s ON s.file = w.file AND w.launched >= s.start
WHERE w.launched <= s."end"
"""

_BREAKDOWN = r"""
CREATE OR REPLACE TEMP TABLE breakdown AS
WITH sets AS (
    SELECT rank, step, rep, cls AS kind, start, "end" FROM device
    UNION ALL SELECT rank, step, rep, 'comm+compute', start, "end" FROM device WHERE cls IN ('comm', 'compute')
    UNION ALL SELECT rank, step, rep, 'all', start, "end" FROM device
),
reach AS (
    SELECT *, max("end") OVER (PARTITION BY rank, step, rep, kind ORDER BY start, "end"
                               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reached
    FROM sets
),
islands AS (
    SELECT *, sum(CASE WHEN reached IS NULL OR start > reached THEN 1 ELSE 0 END)
              OVER (PARTITION BY rank, step, rep, kind ORDER BY start, "end" ROWS UNBOUNDED PRECEDING) AS island
    FROM reach
),
unions AS (
    SELECT rank, step, rep, kind, sum(e - s) AS busy
    FROM (SELECT rank, step, rep, kind, island, min(start) AS s, max("end") AS e FROM islands GROUP BY ALL)
    GROUP BY ALL
),
walls AS (
    SELECT s.rank, s.step, s.rep, min(s.start) AS start,
           greatest(max(s."end"), coalesce(max(d.last_end), max(s."end"))) - min(s.start) AS wall
    FROM steps s
    LEFT JOIN (SELECT rank, step, rep, max("end") AS last_end FROM device GROUP BY ALL) d
        ON d.rank = s.rank AND d.step IS NOT DISTINCT FROM s.step AND d.rep = s.rep
    GROUP BY s.rank, s.step, s.rep
)
SELECT w.rank, w.step, w.rep, w.start, w.wall,
       coalesce(max(u.busy) FILTER (kind = 'compute'), 0) AS compute,
       coalesce(max(u.busy) FILTER (kind = 'comm'), 0) AS comm,
       coalesce(max(u.busy) FILTER (kind = 'compute'), 0) + coalesce(max(u.busy) FILTER (kind = 'comm'), 0)
           - coalesce(max(u.busy) FILTER (kind = 'comm+compute'), 0) AS overlap,
       coalesce(max(u.busy) FILTER (kind = 'memory'), 0) AS memory,
       w.wall - coalesce(max(u.busy) FILTER (kind = 'all'), 0) AS idle
FROM walls w
LEFT JOIN unions u ON u.rank = w.rank AND u.step IS NOT DISTINCT FROM w.step AND u.rep = w.rep
GROUP BY w.rank, w.step, w.rep, w.start, w.wall
"""

_COLLECTIVES = r"""
CREATE OR REPLACE TEMP TABLE collectives AS
WITH comm AS (
    SELECT rank, step, rep, start, "end", name,
           row_number() OVER (PARTITION BY rank ORDER BY start, "end") AS seq
    FROM device WHERE cls = 'comm'
)
SELECT c.rank, c.step, c.rep, c.seq, c.name,
       coalesce(nullif(regexp_extract(c.name, 'Kernel_([A-Za-z]+)', 1), ''), c.name) AS collective,
       c.start - o.offset AS start, c."end" - o.offset AS "end"
FROM comm c JOIN offsets o USING (rank)
"""

#: Per rank, what to subtract from its clock: its first collective's end minus the first rank's.
_OFFSETS = """
CREATE OR REPLACE TEMP TABLE offsets AS
WITH first AS (
    SELECT rank, min_by("end", start) AS "end" FROM device WHERE cls = 'comm' GROUP BY rank
),
reference AS (SELECT "end" FROM first ORDER BY rank LIMIT 1)
SELECT w.rank, coalesce(f."end" - (SELECT "end" FROM reference), 0) AS offset
FROM (SELECT DISTINCT rank FROM workers) w LEFT JOIN first f USING (rank)
"""


class Prepared:
    """Builds the shared temp tables once per connection (steps, device, breakdown, offsets, collectives)."""

    def __init__(self, store):
        self.store = store
        db = store.connect()
        if not store.prepared:
            for sql in (_STEPS, _DEVICE, _BREAKDOWN, _OFFSETS, _COLLECTIVES):
                db.execute(sql)
            store.prepared = True

    def rows(self, sql: str, parameters=None) -> list[dict]:
        return self.store.query(sql, parameters)


def _notes(store, extra=()) -> list:
    ranks = {w.rank for w, _ in store.files}
    notes = [f"{len(ranks)} ranks, {len(store.files)} worker files (DuckDB over Parquet: {store.files[0][1].parent})"]
    notes += list(extra)
    notes += [f"left out: {problem}" for problem in store.notes]
    return notes


def _steps(rows: list) -> list:
    """The step column as shown: ``-`` for a worker without steps; ``N@k`` for the k-th repeat of
    step number N in one rank (a trace made of copies numbers its steps again), with a note."""
    repeated = False
    for row in rows:
        rep = row.pop("rep")
        step = "-" if row["step"] is None else row["step"]
        if rep:
            repeated = True
            step = f"{step}@{rep}"
        row["step"] = step
    if repeated:
        return ["step numbers repeat within a rank: N@k is the k-th repeat of step N"]
    return []


def rank_breakdown(store) -> View:
    prepared = Prepared(store)
    rows = prepared.rows(
        "SELECT rank, step, rep, wall, compute, comm, overlap, memory, idle FROM breakdown "
        "ORDER BY rep, step NULLS FIRST, rank"
    )
    repeats = _steps(rows)
    for row in rows:
        row["overlap%"] = round(100.0 * row["overlap"] / row["comm"], 1) if row["comm"] else "-"
    columns = ("rank", "step", "wall", "compute", "comm", "overlap", "overlap%", "memory", "idle")
    notes = _notes(
        store,
        [
            "comm = nccl/rccl kernels, memory = memcpy/memset, compute = other kernels; each a union of intervals",
            "overlap% = comm time hidden under compute (HTA's comm/comp overlap); idle = wall - all device work",
            *repeats,
        ],
    )
    return View("time per rank and step", columns, rows, notes, RUN)


_STRAGGLERS = """
WITH arrivals AS (
    SELECT *, max(start) OVER (PARTITION BY seq) AS last_start,
           arg_max(rank, start) OVER (PARTITION BY seq) AS last_rank
    FROM collectives
),
caused AS (  -- each collective's wait is the last arrival's doing
    SELECT last_rank AS rank, step, rep, count(DISTINCT seq) AS last, sum(last_start - start) AS at_stake
    FROM arrivals GROUP BY ALL
),
waited AS (
    SELECT rank, step, rep, count(*) AS collectives, sum(last_start - start) AS wait FROM arrivals GROUP BY ALL
)
SELECT b.rank, b.step, b.rep, b.wall, coalesce(w.collectives, 0) AS collectives, coalesce(c.last, 0) AS last,
       coalesce(w.wait, 0) AS wait, coalesce(c.at_stake, 0) AS at_stake
FROM breakdown b
LEFT JOIN caused c ON c.rank = b.rank AND c.step IS NOT DISTINCT FROM b.step AND c.rep = b.rep
LEFT JOIN waited w ON w.rank = b.rank AND w.step IS NOT DISTINCT FROM b.step AND w.rep = b.rep
ORDER BY at_stake DESC, b.wall DESC, b.rank
"""


def stragglers(store) -> View:
    rows = Prepared(store).rows(_STRAGGLERS)
    repeats = _steps(rows)
    columns = ("rank", "step", "wall", "collectives", "last", "wait", "at_stake")
    notes = _notes(
        store,
        [
            "last = collectives this rank reached last; at_stake = the time the other ranks waited for it there "
            "(sum of its arrival - theirs); wait = its own wait for later arrivals",
            *repeats,
        ],
    )
    return View("stragglers, slowest first", columns, rows, notes, RUN)


_SKEW = """
WITH c AS (SELECT *, max(start) OVER (PARTITION BY seq) AS last_start FROM collectives)
SELECT seq AS collective_no, min(step) AS step, min(rep) AS rep, mode(collective) AS collective, count(*) AS ranks,
       count(DISTINCT collective) AS kinds,
       arg_min(rank, start) AS first, arg_max(rank, start) AS last,
       max(start) - min(start) AS skew, max("end") - min("end") AS end_skew,
       sum(last_start - start) AS wait
FROM c GROUP BY seq ORDER BY seq
"""


def collective_skew(store) -> View:
    rows = Prepared(store).rows(_SKEW)
    mismatched = sum(row.pop("kinds") > 1 for row in rows)
    extra = [
        *_steps(rows),
        "clocks aligned on the end of each rank's first collective; wait = sum of (last arrival - arrival)",
    ]
    if mismatched:
        extra.append(f"{mismatched} collectives are not the same kind on every rank: ranks ran different sequences")
    columns = ("collective_no", "step", "collective", "ranks", "first", "last", "skew", "end_skew", "wait")
    return View("collectives across ranks", columns, rows, _notes(store, extra), RUN)


_PER_RANK = """
CREATE OR REPLACE TEMP TABLE per_rank AS
SELECT name, rank, count(*) AS calls, sum("end" - start) AS total
FROM records WHERE record = ? AND name IS NOT NULL GROUP BY name, rank
"""

_MERGED = """
WITH per AS (
    SELECT n.label, p.rank, sum(p.calls) AS calls, sum(p.total) AS total
    FROM per_rank p JOIN labels n USING (name) GROUP BY n.label, p.rank
)
SELECT label, sum(calls) AS calls, sum(total) AS total, count(*) AS ranks,
       min(total) AS min, arg_min(rank, total) AS min_rank,
       CAST(round(median(total)) AS BIGINT) AS median,
       max(total) AS max, arg_max(rank, total) AS max_rank
FROM per GROUP BY label ORDER BY total DESC, label
"""


def merged_summary(store, record: str) -> View:
    """Kernels are grouped by their short name (as ``p.kernels()`` shows them), ops by name."""
    db = store.connect()
    db.execute(_PER_RANK, [record])
    names = [row[0] for row in db.execute("SELECT DISTINCT name FROM per_rank").fetchall()]
    labels = [(name, short_name(name) if record == "kernels" else name) for name in names]
    db.execute("CREATE OR REPLACE TEMP TABLE labels (name VARCHAR, label VARCHAR)")
    db.executemany("INSERT INTO labels VALUES (?, ?)", labels)
    rows = store.query(_MERGED)
    key = "op" if record == "ops" else "kernel"
    for row in rows:
        row[key] = row.pop("label")
    columns = (key, "calls", "total", "ranks", "min", "min_rank", "median", "max", "max_rank")
    what = "host time of ops" if record == "ops" else "device time of kernels"
    notes = _notes(store, [f"min / median / max: per-rank totals of the {what}, with the rank holding each"])
    return View(f"{record} across ranks", columns, rows, notes, RUN)
