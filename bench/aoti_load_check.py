"""Where AOTInductor's package load crashes (issue #29: on the H100, torch 2.11, the runner's
``aot_inductor`` cases died with SIGSEGV in ``aoti_load_package``, bench/results/compile-paths-gpu-2026-11-25).

One small model (Linear-GELU-Linear) exported, packaged and loaded under each condition below, each in a
process of its own, then the runner's own case; the first condition that crashes runs again under
``cuda-gdb`` (the GPU hosts have no gdb) for the native backtrace. Prints a line per condition.

    python bench/aoti_load_check.py --device cuda --out OUT/aoti-load-check.txt
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent("""
    import faulthandler, os, sys, time
    faulthandler.enable()
    import torch
    device, step, package = sys.argv[1], sys.argv[2], sys.argv[3]
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 64))
    model = model.to(device=device, dtype=torch.bfloat16).eval()
    x = torch.randn(32, 256, device=device, dtype=torch.bfloat16)
    if os.environ.get("CHECK_WARM_POOL"):  # as in a case: torch.compile first, which starts inductor's compile workers
        torch.compile(torch.nn.Linear(8, 8).to(device))(torch.randn(2, 8, device=device))
    if step in ("both", "compile"):
        with torch.no_grad():
            program = torch.export.export(model, (x,), strict=False)
            started = time.perf_counter()
            path = torch._inductor.aoti_compile_and_package(program, package_path=package)
        print(f"packaged {path} in {time.perf_counter() - started:.1f} s", flush=True)
    if step in ("both", "load"):
        started = time.perf_counter()
        loaded = torch._inductor.aoti_load_package(package)
        print(f"loaded in {time.perf_counter() - started:.2f} s", flush=True)
        with torch.no_grad():
            error = (loaded(x) - model(x)).abs().max().item()
        print(f"ran: max abs difference from eager {error:.4f}", flush=True)
""")


def condition(name: str, work: Path, device: str) -> tuple[list[list[str]], dict]:
    """The commands of one condition (run in turn) and the environment they run in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_TRACE", "TORCHINDUCTOR_", "TRITON_CACHE"))}
    package = str(work / name / "model.pt2")
    (work / name).mkdir(parents=True, exist_ok=True)
    child = [sys.executable, "-c", CHILD, device]
    if name == "plain":
        return [child + ["both", package]], env
    if name == "load_in_fresh_process":
        return [child + ["compile", package], child + ["load", package]], env
    if name == "torch_trace":
        return [child + ["both", package]], {**env, "TORCH_TRACE": str(work / name / "trace")}
    if name == "case_cache_dirs":  # the runner's per-case caches (runner/engine/executor.py)
        return [child + ["both", package]], {**env, "TORCHINDUCTOR_CACHE_DIR": str(work / name / "inductor"),
                                             "TRITON_CACHE_DIR": str(work / name / "triton")}
    if name == "warm_compile_pool":
        return [child + ["both", package]], {**env, "CHECK_WARM_POOL": "1"}
    if name == "runner_case":
        return [[sys.executable, "-m", "runner", "run", "--device", device, "--size", "tiny", "--workloads", "mlp_loop",
                 "--modes", "aot_inductor", "--regimes", "static", "--no-warm", "--timeout", "300",
                 "--out", str(work / name / "run.json")]], env
    raise ValueError(name)


CONDITIONS = ("plain", "load_in_fresh_process", "torch_trace", "case_cache_dirs", "warm_compile_pool", "runner_case")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--out")
    parser.add_argument("--conditions", default=",".join(CONDITIONS))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ptbench-aoti-check-"))
    lines, crashed = [], None
    import torch
    lines.append(f"# torch {torch.__version__}, CUDA {torch.version.cuda}, Python {sys.version.split()[0]}, device {args.device}")
    for name in args.conditions.split(","):
        commands, env = condition(name, work, args.device)
        for command in commands:
            proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
            output = (proc.stdout + proc.stderr).strip().splitlines()
            tail = [line for line in output if line.startswith(("packaged", "loaded", "ran", "Fatal", "==", "mlp_loop"))
                    or "Error" in line or "status" in line][-6:] or output[-4:]
            lines.append(f"{name}: rc {proc.returncode} · " + " | ".join(t.strip()[:160] for t in tail))
            print(lines[-1], flush=True)
            if args.out:  # as it goes: a check cut off keeps what it found
                Path(args.out).write_text("\n".join(lines) + "\n")
            if proc.returncode != 0:
                crashed = crashed or (name, command, env)
                break
    gdb = shutil.which("cuda-gdb")
    if crashed and gdb and crashed[0] != "runner_case":
        name, command, env = crashed
        proc = subprocess.run([gdb, "-batch", "-ex", "set pagination off", "-ex", "run", "-ex", "bt 40", "--args", *command],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        frames = [line for line in (proc.stdout + proc.stderr).splitlines() if line.startswith("#") or "signal" in line.lower()]
        lines += [f"# {name} under cuda-gdb: the native backtrace", *frames[:60]]
        print("\n".join(lines[-len(frames[:60]) - 1:]), flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
