"""The README's example runs as written."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_readme_example_runs():
    text = (ROOT / "README.md").read_text()
    code = re.search(r"## Example\n\n```python\n(.*?)```", text, re.S).group(1)
    namespace = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert namespace["D"].shape == (5000, 200)
    assert namespace["km"].centers.shape == (200, 8)
