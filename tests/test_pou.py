"""partition_of_unity / interpolate(method="pu"): the partition-of-unity interpolant
reproduces the data, converges, stays near the dense interpolant, and refuses
ill-posed patches naming the patch."""

import pickle

import numpy as np
import pytest
from helpers import central_diff

import fastrbf
from fastrbf import NotPositiveDefiniteError, PartitionOfUnityInterpolant, partition_of_unity
from fastrbf.models import interpolation


def franke(X):
    """Franke's function in 2-D; in 3-D its extension with a third coordinate in every bump."""
    x, y = 9 * X[:, 0], 9 * X[:, 1]
    z = 9 * X[:, 2] if X.shape[1] == 3 else None
    s = (lambda a, b: (z - a) ** 2 / b) if z is not None else (lambda a, b: 0.0)
    return (0.75 * np.exp(-((x - 2) ** 2 + (y - 2) ** 2) / 4 - s(2, 4)) + 0.75 * np.exp(-(x + 1) ** 2 / 49 - (y + 1) / 10
            - (s(-1, 10) if z is not None else 0.0)) + 0.5 * np.exp(-((x - 7) ** 2 + (y - 3) ** 2) / 4 - s(5, 4))
            - 0.2 * np.exp(-(x - 4) ** 2 - (y - 7) ** 2 - s(5, 1)))


def inner_grid(d, k):
    """A k^d grid on [0.1, 0.9]^d: inside the hull of uniform random points, where no
    interpolant extrapolates."""
    g = np.linspace(0.1, 0.9, k)
    return np.stack(np.meshgrid(*[g] * d, indexing="ij"), axis=-1).reshape(-1, d)


def rmse(model, G):
    return float(np.sqrt(np.mean((model.predict(G) - franke(G)) ** 2)))


# (kernel, gamma times the squared spacing, degree): widths that keep the local systems
# well conditioned
KERNEL_CASES = [("thin_plate_spline", None, 1), ("cubic", None, 1), ("gaussian", 1.0, 0), ("matern32", 1.0, 0),
                ("matern52", 1.0, -1)]


@pytest.mark.parametrize("kernel, gamma, degree", KERNEL_CASES)
@pytest.mark.parametrize("d", [1, 2, 3])
def test_reproduces_the_data(rng, kernel, gamma, degree, d):
    n = 150 if d == 1 else 500
    X = rng.random((n, d))
    Y = np.column_stack([np.sin(3 * X.sum(axis=1)), np.cos(2 * X[:, 0])])
    if gamma is not None:
        gamma *= n ** (2 / d)
    m = partition_of_unity(X, Y, kernel=kernel, gamma=gamma, degree=degree, patch_points=30)
    assert isinstance(m, PartitionOfUnityInterpolant) and m.radii.shape[0] > 1
    assert np.abs(m.predict(X) - Y).max() <= 1e-10 * np.abs(Y).max()


@pytest.mark.parametrize("d, kernel, ns, rate", [(2, "thin_plate_spline", (500, 1000, 2000, 4000), 2.0),
                                                 (3, "cubic", (2000, 4000, 8000, 16000), 2.0)])
def test_converges_at_the_kernels_rate(d, kernel, ns, rate):
    # RMSE ~ h^p with h = n^(-1/d) the spacing.  For a smooth function, the thin-plate
    # spline in 2-D and the cubic in 3-D converge at least as h^2 (the native-space rate
    # doubled by the smoothness of the target; h^1.5 doubled is h^3 for the cubic); the
    # slope of log RMSE against log h over four densities is tested against 2.  Measured
    # (these seeds): 3.3 (2-D, pre-asymptotic) and 2.9 (3-D); the margin covers the
    # scatter of random points from one density to the next.
    rng = np.random.default_rng(7)
    G = inner_grid(d, 40 if d == 2 else 14)
    errs = []
    for n in ns:
        X = rng.random((n, d))
        errs.append(rmse(partition_of_unity(X, franke(X), kernel=kernel), G))
    slope = np.polyfit(np.log(np.array(ns, dtype=float) ** (-1 / d)), np.log(errs), 1)[0]
    assert slope >= rate, (errs, slope)
    assert errs[-1] < errs[0] / 4


@pytest.mark.parametrize("d, n, kernel", [(2, 3000, "thin_plate_spline"), (3, 4000, "cubic")])
def test_within_twice_the_dense_error(d, n, kernel):
    rng = np.random.default_rng(3)
    X = rng.random((n, d))
    G = inner_grid(d, 50 if d == 2 else 14)
    dense = rmse(fastrbf.interpolate(X, franke(X), kernel=kernel, method="dense"), G)
    pu = rmse(partition_of_unity(X, franke(X), kernel=kernel), G)
    assert pu <= 2 * dense, (pu, dense)


