"""The run document: the one format in which results travel from a runner to the dashboard.

Pure Python (jsonschema), no Django: GPU workers check what they produce before sending it, and the
dashboard's ingest service checks it again before storing. The schema lives beside this module in
``schema/run_document.v2.json``; bump the version (and add a new file) for incompatible changes.
Version 2 adds a result's optional ``compile_phases``, ``kernel_profile`` and ``cost`` (docs/explain.md);
a version-1 document is still read (the same schema, without those fields).

Where ``jsonschema-rs`` is installed (the dashboard), it answers first whether a document is valid
(~1 ms for 500 results, against ~260 ms in ``jsonschema``); only a document it refuses is validated
again with ``jsonschema``, which names every error. So the errors, their wording and order are
``jsonschema``'s alone, and a machine without ``jsonschema-rs`` (a GPU worker) gives the same answers.
"""
from __future__ import annotations

import datetime as dt
import functools
import json
import uuid
from dataclasses import dataclass
from pathlib import Path

from contract.artifacts import path_error
from contract.phases import cost_problems, phase_problems
from contract.queues import machine_class_problem
from contract.values import ECHO_CHARS, clipped, field_path, metric_problem, sample_problems, value_problems
from contract.variants import Overrides

SCHEMA_VERSION = 2
READ_VERSIONS = (1, 2)  # what this server ingests
V2_RESULT_FIELDS = ("compile_phases", "kernel_profile", "cost")  # what version 1 lacks
SCHEMA_PATH = Path(__file__).with_name("schema") / f"run_document.v{SCHEMA_VERSION}.json"


@dataclass(frozen=True)
class DocumentError:
    """One problem with a document: ``field`` is a path such as ``results[3].status``."""

    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


class InvalidDocument(ValueError):
    """Raised with every problem found; ``errors[0]`` is the first in document order."""

    def __init__(self, errors: list[DocumentError]):
        self.errors = errors
        shown = "; ".join(str(e) for e in errors[:5])
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        super().__init__(f"invalid run document: {shown}{more}")


@functools.cache
def load_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


# The statuses a result may have (contract.vocabulary re-exports them with the rest of the words).
RESULT_STATUSES: tuple[str, ...] = tuple(load_schema()["$defs"]["result"]["properties"]["status"]["enum"])

# The names of a result's metrics, in the schema's order: the one list the runner and storage share.
METRIC_NAMES: tuple[str, ...] = tuple(load_schema()["$defs"]["result"]["properties"]["metrics"]["properties"])


# The most results one document holds (the schema's maxItems): what ingest, detection and the web
# server's timeout are sized for (bench/detect_large_document.py).
MAX_RESULTS: int = load_schema()["properties"]["results"]["maxItems"]

# A build's local label: what a build ref (``sha+local_label``) and a URL can carry, everywhere.
LOCAL_LABEL_PATTERN: str = load_schema()["properties"]["build"]["properties"]["local_label"]["pattern"]

# Every time in a document lies in these years (in UTC): the database and the pages hold them.
YEARS = (1970, 2200)
# A build's or a result's ``environment``, serialized, is refused past this many bytes.
MAX_ENVIRONMENT_BYTES = 64 * 1024


def build_section(environment: dict, *, label: str | None) -> dict:
    """The document's ``build`` from a probed environment: its label, or ``torch VERSION`` (+ overrides)."""
    build = dict(environment["build"])
    default = f"torch {build['torch_version']}"
    if build.get("overrides"):
        default += f" + {Overrides.recorded(build.get('overrides')).summary()}"
    build["label"] = label if label else default[:200]
    return build


def _is_datetime(value: object) -> bool:
    if not isinstance(value, str):
        return True
    parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        raise ValueError("needs a time zone (e.g. 2026-11-22T05:00:00+00:00)")
    if problem := time_problem(parsed):
        raise ValueError(problem)
    return True


def time_problem(moment: dt.datetime) -> str | None:
    """Why an aware ``moment`` cannot be stored (outside ``YEARS`` in UTC), or None."""
    try:
        year = moment.astimezone(dt.timezone.utc).year
    except OverflowError:  # 0001-01-01T00:00:00+14:00 is before year 1 in UTC
        year = 0
    return None if YEARS[0] <= year <= YEARS[1] else f"must be in the years {YEARS[0]}..{YEARS[1]} (UTC)"


def _is_uuid(value: object) -> bool:
    if isinstance(value, str):
        uuid.UUID(value)
    return True


def require_validator() -> None:
    """Fail now, before hours of cases, where the documents they make could not be checked."""
    try:
        _validator()
    except ImportError as exc:
        raise SystemExit(f"run documents are validated with jsonschema, which this interpreter lacks ({exc}); "
                         "install it (pip install jsonschema, see requirements.txt)") from None


