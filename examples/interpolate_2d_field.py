"""RBF interpolation of a 2-D field from scattered samples, with a picture.

The field is Franke's test function on the unit square (a standard test of scattered-data
interpolation).  ``fastrbf.interpolate`` fits the thin-plate-spline interpolant (with a
linear polynomial tail, as SciPy's ``RBFInterpolator``) through N random samples; it is
evaluated on a grid and compared with the true field and with SciPy.  The picture shows
the truth with the sample points, the interpolant and the error (log scale: it is largest near the boundary,
where the samples are one-sided, and vanishes at the samples).

Run::

    python examples/interpolate_2d_field.py                      # N = 2000, 200 x 200 grid
    python examples/interpolate_2d_field.py --quick --out f.png  # N = 300, 60 x 60 grid

The picture needs matplotlib (``pip install matplotlib``, or the ``bench`` or ``plot``
extra).  It goes to ``--out PATH``; without ``--out``, to a new temporary directory (the
path is printed), and it is skipped with a note when matplotlib is missing.
``--no-plot`` skips it.
"""

import argparse
import os
import tempfile
import time

import numpy as np
from scipy.interpolate import RBFInterpolator

import fastrbf


def franke(x, y):
    """Franke's function (R. Franke, 1979)."""
    return (0.75 * np.exp(-((9 * x - 2) ** 2 + (9 * y - 2) ** 2) / 4)
            + 0.75 * np.exp(-((9 * x + 1) ** 2) / 49 - (9 * y + 1) / 10)
            + 0.5 * np.exp(-((9 * x - 7) ** 2 + (9 * y - 3) ** 2) / 4)
            - 0.2 * np.exp(-((9 * x - 4) ** 2) - (9 * y - 7) ** 2))


def save_picture(path, X, xs, truth, fit):
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("The picture needs matplotlib: pip install matplotlib (or fastrbf[plot]), "
                         "or run with --no-plot.") from None
    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    extent = (0, 1, 0, 1)
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), constrained_layout=True)
    vmin, vmax = truth.min(), truth.max()
    for ax, img, title in ((axes[0], truth, f"truth and the {X.shape[0]} samples"),
                           (axes[1], fit, "fastrbf.interpolate (thin-plate spline)")):
        im = ax.imshow(img, origin="lower", extent=extent, vmin=vmin, vmax=vmax, cmap="viridis")
        ax.set_title(title, fontsize=10)
    axes[0].scatter(X[:, 0], X[:, 1], s=2, c="white", linewidths=0)
    fig.colorbar(im, ax=axes[:2], shrink=0.9, label="f(x, y)")
    err = np.abs(fit - truth)
    im = axes[2].imshow(np.log10(np.maximum(err, 1e-12)), origin="lower", extent=extent, cmap="magma",
                        vmax=np.log10(err.max()), vmin=np.log10(err.max()) - 4)
    axes[2].set_title(f"log10 |error| (max {err.max():.2g}, RMS {np.sqrt(np.mean(err ** 2)):.2g})", fontsize=10)
    fig.colorbar(im, ax=axes[2], shrink=0.9, label="log10 |interpolant - truth|")
    for ax in axes:
        ax.set_xlabel("x")
        ax.set_ylabel("y")
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small problem (seconds)")
    p.add_argument("--out", metavar="PATH", help="picture file (default: in a new temporary directory)")
    p.add_argument("--no-plot", action="store_true", help="do not draw the picture")
    args = p.parse_args(argv)

    n, m = (300, 60) if args.quick else (2000, 200)
    rng = np.random.default_rng(0)
    X = rng.random((n, 2))
    y = franke(X[:, 0], X[:, 1])
    xs = np.linspace(0, 1, m)
    gx, gy = np.meshgrid(xs, xs)
    G = np.column_stack([gx.ravel(), gy.ravel()])
    truth = franke(gx, gy)

    fastrbf.interpolate(X[:20], y[:20]).predict(G[:10])  # warm-up: numba compiles on first use
    t0 = time.perf_counter()
    model = fastrbf.interpolate(X, y)  # thin_plate_spline, degree 1, alpha 0: exact at the samples
    fit = model.predict(G).reshape(m, m)
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    fit_scipy = RBFInterpolator(X, y)(G).reshape(m, m)
    t_scipy = time.perf_counter() - t0

    err = fit - truth
    print(f"Franke's function, {n} scattered samples, {m} x {m} grid")
    print(f"max error on the grid: {np.abs(err).max():.3e}   RMS error: {np.sqrt(np.mean(err ** 2)):.3e}")
    print(f"residual at the samples: {np.abs(model.predict(X) - y).max():.1e}")
    print(f"max difference from SciPy RBFInterpolator: {np.abs(fit - fit_scipy).max():.1e}")
    print(f"fit + evaluation: fastrbf {t_ours * 1e3:.1f} ms, SciPy {t_scipy * 1e3:.1f} ms")
    if not args.no_plot:
        out = args.out
        if out is None:
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                print("no picture: matplotlib is not installed (pip install matplotlib)")
                return err
            out = os.path.join(tempfile.mkdtemp(prefix="fastrbf-example-"), "interpolate_2d_field.png")
        save_picture(out, X, xs, truth, fit)
        print(f"picture written to {out}")
    return err


if __name__ == "__main__":
    main()
