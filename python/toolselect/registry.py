"""ToolRegistry: the Go registry with Python callables attached.

The names live in private modules, one concept each (``_registry``: the
registry and registration; ``_run``: running a call under the policy, with
its audit record; ``_arguments``: argument documents and their verdicts;
``_llm_common_registry``: llm-common's registry surface); this module keeps
them importable from ``toolselect.registry``, where they have always been.
"""

from ._arguments import Arguments, Validation, Violation
from ._llm_common_registry import CallerRegistry, RegisteredTool, ToolDefinition
from ._registry import FORMATS, F, T_Tool, ToolRegistry

__all__ = ["Arguments", "CallerRegistry", "F", "FORMATS", "RegisteredTool", "T_Tool", "ToolDefinition", "ToolRegistry",
           "Validation", "Violation"]
