"""eval_select: which model should select? Whole selections scored on your
own catalog and tasks, per candidate, with latency, tokens and cost: the
Python face of ``toolselect eval --select`` (docs/eval-select.md)::

    from toolselect import eval_select

    report = eval_select("examples/catalog.json", "examples/eval-tasks.jsonl",
                         models=["qwen3:4b", "llama3.2:3b"], prices={"qwen3:4b": (0.0, 0.0)})
    for c in report.best():
        print(c.name, c.exact, c.tool_accuracy, c.fail_closed, c.latency_ms.p50, c.cost)

Each task runs the real selection path in the Go library (ranking, offer,
search rounds, the model, validation, the fail-closed rules) with the
built-in HTTP client. Pressing Ctrl-C (KeyboardInterrupt) stops the run and
returns what was scored, with ``interrupted`` set.
"""

from __future__ import annotations

import json
import os
import random
import threading
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _lib
from ._registry import ToolRegistry
from .config import ToolSelectionConfig, env_value
from .types import ToolCall, _Model

__all__ = ["CandidateScore", "EvalSelectReport", "Latency", "TaskResult", "eval_select"]


@dataclass(frozen=True)
class Latency(_Model):
    """Percentiles of the selections' wall time, in milliseconds."""

    p50: float
    p95: float


@dataclass(frozen=True)
class TaskResult(_Model):
    """One task's outcome for one candidate."""

    id: str
    #: "exact", "wrong_args", "wrong_tools" or "fail_closed".
    verdict: str
    tools_ok: bool
    exact: bool
    #: The first difference from gold ("" when exact): tool, parameter, value.
    difference: str
    calls: Tuple[ToolCall, ...]
    #: Why a failed selection failed (timeout, http_status, parse, ...), else "".
    fail_kind: str
    error: str
    dropped: int
    latency_ms: float
    prompt_tokens: int
    completion_tokens: int
    attempts: int


@dataclass(frozen=True)
class CandidateScore(_Model):
    """One candidate's figures over the tasks it ran (``tasks``)."""

    name: str
    model: str
    tasks: int
    tool_accuracy: float
    exact: float
    fail_closed: float
    dropped: int
    latency_ms: Latency
    prompt_tokens: int
    completion_tokens: int
    #: Dollars, when ``prices`` named the model; else None.
    cost: Optional[float]
    results: Tuple[TaskResult, ...]
    #: Failed selections by kind, e.g. {"timeout": 3}.
    fail_closed_kinds: Dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class EvalSelectReport(_Model):
    """The scores, in the order the candidates were given."""

    candidates: Tuple[CandidateScore, ...]
    #: How many tasks each candidate was to run.
    total: int
    #: True when the run was interrupted: each candidate's ``tasks`` says how many ran.
    interrupted: bool

    def best(self) -> List[CandidateScore]:
        """The candidates best first: exact, tool accuracy, fewer failed
        selections, lower median latency, then name (as the CLI's table)."""
        return sorted(self.candidates, key=lambda c: (-c.exact, -c.tool_accuracy, c.fail_closed, c.latency_ms.p50, c.name))


