"""The reference's one exception class (gpumemprof.tui.monitor).

Everything else in gpufl.memory raises builtins as the reference does:
RuntimeError when no GPU backend is there, ValueError for a bad device,
threshold, unit or export format, ImportError when PyTorch is missing.
"""

__all__ = ["TrackerUnavailableError"]


class TrackerUnavailableError(RuntimeError):
    """A memory tracker cannot run here (no PyTorch, no GPU backend).

    The reference raises it from its terminal UI only; gpufl.memory offers
    it for programs that catch it, and raises it from nowhere itself."""
