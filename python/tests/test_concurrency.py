import asyncio
import time
import unittest

import toolselect as ts

from .helpers import FakeClient, calls_json, make_registry, task


class ConcurrencyTest(unittest.TestCase):
    def test_fifty_concurrent_selections_do_not_serialise(self):
        """50 selections against a client taking 100 ms each finish well under 1 s,
        and the event loop keeps ticking meanwhile."""
        reg = make_registry()
        self.addCleanup(reg.close)
        client = FakeClient(calls_json(("add", {"a": 1, "b": 2})), delay=0.1)
        sel = ts.ToolSelector(client=client, config=ts.ToolSelectionConfig(model="m"))
        self.addCleanup(sel.close)

        async def main():
            await sel.select_tool_calls(task=task(), tool_registry=reg)  # warm up: load, compile
            ticks = 0
            stop = False

            async def ticker():
                nonlocal ticks
                while not stop:
                    ticks += 1
                    await asyncio.sleep(0.01)

            t = asyncio.ensure_future(ticker())
            start = time.perf_counter()
            results = await asyncio.gather(*[sel.select_tool_calls(task=task(), tool_registry=reg)
                                             for _ in range(50)])
            elapsed = time.perf_counter() - start
            stop = True
            await t
            return results, elapsed, ticks

        results, elapsed, ticks = asyncio.run(main())
        self.assertTrue(all(len(r) == 1 for r in results))
        self.assertLess(elapsed, 0.6, f"50 x 100 ms took {elapsed:.3f} s")
        self.assertGreater(ticks, 5, "the event loop was blocked")
        print(f"\n  50 concurrent selections x 100 ms client: {elapsed * 1000:.0f} ms", end=" ")

    def test_threads_share_a_registry(self):
        import concurrent.futures

        reg = make_registry()
        self.addCleanup(reg.close)

        def work(i):
            return all(reg.validate("add", {"a": i, "b": j}).valid for j in range(200))

        with concurrent.futures.ThreadPoolExecutor(8) as ex:
            self.assertTrue(all(ex.map(work, range(16))))


if __name__ == "__main__":
    unittest.main()