@functools.cache
def _validator():
    # Imported here: the case subprocess runs in the build's interpreter, which needs only torch.
    import jsonschema  # noqa: PLC0415 (only where documents are checked)

    checker = jsonschema.FormatChecker(formats=())
    checker.checks("date-time", raises=ValueError)(_is_datetime)
    checker.checks("uuid", raises=ValueError)(_is_uuid)
    return jsonschema.Draft202012Validator(load_schema(), format_checker=checker)


def _format_test(check):
    """A format check of ours as jsonschema-rs calls it: True or False, never an exception."""

    def test(value: str) -> bool:
        try:
            return bool(check(value))
        except ValueError:
            return False

    return test


@functools.cache
def _fast_validator():
    """A jsonschema-rs validator of the same schema and formats, or None where it is not installed."""
    try:
        import jsonschema_rs  # noqa: PLC0415 (optional: the dashboard's fast path)
    except ImportError:
        return None
    return jsonschema_rs.Draft202012Validator(
        load_schema(), formats={"date-time": _format_test(_is_datetime), "uuid": _format_test(_is_uuid)}, validate_formats=True
    )


_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain_json(value: object) -> bool:
    """Whether ``value`` holds only what ``json.loads`` makes (dict with str keys, list, str, int,
    float, bool, None). jsonschema-rs also takes a tuple as an array and a Decimal as a number,
    which ``jsonschema`` refuses: anything else is left to ``jsonschema``."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            if not all(type(key) is str for key in item):
                return False
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        elif kind not in _JSON_SCALARS:
            return False
    return True


def _surely_valid(document: dict) -> bool:
    """True when jsonschema-rs finds nothing wrong (``jsonschema`` would not either); False when it
    is absent, refuses the document or cannot read it."""
    fast = _fast_validator()
    if fast is None or not _plain_json(document):
        return False
    try:
        return fast.is_valid(document)
    except Exception:  # noqa: BLE001 (whatever it cannot handle, jsonschema decides)
        return False


def _schema_error(error) -> DocumentError:
    path = list(error.absolute_path)
    if error.validator == "required":
        # jsonschema reports a missing key at the parent: name the missing field itself.
        missing = error.message.split("'")[1] if "'" in error.message else ""
        return DocumentError(field_path(path + [missing]), "this field is required")
    if error.validator == "additionalProperties":
        return DocumentError(field_path(path), clipped(error.message, 4 * ECHO_CHARS))
    if error.validator == "enum":
        allowed = ", ".join(repr(v) for v in error.validator_value)
        return DocumentError(field_path(path), f"{clipped(repr(error.instance))} is not one of {allowed}")
    if error.validator == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return DocumentError(field_path(path), f"expected {expected}, got {type(error.instance).__name__} {_short(error.instance)}")
    if error.validator == "format" and error.cause is not None:
        return DocumentError(field_path(path), f"{clipped(repr(error.instance))} is not a valid {error.validator_value}: {error.cause}")
    if error.validator in ("maxItems", "minItems") and isinstance(error.instance, list):
        bound = "at most" if error.validator == "maxItems" else "at least"
        return DocumentError(field_path(path), f"{len(error.instance)} items; {bound} {error.validator_value}")
    # jsonschema's own messages start with the value's repr: quote at most ECHO_CHARS of it.
    message, quoted = error.message, repr(error.instance)
    if message.startswith(quoted) and len(quoted) > ECHO_CHARS:
        message = clipped(quoted) + message[len(quoted):]
    return DocumentError(field_path(path), clipped(message, 4 * ECHO_CHARS))


def _short(value: object) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def environment_errors(field: str, environment: object) -> list[DocumentError]:
    size = len(json.dumps(environment, default=str).encode())
    if size > MAX_ENVIRONMENT_BYTES:
        return [DocumentError(field, f"is {size} bytes serialized; the limit is {MAX_ENVIRONMENT_BYTES} bytes")]
    return []


def _cross_field_errors(document: dict) -> list[DocumentError]:
    """What a JSON schema cannot say: references between results and workloads, duplicate cases,
    reserved machine classes, the size of environments, the bounds of metrics and samples."""
    errors: list[DocumentError] = []
    if problem := machine_class_problem(document["machine"]["machine_class"]):
        errors.append(DocumentError("machine.machine_class", problem))
    errors.extend(environment_errors("build.environment", document["build"].get("environment", {})))
    declared: dict[str, int] = {}
    for index, workload in enumerate(document.get("workloads", [])):
        name = workload["name"]
        if name in declared:
            errors.append(DocumentError(f"workloads[{index}].name", f"{name!r} is declared twice (also workloads[{declared[name]}])"))
        declared.setdefault(name, index)
    seen_cases: dict[tuple, int] = {}
    for index, result in enumerate(document.get("results", [])):
        if result["workload"] not in declared:
            errors.append(DocumentError(f"results[{index}].workload", f"{result['workload']!r} is not declared in workloads"))
        config = result["config"]
        key = (result["workload"], json.dumps(config, sort_keys=True))  # every field of the config, whatever they are
        if key in seen_cases:
            errors.append(DocumentError(f"results[{index}]", f"same workload and config as results[{seen_cases[key]}]"))
        seen_cases.setdefault(key, index)
        errors.extend(_unpaired_samples(index, result.get("samples") or {}))
        errors.extend(DocumentError(f, m) for f, m in sample_problems(result.get("samples"), ["results", index, "samples"]))
        for name, value in (result.get("metrics") or {}).items():
            if problem := metric_problem(name, value):
                errors.append(DocumentError(f"results[{index}].metrics.{name}", problem))
        errors.extend(environment_errors(f"results[{index}].environment", result.get("environment", {})))
        if "path" in (result.get("artifact") or {}) and (problem := path_error(result["artifact"]["path"])):
            errors.append(DocumentError(f"results[{index}].artifact.path", problem))  # never leaves the run's directory
        errors.extend(_version_2_errors(index, result, document["schema_version"]))
    return errors


def _version_2_errors(index: int, result: dict, version: int) -> list[DocumentError]:
    """A version-1 document has none of version 2's fields; their keys come from contract.phases."""
    errors = [DocumentError(f"results[{index}].{name}", "needs schema_version 2")
              for name in V2_RESULT_FIELDS if version < 2 and name in result]
    errors += [DocumentError(f"results[{index}].compile_phases.{f}", m) for f, m in phase_problems(result.get("compile_phases"))]
    errors += [DocumentError(f"results[{index}].cost.{f}", m) for f, m in cost_problems(result.get("cost"))]
    return errors


