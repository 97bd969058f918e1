# One image for the dashboard side (web, ingest/analysis/alerts worker, beat) and the runner worker.
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PTBENCH_DATA_DIR=/data
# A C/C++ compiler for the runner worker's cases: inductor compiles its CPU kernels with g++, and
# Triton builds its CUDA launcher stubs with gcc the first time a GPU kernel runs.
RUN apt-get update && apt-get install -y --no-install-recommends gcc g++ libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY requirements.txt .
RUN pip install -r requirements.txt
COPY . .
RUN DJANGO_DEBUG=false DJANGO_SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput -v 0
