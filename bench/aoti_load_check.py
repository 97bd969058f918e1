"""Where AOTInductor's package load crashes (issue #29: on the H100, torch 2.11, the runner's
``aot_inductor`` cases died with SIGSEGV in ``aoti_load_package``, bench/results/compile-paths-gpu-2026-11-25).

One small model (Linear-GELU-Linear) exported, packaged and loaded under each condition below, each in a
process of its own, then the runner's own case; the first condition that crashes runs again under
``cuda-gdb`` (the GPU hosts have no gdb) for the native backtrace. Prints a line per condition.

The conditions that try a way around the crash (``FIXES``) change one thing each: no precompiled
headers for the package's C++ (``aot_inductor.precompile_headers``), the compiler's own libstdc++
preloaded where the package is loaded, clang instead of g++, or the CPU instead of CUDA. With
``--parallel`` the conditions run at once, and ``--fix-out FILE`` writes the runner arguments of the
first fix that loads and runs (``fix_args``), for the GPU calls' aot_inductor streams; ``--diagnose``
adds the host compiler, the package's link and the compile commands to the report.

    python -m bench.aoti_load_check --device cuda --out OUT/aoti-load-check.txt
    python -m bench.aoti_load_check --device cuda --conditions load_in_fresh_process,no_precompiled_headers,preload_compiler_libstdcxx,clang,cpu_device --parallel --diagnose --fix-out FIX
"""
from __future__ import annotations

import argparse
import concurrent.futures
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
    if os.environ.get("CHECK_NO_PCH"):
        torch._inductor.config.aot_inductor.precompile_headers = False
    if os.environ.get("CHECK_PRINT_COMMANDS"):  # each C++ compile's command line, for --diagnose
        from torch._inductor import cpp_builder
        build = cpp_builder.CppBuilder.build
        def printed_build(self):
            print("command: " + self.get_command_line(), flush=True)
            return build(self)
        cpp_builder.CppBuilder.build = printed_build
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
    compile_load = [child + ["compile", package], child + ["load", package]]
    # conditions run at once (--parallel) each compile into a cache of their own: a shared one races
    env = {**env, "TORCHINDUCTOR_CACHE_DIR": str(work / name / "inductor"), "TRITON_CACHE_DIR": str(work / name / "triton")}
    if name == "no_precompiled_headers":
        return compile_load, {**env, "CHECK_NO_PCH": "1"}
    if name == "preload_compiler_libstdcxx":  # the library the compiler's headers belong to, loaded first
        library = compiler_libstdcxx()
        return [compile_load[0], ["env", f"LD_PRELOAD={library}", *compile_load[1]]] if library else [], env
    if name == "clang":
        return (compile_load if shutil.which("clang++") else []), {**env, "CXX": "clang++"}
    if name == "cpu_device":
        cpu = [sys.executable, "-c", CHILD, "cpu"]
        return [cpu + ["compile", package], cpu + ["load", package]], env
    raise ValueError(name)


CONDITIONS = ("plain", "load_in_fresh_process", "torch_trace", "case_cache_dirs", "warm_compile_pool", "runner_case")
FIXES = ("no_precompiled_headers", "preload_compiler_libstdcxx", "clang", "cpu_device")
NOT_RUN = "not run here (no clang++, or no compiler libstdc++ found)"


