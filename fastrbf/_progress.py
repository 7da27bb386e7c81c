"""Progress reports of long fits: the ``progress`` argument.

Fits whose loops can run for minutes (:func:`fastrbf.kmeans`,
:func:`fastrbf.kernel_ridge` with ``solver="nystrom-pcg"``, :func:`fastrbf.gaussian_process`,
:func:`fastrbf.rbf_network` and the fits of :mod:`fastrbf.dask`) take ``progress``:

- ``False`` (default): nothing is reported (the loops call a no-op).
- ``True``: one line on ``sys.stderr``.  On a terminal it is rewritten in place
  (``\\r``) at most ten times a second and each run (a k-means init, an optimiser
  start, a solve) ends its line with a newline; otherwise (a file, a pipe, a notebook's
  captured stream) a line is written at most every second and every run's final line
  always, e.g.::

      kmeans init 1/1: iter 12/300, shift 3.2e-04, 0.8 s, ETA 4 s
      kmeans init 1/1: iter 23/300 done, converged, inertia 1.2e+03, 1.7 s

- a :class:`logging.Logger` (or ``LoggerAdapter``): the same lines, as non-terminal
  output, go to its ``info`` (no ``\\r``).
- a callable ``progress(info)``: called after every iteration (no throttling), the
  report of a run's last iteration with ``final`` True (a loop that learns that it
  has ended only after its last iteration, as an optimiser start of the GP, adds a
  final report of the same count), with a new dict holding

  ``"task"``
      what runs: ``"kmeans"``, ``"kernel_ridge"``, ``"gaussian_process"``,
      ``"rbf_network"``, ``"dask.kmeans"``, ... (a fit that runs another one inside
      reports it under both names, e.g. ``"kernel_ridge kmeans"`` for the k-means
      of ``landmarks="kmeans"``);
  ``"stage"``
      the loop: ``"k-means++"`` (centres chosen), ``"k-means||"`` (rounds),
      ``"lloyd"``, ``"cg"`` (conjugate-gradient iterations), ``"l-bfgs-b"``,
      ``"gamma"`` (gradient steps on the width);
  ``"run"``, ``"n_runs"``
      1-based index of the current run (k-means init, optimiser start) and their
      number;
  ``"iter"``, ``"max_iter"``
      iterations done in this stage of this run, and their most (None: no bound);
      on the final report of a run ``"iter"`` is that run's count (the result's
      ``n_iter`` for the run that is kept; a GP start's ``n_iter`` in ``restarts``);
  ``"elapsed"``
      seconds since the call started;
  ``"eta"``
      estimated seconds left in the call, or None before there is a basis (see below);
  ``"final"``
      True on the last report of a stage in a run;
  ``"metrics"``
      a dict of what the loop tracks: ``shift`` (summed squared centre shift) and, at
      the end, ``inertia`` and ``converged`` for k-means; ``candidates`` (centres
      drawn so far) for k-means||; ``residual`` for CG (and ``converged`` at the end);
      ``lml`` (log marginal likelihood; ``converged`` at the end) for the GP; ``error``
      for the width steps;
  ``"message"``
      the line that ``progress=True`` would print.

  An exception raised by the callable ends the fit (it propagates).

The ETA of a loop with an iteration bound is the time per iteration so far times the
iterations left to the bound: for loops that stop at a tolerance (Lloyd, CG) it is an
upper bound, usually far above the actual time.  Later runs (``n_init``,
``n_restarts``) are added at the mean duration of the finished runs (before one has
finished, at the projected duration of the current one).  The optimiser starts of
the GP have no useful iteration bound: their ETA is the mean elapsed time per finished
start times the starts left.

Every call makes its own reporter (no state is shared between calls or threads); the
reports only read values the loops compute anyway, so results are bitwise the same
with any ``progress``.  Lazily returned dask arrays (:func:`fastrbf.dask.sqdist`,
...) report nothing: use dask's own ``dask.diagnostics.ProgressBar`` (or the
distributed dashboard) for them.
"""

import logging
import math
import sys
import time
from collections.abc import Callable
from typing import Any, TypeAlias

import numpy as np

#: what ``progress`` accepts (see the module docstring)
ProgressArg: TypeAlias = bool | logging.Logger | logging.LoggerAdapter | Callable[[dict[str, Any]], object]

#: seconds between two lines on a non-terminal stream or a logger, and between two
#: rewrites of the line on a terminal
LINE_INTERVAL = 1.0
TTY_INTERVAL = 0.1
#: the clock of the reports
_now = time.perf_counter


