"""A faster `__init__` for the frozen dataclasses made by the ten thousand per document.

A frozen dataclass sets each field with `object.__setattr__(self, name, value)`, which
looks the attribute up by name on every call; with `slots=True` each field is a slot
whose descriptor can set it directly.  `quick_init` gives a class an `__init__` that
calls those descriptors: the same signature, defaults and `__post_init__`, the class
still frozen (assignment still raises), equality, hashing and repr untouched.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def quick_init(cls: type[T]) -> type[T]:
    """`cls` (a frozen dataclass with slots) with an `__init__` that sets its slots
    directly.  Only plain fields: no `default_factory`, `init=False` or keyword-only
    field, which this would get wrong (it raises TypeError for them instead)."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in vars(cls):
        raise TypeError(f"quick_init takes a frozen dataclass with slots, not {cls.__name__}")
    names: dict[str, Any] = {}
    arguments: list[str] = []
    lines: list[str] = []
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]  # checked above
        if not field.init or field.kw_only or field.default_factory is not dataclasses.MISSING:
            raise TypeError(f"quick_init cannot build {cls.__name__}.{field.name}")
        names[f"_set_{field.name}"] = vars(cls)[field.name].__set__
        if field.default is dataclasses.MISSING:
            arguments.append(field.name)
        else:
            names[f"_default_{field.name}"] = field.default
            arguments.append(f"{field.name}=_default_{field.name}")
        lines.append(f"    _set_{field.name}(self, {field.name})")
    if hasattr(cls, "__post_init__"):
        lines.append("    self.__post_init__()")
    body = "\n".join(lines) if lines else "    pass"
    source = f"def __init__(self, {', '.join(arguments)}):\n{body}\n"
    exec(source, names)  # as dataclasses builds its own __init__
    init = names["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init  # type: ignore[method-assign]
    return cls
