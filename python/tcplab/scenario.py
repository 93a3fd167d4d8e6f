"""Scenario documents on the Python side: read one from a TOML file, a built-in study, TOML text
or a dict; apply dotted-key overrides (`flows.0.cc=bbr`); validate and resolve it through the
Rust core, which owns the schema; write a resolved scenario back as TOML.

A document is the plain dict that TOML parses to. Every problem with one raises
`ScenarioError` with a single line that starts with where the problem is (a dotted key path,
a file name or the offending `--set` text), like the errors of the Rust validator. A setting
that is allowed but unusual is reported by a `ScenarioWarning`, printed as one line
`warning: <key path>: <what is unusual>` on stderr, once per message and process.
"""

from __future__ import annotations

import copy
import errno
import json
import math
import numbers
import os
import stat
import sys
import tomllib
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomli_w

from . import _core, studies
from ._core import ScenarioError

ScenarioSource = str | Path | Mapping[str, Any]
"""A path to a .toml file, a study name, TOML text, or an already parsed document."""


class ScenarioWarning(UserWarning):
    """A setting the core accepts but finds unusual; the message starts with its key path."""


_show_other_warning = warnings.showwarning
# The messages already reported in this process: a scenario validated twice (as `tcplab run`
# does) reports each once. (Python's own registry forgets whenever a filter changes, as
# importing some libraries does.)
_REPORTED: set[str] = set()


def _show_warning(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any = None, line: str | None = None
) -> None:
    """Prints a ScenarioWarning as `warning: <message>`, like the CLI's `error: ...` lines;
    any other warning as Python would."""
    if issubclass(category, ScenarioWarning):
        print(f"warning: {message}", file=file or sys.stderr)
    else:
        _show_other_warning(message, category, filename, lineno, file, line)


warnings.showwarning = _show_warning


def load(source: ScenarioSource) -> dict[str, Any]:
    """Parses a scenario without validating it.

    A `Path` is always a file. A string is a file if one exists at that path, else a study
    name (`tcplab list`), else `SOURCE:CASE` (a case of a study or of a file with
    `[study.axes]`, see `tcplab.studies`), else TOML text if it contains `=`. A mapping is
    deep-copied. The `[study]` table is removed: it describes cases, not a scenario.
    """
    if isinstance(source, Mapping):
        return _without_study_table(copy.deepcopy(dict(source)))
    if isinstance(source, Path) or _is_file(source):
        return _without_study_table(_read_toml_file(Path(source)))
    study = studies.find(source)
    if study is not None:
        return _without_study_table(_read_toml_file(study.path))
    base, separator, case = source.rpartition(studies.CASE_SEPARATOR)
    if separator and "=" not in source and (_is_file(base) or studies.find(base) is not None):
        return _load_case(base, case)
    if "=" in source:
        return _without_study_table(_parse_toml(source, origin="scenario text"))
    problem = _not_a_file(source)
    if problem:
        raise ScenarioError(f"{source}: {problem}")
    raise ScenarioError(f"{source}: no such scenario file or study (studies: {', '.join(studies.all_studies())})")


def _load_case(base: str, case: str) -> dict[str, Any]:
    """Case `case` of the study or file `base`: its overrides applied, named NAME-CASE."""
    study = studies.find(base)
    path = Path(base) if study is None or _is_file(base) else study.path
    document = _read_toml_file(path)
    try:
        cases = studies.cases_of(document, str(path))
    except studies.StudyFormatError as error:
        raise ScenarioError(str(error)) from None
    if case not in cases:
        known = ", ".join(cases) if cases else "none: it has no [study.axes] table"
        raise ScenarioError(f"{base}{studies.CASE_SEPARATOR}{case}: no such case (cases: {known})")
    result = apply_overrides(_without_study_table(document), cases[case])
    result["name"] = f"{document.get('name') or path.stem}-{case}"
    return result


def _without_study_table(document: dict[str, Any]) -> dict[str, Any]:
    document.pop(studies.STUDY_TABLE, None)
    return document


