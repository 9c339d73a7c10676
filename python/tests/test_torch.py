"""gpufl.torch: op ranges, module ranges and the hand-over to torch.profiler,
against a stand-in for PyTorch (tests/fake_torch) that records what it is
asked; and gpufl run's start-up hook, which attaches it in Python programs
run under `gpufl run`. The GPU test (tests/gpu/test_torch_ops.py) checks the
attribution itself against torch.profiler on a real training loop."""

import os
import subprocess
import sys
import textwrap

import pytest

FAKE_TORCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_torch")


def run_child(code, env_extra=None, fake=True, argv=None):
    env = dict(os.environ)
    if fake:
        env["PYTHONPATH"] = FAKE_TORCH + os.pathsep + env.get("PYTHONPATH", "")
    env.update(env_extra or {})
    cmd = argv or [sys.executable, "-c", textwrap.dedent(code)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, "child failed (%d):\n%s\n%s" % (p.returncode, p.stdout, p.stderr)
    return p.stdout


def test_without_torch_attach_says_so():
    out = run_child("""
        import sys
        sys.modules["torch"] = None  # import torch raises ImportError
        import gpufl.torch
        print(gpufl.torch.attach(), gpufl.torch.attached())
    """, fake=False)
    assert out.split() == ["False", "False"]


def test_ops_and_module_ranges():
    out = run_child("""
        import torch, gpufl.torch
        M = torch.nn.Module
        net = M(encoder=M(layer0=M(), layer1=M()), head=M())
        assert gpufl.torch.attach() and gpufl.torch.attach()  # twice: one attachment
        net(1)
        net(2)
        gpufl.torch.detach()
        net(3)  # detached: nothing
        print("\\n".join(torch.calls))
    """)
    lines = out.splitlines()
    one_pass = ["push nn.Module: Module", "push nn.Module: Module.encoder",
                "push nn.Module: Module.encoder.layer0", "pop", "push nn.Module: Module.encoder.layer1",
                "pop", "pop", "push nn.Module: Module.head", "pop", "pop"]
    assert lines == ["ops on"] + one_pass + one_pass + ["ops off"]


def test_a_forward_that_raises_pops_its_ranges():
    out = run_child("""
        import torch, gpufl.torch
        M = torch.nn.Module
        class Bad(M):
            def forward(self, x):
                raise ValueError("bad batch")
        net = M(block=M(bad=Bad()))
        gpufl.torch.attach()
        try:
            net(1)
        except ValueError:
            pass
        net2 = M()
        net2(1)
        print("\\n".join(c for c in torch.calls if c.startswith(("push", "pop"))))
    """)
    lines = out.splitlines()
    assert lines.count("pop") == sum(1 for l in lines if l.startswith("push"))
    assert lines[-2:] == ["push nn.Module: Module", "pop"]


def test_torch_profiler_gets_cupti_and_gives_it_back():
    out = run_child("""
        import torch, gpufl.torch, gpufl
        seen = []
        import gpufl._session as s
        s.trace_pause = lambda: seen.append("pause") or True
        s.trace_resume = lambda: seen.append("resume") or True
        gpufl.torch.attach()
        with torch.profiler.profile():  # would raise "already enabled" if the op ranges stayed on
            pass
        p = torch.profiler.profiler._KinetoProfile()
        p.start()
        p.stop()
        with torch.autograd.profiler.profile():
            pass
        gpufl.torch.detach()
        p.start(); p.stop()  # detached: the original methods, no hand-over
        print(" ".join(seen))
        print("|".join(torch.calls))
    """)
    seen, calls = out.splitlines()
    assert seen == "pause resume pause resume pause resume"
    assert calls == ("ops on|ops off|profiler on|profiler off|ops on|ops off|profiler on|profiler off|ops on|"
                     "ops off|legacy profiler on|legacy profiler off|ops on|ops off|profiler on|profiler off")


def test_a_pause_the_program_made_is_left_to_it():
    out = run_child("""
        import torch, gpufl.torch
        seen = []
        import gpufl._session as s
        s.trace_pause = lambda: seen.append("pause refused") or False  # already paused by the program
        s.trace_resume = lambda: seen.append("resume") or True
        gpufl.torch.attach()
        with torch.profiler.profile():
            pass
        print(" ".join(seen))
    """)
    assert out.strip() == "pause refused"


GPUFL_CLI = os.environ.get("GPUFL_CLI")


@pytest.mark.skipif(not GPUFL_CLI, reason="needs the build's gpufl command ($GPUFL_CLI)")
@pytest.mark.parametrize("flag, attached", [([], "True"), (["--no-torch-ops"], "False")])
def test_gpufl_run_attaches_in_python_programs(tmp_path, flag, attached):
    script = tmp_path / "train.py"
    script.write_text("import torch, sys\n"
                      "g = sys.modules.get('gpufl.torch')\n"
                      "print('attached', bool(g and g.attached()))\n")
    env = {"PYTHONPATH": FAKE_TORCH}
    out = run_child(None, env, fake=False,
                    argv=[GPUFL_CLI, "run", "--engine", "monitor", "--log-path", str(tmp_path / "logs")] + flag +
                    ["--", "/usr/bin/python3", str(script)])
    assert out.strip() == "attached " + attached
