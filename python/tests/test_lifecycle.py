"""init, shutdown, session(), system windows and generate_report."""

import os
import threading
import warnings

import pytest

import gpufl
from conftest import lines, one_session, report_json, run_python_ok, session_dirs, session_json


def test_init_records_a_session(logs):
    assert not gpufl.is_recording()
    assert gpufl.init(app_name="py-life", log_path=logs) is True
    assert gpufl.is_recording()
    d = one_session(logs)
    assert gpufl.session_dir() == d
    assert os.path.basename(d).startswith("py-life-")
    with gpufl.Scope("step"):
        pass
    gpufl.shutdown()
    assert not gpufl.is_recording()
    assert gpufl.session_dir() == d  # the last session's, after shutdown
    meta = session_json(d)
    assert meta["app_name"] == "py-life"
    assert meta["status"] == "ended"
    assert meta["pid"] == os.getpid()
    assert [r["name"] for r in lines(d, "scope", "scope_begin")] == ["step"]


def test_init_twice_keeps_the_first_session(logs, tmp_path):
    other = str(tmp_path / "other")
    assert gpufl.init(app_name="first", log_path=logs)
    assert gpufl.init(app_name="second", log_path=other) is True  # the library's answer: already recording
    assert gpufl.is_recording()
    gpufl.shutdown()
    assert session_json(one_session(logs))["app_name"] == "first"
    assert not os.path.exists(other)


def test_shutdown_twice_and_calls_after_shutdown_are_harmless(logs):
    gpufl.shutdown()  # before any session
    assert gpufl.init(log_path=logs)
    gpufl.shutdown()
    gpufl.shutdown()
    with gpufl.Scope("late"):
        pass

    @gpufl.scope("late_fn")
    def late():
        return 7

    assert late() == 7
    gpufl.system_start("late")
    gpufl.system_stop("late")
    assert not gpufl.is_recording()
    d = one_session(logs)
    assert lines(d, "scope", "scope_begin") == []
    assert lines(d, "system", "system_start") == []
    # the report is of the last session, which still reads back
    assert os.path.isfile(gpufl.generate_report())


def test_init_again_after_shutdown_starts_a_new_session(logs):
    for name in ("one", "two"):
        assert gpufl.init(app_name=name, log_path=logs)
        with gpufl.Scope(name):
            pass
        gpufl.shutdown()
    dirs = session_dirs(logs)
    assert sorted(session_json(d)["app_name"] for d in dirs) == ["one", "two"]
    for d in dirs:
        name = session_json(d)["app_name"]
        assert [r["name"] for r in lines(d, "scope", "scope_begin")] == [name]


def test_session_context_manager(logs):
    with gpufl.session(app_name="ctx", log_path=logs) as d:
        assert gpufl.is_recording()
        assert d == gpufl.session_dir() == one_session(logs)
        with gpufl.Scope("inside"):
            pass
    assert not gpufl.is_recording()
    assert session_json(d)["status"] == "ended"


def test_session_ends_on_exception(logs):
    with pytest.raises(KeyError):
        with gpufl.session(log_path=logs):
            raise KeyError("boom")
    assert not gpufl.is_recording()
    assert session_json(one_session(logs))["status"] == "ended"


def test_session_inside_a_running_session_leaves_it_running(logs):
    assert gpufl.init(app_name="outer", log_path=logs)
    with gpufl.session(app_name="inner") as d:
        assert d == one_session(logs)
    assert gpufl.is_recording()
    gpufl.shutdown()
    assert session_json(one_session(logs))["app_name"] == "outer"


def test_session_that_cannot_start_warns_and_runs_the_block(logs, monkeypatch):
    monkeypatch.setenv("GPUFL_RING_EVENTS", "many")
    ran = False
    with pytest.warns(RuntimeWarning, match="GPUFL_RING_EVENTS"):
        with gpufl.session(log_path=logs) as d:
            ran = True
            assert d is None
    assert ran
    assert not os.path.exists(logs)


def test_bad_environment_makes_init_return_false(logs, monkeypatch):
    monkeypatch.setenv("GPUFL_SYSTEM_SAMPLE_RATE_MS", "often")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gpufl.init(log_path=logs) is False
    assert "GPUFL_SYSTEM_SAMPLE_RATE_MS" in gpufl.last_error()
    assert not gpufl.is_recording()
    with gpufl.Scope("unrecorded"):  # harmless
        pass


