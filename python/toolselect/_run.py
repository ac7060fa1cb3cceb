"""Running a registered tool's callable under the Go executor's policy.

The run path of :class:`~toolselect.ToolRegistry`: the policy keywords
(unsafe, roles, capabilities, approval), the verdict asked of the Go
executor, the approver's answer, and the one audit record every call
leaves, shaped as the Go executor's ``Record``.
"""

from __future__ import annotations

import collections
import copy
import datetime
import inspect
import json
import time
import weakref
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, NoReturn, Optional, Sequence, Union

from ._arguments import Arguments, Violation, _arguments, _BadArguments
from ._words import _flag, _names, _quote, _shown
from .errors import ArgumentError, InvalidArgumentsError, PolicyError, UnknownToolError
from .types import ToolCall, ToolRules

#: The lists a ToolRules holds (Go's JSON names; tests/test_typing.py).
_RULE_LISTS = frozenset(ToolRules.__annotations__)

#: What ``rules=`` takes: a :class:`~toolselect.types.ToolRules`, or any
#: mapping of list names to lists of patterns (checked by the library).
RulesArg = Optional[Union[ToolRules, Mapping[str, Sequence[str]]]]


class _RunPath:
    """:meth:`ToolRegistry.run` and :meth:`ToolRegistry.arun`, and the steps
    they share. A base of :class:`~toolselect.ToolRegistry`, which sets the
    attributes declared here."""

    if TYPE_CHECKING:
        _fns: Dict[str, Callable[..., Any]]
        audit: Optional[Callable[[Dict[str, Any]], Any]]
        audit_records: "collections.deque[Dict[str, Any]]"

        def _call(self, name: str, *args: Any, text: bool = False) -> Any: ...

    def _verdict(self, call: Dict[str, Any], policy: Dict[str, Any], approver: bool) -> Dict[str, Any]:
        """The library's verdict on one call under the policy keywords (the
        rules included): every authorize call goes through here, so the
        first check and the re-check of edited arguments read the same
        policy. Rules the library refuses (a misspelt list, a bad pattern)
        raise :class:`ArgumentError` naming them, without the C argument's
        name."""
        try:
            out: Dict[str, Any] = self._call("toolselect_registry_authorize",
                                             json.dumps(call, separators=(",", ":")).encode(),
                                             _policy_json(policy, approver))
        except ArgumentError as e:
            raise _rules_error(e) from None
        return out

    def _authorize(self, call: Union[ToolCall, str], args: "Optional[Arguments]", policy: Dict[str, Any],
                   clock: "_Clock") -> "tuple[Dict[str, Any], Dict[str, Any]]":
        """Ask the Go executor's policy whether the call may run (resolve,
        unsafe, roles, capabilities, no-schema modes, approval, arguments).
        Returns the verdict and the fields of the audit record begun; raises
        on a refusal, after auditing it (the Go executor's own record)."""
        if isinstance(call, ToolCall):
            name, args, cid = call.tool, call.args, getattr(call, "id", "") or ""
        else:
            name, cid = call, ""
        try:
            a = _arguments(args)
        except _BadArguments as bad:
            # Refused before the policy is asked: there is no one value to judge.
            text = bytes(args).decode("utf-8", "replace") if isinstance(args, (bytes, bytearray)) else args
            why = f"invalid arguments for tool {_quote(name)}: {bad.violation}"
            self._end({"id": cid, "tool": name, "args": text, "validated": False, "policy": "invalid_args"}, clock,
                      "invalid", _call_error(name, "invalid", why))
            raise InvalidArgumentsError(why, tool=name, violations=[bad.violation]) from None
        v = self._verdict({"id": cid, "tool": name, "args": a}, policy, policy["approve"] is not None)
        if not v["allowed"]:
            rec = v.get("audit")
            if rec:
                self._audit(rec)
            else:  # the library always sends one; a record all the same
                rec = self._end({"id": cid, "tool": v.get("tool", name), "args": a, "validated": False,
                                 "policy": v.get("rule", "")}, clock, v.get("outcome") or "refused",
                                v.get("message", ""))
            rule, msg = v.get("rule", ""), v.get("message", "")
            if rule == "invalid_args":
                raise InvalidArgumentsError(msg or f"invalid arguments for {name!r}", tool=v.get("tool", name),
                                            violations=[Violation(x["pointer"], x["rule"], x["message"])
                                                        for x in v.get("violations") or []])
            if rule == "unknown_tool":
                raise UnknownToolError(msg, code=3, kind="not_found")
            raise PolicyError(_refusal_text(v.get("tool", name), rule, v.get("reason") or msg), rule=rule,
                              tool=v.get("tool", name), record=rec)
        fields = {"id": cid, "tool": v["tool"], "args": v.get("args"), "validated": v.get("validated", True),
                  "policy": v.get("policy", "")}
        return v, fields

    def _begin(self, call: Union[ToolCall, str], args: "Optional[Arguments]", policy: Dict[str, Any]
               ) -> "tuple[Callable[..., Any], Dict[str, Any], Dict[str, Any], Dict[str, Any], _Clock]":
        clock = _Clock()  # the call reached the policy: the record's start, as in Go
        v, fields = self._authorize(call, args, policy, clock)
        fn = self._fns.get(v["tool"])
        if fn is None:
            # Go refuses a registered tool with no handler before its policy
            # (executor.ErrNoHandler): the record says so, in Go's words.
            tool = v["tool"]
            self._end({"id": fields["id"], "tool": tool, "args": fields["args"], "validated": False,
                       "policy": "no_handler"}, clock,
                      "refused", _call_error(tool, "refused", f"no handler bound to the tool {_quote(tool)}"))
            raise UnknownToolError(f"tool {tool!r} has no Python callable (register it with fn, or bind())")
        # The record keeps the validated value the library returned; the
        # approver and the callable each get their own copy of it, so neither
        # can change what the other sees or what the record says ran.
        a = v.get("args")
        return fn, (copy.deepcopy(a) if isinstance(a, dict) else {}), v, fields, clock

    def _approver_failed(self, v: Dict[str, Any], fields: Dict[str, Any], clock: "_Clock",
                         err: BaseException) -> BaseException:
        """Audit an approver that raised, as the Go executor does (refused,
        "the approver failed"; canceled while waiting, for a cancellation),
        and return what to raise."""
        tool = v["tool"]
        if not isinstance(err, Exception):  # cancelled, interrupted: raised as it is
            self._end(fields, clock, "canceled", _call_error(tool, "canceled", f"waiting for approval: {_describe(err)}"))
            return err
        why = f"approval denied: the approver failed: {_describe(err)}"
        rec = self._end(dict(fields, policy="approval_denied"), clock, "refused", _call_error(tool, "refused", why))
        return PolicyError(why, rule="approval_denied", tool=tool, record=rec)

    def _approval(self, v: Dict[str, Any], fields: Dict[str, Any], clock: "_Clock", answer: Any) -> Any:
        """Read an approver's answer. An approval is exactly ``True``, or a
        mapping or an object whose ``approved`` is exactly ``True`` (its
        ``by`` goes to the record; its ``args``, when not ``None``, are
        edited arguments, returned for :meth:`_approved_args`, else
        ``None``); ``False``, or ``approved`` ``False``, is
        a denial (with ``by`` and ``reason``); anything else (``"false"``,
        ``1``, ``None``, an object without ``approved``, an awaitable) is
        not an approval: refused, naming what came back. A denial is
        audited and raised."""
        by: Any = ""
        reason: Any = ""
        try:
            if isinstance(answer, bool):
                approved: object = answer
            elif isinstance(answer, Mapping):
                approved, by, reason = answer.get("approved"), answer.get("by", ""), answer.get("reason", "")
            elif not inspect.isawaitable(answer) and hasattr(answer, "approved"):
                approved, by, reason = answer.approved, getattr(answer, "by", ""), getattr(answer, "reason", "")
            else:
                approved = _NOT_AN_APPROVAL
            by, reason = str(by or ""), str(reason or "")
        except Exception as e:  # noqa: BLE001 - an answer that cannot be read approves nothing
            self._deny(v, fields, clock, f"reading the approver's answer, {_shown(answer)}, failed: {_describe(e)}")
        if approved is _NOT_AN_APPROVAL:
            self._deny(v, fields, clock, f"the approver returned {_shown(answer)}, which is not an approval "
                                         f"({_APPROVAL})")
        if approved is True:
            fields["approvedBy"] = by or "approver"
            return _edited_args(answer)
        if approved is not False:
            self._deny(v, fields, clock, f"the approver returned {_shown(answer)}, whose approved is "
                                         f"{_shown(approved)}, not True ({_APPROVAL})")
        _declines(self)[(v["tool"], v.get("args_sha256", ""))] = 1
        denied = "denied" + (f" by {by}" if by else "") + (f": {reason}" if reason else "")
        # A refused record names the rule that refused it, as Go's does.
        rec = self._end(dict(fields, policy="approval_denied"), clock, "refused",
                        _call_error(v["tool"], "refused", f"approval denied: {denied}"))
        raise PolicyError("approval " + denied, rule="approval_denied", tool=v["tool"], record=rec)

    def _not_again(self, v: Dict[str, Any], fields: Dict[str, Any], clock: "_Clock") -> None:
        """Refuse, without asking, a call the approver declined before (the
        same tool and arguments, by their hash): a model retrying it in a
        loop is told how often, and nobody is asked again. As the Go
        executor does."""
        seen = _declines(self)
        key = (v["tool"], v.get("args_sha256", ""))
        if key in seen:
            seen[key] += 1
            self._deny(v, fields, clock, "this exact call was declined before and is not asked about again "
                                         f"(declined or retried {seen[key]} times); change the arguments or stop")

    def _deny(self, v: Dict[str, Any], fields: Dict[str, Any], clock: "_Clock", why: str) -> NoReturn:
        """Refuse a call whose approver gave no approval: audited (naming the
        rule, as a refused record does), then raised."""
        rec = self._end(dict(fields, policy="approval_denied"), clock, "refused",
                        _call_error(v["tool"], "refused", f"approval denied: {why}"))
        raise PolicyError(f"approval denied: {why}", rule="approval_denied", tool=v["tool"], record=rec)

    def _approved_args(self, a: Dict[str, Any], v: Dict[str, Any], fields: Dict[str, Any], clock: "_Clock",
                       edited: Any, policy: Dict[str, Any]) -> Dict[str, Any]:
        """The arguments the callable runs with after an approval: a copy of
        the ones asked about, or the approver's edited ones, validated again
        by the Go executor (invalid ones are refused and audited as the
        approved call's record, nothing runs); the record says they were
        edited and carries the hash of what runs."""
        fields["argsSha256"] = v.get("args_sha256", "")
        if edited is None:
            return a
        try:
            e = _arguments(edited)
        except _BadArguments as bad:
            why = f"invalid arguments for tool {_quote(v['tool'])}: the approved arguments: {bad.violation}"
            self._end(dict(fields, args=edited, policy="invalid_args", approvalEdited=True), clock, "invalid",
                      _call_error(v["tool"], "invalid", why))
            raise InvalidArgumentsError(why, tool=v["tool"], violations=[bad.violation]) from None
        w = self._verdict({"id": fields["id"], "tool": v["tool"], "args": e}, policy, True)
        fields["approvalEdited"] = True
        if not w["allowed"]:
            msg = w.get("message", "")
            self._end(dict(fields, args=e, policy=w.get("rule", "")), clock, w.get("outcome") or "refused", msg)
            if w.get("rule") == "invalid_args":
                raise InvalidArgumentsError(f"the approved arguments: {msg}", tool=v["tool"],
                                            violations=[Violation(x["pointer"], x["rule"], x["message"])
                                                        for x in w.get("violations") or []])
            raise PolicyError(msg, rule=w.get("rule", ""), tool=v["tool"], record=self.audit_records[-1])
        fields["args"], fields["argsSha256"] = w.get("args"), w.get("args_sha256", "")
        out = w.get("args")
        return copy.deepcopy(out) if isinstance(out, dict) else {}

    def _end(self, fields: Dict[str, Any], clock: "_Clock", outcome: str, error: str = "") -> Dict[str, Any]:
        """Write the run's one audit record, shaped as the Go executor's
        Record is in JSON (same keys, in its order; empty id, policy,
        approvedBy, argsSha256, approvalEdited and error left out), and
        return it."""
        rec: Dict[str, Any] = {}
        if fields.get("id"):
            rec["id"] = fields["id"]
        rec["tool"] = fields["tool"]
        rec["args"] = fields.get("args")
        rec["validated"] = bool(fields.get("validated"))
        for key in ("policy", "approvedBy", "argsSha256", "approvalEdited"):
            if fields.get(key):
                rec[key] = fields[key]
        rec["start"] = _iso(clock.start)
        rec["durationMs"] = clock.ms()
        rec["outcome"] = outcome
        if error:
            rec["error"] = error
        self._audit(rec)
        return rec

    def _finish(self, v: Dict[str, Any], fields: Dict[str, Any], clock: "_Clock",
                err: Optional[BaseException]) -> None:
        """Audit the end of the callable: ok, its exception (tool_error), or a
        cancellation (canceled)."""
        if err is None:
            self._end(fields, clock, "ok")
        elif isinstance(err, Exception):
            self._end(fields, clock, "tool_error", _describe(err))
        else:
            self._end(fields, clock, "canceled", _call_error(v["tool"], "canceled", _describe(err)))

    def _audited(self, aw: Any, v: Dict[str, Any], fields: Dict[str, Any], clock: "_Clock") -> Any:
        """What run() returns for an async tool: a coroutine that awaits the
        tool's and writes the record when it ends; one never awaited is
        recorded as canceled when it is collected."""
        async def run_tool() -> Any:
            never.detach()
            try:
                out = await aw
            except BaseException as e:
                self._finish(v, fields, clock, e)
                raise
            self._finish(v, fields, clock, None)
            return out

        coro = run_tool()
        never = weakref.finalize(coro, self._never_awaited, aw, v, fields, clock)
        return coro

    def _never_awaited(self, aw: Any, v: Dict[str, Any], fields: Dict[str, Any], clock: "_Clock") -> None:
        if inspect.iscoroutine(aw):
            aw.close()
        self._end(fields, clock, "canceled",
                  _call_error(v["tool"], "canceled", "the coroutine run() returned was never awaited"))

    def _audit(self, rec: Dict[str, Any]) -> None:
        self.audit_records.append(rec)
        if self.audit is not None:
            try:
                self.audit(rec)
            except Exception:  # noqa: BLE001 - an audit sink must not change the call's outcome
                pass

    def run(self, call: Union[ToolCall, str], args: "Optional[Arguments]" = None, *,
            allow_unsafe: bool = False, roles: Iterable[str] = (), capabilities: Iterable[str] = (),
            approve: Optional[Callable[[Dict[str, Any]], Any]] = None, rules: RulesArg = None) -> Any:
        """Run a call's Python callable with the arguments as keywords, under
        the Go executor's policy: a tool marked unsafe needs ``allow_unsafe``
        (``True`` or ``False`` only: anything else is a ``TypeError``), a tool
        with roles runs only for a caller holding one of ``roles``, a tool
        must declare every capability in ``capabilities``, the no-schema
        modes apply. ``rules`` are per-tool patterns of names
        (:class:`~toolselect.types.ToolRules`, ``{"allow": [...], "ask":
        [...], "deny": [...]}``, Go's ``registry.ToolRules``), read before
        the rest: a tool a deny rule matches is refused (``denied_by_rule``)
        even with ``allow_unsafe``; an ask rule asks ``approve`` about every
        call, even of a safe tool (refused without one); an allow rule runs
        an unsafe tool without ``allow_unsafe`` and unasked. A misspelt list
        or a bad pattern raises :class:`ArgumentError` naming it. The one
        allow/ask/deny rule decides whether ``approve`` is asked: given an
        approver, every unsafe tool (even with ``allow_unsafe``, unless an
        allow rule names it), every tool registered with
        ``requires_approval=True`` and every human-approval tool is asked
        about (a ``requires_approval`` tool without ``approve`` is refused).
        ``approve`` is called with ``{"id","tool","args","args_sha256"}``
        (``args`` a copy of the validated arguments) and the call runs only
        when it answers ``True``, or a mapping or object whose ``approved``
        is ``True``; its ``args``, when given, are edited arguments,
        validated again before they run, and the record says so
        (``approvalEdited``, ``argsSha256``). A call declined once is not
        asked about again with the same arguments: it is refused, counted.
        Any
        other answer (``"no"``, ``1``, ``None``, an awaitable, which
        :meth:`arun` awaits once) is refused naming what came back; an
        ``approve`` that raises is a refusal too, with the exception as its
        ``__cause__``. ``args`` is a mapping or JSON text (as a model sent
        it), parsed once; a key given twice in one object is refused. The
        callable gets its own copy of the validated value, the one the
        record shows. A refusal raises :class:`PolicyError` naming the rule
        (and what to pass, in Python's names); invalid arguments raise
        :class:`InvalidArgumentsError`; a tool with no callable bound raises
        :class:`UnknownToolError`; in every case the callable is not run.
        Every call leaves exactly one audit record, shaped like the Go
        executor's (:attr:`audit_records`, and the ``audit`` callable given to
        the registry): its ``start`` is when the call reached the policy.
        For an ``async def`` tool a coroutine is returned, and the record is
        written when it has been awaited (use :meth:`arun`)."""
        policy = _policy(allow_unsafe, roles, capabilities, approve, rules)
        fn, a, v, fields, clock = self._begin(call, args, policy)
        if v.get("approval_required"):
            self._not_again(v, fields, clock)
            try:
                answer = approve(_approval_request(fields, v, a))  # type: ignore[misc]
            except BaseException as e:
                raise self._approver_failed(v, fields, clock, e) from e
            if inspect.isawaitable(answer):
                shown = _shown(answer)
                _discard(answer)
                self._deny(v, fields, clock, f"the approver returned {shown}; run() cannot wait for it (use arun)")
            a = self._approved_args(a, v, fields, clock, self._approval(v, fields, clock, answer), policy)
        try:
            out = fn(**a)
        except BaseException as e:
            self._finish(v, fields, clock, e)
            raise
        if inspect.isawaitable(out):
            return self._audited(out, v, fields, clock)
        self._finish(v, fields, clock, None)
        return out

    async def arun(self, call: Union[ToolCall, str], args: "Optional[Arguments]" = None, *,
                   allow_unsafe: bool = False, roles: Iterable[str] = (), capabilities: Iterable[str] = (),
                   approve: Optional[Callable[[Dict[str, Any]], Any]] = None, rules: RulesArg = None) -> Any:
        """:meth:`run`, awaiting the result when the tool is ``async`` (and
        the approver when it is)."""
        policy = _policy(allow_unsafe, roles, capabilities, approve, rules)
        fn, a, v, fields, clock = self._begin(call, args, policy)
        if v.get("approval_required"):
            self._not_again(v, fields, clock)
            try:
                answer = approve(_approval_request(fields, v, a))  # type: ignore[misc]
                if inspect.isawaitable(answer):
                    answer = await answer
            except BaseException as e:
                raise self._approver_failed(v, fields, clock, e) from e
            if inspect.isawaitable(answer):  # e.g. an async approver that returned approve2(req), not awaited
                shown = _shown(answer)
                _discard(answer)
                self._deny(v, fields, clock, f"the approver's answer, awaited once, is still awaitable: {shown}")
            a = self._approved_args(a, v, fields, clock, self._approval(v, fields, clock, answer), policy)
        try:
            out = fn(**a)
            if inspect.isawaitable(out):
                out = await out
        except BaseException as e:
            self._finish(v, fields, clock, e)
            raise
        self._finish(v, fields, clock, None)
        return out


