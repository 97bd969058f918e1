"""A synthetic nightly history for ``bench/dashboard_load.py``: every row is labelled synthetic.

Shape: machine classes x nightly builds x workloads x 24 configs (4 compile modes x 3 shape
regimes x 2 dtypes), one run per build and class; the newest run is cut short when the requested
count ends mid-build (and so shows as still running). Each series has a realistic level (mode,
regime, dtype and class matter; some workloads are data-dependent and much slower unbacked),
1-2% run-to-run noise with timing samples that agree with it, suite-wide compiler changes,
planted steps, failure spells, flaky timeouts, and graph breaks that appear at some build.

Loaded with COPY (CSV) into ``results_result`` with its secondary indexes dropped and rebuilt,
then the summary tables are filled by ``build_summary_refresh``, the function ingest calls.
"""
from __future__ import annotations

import datetime as dt
import io
import json
import math
import random
import uuid

from contract.case_config import CaseConfig
from contract.metrics import COMPILE_TIMES, METRICS  # the caller puts the repository on sys.path

FAMILIES = ["resnet_train", "llama_decode", "bert_encoder", "positional_graph_break", "unet_diffusion",
            "moe_layer", "masked_attention", "train_step", "mlp_loop", "vit_infer"]
MODES = ["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"]
REGIMES = ["static", "backed", "unbacked"]
DTYPES = ["bfloat16", "float32"]
CLASSES = [("gpu-h100", "NVIDIA H100 80GB HBM3", 1.0), ("gpu-a100", "NVIDIA A100-SXM4-80GB", 0.8), ("gpu-l4", "NVIDIA L4", 0.4)]
MODE_SPEEDUP = {"default": 1.15, "reduce-overhead": 1.35, "max-autotune": 1.3, "max-autotune-no-cudagraphs": 1.2}
MODE_COMPILE = {"default": 1.0, "reduce-overhead": 1.2, "max-autotune": 3.5, "max-autotune-no-cudagraphs": 3.0}
BREAK_REASONS = [
    "Unsupported Tensor.item() call with capture_scalar_outputs=False",
    "Data-dependent branching: generic_jump TensorVariable()",
    "call_function BuiltinVariable(print) [ConstantVariable(str)] {}",
    "Dynamic shape operator: aten.nonzero.default; to enable, set torch._dynamo.config.capture_dynamic_output_shape_ops = True",
    "torch.* op returned non-Tensor int call_function <function sym_size>",
]
ERRORS = {
    "compile_error": ("torch._inductor.exc.InductorError", "AssertionError: failed OrderedSet([]) >= OrderedSet([u1]) (inductor >= fx)"),
    "timeout": ("TimeoutError", "the case did not finish within 240 s"),
    "oom": ("torch.OutOfMemoryError", "CUDA out of memory. Tried to allocate 2.00 GiB"),
}
# Every metric of the registry is a column of Result (contract.metrics); a row gives those it has.
METRIC_COLUMNS = [m.name for m in METRICS if not m.source]  # a sourced metric lives in a JSON field (contract.metrics)
JSON_OBJECT_COLUMNS = ("path_phases", "compile_phases", "kernel_profile", "cost")  # docs/compile-paths.md, docs/explain.md
RESULT_COLUMNS = [
    "run_id", "build_id", "workload_id", "config_id", "series_id", "status", *METRIC_COLUMNS,
    "samples", "graph_breaks", "recompiles", "error", "repro",
    "duration_s", "environment", "compile_reference",  # "" (no compile pairs): NOT NULL since results/0011
    *JSON_OBJECT_COLUMNS,  # {}: NOT NULL, and a Django default is no database default
]
COLD, WARM = (m.name for m in COMPILE_TIMES)


def _csv(value) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return '"' + value.replace('"', '""') + '"'
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


