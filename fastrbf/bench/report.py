"""The benchmark report in text: the table of a run, saved runs, and the comparison with
a saved run.

Works on the rows of :func:`fastrbf.bench.suite.run` (or the same rows read back from
``--json``).  :func:`format_table` is what ``python -m fastrbf.bench`` prints (one group
of lines per workload with a numbered legend, then the scaling over sizes of a full
run and the compile section); :func:`save_run` / :func:`load_run` write and read the
``--json`` file (format :data:`FORMAT`); :func:`compare` and :func:`format_compare`
are ``--compare OLD.json``.  The figure (``--plot``) is in
:mod:`fastrbf.bench.figure`, which needs matplotlib; this module needs only NumPy.

Decisions:

- **Compare times, not throughputs**, per (workload, contender, size): the change is
  ``new / old - 1`` of the median time, so +25% means 25% slower.  A row is a
  ``REGRESSION`` only when it is more than ``threshold`` percent slower *and* the
  change is beyond the measured noise of both runs: the new run's fastest round is
  slower than the old run's slowest (the ranges of the rounds do not overlap; rows
  saved with quartiles but without their rounds use the interquartile ranges).  On a
  shared machine the load moves between two runs by more than within one run, and the
  full range of the rounds flagged far fewer rows of unchanged code than the
  interquartile range.  ``faster`` mirrors it.  A change beyond the threshold whose
  ranges overlap is ``within noise``.  The cold-compile rows are compared by their CPU time, which
  other processes disturb much less than the wall time.  Rows without quartiles (saved by an older version, or the
  compile rows, measured once) are judged by the threshold alone.  Rows whose size
  description differs (a ``--quick`` run against a ``--full`` one) are marked ``size
  differs`` and never called a regression; rows present on one side only, or not
  measured on one side (skipped above the quick size), are listed as such.
"""

import json
import math
import textwrap

import numpy as np

from .harness import BASELINE, COMPILE_GOALS, FLOOR, KIND_NAMES, VERDICT_MARGIN, compile_goal_misses, format_seconds
from .roofline import format_fraction

#: the format tag of a saved run (``--json``); older versions wrote a bare list of rows.  The
#: roofline (``meta["floors"]``, the rows' ``floor_*``, ``achieved_*`` and cost fields) and
#: the rows of peers that did not run (``unavailable``) were added to this format: a file
#: without them reads as before ("-" in their column)
FORMAT = "fastrbf-bench/2"

_KEYS = ("workload", "contender", "median_s")


def load_run(path):
    """Read a run written by ``python -m fastrbf.bench --json PATH``: its header and rows.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    meta : dict
        The run's header (versions, cores, load averages before and after); empty for
        a file written by an older version (a bare list of rows, also accepted).
    rows : list of dict

    Raises
    ------
    ValueError
        When the file is not such a run.

    Examples
    --------
    >>> import json, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "run.json")
    >>> with open(path, "w") as fh:
    ...     json.dump({"format": FORMAT, "meta": {"load_before": [0.5, 0.4, 0.3]},
    ...                "rows": [{"workload": "w", "contender": "fastrbf", "median_s": 0.5}]}, fh)
    >>> meta, rows = load_run(path)
    >>> meta["load_before"], rows[0]["median_s"]
    ([0.5, 0.4, 0.3], 0.5)
    """
    with open(path) as fh:
        try:
            doc = json.load(fh)
        except json.JSONDecodeError as exc:
            raise ValueError(f"`{path}` is not a JSON file of benchmark rows: {exc}.") from None
    meta: dict = {}
    rows = doc
    if isinstance(doc, dict) and doc.get("format") == FORMAT:
        meta, rows = doc.get("meta") or {}, doc.get("rows")
    if not isinstance(rows, list) or not isinstance(meta, dict) \
            or not all(isinstance(r, dict) and all(k in r for k in _KEYS) for r in rows):
        raise ValueError(f"`{path}` must hold a benchmark run as written by `python -m fastrbf.bench --json` (an object "
                         f"with format {FORMAT!r}, or a JSON list of benchmark rows: dicts with keys "
                         f"{', '.join(_KEYS)}).")
    return meta, rows


