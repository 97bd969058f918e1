"""The runner's Celery worker: measures cases on a GPU (or CPU) machine, with no Django and no
database credentials. It takes ``runner.run_case`` tasks from its machine class's queue, runs each
case in a fresh subprocess of the requested build's interpreter, and hands the one-result run
document back to the dashboard's ``ingest`` queue.

One worker process per GPU, pinned with ``CUDA_VISIBLE_DEVICES`` (timing needs the GPU alone):

    CUDA_VISIBLE_DEVICES=0 PTBENCH_BROKER_URL=redis://dash:6379/0 PTBENCH_MACHINE_CLASS=gpu-h100 \\
      celery -A runner.worker.app worker -Q gpu-h100 --concurrency 1 --hostname gpu0@%h

Settings are environment variables: see ``runner.worker.config``.
"""