def _unpaired_samples(index: int, samples: dict) -> list[DocumentError]:
    """Samples are per pair: eager block i, compiled block i (and the host probe before them)."""
    pairs = len(samples.get("eager_ms", []))
    return [
        DocumentError(f"results[{index}].samples.{key}", f"has {len(samples[key])} values for {pairs} eager_ms values (one per pair)")
        for key in ("compiled_ms", "host_probe_ms")
        if key in samples and len(samples[key]) != pairs
    ]


def validate_document(document: object) -> list[DocumentError]:
    """Every problem with ``document`` (already parsed JSON), schema errors first, in document order."""
    if not isinstance(document, dict):
        return [DocumentError("", f"expected a JSON object, got {type(document).__name__}")]
    version = document.get("schema_version")
    if version not in READ_VERSIONS or isinstance(version, bool):
        readable = " and ".join(str(v) for v in READ_VERSIONS)
        return [DocumentError("schema_version", f"unsupported version {version!r}; this server reads versions {readable}")]
    # Too many results is refused before anything is read of them: checking 40,000 took longer than
    # a web server waits (issue #46), and storing and detecting them longer than a worker should.
    results = document.get("results")
    if isinstance(results, list) and len(results) > MAX_RESULTS:
        return [DocumentError("results", f"{len(results)} results; a document holds at most {MAX_RESULTS} "
                                         "(send a larger run in parts under its run id: complete=false)")]
    # What no JSON schema says (NUL, surrogates, NaN, nesting), checked first: such a value is
    # refused naming it, whatever else is wrong with the document (contract.values).
    if problems := value_problems(document):
        return [DocumentError(f, m) for f, m in problems]
    if not _surely_valid(document):
        schema_errors = sorted(_validator().iter_errors(document), key=lambda e: [str(p) for p in e.absolute_path])
        if schema_errors:
            return [_schema_error(e) for e in schema_errors]
    return _cross_field_errors(document)


def check_document(document: object) -> dict:
    """Return ``document`` if valid, else raise :class:`InvalidDocument` naming every bad field."""
    errors = validate_document(document)
    if errors:
        raise InvalidDocument(errors)
    return document  # type: ignore[return-value]


def check_size(size: int, *, max_bytes: int) -> None:
    if size > max_bytes:
        raise InvalidDocument([DocumentError("", f"document is {size} bytes; the limit is {max_bytes} bytes")])


def load_document(raw: bytes | str, *, max_bytes: int) -> object:
    """Parse a serialized document without checking it, refusing anything over ``max_bytes`` before
    parsing it."""
    check_size(len(raw.encode() if isinstance(raw, str) else raw), max_bytes=max_bytes)
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidDocument([DocumentError("", f"not valid JSON: {exc}")]) from None
    except ValueError as exc:  # an integer past Python's digit limit (4300)
        raise InvalidDocument([DocumentError("", f"not a readable number: {exc}")]) from None
    except RecursionError:
        raise InvalidDocument([DocumentError("", "nested too deep")]) from None
