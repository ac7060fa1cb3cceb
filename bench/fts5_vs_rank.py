#!/usr/bin/env python3
"""Rank the same catalog and queries with SQLite FTS5 bm25() and with
`toolselect eval`, in one run, and print quality and the speed ratio.

usage: bench/fts5_vs_rank.py [--toolselect bin/toolselect] DATASET_DIR...
       (each DATASET_DIR holds tools.jsonl and queries.jsonl)

FTS5 indexes what the reference numbers indexed: the tool name split into
words plus the description (parameters not indexed), a small English
stopword list, query tokens OR-ed, top 10 by bm25().
"""
import argparse, json, re, sqlite3, statistics, subprocess, sys, time

STOP = set("a an and are as at be but by for from has have how i if in into is it its me my of on or our "
           "please so that the their them then there these they this to was we what when where which who "
           "will with you your".split())

def words(s):
    s = re.sub(r"([a-z])([A-Z])", r"\1 \2", s)
    return [w for w in re.findall(r"[^\W_]+", s.lower()) if w not in STOP]

def metrics(ranked, gold):
    gold = set(gold)
    r = lambda k: len(gold & set(ranked[:k])) / len(gold)
    import math
    dcg = sum(1 / math.log2(i + 2) for i, n in enumerate(ranked[:10]) if n in gold)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(len(gold), 10)))
    return r(1), r(5), r(10), dcg / idcg

def fts5(dirname):
    tools = [json.loads(l) for l in open(f"{dirname}/tools.jsonl") if l.strip()]
    queries = [json.loads(l) for l in open(f"{dirname}/queries.jsonl") if l.strip()]
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(name UNINDEXED, text)")
    t0 = time.perf_counter()
    db.executemany("INSERT INTO t VALUES (?, ?)",
                   [(x["name"], " ".join(words(x["name"]) + words(x.get("description", "")))) for x in tools])
    build = time.perf_counter() - t0
    lat, tot = [], [0.0] * 4
    for q in queries:
        toks = sorted(set(words(q["query"])))
        expr = " OR ".join('"%s"' % w.replace('"', '""') for w in toks)
        t0 = time.perf_counter()
        rows = db.execute("SELECT name FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10", (expr,)).fetchall() if toks else []
        lat.append(time.perf_counter() - t0)
        for i, v in enumerate(metrics([r[0] for r in rows], q["gold"])):
            tot[i] += v
    n = len(queries)
    return dict(r1=tot[0] / n, r5=tot[1] / n, r10=tot[2] / n, ndcg=tot[3] / n,
                p50_us=statistics.median(lat) * 1e6, build_ms=build * 1e3)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolselect", default="bin/toolselect")
    ap.add_argument("datasets", nargs="+")
    a = ap.parse_args()
    print(f"sqlite {sqlite3.sqlite_version}")
    print(f"{'dataset':<28} {'ranker':<10} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'NDCG@10':>8} {'p50 µs':>9}")
    for d in a.datasets:
        f = fts5(d)
        out = subprocess.run([a.toolselect, "eval", "--catalog", f"{d}/tools.jsonl", "--queries", f"{d}/queries.jsonl", "--json"],
                             capture_output=True, text=True, check=True).stdout
        g = json.loads(out)
        name = d.rstrip("/").split("/")[-1]
        print(f"{name:<28} {'fts5':<10} {f['r1']:6.3f} {f['r5']:6.3f} {f['r10']:6.3f} {f['ndcg']:8.3f} {f['p50_us']:9.1f}")
        print(f"{name:<28} {'toolselect':<10} {g['r@1']:6.3f} {g['r@5']:6.3f} {g['r@10']:6.3f} {g['ndcg@10']:8.3f} {g['latency_p50_us']:9.1f}")
        print(f"{name:<28} speed ratio (fts5 median / toolselect median): {f['p50_us'] / g['latency_p50_us']:.1f}x")

if __name__ == "__main__":
    sys.exit(main())
