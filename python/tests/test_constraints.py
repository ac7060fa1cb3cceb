"""Constraints kept: Annotated with pydantic Field or annotated_types, the
string formats of datetime, date, UUID and Path, nested models closed,
pydantic titles dropped, a parameter's docstring line over its class's."""

import asyncio
import datetime
import json
import os
import pathlib
import unittest
import uuid
from pathlib import Path
from typing import Annotated, Any, List

import toolselect as ts

GOLDEN = Path(__file__).resolve().parent / "testdata" / "book_room.tool.json"


def _pydantic() -> Any:
    try:
        import annotated_types
        import pydantic
    except ImportError:
        if os.environ.get("CI") == "true":
            raise
        raise unittest.SkipTest("pydantic is not installed (it is never required; python3 -m pip install 'pydantic>=2')")
    if int(pydantic.VERSION.split(".")[0]) < 2:
        raise unittest.SkipTest(f"pydantic {pydantic.VERSION} is installed; these tests read pydantic 2")
    return pydantic, annotated_types


class ConstraintsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.reg = ts.ToolRegistry()
        self.addCleanup(self.reg.close)

    def register_book_room(self) -> List[Any]:
        pydantic, at = _pydantic()
        Field = pydantic.Field

        class Room(pydantic.BaseModel):
            """A meeting room (the class's docstring)."""
            name: str
            title: str = ""  # a property named title stays

        got: List[Any] = []

        def book_room(minutes: Annotated[int, Field(ge=1, le=480, description="minutes")],
                      start: datetime.datetime, day: datetime.date, request_id: uuid.UUID,
                      agenda: pathlib.Path, room: Room,
                      people: Annotated[List[str], at.MinLen(1), at.MaxLen(8)],
                      code: Annotated[str, Field(pattern=r"^[A-Z]{3}$")],
                      step: Annotated[float, at.MultipleOf(0.5), at.Gt(0), at.Lt(10)],
                      initials: Annotated[str, at.Len(2, 3)] = "AB") -> str:
            """Book a meeting room.

            Args:
                minutes: ignored: the Field's description wins
                room: the room to book
            """
            got.extend([minutes, start, day, request_id, agenda, room])
            return "booked"

        self.reg.register("book_room", book_room)
        return got

    def test_golden_book_room(self) -> None:
        self.register_book_room()
        got = json.loads(self.reg.get_tools_schema())
        if os.environ.get("TOOLSELECT_UPDATE_GOLDEN"):
            GOLDEN.write_text(json.dumps(got[0], indent=2) + "\n")
        self.assertEqual(got, [json.loads(GOLDEN.read_text())])

    def test_constraints_are_enforced_and_values_converted(self) -> None:
        got = self.register_book_room()
        ok = {"minutes": 30, "start": "2026-11-29T09:00:00Z", "day": "2026-11-29",
              "request_id": "12345678-1234-5678-1234-567812345678", "agenda": "/tmp/agenda.md",
              "room": {"name": "Blue"}, "people": ["ann"], "code": "ABC", "step": 1.5}
        self.assertTrue(self.reg.validate("book_room", ok))
        for bad, pointer in (({"minutes": 0}, "/minutes"), ({"minutes": 481}, "/minutes"), ({"people": []}, "/people"),
                             ({"code": "abc"}, "/code"), ({"step": 0.7}, "/step"), ({"step": 10}, "/step"),
                             ({"initials": "A"}, "/initials"), ({"room": {"name": "x", "floor": 2}}, "/room")):
            with self.subTest(bad=bad):
                v = self.reg.validate("book_room", {**ok, **bad})
                self.assertFalse(v)
                self.assertEqual([x.pointer for x in v.violations], [pointer])
        self.assertEqual(asyncio.run(self.reg.arun("book_room", ok)), "booked")
        self.assertEqual(got[:5], [30, datetime.datetime(2026, 11, 29, 9, tzinfo=datetime.timezone.utc),
                                   datetime.date(2026, 11, 29), uuid.UUID("12345678-1234-5678-1234-567812345678"),
                                   pathlib.Path("/tmp/agenda.md")])
        self.assertEqual(type(got[5]).__name__, "Room")

    def test_formats_without_pydantic(self) -> None:
        def at(when: datetime.datetime, day: datetime.date, at: datetime.time, id: uuid.UUID, p: pathlib.Path,
               n: Annotated[int, "how many"]) -> None: ...
        self.reg.register("at", at)
        props = json.loads(self.reg.get_tools_schema())[0]["parameters"]["properties"]
        self.assertEqual({k: v.get("format") for k, v in props.items()},
                         {"when": "date-time", "day": "date", "at": "time", "id": "uuid", "p": "path", "n": None})
        self.assertEqual(props["n"], {"type": "integer", "description": "how many"})

    def test_what_cannot_be_expressed_is_refused_by_name(self) -> None:
        _, at = _pydantic()

        def length_of_int(n: Annotated[int, at.MinLen(1)]) -> None: ...
        def predicate(n: Annotated[int, at.Predicate(lambda x: x > 0)]) -> None: ...
        for fn, want in ((length_of_int, "parameter 'n': MinLen"), (predicate, "parameter 'n': Annotated metadata")):
            with self.subTest(fn=fn.__name__), self.assertRaises(ts.RegistrationError) as cm:
                self.reg.register(fn.__name__, fn)
            self.assertIn(want, str(cm.exception))
            self.assertNotIn(fn.__name__, self.reg)


if __name__ == "__main__":
    unittest.main()