class _Clock:
    """When a run reached the policy: wall time for the record's start, a
    monotonic clock for its duration."""

    __slots__ = ("start", "t0")

    def __init__(self) -> None:
        self.start, self.t0 = time.time(), time.perf_counter()

    def ms(self) -> float:
        """Milliseconds since the start, to the microsecond (Go's durationMs)."""
        return round((time.perf_counter() - self.t0) * 1000, 3)


def _call_error(tool: str, outcome: str, why: str) -> str:
    """The Go executor's CallError text: call of tool "x" refused: why."""
    return f"call of tool {_quote(tool)} {outcome}: {why}"


def _describe(err: BaseException) -> str:
    text = str(err)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


#: What an approver must answer, as the refusals of other answers say it.
_APPROVAL = "an approval is True, or a mapping or an object whose approved is True"
_NOT_AN_APPROVAL = object()


def _approval_request(fields: Dict[str, Any], v: Dict[str, Any], args: Dict[str, Any]) -> Dict[str, Any]:
    """What the approver is asked: the call's id, the tool and a copy of the
    arguments that will run (an approver that edits it changes nothing)."""
    return {"id": fields["id"], "tool": v["tool"], "args": copy.deepcopy(args),
            "args_sha256": v.get("args_sha256", "")}


def _declines(reg: Any) -> Dict[Any, int]:
    """The registry's count of declined calls, by (tool, hash of the arguments)."""
    seen: Optional[Dict[Any, int]] = reg.__dict__.get("_declined")
    if seen is None:
        seen = {}
        reg.__dict__["_declined"] = seen
    return seen