@pytest.mark.parametrize("d, n, kernel, seed", [(2, 5000, "thin_plate_spline", 4), (2, 3000, "cubic", 3),
                                                (3, 4000, "thin_plate_spline", 3), (3, 5000, "cubic", 3)])
def test_within_twice_the_dense_error_over_the_whole_box(d, n, kernel, seed):
    # RMSE on uniform random points over the data's bounding box, its faces and
    # corners included, where both interpolants err most (seed 4 leaves gaps in the
    # data at the faces: 2.2 times the dense error with patches at the faces no larger
    # than inside; 1.6 times measured)
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    lo, hi = X.min(axis=0), X.max(axis=0)
    G = lo + (hi - lo) * rng.random((20000, d))
    dense = rmse(fastrbf.interpolate(X, franke(X), kernel=kernel, method="dense"), G)
    pu = rmse(partition_of_unity(X, franke(X), kernel=kernel), G)
    assert pu <= 2 * dense, (pu, dense)


def test_boundary_patches_hold_more_points(rng):
    # the patches of the cells at the box's corners hold 4 times `patch_points`, those
    # at its faces (and edges) 2 times in 2-D, 1.25 times in 3-D
    for d, face in ((2, 40), (3, 25)):
        X = rng.random((3000, d))
        m = partition_of_unity(X, X[:, 0] - X[:, 1], patch_points=20)
        cell = np.stack(np.unravel_index(np.arange(m.centers.shape[0]), tuple(m.grid_counts)), axis=1)
        touched = ((cell == 0) | (cell == m.grid_counts - 1)).sum(axis=1)
        corner = touched == d
        assert corner.sum() == 2 ** d and (touched == 0).any()
        assert m.patch_sizes[corner].min() >= 80
        assert m.patch_sizes[(touched > 0) & ~corner].min() >= face
        assert m.patch_sizes[touched == 0].min() >= 20
        # the weights are sized by the `patch_points` nearest points: the extra points
        # lie past them and the interpolant still reproduces the data
        assert np.all(m.patch_sizes[corner] > 2 * np.array([np.sum(np.linalg.norm(X - m.centers[j], axis=1)
                                                                    < m.radii[j]) for j in np.flatnonzero(corner)]))
        assert np.abs(m.predict(X) - (X[:, 0] - X[:, 1])).max() <= 1e-12


@pytest.mark.parametrize("kernel, gamma, length_scale", [("cubic", None, None), ("matern52", 30.0, None),
                                                         ("gaussian", 30.0, [1.0, 2.0, 0.5])])
def test_gradient_matches_central_differences(rng, kernel, gamma, length_scale):
    X = rng.random((800, 3))
    Y = np.column_stack([franke(X), np.sin(2 * X[:, 1])])
    m = partition_of_unity(X, Y, kernel=kernel, gamma=gamma, length_scale=length_scale, patch_points=40)
    Xq = 0.1 + 0.8 * rng.random((40, 3))
    f, J = m.predict(Xq, return_grad=True)
    assert J.shape == (40, 2, 3)
    np.testing.assert_allclose(f, m.predict(Xq), rtol=1e-12, atol=1e-14)
    fd = central_diff(m.predict, Xq, 1e-5)
    for a in range(3):
        np.testing.assert_allclose(J[:, :, a], fd[:, :, a], rtol=1e-6, atol=1e-6 * np.abs(fd[:, :, a]).max())
    f1, g1 = partition_of_unity(X, Y[:, 0], kernel=kernel, gamma=gamma, length_scale=length_scale,
                                patch_points=40).predict(Xq, return_grad=True)
    assert f1.shape == (40,) and g1.shape == (40, 3)
    np.testing.assert_array_equal(g1, J[:, 0])


def test_float32_in_float32_out(rng):
    X = rng.random((400, 2)).astype(np.float32)
    y = np.sin(4 * X[:, 0]).astype(np.float32)
    m = partition_of_unity(X, y, patch_points=30)
    out = m.predict(X[:10])
    f, g = m.predict(X[:10], return_grad=True)
    assert out.dtype == np.float32 and f.dtype == np.float32 and g.dtype == np.float32
    np.testing.assert_allclose(out, y[:10], atol=1e-6)
    assert m.predict(X[:3].astype(np.float64)).dtype == np.float64


