"""init()'s keywords: the library's options, their values, the deprecated
names, and the errors for what the library does not take."""

import inspect
import os
import re

import pytest

import gpufl
from conftest import SOURCE_DIR, lines, one_session, session_dirs, session_json

HEADER = os.path.join(SOURCE_DIR, "include", "gpufl", "gpufl.h")


def header():
    if not os.path.isfile(HEADER):
        pytest.skip("no source tree beside the tests (%s)" % HEADER)
    with open(HEADER) as f:
        return f.read()


def test_keywords_are_the_fields_of_gpufl_options():
    body = re.search(r"typedef struct gpufl_options \{(.*?)\} gpufl_options;", header(), re.S).group(1)
    fields = re.findall(r"^\s+[\w ]+?\*?\s*(\w+);", body, re.M)
    assert fields[0] == "struct_size"
    assert list(gpufl.option_names()) == fields[1:]
    params = inspect.signature(gpufl.init).parameters
    assert set(fields[1:] + ["sampling_auto_start"]) == set(params)
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is None for p in params.values())


@pytest.mark.parametrize("enum_type, prefix", [(gpufl.BackendKind, "GPUFL_BACKEND_"),
                                               (gpufl.ProfilingEngine, "GPUFL_ENGINE_"),
                                               (gpufl.LogFormat, "GPUFL_LOG_")])
def test_enums_mirror_the_header(enum_type, prefix):
    values = {m.group(1): int(m.group(2))
              for m in re.finditer(r"\b%s(\w+) = (\d+)" % prefix, header())}
    snake = {re.sub(r"(?<!^)(?=[A-Z])", "_", m.name.rstrip("_")).upper(): int(m) for m in enum_type}
    assert snake == values


def test_values_reach_the_session(logs):
    assert gpufl.init(app_name="opts", log_path=logs, system_sample_rate_ms=25, ring_events=1024,
                      log_rotate_bytes="1MiB", session_max_bytes=2 << 30, enable_memory_tracking=True,
                      enable_synchronization=False, backend=gpufl.BackendKind.None_,
                      profiling_engine="monitor", log_format=gpufl.LogFormat.Both, api_key="secret",
                      enable_debug_output=None)
    gpufl.shutdown()
    d = one_session(logs)
    meta = session_json(d)
    o = meta["options"]
    assert meta["app_name"] == "opts" and o["log_path"] == logs
    assert (o["system_sample_rate_ms"], o["ring_events"]) == (25, 1024)
    assert (o["log_rotate_bytes"], o["session_max_bytes"]) == (1 << 20, 2 << 30)
    assert o["enable_memory_tracking"] is True and o["enable_synchronization"] is False
    assert (o["backend"], o["profiling_engine"], o["log_format"]) == ("none", "monitor", "both")
    assert o["api_key_set"] is True and o["enable_debug_output"] is False
    assert os.path.isfile(os.path.join(d, "trace.gflt"))


@pytest.mark.parametrize("engine", list(gpufl.ProfilingEngine))
def test_every_engine_by_member_name_and_int(logs, engine):
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", engine.name).lower()
    for i, value in enumerate((engine, engine.name, snake, int(engine))):
        log_path = os.path.join(logs, str(i))
        assert gpufl.init(log_path=log_path, backend="none", profiling_engine=value)
        gpufl.shutdown()
        assert session_json(one_session(log_path))["options"]["profiling_engine"] == snake


@pytest.mark.parametrize("backend", list(gpufl.BackendKind))
def test_every_backend(logs, backend):
    assert gpufl.init(log_path=logs, backend=backend)
    gpufl.shutdown()
    assert session_json(one_session(logs))["options"]["backend"] == backend.name.rstrip("_").lower()


def test_keywords_win_over_the_environment(logs, monkeypatch):
    monkeypatch.setenv("GPUFL_APP_NAME", "from-env")
    monkeypatch.setenv("GPUFL_RING_EVENTS", "2048")
    assert gpufl.init(app_name="from-code", log_path=logs)
    gpufl.shutdown()
    meta = session_json(one_session(logs))
    assert meta["app_name"] == "from-code"
    assert meta["options"]["ring_events"] == 2048  # not given here: the variable's