def _format_time(s):
    if s < 10:
        return f"{s:.1f} s"
    if s < 60:
        return f"{s:.0f} s"
    if s < 3600:
        return f"{int(s // 60)} min {int(s % 60):02d} s"
    return f"{int(s // 3600)} h {int(s % 3600 // 60):02d} min"


def _format_value(v):
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.4g}" if 1e-3 <= abs(v) < 1e5 or v == 0 else f"{float(v):.2e}"
    return str(v)


class _Sink:
    """Where one call's reports go, and the throttling state of that output (shared by
    the reporters of the fits that one call runs inside it)."""

    __slots__ = ("callback", "interval", "last", "logger", "stream", "tty", "width")

    def __init__(self, stream=None, logger=None, callback=None):
        self.stream, self.logger, self.callback = stream, logger, callback
        tty = False
        if stream is not None:
            try:
                tty = bool(stream.isatty())
            except (AttributeError, ValueError, OSError):
                tty = False
        self.tty = tty
        self.interval = TTY_INTERVAL if tty else LINE_INTERVAL
        self.last = -math.inf if tty else _now()  # a terminal shows the first report at once
        self.width = 0  # length of the line on the terminal

    def emit(self, info, final, force):
        """Write a report: always when ``force`` (the end of a run), else throttled;
        ``force`` also ends the line on a terminal."""
        if self.callback is not None:
            self.callback(info)
            return
        now = _now()
        if not force and now - self.last < self.interval:
            return
        self.last = now
        line = info["message"]
        if self.logger is not None:
            self.logger.info(line)
            return
        if self.tty:
            pad = " " * max(0, self.width - len(line))
            self.stream.write("\r" + line + pad + ("\n" if force else ""))
            self.width = 0 if force else len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


class Reporter:
    """The progress of one fit (one call): runs (inits, starts), each of one or more
    stages (loops) of iterations.

    Made by :func:`reporter`.  ``runs(n)`` announces the runs and ``run(i)`` begins
    run ``i``; ``start`` a stage, ``step`` after each iteration, ``finish_stage`` a stage
    that another follows, ``finish`` the run's last stage (a report always written).

    Examples
    --------
    >>> infos = []
    >>> rep = reporter(infos.append, "demo")
    >>> rep.start("lloyd", 10)
    >>> rep.step(1, shift=0.5)
    >>> rep.finish(2, converged=True)
    >>> [(i["iter"], i["final"]) for i in infos], infos[-1]["message"].split(", ")[:2]
    ([(1, False), (2, True)], ['demo: iter 2/10 done', 'converged'])
    """

    __slots__ = ("_done_runs", "_max", "_run", "_run_label", "_run_t0", "_sink", "_stage", "_stage_t0", "_t0",
                 "_unit", "n_runs", "task")

    def __init__(self, sink, task, t0=None, run_label=""):
        self._sink = sink
        self.task = task
        self._t0 = _now() if t0 is None else t0
        self._run_label = run_label
        self.n_runs = 1
        self._run = 1
        self._done_runs: list[float] = []
        self._run_t0 = self._t0
        self._stage = ""
        self._max: int | None = None
        self._stage_t0 = self._t0
        self._unit = "iter"

    def __bool__(self):
        return True

    def child(self, task, run_label=""):
        """A reporter for a fit run inside this one (same output, same clock), named
        after both (``"kernel_ridge kmeans"``)."""
        return Reporter(self._sink, f"{self.task} {task.rpartition('.')[2]}", self._t0, run_label)

    def runs(self, n_runs):
        """The call makes ``n_runs`` runs; the first begins now."""
        self.n_runs = int(n_runs)
        self._run = 1
        self._run_t0 = _now()

    def run(self, index):
        """Run ``index`` (1-based) begins; the previous one has ended."""
        now = _now()
        if index > 1:
            self._done_runs.append(now - self._run_t0)
        self._run = int(index)
        self._run_t0 = now

    def start(self, stage, max_iter=None, unit="iter"):
        """A loop of at most ``max_iter`` iterations (None: no bound) begins; ``unit``
        names its iterations in the line."""
        self._stage = stage
        self._max = None if max_iter is None else int(max_iter)
        self._stage_t0 = _now()
        self._unit = unit

    def _eta(self, done, now, final):
        """Seconds left in the call (None: no basis yet)."""
        left = self.n_runs - self._run
        in_run = now - self._run_t0
        per_run = sum(self._done_runs) / len(self._done_runs) if self._done_runs else None
        if final:
            rest = 0.0
            per_run = per_run if per_run is not None else in_run
        elif self._max is not None and done > 0:
            rest = (now - self._stage_t0) / done * max(0, self._max - done)
        elif per_run is not None:
            rest = max(0.0, per_run - in_run)
        else:
            return None
        if left and per_run is None:
            per_run = in_run + rest
        return rest + left * (per_run or 0.0)

    def _report(self, done, final, force, metrics):
        now = _now()
        elapsed = now - self._t0
        eta = self._eta(done, now, final) if force or not final else None  # no basis for the next stage
        head = f"{self.task} {self._run_label} {self._run}/{self.n_runs}" if self._run_label else self.task
        count = f"{done}/{self._max}" if self._max is not None else f"{done}"
        parts = [f"{head}: {self._unit} {count}" + (" done" if final else "")]
        for k, v in metrics.items():
            if isinstance(v, (bool, np.bool_)):
                parts.append(k if v else f"not {k}")
            else:
                parts.append(f"{k} {_format_value(v)}")
        parts.append(_format_time(elapsed))
        if eta is not None and not final:
            parts.append(f"ETA {_format_time(eta)}")
        info = {"task": self.task, "stage": self._stage, "run": self._run, "n_runs": self.n_runs, "iter": int(done),
                "max_iter": self._max, "elapsed": elapsed, "eta": eta, "final": final, "metrics": dict(metrics),
                "message": ", ".join(parts)}
        self._sink.emit(info, final, force)

    def step(self, done, **metrics):
        """``done`` iterations of the current stage are done."""
        self._report(done, False, False, metrics)

    def finish(self, done, **metrics):
        """The last stage of this run ended after ``done`` iterations (a report that
        is always written)."""
        self._report(done, True, True, metrics)

    def finish_stage(self, done, **metrics):
        """A stage that another follows in this run ended (``final`` for a callable;
        written only as a throttled line)."""
        self._report(done, True, False, metrics)


