"""ToolSelector: the Go selector behind the Python API agent code already uses.

The names live in private modules, one concept each (``_selector``: the
selector; ``_chat_client``: a caller's chat client and its replies;
``_native_cache``: the native selectors and compiled registries selectors
hold; ``_workers``: threads for blocking native calls); this module keeps
them importable from ``toolselect.selector``, where they have always been.
"""

from ._selector import MessageFactory, ToolSelector, log

__all__ = ["MessageFactory", "ToolSelector", "log"]