def test_unknown_keywords_raise_type_error_naming_them(logs):
    with pytest.raises(TypeError, match=r"'sample_rate_ms'.*'colour'") as e:
        gpufl.init(log_path=logs, sample_rate_ms=10, colour="red")
    assert "did you mean 'system_sample_rate_ms'" in str(e.value)
    assert not gpufl.is_recording() and not os.path.exists(logs)
    with pytest.raises(TypeError, match="'struct_size'"):
        gpufl.init(struct_size=8)


@pytest.mark.parametrize("kwargs, message", [
    ({"ring_events": 8}, "ring_events = '8' is 8, outside 16..16777216"),
    ({"profiling_engine": "fast"}, "profiling_engine = 'fast' is not an engine"),
    ({"backend": "gpu"}, "is not a backend"),
    ({"backend": 9}, "not a BackendKind value"),
    ({"log_rotate_bytes": "lots"}, "is not a size"),
    ({"enabled": "maybe"}, "is not a boolean"),
    ({"system_sample_rate_ms": -1}, "is not a non-negative integer"),
    ({"app_name": "a\0b"}, "NUL"),
    ({"backend": gpufl.ProfilingEngine.Trace}, "is not a backend"),
])
def test_bad_values_raise_value_error(logs, kwargs, message):
    with pytest.raises(ValueError) as e:
        gpufl.init(log_path=logs, **kwargs)
    assert message in str(e.value)
    assert not gpufl.is_recording() and not os.path.exists(logs)


def test_values_of_the_wrong_type_raise_type_error(logs):
    for kwargs in ({"system_sample_rate_ms": 1.5}, {"app_name": ["x"]}):
        with pytest.raises(TypeError, match=list(kwargs)[0]):
            gpufl.init(log_path=logs, **kwargs)


def test_sampling_auto_start_is_continuous_system_sampling(logs):
    with pytest.warns(DeprecationWarning, match="sampling_auto_start.*continuous_system_sampling"):
        assert gpufl.init(log_path=logs, sampling_auto_start=True, system_sample_rate_ms=10)
    with gpufl.Scope("only-to-have-one"):
        pass
    gpufl.shutdown()
    assert session_json(one_session(logs))["options"]["continuous_system_sampling"] is True
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="both"):
        gpufl.init(sampling_auto_start=True, continuous_system_sampling=True)


@pytest.mark.parametrize("kwargs, field, value, says",
                         [({"remote_upload": True}, "remote_upload", True, "uploaded when the interpreter exits"),
                          ({"kernel_sample_rate_ms": 5}, "kernel_sample_rate_ms", 5, "no effect")])
def test_deprecated_keywords_warn_and_pass_through(logs, kwargs, field, value, says):
    with pytest.warns(DeprecationWarning, match="%s.*%s" % (field, says)) as w:
        assert gpufl.init(log_path=logs, **kwargs)
    assert w[0].filename == __file__  # points at the caller
    gpufl.shutdown()
    with pytest.warns(DeprecationWarning) as w:
        with gpufl.session(log_path=os.path.join(logs, "ctx"), **kwargs):
            pass
    assert w[0].filename == __file__  # also through session()
    d = [d for d in session_dirs(logs) if not d.endswith("ctx")][0]
    assert session_json(d)["options"][field] == value
    assert any(field in r["message"] for r in lines(d, "system", "log"))  # the library's own warning


def test_config_file_and_paths(logs, tmp_path):
    cfg = tmp_path / "gpufl.json"
    cfg.write_text('{"app_name": "from-file", "ring_events": 4096}')
    assert gpufl.init(log_path=tmp_path / "logs", config_file=cfg)  # PathLike values
    gpufl.shutdown()
    meta = session_json(one_session(logs))
    assert meta["app_name"] == "from-file" and meta["options"]["ring_events"] == 4096
