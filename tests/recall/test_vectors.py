"""The vector index: derived from the log, erasable, persisted as a rebuildable cache.

Vectors are computed when a note is written, kept per scope as int8 rows,
removed at once when a note is forgotten, and removed from disk by
compaction. The cache file next to the log is never trusted blindly: a row
is used only once its note is seen with the same text, so a missing, stale,
damaged or foreign cache is rebuilt from the log (scope by scope, as recall
needs them), and the rankings do not change.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

import remem.recall.embeddings as embeddings  # noqa: E402
import remem.recall.vectorfile as vectorfile_mod  # noqa: E402
import remem.recall.vectors as vectors_mod  # noqa: E402
from providers.fakes import HashEmbedder  # noqa: E402
from remem import Memory  # noqa: E402
from remem.core.model import Scope  # noqa: E402
from remem.recall.relevance import HYBRID, LEXICAL  # noqa: E402
from remem.recall.vectors import VectorBlock, VectorIndex, fingerprint, quantize  # noqa: E402

from .helpers import AGENT, ALICE, Clock, dm_alice, dm_bob, owner  # noqa: E402

TEXTS = [
    "Alice grows tomatoes and basil on her balcony.",
    "Alice is learning to play the cello.",
    "Alice's cat is called Miso.",
    "Alice prefers tea over coffee in the morning.",
    "Alice runs a book club on Thursdays.",
    "Alice moved to Porto last spring.",
]
QUERIES = ["what does alice grow", "pets", "music lessons", "where does she live", "drinks"]


@pytest.fixture
def embedder(monkeypatch: pytest.MonkeyPatch) -> HashEmbedder:
    fake = HashEmbedder()
    monkeypatch.setattr(embeddings, "default_embedder", lambda: fake)
    return fake


@pytest.fixture
def vmem(data_dir: Path, clock: Clock, embedder: HashEmbedder) -> Iterator[Memory]:
    memory = Memory.open(data_dir, clock=clock)
    try:
        yield memory
    finally:
        memory.close()


def index_of(mem: Memory) -> VectorIndex:
    """The index as a recall reading every scope would find it (caught up, and every
    scope's notes embedded)."""
    agent = mem._agent(owner())
    state = agent.sync()
    assert agent.vectors is not None
    agent.vectors.ensure(state, list(state.scopes))
    return agent.vectors


def unsynced_index_of(mem: Memory) -> VectorIndex:
    """The index as it stands, without the catch-up every read does first."""
    vectors = mem._agent(owner()).vectors
    assert vectors is not None
    return vectors


def cache_file(data_dir: Path) -> Path:
    return data_dir / "agents" / AGENT / "vectors.cache"


def seed(mem: Memory, clock: Clock) -> list[str]:
    """Alice's notes, embedded (as the first recall of her scope does)."""
    ids = []
    for text in TEXTS:
        ids.append(mem.remember(dm_alice(), text).id)
        clock.advance(hours=2)
    index_of(mem)
    return ids


def orders(mem: Memory) -> list[list[tuple[str, float]]]:
    out = []
    for query in QUERIES:
        rec = mem.recall(dm_alice(), query)
        assert rec.retrieval == HYBRID
        out.append([(n.id, rec.scores[n.id]) for n in rec.notes])
    return out


def reopen(data_dir: Path, clock: Clock) -> Memory:
    return Memory.open(data_dir, clock=clock)


# -- upkeep ---------------------------------------------------------------------------------


def test_a_scope_nobody_recalls_costs_no_embedding_until_a_recall_reads_it(
    vmem: Memory, clock: Clock, embedder: HashEmbedder
) -> None:
    seed(vmem, clock)
    bob_notes = [vmem.remember(dm_bob(), f"Bob collects {n} stamps.") for n in ("red", "blue")]
    vmem.list(dm_bob())  # a read: it brings the indexes up to date, and embeds nothing
    assert embedder.embedded([n.text for n in bob_notes]) == 0
    batches: list[int] = []
    real = embedder.embed
    embedder.embed = lambda texts: (batches.append(len(texts)), real(texts))[1]  # type: ignore[method-assign]
    vmem.recall(dm_bob(), "stamps")
    assert embedder.embedded([n.text for n in bob_notes]) == 2
    assert 2 in batches  # the scope's notes in one call (besides the query's)
    assert all(n.id in unsynced_index_of(vmem) for n in bob_notes)
    # Now read: a new note there is embedded at the next read, not the next recall.
    third = vmem.remember(dm_bob(), "Bob collects green stamps.")
    vmem.list(dm_bob())
    assert third.id in unsynced_index_of(vmem)


def test_vectors_are_computed_at_write_time(vmem: Memory, clock: Clock) -> None:
    ids = seed(vmem, clock)
    index = index_of(vmem)
    assert all(i in index for i in ids)
    block = index.block((Scope.USER, ALICE))
    assert block is not None and block.ids == sorted(ids)


def test_forgetting_removes_the_vector_at_once(vmem: Memory, clock: Clock) -> None:
    ids = seed(vmem, clock)
    vmem.forget(dm_alice(), ids[2])
    index = index_of(vmem)
    assert ids[2] not in index
    block = index.block((Scope.USER, ALICE))
    assert block is not None and ids[2] not in block.ids and len(block) == len(ids) - 1
    rec = vmem.recall(dm_alice(), "cat Miso")
    assert ids[2] not in [n.id for n in rec.notes]


def test_a_correction_is_embedded_again(vmem: Memory, clock: Clock, embedder: HashEmbedder) -> None:
    note = vmem.remember(dm_alice(), "Alice's cat is called Miso.")
    assert note.id in index_of(vmem)  # read: the new note is embedded first
    before = embedder.calls
    vmem.pin(dm_alice(), note.id)  # nothing the vector depends on changed
    assert embedder.calls == before
    vmem.correct(dm_alice(), note.id, "Alice's dog is called Miso.")
    assert embedder.calls == before + 1
    block = index_of(vmem).block((Scope.USER, ALICE))
    assert block is not None
    want = embedder.embed(["Alice's dog is called Miso."])
    q, _ = quantize(want)
    np.testing.assert_array_equal(block.mat[block.row(note.id)], q[0])


def test_a_moved_note_moves_its_vector(vmem: Memory, clock: Clock) -> None:
    note = vmem.remember(dm_alice(), "This DM plans the garden.")
    vmem.move(dm_alice(), note.id, scope="channel")
    index = index_of(vmem)
    assert index.block((Scope.USER, ALICE)) is None
    block = index.block((Scope.CHANNEL, dm_alice().channel))
    assert block is not None and block.ids == [note.id]


def test_compaction_removes_the_vector_from_disk(
    vmem: Memory, clock: Clock, data_dir: Path
) -> None:
    ids = seed(vmem, clock)
    path = cache_file(data_dir)
    index_of(vmem).close()  # cache records are written in batches: write them now
    assert ids[2].encode() in path.read_bytes()
    vmem.forget(dm_alice(), ids[2])
    report = vmem.compact(owner())
    assert ids[2] in report.notes_erased
    assert not path.exists() or ids[2].encode() not in path.read_bytes()
    # The next change writes the cache again, from memory, without the erased note.
    vmem.remember(dm_alice(), "Alice bought a new bicycle.")
    index_of(vmem).close()
    data = path.read_bytes()
    assert ids[2].encode() not in data and ids[0].encode() in data


def test_queued_cache_records_of_an_erased_note_never_reach_the_disk(
    vmem: Memory, clock: Clock, data_dir: Path
) -> None:
    ids = seed(vmem, clock)
    index_of(vmem).close()
    secret = vmem.remember(dm_alice(), "Alice's locker code is in her notebook.")
    vmem.forget(dm_alice(), secret.id)  # its put and drop are still queued
    vmem.compact(owner())
    vmem.remember(dm_alice(), "Alice bought a new bicycle.")
    vmem.close()
    data = cache_file(data_dir).read_bytes()
    assert secret.id.encode() not in data and ids[0].encode() in data


def test_cache_records_are_written_in_batches_and_on_close(
    vmem: Memory, clock: Clock, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectorfile_mod, "FLUSH_SECONDS", 3600.0)
    first = vmem.remember(dm_alice(), "Alice grows tomatoes.")
    index_of(vmem).close()
    size = cache_file(data_dir).stat().st_size
    more = [vmem.remember(dm_alice(), f"Alice fact number {i}.") for i in range(5)]
    assert cache_file(data_dir).stat().st_size == size  # queued, not written yet
    vmem.close()
    data = cache_file(data_dir).read_bytes()
    assert all(n.id.encode() in data for n in [first, *more])


# -- the cache file ---------------------------------------------------------------------------


def test_reopening_reuses_the_cache(
    vmem: Memory, clock: Clock, data_dir: Path, embedder: HashEmbedder
) -> None:
    seed(vmem, clock)
    first = orders(vmem)
    vmem.close()
    embedder.reset()
    again = reopen(data_dir, clock)
    try:
        assert orders(again) == first
        assert embedder.embedded(TEXTS) == 0  # only the queries were embedded
    finally:
        again.close()


def test_a_missing_cache_is_rebuilt_from_the_log(
    vmem: Memory, clock: Clock, data_dir: Path, embedder: HashEmbedder
) -> None:
    ids = seed(vmem, clock)
    first = orders(vmem)
    vmem.close()
    cache_file(data_dir).unlink()
    embedder.reset()
    again = reopen(data_dir, clock)
    try:
        assert orders(again) == first
        assert embedder.embedded(TEXTS) == len(ids)
        assert all(i in index_of(again) for i in ids)
        assert cache_file(data_dir).exists()
    finally:
        again.close()
    embedder.reset()
    third = reopen(data_dir, clock)
    try:
        assert orders(third) == first
        assert embedder.embedded(TEXTS) == 0  # the rebuilt cache serves the next open
    finally:
        third.close()


def test_a_stale_cache_is_caught_up(
    vmem: Memory,
    clock: Clock,
    data_dir: Path,
    embedder: HashEmbedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ids = seed(vmem, clock)
    vmem.close()
    # Another process without embeddings writes more notes and corrects one.
    monkeypatch.setattr(embeddings, "default_embedder", lambda: None)
    other = reopen(data_dir, clock)
    museum = [f"Alice visited museum number {i}." for i in (1, 2)]
    peppers = "Alice grows peppers on her balcony."
    try:
        more = [other.remember(dm_alice(), text).id for text in museum]
        other.correct(dm_alice(), ids[0], peppers)
        other.forget(dm_alice(), ids[1])
    finally:
        other.close()
    monkeypatch.setattr(embeddings, "default_embedder", lambda: embedder)
    embedder.reset()
    again = reopen(data_dir, clock)
    try:
        rebuilt = orders(again)
        # The two new notes and the corrected one, nothing else.
        assert embedder.embedded([*TEXTS, *museum, peppers]) == 3
        index = index_of(again)
        assert all(i in index for i in [*more, ids[0], *ids[2:]])
        assert ids[1] not in index
    finally:
        again.close()
    # The same rankings as a store built from scratch without any cache.
    cache_file(data_dir).unlink()
    fresh = reopen(data_dir, clock)
    try:
        assert orders(fresh) == rebuilt
    finally:
        fresh.close()


def _damage(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_damaged_cache_costs_time_not_correctness(
    vmem: Memory, clock: Clock, data_dir: Path, embedder: HashEmbedder
) -> None:
    ids = seed(vmem, clock)
    first = orders(vmem)
    vmem.close()
    path = cache_file(data_dir)
    _damage(path, len(path.read_bytes()) - 10)  # inside the last record
    with open(path, "ab") as fh:
        fh.write(b"torn")  # and a partial record at the end
    embedder.reset()
    again = reopen(data_dir, clock)
    try:
        assert orders(again) == first
        assert embedder.embedded(TEXTS) == 1  # only the damaged record's note
    finally:
        again.close()
    path.write_bytes(b"not a vector cache at all")
    embedder.reset()
    third = reopen(data_dir, clock)
    try:
        assert orders(third) == first
        assert embedder.embedded(TEXTS) == len(ids)
        assert path.read_bytes().startswith(b"REMEMVEC")
    finally:
        third.close()


def test_a_cache_from_another_embedder_is_not_used(
    vmem: Memory,
    clock: Clock,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ids = seed(vmem, clock)
    vmem.close()
    other = HashEmbedder(name="hash-32-v2")
    monkeypatch.setattr(embeddings, "default_embedder", lambda: other)
    again = reopen(data_dir, clock)
    try:
        orders(again)
        assert other.embedded(TEXTS) == len(ids)
    finally:
        again.close()


def test_compaction_keeps_the_vectors_of_scopes_not_loaded(
    vmem: Memory, clock: Clock, data_dir: Path, embedder: HashEmbedder
) -> None:
    seed(vmem, clock)
    bob = [vmem.remember(dm_bob(), f"Bob keeps bees, hive {i}.").id for i in range(3)]
    vmem.close()
    again = reopen(data_dir, clock)
    try:
        gone = again.remember(dm_alice(), "Alice's old phone number changed.")
        again.forget(dm_alice(), gone.id)
        again.compact(owner())
        again.remember(dm_alice(), "Alice bought a new bicycle.")  # writes the cache again
        index_of(again).close()  # (in batches: now)
        data = cache_file(data_dir).read_bytes()
        assert gone.id.encode() not in data
        assert all(i.encode() in data for i in bob)  # never loaded here, still cached
    finally:
        again.close()
    embedder.reset()
    third = reopen(data_dir, clock)
    try:
        third.recall(dm_bob(), "bees")
        assert embedder.embedded([f"Bob keeps bees, hive {i}." for i in range(3)]) == 0
    finally:
        third.close()


# -- failures and modes ---------------------------------------------------------------------


def test_embedding_failures_are_retried_and_recall_keeps_working(
    vmem: Memory, clock: Clock, embedder: HashEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors_mod, "RETRY_SECONDS", 0.0)
    embedder.fail = True
    note = vmem.remember(dm_alice(), "Alice collects vinyl records.")
    assert note.id not in index_of(vmem)
    rec = vmem.recall(dm_alice(), "vinyl records")
    assert rec.retrieval == LEXICAL  # the query could not be embedded either
    assert [n.id for n in rec.notes] == [note.id]
    embedder.fail = False
    vmem.remember(dm_alice(), "Alice is allergic to cats.")
    assert note.id in index_of(vmem)
    assert vmem.recall(dm_alice(), "vinyl records").retrieval == HYBRID


def test_vectors_off_means_lexical(
    data_dir: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = Memory.open(data_dir, clock=clock, embedder=None)
    try:
        memory.remember(dm_alice(), "Alice collects vinyl records.")
        assert memory._agent(dm_alice()).vectors is None
        assert memory.recall(dm_alice(), "records").retrieval == LEXICAL
        assert not cache_file(data_dir).exists()
    finally:
        memory.close()


def test_only_eligible_scopes_are_read(
    vmem: Memory, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(30):
        vmem.remember(dm_bob(), f"Bob note {i} about gardening and tea.")
    vmem.remember(dm_alice(), "Alice likes gardening.")
    read: list[int] = []
    real = VectorBlock.similarities

    def spy(self: VectorBlock, query: object) -> object:
        read.append(len(self))
        return real(self, query)  # type: ignore[arg-type]

    monkeypatch.setattr(VectorBlock, "similarities", spy)
    rec = vmem.recall(dm_alice(), "gardening tea")
    assert rec.retrieval == HYBRID
    assert read == [1]  # Alice's scope only; Bob's 30 rows were never touched
    lexical = vmem._agent(dm_alice()).lexical
    assert (Scope.USER, "discord:200") not in lexical.scopes


# -- storage ------------------------------------------------------------------------------------


def test_int8_rows_keep_cosines() -> None:
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((200, 256)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    q, scale = quantize(vectors)
    assert q.dtype == np.int8 and scale.dtype == np.float32
    query = vectors[0]
    exact = vectors @ query
    approx = (q.astype(np.float32) @ query) * scale
    assert np.abs(exact - approx).max() < 0.01
    zq, zs = quantize(np.zeros((1, 256), dtype=np.float32))
    assert not zq.any() and zs[0] == 0


def test_rows_stay_small_and_in_id_order() -> None:
    block = VectorBlock(256)
    rng = np.random.default_rng(1)
    ids = [f"note_{i:026d}" for i in range(1000)]
    order = rng.permutation(len(ids))
    for i in order:
        block.insert(ids[i], np.ones(256, dtype=np.int8) * (i % 100), 0.01, i)
    assert block.ids == ids
    assert [int(x) for x in block.fps[:5]] == [0, 1, 2, 3, 4]
    per_note = (block.mat.nbytes + block.scale.nbytes + block.fps.nbytes) / len(block)
    assert per_note < 1.3 * (256 + 4 + 8)
    for r in range(999, -1, -2):
        block.delete(r)
    assert block.ids == ids[0::2]
    assert [int(x) for x in block.fps[:3]] == [0, 2, 4]
    assert len(block.scale) < 1000


def test_new_notes_are_indexed_before_the_next_read_in_one_batch(
    vmem: Memory, embedder: HashEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A note reaches the projection after its fsync (RAM only once durable); the index
    embeds and places new notes later, never earlier: before the next read, all the
    waiting texts in one call to the embedder."""
    import os
    import stat

    from remem.store import syscalls

    index = unsynced_index_of(vmem)
    batches: list[list[str]] = []
    real_fsync, real_embed = os.fsync, embedder.embed
    agent = vmem._agent(dm_alice())
    known_during_fsync: list[set[str]] = []

    def fsync(fd: int) -> None:
        if stat.S_ISREG(os.fstat(fd).st_mode):  # the log's fsync, not its directories'
            known_during_fsync.append(set(agent.state.home))
        real_fsync(fd)

    def embed(texts: list[str]) -> object:
        batches.append(list(texts))
        return real_embed(texts)

    vmem.recall(dm_alice(), "garden")  # her scope is read from now on: kept complete
    monkeypatch.setattr(syscalls, "fsync", fsync)
    monkeypatch.setattr(embedder, "embed", embed)
    first = vmem.remember(dm_alice(), "Alice keeps bees in the garden.")
    second = vmem.remember(dm_alice(), "Alice grows tomatoes on the balcony.")
    assert first.id not in known_during_fsync[0] and second.id not in known_during_fsync[1]
    assert batches == [] and first.id not in index and second.id not in index

    vmem.get(dm_alice(), first.id)  # any read brings the indexes up to date first
    assert first.id in index and second.id in index
    assert batches == [[first.text, second.text]]


def test_a_recall_right_after_a_write_ranks_it_by_its_vector(vmem: Memory) -> None:
    vmem.remember(dm_alice(), "Alice keeps bees in the garden.")
    note = vmem.remember(dm_alice(), "Alice grows tomatoes on the balcony.")
    result = vmem.recall(dm_alice(), "tomatoes")
    assert result.retrieval == "hybrid"
    assert [n.id for n in result.notes][:1] == [note.id]
    assert note.id in index_of(vmem)


def test_changes_other_than_new_notes_reach_the_index_before_the_write_returns(
    vmem: Memory,
) -> None:
    index = unsynced_index_of(vmem)
    vmem.recall(dm_alice(), "garden")  # her scope is read from now on: kept complete
    kept = vmem.remember(dm_alice(), "Alice keeps bees in the garden.")
    gone = vmem.remember(dm_alice(), "Alice grows tomatoes on the balcony.")
    vmem.forget(dm_alice(), gone.id)  # also places the pending vectors first
    assert kept.id in index and gone.id not in index
    corrected = vmem.correct(dm_alice(), kept.id, "Alice keeps two hives of bees.")
    fp = fingerprint(corrected.text)
    block = next(b for b in index.blocks.values() if b.row(kept.id) >= 0)
    assert int(block.fps[block.row(kept.id)]) == fp


def test_close_writes_the_vectors_of_notes_no_read_indexed(
    data_dir: Path, clock: Clock, embedder: HashEmbedder
) -> None:
    texts = [f"Alice note number {i} about bees." for i in range(3)]
    with Memory.open(data_dir, clock=clock) as mem:
        mem.recall(dm_alice(), "bees")  # her scope is read: its notes get vectors
        notes = [mem.remember(dm_alice(), text) for text in texts]
        assert notes[-1].id not in unsynced_index_of(mem)
    embedder.reset()
    again = reopen(data_dir, clock)
    try:
        again.recall(dm_alice(), "bees")
        index = index_of(again)
        assert all(n.id in index for n in notes)
        assert embedder.embedded(texts) == 0  # every vector came from the cache file
    finally:
        again.close()


def test_quantizing_one_row_matches_quantizing_it_in_a_batch() -> None:
    rng = np.random.default_rng(3)
    rows = rng.standard_normal((300, 64)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    rows[7] = 0.0  # a zero row gets scale 0 either way
    q, scale = quantize(rows)
    for i in range(len(rows)):
        one_q, one_scale = quantize(rows[i : i + 1])
        np.testing.assert_array_equal(one_q[0], q[i])
        assert one_scale.dtype == scale.dtype and one_scale[0] == scale[i]


def test_compaction_also_removes_a_cache_write_left_half_done(
    vmem: Memory, clock: Clock, data_dir: Path
) -> None:
    seed(vmem, clock)
    folder = cache_file(data_dir).parent
    leftover = folder / ".vectors.cache.k2j3x9.tmp"  # a crash in the middle of a snapshot
    leftover.write_bytes(b"REMEMVEC" + b"\x01" * 300)
    report = vmem.compact(owner())
    assert not leftover.exists()
    assert str(leftover) in report.files_removed
    assert (data_dir / "agents" / AGENT / "memory.jsonl").exists()