def load_rows(path):
    """The rows of a run written by ``python -m fastrbf.bench --json PATH`` (see :func:`load_run`).

    Examples
    --------
    >>> import json, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "run.json")
    >>> with open(path, "w") as fh:
    ...     json.dump([{"workload": "w", "contender": "fastrbf", "median_s": 0.5}], fh)
    >>> load_rows(path)[0]["median_s"]
    0.5
    """
    return load_run(path)[1]


def save_run(path, rows, meta=None):
    """Write a run (``meta`` header and ``rows``) as JSON that :func:`load_run` reads back."""
    with open(path, "w") as fh:
        json.dump({"format": FORMAT, "meta": meta or {}, "rows": rows}, fh, indent=1)


def check_threshold(threshold: float) -> float:
    """``threshold`` (percent) as a float, checked: a finite number >= 0.

    Examples
    --------
    >>> check_threshold(10)
    10.0
    """
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold) \
            or threshold < 0:
        raise ValueError(f"`threshold` must be a finite number >= 0 (percent); got {threshold!r}.")
    return float(threshold)


def row_shape(r: dict) -> str:
    """The size description of a row (older versions appended the accuracy note after "; ")."""
    return r.get("shape", "").split("; ")[0]


def _spread(r):
    """The measured noise of a row: the range (min, max) of its rounds; the interquartile
    range for a row saved without its rounds; None when neither is known."""
    if r.get("times_s"):
        return min(r["times_s"]), max(r["times_s"])
    return (r["q1_s"], r["q3_s"]) if r.get("q1_s") is not None and r.get("q3_s") is not None else None


def change_status(old, new, threshold):
    """Status of one row's change of median time against an older run (see the module's decisions).

    Examples
    --------
    >>> old = {"median_s": 1.0, "q1_s": 0.95, "q3_s": 1.05}
    >>> change_status(old, {"median_s": 1.5, "q1_s": 1.4, "q3_s": 1.6}, 10)
    'REGRESSION'
    >>> change_status(old, {"median_s": 1.5, "q1_s": 1.0, "q3_s": 2.0}, 10)
    'within noise'
    >>> change_status(old, {"median_s": 1.05, "q1_s": 1.04, "q3_s": 1.06}, 10)
    'same'
    """
    pct = 100.0 * (new["median_s"] / old["median_s"] - 1.0)
    so, sn = _spread(old), _spread(new)
    if pct > threshold:
        return "REGRESSION" if so is None or sn is None or sn[0] > so[1] else "within noise"
    if pct < -threshold:
        return "faster" if so is None or sn is None or sn[1] < so[0] else "within noise"
    return "same"


#: row kinds whose changes are fastrbf's own (the others, peers, the NumPy reference and
#: baselines, only say how the machine moved: "peer slower" / "peer faster")
OURS = frozenset({"fastrbf", "compile", "import"})
#: a cold compile is one sample per run (no rounds, no spread): its CPU time varied by up
#: to 18% between two runs of unchanged code, so it is a regression only beyond this
COMPILE_THRESHOLD = 25.0


