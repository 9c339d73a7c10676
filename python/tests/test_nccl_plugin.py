"""gpufl's NCCL profiler plugin inside a Python program.

Python loads libgpufl privately (ctypes, without RTLD_GLOBAL when it was
not injected), which is how torch programs meet NCCL: the plugin, loaded
by NCCL later, must still find the library by its soname and record each
collective with its bytes; the reader gives them back as the
"nccl_collectives" table.
"""

import ctypes
import os

import pytest

import gpufl
from gpufl import _lib
from conftest import one_session

np = pytest.importorskip("numpy")
from gpufl._trace import Trace  # noqa: E402

COLL, P2P = 1 << 1, 1 << 2


class CollV4(ctypes.Structure):
    _fields_ = [("seq", ctypes.c_uint64), ("func", ctypes.c_char_p), ("send", ctypes.c_void_p),
                ("recv", ctypes.c_void_p), ("count", ctypes.c_size_t), ("root", ctypes.c_int),
                ("datatype", ctypes.c_char_p), ("channels", ctypes.c_uint8), ("warps", ctypes.c_uint8),
                ("algo", ctypes.c_char_p), ("proto", ctypes.c_char_p)]


class DescrV4(ctypes.Structure):
    _fields_ = [("type", ctypes.c_uint8), ("parent", ctypes.c_void_p), ("rank", ctypes.c_int), ("coll", CollV4)]


_res = ctypes.c_int
_Init = ctypes.CFUNCTYPE(_res, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int), ctypes.c_char_p,
                         ctypes.c_uint64, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p)
_Start = ctypes.CFUNCTYPE(_res, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(DescrV4))
_Stop = ctypes.CFUNCTYPE(_res, ctypes.c_void_p)
_State = ctypes.CFUNCTYPE(_res, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)
_Fini = ctypes.CFUNCTYPE(_res, ctypes.c_void_p)


class ProfilerV4(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("init", _Init), ("start", _Start), ("stop", _Stop),
                ("state", _State), ("finalize", _Fini)]


def plugin_path():
    path = os.path.join(os.path.dirname(_lib.path), "libgpufl_nccl.so")
    if not os.path.exists(path):
        pytest.skip("no libgpufl_nccl.so beside %s" % _lib.path)
    return path


def test_plugin_records_bytes_from_python(logs):
    table = ProfilerV4.in_dll(ctypes.CDLL(plugin_path()), "ncclProfiler_v4")
    ctx, mask = ctypes.c_void_p(), ctypes.c_int(-1)
    # no session: NCCL is asked for nothing
    assert table.init(ctypes.byref(ctx), ctypes.byref(mask), b"dp", 0x1234, 1, 2, 0, None) == 0
    assert mask.value == 0 and not ctx.value

    assert gpufl.init(app_name="py-nccl", log_path=logs)
    assert table.init(ctypes.byref(ctx), ctypes.byref(mask), b"dp", 0x1234, 1, 2, 0, None) == 0
    assert mask.value == COLL | P2P
    d = DescrV4(type=COLL, rank=0)
    d.coll = CollV4(seq=0, func=b"AllReduce", count=1000000, root=0, datatype=b"ncclFloat32", channels=2,
                    algo=b"Ring", proto=b"Simple")
    h = ctypes.c_void_p()
    assert table.start(ctx, ctypes.byref(h), ctypes.byref(d)) == 0 and h.value
    assert table.stop(h) == 0
    assert table.finalize(ctx) == 0
    gpufl.shutdown()

    with Trace(one_session(logs)) as t:
        c = t.table("nccl_collectives")
        assert c.n == 1
        assert t.string(c.func[0]) == "AllReduce"
        assert int(c.bytes[0]) == 4000000 and int(c.bytes_known[0]) == 1
        assert int(c.comm_hash[0]) == 0x1234 and int(c.nranks[0]) == 2 and int(c.abi[0]) == 4
        assert c.end_ns[0] >= c.start_ns[0] > 0
