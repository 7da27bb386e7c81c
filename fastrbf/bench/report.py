"""The benchmark report: a figure and a comparison with a saved run.

Used by ``python -m fastrbf.bench --plot PATH`` and ``--compare OLD.json``; works on
the rows of :func:`fastrbf.benchmarks.run` (or the same rows read back from ``--json``).

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
- **One panel per workload** (its largest size in a run over several sizes),
  horizontal bars (contender names are long) of the median time per call on a log axis
  with the interquartile range as error bars, coloured by kind: fastrbf, a peer, the
  NumPy reference, a hardware floor.  A baseline that is not a hardware floor is drawn
  hollow and named ``[baseline]`` in its label, never in the floor's colour.  Each
  fastrbf bar carries its ratio against the best peer and the verdict.  With a baseline
  run a black tick marks each contender's old median, so a regression shows as a bar
  that reaches past its tick.
- matplotlib is an optional extra (``fastrbf[bench]`` or ``fastrbf[plot]``), imported
  only when a figure is drawn, with the non-interactive Agg backend (no display
  needed); without it a clear ``ImportError`` names the extra.
"""

import json
import math
import textwrap

#: colours per contender kind (colour-blind safe: Okabe-Ito); a baseline is drawn hollow
KIND_COLOURS = {"fastrbf": "#0072B2", "peer": "#E69F00", "numpy": "#999999", "floor": "#009E73", "baseline": "white"}
KIND_LABELS = {"fastrbf": "fastrbf", "peer": "peer", "numpy": "NumPy reference", "floor": "hardware floor (LAPACK)",
               "baseline": "baseline (named in its label)"}
#: the format tag of a saved run (``--json``); older versions wrote a bare list of rows
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


def _check_threshold(threshold):
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold) \
            or threshold < 0:
        raise ValueError(f"`threshold` must be a finite number >= 0 (percent); got {threshold!r}.")
    return float(threshold)