def compare(old_rows, new_rows, *, threshold=10.0):
    """Compare two benchmark runs per (workload, contender, size).

    Parameters
    ----------
    old_rows, new_rows : list of dict
        Rows of :func:`fastrbf.bench.suite.run` (or :func:`load_rows`).
    threshold : float, default 10
        Percent: a row more than this much slower, beyond the noise of both runs, is a
        ``"REGRESSION"``; more than this much faster, beyond the noise, is ``"faster"``.

    Returns
    -------
    list of dict
        In the order of ``new_rows`` (then the rows only in ``old_rows``), keys
        ``workload``, ``contender``, ``old_s``, ``new_s`` (median seconds or None),
        ``change_pct`` (``100 (new / old - 1)``, None when not comparable) and
        ``status``: ``"REGRESSION"``, ``"faster"``, ``"within noise"`` (beyond the
        threshold, but the ranges of the rounds of the two runs overlap), ``"peer
        slower"``/``"peer faster"`` (what would be a regression or a gain for a row that
        is not fastrbf's: a peer, the NumPy reference, a baseline), ``"same"``
        (within the threshold), ``"size differs"``, ``"only in old"``, ``"only in new"``
        or ``"not measured"``.

    Examples
    --------
    >>> old = [{"workload": "w", "contender": "a", "median_s": 1.0},
    ...        {"workload": "w", "contender": "b", "median_s": 1.0}]
    >>> new = [{"workload": "w", "contender": "a", "median_s": 1.5},
    ...        {"workload": "w", "contender": "c", "median_s": 2.0}]
    >>> [(r["contender"], r["change_pct"], r["status"]) for r in compare(old, new)]
    [('a', 50.0, 'REGRESSION'), ('c', None, 'only in new'), ('b', None, 'only in old')]
    """
    thr = check_threshold(threshold)
    by_wc: dict = {}
    for j, r in enumerate(old_rows):
        by_wc.setdefault((r["workload"], r["contender"]), []).append(j)
    exact = {(r["workload"], r["contender"], row_shape(r)): j for j, r in enumerate(old_rows)}
    used: set = set()
    out = []
    for r in new_rows:
        key = (r["workload"], r["contender"])
        i: int | None = exact.get((*key, row_shape(r)))
        if i is None:  # another size of the same (workload, contender) not matched exactly
            shapes = {row_shape(x) for x in new_rows if (x["workload"], x["contender"]) == key}
            i = next((j for j in by_wc.get(key, []) if j not in used and row_shape(old_rows[j]) not in shapes),
                     None)
        o = old_rows[i] if i is not None else None
        if i is not None:
            used.add(i)
        if o is not None and r.get("kind") == "compile" and o.get("cold_cpu_s") and r.get("cold_cpu_s"):
            # a cold compile is CPU work: its CPU time, which other processes disturb much less
            o = dict(o, median_s=o["cold_cpu_s"])
            r = dict(r, median_s=r["cold_cpu_s"])
        row = dict(workload=key[0], contender=key[1], old_s=o["median_s"] if o else None, new_s=r["median_s"],
                   change_pct=None)
        if o is None:
            row["status"] = "only in new"
        elif not o["median_s"] or not r["median_s"]:
            row["status"] = "not measured"
        elif row_shape(o) != row_shape(r):
            row["status"] = "size differs"
        else:
            row["change_pct"] = 100.0 * (r["median_s"] / o["median_s"] - 1.0)
            kind = r.get("kind", "fastrbf")
            row["status"] = change_status(o, r, max(thr, COMPILE_THRESHOLD) if kind == "compile" else thr)
            if kind not in OURS and row["status"] in ("REGRESSION", "faster"):
                row["status"] = "peer " + ("slower" if row["status"] == "REGRESSION" else "faster")
        out.append(row)
    for j, o in enumerate(old_rows):
        if j not in used:
            out.append(dict(workload=o["workload"], contender=o["contender"], old_s=o["median_s"], new_s=None,
                            change_pct=None, status="only in old"))
    return out


def _fmt_ms(t):
    if t is None:
        return "-"
    return f"{t * 1e3:.2f} ms" if t < 1 else f"{t:.3f} s"


