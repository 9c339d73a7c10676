"""Device identity and state from NVML, the way gpufl reads it: through
`gpufl devices --json` (src/session/live.c behind the command), because
libgpufl has no public call for live readings and gpufl.memory must answer
on machines without PyTorch.

The command is looked for as $GPUFL_CLI, then beside the loaded libgpufl
(a build directory), then in ../bin from it (an install), then on PATH.
Called only by get_gpu_info() and get_system_info(): a subprocess per call
(about a tenth of a second), never from a sampling loop.
"""

import json
import os
import shutil
import subprocess

from .. import _lib

__all__ = ["command", "devices"]


def command():
    """The path of the gpufl command, or None."""
    here = os.path.dirname(_lib.path) if os.path.isabs(_lib.path) else ""
    for cand in (os.environ.get("GPUFL_CLI"), here and os.path.join(here, "gpufl"),
                 here and os.path.join(here, os.pardir, "bin", "gpufl")):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return shutil.which("gpufl")


def devices(timeout_s=10.0):
    """`gpufl devices --json`'s devices (each the fields of a session's
    device_info line plus its device_metrics as "state"), [] when there is
    no NVIDIA driver, None when the command cannot be found or run."""
    cmd = command()
    if cmd is None:
        return None
    try:
        out = subprocess.run([cmd, "devices", "--json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             timeout=timeout_s).stdout
        doc = json.loads(out.decode("utf-8", "replace"))
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    return doc.get("devices") or [] if isinstance(doc, dict) else None
