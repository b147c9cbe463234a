"""Relevance: BM25 over a compact per-scope index, embedding fusion, neighbour smoothing.

Checked here: the compact index scores exactly like textbook BM25 and
survives out-of-order inserts and deletes; the numpy and pure-Python paths
give the same floats; neighbour smoothing lifts the turn after a relevant
one (and only within a conversation's time window); the embedding signal
lifts notes that share no word with the query but never reorders notes that
match it equally; ``Recall.retrieval`` names the mode, and recall degrades to
``lexical`` (with the same results) when numpy cannot be imported; rankings
are identical across runs and after a reopen.
"""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
from array import array
from collections import Counter
from pathlib import Path

import pytest

from remem import Memory
from remem.core.model import Scope
from remem.providers.embed import build_embedder
from remem.recall import relevance as rel
from remem.recall.index import LexicalIndex, ScopeIndex, _pack, term_hash
from remem.recall.tokens import tokens

from .helpers import ALICE, Clock, dm_alice, inferred, owner

np = pytest.importorskip("numpy")

import remem.recall.embeddings as embeddings  # noqa: E402
from providers.fakes import HashEmbedder  # noqa: E402

SRC = Path(__file__).resolve().parents[2] / "src"


# -- the compact index ------------------------------------------------------------------------


def _reference_bm25(docs: list[list[str]], query: list[str]) -> list[float]:
    """Textbook BM25 with the index's parameters."""
    from remem.recall.index import K1, B

    n = len(docs)
    avg = max(sum(len(d) for d in docs) / n, 1.0)
    df = Counter(t for d in docs for t in set(d))
    out = []
    for d in docs:
        tf = Counter(d)
        s = 0.0
        for t, q in Counter(query).items():
            if tf[t]:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                s += q * idf * tf[t] * (K1 + 1) / (tf[t] + K1 * (1 - B + B * len(d) / avg))
        out.append(s)
    return out


WORDS = [
    "tea",
    "garden",
    "cello",
    "cat",
    "porto",
    "book",
    "club",
    "tomato",
    "basil",
    "run",
    "swim",
    "paint",
    "dance",
]


def _random_docs(seed: int, n: int) -> list[list[str]]:
    rng = random.Random(seed)
    return [[rng.choice(WORDS) for _ in range(rng.randint(0, 9))] for _ in range(n)]


def test_index_scores_like_textbook_bm25_after_shuffled_inserts_and_deletes() -> None:
    docs = _random_docs(3, 60)
    ids = [f"note_{i:04d}" for i in range(len(docs))]
    ix = ScopeIndex()
    order = list(range(len(docs)))
    random.Random(5).shuffle(order)
    for i in order:
        ix.insert(ids[i], float(i), *_pack(docs[i]))
    for i in range(0, len(docs), 3):  # delete every third note
        ix.delete(ix.row(ids[i]))
    keep = [i for i in range(len(docs)) if i % 3]
    assert ix.ids == [ids[i] for i in keep]
    assert list(ix.said) == [float(i) for i in keep]
    lexical = LexicalIndex()
    for query in (["tea"], ["tea", "cat", "tea"], ["porto", "dance", "nothing"], []):
        want = _reference_bm25([docs[i] for i in keep], query)
        sparse = lexical.bm25_rows([ix], query)[0]
        dense = lexical.bm25_dense([ix], query)[0]
        for r, w in enumerate(want):
            assert sparse.get(r, 0.0) == pytest.approx(w, rel=1e-12)
            assert dense[r] == sparse.get(r, 0.0)  # bit-identical floats


def test_terms_never_match_across_hash_boundaries() -> None:
    ix = ScopeIndex()
    ix.insert("note_a", 0.0, *_pack(["alpha", "beta", "gamma", "delta"]))
    raw = bytes(ix.terms)
    real = {raw[i : i + 4] for i in range(0, len(raw), 4)}
    for term in ("alpha", "beta", "gamma", "delta"):
        assert ix.matches(term_hash(term)) == [(0, 1)]
    for off in range(1, len(raw) - 3):
        window = raw[off : off + 4]
        if off % 4 and window not in real:  # straddles two hashes
            assert ix.matches(int.from_bytes(window, "little")) == []


