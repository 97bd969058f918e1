"""Every benchmark under bench/ runs, at its smallest size, and prints its table (#33 item 8:
``bench/dashboard_load.py`` had stopped running unnoticed). One invocation each, as a user would
type it, in a subprocess; what is timed does not matter here, that it runs and answers does.

GPU-only scripts run from the stored files of bench/results/ where they offer ``--from``
(compile_noise, compile_pairs_spread); cudagraph_memory and timing_jitter time CUDA calls and
keep no stored form, so only their imports and arguments are checked (``--help``). The shell
scripts (gpu_*.sh) drive ``python -m runner`` on a GPU machine and are not run here. The
benchmarks that start several services (dispatch_overhead, bisect_variants, worker_suite: Redis, Celery
workers, a case each; dashboard_load --concurrent: gunicorn) are ``slow``.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = "bench/results"
HISTORY = [f"{RESULTS}/history/hist-base-{i}.json" for i in (1, 2, 3)]
NOISE_PAIR = [f"{RESULTS}/h200-torch2.11-noise-static-g1-run{i}-2026-11-22.json" for i in (1, 2)]

# (script and its smallest arguments, a line of the table it prints, seconds it may take)
RUNS = [
    (["cpu_scan.py", "--seconds", "0.3"], "cpu  fast-share  median-ms", 60),
    (["compile_spread.py", *HISTORY[:2]], "at fixed host", 60),
    (["compile_noise.py", "--from", f"{RESULTS}/compile-noise/h100-c2-2026-11-24.json"], "wall spread", 60),
    (["compile_pairs_spread.py", "--from", f"{RESULTS}/compile-noise/h100-pairs3-run1-2026-11-24.json"], "cpu ratio", 60),
    (["merge_documents.py", "{tmp}/merged.json", *NOISE_PAIR[:1], f"{RESULTS}/h200-torch2.11-noise-static-g2-run1-2026-11-22.json"],
     "results from 2 documents", 60),
    (["noise_estimators.py", *NOISE_PAIR], "cases under target", 60),
    (["suite_report.py", f"{RESULTS}/cpu-torch2.13-tiny-2026-11-22.json"], "speedup  ±95%", 60),
    (["detection_anchors.py", "--series", "20", "--gpu-series", "10", "--otava-series", "2", "--workers", "1"], "false alerts", 120),
    (["ingest_throughput.py", "--runs", "2", "--cases", "5"], "results/s", 120),
    (["real_verdicts.py", "--history", *HISTORY[:2], "--then", HISTORY[2]], "later builds: change", 120),
    (["dashboard_load.py", "--results", "1000", "--workloads", "2", "--repeat", "1", "--budget", "1"], "page / query", 240),
    (["api_throughput.py", "--results", "500", "--workloads", "2", "--runs", "1", "--cases", "2", "--clients", "1",
      "--verdicts", "1", "--detect-builds", "1", "--workers", "1"], "verdict of", 240),
    (["families_table.py", *(f"{RESULTS}/families/spread/spread-{i}.json" for i in (1, 2, 3))], "per case", 60),
    # issue #44 item 6: exits 1 where a reported interval is narrower than its series' run-to-run sd
    (["compile_to_compile.py"], "figure: met: no reported interval is narrower", 60),
    (["timing_cores.py"], "alone: sd <= 1 % on 4 of 5 models", 60),
    (["llm_table.py", f"{RESULTS}/llms/cpu-tiny-llama-2026-11-28.json"],
     "hf:meta-llama/Llama-3.2-1B@prefill  default  2.599x 39s 0.4MB  1.349x 43s 0.4MB  0.788x 85s 0.4MB  0.584", 60),
    (["case_lifetime.py", "--repeats", "1"], "SIGTERM  runner (cpu)", 120),
    (["artifact_overhead.py", "--workloads", "mlp_loop", "--repeats", "1", "--backend", "eager"], "cold compile off/on", 240),
    (["distributed_table.py", "--from", f"{RESULTS}/distributed/cpu-tiny-eager-2026-11-25.json"], "graph breaks (per collective)", 60),
    (["second_shape_check.py", "--workloads", "mlp_loop"], "same", 180),
    (["compile_paths.py", "--from", f"{RESULTS}/compile-paths-cpu-2026-11-25.json"], "aot_inductor  backed", 60),
    # AOTInductor's package compiled and loaded outside the runner (on the GPU image the load crashed
    # until the runner made torch's libstdc++ global: bench/results/compile-paths-gpu-2026-11-28)
    (["aoti_load_check.py", "--device", "cpu", "--conditions", "plain", "--out", "{tmp}/check.txt"], "plain: rc 0", 300),
    # a second GPU call's stream: moe_routing's aot_inductor case is stored there, resnet_train's is not
    (["gpu/gpu_pending.py", f"{RESULTS}/compile-paths-gpu-2026-11-28",
      "--modes aot_inductor --dtypes float32 --regimes static --workloads moe_routing,resnet_train"],
     "--workloads resnet_train", 60),
    (["cudagraph_memory.py", "--help"], "usage:", 60),
    (["recall_benchmark.py", "--series", "2", "--workers", "1"], "target (90 % of 3-sd steps within two builds", 120),
    (["commit_bisect.py", "--trials", "5", "--out", "{tmp}/commit_bisect.txt"], "bisection over 16 commits", 120),
    # a real bisection over overlay builds through the in-process worker: tests/dispatch/test_commit_bisect_workers.py
    (["commit_bisect_real.py", "--help"], "usage:", 60),
    # an intake of a cached version through real uv and the probe: tests/dispatch/test_intake_workers.py
    (["intake.py", "--help"], "usage:", 60),
    # the warm process without the model libraries mlp_loop does not use (27 s -> 14 s to ready on a loaded host)
    (["case_start.py", "--repeats", "1", "--workloads", "mlp_loop", "--imports", "torch._dynamo,torch._inductor.compile_fx"], "warm fork", 180),
    (["detect_large_document.py", "--results", "50"], "longest task s", 180),
    # a whole deployment (PostgreSQL, Redis, two Celery workers, gunicorn behind nginx), 2-3 minutes: its
    # stored run is bench/results/hostile-probe-2026-11-28.txt, its pieces tests/bench/test_hostile_probe.py
    (["hostile_probe.py", "--help"], "usage:", 60),
    (["timing_jitter.py", "--help"], "usage:", 60),
    # against a dashboard_load --keep database (DATABASE_URL): bench/results/dashboard-million-46-pagespeed5-2026-11-29.txt
    (["page_profile.py", "--help"], "usage:", 60),
    (["page_cold_hash.py", "--help"], "usage:", 60),
    (["explain_pair.py", f"{RESULTS}/explain/cpu-plain-2026-11-25.json", f"{RESULTS}/explain/cpu-simdlen1-2026-11-25.json"],
     "kernel changed", 60),
]
SLOW_RUNS = [
    (["explain_overhead.py", "--workloads", "mlp_loop", "--backend", "eager"], "added = (profile + records + fingerprint)", 600),
    (["dashboard_load.py", "--results", "1000", "--workloads", "2", "--concurrent", "2", "--per-client", "1", "--workers", "1"],
     "p95", 400),  # dashboard_concurrent.py: gunicorn and N clients
    (["dispatch_overhead.py", "--cases", "1", "--warmup", "0"], "end to end: request -> visible", 400),
    # The one override of five that matters, found through real services (PostgreSQL, Redis, the dashboard's
    # and a runner's Celery workers): the chain's two steps (+A+B good, +A+B+C bad), then C alone bad, so no
    # partner. The steps and the message are asserted here, not in a second such bisection of the tests
    # (tests/dispatch/test_bisect_workers.py); the search's rules without workers: tests/bisect/test_bisect_overrides.py.
    (["bisect_variants.py", "--attempts", "1"],
     ("step: build 3 good (", "step: build 4 bad (", "the chain's search: steps 2 · ",
      "status: done · override env.TORCH_PTBENCH_TEST_C=1 makes it bad on its own: 3 steps, "), 900),
    (["distributed_table.py", "--run", "{tmp}/distributed.json", "--device", "cpu", "--backend", "eager", "--workloads",
      "dist:mlp@train+ddp"], "1 distributed cases", 400),  # two gloo ranks; the GPU run's command at tiny size
    # eager: the workers, queues and storage are what runs here; mlp_loop's inductor compiles, cold and
    # warm, took most of its 146 s (inductor in a case forked as a worker forks it: tests/runner/test_warm_start.py)
    (["worker_suite.py", "--out", "{tmp}/suite", "--machine-class", "cpu", "--size", "tiny", "--workloads", "mlp_loop",
      "--modes", "default", "--regimes", "static", "--backend", "eager", "--timeout", "300"], "results stored twice: 0", 400),
]


def run_bench(argv: list[str], expected: str | tuple[str, ...], timeout: int, tmp_path: Path) -> None:
    env = dict(os.environ)
    # Without DATABASE_URL the database benchmarks start their own throwaway cluster, as a user's
    # run would; ingest_throughput uses this one's (it creates and drops <name>_bench).
    if argv[0] != "ingest_throughput.py":
        env.pop("DATABASE_URL", None)
    module = "bench." + argv[0].removesuffix(".py").replace("/", ".")  # as the docs run it: python -m bench.NAME
    command = [sys.executable, "-m", module, *(a.format(tmp=tmp_path) for a in argv[1:])]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    for line in (expected,) if isinstance(expected, str) else expected:
        assert line in done.stdout, f"{' '.join(command)} printed no table with {line!r}:\n{done.stdout[-2000:]}"


@pytest.mark.services
@pytest.mark.parametrize("argv, expected, timeout", RUNS, ids=[r[0][0] for r in RUNS])
def test_benchmark_runs(argv, expected, timeout, tmp_path):
    run_bench(argv, expected, timeout, tmp_path)


@pytest.mark.services
@pytest.mark.slow
@pytest.mark.parametrize("argv, expected, timeout", SLOW_RUNS, ids=[r[0][0] for r in SLOW_RUNS])
def test_distributed_benchmark_runs(argv, expected, timeout, tmp_path):
    run_bench(argv, expected, timeout, tmp_path)


def test_every_benchmark_is_run_here():
    """A benchmark added to bench/ (or a Python driver to bench/gpu/) without a run here fails this;
    bench/lib/ holds the libraries the scripts import."""
    elsewhere = {"__init__.py", "first_visit.py",  # first_visit: against a live server, tests/dashboard/test_browser_page_weight.py
                 "slow_clients.py"}  # its servers and slow clients: tests/dispatch/test_slow_clients.py
    run = {argv[0] for argv, _, _ in RUNS + SLOW_RUNS}
    scripts = {str(p.relative_to(ROOT / "bench")) for folder in ("", "gpu") for p in (ROOT / "bench" / folder).glob("*.py")}
    assert scripts - elsewhere - run == set()
