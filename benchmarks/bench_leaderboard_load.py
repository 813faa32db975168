"""Benchmark the leaderboard's page load with 100,000 stored votes, Hub copies + local files combined.

    python benchmarks/bench_leaderboard_load.py            # 100k votes
    python benchmarks/bench_leaderboard_load.py --votes 20000

Scenario: a deployment that has run for a while. Every shard has been pushed to the votes
dataset (a loopback Hub, tests/fake_hub.py, served to the real huggingface_hub client); this
machine still holds the last few shards, two of them longer than their Hub copy (votes
written since the last push). ``VoteSource`` mirrors the Hub shards into a cache folder and
hands the leaderboard each shard once (the longer copy), so nothing is counted twice.

Then the Leaderboard tab itself (``LeaderboardTab.refresh``, the memo keyed by the files'
fingerprint): the first load after a change of the votes (the vote table and the board are
computed), a load with nothing changed (a lookup), a switch to a discipline and to a category,
style control on, and 16 concurrent loads; the reference is the old tab's load (load_votes +
compute_leaderboard on every load) run in the same process.

Figures: the one-off mirror download; ``VoteSource.files()`` between refreshes and with a
refresh (one tree listing, nothing changed); ``load_votes`` cold (no columnar cache) and
warm; ``compute_leaderboard`` (100 bootstrap rounds); the page load = files + warm load +
compute. Reference, same run, same files: ``sciarena.votes.read.records.read_records`` (full JSON
parse + dedupe by id, what a consumer script does) followed by the same computation.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from fake_hub import FakeHub, make_record  # noqa: E402
from huggingface_hub import CommitOperationAdd, HfApi  # noqa: E402

from sciarena.board import compute_leaderboard  # noqa: E402
from sciarena.science.quality.vouch import load_votes  # noqa: E402
from sciarena.votes.read import VoteSource, read_records  # noqa: E402

REPO = "bench/votes"
MODELS = [f"Model-{k:02d}" for k in range(24)]
STRENGTH = {m: random.Random(k).gauss(0, 1) for k, m in enumerate(MODELS)}


def generate(n: int, shards: int, seed: int = 0) -> list[list[bytes]]:
    """``shards`` lists of JSON lines, ``n`` records in all, with realistic sizes (~5 KB each)."""
    rng = random.Random(seed)
    template = make_record(1)
    filler = ("The retrieved studies report consistent effects across cohorts, with caveats about "
              "sample size and measurement [1]. ") * 12
    citation = dict(template["citations_b"][0], content="Passage text from the cited paper. " * 9)
    out: list[list[bytes]] = [[] for _ in range(shards)]
    for i in range(n):
        a, b = rng.sample(MODELS, 2)
        p = 1 / (1 + 10 ** ((STRENGTH[b] - STRENGTH[a]) / 2))
        u = rng.random()
        vote = "tie" if u < 0.08 else "bad" if u < 0.11 else ("A" if rng.random() < p else "B")
        record = copy.copy(template)
        record.update(id=f"battle-{i:07d}", modelA=a, modelB=b, vote=vote, responseA=filler, responseB=filler[::-1],
                      citations_a=[citation] * 3, citations_b=[citation] * 2, length_a=len(filler),
                      length_b=len(filler), num_citations_a=3, num_citations_b=2,
                      subject=rng.choice(["Engineering", "Healthcare", "Natural Science", "Humanities"]))
        out[i * shards // n].append(json.dumps(record).encode() + b"\n")
    return out


def timed(fn, repeat: int = 1):
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--votes", type=int, default=100_000)
    parser.add_argument("--shards", type=int, default=20)
    parser.add_argument("--local-shards", type=int, default=4, help="the newest shards still on this machine")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-lb-"))
    try:
        run(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args: argparse.Namespace, work: Path) -> None:
    t, shards = timed(lambda: generate(args.votes, args.shards))
    names = [f"2026-11-{10 + k // 2:02d}/votes-{k:032x}.jsonl" for k in range(args.shards)]
    print(f"generated {args.votes} votes in {args.shards} shards in {t:.1f} s "
          f"({sum(map(len, (b''.join(s) for s in shards))) / 1e6:.0f} MB)")
    local_root = work / "data" / "votes"
    unpushed = 0
    with FakeHub() as hub:
        api = HfApi(endpoint=hub.endpoint, token="hf_bench")
        api.create_repo(REPO, repo_type="dataset")
        ops = []
        for k, (name, lines) in enumerate(zip(names, shards)):
            local = k >= args.shards - args.local_shards
            held_back = len(lines) // 10 if local and k % 2 else 0  # written since the last push
            unpushed += held_back
            ops.append(CommitOperationAdd(f"data/{name}", b"".join(lines[: len(lines) - held_back])))
            if local:
                (local_root / name).parent.mkdir(parents=True, exist_ok=True)
                (local_root / name).write_bytes(b"".join(lines))
        api.create_commit(REPO, ops, commit_message="bench", repo_type="dataset")
        print(f"Hub holds {args.votes - unpushed} votes; this machine {args.local_shards} shards, "
              f"{unpushed} votes not yet pushed")

        source = VoteSource(local_root, repo_id=REPO, api=api, cache_dir=work / "data" / "hub-votes")
        t_mirror, _ = timed(source.refresh)
        t_refresh, _ = timed(source.refresh, repeat=3)
        t_files, files = timed(source.files, repeat=5)
    print(f"mirror download, first time: {t_mirror:.2f} s; refresh with nothing new: {t_refresh * 1e3:.0f} ms; "
          f"VoteSource.files() between refreshes: {t_files * 1e3:.1f} ms ({len(files)} files)")

    t_cold, table = timed(lambda: load_votes(files, cache=True))
    t_warm, table = timed(lambda: load_votes(files, cache=True), repeat=3)
    t_nocache, _ = timed(lambda: load_votes(files, cache=False))
    t_compute, board = timed(lambda: compute_leaderboard(table, bootstrap=100, seed=0), repeat=2)
    assert table.n_votes == args.votes, f"{table.n_votes} votes loaded, {args.votes} stored: double or lost"
    page = t_files + t_warm + t_compute
    print(f"load_votes: first (builds the columnar cache) {t_cold:.2f} s, warm {t_warm * 1e3:.0f} ms, "
          f"without cache {t_nocache:.2f} s; {table.n_votes} votes, none counted twice")
    print(f"compute_leaderboard (BT + 100 bootstrap rounds): {t_compute * 1e3:.0f} ms; {len(board.rows)} models")
    print(f"page load (files + warm load + compute): {page * 1e3:.0f} ms")

    tab = tab_benchmark(source, files, table)
    data_benchmark(files, tab)

    t_ref, records = timed(lambda: read_records(files))
    assert len(records) == args.votes
    print(f"reference, read_records (json parse + dedupe by id): {t_ref:.2f} s "
          f"-> warm load is {t_ref / t_warm:.0f}x faster, page load {t_ref / page:.1f}x faster than the parse alone")


def tab_benchmark(source: VoteSource, files: list, table) -> None:
    from concurrent.futures import ThreadPoolExecutor
    from types import SimpleNamespace

    import gradio as gr

    from sciarena.ui.leaderboard_tab import LeaderboardTab
    from sciarena.wiring import open_board

    votes = SimpleNamespace(files=lambda: files)
    pool = SimpleNamespace(active=(), inactive=())
    tab = LeaderboardTab(open_board(votes, pool))  # type: ignore[arg-type]
    with gr.Blocks():
        view = tab.build()
    t_old, _ = timed(lambda: compute_leaderboard(load_votes(files, cache=True), bootstrap=100, seed=0), repeat=2)
    t_first, _ = timed(lambda: tab.refresh(view))
    t_wait, _ = timed(tab.board.wait_warm)  # the background style fit started by that first load
    t_again, _ = timed(lambda: tab.refresh(view), repeat=5)
    discipline = "subject:" + table.subjects[0]
    category = "question_type:" + table.question_types[0] if table.question_types else discipline
    t_disc, _ = timed(lambda: tab.refresh(view, discipline))
    t_cat, _ = timed(lambda: tab.refresh(view, category))
    t_disc_again, _ = timed(lambda: tab.refresh(view, discipline), repeat=3)
    t_style, _ = timed(lambda: tab.refresh(view, "overall", True))
    cold = LeaderboardTab(open_board(votes, pool, warm_style=False))  # type: ignore[arg-type]
    with gr.Blocks():
        cold_view = cold.build()
    cold.refresh(cold_view)
    t_style_cold, _ = timed(lambda: cold.refresh(cold_view, "overall", True))
    with ThreadPoolExecutor(16) as pool:
        t_16, _ = timed(lambda: list(pool.map(lambda _: tab.refresh(view), range(16))))
    print(f"old tab load (load_votes + compute on every load), reference: {t_old * 1e3:.0f} ms")
    print(f"tab first load after a change of the votes: {t_first * 1e3:.0f} ms "
          f"({t_old / t_first:.1f}x the reference speed); load with nothing changed: {t_again * 1e3:.1f} ms "
          f"({t_old / t_again:.0f}x)")
    print(f"view switch, first time: discipline {t_disc * 1e3:.0f} ms, category {t_cat * 1e3:.0f} ms; "
          f"again: {t_disc_again * 1e3:.1f} ms")
    print(f"style control on, after the background fit: {t_style * 1e3:.1f} ms; the background fit went on "
          f"{t_wait:.2f} s after the first load returned; without it (cold) the toggle takes {t_style_cold:.2f} s")
    print(f"16 concurrent loads, nothing changed: {t_16 * 1e3:.0f} ms in all; "
          f"computations run in the whole tab benchmark: {tab.board.memo.computed}")
    return tab


def data_benchmark(files: list, tab) -> None:
    """The Data section: its reader (records vs the columnar reader with texts), the statistics, the
    HTML, the section opened first and again, and, for reference, the analysis' matplotlib figures."""
    import io

    from sciarena.science.stats.plots import FIGURES
    from sciarena.science.stats.stats import compute_stats
    from sciarena.ui.board_data import data_html
    from sciarena.votes.read import read_columns

    t_records, records = timed(lambda: read_records(files))
    t_columns, _ = timed(lambda: read_columns(files, copy=True, strict=False, texts=True), repeat=2)
    ranked = tab.board.ranked(tab.board.snapshot(), 100)
    t_stats, stats = timed(lambda: compute_stats(records, ranked=ranked))
    t_html, html = timed(lambda: data_html(stats), repeat=3)
    t_open, _ = timed(tab.data)
    t_again, _ = timed(tab.data, repeat=5)

    def pngs() -> int:
        size = 0
        for figure in FIGURES.values():
            fig = figure(stats)
            if fig is not None:
                buf = io.BytesIO()
                fig.savefig(buf, format="png", dpi=100)
                size += buf.tell()
        return size

    t_png, png_bytes = timed(pngs)
    print(f"Data section readers: read_records {t_records:.2f} s; columnar reader with texts (warm cache) "
          f"{t_columns:.2f} s ({t_records / t_columns:.1f}x faster; the tab uses it, through stats_from_columns)")
    print(f"Data section: compute_stats {t_stats:.2f} s, HTML {t_html * 1e3:.1f} ms ({len(html) / 1e3:.0f} kB); "
          f"opened first time {t_open:.2f} s, again (memo) {t_again * 1e3:.2f} ms")
    print(f"reference, the {len(FIGURES)} matplotlib figures as PNG: {t_png:.2f} s "
          f"({t_png / t_html:.0f}x the HTML; {png_bytes / 1e3:.0f} kB)")


if __name__ == "__main__":
    main()
