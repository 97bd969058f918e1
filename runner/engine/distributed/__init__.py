"""Distributed training-step cases: DDP and FSDP, wrapped then compiled or compiled then wrapped,
with or without activation checkpointing (docs/distributed.md).

``launch``: the case process, which starts one process per rank and owns their process group;
``rank``: what each rank runs; ``wrap``: the model as a rank calls it; ``measure``: timing, graph
breaks per collective and memory as ranks measure them.
"""