# -- smoothing -------------------------------------------------------------------------------


def test_sparse_and_dense_smoothing_agree_exactly() -> None:
    rng = random.Random(11)
    for _ in range(50):
        n = rng.randint(1, 40)
        said = array("d", sorted(rng.choice([0.0, 10.0, 5000.0, 9000.0]) for _ in range(n)))
        base = {r: rng.random() for r in range(n) if rng.random() < 0.3}
        sparse = rel.smooth_sparse(base, said)
        scores = np.zeros(n)
        for r, v in base.items():
            scores[r] = v
        dense = rel.smooth_dense(scores, np.array(said))
        assert {r: float(dense[r]) for r in np.flatnonzero(dense > 0)} == sparse


def test_neighbours_within_the_window_share_relevance(mem: Memory, clock: Clock) -> None:
    ctx = dm_alice()
    mem.remember(ctx, "Alice mentioned her brother visits often.")
    clock.advance(days=3)
    asked = mem.remember(ctx, "Bob asked how the Lisbon trip went.")
    clock.advance(minutes=1)
    answer = mem.remember(ctx, "Alice said it was wonderful, pastries every single day.")
    clock.advance(days=3)
    later = mem.remember(ctx, "Alice said the weather was grey all week.")
    rec = mem.recall(ctx, "Lisbon trip")
    order = [n.id for n in rec.notes]
    assert order[:2] == [asked.id, answer.id]
    # The answer shares no word with the query; it is lifted by its neighbour only,
    # and a note days away (outside the window) is not.
    assert rec.scores[answer.id] > rec.scores[later.id]


# -- modes and fusion ---------------------------------------------------------------------------


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> HashEmbedder:
    emb = HashEmbedder()
    monkeypatch.setattr(embeddings, "default_embedder", lambda: emb)
    return emb


def test_hybrid_mode_is_named(data_dir: Path, clock: Clock, fake: HashEmbedder) -> None:
    with Memory.open(data_dir, clock=clock) as m:
        m.remember(dm_alice(), "Alice plays the cello.")
        assert m.recall(dm_alice(), "cello").retrieval == rel.HYBRID
        assert m.recall(dm_alice(), "").retrieval == rel.LEXICAL  # nothing was scored


