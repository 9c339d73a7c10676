"""gpufl.report: the text of `gpufl report` from Python.

The text comes from libgpufl (gpufl_trace_report), so it must be the
command's, byte for byte, but for CPU stacks: the command names their
frames (libdw), the library lists them by id. Checked on the bundled sample
against the build's `gpufl report` ($GPUFL_CLI).
"""

import os
import re
import shutil
import subprocess

import pytest

pytest.importorskip("pandas")  # make test installs it (tools/install-deps.sh --test-tools)

from conftest import SOURCE_DIR, cli  # noqa: E402
from gpufl.analyzer import GpuFlightSession  # noqa: E402
from gpufl.report import REPORT_FILE, TextReport, generate_report  # noqa: E402

SAMPLE = os.path.join(SOURCE_DIR, "samples", "train_sample")

# What only the command prints: the frames under each stack, and the note
# saying how they were named.
_FRAME = re.compile(r"^ +(#\d+ .*|\.\.\. \d+ more frames.*)\n", re.M)
_NOTE = re.compile(r"^\n  note: .*frames are module\+offset.*\n", re.M)


def without_frames(text):
    text = _FRAME.sub("", text)
    text = _NOTE.sub("", text)
    return text.replace(" (frames: gpufl stacks SESSION)", "")


def command_report(*args):
    return subprocess.run([cli(), "report"] + list(args), check=True, stdout=subprocess.PIPE,
                          universal_newlines=True).stdout


@pytest.mark.parametrize("top", [1, 5, 10])
def test_text_is_the_commands(top):
    want = command_report(SAMPLE, "--top", str(top))
    got = TextReport(SAMPLE, top).generate()
    assert "(frames: gpufl stacks SESSION)" in got  # stacks by id
    assert without_frames(got) == without_frames(want)
    assert re.search(r"\n +%d\. " % top, got) and not re.search(r"\n +%d\. " % (top + 1), got)


def test_json_is_the_commands():
    with GpuFlightSession(SAMPLE) as s:
        assert s.report(7, fmt="json") == command_report(SAMPLE, "--top", "7", "--format", "json")


def test_print_save_and_generate_report(tmp_path, capsys):
    with GpuFlightSession(SAMPLE) as s:
        r = TextReport(s, 3)
        r.print()
        assert capsys.readouterr().out == r.generate() == str(r)
        out = tmp_path / "r.txt"
        assert r.save(str(out)) == str(out)
        assert out.read_text() == r.generate()
    copy = str(tmp_path / "sample")
    shutil.copytree(SAMPLE, copy)
    path = generate_report(copy)
    assert path == os.path.join(copy, REPORT_FILE)
    with open(path) as f:
        text = f.read()
    assert text == TextReport(copy, 10).generate() and "\n  10. " in text
    other = str(tmp_path / "elsewhere.txt")
    assert generate_report(copy, top_n=2, output_path=other) == other
    with pytest.raises(ValueError, match="top_n"):
        TextReport(copy, 0)
    with pytest.raises(FileNotFoundError):
        generate_report(str(tmp_path / "nothing"))
