"""An approver given is an approver asked. A calendar agent's
``delete_event`` (safe=False, schema inferred from its signature) run with
allow_unsafe and an approver: the approver is asked, sees the validated
arguments, and what runs is what it approved, sync and async."""

import asyncio
import hashlib
import json
import unittest

import toolselect as ts


def sha(args):
    return hashlib.sha256(json.dumps(args, separators=(",", ":")).encode()).hexdigest()


class ApproverIsAskedTest(unittest.TestCase):
    def setUp(self):
        self.records = []
        self.reg = ts.ToolRegistry(audit=self.records.append)
        self.addCleanup(self.reg.close)
        self.deleted = []

        def delete_event(event_id: str) -> str:
            """Delete a calendar event.

            Args:
                event_id: The event to delete.
            """
            self.deleted.append(event_id)
            return f"deleted {event_id}"

        async def pay(amount: int) -> str:
            """Pay an amount."""
            self.deleted.append(amount)
            return f"paid {amount}"

        self.reg.register(delete_event, safe=False)
        self.reg.register(pay, requires_approval=True)

    def test_the_issue_report_no_means_no(self):
        asked = []
        with self.assertRaises(ts.PolicyError) as cm:
            self.reg.run(ts.ToolCall("delete_event", {"event_id": "ev-42"}), allow_unsafe=True,
                         approve=lambda r: asked.append(r) or "no")
        self.assertEqual(cm.exception.rule, "approval_denied")
        self.assertEqual(self.deleted, [])
        self.assertEqual(len(asked), 1, "the approver was asked")
        self.assertEqual(asked[0]["args"], {"event_id": "ev-42"})
        self.assertEqual(asked[0]["args_sha256"], sha({"event_id": "ev-42"}))

    def test_each_answer_sync_and_async(self):
        answers = [
            (True, True), ({"approved": True, "by": "ops"}, True), (False, False),
            ({"approved": False, "reason": "no"}, False), ("yes", False), (1, False), (None, False),
        ]
        for i, (answer, runs) in enumerate(answers):
            for mode in ("sync", "async"):
                with self.subTest(answer=answer, mode=mode):
                    self.deleted.clear()
                    call = ts.ToolCall("delete_event", {"event_id": f"ev-{i}-{mode}"})
                    if mode == "sync":
                        def go():
                            return self.reg.run(call, approve=lambda r, a=answer: a)
                    else:
                        async def approve(r, a=answer):
                            return a

                        def go():
                            return asyncio.run(self.reg.arun(call, approve=approve))
                    if runs:
                        self.assertEqual(go(), f"deleted ev-{i}-{mode}")
                        rec = self.records[-1]
                        self.assertEqual(rec["outcome"], "ok")
                        self.assertEqual(rec["argsSha256"], sha({"event_id": f"ev-{i}-{mode}"}))
                        self.assertTrue(rec["approvedBy"])
                    else:
                        with self.assertRaises(ts.PolicyError):
                            go()
                        self.assertEqual(self.deleted, [])

    def test_allow_unsafe_without_approver_still_runs_and_requires_approval_is_refused(self):
        self.assertEqual(self.reg.run("delete_event", {"event_id": "a"}, allow_unsafe=True), "deleted a")
        with self.assertRaises(ts.PolicyError) as cm:
            asyncio.run(self.reg.arun("pay", {"amount": 5}, allow_unsafe=True))
        self.assertEqual(cm.exception.rule, "approval_required")
        self.assertIn("approve=", str(cm.exception))

    def test_an_invalid_call_is_refused_before_anyone_is_asked(self):
        asked = []
        with self.assertRaises(ts.InvalidArgumentsError):
            self.reg.run("delete_event", {"event_id": 42}, approve=lambda r: asked.append(r) or True)
        self.assertEqual(asked, [])

    def test_edited_arguments_are_validated_again_and_recorded(self):
        out = asyncio.run(self.reg.arun("pay", {"amount": 500}, approve=lambda r: {"approved": True, "by": "cfo",
                                                                                   "args": {"amount": 50}}))
        self.assertEqual(out, "paid 50")
        rec = self.records[-1]
        self.assertEqual((rec["args"], rec["approvalEdited"], rec["argsSha256"]), ({"amount": 50}, True, sha({"amount": 50})))
        with self.assertRaises(ts.InvalidArgumentsError):
            asyncio.run(self.reg.arun("pay", {"amount": 501}, approve=lambda r: {"approved": True,
                                                                                 "args": {"amount": "all"}}))
        self.assertEqual(self.deleted, [50])
        self.assertTrue(self.records[-1]["approvalEdited"])

    def test_the_approver_mutating_what_it_was_shown_changes_nothing(self):
        def approve(r):
            r["args"]["event_id"] = "everything"
            return True
        self.assertEqual(self.reg.run("delete_event", {"event_id": "ev-1"}, approve=approve), "deleted ev-1")

    def test_a_declined_call_retried_in_a_loop_is_not_asked_again(self):
        asked = []
        for _ in range(4):
            with self.assertRaises(ts.PolicyError) as cm:
                self.reg.run("delete_event", {"event_id": "ev-9"}, approve=lambda r: asked.append(r) or False)
        self.assertEqual(len(asked), 1)
        self.assertIn("not asked about again (declined or retried 4 times)", str(cm.exception))
        self.assertEqual(self.records[-1]["outcome"], "refused")
        self.assertEqual(self.deleted, [])


if __name__ == "__main__":
    unittest.main()