def compiler_libstdcxx() -> str | None:
    """The libstdc++ that the host compiler (``$CXX``, else g++) links against, resolved."""
    try:
        found = subprocess.run([os.environ.get("CXX", "g++"), "-print-file-name=libstdc++.so.6"],
                               capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return str(Path(found).resolve()) if found and Path(found).is_file() else None


def fix_args(name: str) -> str | None:
    """How a runner process takes a fix that worked: shell words before ``python -m runner run``
    (an environment) and arguments after it, separated by a '|'."""
    return {"no_precompiled_headers": "|--config inductor.aot_inductor.precompile_headers=false",
            "preload_compiler_libstdcxx": f"env LD_PRELOAD={compiler_libstdcxx()}|",
            "clang": "env CXX=clang++|"}.get(name)


def shell_line(command: list[str]) -> str:
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as error:
        return f"{command[0]}: {error}"
    return (proc.stdout + proc.stderr).strip()


def diagnosis(work: Path) -> list[str]:
    """The host's C++ toolchain and what the control condition's package links against."""
    lines = ["# diagnosis",
             "g++: " + shell_line(["g++", "--version"]).splitlines()[0] if shutil.which("g++") else "g++: none",
             "clang++: " + (shell_line(["clang++", "--version"]).splitlines()[0] if shutil.which("clang++") else "none"),
             f"CXX={os.environ.get('CXX', '')}; compiler's libstdc++: {compiler_libstdcxx()}",
             "ldconfig libstdc++: " + " ".join(line.split("=>")[-1].strip() for line in shell_line(["ldconfig", "-p"]).splitlines() if "libstdc++" in line)]
    control = work / "load_in_fresh_process" / "model.pt2"
    for package in ([control] if control.is_file() else sorted(work.glob("*/model.pt2")))[:1]:
        unpacked = work / "unpacked"
        shutil.unpack_archive(str(package), str(unpacked), "zip")
        for library in sorted(unpacked.rglob("*.so"))[:1]:
            needed = [line.split()[-1] for line in shell_line(["readelf", "-d", str(library)]).splitlines() if "NEEDED" in line]
            defined = shell_line(["nm", "-C", "--defined-only", str(library)]).splitlines()
            lines += [f"{package.parent.name}'s {library.name}: NEEDED {' '.join(needed)}",
                      f"  defined symbols {len(defined)}, of them std::locale/codecvt/ctype "
                      f"{sum(1 for line in defined if 'std::locale' in line or 'codecvt' in line or 'ctype<' in line)}: "
                      + "; ".join(line.split(' ', 2)[-1][:90] for line in defined if 'codecvt' in line)[:600]]
    return lines


def run_condition(name: str, work: Path, device: str) -> tuple[list[str], list[str], bool]:
    """Run one condition's commands in turn: its report lines, its compile commands, whether all passed."""
    commands, env = condition(name, work, device)
    if not commands:
        return [f"{name}: {NOT_RUN}"], [], False
    lines, compiles = [], []
    for command in commands:
        proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
        output = (proc.stdout + proc.stderr).strip().splitlines()
        compiles += [line for line in output if line.startswith("command: ")]
        tail = [line for line in output if line.startswith(("packaged", "loaded", "ran", "Fatal", "==", "mlp_loop"))
                or "Error" in line or "status" in line][-6:] or output[-4:]
        lines.append(f"{name}: rc {proc.returncode} · " + " | ".join(t.strip()[:160] for t in tail))
        print(lines[-1], flush=True)
        if proc.returncode != 0:
            return lines, compiles, False
    return lines, compiles, True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--out")
    parser.add_argument("--conditions", default=",".join(CONDITIONS))
    parser.add_argument("--parallel", action="store_true", help="run the conditions at once")
    parser.add_argument("--diagnose", action="store_true", help="the toolchain, the package's link, the compile commands")
    parser.add_argument("--fix-out", help="write fix_args of the first fix (in --conditions order) that ran")
    parser.add_argument("--no-gdb", action="store_true", help="skip the cuda-gdb backtrace of the first crash")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ptbench-aoti-check-"))
    lines, crashed = [], None
    import torch
    lines.append(f"# torch {torch.__version__}, CUDA {torch.version.cuda}, Python {sys.version.split()[0]}, device {args.device}")
    names = args.conditions.split(",")
    if args.diagnose:
        os.environ["CHECK_PRINT_COMMANDS"] = "1"
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(names) if args.parallel else 1) as pool:
        outcomes = dict(zip(names, pool.map(lambda n: run_condition(n, work, args.device), names)))
    compiles: list[str] = []
    for name in names:
        found, commands, passed = outcomes[name]
        lines += found
        compiles += [f"{name} {c}" for c in commands if "wrapper" in c or "gch" in c][:3]
        if not passed and not found[-1].endswith(NOT_RUN) and not crashed:
            commands_of, env = condition(name, work, args.device)
            crashed = (name, commands_of[-1], env)
    fix = next((n for n in names if n in FIXES and outcomes[n][2] and fix_args(n)), None)
    lines.append(f"# first fix that loaded and ran: {fix or 'none'}" + (f" ({fix_args(fix)})" if fix else ""))
    if args.fix_out:
        Path(args.fix_out).write_text((fix_args(fix) or "") + "\n" if fix else "")
    if args.diagnose:
        lines += diagnosis(work) + ["# compile commands of the wrapper and the precompiled header (three a condition at most)", *compiles]
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")
    if args.no_gdb:
        crashed = None
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
