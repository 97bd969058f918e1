"""Command-line argument types shared by ``python -m runner`` and the dashboard's management commands."""
from __future__ import annotations

import argparse

from contract import dims as dim_choice
from contract.suites import suite_problem
from contract.vocabulary import MACHINE_CLASS_HELP, is_machine_class


def name_list(text: str) -> list[str]:
    """``a, b,,a`` -> ``['a', 'b']``: comma-separated names, blanks and repeats dropped."""
    return list(dict.fromkeys(v.strip() for v in text.split(",") if v.strip()))


def machine_class(text: str) -> str:
    if not is_machine_class(text):
        raise argparse.ArgumentTypeError(MACHINE_CLASS_HELP)
    return text


def non_negative(kind=int):
    """An argument type: a number of ``kind`` (int or float), zero or more."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {'whole ' if kind is int else ''}number") from None
        if value < 0:
            raise argparse.ArgumentTypeError("must not be negative")
        return value

    return parse


def suite_name(text: str) -> str:
    """``--suite``: a suite (core, hf, timm, torchvision, all); a size is named for ``--size``."""
    if problem := suite_problem(text, size_field="--size"):
        raise argparse.ArgumentTypeError(problem)
    return text


DIMS_HELP = ("which dynamic dims backed/unbacked mark, by role (batch, sequence) or input_name:dim, as the harness's "
             "--dynamic-batch-only / --unbacked-batch-only; default: every declared dim (docs/case-config.md)")


def dims(text: str) -> tuple[str, ...]:
    """``batch,sequence`` -> ``('batch', 'sequence')`` (contract.dims); none given is refused."""
    try:
        names = dim_choice.parse(text)
    except dim_choice.DimsError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if names is None:
        raise argparse.ArgumentTypeError("(none given): name dim roles (batch, sequence) or input_name:dim")
    return names
