"""Run the Python package's unittest suite for `make test` (tests/run.sh).

    python3 tests/pyunit_report.py REPORT_FILE   # run from python/

Prints each test as it runs (verbosity 2) and writes the step file that
internal/tools/testreport reads: counts, each skip with its reason, each failure.
The exit status is 1 when a test failed or errored.
"""
import sys
import time
import unittest


def main() -> int:
    report = sys.argv[1]
    suite = unittest.defaultTestLoader.discover("tests", top_level_dir=".")
    start = time.monotonic()
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    took = time.monotonic() - start
    failed = [t for t, _ in result.failures + result.errors]
    failed += [t for t in result.unexpectedSuccesses]
    skipped = result.skipped
    passed = result.testsRun - len(failed) - len(skipped)  # expected failures count as passed
    with open(report, "w", encoding="utf-8") as f:
        f.write(f"count\t{passed}\t{len(failed)}\t{len(skipped)}\n")
        f.write(f"time\t{took:.1f}\n")
        for test, reason in skipped:
            f.write(f"skip\t{test.id()}\t{' '.join(str(reason).split())}\n")
        for test in failed:
            name = test.id() if hasattr(test, "id") else str(test)
            f.write(f"fail\t{name}\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
