"""The scripts of ``examples/`` run in their quick mode and print sensible figures.

Each runs in a subprocess (as a user would run it), in a temporary directory that
receives its pictures, with the same ``fastrbf`` as this test process."""

import os
import pathlib
import re
import subprocess
import sys

import fastrbf

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def _run(script, tmp_path, *args):
    env = dict(os.environ)
    pkg_parent = str(pathlib.Path(fastrbf.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([pkg_parent] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["MPLBACKEND"] = "Agg"
    proc = subprocess.run([sys.executable, str(EXAMPLES / script), "--quick", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, f"{script} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _number(pattern, text):
    m = re.search(pattern, text)
    assert m, f"{pattern!r} not in the output:\n{text}"
    return float(m.group(1))


def _is_png(path):
    with open(path, "rb") as fh:
        return fh.read(8) == b"\x89PNG\r\n\x1a\n"


def test_examples_are_not_collected_as_doctests():
    text = (EXAMPLES.parent / "pyproject.toml").read_text()
    testpaths = re.search(r"^testpaths\s*=\s*\[(.*?)\]", text, re.MULTILINE).group(1)
    assert "examples" not in testpaths and "tests" in testpaths


def test_rbf_network_vs_svm(tmp_path):
    out = _run("rbf_network_vs_svm.py", tmp_path)
    rows = re.findall(r"^(fastrbf.rbf_network|scikit-learn SVC).*accuracy ([0-9.]+)", out, re.MULTILINE)
    assert [name for name, _ in rows] == ["fastrbf.rbf_network"] * 2 + ["scikit-learn SVC"]
    rows = [acc for _, acc in rows]
    svc = float(rows[2])
    assert svc > 0.9
    for acc in map(float, rows[:2]):  # the networks: as good as the SVM on this problem
        assert acc > 0.9 and acc > svc - 0.02


def test_interpolate_2d_field(tmp_path):
    out = _run("interpolate_2d_field.py", tmp_path, "--out", "field.png")
    assert _number(r"max error on the grid: (\S+)", out) < 0.05
    assert _number(r"RMS error: (\S+)", out) < 0.005
    assert _number(r"residual at the samples: (\S+)", out) < 1e-8  # an interpolant
    assert _number(r"max difference from SciPy RBFInterpolator: (\S+)", out) < 1e-8
    assert _is_png(tmp_path / "field.png")


def test_interpolate_2d_field_writes_no_file_into_the_working_directory(tmp_path):
    out = _run("interpolate_2d_field.py", tmp_path)
    m = re.search(r"picture written to (\S+)", out)
    assert m, out
    path = pathlib.Path(m.group(1))
    try:
        assert _is_png(path)
        assert tmp_path not in path.parents and path.parent.name.startswith("fastrbf-example-")
        assert list(tmp_path.iterdir()) == []
    finally:
        path.unlink()
        path.parent.rmdir()


def test_kmeans_digits(tmp_path):
    out = _run("kmeans_digits.py", tmp_path, "--centres", "centres.png")
    ari = _number(r"fastrbf\.kmeans\s+ARI ([0-9.]+)", out)
    ari_sk = _number(r"scikit-learn KMeans\s+ARI ([0-9.]+)", out)
    inertia = _number(r"fastrbf\.kmeans\s+ARI .*?inertia (\S+)", out)
    inertia_sk = _number(r"scikit-learn KMeans\s+ARI .*?inertia (\S+)", out)
    assert ari > 0.5 and ari > ari_sk - 0.05
    assert inertia < 1.02 * inertia_sk
    assert _is_png(tmp_path / "centres.png")


def test_kernel_kmeans_shapes(tmp_path):
    out = _run("kernel_kmeans_shapes.py", tmp_path, "--picture", "shapes.png")
    assert _number(r"rings: kmeans ARI (\S+);", out) < 0.5
    assert _number(r"rings: .*kernel_kmeans .*ARI (\S+),", out) == 1.0
    # the moons: the true split's objective is below the best the starts reached (a local minimum)
    assert _number(r"moons: .*the true split's objective (\S+)", out) < _number(r"moons: .*objective (\S+);", out)
    assert _is_png(tmp_path / "shapes.png")


def test_guide_code_runs():
    """The Python blocks of docs/guide.md run in order in one namespace (blocks that
    start with ``# not run`` need optional packages and are only compiled)."""
    text = (EXAMPLES.parent / "docs" / "guide.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert len(blocks) >= 6
    ns = {}
    for i, code in enumerate(blocks):
        compiled = compile(code, f"docs/guide.md block {i}", "exec")
        if not code.startswith("# not run"):
            exec(compiled, ns)
    assert 0 < ns["gamma0"] and 0 < ns["learned"]
    assert (ns["best_gamma"], ns["best_alpha"]) in ns["grid"]
    assert ns["accuracy"] > 0.8
