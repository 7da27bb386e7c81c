"""The benchmark figure: ``python -m fastrbf.bench --plot PATH``, the time per call of
every contender, one panel per workload, optionally against a saved run.

Works on the rows of :func:`fastrbf.bench.suite.run` (or :func:`fastrbf.bench.report.load_rows`).
Kept apart from :mod:`fastrbf.bench.report` because it is the one part of the report
that needs matplotlib.

Decisions:

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

import math
import textwrap
from typing import Any

from .report import check_threshold, row_shape

#: colours per contender kind (colour-blind safe: Okabe-Ito); a baseline is drawn hollow
KIND_COLOURS = {"fastrbf": "#0072B2", "peer": "#E69F00", "numpy": "#999999", "floor": "#009E73", "baseline": "white"}
KIND_LABELS = {"fastrbf": "fastrbf", "peer": "peer", "numpy": "NumPy reference", "floor": "hardware floor (LAPACK)",
               "baseline": "baseline (named in its label)"}


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the non-interactive Agg backend; an ImportError naming the
    extra when matplotlib is not installed (``--plot`` asks for it before a long run)."""
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
        Rows of :func:`fastrbf.bench.suite.run` (or :func:`load_rows`).
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
    thr = check_threshold(threshold)
    plt = pyplot()
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
            if o and o.get("median_s") and v > 0 and row_shape(o) == row_shape(r):
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
