"""The README's Python example runs as written, and records what it says."""

import os
import re

import pytest

from conftest import SOURCE_DIR, lines, one_session, run_python_ok

README = os.path.join(SOURCE_DIR, "README.md")


def readme_example():
    if not os.path.isfile(README):
        pytest.skip("no README.md beside the tests")
    with open(README) as f:
        text = f.read()
    section = text.split("\n## Use it from Python\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```python\n(.*?)^```$", section, re.S | re.M)
    assert len(blocks) == 1
    return blocks[0]


def test_readme_python_example(tmp_path):
    r = run_python_ok(readme_example(), cwd=str(tmp_path))
    d = one_session(str(tmp_path / "gpufl-logs"))
    assert os.path.basename(d).startswith("py_demo-")
    report = r.stdout.strip()
    assert report == os.path.join(d, "summary.txt") and os.path.isfile(report)
    begins = [b["name"] for b in lines(d, "scope", "scope_begin")]
    assert begins == ["train"] + ["epoch", "step"] * 3
    assert len(lines(d, "scope", "scope_end")) == 7
    assert lines(d, "system", "host_metrics")  # sampled while inside the scopes
