"""MemoryAnalyzer: leaks as gpufl's C analysis finds them in a recorded
session, and the reference's pattern detectors over profiler results
(gpumemprof.analyzer).

detect_memory_leaks(session, scope) is gpufl's, not the reference's (which
has no leak-result API on its PyTorch side): `gpufl mem analyze --format
json` (the CLI beside the loaded libgpufl; else the session's JSON report,
gpufl_trace_report, whose stacks are ids without frames) holds ``leaks``:
``rows``, one per repeated scope or NVTX range per device and layer, with
``scope``, ``kind``, ``device``, ``layer``, ``repetitions``, ``warmup``,
``detected``, ``severity`` (none, low, medium, high, critical),
``memory_increase_mb``, ``time_window_seconds``, ``suggestions``,
``slope_bytes_per_step``, ``r_squared``, ``p_value`` and ``grew`` (the
allocations made after the warm-up and still live: ``count``, ``bytes`` and
``stacks``, each with its ``frames`` as text). The rows are handed back as
the analysis has them.

analyze_memory_patterns(results) runs the reference's five detectors
(memory_leak, fragmentation, inefficient_allocation, memory_spikes,
repeated_allocations) with its thresholds, in pure Python: the reference
needs numpy and scipy for a quartile and a mean; here the quartiles use
numpy's default (linear) interpolation, computed by hand.
"""

import collections
import dataclasses
import json
import os
import statistics
import subprocess
import warnings
from typing import Any, Dict, List

from .. import _session

__all__ = ["MemoryAnalyzer", "MemoryPattern", "leaks_of_report"]

MiB = 1024 * 1024


@dataclasses.dataclass
class MemoryPattern:
    pattern_type: str
    description: str
    severity: str  # info, warning, critical
    affected_functions: List[str]
    metrics: Dict[str, Any]
    suggestions: List[str]