def format_compare(result, *, threshold=10.0):
    """Format :func:`compare`'s rows as an aligned Markdown table and a summary line.

    Parameters
    ----------
    result : list of dict
        As returned by :func:`compare`.
    threshold : float, default 10
        The threshold used (for the summary line).

    Returns
    -------
    str

    Examples
    --------
    >>> old = [{"workload": "w", "contender": "a", "median_s": 0.010}]
    >>> new = [{"workload": "w", "contender": "a", "median_s": 0.012}]
    >>> print(format_compare(compare(old, new)))
    | workload | contender | old      | new      | change | status     |
    |----------|-----------|----------|----------|--------|------------|
    | w        | a         | 10.00 ms | 12.00 ms | +20.0% | REGRESSION |
    1 regression (> 10% slower, beyond the noise of both runs), 0 faster, 0 within noise, 0 within 10%; 0 not comparable
    """
    head = ["workload", "contender", "old", "new", "change", "status"]
    lines = [[r["workload"], r["contender"], _fmt_ms(r["old_s"]), _fmt_ms(r["new_s"]),
              "-" if r["change_pct"] is None else f"{r['change_pct']:+.1f}%", r["status"]] for r in result]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines, strict=True)]
    fmt = "| " + " | ".join(f"{{:{w}}}" for w in widths) + " |"
    out = [fmt.format(*head), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [fmt.format(*ln) for ln in lines]
    count = {s: sum(r["status"] == s for r in result)
             for s in ("REGRESSION", "faster", "within noise", "same", "peer slower", "peer faster")}
    other = len(result) - sum(count.values())
    thr = f"{threshold:g}%"
    out.append(f"{count['REGRESSION']} regression{'' if count['REGRESSION'] == 1 else 's'} (> {thr} slower, beyond "
               f"the noise of both runs), {count['faster']} faster, {count['within noise']} within noise, "
               f"{count['same']} within {thr}; {other} not comparable")
    moved = count["peer slower"] + count["peer faster"]
    if moved:
        out.append(f"{count['peer slower']} other row(s) slower and {count['peer faster']} faster beyond the noise "
                   f"(peers, the NumPy reference, baselines: the machine, not fastrbf)")
    return "\n".join(out)


# ---------------------------------------------------------------- the table
#: the widest line of the table
TABLE_WIDTH = 120


def _num(v):
    return f"{v:.0f}" if v >= 100 else (f"{v:.1f}" if v >= 10 else f"{v:.2f}")


def _time_pair(lo, med):
    if med is None:
        return "-"
    scale, unit = (1e6, "us") if med < 1e-3 else ((1e3, "ms") if med < 1 else (1.0, "s"))
    return f"{_num(lo * scale)} / {_num(med * scale)} {unit}" if lo is not None else f"{_num(med * scale)} {unit}"


def _fmt_x(v):
    return "-" if v is None else f"{v:.2f}x"


def _iqr(r):
    if r.get("q1_s") is None or r.get("q3_s") is None or not r.get("median_s"):
        return "-"
    return f"{100 * (r['q3_s'] - r['q1_s']) / r['median_s']:.0f}%"


def _vs_peer(r):
    if r.get("ratio_vs_best_peer") is None:
        return "-"
    v = r.get("verdict")
    return f"{r['ratio_vs_best_peer']:.2f}x " + (v if v else "(no spread)")


def _align(head, lines, right=()):
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines, strict=True)]

    def fmt(cells):
        return "  ".join(str(c).rjust(w) if i in right else str(c).ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return [fmt(head), "  ".join("-" * w for w in widths)] + [fmt(ln) if ln else "" for ln in lines], widths


def _wrap(text, indent="    "):
    return textwrap.fill(text, TABLE_WIDTH, subsequent_indent=indent, break_on_hyphens=False)


def _amount(v, unit):
    """``1.3 G<unit>`` / ``40 M<unit>`` / ``512 k<unit>``."""
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= scale:
            return f"{_num(v / scale)} {prefix}{unit}"
    return f"{_num(v)} {unit}"


def _floor_note(g):
    """The legend's roofline note of one workload: its binding floor and cost, and the
    rate fastrbf achieves; "" without them."""
    r = next((x for x in g if x.get("floor_s")), None)
    if r is None:
        return ""
    cost = [_amount(r[k], u) for k, u in (("flops", "flop"), ("exps", "exp")) if r.get(k)]
    moved = (r.get("bytes_read") or 0) + (r.get("bytes_written") or 0)
    if moved:
        cost.append(_amount(moved, "B"))
    ours = next((x for x in g if x.get("kind") == "fastrbf" and x.get("achieved_rate") is not None), None)
    rate = f"; fastrbf {_num(ours['achieved_rate'])} {ours['achieved_unit']}" if ours else ""
    return f"; floor ({r['floor_bound']}) {format_seconds(r['floor_s'])} for {', '.join(cost)}{rate}"


def _groups(rows):
    """(workload, shape) groups in order of appearance."""
    out: dict = {}
    for r in rows:
        out.setdefault((r["workload"], r.get("shape", "")), []).append(r)
    return out


def format_table(rows):
    """Format the rows of :func:`run` as a plain-text table with a numbered legend.

    One group of lines per workload (and size): its contenders with the time (minimum
    and median over the rounds), the spread (interquartile range of the rounds as a
    percentage of the median), the paired ratio against the best peer with its verdict,
    against the NumPy reference and against the workload's baseline, the peak traced
    memory and the fraction of the workload's binding floor (:mod:`fastrbf.bench.roofline`).
    Sizes, accuracy notes, baselines, the binding floor with the workload's essential cost
    and the notes on peers (the code path they ran, why they did not run) are in the
    numbered legend below; the compile rows (and the scaling over sizes of a full run)
    follow in their own sections.  No line is wider than :data:`TABLE_WIDTH`.

    Parameters
    ----------
    rows : list of dict
        As returned by :func:`run` (rows saved by an older version, without spreads,
        are shown with "-" where a field is missing).

    Returns
    -------
    str

    Examples
    --------
    >>> row = dict(workload="w", shape="10x2", contender="fastrbf", kind="fastrbf", min_s=0.4, median_s=0.5,
    ...            q1_s=0.45, q3_s=0.55, ratio_vs_numpy=4.0, ratio_vs_best_peer=2.0, verdict="faster",
    ...            peak_mem_bytes=2**20)
    >>> print(format_table([row]))  # doctest: +ELLIPSIS
    workload / contender  time min / median  IQR  vs best peer  vs NumPy  vs base  peak mem  floor
    --------------------  -----------------  ---  ------------  --------  -------  --------  -----
    [1] w
      fastrbf                  400 / 500 ms  20%  2.00x faster     4.00x        -     1 MiB      -
    <BLANKLINE>
    [1] w: 10x2
    ...
    """
    timed = [r for r in rows if r.get("workload") != "compile"]
    out = []
    legend = []
    if timed:
        head = ["workload / contender", "time min / median", "IQR", "vs best peer", "vs NumPy", "vs base", "peak mem",
                "floor"]
        cells: list = []
        for k, ((w, shape), g) in enumerate(_groups(timed).items(), 1):
            cells.append([f"[{k}] {w}", "", "", "", "", "", "", ""])
            note = "; ".join(x for x in (shape, g[0].get("accuracy", "")) if x)
            base = next((r for r in g if r.get("kind") in (FLOOR, BASELINE)), None)
            if base is not None:
                note += f"; vs base: against {base['contender']} ({KIND_NAMES[base['kind']]})"
            note += _floor_note(g)
            for r in g:  # what the legend says of a row: the code path a peer ran, why it did not run
                if r.get("note") and (r.get("median_s") is not None or r.get("unavailable")):
                    note += f"; {r['contender']}: {r['note']}"
            legend.append(_wrap(f"[{k}] {w}: {note}"))
            for r in g:
                tag = {FLOOR: " [floor]", BASELINE: " [baseline]"}.get(r.get("kind"), "")
                mem = "-" if r.get("peak_mem_bytes") is None else f"{r['peak_mem_bytes'] / 2**20:.0f} MiB"
                best = r["contender"] == next((x.get("best_peer") for x in g if x.get("best_peer")), None)
                time_cell = (_time_pair(r.get("min_s"), r["median_s"]) if r.get("median_s") is not None
                             else r.get("unavailable") or r.get("note") or "-")
                cells.append([("  " + r["contender"], tag), time_cell, _iqr(r),
                              "best peer" if best else _vs_peer(r), _fmt_x(r.get("ratio_vs_numpy")),
                              _fmt_x(r.get("ratio_vs_baseline", r.get("ratio_vs_floor"))), mem, format_fraction(r)])
        rest = sum(max(len(str(c[i])) for c in [*cells, head]) + 2 for i in range(1, len(head)))
        room = TABLE_WIDTH - rest
        for c in cells:
            if isinstance(c[0], tuple):  # a contender: its label shortened to fit, its kind tag kept
                label, tag = c[0]
                c[0] = (label if len(label) + len(tag) <= room else label[: room - len(tag) - 3] + "...") + tag
        lines, _ = _align(head, cells, right={1, 2, 4, 5, 6, 7})
        # group headers: the name alone, not padded
        out += [ln.rstrip() for ln in lines]
        out += ["", *legend, "", _wrap(
            f"time: minimum / median of the rounds (all contenders timed once per round, in a shuffled order); IQR: "
            f"interquartile range of the rounds, % of the median.  vs best peer: median over the rounds of the "
            f"fastest peer's time / this row's in the same round (> 1: faster); the verdict says faster or slower "
            f"only when the quartiles of these ratios are both above {1 + VERDICT_MARGIN:g} or both below "
            f"1/{1 + VERDICT_MARGIN:g}, else within noise.  "
            f"vs NumPy, vs base: the same paired ratio against the NumPy reference and the workload's baseline "
            f"([floor]: a hardware floor; [baseline]: a reference point, named in the legend).  peak mem: peak "
            f"traced memory (tracemalloc) of one call.  floor: the time the workload's binding floor allows for its "
            f"essential work over this row's median time (100%: at the floor; the legend names the binding floor, "
            f"flop: the GEMM peak of the dtype, mem: memory read + write bandwidth, exp: the vectorised-exp rate; "
            f"the floors are in the header).", indent="")]
    scaling = format_scaling(timed)
    if scaling:
        out += ["", scaling]
    comp = format_compile(rows)
    if comp:
        out += ["", comp] if out else [comp]
    return "\n".join(out)


def format_scaling(rows):
    """How the median time grows with N, for the workloads run at more than one size
    (a full run); "" when there are none.

    The growth exponent ``p`` fits ``time ~ N**p`` through the smallest and largest N.

    Examples
    --------
    >>> rows = [dict(workload="w", contender="a", n=n, median_s=t) for n, t in ((100, 0.01), (1000, 1.0))]
    >>> print(format_scaling(rows))
    scaling: median time per call as N grows; p: exponent of time ~ N^p between the smallest and largest N
    workload / contender    N=100  N=1000     p
    --------------------  -------  ------  ----
    w
      a                   10.0 ms  1.00 s  2.00
    """
    by_wl: dict = {}
    for r in rows:
        if r.get("n") is not None:
            by_wl.setdefault(r["workload"], []).append(r)
    multi = {w: g for w, g in by_wl.items() if len({r["n"] for r in g}) > 1}
    if not multi:
        return ""
    width = max(len({r["n"] for r in g}) for g in multi.values())
    head = ["workload / contender", *[f"size {i + 1}" for i in range(width)], "p"]
    cells = []
    for w, g in multi.items():
        ns = sorted({r["n"] for r in g})
        cells.append([w] + [""] * (width + 1))
        for c in dict.fromkeys(r["contender"] for r in g):
            t = {r["n"]: r["median_s"] for r in g if r["contender"] == c}
            pts = [(n, t[n]) for n in ns if t.get(n)]
            p = (f"{math.log(pts[-1][1] / pts[0][1]) / math.log(pts[-1][0] / pts[0][0]):.2f}"
                 if len(pts) > 1 else "-")
            cells.append(["  " + c[:44]] + [(f"N={n}: " if len(multi) > 1 else "") + format_seconds(t.get(n)) for n in ns]
                         + [""] * (width - len(ns)) + [p])
    if len(multi) == 1:
        head = ["workload / contender", *[f"N={n}" for n in sorted({r['n'] for r in next(iter(multi.values()))})], "p"]
    lines, _ = _align(head, cells, right=set(range(1, width + 2)))
    return "\n".join(["scaling: median time per call as N grows; p: exponent of time ~ N^p between the smallest and "
                      "largest N", *lines])


def format_compile(rows):
    """The compile and import rows of :func:`measure_compile` as a table; "" when there are none.

    Examples
    --------
    >>> row = dict(workload="compile", contender="gram", kind="compile", median_s=2.5, cold_cpu_s=2.4,
    ...            float32_extra_s=0.5, warm_extra_s=0.01)
    >>> print(format_compile([row]))
    compile: first call of a public function in a fresh process, empty numba cache, tiny float64 input
    target       cold (CPU)  float32 after  warm 1st - 2nd  goals
    ------  ---------------  -------------  --------------  ------------------
    gram    2.50 s (2.40 s)        +0.50 s        +10.0 ms  missed: cold > 2 s
    goals: cold <= 4 s (<= 2 s for sqdist, gram, gram_matvec), float32 after float64 <= +2 s, warm first call <= +50 ms
    """
    comp = [r for r in rows if r.get("workload") == "compile" and r.get("kind") == "compile"]
    imp = [r for r in rows if r.get("workload") == "compile" and r.get("kind") == "import"]
    if not comp and not imp:
        return ""
    g = COMPILE_GOALS
    out = []
    if comp:
        cells = []
        for r in comp:
            misses = r.get("goal_misses", compile_goal_misses(r))
            cpu = f" ({r['cold_cpu_s']:.2f} s)" if r.get("cold_cpu_s") is not None else ""
            f32 = "-" if r.get("float32_extra_s") is None else f"+{r['float32_extra_s']:.2f} s"
            warm = "-" if r.get("warm_extra_s") is None else f"+{r['warm_extra_s'] * 1e3:.1f} ms"
            cells.append([r["contender"], f"{r['median_s']:.2f} s{cpu}", f32, warm,
                          "met" if not misses else "missed: " + ", ".join(misses)])
        lines, _ = _align(["target", "cold (CPU)", "float32 after", "warm 1st - 2nd", "goals"], cells, right={1, 2, 3})
        out += ["compile: first call of a public function in a fresh process, empty numba cache, tiny float64 input",
                *lines,
                _wrap(f"goals: cold <= {g['cold_s']:g} s (<= {g['cold_fast_s']:g} s for {', '.join(g['fast'])}), "
                      f"float32 after float64 <= +{g['float32_s']:g} s, warm first call <= +{g['warm_extra_s'] * 1e3:g} "
                      f"ms", indent="")]
        startup = [r["numba_startup_s"] for r in comp if r.get("numba_startup_s") is not None]
        if startup:
            out.append(_wrap(f"warm 1st - 2nd is counted after numba's own once-per-process start-up "
                             f"(median {np.median(startup) * 1e3:.0f} ms here), which any numba code pays on its "
                             f"first call", indent=""))
    for r in imp:
        spread = (f"; IQR {r['q1_s'] * 1e3:.0f}-{r['q3_s'] * 1e3:.0f} ms" if r.get("q1_s") is not None else "")
        numba_s = f"; import numba itself {r['numba_import_s']:.2f} s" if r.get("numba_import_s") is not None else ""
        out.append(f"import fastrbf after import numba: {r['median_s'] * 1e3:.0f} ms (median of {r.get('rounds', '?')} "
                   f"fresh processes{spread}){numba_s}")
    return "\n".join(out)
