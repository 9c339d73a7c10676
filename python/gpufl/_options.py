"""gpufl.init()'s keywords turned into a gpufl_options the library fills.

The keywords are the library's own option names (gpufl_option_name), and
each value goes to gpufl_options_set as text, parsed by the same code as the
environment and config files. So this module holds no copy of the C
struct's layout, defaults or value spellings, and a new C option is a new
keyword without a change here. What it does hold: the keywords of earlier
gpufl releases, and which options take an enum, so that an int can be given
for them.
"""

import ctypes
import difflib
import enum
import os
import warnings

from . import _lib
from ._types import BackendKind, LogFormat, ProfilingEngine

__all__ = ["NAMES", "DEPRECATED", "build"]


def _names():
    names, i = [], 0
    while True:
        name = _lib.option_name(i)
        if name is None:
            return tuple(names)
        names.append(name.decode())
        i += 1


NAMES = tuple(_names())

# Keywords accepted for programs written against earlier releases:
# keyword -> (option it sets, what to tell the caller).
DEPRECATED = {
    "sampling_auto_start": ("continuous_system_sampling", "use continuous_system_sampling"),
    "remote_upload": ("remote_upload", "the session is uploaded when the interpreter exits; call "
                      "gpufl.upload_logs() after shutdown() instead"),
    "kernel_sample_rate_ms": ("kernel_sample_rate_ms", "it has no effect"),
}

_ENUM_OPTIONS = {"backend": BackendKind, "profiling_engine": ProfilingEngine, "log_format": LogFormat}


def _unknown(keys):
    parts = []
    for key in keys:
        close = difflib.get_close_matches(key, NAMES + tuple(DEPRECATED), n=1)
        parts.append(repr(key) + (" (did you mean %r?)" % close[0] if close else ""))
    return TypeError("gpufl.init() got unexpected keyword argument%s %s" %
                     ("s" if len(parts) > 1 else "", ", ".join(parts)))


def _text(name, value):
    """The text gpufl_options_set parses for `value`, as bytes."""
    if isinstance(value, enum.Enum):
        return value.name.encode()
    if isinstance(value, bool):
        return b"true" if value else b"false"
    if isinstance(value, int):
        kind = _ENUM_OPTIONS.get(name)
        if kind is None:
            return str(value).encode()
        try:
            return kind(value).name.encode()
        except ValueError:
            raise ValueError("gpufl.init(%s=%d): not a %s value (%s)" %
                             (name, value, kind.__name__, ", ".join("%s=%d" % (m.name, m) for m in kind)))
    if isinstance(value, (str, bytes, os.PathLike)):
        text = os.fsencode(value)
        if b"\0" in text:
            raise ValueError("gpufl.init(%s=...): the value contains a NUL character" % name)
        return text
    raise TypeError("gpufl.init(%s=...): expected a str, int, bool or gpufl enum, not %s" %
                    (name, type(value).__name__))


def build(options, stacklevel):
    """(buffer, kept) for gpufl_init from init()'s keywords.

    None leaves an option at its default. Raises TypeError for an unknown
    keyword (all of them named) or a value of the wrong type, ValueError
    with the library's message for a value it does not take. `kept` holds
    the texts the buffer points to: keep it alive until gpufl_init returns.
    Deprecated keywords warn (DeprecationWarning, at `stacklevel`).
    """
    unknown = [k for k in options if k not in NAMES and k not in DEPRECATED]
    if unknown:
        raise _unknown(unknown)
    values = {}
    for key, value in options.items():
        if key in DEPRECATED:
            target, advice = DEPRECATED[key]
            warnings.warn("gpufl.init(%s=...) is deprecated: %s" % (key, advice), DeprecationWarning,
                          stacklevel=stacklevel + 1)
            if target != key and target in options:
                raise TypeError("gpufl.init() got both %s and its deprecated name %s" % (target, key))
            key = target
        if value is not None:
            values[key] = value
    size = _lib.options_size()
    buf = (ctypes.c_uint64 * ((size + 7) // 8))()
    _lib.options_init(buf)
    kept = []
    for key, value in values.items():
        text = _text(key, value)
        kept.append(text)
        if _lib.options_set(buf, key.encode(), text) != 0:
            raise ValueError(_lib.last_error().decode("utf-8", "replace"))
    return buf, kept