def prepare(source: ScenarioSource, overrides: Mapping[str, Any] | None = None, **settings: Any) -> dict[str, Any]:
    """Loads a scenario and applies `overrides` (dotted keys) then `settings`, whose keyword
    names use `__` for the dots: `prepare("x.toml", duration="5s", flows__0__cc="bbr")`."""
    dotted_settings = {name.replace("__", "."): value for name, value in settings.items()}
    return apply_overrides(load(source), {**(overrides or {}), **dotted_settings})


def resolve(source: ScenarioSource, overrides: Mapping[str, Any] | None = None, **settings: Any) -> dict[str, Any]:
    """The validated scenario with every default filled in, as the simulator will run it."""
    return validate(prepare(source, overrides, **settings))


def validate(document: Mapping[str, Any]) -> dict[str, Any]:
    """Validates a document with the Rust core and returns it resolved (see `resolved_document`);
    each setting the core finds unusual is reported as a `ScenarioWarning`."""
    scenario_json, unusual = _core.validate(to_json(document))
    warn_unusual(unusual, stacklevel=3)
    return resolved_document(scenario_json)


def warn_unusual(messages: list[str], stacklevel: int = 2) -> None:
    """Reports each setting the core finds unusual as a `ScenarioWarning`, once per process
    (`stacklevel` as for `warnings.warn` called here)."""
    for message in messages:
        if message not in _REPORTED:
            warnings.warn(message, ScenarioWarning, stacklevel=stacklevel)
            _REPORTED.add(message)


def resolved_document(scenario_json: str) -> dict[str, Any]:
    """A resolved scenario from the core's JSON, with absent optional keys (JSON null) left out
    so that it is exactly what a TOML file can hold."""
    return without_nulls(json.loads(scenario_json))


