"""A case's configuration as one value: how a workload is compiled and fed (docs/case-config.md).

``CaseConfig`` owns the configuration's fields: the compile mode (a compile path such as export is
part of its mode's name), the shape regime and which dynamic dims it marks, the dtype (or ``amp``)
and the device. Training or inference stays the workload's property (``Workload.phase``): one
workload measures one of them, so no series could tell two configurations apart by it.

It gives its ``key`` (the stable string storage keeps as the configuration's one identity), its
``label`` (what pages show), its part of a series signature, and its run-document ``config``
object; it is parsed back from each. The allowed values are read from ``contract.vocabulary`` (the
run document's schema) when a configuration is made, never listed here.

Pure Python: no Django, no torch.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

from contract import vocabulary

# The axes in key order: each document field, the vocabulary name of its allowed values, and its
# short word (page parameters, the runner's flags and table headers).
AXES: tuple[tuple[str, str, str], ...] = (
    ("compile_mode", "COMPILE_MODES", "mode"),
    ("shape_regime", "SHAPE_REGIMES", "regime"),
    ("dtype", "DTYPES", "dtype"),
    ("device", "DEVICES", "device"),
)
AXIS_NAMES: tuple[str, ...] = tuple(name for name, _, _ in AXES)
SHORT: dict[str, str] = {name: short for name, _, short in AXES}
# What a label (and so a page's pickers) shows: the device is the machine class's.
SHOWN_AXES: tuple[str, ...] = ("compile_mode", "shape_regime", "dtype")
# Optional fields, written into the key and the document only when set (``name=value``).
OPTIONAL = ("dims",)
KEY_SEPARATOR = "/"
STATIC = "static"
ANY = "*"  # an axis left open in a ``pattern`` key


class CaseConfigError(ValueError):
    """A configuration that cannot be made: ``field`` names the document field at fault."""

    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


def allowed(axis: str) -> tuple[str, ...]:
    """The values ``axis`` may take now (read from the vocabulary at each call)."""
    return tuple(getattr(vocabulary, {name: words for name, words, _ in AXES}[axis]))


@dataclass(frozen=True)
class CaseConfig:
    """compile mode x shape regime (x which dims) x dtype x device.

    ``dims``: the dynamic dims the regime marks, by role (``batch``, ``sequence``) or by name
    (``input_name:dim``), as ``contract.dims`` selects them; ``None`` marks every dim the workload
    declares. A static regime marks none.
    """

    compile_mode: str
    shape_regime: str
    dtype: str
    device: str
    dims: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        for axis in AXIS_NAMES:
            value = getattr(self, axis)
            if not isinstance(value, str) or value not in allowed(axis):
                raise CaseConfigError(axis, f"unknown {axis.replace('_', ' ')} {value!r}; expected one of {', '.join(allowed(axis))}")
        if self.dims is not None:
            if isinstance(self.dims, str) or not all(isinstance(d, str) and d and _plain(d) for d in self.dims) or not self.dims:
                raise CaseConfigError("dims", f"{self.dims!r}: a non-empty list of dim roles (batch, sequence) or input_name:dim names")
            if self.shape_regime == STATIC:
                raise CaseConfigError("dims", "a static regime marks no dims")
            object.__setattr__(self, "dims", tuple(self.dims))

    # --- what it gives ------------------------------------------------------------------------------
    @property
    def key(self) -> str:
        """The configuration's stable identity, e.g. ``default/static/float32/cuda`` (then
        ``/dims=batch`` where dims are named)."""
        parts = [getattr(self, axis) for axis in AXIS_NAMES]
        if self.dims is not None:
            parts.append("dims=" + ",".join(self.dims))
        return KEY_SEPARATOR.join(parts)

    @property
    def label(self) -> str:
        """What pages show: ``default · static · float32`` (the device is the machine class's)."""
        shown = {axis: getattr(self, axis) for axis in SHOWN_AXES}
        if self.dims is not None:
            shown["shape_regime"] += f" ({', '.join(self.dims)})"
        return " · ".join(shown.values())

    def page_parameters(self) -> dict[str, str]:
        """The query parameters a page picks this configuration by: ``{"mode": ..., "regime": ..., "dtype": ...}``
        (and ``"dims": "batch"`` where dims are named)."""
        parameters = {SHORT[axis]: getattr(self, axis) for axis in SHOWN_AXES}
        if self.dims is not None:
            parameters["dims"] = ",".join(self.dims)
        return parameters

    def signature_part(self) -> list[str]:
        """Its part of a series signature: the four axes as signatures have always had them, then
        an optional field only when set, so no stored signature changes."""
        part = [getattr(self, axis) for axis in AXIS_NAMES]
        if self.dims is not None:
            part.append("dims=" + ",".join(self.dims))
        return part

    def as_document(self) -> dict:
        """The run document's ``config`` object (also what storage keeps as the config's tags)."""
        document = {axis: getattr(self, axis) for axis in AXIS_NAMES}
        if self.dims is not None:
            document["dims"] = list(self.dims)
        return document

    def replace(self, **changes) -> "CaseConfig":
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        return CaseConfig(**{**values, **changes})

    # --- parsing ------------------------------------------------------------------------------------
    @classmethod
    def from_document(cls, config: object) -> "CaseConfig":
        """From a run document's (or storage's tags) ``config`` object; an unknown or missing field
        raises ``CaseConfigError`` naming it."""
        if not isinstance(config, dict):
            raise CaseConfigError("config", f"expected an object, got {type(config).__name__}")
        for name in config:
            if name not in AXIS_NAMES and name not in OPTIONAL:
                raise CaseConfigError(str(name), f"is not a configuration field (fields: {', '.join(AXIS_NAMES + OPTIONAL)})")
        for axis in AXIS_NAMES:
            if axis not in config:
                raise CaseConfigError(axis, "this field is required")
        dims = config.get("dims")
        if dims is not None and not isinstance(dims, (list, tuple)):
            raise CaseConfigError("dims", f"expected a list of dim roles or input_name:dim names, got {type(dims).__name__}")
        return cls(**{axis: config[axis] for axis in AXIS_NAMES}, dims=tuple(dims) if dims is not None else None)

    @classmethod
    def picked_from(cls, mapping: dict) -> "CaseConfig":
        """From a mapping that holds more than a configuration (a case spec as a message carries it)."""
        return cls.from_document({name: mapping[name] for name in AXIS_NAMES + OPTIONAL if name in mapping})

    @classmethod
    def from_key(cls, key: object) -> "CaseConfig":
        """The configuration a ``key`` names; a malformed key raises ``CaseConfigError`` ("key")."""
        if not isinstance(key, str):
            raise CaseConfigError("key", f"expected a string, got {type(key).__name__}")
        parts = key.split(KEY_SEPARATOR)
        if len(parts) < len(AXIS_NAMES):
            raise CaseConfigError("key", f"{key!r} names {len(parts)} of {len(AXIS_NAMES)} fields ({KEY_SEPARATOR.join(AXIS_NAMES)})")
        document: dict = dict(zip(AXIS_NAMES, parts))
        for extra in parts[len(AXIS_NAMES):]:
            name, _, value = extra.partition("=")
            if name not in OPTIONAL or not value or name in document:
                raise CaseConfigError("key", f"{key!r}: {extra!r} is not an optional field (name=value; {', '.join(OPTIONAL)})")
            document[name] = value.split(",")
        return cls.from_document(document)

    @staticmethod
    def pattern(dims: tuple[str, ...] | None = None, **known: str) -> str:
        """A key with the axes not given left open (``*``): the identity of what several
        configurations share, e.g. ``pattern(compile_mode="default", dtype="float32")`` is
        ``default/*/float32/*`` (a backed-vs-unbacked summary over every regime and device);
        with ``dims``, ``default/*/float32/*/dims=batch`` (a pair is formed within the same dims)."""
        unknown = set(known) - set(AXIS_NAMES)
        if unknown:
            raise CaseConfigError(sorted(unknown)[0], "is not a configuration axis")
        for axis, value in known.items():
            if value not in allowed(axis):
                raise CaseConfigError(axis, f"unknown {axis.replace('_', ' ')} {value!r}; expected one of {', '.join(allowed(axis))}")
        parts = [known.get(axis, ANY) for axis in AXIS_NAMES]
        if dims is not None:
            parts.append("dims=" + ",".join(CaseConfig("default", "backed", "float32", "cpu", dims=dims).dims))
        return KEY_SEPARATOR.join(parts)

    def __str__(self) -> str:
        return self.key


def _plain(name: str) -> bool:
    """A dim name that fits a key: no separator, comma or '='."""
    return not any(c in name for c in (KEY_SEPARATOR, ",", "=")) and name.isprintable()