def _read_tasks(tasks: Union[str, "os.PathLike[str]", Sequence[Mapping[str, Any]]]) -> List[Any]:
    if isinstance(tasks, (str, os.PathLike)):
        out: List[Any] = []
        with open(tasks, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    out.append(json.loads(line))
                except ValueError as e:
                    raise ValueError(f"{os.fspath(tasks)} line {n}: not a task object: {e}") from None
        return out
    return [dict(t) for t in tasks]


def _score(d: Dict[str, Any], kinds: Dict[str, int]) -> CandidateScore:
    results = tuple(TaskResult(
        id=r["id"], verdict=r["verdict"], tools_ok=r["tools_ok"], exact=r["exact"], difference=r.get("difference", ""),
        calls=tuple(ToolCall.from_json(c) for c in r.get("calls") or []), fail_kind=r.get("fail_kind", ""),
        error=r.get("error", ""), dropped=r["dropped"], latency_ms=r["latency_ms"], prompt_tokens=r["prompt_tokens"],
        completion_tokens=r["completion_tokens"], attempts=r["attempts"]) for r in d["results"])
    lat = d["latency_ms"]
    return CandidateScore(
        name=d["name"], model=d["model"], tasks=d["tasks"], tool_accuracy=d["tool_accuracy"], exact=d["exact"],
        fail_closed=d["fail_closed"], dropped=d["dropped"], latency_ms=Latency(p50=lat["p50"], p95=lat["p95"]),
        prompt_tokens=d["prompt_tokens"], completion_tokens=d["completion_tokens"], cost=d["cost"], results=results,
        fail_closed_kinds=dict(kinds or {}))


def eval_select(catalog: Union[ToolRegistry, str, "os.PathLike[str]"],
                tasks: Union[str, "os.PathLike[str]", Sequence[Mapping[str, Any]]], *,
                models: Sequence[str] = (), candidates: Sequence[Mapping[str, Any]] = (),
                config: Optional[ToolSelectionConfig] = None,
                prices: Optional[Mapping[str, Tuple[float, float]]] = None,
                parallel: int = 1, rps: float = 0, limit: Optional[int] = None,
                shuffle: bool = False, seed: Optional[int] = None,
                roles: Sequence[str] = (), allow_unsafe: bool = False) -> EvalSelectReport:
    """Score whole selections per candidate on ``tasks``.

    ``catalog`` is a :class:`ToolRegistry` or a catalog file; ``tasks`` a
    tasks file (JSON Lines) or a list of task dicts
    (``{"id", "task", "sub_tasks", "calls": [{"tool", "args": {"param": [acceptable values]}}], "ordered"}``).
    The base settings are ``config`` (default: ``ToolSelectionConfig.from_env()``);
    ``models`` adds one candidate per model at that endpoint; ``candidates``
    are named partial configurations (``name``, ``base_url``, ``model``,
    ``provider``, ``mode``, ``reasoning``, ``top_k``, ``offer_tokens``,
    ``api_key_file`` or ``api_key_env``). ``prices`` maps a model to
    dollars per million (prompt, completion) tokens. ``limit`` scores the
    first N tasks, after ``shuffle`` (with ``seed``, for a sample that can be
    drawn again; ``seed=None`` draws one at random). A bad task raises
    :class:`~toolselect.errors.ArgumentError` naming its line."""
    cfg = (config if config is not None else ToolSelectionConfig.from_env()).to_json()
    cfg["base_url"] = (cfg.get("base_url") or env_value("base_url")).strip()
    cfg["api_key"] = (cfg.get("api_key") or env_value("api_key")).strip()
    cfg = {k: v for k, v in cfg.items() if v is not None and k != "feedback"}
    specs: List[Dict[str, Any]] = [dict(c) for c in candidates] + [{"name": m, "model": m} for m in models]
    env = {c["api_key_env"]: os.environ.get(c["api_key_env"], "") for c in specs if c.get("api_key_env")}
    task_list = _read_tasks(tasks)
    if shuffle:
        random.Random(seed).shuffle(task_list)
    if limit is not None:
        task_list = task_list[:max(0, limit)]
    request: Dict[str, Any] = {
        "tasks": task_list, "config": cfg, "candidates": specs, "env": env,
        "prices": {m: {"In": float(p[0]), "Out": float(p[1])} for m, p in (prices or {}).items()},
        "parallel": parallel, "rps": rps, "roles": list(roles), "allow_unsafe": allow_unsafe,
    }
    body = json.dumps(request).encode("utf-8")
    registry = catalog if isinstance(catalog, ToolRegistry) else ToolRegistry()
    if not isinstance(catalog, ToolRegistry):
        registry.load_catalog(catalog)
    token = _lib.call("toolselect_cancel_new")["handle"]
    out: Dict[str, Any] = {}
    failure: List[BaseException] = []
    # The call runs in a worker thread so that Ctrl-C reaches this one; it
    # waits on an Event, not Thread.join, which a KeyboardInterrupt can leave
    # reporting a running thread as finished.
    done = threading.Event()
    try:
        with registry.use() as reg:
            def run() -> None:
                try:
                    out.update(_lib.call("toolselect_eval_select", reg, body, token))
                except BaseException as e:  # handed to the caller's thread
                    failure.append(e)
                finally:
                    done.set()
            threading.Thread(target=run, name="toolselect-eval", daemon=True).start()
            try:
                while not done.wait(0.2):
                    pass
            except KeyboardInterrupt:
                _lib.call("toolselect_cancel", token)
                while True:
                    try:
                        done.wait()
                        break
                    except KeyboardInterrupt:  # already cancelled: the run is returning
                        continue
    finally:
        _lib.call("toolselect_cancel_close", token)
        if registry is not catalog:
            registry.close()
    if failure:
        raise failure[0]
    kinds = out.get("fail_closed_kinds") or [{}] * len(out["candidates"])
    return EvalSelectReport(candidates=tuple(_score(c, k) for c, k in zip(out["candidates"], kinds)),
                            total=out["total"], interrupted=out["interrupted"])