def _edited_args(answer: Any) -> Any:
    """The edited arguments an approval carries (its ``args``), or None."""
    if isinstance(answer, Mapping):
        return answer.get("args")
    return getattr(answer, "args", None)


def _discard(aw: Any) -> None:
    """Close a coroutine nobody will await (no "never awaited" warning)."""
    if inspect.iscoroutine(aw):
        aw.close()


def _iso(t: float) -> str:
    """t as Go writes a time.Time in JSON (RFC 3339, UTC, to the microsecond
    here, trailing zeros of the fraction left out)."""
    d = datetime.datetime.fromtimestamp(t, datetime.timezone.utc)
    frac = f"{d.microsecond:06d}".rstrip("0")
    return d.strftime("%Y-%m-%dT%H:%M:%S") + (f".{frac}" if frac else "") + "Z"


def _policy(allow_unsafe: bool, roles: Iterable[str], capabilities: Iterable[str],
            approve: Optional[Callable[[Dict[str, Any]], Any]], rules: RulesArg = None) -> Dict[str, Any]:
    """The run policy keywords, checked once for every run path: a boolean
    allow_unsafe, lists of names (a string is not a list of roles), an
    approve that is callable or None, and rules that are None or a mapping
    of lists of patterns (their names and patterns are the library's to
    check). The keys are run's keywords: a policy is passed on as
    ``**policy``."""
    if approve is not None and not callable(approve):
        raise TypeError(f"approve must be a callable or None, not {_shown(approve)}")
    return {"allow_unsafe": _flag("allow_unsafe", allow_unsafe), "roles": _names("roles", roles),
            "capabilities": _names("capabilities", capabilities), "approve": approve, "rules": _rules(rules)}