def _shape(r):
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
        Rows of :func:`fastrbf.benchmarks.run` (or :func:`load_rows`).
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
    thr = _check_threshold(threshold)
    by_wc: dict = {}
    for j, r in enumerate(old_rows):
        by_wc.setdefault((r["workload"], r["contender"]), []).append(j)
    exact = {(r["workload"], r["contender"], _shape(r)): j for j, r in enumerate(old_rows)}
    used: set = set()
    out = []
    for r in new_rows:
        key = (r["workload"], r["contender"])
        i: int | None = exact.get((*key, _shape(r)))
        if i is None:  # another size of the same (workload, contender) not matched exactly
            shapes = {_shape(x) for x in new_rows if (x["workload"], x["contender"]) == key}
            i = next((j for j in by_wc.get(key, []) if j not in used and _shape(old_rows[j]) not in shapes),
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
        elif _shape(o) != _shape(r):
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


def _fmt_s(t):
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
    lines = [[r["workload"], r["contender"], _fmt_s(r["old_s"]), _fmt_s(r["new_s"]),
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


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise ImportError("Drawing the benchmark figure needs matplotlib, an optional extra: "
                          "`pip install fastrbf[bench]`, `pip install fastrbf[plot]` or `pip install matplotlib`.") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _fmt_t(t):
    if t < 1e-3:
        return f"{t * 1e6:.3g} us"
    return f"{t * 1e3:.3g} ms" if t < 1 else f"{t:.3g} s"


def _largest_size(rows):
    """Per workload, its rows at the largest size run (the last size in row order)."""
    last: dict = {}
    for r in rows:
        last[r["workload"]] = r.get("shape", "")
    return {w: [r for r in rows if r["workload"] == w and r.get("shape", "") == shape] for w, shape in last.items()}


def plot(rows, path, *, baseline=None, threshold=10.0, title=None, ncols=2):
    """Draw the time per call of every contender, one panel per workload, into an image.

    Bars are the median time per call (log axis, shorter is faster) with the
    interquartile range of the rounds as error bars; each fastrbf bar is labelled with
    its ratio against the best peer and the verdict; a baseline that is not a hardware
    floor is hollow and labelled ``[baseline]``.  A run over several sizes is drawn at
    each workload's largest size.  The compile rows are not drawn.

    Parameters
    ----------
    rows : list of dict
        Rows of :func:`fastrbf.benchmarks.run` (or :func:`load_rows`).
    path : str or path-like
        Output file; the format follows the extension (``.png``, ``.svg``, ``.pdf``).
    baseline : list of dict, optional
        An older run: a black tick marks each contender's old median time (rows of the
        same size only) and the label gives the change of the time per call.
    threshold : float, default 10
        Percent: labels of rows more than this much slower than ``baseline`` are red.
    title : str, optional
        Figure title.
    ncols : int, default 2
        Panels per row.

    Returns
    -------
    str
        ``path``.

    Raises
    ------
    ImportError
        When matplotlib (the extra ``fastrbf[bench]`` or ``fastrbf[plot]``) is not installed.
    ValueError
        When ``rows`` holds no timed benchmark rows.
    """
    rows = [r for r in rows if r.get("workload") != "compile"]
    if not rows:
        raise ValueError("`rows` must hold at least one benchmark row; got none.")
    if isinstance(ncols, bool) or not isinstance(ncols, int) or ncols < 1:
        raise ValueError(f"`ncols` must be an int >= 1; got {ncols!r}.")
    thr = _check_threshold(threshold)
    plt = _pyplot()
    from matplotlib.patches import Patch
    from matplotlib.ticker import NullFormatter

    groups = _largest_size(rows)
    workloads = list(groups)
    base = {(r["workload"], r["contender"]): r for r in (baseline or [])}
    any_ticks = False
    ncols = min(ncols, len(workloads))
    nrows = -(-len(workloads) // ncols)
    wrap = 80 if ncols > 1 else 160
    titles = {}
    for k, w in enumerate(workloads, 1):
        g = groups[w]
        note = "; ".join(x for x in (g[0].get("shape", ""), g[0].get("accuracy", "")) if x)
        titles[w] = textwrap.fill(f"[{k}] {w}" + (f": {note}" if note else ""), wrap, break_on_hyphens=False)
    heights = []
    for i in range(nrows):
        row_w = workloads[i * ncols:(i + 1) * ncols]
        heights.append(max(len(groups[w]) for w in row_w) * 0.34 + 0.75 + 0.17 * max(titles[w].count("\n") + 1
                                                                                       for w in row_w))
    fig, axes = plt.subplots(nrows, ncols, figsize=(8.0 * ncols, sum(heights) + 1.2), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax in axes.flat[len(workloads):]:
        ax.set_visible(False)
    for ax, w in zip(axes.flat, workloads, strict=False):  # spare panels stay empty
        g = groups[w]
        y = list(range(len(g)))[::-1]  # first contender on top
        vals = [r.get("median_s") or 0.0 for r in g]
        shown = [v for v in vals if v > 0]
        drawn = [i for i, v in enumerate(vals) if v > 0]  # skipped rows get a note, no bar
        err = [[max(0.0, vals[i] - g[i]["q1_s"]) if g[i].get("q1_s") is not None else 0.0 for i in drawn],
               [max(0.0, g[i]["q3_s"] - vals[i]) if g[i].get("q3_s") is not None else 0.0 for i in drawn]]
        kinds = [g[i].get("kind") for i in drawn]
        ax.barh([y[i] for i in drawn], [vals[i] for i in drawn], height=0.7,
                color=[KIND_COLOURS.get(k, "#CC79A7") for k in kinds],
                edgecolor=["black" if k == "baseline" else "none" for k in kinds], hatch=None,
                xerr=err if any(any(e) for e in err) else None, error_kw={"ecolor": "black", "elinewidth": 1,
                                                                            "capsize": 2})
        ax.set_yticks(y)
        ax.set_yticklabels([r["contender"] + {"baseline": " [baseline]", "floor": " [hardware floor]"}.get(
            r.get("kind"), "") for r in g], fontsize=8)
        lo = min(shown) / 3 if shown else 1e-3
        hi = max(shown) * 12 if shown else 1.0
        ticks = []
        for yi, r, v in zip(y, g, vals, strict=True):
            o = base.get((w, r["contender"]))
            old_v = None
            if o and o.get("median_s") and v > 0 and _shape(o) == _shape(r):
                old_v = o["median_s"]
            if old_v:
                ticks.append((old_v, yi))
                lo, hi = min(lo, old_v / 3), max(hi, old_v * 12)
            if v > 0:
                pct = 100 * (v / old_v - 1) if old_v else 0.0  # change of the time per call
                label = _fmt_t(v)
                if r.get("ratio_vs_best_peer") is not None:
                    label += f"  {r['ratio_vs_best_peer']:.2f}x vs best peer"
                    label += f": {r['verdict']}" if r.get("verdict") else ""
                if r.get("ratio_vs_baseline") is not None:
                    kind = "hardware floor" if r.get("baseline_kind") == "floor" else "baseline"
                    label += f"  {r['ratio_vs_baseline']:.2f}x vs {kind}"
                if abs(pct) >= 0.5:
                    label += f"  ({pct:+.0f}% time)"
                right = max(v, r.get("q3_s") or 0.0, old_v or 0.0)
                ax.text(right * 1.15, yi, label, va="center", fontsize=7,
                        color="#D55E00" if pct > thr else "black",
                        fontweight="bold" if pct > thr or r.get("kind") == "fastrbf" else "normal")
            else:
                ax.text(lo * 1.1, yi, r.get("note") or "not measured", va="center", fontsize=7, color="#555555")
        if ticks:
            any_ticks = True
            ax.scatter([t for t, _ in ticks], [yi for _, yi in ticks], marker="|", s=180, color="black",
                       linewidths=1.5, zorder=3)
        lo = 10 ** math.floor(math.log10(lo))  # whole decades: at least two labelled ticks
        hi = 10 ** math.ceil(math.log10(hi))
        ax.set_xlim(lo, hi)
        ax.set_xscale("log")
        ax.set_ylim(-0.6, len(g) - 0.4)
        ax.set_title(titles[w], fontsize=8.5, loc="left")
        ax.set_xlabel("median time per call, s (log scale; shorter is faster; error bars: interquartile range)",
                      fontsize=7.5)
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(axis="x", which="major", alpha=0.3)
    kinds_seen = [k for k in KIND_COLOURS if any(r.get("kind") == k for r in rows)]
    handles: list = [Patch(facecolor=KIND_COLOURS[k], edgecolor="black" if k == "baseline" else "none",
                           label=KIND_LABELS[k]) for k in kinds_seen]
    if any_ticks:
        from matplotlib.lines import Line2D

        handles.append(Line2D([], [], marker="|", linestyle="none", color="black", markersize=12,
                              markeredgewidth=1.5, label="baseline run (old median)"))
    height = sum(heights) + 1.2
    fig.legend(handles=handles, loc="upper center", ncol=len(handles), frameon=False, fontsize=9,
               bbox_to_anchor=(0.5, 1.0 - (0.35 if title else 0.05) / height))
    if title:
        fig.suptitle(textwrap.fill(title, 150), fontsize=10, y=1.0 - 0.08 / height, va="top")
    fig.tight_layout(rect=(0, 0, 1, 1.0 - (0.7 if title else 0.4) / height))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)
