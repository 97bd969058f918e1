#!/usr/bin/env bash
# The Python packages a lent GPU host lacks, as wheels for its Python 3.12 (x86-64), into .whl/
# (ignored by git), for the device tool's `carry: [".whl"]`: jsonschema and its needs for the runner's
# run documents, and the dashboard's own for bench/bisect_variants.py --inprocess (docs/bisect.md).
# None of the host's own packages (numpy, scipy, click, attrs, ...) is among them: installed beside it
# with `pip install --no-index --no-deps --target /tmp/site .whl/*.whl`, none shadows it.
# psycopg, gunicorn and plotly are left out: nothing on the in-process path imports them.
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl \
  amqp==5.4.2 asgiref==3.13.0 billiard==4.3.2 celery==5.7.0 click-didyoumean==0.3.1 click-plugins==1.1.1.2 \
  click-repl==0.4.1 cron-descriptor==1.4.5 Django==5.2.19 django-celery-beat==2.9.0 django-environ==0.14.0 \
  django-filter==26.2 django-timezone-field==7.2.2 djangorestframework==3.18.3 drf-spectacular==0.30.0 \
  drf-spectacular-sidecar==2026.10.1 inflection==0.5.1 jsonschema==4.26.0 jsonschema-rs==0.60.3 \
  jsonschema-specifications==2025.9.1 kombu==5.7.0 prompt-toolkit==3.0.53 python-crontab==3.4.0 redis==8.1.0 \
  referencing==0.37.0 rpds-py==2026.9.1 sqlparse==0.6.1 tzdata==2026.6 tzlocal==5.4.5 uritemplate==4.2.0 \
  vine==5.1.0 wcwidth==0.9.4 whitenoise==6.12.0
