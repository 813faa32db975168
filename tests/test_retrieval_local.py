"""Local retrieval: chunking, grouping, the BM25 index, corpus readers, the index CLI."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

from sciarena.core.errors import RetrievalError
from sciarena.core.settings import DEMO_CORPUS_DIR
from sciarena.core.types import Paper, Passage
from sciarena.retrieval.bm25 import bm25_index, top_indices
from sciarena.retrieval.corpus import (
    demo_corpus_files,
    parse_bibtex,
    read_corpus,
    read_corpus_file,
)
from sciarena.retrieval.grouping import group_passages
from sciarena.retrieval.local import (
    LocalIndex,
    LocalRetriever,
    load_demo_index,
    open_local_retriever,
)
from sciarena.retrieval.passages import (
    chunk_text,
    indexed_text,
    paper_passages,
    split_sentences,
)

REPO = Path(__file__).resolve().parents[1]
CONSONANTS = "bcdfghjkmnpqrtvwxz"  # no vowels or 's': the stemmer leaves such words alone


def marker(i: int) -> str:
    """A word unique to paper ``i``."""
    letters = []
    for _ in range(4):
        i, r = divmod(i, len(CONSONANTS))
        letters.append(CONSONANTS[r])
    return "zq" + "".join(letters)


def make_corpus(n_papers: int = 40, seed: int = 7) -> list[tuple[Paper, str]]:
    """Papers of random common words, each with its own marker word somewhere in the middle."""
    rng = random.Random(seed)
    common = ["".join(rng.choice("abcdefghijklmnoprtuvw") for _ in range(rng.randint(4, 9)))
              for _ in range(300)]
    pairs = []
    for i in range(n_papers):
        sentences = [" ".join(rng.choices(common, k=rng.randint(8, 20))).capitalize() + "."
                     for _ in range(rng.randint(15, 60))]
        middle = len(sentences) // 2
        sentences[middle] = f"{sentences[middle][:-1]} {marker(i)}."
        paper = Paper(paper_id=f"p{i}", title=f"Paper {i} {rng.choice(common)}",
                      authors=(f"Author {i}",), year=2000 + i % 20, venue="Venue")
        pairs.append((paper, " ".join(sentences)))
    return pairs


def passage(paper_id: str, position: int, score: float) -> Passage:
    return Passage(passage_id=f"{paper_id}#{position}", paper=Paper(paper_id, f"T {paper_id}"),
                   text=f"text {paper_id} {position}", position=position, score=score)


# --- chunking -------------------------------------------------------------------------

def test_chunks_respect_limit_keep_every_word_and_end_on_sentences():
    rng = random.Random(1)
    sentences = [" ".join(f"w{rng.randint(0, 99)}" for _ in range(rng.randint(5, 40))) + "."
                 for _ in range(80)]
    text = " ".join(s.capitalize() for s in sentences)
    chunks = chunk_text(text, max_words=100)
    total = len(text.split())
    assert all(len(c.split()) <= 100 for c in chunks)
    assert " ".join(chunks).split() == text.split()
    assert all(c.endswith(".") for c in chunks)
    # as few passages as filling each one up to the limit gives ...
    filled, size = 1, 0
    for sentence in sentences:
        n = len(sentence.split())
        filled, size = (filled + 1, n) if size + n > 100 else (filled, size + n)
    assert len(chunks) == filled >= math.ceil(total / 100)
    # ... but evenly sized: no stub passage
    assert min(len(c.split()) for c in chunks) >= 50


def test_uniform_sentences_give_the_fewest_passages():
    text = " ".join(f"Sentence {i} has exactly eight words in it." for i in range(100))
    chunks = chunk_text(text, max_words=250)  # 800 words
    assert len(chunks) == 4
    assert [len(c.split()) for c in chunks] == [200, 200, 200, 200]


def test_a_sentence_longer_than_a_passage_is_cut_into_windows():
    words = [f"x{i}" for i in range(620)]
    chunks = chunk_text(" ".join(words) + ". Short tail here.", max_words=250)
    assert [len(c.split()) for c in chunks] == [207, 207, 209]
    assert " ".join(chunks).split() == (" ".join(words) + ". Short tail here.").split()


def test_sentence_splitting_keeps_abbreviations_together():
    text = ("Smith et al. (2020) showed it.  See Fig. 3 for details! Is it true? Yes, e.g. here. "
            "J. R. Smith agreed (e.g. Table 2).\n\n\"Quoted.\" 42 is the answer.")
    assert split_sentences(text) == [
        "Smith et al. (2020) showed it.", "See Fig. 3 for details!", "Is it true?", "Yes, e.g. here.",
        "J. R. Smith agreed (e.g. Table 2).", '"Quoted."', "42 is the answer."]
    assert split_sentences("   ") == [] and chunk_text("") == []
    with pytest.raises(ValueError):
        chunk_text("a b", max_words=0)


def test_paper_passages_positions_ids_and_title_prefix():
    paper = Paper("x1", "Graphene Transistors")
    text = " ".join(f"Sentence number {i} is here." for i in range(120))  # 600 words
    passages = paper_passages(paper, text, max_words=250)
    assert [p.position for p in passages] == list(range(len(passages))) == [0, 1, 2]
    assert [p.passage_id for p in passages] == ["x1#0", "x1#1", "x1#2"]
    assert "Graphene" not in passages[0].text  # display text is the paper's own text
    assert indexed_text(paper.title, passages[0].text, 0).startswith("Graphene Transistors\n")
    assert indexed_text(paper.title, passages[1].text, 1) == passages[1].text
    (only,) = paper_passages(paper, "   ")
    assert (only.text, only.kind) == ("Graphene Transistors", "title")
    assert indexed_text(paper.title, only.text, 0, only.kind) == "Graphene Transistors"


# --- grouping -------------------------------------------------------------------------

def test_grouping_orders_papers_by_best_passage_and_passages_by_position():
    hits = [passage("a", 3, 2.0), passage("b", 0, 5.0), passage("a", 1, 4.0),
            passage("c", 2, 1.0), passage("b", 7, 0.5)]
    refs = group_passages(hits, top_k=10)
    assert [(r.number, r.paper.paper_id) for r in refs] == [(1, "b"), (2, "a"), (3, "c")]
    assert [p.position for p in refs[0].passages] == [0, 7]
    assert [p.position for p in refs[1].passages] == [1, 3]
    assert [r.score for r in refs] == [5.0, 4.0, 1.0]


def test_grouping_cuts_to_top_k_passages_and_drops_duplicates():
    hits = [passage("a", 0, 3.0), passage("b", 0, 2.0), passage("c", 0, 1.0),
            passage("a", 1, 2.5), passage("a", 0, 1.0)]
    refs = group_passages(hits, top_k=3)
    assert [r.paper.paper_id for r in refs] == ["a", "b"]  # c fell outside the top 3
    assert [(p.position, p.score) for p in refs[0].passages] == [(0, 3.0), (1, 2.5)]
    assert sum(len(r.passages) for r in refs) == 3
    assert group_passages([], top_k=5) == ()
    with pytest.raises(ValueError):
        group_passages(hits, top_k=0)


# --- the index ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def corpus() -> list[tuple[Paper, str]]:
    return make_corpus()


@pytest.fixture(scope="module")
def index(corpus) -> LocalIndex:
    return LocalIndex.build(corpus, max_words=120)


def test_distinctive_words_find_their_paper_first(index, corpus):
    assert index.num_papers == len(corpus)
    assert index.num_passages > 2 * len(corpus)  # papers were split
    for i, (paper, _) in enumerate(corpus):
        hits = index.search(f"what about {marker(i)}?", k=5)
        assert hits and hits[0].paper.paper_id == paper.paper_id
        assert {h.paper.paper_id for h in hits} == {paper.paper_id}
        assert marker(i) in hits[0].text


def test_title_words_are_indexed_with_the_first_passage():
    pairs = [(Paper("t1", "Perovskite Photovoltaics"), "Cells convert light. They are efficient."),
             (Paper("t2", "Other Work"), "Nothing relevant is said here at all.")]
    hits = LocalIndex.build(pairs).search("perovskite", k=5)
    assert [(h.paper.paper_id, h.position) for h in hits] == [("t1", 0)]


def test_scores_are_lucene_bm25_with_stemming_and_stopwords():
    pairs = [(Paper("d1", "Alpha"), "cats cat dog"), (Paper("d2", "Beta"), "the cat bird"),
             (Paper("d3", "Gamma"), "fish fishes fish")]
    hits = LocalIndex.build(pairs).search("The CATS", k=5)
    lengths = {"d1": 4, "d2": 3}  # title word + text words, "the" removed
    avg = 11 / 3
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    tf = {"d1": 2, "d2": 1}
    expected = {d: idf * tf[d] / (tf[d] + 1.5 * (1 - 0.75 + 0.75 * lengths[d] / avg)) for d in tf}
    assert [h.paper.paper_id for h in hits] == ["d1", "d2"]
    for h in hits:
        assert h.score == pytest.approx(expected[h.paper.paper_id], rel=1e-5)


@pytest.mark.parametrize("batch", [20_000, 4])  # one batch; several merged batches
def test_numpy_build_matches_bm25s_own_tokenize_and_index(corpus, batch):
    import bm25s
    import Stemmer

    texts = [f"{paper.title} {text}" for paper, text in corpus[:15]] + ["The and of", "Gene GENES genetic"]
    ours = bm25_index(texts, batch=batch)
    tokens = bm25s.tokenize(texts, stopwords="en", stemmer=Stemmer.Stemmer("english"), show_progress=False)
    theirs = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    theirs.index(tokens, show_progress=False)
    assert ours.vocab_dict.keys() == theirs.vocab_dict.keys()
    for stem in ours.vocab_dict.keys() - {""}:  # "" is bm25s's placeholder, not a column
        a, b = ours.vocab_dict[stem], theirs.vocab_dict[stem]
        ours_col = slice(*ours.scores["indptr"][a:a + 2])
        theirs_col = slice(*theirs.scores["indptr"][b:b + 2])
        assert list(ours.scores["indices"][ours_col]) == list(theirs.scores["indices"][theirs_col])
        assert ours.scores["data"][ours_col] == pytest.approx(theirs.scores["data"][theirs_col], rel=1e-6)


@pytest.mark.parametrize("seed", range(6))
def test_top_indices_equal_a_full_sort(seed):
    import numpy as np

    rng = np.random.default_rng(seed)
    n = int(rng.choice([50, 5_000, 200_000]))
    scores = np.zeros(n, dtype=np.float32)
    matches = rng.choice(n, size=int(n * rng.choice([0.0005, 0.05, 0.9])) + 1, replace=False)
    # coarse values so ties are common, as with repeated one-word passages
    scores[matches] = rng.integers(1, 40, size=matches.shape[0]) / 4
    for k in (1, 7, 30, 1000):
        positive = np.flatnonzero(scores > 0)
        expected = positive[np.lexsort((positive, -scores[positive]))][:k]
        assert top_indices(scores, k).tolist() == expected.tolist()


def test_empty_and_unmatched_queries_return_nothing(index):
    assert index.search("") == []
    assert index.search("the of and with") == []
    assert index.search("qqqqqqqq unknownword") == []
    with pytest.raises(ValueError):
        index.search("x", k=0)


def test_k_larger_than_the_corpus_returns_every_match():
    pairs = [(Paper("a", "Solar"), "wind"), (Paper("b", "Solar power"), "sun")]
    assert len(LocalIndex.build(pairs).search("solar", k=100)) == 2


def test_save_then_load_gives_identical_results(index, corpus, tmp_path):
    index.save(tmp_path / "idx")
    loaded = LocalIndex.load(tmp_path / "idx")
    assert (loaded.num_papers, loaded.num_passages) == (index.num_papers, index.num_passages)
    words = corpus[3][1].split()[:40]
    queries = [" ".join(words[i:i + 4]) for i in range(0, 40, 4)] + [marker(5)]
    for q in queries:
        before, after = index.search(q, k=30), loaded.search(q, k=30)
        assert before and before == after  # Passage equality: ids, papers, texts, scores
    index.save(tmp_path / "idx")  # an existing index is replaced
    assert LocalIndex.load(tmp_path / "idx").search(marker(5)) == index.search(marker(5))


def test_load_and_save_errors_are_clear(index, tmp_path):
    with pytest.raises(RetrievalError, match="python -m sciarena index"):
        LocalIndex.load(tmp_path / "missing")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "keep.txt").write_text("mine")
    with pytest.raises(RetrievalError, match="not an index"):
        index.save(tmp_path / "notes")
    assert (tmp_path / "notes" / "keep.txt").read_text() == "mine"
    index.save(tmp_path / "idx")
    meta = json.loads((tmp_path / "idx" / "meta.json").read_text())
    (tmp_path / "idx" / "meta.json").write_text(json.dumps({**meta, "format": 99}))
    with pytest.raises(RetrievalError, match="format 99.*rebuild"):
        LocalIndex.load(tmp_path / "idx")
    (tmp_path / "idx" / "meta.json").write_text(json.dumps(meta))
    (tmp_path / "idx" / "texts.bin").unlink()
    with pytest.raises(RetrievalError, match="unreadable.*rebuild"):
        LocalIndex.load(tmp_path / "idx")
    with pytest.raises(RetrievalError, match="no papers"):
        LocalIndex.build([])
    with pytest.raises(RetrievalError, match="twice"):
        LocalIndex.build([(Paper("a", "X"), "y"), (Paper("a", "Z"), "w")])


def test_retriever_numbers_references_and_respects_top_k(index):
    common = " ".join(make_corpus(1)[0][1].split()[:6])
    result = LocalRetriever(index, "local:test", top_k=7).retrieve(common)
    assert result.backend == "local:test" and result.queries == (common,)
    assert [r.number for r in result.references] == list(range(1, len(result.references) + 1))
    assert sum(len(r.passages) for r in result.references) == 7
    scores = [r.score for r in result.references]
    assert scores == sorted(scores, reverse=True)
    empty = LocalRetriever(index, "local:test").retrieve("zzzzzz")
    assert empty.references == () and empty.note


def test_open_local_retriever_specs(index, tmp_path):
    index.save(tmp_path / "idx")
    retriever = open_local_retriever(f"local:{tmp_path / 'idx'}", top_k=5)
    assert retriever.backend_name == f"local:{tmp_path / 'idx'}" and retriever.top_k == 5
    assert retriever.retrieve(marker(2)).references[0].paper.paper_id == "p2"
    with pytest.raises(RetrievalError, match="no index"):
        open_local_retriever(f"local:{tmp_path / 'nothing'}")
    with pytest.raises(RetrievalError, match="unknown local retriever"):
        open_local_retriever("elastic")


def test_demo_index_is_cached_by_corpus_content(tmp_path, monkeypatch):
    corpus_dir, cache = tmp_path / "corpus", tmp_path / "cache"
    corpus_dir.mkdir()
    records = [{"id": f"r{i}", "title": f"Study {i} of {marker(i)}", "authors": ["A B"],
                "year": 2020, "venue": "V", "summary": "Some words about things."} for i in range(5)]
    (corpus_dir / "a.jsonl").write_text("\n".join(json.dumps(r) for r in records))
    first = load_demo_index(cache, corpus_dir=corpus_dir)
    assert len(list(cache.glob("demo-*"))) == 1

    def no_build(*args, **kwargs):
        raise AssertionError("the cached index should have been loaded")

    monkeypatch.setattr(LocalIndex, "build", no_build)
    second = load_demo_index(cache, corpus_dir=corpus_dir)
    assert second.search(marker(3)) == first.search(marker(3))
    monkeypatch.undo()
    (corpus_dir / "a.jsonl").write_text("\n".join(json.dumps(r) for r in records[:3]))
    assert load_demo_index(cache, corpus_dir=corpus_dir).num_papers == 3
    assert len(list(cache.glob("demo-*"))) == 2
    with pytest.raises(RetrievalError, match="demo corpus is missing"):
        load_demo_index(None, corpus_dir=tmp_path / "empty")


# --- corpus readers -------------------------------------------------------------------

def test_jsonl_records_with_variant_and_missing_fields(tmp_path):
    lines = [
        {"id": 17, "title": " Deep  learning ", "authors": "LeCun, Y.; Bengio, Y.; Hinton, G.",
         "year": "2015", "venue": "Nature", "abstract": "Abstract here.", "text": "Body here."},
        {"title": "No id or authors"},
        {"id": "s2", "title": "Dict authors", "authors": [{"name": "Ada Lovelace"}],
         "journal": "J", "summary": "Summary text.", "et_al": True, "year": 1843},
        {"id": "bib", "title": "Bib authors", "authors": "Curie, Marie and Pierre Curie and others"},
    ]
    path = tmp_path / "user.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n\n")
    (a, a_text), (b, b_text), (c, c_text), (d, _) = read_corpus_file(path)
    assert (a.paper_id, a.title, a.year, a.venue) == ("17", "Deep learning", 2015, "Nature")
    assert a.authors == ("LeCun, Y.", "Bengio, Y.", "Hinton, G.") and a_text == "Abstract here.\n\nBody here."
    assert b.paper_id.startswith("paper-") and b.authors == () and b.year is None and b_text == ""
    assert read_corpus_file(path)[1][0].paper_id == b.paper_id  # stable across reads
    assert (c.authors, c.venue, c.et_al, c_text) == (("Ada Lovelace",), "J", True, "Summary text.")
    assert d.authors == ("Marie Curie", "Pierre Curie") and d.et_al


@pytest.mark.parametrize("bad, message", [
    ('{"title": "ok"}\n{"title": "broken"', "bad.jsonl:2: invalid JSON"),
    ('{"title": "ok"}\n\n{"authors": ["x"]}', "bad.jsonl:3: missing 'title'"),
    ('{"title": "ok", "year": "recent"}', "bad.jsonl:1: 'year' must be a year"),
    ('{"title": "ok", "authors": 5}', "bad.jsonl:1: 'authors' must be a list"),
    ('["not", "an", "object"]', "bad.jsonl:1: expected a JSON object"),
])
def test_malformed_jsonl_names_file_and_line(tmp_path, bad, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(bad)
    with pytest.raises(RetrievalError, match=message):
        read_corpus_file(path)


def test_skip_malformed_keeps_good_records(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_text('{"title": "good one"}\n{oops\n{"title": "good two"}\n')
    assert [p.title for p, _ in read_corpus_file(path, skip_malformed=True)] == ["good one", "good two"]


def test_json_array_duplicates_and_file_errors(tmp_path):
    array = tmp_path / "a.json"
    array.write_text(json.dumps([{"id": "x", "title": "One"}, {"id": "y", "title": "Two"}]))
    other = tmp_path / "b.jsonl"
    other.write_text(json.dumps({"id": "x", "title": "Again"}))
    assert [p.paper_id for p, _ in read_corpus([array])] == ["x", "y"]
    with pytest.raises(RetrievalError, match="'x' already used"):
        read_corpus([array, other])
    assert len(read_corpus([array, other], skip_malformed=True)) == 2
    with pytest.raises(RetrievalError, match="no such file"):
        read_corpus_file(tmp_path / "missing.jsonl")
    (tmp_path / "x.csv").write_text("a,b")
    with pytest.raises(RetrievalError, match="unsupported corpus file type"):
        read_corpus_file(tmp_path / "x.csv")
    (tmp_path / "latin.jsonl").write_bytes('{"title": "caf\xe9"}'.encode("latin-1"))
    with pytest.raises(RetrievalError, match="not UTF-8"):
        read_corpus_file(tmp_path / "latin.jsonl")


BIB = r"""
% exported by a reference manager; contact me@example.org
@string{nat = "Nature"}
@article{jinek2012,
  title = {A programmable dual-{RNA}-guided {DNA} endonuclease},
  author = {Jinek, Martin and Chylinski, Krzysztof and others},
  journal = nat # " Biotechnology",
  year = 2012,
  doi = "10.1126/science.1225829",
  abstract = {Cas9 is guided by {RNA}. Schr\"odinger and G{\"o}del were not involved.},
}
@inproceedings(vaswani2017, title = "Attention is all you need",
  author = "Ashish Vaswani and Noam Shazeer", booktitle = {NeurIPS}, year = {2017},
  url = {https://example.org/attention})
@comment{anything {goes} here}
"""


def test_bibtex_entries_become_papers(tmp_path):
    path = tmp_path / "refs.bib"
    path.write_text(BIB)
    (a, a_text), (b, b_text) = read_corpus_file(path)
    assert a.paper_id == "jinek2012" and a.title == "A programmable dual-RNA-guided DNA endonuclease"
    assert a.authors == ("Martin Jinek", "Krzysztof Chylinski") and a.et_al
    assert (a.venue, a.year, a.doi) == ("Nature Biotechnology", 2012, "10.1126/science.1225829")
    assert a_text == "Cas9 is guided by RNA. Schrödinger and Gödel were not involved."
    assert (b.venue, b.year, b.url, b_text) == ("NeurIPS", 2017, "https://example.org/attention", "")
    assert b.concise_authors == "Vaswani and Shazeer 2017"


@pytest.mark.parametrize("bad, message", [
    ("@article{k1, title = {ok}}\n\n@article{k2,\n title = {never closed\n", r"bad\.bib:3: unterminated"),
    ("@article{k1, year = 2020}", r"bad\.bib:1: missing 'title'"),
    ("\n@article{k1, title {x}}", r"bad\.bib:2: expected '='"),
    ("@article{title = {x}}", r"bad\.bib:1: @article entry has no citation key"),
    ("@article{k1, title = {x}, year = {soon}}", r"bad\.bib:1: 'year' must be a year"),
])
def test_malformed_bibtex_names_file_and_line(tmp_path, bad, message):
    path = tmp_path / "bad.bib"
    path.write_text(bad)
    with pytest.raises(RetrievalError, match=message):
        read_corpus_file(path)


def test_bibtex_parser_resumes_after_a_broken_entry():
    entries = parse_bibtex("@article{a, title = {x\n@article{b, title = {Fine}}\n")
    assert [(e.key, e.error != "") for e in entries] == [("", True), ("b", False)]


# --- CLI ------------------------------------------------------------------------------

def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sciarena.cli.index", *args],
                          cwd=REPO, capture_output=True, text=True, timeout=120)


@pytest.mark.slow  # starts a subprocess or a loopback server
def test_cli_builds_an_index_that_loads(tmp_path):
    papers = tmp_path / "papers.jsonl"
    papers.write_text("\n".join(json.dumps({"id": f"j{i}", "title": f"Paper {marker(i)}",
                                            "abstract": "Words. " * 300}) for i in range(3)))
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB)
    out = tmp_path / "index"
    done = run_cli("index", "--corpus", str(papers), "--corpus", str(bib), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "indexed 5 papers as 8 passages from 2 file(s)" in done.stdout
    loaded = LocalIndex.load(out)
    assert loaded.search(marker(1))[0].paper.paper_id == "j1"
    assert loaded.search("endonuclease")[0].paper.paper_id == "jinek2012"


@pytest.mark.slow  # starts a subprocess or a loopback server
@pytest.mark.parametrize("content, message", [
    ('{"title": "ok"}\n{"title": ', "bad.jsonl:2: invalid JSON"),
    (None, "no such file"),
])
def test_cli_reports_bad_input_without_a_traceback(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    if content is not None:
        path.write_text(content)
    done = run_cli("index", "--corpus", str(path), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_index_errors_begin_with_the_command_as_every_other_command_does(tmp_path, capsys):
    import argparse

    from sciarena.cli import index

    for words, corpus in ((10, tmp_path / "papers.jsonl"), (250, tmp_path / "missing.jsonl")):
        args = argparse.Namespace(passage_words=words, corpus=[str(corpus)], out=str(tmp_path / "out"))
        assert index.run(args) == 2
        err = capsys.readouterr().err
        assert err.startswith("sciarena index: ") and "error:" not in err, err


# --- the bundled demo corpus ----------------------------------------------------------

demo_files = demo_corpus_files(DEMO_CORPUS_DIR)
needs_demo = pytest.mark.skipif(not demo_files, reason="the demo corpus files are absent")


@needs_demo
def test_demo_corpus_is_clean_and_complete():
    pairs = read_corpus(demo_files)  # strict: a malformed line or repeated id fails here
    assert len(pairs) >= 50
    for paper, text in pairs:
        assert paper.title and paper.authors and paper.year and paper.venue, paper.paper_id
        assert len(text.split()) >= 30, paper.paper_id


@needs_demo
def test_demo_index_answers_topical_questions():
    retriever = LocalRetriever(load_demo_index(None), "local:demo", top_k=30)
    pairs = read_corpus(demo_files)
    for paper, _ in random.Random(3).sample(pairs, 10):
        top3 = [r.paper.paper_id for r in retriever.retrieve(paper.title).references[:3]]
        assert paper.paper_id in top3, paper.title
    for question, topic in [("CRISPR gene editing", "crispr"), ("transformer attention", "attention")]:
        if not any(topic in f"{p.title} {t}".lower() for p, t in pairs):
            continue  # that discipline's file is not in the corpus (yet)
        refs = retriever.retrieve(question).references
        assert refs and refs[0].number == 1
        top = refs[0].paper
        assert top.title and top.authors and top.year and top.venue
        assert topic in (top.title + " ".join(p.text for p in refs[0].passages)).lower()