class History:
    def __init__(self, *, results: int, workloads: int = 80, seed: int = 5):
        self.total = results
        self.seed = seed
        self.rng = random.Random(seed)
        self.configs_spec = [(m, r, d) for m in MODES for r in REGIMES for d in DTYPES]
        per_class = workloads * len(self.configs_spec)
        classes = max(1, min(len(CLASSES), math.ceil(results / (per_class * 400))))  # about a year of nightlies per class
        classes = max(classes, 2) if results >= 2 * per_class else classes
        self.classes = CLASSES[:classes]
        self.machine_classes = [c[0] for c in self.classes]
        self.per_class = per_class
        self.builds = math.ceil(results / (per_class * len(self.classes)))
        self.workload_names = [f"{FAMILIES[i % len(FAMILIES)]}_{i // len(FAMILIES):02d}" for i in range(workloads)]

    # --- the model of the numbers ------------------------------------------------------------
    def _series_params(self, w: int, mode: str, regime: str, dtype: str, speed: float) -> dict:
        rng = self.rng
        family = FAMILIES[w % len(FAMILIES)]
        data_dependent = family in ("moe_layer", "unet_diffusion", "positional_graph_break") or w % 7 == 0
        regime_factor = {"static": 1.0, "backed": 0.97}.get(regime, rng.uniform(0.5, 0.85) if data_dependent else 0.96)
        speedup = MODE_SPEEDUP[mode] * self._wl[w]["speedup"] * regime_factor * (1.1 if dtype == "bfloat16" else 1.0)
        params = {
            "speedup": speedup,
            "eager_ms": self._wl[w]["eager_ms"] * (1.6 if dtype == "float32" else 1.0) / speed,
            "cold": self._wl[w]["cold"] * MODE_COMPILE[mode] * {"static": 1.0, "backed": 1.05, "unbacked": 1.15}[regime],
            "eager_peak": self._wl[w]["peak"] * (2 if dtype == "float32" else 1),
            "compression": self._wl[w]["compression"] * (0.9 if mode == "reduce-overhead" else 1.0),
            "breaks": self._wl[w]["breaks"] + (rng.randint(1, 2) if regime == "unbacked" and data_dependent else 0),
            "recompiles": 1 if regime == "static" else 0,
            "events": [],  # (first build, last build or None, factor) on speedup
            "fail": None,  # (first build, last build, status)
        }
        if rng.random() < 0.25:
            start = rng.randrange(5, max(6, self.builds))
            end = start + rng.randint(5, 40) if rng.random() < 0.4 else None
            params["events"].append((start, end, rng.uniform(0.82, 0.95) if rng.random() < 0.6 else rng.uniform(1.05, 1.18)))
        if rng.random() < 0.03:
            start = rng.randrange(0, max(1, self.builds))
            params["fail"] = (start, start + rng.randint(1, 60), "compile_error")
        return params

    def _workload_params(self) -> None:
        rng = self.rng
        self._wl = []
        for w in range(len(self.workload_names)):
            breaks = 0 if rng.random() < 0.6 else rng.randint(1, 3)
            new_break = (rng.randrange(1, max(2, self.builds)), rng.randrange(len(BREAK_REASONS))) if rng.random() < 0.15 else None
            self._wl.append({
                "speedup": rng.lognormvariate(0, 0.25), "eager_ms": rng.lognormvariate(math.log(10), 0.8),
                "cold": rng.uniform(15, 90), "peak": int(rng.uniform(0.5, 30) * 1e9),
                "compression": rng.lognormvariate(math.log(1.1), 0.1), "breaks": breaks, "new_break": new_break,
                "line": rng.randint(20, 400),
            })
        # Suite-wide compiler changes per (class, mode): a few steps over the history.
        self._suite = {}
        for mc in self.machine_classes:
            for mode in MODES:
                steps = []
                for _ in range(3):
                    at = rng.randrange(1, max(2, self.builds))
                    steps.append((at, rng.uniform(0.93, 1.07), rng.uniform(0.9, 1.15)))  # speedup and compile factors
                self._suite[(mc, mode)] = sorted(steps)

    def _row(self, b: int, mc: str, mode: str, regime: str, dtype: str, w: int, p: dict, ids: tuple) -> str:
        rng = self.rng
        speed_factor = compile_factor = 1.0
        for at, s, c in self._suite[(mc, mode)]:
            if b >= at:
                speed_factor *= s
                compile_factor *= c
        for start, end, factor in p["events"]:
            if b >= start and (end is None or b < end):
                speed_factor *= factor
        name = self.workload_names[w]
        breaks = p["breaks"]
        reasons = [{"reason": BREAK_REASONS[(w + k) % len(BREAK_REASONS)], "location": f"workloads/suite/{FAMILIES[w % len(FAMILIES)]}.py:{self._wl[w]['line'] + k} in forward", "count": 1} for k in range(breaks)]
        new_break = self._wl[w]["new_break"]
        if new_break and b >= new_break[0]:
            breaks += 1
            reasons.append({"reason": BREAK_REASONS[new_break[1]], "location": f"workloads/suite/{FAMILIES[w % len(FAMILIES)]}.py:{self._wl[w]['line'] + 50} in forward", "count": 1})
        status = "pass"
        fail = p["fail"]
        if fail and fail[0] <= b < fail[1]:
            status = fail[2]
        elif rng.random() < 0.004:
            status = rng.choice(("timeout", "oom"))
        repro = f"python -m runner run --size full --workloads {name} --modes {mode} --regimes {regime} --dtypes {dtype} --device cuda"
        recompiles = json.dumps([{"reason": "tensor 'x' size mismatch at index 0. expected 64, actual 48", "count": 1}] * p["recompiles"])
        common = [*ids, status]
        if status != "pass":
            kind, message = ERRORS[status]
            metrics = {"graph_break_count": breaks if status == "compile_error" else None}
            values = ["{}", json.dumps(reasons), recompiles, json.dumps({"type": kind, "message": message}), repro,
                      round(rng.uniform(20, 240), 1), '{"synthetic": true}', "", *("{}" for _ in JSON_OBJECT_COLUMNS)]
            return ",".join(_csv(v) for v in common + [metrics.get(c) for c in METRIC_COLUMNS] + values)
        noise = abs(rng.gauss(0.012, 0.004))
        speedup = p["speedup"] * speed_factor * (1 + rng.gauss(0, 0.012))
        eager = p["eager_ms"] * (1 + rng.gauss(0, 0.01))
        compiled = eager / speedup
        cold = p["cold"] * compile_factor * (1 + rng.gauss(0, 0.05))
        compression = p["compression"] * (1 + rng.gauss(0, 0.005))
        eager_peak = p["eager_peak"]
        eager_samples = ",".join(f"{eager * (1 + rng.gauss(0, 0.015)):.4g}" for _ in range(8))
        compiled_samples = ",".join(f"{compiled * (1 + rng.gauss(0, 0.015)):.4g}" for _ in range(8))
        samples = f'{{"eager_ms": [{eager_samples}], "compiled_ms": [{compiled_samples}], "calls_per_block": 10}}'
        metrics = {"speedup": speedup, "speedup_noise": noise, "eager_latency_ms": eager, "compiled_latency_ms": compiled,
                   COLD: cold, WARM: cold * rng.uniform(0.15, 0.25), "eager_peak_memory_bytes": eager_peak,
                   "compiled_peak_memory_bytes": int(eager_peak / compression), "memory_compression": compression,
                   "graph_break_count": breaks, "unique_graphs": breaks + 1, "recompile_count": p["recompiles"],
                   "accuracy_max_abs_error": 1e-6, "accuracy_max_rel_error": 1e-4}
        values = [samples, json.dumps(reasons), recompiles, None, repro, round(cold * 1.6 + 20, 1), '{"synthetic": true}', "",
                  *("{}" for _ in JSON_OBJECT_COLUMNS)]
        return ",".join(_csv(v) for v in common + [metrics.get(c) for c in METRIC_COLUMNS] + values)

    # --- loading ------------------------------------------------------------------------------
    def attach(self) -> bool:
        """Use the history already loaded into this database (``dashboard_load.py --reuse``): True
        when it holds this many synthetic results of these workloads, else False (load it then)."""
        from dashboard.results.models import Config, Result, Workload

        if Workload.objects.filter(name__in=self.workload_names, category="synthetic").count() != len(self.workload_names):
            return False
        if Result.objects.filter(run__synthetic=True).count() != self.total:
            return False
        self.configs = {spec: Config.objects.get(key=CaseConfig(*spec, device="cuda").key) for spec in self.configs_spec}
        return True

    def load(self, report) -> None:
        import time

        from django.db import connection, transaction

        from dashboard.results.models import Build, Machine, Run, Series, Workload
        from dashboard.results.services import config_get_or_create, series_signature
        from dashboard.results.summaries import build_summary_refresh
        from dashboard.results.run_counts import run_counts_recount

        started = time.perf_counter()
        self._workload_params()
        machines = {mc: Machine.objects.create(hostname=f"synthetic-{mc}", machine_class=mc, gpu_name=gpu, gpu_count=1)
                    for mc, gpu, _ in self.classes}
        self.configs = {spec: config_get_or_create(case=CaseConfig(*spec, device="cuda")) for spec in self.configs_spec}
        workloads = Workload.objects.bulk_create([
            Workload(name=n, category="synthetic", phase="train" if "train" in n else "infer",
                     description="synthetic workload generated by bench/dashboard_load.py") for n in self.workload_names])
        series = {}
        for mc in self.machine_classes:
            for w, workload in enumerate(workloads):
                for spec, config in self.configs.items():
                    series[(mc, w, spec)] = Series(workload=workload, config=config, machine_class=mc,
                                                   signature=series_signature(workload_name=workload.name, config=config, machine_class=mc))
        Series.objects.bulk_create(series.values(), batch_size=5000)
        first = dt.datetime(2026, 11, 21, 2, 0, tzinfo=dt.timezone.utc) - dt.timedelta(days=self.builds - 1)
        builds = Build.objects.bulk_create([
            Build(torch_version=f"2.12.0.dev{(first + dt.timedelta(days=i)):%Y%m%d}+cu130", git_sha=f"{self.rng.getrandbits(160):040x}",
                  label=f"synthetic nightly {(first + dt.timedelta(days=i)):%Y-%m-%d}", commit_time=first + dt.timedelta(days=i),
                  ordered_at=first + dt.timedelta(days=i), environment={"synthetic": True}) for i in range(self.builds)])
        params = {}
        for mc, _, speed in self.classes:
            for w in range(len(self.workload_names)):
                for spec in self.configs_spec:
                    params[(mc, w, spec)] = self._series_params(w, *spec, speed)
        # The runs, and how many results each gets (the last one may be cut short).
        plan, left = [], self.total
        for b, build in enumerate(builds):
            for mc in self.machine_classes:
                if left <= 0:
                    break
                n = min(left, self.per_class)
                left -= n
                at = build.ordered_at + dt.timedelta(hours=1)
                run = Run(id=uuid.UUID(int=self.rng.getrandbits(128)), build=build, machine=machines[mc], size="synthetic-full",
                          status=Run.Status.COMPLETED if n == self.per_class else Run.Status.RUNNING, started_at=at,
                          finished_at=at + dt.timedelta(hours=3) if n == self.per_class else None,
                          command="python -m bench.dashboard_load (synthetic history)", requested_by="bench", synthetic=True,
                          notes="synthetic: generated by bench/dashboard_load.py, not a measurement", cases_expected=self.per_class)
                plan.append((b, mc, run, n))
        Run.objects.bulk_create([p[2] for p in plan])
        with connection.cursor() as cursor:  # ingest time = when the run finished (auto_now_add gave "now")
            cursor.execute("UPDATE results_run SET ingested_at = COALESCE(finished_at, started_at)")
        started = report("builds, runs, series", started)

        with connection.cursor() as cursor:
            cursor.execute("""SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'results_result' AND indexname NOT IN
                              (SELECT conname FROM pg_constraint WHERE conrelid = 'results_result'::regclass)""")
            secondary = cursor.fetchall()
            for name, _ in secondary:
                cursor.execute(f'DROP INDEX "{name}"')
            with transaction.atomic():
                try:
                    with transaction.atomic():
                        cursor.execute("SET LOCAL session_replication_role = replica")  # no FK triggers: consistent by construction
                except Exception:  # not a superuser: keep the checks
                    pass
                sql = f"COPY results_result ({', '.join(RESULT_COLUMNS)}) FROM STDIN WITH (FORMAT csv)"
                with cursor.cursor.copy(sql) as copy:
                    buffer = io.StringIO()
                    for b, mc, run, n in plan:
                        written = 0
                        for w, workload in enumerate(workloads):
                            for spec, config in self.configs.items():
                                if written >= n:
                                    break
                                s = series[(mc, w, spec)]
                                ids = (str(run.id), run.build_id, workload.id, config.id, s.id)
                                buffer.write(self._row(b, mc, *spec, w, params[(mc, w, spec)], ids))
                                buffer.write("\n")
                                written += 1
                        if buffer.tell() > 8_000_000:
                            copy.write(buffer.getvalue())
                            buffer = io.StringIO()
                    copy.write(buffer.getvalue())
            started = report(f"COPY {self.total:,} results", started)
            for name, definition in secondary:
                cursor.execute(definition)
            started = report(f"rebuild {len(secondary)} secondary indexes", started)
        for b, mc, run, n in plan:
            build_summary_refresh(build_id=run.build_id, machine_class=mc)
        started = report(f"summary tables ({len(plan)} build x class)", started)
        run_counts_recount()  # the runs' result counts, as the ingest keeps them
        started = report(f"result counts of {len(plan)} runs", started)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
        report("VACUUM ANALYZE", started)
