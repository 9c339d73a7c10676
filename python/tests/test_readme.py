"""The README's Python examples run as written: the recording one records
what it says, the analyzer one reads the bundled sample."""

import os
import re
import shutil

import pytest

from conftest import SOURCE_DIR, lines, one_session, run_python_ok

README = os.path.join(SOURCE_DIR, "README.md")


def readme_examples():
    if not os.path.isfile(README):
        pytest.skip("no README.md beside the tests")
    with open(README) as f:
        text = f.read()
    section = text.split("\n## Use it from Python\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```python\n(.*?)^```$", section, re.S | re.M)
    assert len(blocks) == 2
    return blocks


def readme_example():
    return readme_examples()[0]


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


def test_readme_analyzer_example(tmp_path):
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    sample = os.path.join(SOURCE_DIR, "samples", "train_sample")
    if not os.path.isdir(sample):
        pytest.skip("no bundled sample beside the tests")
    shutil.copytree(sample, str(tmp_path / "samples" / "train_sample"))  # nothing written into the source tree
    r = run_python_ok(readme_examples()[1], cwd=str(tmp_path))
    out = r.stdout
    assert "gpufl session train_sample-20261121-054005-1647-f559" in out
    assert "Hotspots: top 3 of 60 kernels" in out and "gpufl report: train_sample" in out
    assert "\n   5. " in out and "\n   6. " not in out
    with open(str(tmp_path / "timeline.png"), "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
