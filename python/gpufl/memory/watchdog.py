"""MemoryWatchdog: the reference's automatic cleanup (gpumemprof.tracker):
an alert callback of a MemoryTracker that empties PyTorch's cache on a
critical alert (aggressive: also gc.collect and synchronize) or a usage
warning at cleanup_threshold or above, at most once every
min_cleanup_interval seconds, and says so with a 'cleanup' event.
aggressive_cleanup_threshold is kept and reported but, as in the
reference, decides nothing."""

import gc
import time

__all__ = ["MemoryWatchdog"]


class MemoryWatchdog:
    def __init__(self, tracker, auto_cleanup=True, cleanup_threshold=0.9, aggressive_cleanup_threshold=0.95):
        self.tracker = tracker
        self.auto_cleanup = auto_cleanup
        self.cleanup_threshold = cleanup_threshold
        self.aggressive_cleanup_threshold = aggressive_cleanup_threshold
        self.cleanup_count = 0
        self.last_cleanup_time = 0.0
        self.min_cleanup_interval = 30.0
        tracker.add_alert_callback(self._handle_alert)

    def _handle_alert(self, event):
        if not self.auto_cleanup:
            return
        now = time.time()
        if now - self.last_cleanup_time < self.min_cleanup_interval:
            return
        usage = (event.metadata or {}).get("usage_percent", 0)
        if event.event_type == "critical" or (event.event_type == "warning" and usage >= self.cleanup_threshold * 100):
            self._perform_cleanup(aggressive=event.event_type == "critical")
            self.last_cleanup_time = now

    def _empty_cache(self, torch):
        if self.tracker.backend == "mps":
            torch.mps.empty_cache()
        else:
            torch.cuda.empty_cache()

    def _perform_cleanup(self, aggressive=False):
        self.cleanup_count += 1
        torch = self.tracker.collector._torch
        try:
            self._empty_cache(torch)
            if aggressive:
                gc.collect()
                if self.tracker.backend != "mps":
                    torch.cuda.synchronize()
                self._empty_cache(torch)
            self.tracker._add_event("cleanup", 0, "Performed %s memory cleanup" %
                                    ("aggressive" if aggressive else "standard"))
        except Exception as e:
            self.tracker._add_event("error", 0, "Cleanup failed: %s" % e)

    def force_cleanup(self, aggressive=False):
        self._perform_cleanup(aggressive)

    def get_cleanup_stats(self):
        return {"cleanup_count": self.cleanup_count, "last_cleanup_time": self.last_cleanup_time,
                "auto_cleanup_enabled": self.auto_cleanup, "cleanup_threshold": self.cleanup_threshold,
                "aggressive_cleanup_threshold": self.aggressive_cleanup_threshold}
