# Two images from one file: `web` (the default, last stage) for the dashboard side (web,
# ingest/analysis/alerts worker, beat) with requirements/web.txt only, no torch; `runner` for the runner
# worker, which adds a C/C++ compiler and requirements/runner.txt.
FROM python:3.11-slim AS base
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PTBENCH_DATA_DIR=/data
WORKDIR /app
COPY requirements/web.txt requirements/web.txt
RUN pip install -r requirements/web.txt

FROM base AS runner
# A C/C++ compiler for the runner worker's cases: inductor compiles its CPU kernels with g++, and
# Triton builds its CUDA launcher stubs with gcc the first time a GPU kernel runs.
RUN apt-get update && apt-get install -y --no-install-recommends gcc g++ libc6-dev \
    && rm -rf /var/lib/apt/lists/*
COPY requirements/runner.txt requirements/runner.txt
RUN pip install -r requirements/runner.txt
COPY . .

FROM base AS web
COPY . .
RUN DJANGO_DEBUG=false DJANGO_SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput -v 0