def _rules(value: Any) -> Optional[Dict[str, List[str]]]:
    """The ``rules=`` keyword checked for what only Python can get wrong: None,
    or a mapping of list names to lists of tool-name patterns (a string is
    not a list: ``"fs__*"`` would be read as its characters). Which names
    exist (allow, ask, deny) and which patterns are valid are the library's
    to say (registry.ToolRules): a key that names no list is sent with an
    empty value, whatever it holds, for the library to refuse by name."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Mapping):
        raise TypeError(f'rules must be a mapping of lists of tool-name patterns, e.g. {{"deny": ["fs__*"]}}, '
                        f"or None, not {_shown(value)}")
    out: Dict[str, List[str]] = {}
    for key, patterns in value.items():
        if not isinstance(key, str):
            raise TypeError(f"rules keys name lists (allow, ask, deny), not {_shown(key)}")
        if key not in _RULE_LISTS:
            out[key] = []  # refused by the library, which names the key and the lists
            continue
        if isinstance(patterns, (str, bytes)):
            raise TypeError(f"rules[{key!r}] must be a list of tool-name patterns, not one string "
                            f"(write [{patterns!r}])")
        if isinstance(patterns, Mapping) or not isinstance(patterns, Iterable):
            raise TypeError(f"rules[{key!r}] must be a list of tool-name patterns, not {_shown(patterns)}")
        out[key] = list(patterns)
        for i, p in enumerate(out[key]):
            if not isinstance(p, str):
                raise TypeError(f"rules[{key!r}][{i}] must be a tool-name pattern (a str), not {_shown(p)}")
    return out


def _policy_json(policy: Dict[str, Any], approver: bool, hints: bool = True) -> bytes:
    """The policy_json of an authorize call: the keywords as Go's names
    them, "rules" only when given, and the hints that word a refusal in
    Python's names (the audit record says what to pass in them too)."""
    p: Dict[str, Any] = {"allow_unsafe": policy["allow_unsafe"], "roles": policy["roles"],
                         "capabilities": policy["capabilities"], "approver": approver}
    if hints:
        p["hints"] = _RULE_HINTS
    if policy.get("rules") is not None:
        p["rules"] = policy["rules"]
    return json.dumps(p).encode()


