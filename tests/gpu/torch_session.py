"""What the PyTorch GPU tests share: whether they can run, and reading a
gpufl session's NDJSON channel back, rotated parts first."""
import glob
import json
import os


def skip_reason():
    """Why a PyTorch GPU test cannot run here, or None."""
    try:
        import torch
    except ImportError as e:
        return f"torch is not importable ({e})"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    return None


def lines(session, channel):
    """The complete lines of a channel (<channel>.N.log parts, oldest first,
    then <channel>.log) as JSON objects; a torn last line is not a record."""
    parts = glob.glob(os.path.join(session, f"{channel}.*.log"))
    parts.sort(key=lambda p: int(p.rsplit(".", 2)[-2]))
    for p in parts + [os.path.join(session, f"{channel}.log")]:
        with open(p, encoding="utf-8") as f:
            for line in f:
                if line.endswith("\n"):
                    yield json.loads(line)
