"""The benchmark report: a throughput figure and a comparison with a saved run.

Used by ``python -m fastrbf.bench --plot PATH`` and ``--compare OLD.json``; works on
the rows of :func:`fastrbf.benchmarks.run` (or the same rows read back from ``--json``).

Decisions:

- **Compare times, not throughputs**, per (workload, contender): the change is
  ``new / old - 1`` of the median time, so +25% means 25% slower.  A row is a
  ``REGRESSION`` when it is more than ``threshold`` percent slower and ``faster``
  when more than ``threshold`` percent faster.  Rows whose size description differs
  (a ``--quick`` run against a ``--full`` one) are marked ``size differs`` and never
  called a regression; rows present on one side only, or not measured on one side
  (skipped at full size), are listed as such.
- **One panel per workload**, horizontal bars (contender names are long) of the
  throughput in the workload's own unit on a log axis, coloured by kind: fastrbf, a
  peer, the NumPy reference, a hardware/LAPACK floor.  With a baseline run a black tick
  marks each contender's old throughput, so a regression shows as a bar that stops
  short of its tick.
- matplotlib is an optional extra (``fastrbf[plot]``), imported only when a figure is
  drawn, with the non-interactive Agg backend (no display needed); without it a clear
  ``ImportError`` names the extra.
"""

import json
import math

#: colours per contender kind (colour-blind safe: Okabe-Ito)
KIND_COLOURS = {"fastrbf": "#0072B2", "peer": "#E69F00", "numpy": "#999999", "floor": "#009E73"}
KIND_LABELS = {"fastrbf": "fastrbf", "peer": "peer", "numpy": "NumPy reference", "floor": "floor (LAPACK / hardware)"}

_KEYS = ("workload", "contender", "median_s")


def load_rows(path):
    """Read benchmark rows written by ``python -m fastrbf.bench --json PATH``.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    list of dict

    Raises
    ------
    ValueError
        When the file is not a JSON list of rows with ``workload``, ``contender`` and
        ``median_s``.

    Examples
    --------
    >>> import json, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "run.json")
    >>> with open(path, "w") as fh:
    ...     json.dump([{"workload": "w", "contender": "fastrbf", "median_s": 0.5}], fh)
    >>> load_rows(path)[0]["median_s"]
    0.5
    """
    with open(path) as fh:
        try:
            rows = json.load(fh)
        except json.JSONDecodeError as exc:
            raise ValueError(f"`{path}` is not a JSON file of benchmark rows: {exc}.") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) and all(k in r for k in _KEYS) for r in rows):
        raise ValueError(f"`{path}` must hold a JSON list of benchmark rows (dicts with keys "
                         f"{', '.join(_KEYS)}), as written by `python -m fastrbf.bench --json`.")
    return rows


def _check_threshold(threshold):
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold) \
            or threshold < 0:
        raise ValueError(f"`threshold` must be a finite number >= 0 (percent); got {threshold!r}.")
    return float(threshold)


