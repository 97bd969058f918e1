"""The runner's Celery worker: measures cases on a GPU (or CPU) machine, with no Django and no
database credentials. It takes ``runner.run_case`` tasks from its machine class's queue, runs each
case in a case process of the requested build's interpreter (forked from a warm process that has
already imported torch, or a fresh one: ``runner.engine.warm_start``), and hands the one-result run
document back to the dashboard's ``ingest`` queue.

One worker process per GPU, pinned with ``CUDA_VISIBLE_DEVICES``; it runs ``PTBENCH_CASES_AT_ONCE``
cases at once (``runner.worker.slots``), which compile together and time one at a time under the
GPU's lock (``runner.engine.gpu_lock``):

    CUDA_VISIBLE_DEVICES=0 PTBENCH_BROKER_URL=redis://dash:6379/0 PTBENCH_MACHINE_CLASS=gpu-h100 \\
      celery -A runner.worker.app worker -Q gpu-h100 --hostname gpu0@%h

Settings are environment variables: see ``runner.worker.config``.
"""