def _rules_error(e: ArgumentError) -> ArgumentError:
    """An argument error of the library's about the rules, said without the
    C argument's name: 'unknown field "rules.alow" (the keys are allow,
    ask, deny)', 'rules.deny[0] "[x": syntax error in pattern ...'. Any
    error about policy_json is one (only the rules can cause it from
    Python: the other keywords are checked before they are sent); of a
    ranking's request_json, only those naming the rules. Any other error is
    returned as it is."""
    for prefix, rules_only in (("policy_json: ", False), ("request_json: ", True)):
        if not e.message.startswith(prefix):
            continue
        rest = e.message[len(prefix):]
        if rules_only and not rest.startswith(("rules", 'unknown field "rules.', 'the key "rules.')):
            return e
        return type(e)(rest, code=e.code, kind=e.kind, detail=e.detail)
    return e


def _checked_rules(policy: Dict[str, Any]) -> Dict[str, Any]:
    """policy, its rules checked by the library now rather than at the first
    run (for get, for_caller and ToolSelector, which keep a policy for
    later): asks an empty registry's verdict on a call, which refuses bad
    rules before it judges the call, and drops the verdict. The registry is
    closed at once: no handle outlives the check."""
    if policy.get("rules") is None:
        return policy
    from ._registry import ToolRegistry
    with ToolRegistry() as empty:
        empty._verdict({"tool": "rules", "args": {}}, policy, False)
    return policy


# How a refused Python run says what would let it run, worded from the
# refusal's rule (the library's message names Go's Options fields): one entry
# per rule of the library, "" where the reason says it all.
_RULE_HINTS = {
    "unknown_tool": "",
    "invalid_args": "",
    "no_handler": "",
    "unsafe": "pass allow_unsafe=True to run it",
    "role": "pass roles= holding one of them to run it",
    "capability": "",
    "denied_by_rule": "a pattern in rules[\"deny\"] matches it; deny is read first, so no allow rule undoes it",
    "no_schema_read_only": "register it with a schema, or with capabilities=[\"readOnly\"] if it only reads",
    "approval_required": "pass approve=, a callable that returns True to let it run",
    "approval_denied": "",
    "not_in_offer": "",
    "no_schema": "pass parameters=..., or set allow_no_schema with a no_schema_mode to register a tool without one",
    "no_schema_mode": "read-only, human-approval or full",
}


def _refusal_text(tool: str, rule: str, reason: str) -> str:
    hint = _RULE_HINTS.get(rule)
    return f"{tool!r} refused by the run policy ({rule}): {reason}" + (f" ({hint})" if hint else "")
