"""Make llm-common use toolselect, without editing llm-common.

::

    import toolselect.llm_common
    toolselect.llm_common.install()     # once, at start-up

llm-common's executor and runtime import ``ToolSelector`` at module level
(``from llm_common.agents.tool_selector import ToolSelector``), so replacing
the class in ``llm_common.agents.tool_selector`` alone would miss the modules
that already bound it. :func:`install` replaces ``ToolSelector`` and
``ToolSelectionConfig`` there and in every ``llm_common`` module already
imported that bound the original objects, under whatever name; modules
imported later read the replaced attributes. :func:`uninstall` puts every
original back.

This module imports nothing from llm-common until :func:`install` is called,
and needs nothing from it but those two names.
"""

from __future__ import annotations

import importlib
import sys
import threading
from typing import Any, Dict, List, Tuple

from .config import ToolSelectionConfig
from .selector import ToolSelector

#: The module that defines the names replaced.
TARGET = "llm_common.agents.tool_selector"
#: The package whose modules are searched for bindings.
PACKAGE = "llm_common"

_REPLACEMENTS: Dict[str, Any] = {"ToolSelector": ToolSelector, "ToolSelectionConfig": ToolSelectionConfig}

_lock = threading.Lock()
_originals: Dict[str, Any] = {}               # name -> llm-common's object
_patched: List[Tuple[Any, str, Any]] = []      # (module, attribute, original value)


def install() -> List[str]:
    """Make llm-common use toolselect's ``ToolSelector`` and
    ``ToolSelectionConfig``. Imports ``llm_common.agents.tool_selector``.
    Calling it again also patches llm-common modules imported since.
    Returns the ``module.attribute`` names replaced by this call.

    Raises ImportError when llm-common is not installed or lacks one of
    the names."""
    with _lock:
        target = importlib.import_module(TARGET)
        if not _originals:
            # Every name is checked before any is recorded or replaced: a
            # version lacking one is refused whole, and leaves nothing behind
            # that a later install() would take for a complete record.
            missing = [name for name in _REPLACEMENTS if not hasattr(target, name)]
            if missing:
                raise ImportError(f"{TARGET} has no {' and no '.join(missing)}: this llm-common version cannot be "
                                  "patched (nothing was replaced)")
            _originals.update((name, getattr(target, name)) for name in _REPLACEMENTS)
        originals = {id(v): k for k, v in _originals.items()}
        todo: List[Tuple[str, Any, str, Any]] = []  # (module name, module, attribute, original value)
        for modname, mod in sorted(sys.modules.items()):
            if mod is None or not (modname == PACKAGE or modname.startswith(PACKAGE + ".")):
                continue
            for attr, value in list(vars(mod).items()):
                orig = originals.get(id(value))
                if orig is None or value is not _originals[orig]:
                    continue
                todo.append((modname, mod, attr, value))
        # All or nothing: a module that refuses the assignment undoes this call's replacements.
        done: List[Tuple[str, Any, str, Any]] = []
        try:
            for modname, mod, attr, value in todo:
                setattr(mod, attr, _REPLACEMENTS[originals[id(value)]])
                done.append((modname, mod, attr, value))
        except BaseException:
            for _, mod, attr, value in reversed(done):
                setattr(mod, attr, value)
            if not _patched:
                _originals.clear()
            raise
        _patched.extend((mod, attr, value) for _, mod, attr, value in done)
        return [f"{modname}.{attr}" for modname, _, attr, _ in done]


def uninstall() -> None:
    """Restore every attribute :func:`install` replaced. Does nothing when
    not installed."""
    with _lock:
        while _patched:
            mod, attr, value = _patched.pop()
            if getattr(mod, attr, None) is _REPLACEMENTS.get(_name_of(value)):
                setattr(mod, attr, value)
        _originals.clear()


def installed() -> bool:
    """Whether llm-common currently uses toolselect."""
    return bool(_patched)


def _name_of(value: Any) -> str:
    for k, v in _originals.items():
        if v is value:
            return k
    return ""
