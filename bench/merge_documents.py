"""Merge run documents of one build and machine (e.g. one per workload) into one run document.

    python -m bench.merge_documents OUT.json IN.json [IN.json ...]

Used by bench/gpu/gpu_suite.sh, which runs each workload as its own `python -m runner run` so a
device call's time limit never loses a whole suite.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from contract.document import check_document


def merge(documents: list[dict]) -> dict:
    first = documents[0]
    for other in documents[1:]:
        for section, keys in (("build", ("git_sha", "local_label")), ("machine", ("hostname", "machine_class"))):
            if any(other[section].get(k) != first[section].get(k) for k in keys):
                raise SystemExit(f"cannot merge: documents differ in {section}")
    merged = json.loads(json.dumps(first))
    times = [d["run"].get(k) for d in documents for k in ("started_at", "finished_at") if d["run"].get(k)]
    merged["run"]["started_at"], merged["run"]["finished_at"] = (min(times), max(times)) if times else (None, None)
    merged["run"]["command"] = " && ".join(d["run"].get("command", "") for d in documents)[:4000]
    seen = {w["name"] for w in merged["workloads"]}
    for other in documents[1:]:
        merged["workloads"] += [w for w in other["workloads"] if w["name"] not in seen]
        seen |= {w["name"] for w in other["workloads"]}
        merged["results"] += other["results"]
    return check_document(merged)


def main() -> None:
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    documents = [json.loads(Path(p).read_text()) for p in sys.argv[2:]]
    Path(sys.argv[1]).write_text(json.dumps(merge(documents), indent=1))
    print(f"{sys.argv[1]}: {sum(len(d['results']) for d in documents)} results from {len(documents)} documents")


if __name__ == "__main__":
    main()
