"""The README's Python example runs as written."""

from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.mark.skipif(not README.is_file(), reason="the repository's README is not beside this checkout")
def test_readme_python_example_runs():
    text = README.read_text()
    block = text.split("## Python", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    exec(compile(block, "README.md (Python)", "exec"), {})