def test_a_failing_query_embedding_falls_back_to_lexical(
    data_dir: Path, clock: Clock, fake: HashEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    with Memory.open(data_dir, clock=clock) as m:
        note = m.remember(dm_alice(), "Alice plays the cello.")
        fake.fail = True
        rec = m.recall(dm_alice(), "cello")
        assert rec.retrieval == rel.LEXICAL
        assert [n.id for n in rec.notes] == [note.id]
        assert "recall runs lexically" in caplog.text


def test_similarity_lifts_notes_without_shared_words(
    data_dir: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("wordllama")
    monkeypatch.delenv("REMEM_EMBEDDINGS", raising=False)
    with Memory.open(data_dir, clock=clock) as m:
        ctx = dm_alice()
        unrelated = [
            m.remember(ctx, text).id
            for text in (
                "Alice's car needs new tyres.",
                "Alice repainted the kitchen blue.",
                "Alice reads detective novels.",
            )
        ]
        kin = m.remember(ctx, "Alice adopted two kittens from the shelter.")
        clock.advance(days=1)
        rec = m.recall(ctx, "pets cats")
        assert rec.retrieval == rel.HYBRID
        assert rec.notes[0].id == kin.id
        assert set(unrelated) <= {n.id for n in rec.notes}


def test_equal_lexical_matches_are_not_reordered_by_similarity(mem: Memory, clock: Clock) -> None:
    # Same words for the query, different for the embedding: the contract decides.
    older = mem.remember(dm_alice(), "Alice likes green tea with jasmine.")
    clock.advance(days=20)
    guessed = inferred(mem, dm_alice(), "Alice likes green tea with honey.")
    clock.advance(days=20)
    newer = mem.remember(dm_alice(), "Alice likes green tea with mint.")
    rec = mem.recall(dm_alice(), "green tea")
    assert [n.id for n in rec.notes] == [newer.id, older.id, guessed.id]


def test_lexical_without_numpy_gives_the_same_ranking(
    data_dir: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock.set(clock.now.replace(microsecond=0))
    with Memory.open(data_dir, clock=clock, embedder=None) as m:
        for i, text in enumerate(
            [
                "Alice grows tomatoes and basil.",
                "Bob asked about her balcony garden.",
                "Alice plays the cello on Sundays.",
                "She also paints landscapes.",
                "Alice's cat is called Miso.",
            ]
        ):
            m.remember(dm_alice(), text)
            clock.advance(minutes=10 + i)
        queries = ["garden tomatoes", "music cello", "cat", "what does alice paint"]
        here = []
        for query in queries:
            rec = m.recall(dm_alice(), query)
            assert rec.retrieval == rel.LEXICAL
            here.append([[n.id, rec.scores[n.id]] for n in rec.notes])
    script = f"""
import json, sys
sys.modules["numpy"] = None  # numpy cannot be imported
from datetime import datetime
from remem import Memory, RunContext
from remem.recall.relevance import LEXICAL
now = datetime.fromisoformat({clock.now.isoformat()!r})
m = Memory.open({str(data_dir)!r}, clock=lambda: now)
ctx = RunContext.dm({dm_alice().agent!r}, {dm_alice().channel!r}, {ALICE!r})
out = []
for q in {queries!r}:
    rec = m.recall(ctx, q)
    assert rec.retrieval == LEXICAL, rec.retrieval
    out.append([[n.id, rec.scores[n.id]] for n in rec.notes])
print(json.dumps(out))
"""
    env = {**os.environ, "PYTHONPATH": str(SRC), "REMEM_EMBEDDINGS": "static"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == here
    assert "numpy is not installed" in done.stderr  # it says why


def test_core_imports_without_numpy() -> None:
    script = (
        "import sys; sys.modules['numpy'] = None; sys.modules['wordllama'] = None\n"
        "import remem, remem.recall.relevance, remem.recall.embeddings, remem.providers.embed\n"
        "from remem.providers.embed import default_embedder\n"
        "assert default_embedder() is None\n"
        "print('ok')"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


# -- determinism -------------------------------------------------------------------------------


def _build(m: Memory, clock: Clock) -> None:
    topics = ["garden", "cello", "Porto", "book club", "tea", "running", "paint", "cats"]
    for i in range(60):
        a, b = topics[i % 8], topics[(i * 5 + 3) % 8]
        ctx = dm_alice()
        if i % 7 == 0:
            m.remember(owner(), f"The agent knows {a} and {b} matter ({i}).", scope="agent")
        elif i % 5 == 0:
            inferred(m, ctx, f"Alice may enjoy {a} more than {b} ({i}).")
        else:
            m.remember(ctx, f"Alice talked about {a}, then {b} ({i}).")
        clock.advance(minutes=17 if i % 6 else 60 * 30)


QUERIES = ["garden", "music and cello lessons", "where does she live", "hot drinks", "x y z"]


def _orders(m: Memory) -> list[list[tuple[str, float]]]:
    out = []
    for q in QUERIES:
        rec = m.recall(dm_alice(), q)
        out.append([(n.text, rec.scores[n.id]) for n in rec.notes])
    return out


@pytest.mark.parametrize("model", ["static", "off"])
def test_rankings_are_identical_across_runs_and_after_reopen(
    tmp_path: Path, clock_factory: type[Clock], monkeypatch: pytest.MonkeyPatch, model: str
) -> None:
    if model == "static":
        pytest.importorskip("wordllama")
    runs = []
    for name in ("a", "b"):
        clock = clock_factory()
        with Memory.open(tmp_path / name, clock=clock, embedder=build_embedder(model)) as m:
            _build(m, clock)
            first = _orders(m)
            assert _orders(m) == first
        with Memory.open(tmp_path / name, clock=clock, embedder=build_embedder(model)) as m:
            assert _orders(m) == first
        runs.append(first)
    assert runs[0] == runs[1]
    assert any(len(o) > 3 for o in runs[0])


def test_relevance_reads_only_the_eligible_scopes(mem: Memory, clock: Clock) -> None:
    for i in range(40):
        mem.remember(owner(), f"Agent fact {i} about tea.", scope="agent")
    mem.remember(dm_alice(), "Alice likes tea.")
    agent = mem._agent(dm_alice())
    state = agent.sync()
    keys = [(Scope.USER, ALICE)]
    scores, _ = rel.relevance(agent.lexical, state, keys, "tea")
    assert list(agent.lexical.scopes) == keys
    assert all(state.notes[i].scope is Scope.USER for i in scores)


def test_tokens_are_stable() -> None:
    # Index terms are derived data: a change here changes every ranking.
    assert tokens("Alice's cats were running to the gardens!") == ["alice", "cat", "run", "garden"]


def test_recall_while_another_thread_writes(mem: Memory) -> None:
    import threading

    for i in range(50):
        mem.remember(dm_alice(), f"Alice note {i} about tea and gardens.")
    errors: list[BaseException] = []
    stop = threading.Event()

    def writer() -> None:
        try:
            i = 0
            while not stop.is_set() and i < 300:
                note = mem.remember(dm_alice(), f"Alice wrote more about tea, take {i}.")
                if i % 3 == 0:
                    mem.forget(dm_alice(), note.id)
                i += 1
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        for _ in range(200):
            rec = mem.recall(dm_alice(), "tea gardens")
            assert rec.notes
    finally:
        stop.set()
        thread.join()
    assert not errors


def test_without_the_static_model_recall_is_lexical_and_says_why(tmp_path: Path) -> None:
    script = f"""
import sys
sys.modules["wordllama"] = None  # numpy is there, the model is not
from remem import Memory, RunContext
m = Memory.open({str(tmp_path / "data")!r})
ctx = RunContext.dm("yuko", "discord:dm", "discord:1")
m.remember(ctx, "Alice plays the cello.")
print(m.recall(ctx, "cello").retrieval)
"""
    env = {**os.environ, "PYTHONPATH": str(SRC), "REMEM_EMBEDDINGS": "static"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == rel.LEXICAL
    assert "wordllama" in done.stderr and "lexically" in done.stderr


def test_ranking_from_row_arrays_matches_ranking_from_the_score_mapping(
    mem: Memory, clock: Clock
) -> None:
    """The recall path ranks from per-scope row arrays (``Columns.gather``); it must give
    the same order and scores as the reference mapping path, also once the rows changed."""
    from remem.policy.channel import recall_policy_of
    from remem.recall.engine import prepare
    from remem.recall.rank import Columns
    from remem.recall.scopes import current_keys, eligible_scopes

    rng = random.Random(7)
    words = [
        "tea",
        "coffee",
        "cello",
        "tomatoes",
        "basil",
        "porto",
        "book",
        "club",
        "cat",
        "miso",
        "running",
        "piano",
    ]
    ids = []
    for k in range(60):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(2, 6))) + f" ({k})"
        ids.append(mem.remember(dm_alice(), text).id)
        clock.advance(minutes=rng.choice([5, 30, 90]))
    ctx = dm_alice()
    agent = mem._agent(ctx)

    def both(query: str) -> tuple[list[int], list[float], list[int], list[float]]:
        state = agent.sync()
        keys = eligible_scopes(ctx, state)
        policy = recall_policy_of(mem.limits(ctx, ctx.channel), mem.limits(ctx), state.preferences)
        now = clock()
        prepared = prepare(agent, state, ctx, keys, policy, now, None)
        columns = prepared.columns
        assert columns is not None
        scores, _ = rel.relevance(agent.lexical, state, keys, query)
        order_a, final_a, _ = columns.rank(scores, now, True)
        fresh = Columns(prepared.notes, current_keys(ctx))
        assert fresh.rank(scores, now, True)[0] == order_a
        gathered, _ = rel.relevance_rows(agent.lexical, state, keys, query, columns.gather)
        order_b, final_b, _ = columns.rank_gathered(gathered, now, True)
        return order_a, final_a, order_b, final_b

    for query in ["tea and cello", "miso the cat", "porto running club", "nothing matches"]:
        a, fa, b, fb = both(query)
        assert (a, fa) == (b, fb)
    mem.forget(dm_alice(), ids[10])
    mem.remember(dm_alice(), "basil tea in porto")
    for query in ["basil tea", "cello"]:
        a, fa, b, fb = both(query)
        assert (a, fa) == (b, fb)