def test_system_windows_sample_host_metrics(logs):
    assert gpufl.init(log_path=logs, system_sample_rate_ms=10)
    threading.Event().wait(0.1)  # no window, no scope: no samples
    gpufl.system_start("checkpoint")
    threading.Event().wait(0.2)
    gpufl.system_stop("checkpoint")
    gpufl.system_start()  # the default name
    gpufl.system_stop()
    gpufl.shutdown()
    d = one_session(logs)
    starts = lines(d, "system", "system_start")
    stops = lines(d, "system", "system_stop")
    assert [r["name"] for r in starts] == ["checkpoint", "system"]
    assert [r["name"] for r in stops] == ["checkpoint", "system"]
    samples = [r["ts_ns"] for r in lines(d, "system", "host_metrics")]
    assert len(samples) >= 5
    assert all(starts[0]["ts_ns"] - 20_000_000 <= t <= stops[1]["ts_ns"] + 20_000_000 for t in samples)


def test_continuous_sampling_records_without_scopes(logs):
    assert gpufl.init(log_path=logs, system_sample_rate_ms=10, continuous_system_sampling=True)
    # 100 samples' time for 5: a loaded CI machine (two test builds side by
    # side) once gave 3 in 0.2 s
    threading.Event().wait(1.0)
    gpufl.shutdown()
    d = one_session(logs)
    assert len(lines(d, "system", "host_metrics")) >= 5
    assert session_json(d)["options"]["continuous_system_sampling"] is True


def test_generate_report(logs, tmp_path):
    assert gpufl.init(app_name="rep", log_path=logs)
    with gpufl.Scope("phase"):
        pass
    running = gpufl.generate_report()  # while recording
    gpufl.shutdown()
    d = one_session(logs)
    assert running == os.path.join(d, "summary.txt")
    out = tmp_path / "report.txt"
    assert gpufl.generate_report(out) == str(out)  # a PathLike; the last session
    text = out.read_text()
    assert os.path.basename(d) in text
    assert "phase" in text


def test_generate_report_failures_raise_gpufl_error(logs, tmp_path):
    r = run_python_ok("""
        import gpufl
        try:
            gpufl.generate_report()
        except gpufl.GpuflError as e:
            print(e.code, e)
    """)
    assert r.stdout.startswith("-4 ") and "no session" in r.stdout  # GPUFL_ESTATE
    assert gpufl.init(log_path=logs)
    bad = str(tmp_path / "missing-dir" / "r.txt")
    with pytest.raises(gpufl.GpuflError) as e:
        gpufl.generate_report(bad)
    assert e.value.code == -3  # GPUFL_EIO
    assert bad in str(e.value)


def test_report_json_of_the_cli_sees_the_scopes(logs):
    with gpufl.session(log_path=logs) as d:
        for _ in range(3):
            with gpufl.Scope("epoch"):
                with gpufl.Scope("step"):
                    pass
    rep = report_json(d)
    nodes = {n["path"]: n for n in rep["scopes"]["scopes"]["nodes"]}
    assert nodes["epoch"]["count"] == 3
    assert nodes["epoch/step"]["count"] == 3
    assert rep["summary"]["dropped_total"] == 0


def test_lifecycle_from_many_threads(logs):
    """init, scopes and shutdown racing on 8 threads: no error, no crash,
    and whatever session ran ended cleanly."""
    errors = []

    def worker(i):
        try:
            for j in range(10):
                gpufl.init(log_path=logs, app_name="race")
                with gpufl.Scope("t%d" % i):
                    gpufl.system_start()
                    gpufl.system_stop()
                if j % 5 == i % 5:
                    gpufl.shutdown()
        except Exception as e:  # reported below, with the thread
            errors.append((i, e))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    gpufl.shutdown()
    assert errors == []
    dirs = session_dirs(logs)
    assert dirs
    assert all(session_json(d)["status"] == "ended" for d in dirs)


def test_dump_writes_the_flight_window(logs):
    assert gpufl.dump("nothing") is False  # no session
    assert gpufl.init(app_name="py-dump", log_path=logs, flight_window_s=60, dump_min_interval_s=60)
    for _ in range(100):
        with gpufl.Scope("step"):
            pass
    assert gpufl.dump("from python") is True
    assert gpufl.dump("too soon") is False
    assert "dump_min_interval_s" in gpufl.last_error()
    d = gpufl.session_dir()
    gpufl.shutdown()
    dumps = os.listdir(os.path.join(d, "dumps"))
    assert dumps == ["0001-dump"]
    meta = session_json(os.path.join(d, "dumps", "0001-dump"))
    assert meta["status"] == "dump"
    assert meta["dump"]["trigger"] == "dump" and meta["dump"]["detail"] == "from python"
    # the window as a session: the CLI's report reads it
    assert report_json(os.path.join(d, "dumps", "0001-dump"))["scopes"]