class _Off:
    """The reporter of ``progress=False``: every method does nothing (no state)."""

    __slots__ = ()

    def __bool__(self):
        return False

    def child(self, task, run_label=""):
        return self

    def runs(self, n_runs):
        pass

    def run(self, index):
        pass

    def start(self, stage, max_iter=None, unit="iter"):
        pass

    def step(self, done, **metrics):
        pass

    def finish(self, done, **metrics):
        pass

    def finish_stage(self, done, **metrics):
        pass


OFF = _Off()


def check(progress: object, name: str = "progress") -> None:
    """Raise the TypeError of an invalid ``progress`` (see :func:`reporter`)."""
    if isinstance(progress, (bool, np.bool_, Reporter, _Off, logging.Logger, logging.LoggerAdapter)):
        return
    if callable(progress):
        return
    raise TypeError(f"`{name}` must be True, False, a logging.Logger or a callable taking a dict; got {progress!r:.80}.")


def own(progress: object, task: str, runs: str = "") -> "Reporter | _Off":
    """The reporter passed down by an enclosing fit itself (the same task), else
    :func:`reporter`.

    Examples
    --------
    >>> rep = reporter(print, "kernel_ridge")
    >>> own(rep, "falkon_solve") is rep
    True
    """
    if isinstance(progress, (Reporter, _Off)):
        return progress
    return reporter(progress, task, runs)


def reporter(progress: object, task: str, runs: str = "") -> "Reporter | _Off":
    """The reporter of one call for the user's ``progress`` (validated: a TypeError
    naming ``progress`` otherwise); a reporter passed down by an enclosing fit gives a
    child reporting under ``task``.  ``runs`` is the word for a run in the lines
    (``"init"``, ``"start"``).

    Examples
    --------
    >>> reporter(False, "kmeans").step(1)
    >>> reporter(1, "kmeans")
    Traceback (most recent call last):
    ...
    TypeError: `progress` must be True, False, a logging.Logger or a callable taking a dict; got 1.
    """
    check(progress)
    if isinstance(progress, _Off) or (isinstance(progress, (bool, np.bool_)) and not progress):
        return OFF
    if isinstance(progress, Reporter):
        return progress.child(task, runs)
    if isinstance(progress, (bool, np.bool_)):
        sink = _Sink(stream=sys.stderr)
    elif isinstance(progress, (logging.Logger, logging.LoggerAdapter)):
        sink = _Sink(logger=progress)
    else:
        sink = _Sink(callback=progress)
    return Reporter(sink, task, run_label=runs)