def compare(old_rows, new_rows, *, threshold=10.0):
    """Compare two benchmark runs per (workload, contender).

    Parameters
    ----------
    old_rows, new_rows : list of dict
        Rows of :func:`fastrbf.benchmarks.run` (or :func:`load_rows`).
    threshold : float, default 10
        Percent: a row more than this much slower is a ``"REGRESSION"``, more than this
        much faster is ``"faster"``.

    Returns
    -------
    list of dict
        In the order of ``new_rows`` (then the rows only in ``old_rows``), keys
        ``workload``, ``contender``, ``old_s``, ``new_s`` (median seconds or None),
        ``change_pct`` (``100 (new / old - 1)``, None when not comparable) and
        ``status``: ``"REGRESSION"``, ``"faster"``, ``"same"`` (within the threshold),
        ``"size differs"``, ``"only in old"``, ``"only in new"`` or ``"not measured"``.

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
    old = {(r["workload"], r["contender"]): r for r in old_rows}
    new_keys = set()
    out = []
    for r in new_rows:
        key = (r["workload"], r["contender"])
        new_keys.add(key)
        o = old.get(key)
        row = dict(workload=key[0], contender=key[1], old_s=o["median_s"] if o else None, new_s=r["median_s"],
                   change_pct=None)
        if o is None:
            row["status"] = "only in new"
        elif not o["median_s"] or not r["median_s"]:
            row["status"] = "not measured"
        elif o.get("shape", "") != r.get("shape", ""):
            row["status"] = "size differs"
        else:
            pct = 100.0 * (r["median_s"] / o["median_s"] - 1.0)
            row["change_pct"] = pct
            row["status"] = "REGRESSION" if pct > thr else ("faster" if pct < -thr else "same")
        out.append(row)
    for key, o in old.items():
        if key not in new_keys:
            out.append(dict(workload=key[0], contender=key[1], old_s=o["median_s"], new_s=None, change_pct=None,
                            status="only in old"))
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
    1 regression (> 10% slower), 0 faster, 0 within 10%; 0 not comparable
    """
    head = ["workload", "contender", "old", "new", "change", "status"]
    lines = [[r["workload"], r["contender"], _fmt_s(r["old_s"]), _fmt_s(r["new_s"]),
              "-" if r["change_pct"] is None else f"{r['change_pct']:+.1f}%", r["status"]] for r in result]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines, strict=True)]
    fmt = "| " + " | ".join(f"{{:{w}}}" for w in widths) + " |"
    out = [fmt.format(*head), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [fmt.format(*ln) for ln in lines]
    count = {s: sum(r["status"] == s for r in result) for s in ("REGRESSION", "faster", "same")}
    other = len(result) - sum(count.values())
    thr = f"{threshold:g}%"
    out.append(f"{count['REGRESSION']} regression{'' if count['REGRESSION'] == 1 else 's'} (> {thr} slower), "
               f"{count['faster']} faster, {count['same']} within {thr}; {other} not comparable")
    return "\n".join(out)


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise ImportError("Drawing the benchmark figure needs matplotlib, an optional extra: "
                          "`pip install fastrbf[plot]` (or `pip install matplotlib`).") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _short_rate(v):
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= div:
            return f"{v / div:.3g}{suffix}"
    return f"{v:.3g}"


def plot(rows, path, *, baseline=None, threshold=10.0, title=None, ncols=2):
    """Draw the throughput of every contender, one panel per workload, into an image.

    Parameters
    ----------
    rows : list of dict
        Rows of :func:`fastrbf.benchmarks.run` (or :func:`load_rows`).
    path : str or path-like
        Output file; the format follows the extension (``.png``, ``.svg``, ``.pdf``).
    baseline : list of dict, optional
        An older run: a black tick marks each contender's old throughput (rows of the
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
        When matplotlib (the extra ``fastrbf[plot]``) is not installed.
    ValueError
        When ``rows`` is empty.
    """
    if not rows:
        raise ValueError("`rows` must hold at least one benchmark row; got none.")
    if isinstance(ncols, bool) or not isinstance(ncols, int) or ncols < 1:
        raise ValueError(f"`ncols` must be an int >= 1; got {ncols!r}.")
    thr = _check_threshold(threshold)
    plt = _pyplot()
    from matplotlib.patches import Patch
    from matplotlib.ticker import NullFormatter

    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    groups = {w: [r for r in rows if r["workload"] == w] for w in workloads}
    base = {(r["workload"], r["contender"]): r for r in (baseline or [])}
    any_ticks = False
    ncols = min(ncols, len(workloads))
    nrows = -(-len(workloads) // ncols)
    heights = [max(len(groups[w]) for w in workloads[i * ncols:(i + 1) * ncols]) * 0.32 + 0.9 for i in range(nrows)]
    fig, axes = plt.subplots(nrows, ncols, figsize=(7.5 * ncols, sum(heights) + 1.0), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax in axes.flat[len(workloads):]:
        ax.set_visible(False)
    for ax, w in zip(axes.flat, workloads, strict=False):  # spare panels stay empty
        g = groups[w]
        y = list(range(len(g)))[::-1]  # first contender on top
        vals = [r.get("throughput") or 0.0 for r in g]
        shown = [v for v in vals if v > 0]
        drawn = [i for i, v in enumerate(vals) if v > 0]  # skipped rows get a note, no bar
        ax.barh([y[i] for i in drawn], [vals[i] for i in drawn], height=0.7,
                color=[KIND_COLOURS.get(g[i].get("kind"), "#CC79A7") for i in drawn])
        ax.set_yticks(y)
        ax.set_yticklabels([r["contender"] for r in g], fontsize=8)
        lo = min(shown) / 3 if shown else 1.0
        hi = max(shown) * 2.5 if shown else 10.0
        ticks = []
        for yi, r, v in zip(y, g, vals, strict=True):
            o = base.get((w, r["contender"]))
            old_v = None
            if o and o.get("median_s") and r.get("median_s") and v > 0 and o.get("shape", "") == r.get("shape", ""):
                old_v = v * r["median_s"] / o["median_s"]  # same size, same work: as compare() sees it
            if old_v:
                ticks.append((old_v, yi))
                lo, hi = min(lo, old_v / 3), max(hi, old_v * 2.5)
            if v > 0:
                pct = 100 * (old_v / v - 1) if old_v else 0.0  # change of the time per call
                label = _short_rate(v) + (f" ({pct:+.0f}% time)" if abs(pct) >= 0.5 else "")
                ax.text(max(v, old_v or 0) * 1.1, yi, label, va="center", fontsize=7,
                        color="#D55E00" if pct > thr else "black", fontweight="bold" if pct > thr else "normal")
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
        shape = g[0].get("shape", "")
        ax.set_title(f"{w}  ({shape})" if shape else w, fontsize=9, loc="left")
        ax.set_xlabel(f"throughput, {g[0].get('unit', '')} (log scale; higher is better)", fontsize=8)
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(axis="x", which="major", alpha=0.3)
    kinds = [k for k in KIND_COLOURS if any(r.get("kind") == k for r in rows)]
    handles: list = [Patch(color=KIND_COLOURS[k], label=KIND_LABELS[k]) for k in kinds]
    if any_ticks:
        from matplotlib.lines import Line2D

        handles.append(Line2D([], [], marker="|", linestyle="none", color="black", markersize=12,
                              markeredgewidth=1.5, label="baseline run"))
    height = sum(heights) + 1.0
    fig.legend(handles=handles, loc="upper center", ncol=len(handles), frameon=False, fontsize=9,
               bbox_to_anchor=(0.5, 1.0 - (0.35 if title else 0.05) / height))
    if title:
        fig.suptitle(title, fontsize=10, y=1.0 - 0.08 / height, va="top")
    fig.tight_layout(rect=(0, 0, 1, 1.0 - (0.65 if title else 0.4) / height))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)
