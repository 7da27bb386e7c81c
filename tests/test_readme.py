"""The README works as written: every Python block runs as a saved script, the set-up
gives exactly two commands (the second is what CI runs), and every link stays inside
the repository."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
TEXT = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, re.S)


def _run_script(code, tmp_path):
    script = tmp_path / "readme_block.py"
    script.write_text(code)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr[-4000:]}"
    return proc


def test_readme_has_the_example_and_the_dask_example():
    assert len(BLOCKS) == 2
    assert "import fastrbf" in BLOCKS[0]
    assert 'if __name__ == "__main__":' in BLOCKS[1] and "fastrbf.dask" in BLOCKS[1]


def test_readme_example_runs_as_a_script(tmp_path):
    out = _run_script(BLOCKS[0], tmp_path).stdout
    errors = [float(e) for e in re.findall(r"max error (\S+)", out)]
    assert len(errors) == 2 and max(errors) < 0.1, out
    assert list(tmp_path.iterdir()) == [tmp_path / "readme_block.py"]


def test_readme_dask_example_runs_as_a_script(tmp_path):
    proc = _run_script(BLOCKS[1], tmp_path)
    assert "iter" in proc.stderr  # the progress of the fit
    assert re.search(r"inertia \S+", proc.stdout), proc.stdout


def test_setup_gives_two_commands_and_ci_runs_the_second():
    setup = re.search(r"## Set up\n.*?```bash\n(.*?)```", TEXT, re.S).group(1)
    commands = [ln.strip() for ln in setup.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assert len(commands) == 2
    main, tests = commands
    assert main.startswith('pip install ".[bench]"') and "python -m fastrbf.compile" in main
    assert "python -m fastrbf.bench" in main
    ci = (ROOT / ".ci" / "run").read_text()
    assert tests in ci.splitlines()


@pytest.mark.parametrize("path", ["README.md", "docs/guide.md", "docs/api.md", "docs/architecture.md"])
def test_links_stay_inside_the_repository(path):
    text = (ROOT / path).read_text()
    base = (ROOT / path).parent
    for target in re.findall(r"\]\(([^)#]+)\)", text):
        if re.match(r"[a-z]+://", target):
            continue
        resolved = (base / target).resolve()
        assert ROOT in resolved.parents or resolved == ROOT, target
        assert resolved.exists(), target