def _quantile(values, q):
    """numpy.quantile(values, q) with its default linear interpolation."""
    s = sorted(values)
    pos = (len(s) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def leaks_of_report(doc, scope=None):
    """The ``leaks`` of a JSON report (a dict), of one scope when given;
    None when the report has no leak analysis (an older libgpufl)."""
    leaks = doc.get("leaks")
    if leaks is None:
        return None
    rows = leaks.get("rows", []) if isinstance(leaks, dict) else leaks
    return [dict(x) for x in rows if scope is None or x.get("scope") == scope]


def _analysis_json(session):
    """`gpufl mem analyze --format json` of a session path (its leak stacks
    have their frames), or None when the command cannot be run."""
    from . import _nvml

    cmd = _nvml.command()
    if cmd is None or not isinstance(session, (str, bytes, os.PathLike)):
        return None
    try:
        p = subprocess.run([cmd, "mem", "analyze", os.fsdecode(session), "--format", "json"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    except (OSError, subprocess.SubprocessError):
        return None
    if p.returncode not in (0, 1):  # 1: a leak was found
        return None
    try:
        return json.loads(p.stdout.decode("utf-8", "replace"))
    except ValueError:
        return None


def _report_json(session):
    """The JSON report of session: a path (session directory, .gflt or
    .log), a gpufl.analyzer.GpuFlightSession or a gpufl._trace.Trace."""
    report = getattr(session, "report", None)
    if callable(report) and hasattr(session, "trace"):  # a GpuFlightSession
        return json.loads(session.report(fmt="json"))
    if callable(report):  # a Trace
        return json.loads(session.report("json"))
    from .._trace import Trace

    with Trace(session) as t:
        return json.loads(t.report("json"))


class MemoryAnalyzer:
    """Analyses of memory: a session's leaks (gpufl's) and patterns in a
    profiler's results (the reference's). profiler: the GPUMemoryProfiler
    whose results analyze_memory_patterns() reads when given none."""

    def __init__(self, profiler=None):
        self.profiler = profiler
        self.thresholds = {
            "memory_leak_ratio": 0.1, "fragmentation_ratio": 0.3, "inefficient_allocation_ratio": 0.5,
            "slow_function_percentile": 0.9, "high_memory_percentile": 0.9, "min_calls_for_analysis": 3,
            "gap_ratio_threshold": 0.05, "gap_spike_zscore": 2.0, "gap_drift_r_squared": 0.6,
            "gap_fragmentation_ratio": 0.3,
        }

    # ---- leaks, by gpufl's analysis of a session ----

    def detect_memory_leaks(self, session=None, scope=None):
        """The leak results of a recorded session's report (see the module
        docstring): session is a path, a GpuFlightSession or a Trace; None
        is the current or last session of this process (gpufl.session_dir();
        a session still recording is read up to what it has written).
        scope keeps one scope's entries. [] with a RuntimeWarning when the
        loaded libgpufl's report has no leak analysis yet; FileNotFoundError
        when there is no session."""
        if session is None:
            session = _session.session_dir()
            if not session or not os.path.exists(session):
                raise FileNotFoundError(2, "no gpufl session in this process to analyze; pass one", session or "")
        doc = _analysis_json(session) or _report_json(session)
        leaks = leaks_of_report(doc, scope)
        if leaks is None:
            warnings.warn("gpufl: this libgpufl's report has no leak analysis (no \"leaks\" in its JSON); "
                          "rebuild a newer one", RuntimeWarning, stacklevel=2)
            return []
        return leaks

    # ---- the reference's pattern detectors ----

    def analyze_memory_patterns(self, results=None):
        """[MemoryPattern] of the reference's detectors over results (the
        profiler's when None): memory_leak, fragmentation,
        inefficient_allocation, memory_spikes, repeated_allocations."""
        if results is None and self.profiler is not None:
            results = self.profiler.results
        if not results:
            return []
        out = []
        for detect in (self._leaks, self._fragmentation, self._inefficient, self._spikes, self._repeated):
            out.extend(detect(results))
        return out

    def _leaks(self, results):
        growth = collections.defaultdict(list)
        for r in results:
            growth[r.function_name].append(r.memory_diff())
        out = []
        for name, changes in growth.items():
            if len(changes) < self.thresholds["min_calls_for_analysis"]:
                continue
            total = sum(changes)
            avg = total / len(changes)
            positive = sum(1 for c in changes if c > 0) / len(changes)
            if avg > 0 and positive > self.thresholds["memory_leak_ratio"] and total > 100 * MiB:
                out.append(MemoryPattern(
                    "memory_leak", "Function '%s' shows potential memory leak pattern" % name,
                    "critical" if total > 1024 ** 3 else "warning", [name],
                    {"total_memory_growth": total, "average_growth_per_call": avg,
                     "positive_growth_ratio": positive, "call_count": len(changes)},
                    ["Review memory management in '%s'" % name, "Check for uncleaned tensors or variables",
                     "Use torch.cuda.empty_cache() if appropriate",
                     "Consider using context managers for tensor lifecycle"]))
        return out

    def _fragmentation(self, results):
        ratios, high = [], []
        for r in results:
            reserved = r.memory_after.reserved_memory
            if reserved > 0:
                ratio = (reserved - r.memory_after.allocated_memory) / reserved
                ratios.append(ratio)
                if ratio > self.thresholds["fragmentation_ratio"]:
                    high.append(r.function_name)
        if not ratios or statistics.mean(ratios) <= self.thresholds["fragmentation_ratio"]:
            return []
        avg = statistics.mean(ratios)
        names = sorted(set(high))
        return [MemoryPattern(
            "fragmentation", "High memory fragmentation detected across operations",
            "critical" if avg > 0.5 else "warning", names,
            {"average_fragmentation": avg, "max_fragmentation": max(ratios),
             "high_fragmentation_functions": len(names)},
            ["Call torch.cuda.empty_cache() periodically", "Restructure code to reduce allocation/deallocation cycles",
             "Consider pre-allocating tensors when possible", "Use tensor.detach() to break computation graphs early"])]

    def _inefficient(self, results):
        ratios = collections.defaultdict(list)
        for r in results:
            peak_use = r.peak_memory_usage() - r.memory_before.allocated_memory
            if r.memory_allocated > 0 and peak_use > 0:
                ratio = peak_use / r.memory_allocated
                if ratio < self.thresholds["inefficient_allocation_ratio"]:
                    ratios[r.function_name].append(ratio)
        names = [n for n, rs in ratios.items() if len(rs) >= self.thresholds["min_calls_for_analysis"] and
                 statistics.mean(rs) < self.thresholds["inefficient_allocation_ratio"]]
        if not names:
            return []
        return [MemoryPattern(
            "inefficient_allocation", "Functions with inefficient memory allocation patterns detected", "warning",
            names, {"inefficient_function_count": len(names),
                    "average_efficiency": statistics.mean(statistics.mean(ratios[n]) for n in names)},
            ["Review allocation patterns in inefficient functions", "Consider using in-place operations where possible",
             "Pre-allocate tensors to avoid repeated allocations",
             "Use tensor views instead of copies when appropriate"])]

    def _spikes(self, results):
        allocs = [r.memory_allocated for r in results if r.memory_allocated > 0]
        if len(allocs) < 3:
            return []
        q75, q25 = _quantile(allocs, 0.75), _quantile(allocs, 0.25)
        threshold = q75 + 1.5 * (q75 - q25)
        spikes = [r.function_name for r in results if r.memory_allocated > threshold]
        if not spikes:
            return []
        return [MemoryPattern(
            "memory_spikes", "Detected %d memory allocation spikes" % len(spikes),
            "warning" if len(spikes) < 5 else "critical", sorted(set(spikes)),
            {"spike_count": len(spikes), "spike_threshold": threshold, "max_allocation": max(allocs),
             "median_allocation": statistics.median(allocs)},
            ["Investigate functions causing memory spikes", "Consider batch processing to reduce peak memory",
             "Use gradient checkpointing for large models", "Implement memory monitoring in spike-prone functions"])]

    def _repeated(self, results):
        calls, total = collections.Counter(), collections.Counter()
        for r in results:
            calls[r.function_name] += 1
            total[r.function_name] += r.memory_allocated
        many = [n for n in calls if calls[n] >= 10 and total[n] / calls[n] < 50 * MiB]
        if not many:
            return []
        many.sort(key=lambda n: total[n], reverse=True)
        top = many[:5]
        return [MemoryPattern(
            "repeated_allocations", "Functions with frequent small allocations detected", "info", top,
            {"function_count": len(many), "total_impact_functions": top,
             "total_memory_from_repeated": sum(total[n] for n in many)},
            ["Consider pre-allocating memory for frequently called functions",
             "Use tensor pools or memory buffers for repeated allocations",
             "Batch operations to reduce allocation overhead", "Cache tensors between function calls when possible"])]