def apply_overrides(document: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `document` with each `"a.b.0.c": value` of `overrides` set, in order.

    Missing tables are created; a numeric segment indexes an existing array element."""
    result = copy.deepcopy(dict(document))
    for path, value in overrides.items():
        _set_path(result, path, copy.deepcopy(value))
    return result


MAX_SEED = 2**64 - 1  # the core's seeds are u64


def check_seed(seed: object, where: str = "seed") -> None:
    """Raises ScenarioError unless `seed` is None or an integer the core takes (0 ..= 2^64 - 1)."""
    if seed is None:
        return
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed <= MAX_SEED:
        raise ScenarioError(f"{where} {seed!r}: not a seed; allowed: an integer from 0 to 2^64-1 ({MAX_SEED})")


def parse_assignment(text: str) -> tuple[str, Any]:
    """Splits a `--set KEY=VALUE` argument; the value is parsed with `parse_value`."""
    key, equals, value = text.partition("=")
    if not equals or not key.strip():
        raise ScenarioError(f"--set {text!r}: expected KEY=VALUE, e.g. --set flows.0.cc=bbr")
    return key.strip(), parse_value(value.strip())


def parse_value(text: str) -> Any:
    """A `--set` value: TOML (`false`, `0.8`, `[1, 2]`, `{kind="cubic", beta=0.8}`, `"text"`)
    when it parses as a plain TOML value, else the text itself (`bbr`, `5s`, `10Mbps`).

    `inf`, `nan` and dates stay text: scenarios write those as strings."""
    try:
        parsed = tomllib.loads(f"value = {text}")
    except tomllib.TOMLDecodeError:
        return text
    if len(parsed) != 1 or _first_unsupported(parsed["value"]) is not None:
        return text
    return parsed["value"]


def to_json(document: Mapping[str, Any]) -> str:
    """The document as JSON text for the core; rejects values JSON cannot carry."""
    unsupported = _first_unsupported(document)
    if unsupported is not None:
        path, value = unsupported
        raise ScenarioError(
            f'{path}: {value!r} is not a scenario value; write infinities and times as strings such as "inf" or "10s"'
        )
    return json.dumps(document)


def to_toml(document: Mapping[str, Any], header: str | None = None) -> str:
    """The document as TOML text, with `header` (one or more lines) as leading comments."""
    comments = "".join(f"# {line}\n" for line in header.splitlines()) if header else ""
    return comments + tomli_w.dumps(without_nulls(document))


def without_nulls(value: Any) -> Any:
    """`value` with every `None` table entry removed, at any depth (TOML has no null)."""
    if isinstance(value, Mapping):
        return {key: without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [without_nulls(item) for item in value]
    return value


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file()
    except (OSError, ValueError):  # a name too long for a path, or one with a NUL byte
        return False


def _not_a_file(text: str) -> str | None:
    """What is at path `text` when it is there but not a regular file ("is a directory, not a
    scenario file", "symbolic link loop"); None when nothing is, or a regular file."""
    try:
        return _kind_problem(os.stat(text).st_mode)
    except OSError as error:
        if error.errno in (errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG) and not os.path.islink(text):
            return None
        return _os_problem(error)
    except ValueError:  # a NUL byte: not a path
        return None


def _kind_problem(mode: int) -> str | None:
    kinds = [
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ]
    kind = next((name for test, name in kinds if test(mode)), None)
    return f"is {kind}, not a scenario file" if kind else None


def _os_problem(error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "symbolic link loop"
    if error.errno == errno.ENOENT and error.filename and os.path.islink(error.filename):
        return f"dangling symbolic link (to {os.readlink(error.filename)})"
    return f"cannot read: {error.strerror}"


def _read_toml_file(path: Path) -> dict[str, Any]:
    try:
        # Non-blocking, and checked before reading: a FIFO must not hang the open or the read.
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as error:
        raise ScenarioError(f"{path}: {_os_problem(error)}") from None
    with os.fdopen(descriptor, "rb") as file:
        problem = _kind_problem(os.fstat(descriptor).st_mode)
        if problem:
            raise ScenarioError(f"{path}: {problem}")
        try:
            text = file.read().decode("utf-8")
        except (OSError, UnicodeDecodeError) as error:
            reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
            raise ScenarioError(f"{path}: cannot read: {reason}") from None
    return _parse_toml(text, origin=str(path))


def _parse_toml(text: str, origin: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ScenarioError(f"{origin}: invalid TOML: {error}") from None


def _set_path(document: dict[str, Any], path: str, value: Any) -> None:
    keys = path.split(".")
    if not all(keys):
        raise ScenarioError(f"{path}: empty key in the path; write keys like flows.0.cc")
    container: Any = document
    for depth, key in enumerate(keys):
        here, parent = ".".join(keys[: depth + 1]), ".".join(keys[:depth])
        is_last = depth == len(keys) - 1
        if isinstance(container, list):
            key = _array_index(container, key, here, parent)
        elif not isinstance(container, dict):
            raise ScenarioError(f"{here}: {parent} is {_describe(container)}, not a table")
        if is_last:
            container[key] = value
        elif isinstance(container, dict):
            container = container.setdefault(key, {})
        else:
            container = container[key]


def _array_index(array: list[Any], key: str, here: str, parent: str) -> int:
    if not (key.isascii() and key.isdigit()):
        raise ScenarioError(f"{here}: {parent} is an array; use an index, e.g. {parent}.0")
    index = int(key)
    if index >= len(array):
        raise ScenarioError(f"{here}: index {index} is past the end of {parent} (length {len(array)})")
    return index


def _describe(value: Any) -> str:
    kind = {bool: "a boolean", int: "an integer", float: "a float", str: "a string"}
    return f"{kind.get(type(value), type(value).__name__)} ({value!r})"


def _first_unsupported(value: Any, path: str = "") -> tuple[str, Any] | None:
    """The dotted path and value of the first item that JSON cannot carry: a non-finite float,
    a date or time, or any other non-plain object."""
    if isinstance(value, Mapping):
        children = ((str(key), item) for key, item in value.items())
    elif isinstance(value, (list, tuple)):
        children = ((str(index), item) for index, item in enumerate(value))
    elif isinstance(value, float):
        return None if math.isfinite(value) else (path, value)
    elif value is None or isinstance(value, (str, int)):
        return None
    else:
        return (path, value)
    for key, item in children:
        found = _first_unsupported(item, f"{path}.{key}" if path else key)
        if found is not None:
            return found
    return None