def test_bitwise_the_same_for_one_and_two_threads(rng, monkeypatch):
    monkeypatch.setattr(fastrbf._threads, "SERIAL_WORK", 0)
    X = rng.random((3000, 3))
    Y = np.column_stack([franke(X), X[:, 0]])
    Xq = rng.random((2000, 3))
    m1 = partition_of_unity(X, Y, patch_points=40, n_threads=1)
    m2 = partition_of_unity(X, Y, patch_points=40, n_threads=2)
    for name in ("radii", "patch_sizes", "patch_x", "patch_w", "poly_coef", "cell_patches"):
        assert np.array_equal(getattr(m1, name), getattr(m2, name)), name
    f1, g1 = m1.predict(Xq, return_grad=True, n_threads=1)
    f2, g2 = m1.predict(Xq, return_grad=True, n_threads=2)
    assert np.array_equal(f1, f2) and np.array_equal(g1, g2)
    assert np.array_equal(m1.predict(Xq, n_threads=1), m1.predict(Xq, n_threads=2))
    assert np.array_equal(pickle.loads(pickle.dumps(m1)).predict(Xq), m1.predict(Xq))


def test_inputs_not_modified_and_model_owns_its_arrays(rng):
    X = rng.random((300, 2))
    y = np.sin(3 * X[:, 0])
    a = np.full(300, 1e-8)
    X0, y0, a0 = X.copy(), y.copy(), a.copy()
    m = partition_of_unity(X, y, alpha=a, patch_points=30)
    Xq = rng.random((50, 2))
    Xq0 = Xq.copy()
    before = m.predict(Xq, return_grad=True)
    assert np.array_equal(X, X0) and np.array_equal(y, y0) and np.array_equal(a, a0) and np.array_equal(Xq, Xq0)
    X[:] = 0.0
    y[:] = 0.0
    after = m.predict(Xq, return_grad=True)
    assert np.array_equal(before[0], after[0]) and np.array_equal(before[1], after[1])


def test_outside_the_box_extrapolates_from_the_nearest_patches(rng):
    X = rng.random((400, 2))
    m = partition_of_unity(X, X[:, 0] + 2 * X[:, 1], patch_points=30)
    # just outside: covered by the balls; far outside: the nearest patch's interpolant
    # (the linear tail reproduces a plane everywhere)
    Xq = np.array([[-0.01, 0.5], [1.01, 1.01], [5.0, -3.0], [-40.0, 0.5]])
    np.testing.assert_allclose(m.predict(Xq), Xq[:, 0] + 2 * Xq[:, 1], rtol=1e-8, atol=1e-8)


def test_method_switch(rng, monkeypatch):
    X = rng.random((200, 2))
    y = np.sin(3 * X[:, 0]) + X[:, 1]
    Xq = rng.random((30, 2))
    auto = fastrbf.interpolate(X, y)
    dense = fastrbf.interpolate(X, y, method="dense")
    assert isinstance(auto, fastrbf.KernelModel) and auto.solver == "cholesky"
    assert np.array_equal(auto.predict(Xq), dense.predict(Xq))
    assert isinstance(fastrbf.interpolate(X, y, neighbors=10), fastrbf.LocalInterpolant)
    assert isinstance(fastrbf.interpolate(X, y, neighbors=10, method="local"), fastrbf.LocalInterpolant)
    monkeypatch.setattr(interpolation, "AUTO_DENSE_MAX", 150)
    pu = fastrbf.interpolate(X, y)
    assert isinstance(pu, PartitionOfUnityInterpolant) and pu.solver == "pu"
    np.testing.assert_array_equal(pu.predict(Xq), partition_of_unity(X, y).predict(Xq))
    # below the kernel's minimum degree only the dense solve applies
    with pytest.warns(UserWarning, match="`degree` should not be below 1"):
        assert isinstance(fastrbf.interpolate(X, y, degree=0), fastrbf.KernelModel)


