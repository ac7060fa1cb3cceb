"""ToolSelectionConfig: the selector's settings, read from the environment on request."""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, Mapping, Optional

ENV_PREFIX = "LLM_COMMON_TOOL_SELECTION_"

_TRUE = {"1", "true", "t", "yes", "y", "on"}
_FALSE = {"0", "false", "f", "no", "n", "off"}

MODES = ("json", "native")
MAX_RESPONSE_BYTES_DEFAULT = 4 << 20  # 4 MiB, as on the Go side
MAX_RESPONSE_BYTES_RANGE = (1024, 1 << 30)
OFFER_TOKENS_DEFAULT, OFFER_TOKENS_RANGE = 10000, (1, 10_000_000)
TOP_K_DEFAULT, TOP_K_RANGE = 10, (1, 1000)
MAX_SEARCHES_DEFAULT, MAX_SEARCHES_RANGE = 1, (0, 10)


@dataclass
class ToolSelectionConfig:
    """Selector settings, with the same names, defaults and ranges as the Go side.

    ========================= ======================================== ============
    field                     environment variable                     default
    ========================= ======================================== ============
    model                     LLM_COMMON_TOOL_SELECTION_MODEL          glm-4.5-air
    fallback_model            LLM_COMMON_TOOL_SELECTION_FALLBACK_MODEL (none)
    max_calls (1-20)          LLM_COMMON_TOOL_SELECTION_MAX_CALLS      5
    timeout_s (1-120)         LLM_COMMON_TOOL_SELECTION_TIMEOUT_S      30
    temperature (0-1)         LLM_COMMON_TOOL_SELECTION_TEMPERATURE    0.0
    fail_closed               LLM_COMMON_TOOL_SELECTION_FAIL_CLOSED    True
    mode (json|native)        LLM_COMMON_TOOL_SELECTION_MODE           json
    max_response_bytes        LLM_COMMON_TOOL_SELECTION_MAX_RESPONSE_  4194304
    (1024-1073741824)         BYTES
    offer_tokens (1-10000000) LLM_COMMON_TOOL_SELECTION_OFFER_TOKENS   10000
    top_k (1-1000)            LLM_COMMON_TOOL_SELECTION_TOP_K          10
    max_searches (0-10)       LLM_COMMON_TOOL_SELECTION_MAX_SEARCHES   1
    feedback                  LLM_COMMON_TOOL_SELECTION_FEEDBACK       None (off)
    base_url                  (read at call time, see ToolSelector)    None
    api_key                   (read at call time, see ToolSelector)    None
    ========================= ======================================== ============

    Out-of-range or mistyped values raise :class:`ValueError` naming the field.
    """

    model: str = "glm-4.5-air"
    fallback_model: Optional[str] = None
    max_calls: int = 5
    timeout_s: int = 30
    temperature: float = 0.0
    fail_closed: bool = True
    base_url: Optional[str] = None
    api_key: Optional[str] = field(default=None, repr=False)
    #: "json" (the ``calls`` contract, the default) or "native" (provider tool calls).
    mode: str = "json"
    #: The largest response body the built-in HTTP transport (``client=None``)
    #: reads; a larger one is refused unread and the attempt fails.
    max_response_bytes: int = MAX_RESPONSE_BYTES_DEFAULT
    #: The offer budget: every eligible tool is offered while their view (the
    #: tools as the request carries them) is at most this many tokens; above
    #: it, the ``top_k`` ranked for the task.
    offer_tokens: int = OFFER_TOKENS_DEFAULT
    #: How many ranked tools are offered above the budget, and after a search.
    top_k: int = TOP_K_DEFAULT
    #: Search rounds per attempt when the offer is a ranked part of the
    #: registry: the model may answer ``{"calls": [], "search": "..."}`` and is
    #: asked again with the best matches for its words (0 turns this off).
    max_searches: int = MAX_SEARCHES_DEFAULT
    #: Where successful selections are recorded as ranking feedback: a JSON
    #: Lines file path or a ``redis://`` URL; None is off. Loaded when the
    #: selector is first used; the ranking (offer budget, ``top_k``) learns from it.
    feedback: Optional[str] = None

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the first bad field."""
        if not isinstance(self.model, str) or not self.model.strip():
            raise ValueError(f"model must be a non-empty string, got {self.model!r}")
        if self.fallback_model is not None and (not isinstance(self.fallback_model, str)):
            raise ValueError(f"fallback_model must be a string or None, got {self.fallback_model!r}")
        if self.fallback_model is not None and not self.fallback_model.strip():
            self.fallback_model = None
        _int_range("max_calls", self.max_calls, 1, 20)
        _int_range("timeout_s", self.timeout_s, 1, 120)
        if isinstance(self.temperature, bool) or not isinstance(self.temperature, (int, float)) \
                or not math.isfinite(self.temperature) or not 0.0 <= self.temperature <= 1.0:
            raise ValueError(f"temperature must be a number from 0 to 1, got {self.temperature!r}")
        self.temperature = float(self.temperature)
        if not isinstance(self.fail_closed, bool):
            raise ValueError(f"fail_closed must be a bool, got {self.fail_closed!r}")
        for name in ("base_url", "api_key"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, str):
                raise ValueError(f"{name} must be a string or None")
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        _int_range("max_response_bytes", self.max_response_bytes, *MAX_RESPONSE_BYTES_RANGE)
        _int_range("offer_tokens", self.offer_tokens, *OFFER_TOKENS_RANGE)
        _int_range("top_k", self.top_k, *TOP_K_RANGE)
        _int_range("max_searches", self.max_searches, *MAX_SEARCHES_RANGE)
        if self.feedback is not None and not isinstance(self.feedback, (str, os.PathLike)):
            raise ValueError(f"feedback must be a file path, a redis:// URL or None, got {self.feedback!r}")
        if self.feedback is not None:
            self.feedback = os.fspath(self.feedback)
            if not self.feedback.strip():
                self.feedback = None

    @classmethod
    def from_env(cls, environ: Optional[Mapping[str, str]] = None, **overrides: Any) -> "ToolSelectionConfig":
        """Read ``LLM_COMMON_TOOL_SELECTION_*`` now (not at import). A
        malformed or out-of-range value raises ValueError naming the variable
        and the accepted range; it is never replaced by the default."""
        env = os.environ if environ is None else environ
        kw: Dict[str, Any] = {}

        def get(name: str) -> Optional[str]:
            v = env.get(ENV_PREFIX + name)
            if v is None or v.strip() == "":
                return None
            return v.strip()

        if (v := get("MODEL")) is not None:
            kw["model"] = v
        if (v := get("FALLBACK_MODEL")) is not None:
            kw["fallback_model"] = v
        for key, lo, hi in (("MAX_CALLS", 1, 20), ("TIMEOUT_S", 1, 120),
                            ("MAX_RESPONSE_BYTES", *MAX_RESPONSE_BYTES_RANGE),
                            ("OFFER_TOKENS", *OFFER_TOKENS_RANGE), ("TOP_K", *TOP_K_RANGE),
                            ("MAX_SEARCHES", *MAX_SEARCHES_RANGE)):
            if (v := get(key)) is not None:
                try:
                    n = int(v)
                except ValueError:
                    raise ValueError(f"{ENV_PREFIX}{key} must be an integer from {lo} to {hi}, got {v!r}") from None
                if not lo <= n <= hi:
                    raise ValueError(f"{ENV_PREFIX}{key} must be an integer from {lo} to {hi}, got {v!r}")
                kw[key.lower()] = n
        if (v := get("TEMPERATURE")) is not None:
            try:
                t = float(v)
            except ValueError:
                raise ValueError(f"{ENV_PREFIX}TEMPERATURE must be a number from 0 to 1, got {v!r}") from None
            if not math.isfinite(t) or not 0.0 <= t <= 1.0:
                raise ValueError(f"{ENV_PREFIX}TEMPERATURE must be a number from 0 to 1, got {v!r}")
            kw["temperature"] = t
        if (v := get("FAIL_CLOSED")) is not None:
            low = v.lower()
            if low in _TRUE:
                kw["fail_closed"] = True
            elif low in _FALSE:
                kw["fail_closed"] = False
            else:
                raise ValueError(f"{ENV_PREFIX}FAIL_CLOSED must be one of 1/true/t/yes/y/on or "
                                 f"0/false/f/no/n/off, got {v!r}")
        if (v := get("MODE")) is not None:
            if v.lower() not in MODES:
                raise ValueError(f"{ENV_PREFIX}MODE must be one of {', '.join(MODES)}, got {v!r}")
            kw["mode"] = v.lower()
        if (v := get("FEEDBACK")) is not None:
            kw["feedback"] = v
        kw.update(overrides)
        return cls(**kw)

    def to_json(self) -> Dict[str, Any]:
        """The config as the C ABI's selector_new expects it."""
        return asdict(self)


def _int_range(name: str, value: Any, lo: int, hi: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer from {lo} to {hi}, got {value!r}")
