"""Does the compiled side's peak memory count the CUDA-graph pool? (issue #17, on a GPU)

For each workload and compile mode: build eager and compiled instances as a case does, warm the
compiled one up (CUDA graphs are recorded there), and print our resident + transient figures
(``runner.engine.memory``) next to the allocator's own view: ``memory_allocated``,
``memory_reserved`` and the private pools' reserved bytes from ``torch.cuda.memory_snapshot``.

    python -m bench.cudagraph_memory --workloads masked_attention,bert_encoder --modes default,reduce-overhead
"""
from __future__ import annotations

import argparse
import functools

import torch

from runner.engine.case import CompiledSide, EagerSide
from runner.engine.memory import MemoryProbe, footprint, private_pool_free_bytes
from contract.spec import CaseSpec
from workloads.registry import get_workload

MB = 1 / 2**20


def pools() -> tuple[int, int]:
    """(reserved, allocated) bytes of private pools."""
    reserved = allocated = 0
    for segment in torch.cuda.memory_snapshot():
        if tuple(segment.get("segment_pool_id") or (0, 0)) != (0, 0):
            reserved += segment["total_size"]
            allocated += segment["allocated_size"]
    return reserved, allocated


def measure(name: str, mode: str) -> str:
    workload = get_workload(name)
    spec = CaseSpec(workload=name, compile_mode=mode, shape_regime="static", dtype=workload.dtypes[0], device="cuda", size="full")
    probe = MemoryProbe("cuda")
    eager = EagerSide(workload, spec, probe)
    compiled = CompiledSide(workload, spec, eager.pristine_inputs, probe)
    call = functools.partial(compiled.fn, *compiled.inputs)
    for _ in range(5):  # warm-up: cudagraph trees record on the first calls
        call()
    torch.cuda.synchronize()
    resident = compiled.resident_bytes(probe)
    transient = probe.transient_peak(call)
    ours = footprint(resident, transient)
    eager_ours = footprint(eager.resident_bytes, probe.transient_peak(functools.partial(eager.fn, *eager.inputs)))
    pool_reserved, pool_allocated = pools()
    line = (f"{name:18} {mode:16} eager {eager_ours * MB:9.1f}  compiled {ours * MB:9.1f} (resident {resident * MB:8.1f} + "
            f"transient {transient * MB:7.1f})  allocated {torch.cuda.memory_allocated() * MB:9.1f}  reserved "
            f"{torch.cuda.memory_reserved() * MB:9.1f}  graph pools {pool_reserved * MB:8.1f} reserved / "
            f"{pool_allocated * MB:8.1f} allocated (free {private_pool_free_bytes() * MB:8.1f})  MiB")
    del eager, compiled, call
    torch._dynamo.reset()
    torch.cuda.empty_cache()
    return line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workloads", default="masked_attention,bert_encoder")
    parser.add_argument("--modes", default="default,reduce-overhead,max-autotune")
    args = parser.parse_args()
    for name in args.workloads.split(","):
        for mode in args.modes.split(","):
            try:
                print(measure(name, mode), flush=True)
            except Exception as exc:  # one failing mode does not hide the others
                print(f"{name:18} {mode:16} failed: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
