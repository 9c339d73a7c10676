"""The flight recorder's tables in Python: triggers, trace windows and the
failed allocation of tests/flight_fixture.h (the session the C tests read,
taken from that header so the two never drift), as NDJSON and converted to
.gflt by the CLI. The frames must agree with the JSON report; a failed
allocation must hold no memory in ``memory.live_bytes``."""

import os
import re
import subprocess

import numpy as np
import pytest

from conftest import cli, report_json
from gpufl import analyzer

HEADER = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "flight_fixture.h")
_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _c_strings(text):
    """The concatenation of the C string literals in text."""
    return "".join(bytes(m, "ascii").decode("unicode_escape") for m in _LITERAL.findall(text))


def _fixture_logs():
    """{channel: log text} of the fixture, its FF_START / FF_END macros expanded."""
    with open(HEADER) as f:
        src = f.read()
    macros = {}
    for name in ("FF_START", "FF_END"):
        body = re.search(r"#define %s((?:.*\\\n)*.*\n)" % name, src).group(1)
        macros[name] = _c_strings(body)
    logs = {}
    for channel in ("device", "scope", "system"):
        body = re.search(r"static const char ff_%s\[\] =(.*?);\n" % channel, src, re.S).group(1)
        parts = re.split(r"\b(FF_START|FF_END)\b", body)
        logs[channel] = "".join(macros[p] if p in macros else _c_strings(p) for p in parts)
    return logs


@pytest.fixture(params=["ndjson", "gflt"])
def flight(request, tmp_path):
    d = tmp_path / "flight"
    d.mkdir()
    for channel, text in _fixture_logs().items():
        (d / (channel + ".log")).write_text(text)
    if request.param == "ndjson":
        return str(d)
    out = str(tmp_path / "flight.gflt")
    subprocess.run([cli(), "convert", str(d), out], check=True, stdout=subprocess.DEVNULL)
    return out


def test_triggers(flight):
    with analyzer.GpuFlightSession(flight) as s:
        g = s.triggers
    assert list(g["ts_ns"]) == [6_000_000, 8_000_000]
    assert list(g["kind"]) == ["oom", "dump"]
    assert list(g["outcome"]) == ["dumped", "storm"]
    assert g["dump"][0] == "dump-0001" and g["dump"].isna()[1]
    assert list(g["tid"]) == [7, 0]


def test_trace_windows(flight):
    with analyzer.GpuFlightSession(flight) as s:
        w = s.trace_windows
    assert list(w["index"]) == [1, 2]
    assert list(w["begin_ns"]) == [2_000_000, 7_000_000]
    assert list(w["end_ns"]) == [4_000_000, 11_000_000]  # the second never closed: the session's end
    assert list(w["dur_ns"]) == [2_000_000, 4_000_000]
    assert list(w["reason"]) == ["steps", "trigger"]
    assert w["detail"][0] == "steps 100-101 of `step`" and w["detail"].isna()[1]
    assert list(w["unended"]) == [False, True]


def test_failed_allocation_holds_nothing(flight):
    with analyzer.GpuFlightSession(flight) as s:
        m = s.memory
        t = s.trace.table("memory")
    assert t.failed.dtype == np.uint8 and int(t.failed.sum()) == 1
    failed = m[m["failed"]]
    assert len(failed) == 1 and failed["bytes"].iloc[0] == 4 << 30 and failed["ts_ns"].iloc[0] == 6_000_000
    # 8 MiB + 1 MiB - 1 MiB + 2 MiB: the 4 GiB that failed is not added
    assert m["live_bytes"].iloc[-1] == 10 << 20
    assert m["live_bytes"].max() == 10 << 20


def test_agrees_with_the_json_report(flight):
    doc = report_json(flight)
    with analyzer.GpuFlightSession(flight) as s:
        g, w, m = s.triggers, s.trace_windows, s.memory
    assert [t["ts_ns"] for t in doc["triggers"]] == list(g["ts_ns"])
    assert [t["outcome"] for t in doc["triggers"]] == list(g["outcome"])
    assert [x["begin_ns"] for x in doc["trace_windows"]] == list(w["begin_ns"])
    assert [x["end_ns"] for x in doc["trace_windows"]] == list(w["end_ns"])
    allocs = (m["event"] == "alloc") & ~m["failed"]
    assert doc["summary"]["allocations"] == int(allocs.sum())
    assert doc["summary"]["failed_allocations"] == int(m["failed"].sum())
    assert doc["incident"]["failed_allocation"]["bytes"] == int(m.loc[m["failed"], "bytes"].iloc[0])
    assert doc["incident"]["live_bytes"] == int(m.loc[m["ts_ns"] < 6_000_000, "live_bytes"].iloc[-1])