def test_refusals_name_the_argument(rng):
    X = rng.random((60, 2))
    y = X[:, 0]
    with pytest.raises(ValueError, match=r"`method` must be one of \['auto', 'dense', 'local', 'pu'\]; got 'fast'"):
        fastrbf.interpolate(X, y, method="fast")
    with pytest.raises(ValueError, match=r"`patch_points` must be an int >= 1; got 0"):
        partition_of_unity(X, y, patch_points=0)
    with pytest.raises(TypeError, match=r"`patch_points` must be an int >= 1; got 2.5"):
        partition_of_unity(X, y, patch_points=2.5)
    # patches of (nearly) all the points: refused at once, naming the dense solve
    with pytest.raises(ValueError, match=r"`patch_points` must be at most half the number of points .*method='dense'"):
        partition_of_unity(X, y, patch_points=X.shape[0] // 2 + 1)
    # local systems that cannot fit in memory: refused before the covering is built
    big = np.random.default_rng(0).random((300_000, 2))
    with pytest.raises(MemoryError, match="partition_of_unity: local systems.*fewer `patch_points`"):
        partition_of_unity(big, big[:, 0], patch_points=100_000)
    with pytest.raises(ValueError, match=r"`neighbors` is only used by method='local'; got method='pu'"):
        fastrbf.interpolate(X, y, method="pu", neighbors=5)
    with pytest.raises(ValueError, match=r"`neighbors` must be given with method='local'; got None"):
        fastrbf.interpolate(X, y, method="local")
    with pytest.raises(ValueError, match=r"`patch_points` is only used by method='pu'; got method='dense'"):
        fastrbf.interpolate(X, y, method="dense", patch_points=30)
    with pytest.raises(ValueError, match=r"`method` 'pu' needs `degree` >= 1 .* got `degree` 0"):
        partition_of_unity(X, y, degree=0)
    with pytest.raises(ValueError, match=r"`gamma` must be given for the 'gaussian' kernel"):
        partition_of_unity(X, y, kernel="gaussian")
    m = partition_of_unity(X, y)
    with pytest.raises(ValueError, match=r"`X` must have 2 features \(as the training data\); got shape \(1, 3\)"):
        m.predict(np.zeros((1, 3)))
    with pytest.raises(TypeError, match=r"`return_grad` must be a bool"):
        m.predict(X, return_grad=1)


def test_ill_posed_patches_raise_naming_the_patch(rng):
    X = rng.random((300, 2))
    y = np.sin(3 * X[:, 0])
    Xd = np.vstack([X, X[7:8]])  # X[300] duplicates X[7]
    yd = np.r_[y, 1.0]
    with pytest.raises(NotPositiveDefiniteError, match=r"The local system of the patch centred at \(.*\) \(\d+ data "
                                                       r"points\) is singular: `X\[7\]` and `X\[300\]` are the same "
                                                       r"point with zero smoothing\. Remove the duplicates"):
        partition_of_unity(Xd, yd, patch_points=30)
    partition_of_unity(Xd, yd, patch_points=30, alpha=1e-6)  # smoothing makes it well posed
    with pytest.raises(ValueError, match=r"The local system of the patch centred at .* has fewer points than the 3 "
                                         r"monomials of the degree-1 polynomial tail\. Use a larger `patch_points`"):
        partition_of_unity(X, y, patch_points=2)
    t = rng.random(100)
    line = np.column_stack([t, 2 * t + 1])  # collinear: a linear tail in 2-D is not determined
    with pytest.raises(ValueError, match=r"The points of the patch centred at .* do not determine a polynomial of "
                                         r"degree 1 .* Use a larger `patch_points` or a lower `degree`"):
        partition_of_unity(line, t, patch_points=20)
    with pytest.raises(NotPositiveDefiniteError, match=r"The local system of the patch centred at .* is not positive "
                                                       r"definite .* Remedies: a smoothing `alpha` > 0"):
        partition_of_unity(X, y, kernel="gaussian", gamma=1e-9, patch_points=40)


def test_dask_equals_in_memory(rng):
    import dask
    import dask.array as da

    from fastrbf import dask as fd

    X = rng.random((1500, 3))
    Y = np.column_stack([franke(X), X[:, 0] ** 2])
    a = rng.uniform(0, 1e-9, 1500)
    Xq = rng.random((700, 3))
    ref = partition_of_unity(X, Y, alpha=a, length_scale=[1.0, 0.5, 2.0], patch_points=40)
    with dask.config.set(scheduler="threads"):
        Xd = da.from_array(X, chunks=(400, 3))
        m = fd.partition_of_unity(Xd, da.from_array(Y, chunks=(400, 2)), alpha=a, length_scale=[1.0, 0.5, 2.0],
                                  patch_points=40)
        for name in ("centers", "radii", "patch_sizes", "patch_x", "patch_w", "poly_coef", "poly_shift",
                     "cell_ptr", "cell_patches", "alpha"):
            assert np.array_equal(getattr(m, name), getattr(ref, name)), name
        out = fd.predict(m, da.from_array(Xq, chunks=(300, 3))).compute()
        assert np.array_equal(out, ref.predict(Xq))
        X32 = X.astype(np.float32)
        m32 = fd.partition_of_unity(da.from_array(X32, chunks=(500, 3)), Y[:, 0].astype(np.float32),
                                    patch_points=40)
        assert np.array_equal(m32.patch_w, partition_of_unity(X32, Y[:, 0].astype(np.float32),
                                                              patch_points=40).patch_w)
        assert fd.predict(m32, X32[:5]).compute().dtype == np.float32
        with pytest.raises(ValueError, match=r"`Y` must have the same row chunks as `X`"):
            fd.partition_of_unity(Xd, da.from_array(Y, chunks=(500, 2)))
        with pytest.raises(ValueError, match=r"`kernel` must be a radial kernel for interpolation; got 'polynomial'"):
            fd.partition_of_unity(Xd, Y, kernel="polynomial")
        Xdup = np.vstack([X, X[3:4]])
        with pytest.raises(NotPositiveDefiniteError, match=r"`X\[3\]` and `X\[1500\]` are the same point"):
            fd.partition_of_unity(da.from_array(Xdup, chunks=(700, 3)), np.r_[Y[:, 0], 0.0], patch_points=40)
