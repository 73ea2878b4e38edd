"""The import's compact sets: WordPress ids (``IdSet``, a bit an id) and the slugs its items
took (``Fingerprints``, 8 bytes a slug)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sitemap_server.wordpress.importer import Fingerprints, IdSet

# Ids as an export may carry them: small ones, the bitmap's edge, huge and negative ones.
IDS = st.one_of(
    st.integers(0, 5000),
    st.integers(IdSet.BITS - 10, IdSet.BITS + 10),
    st.integers(-(2**63), 2**63),
)


@given(st.lists(IDS), st.lists(IDS))
def test_it_holds_exactly_what_was_added(added, asked):
    ids = IdSet()
    for value in added:
        ids.add(value)
    for value in added + asked:
        assert (value in ids) == (value in set(added))


def test_a_million_ids_cost_a_bit_each():
    ids = IdSet()
    for value in range(1, 1_000_001):
        ids.add(value)
    assert len(ids.bits) <= 2 * 1_000_001 // 8  # doubling leaves at most half unused
    assert not ids.beyond
    assert 1_000_000 in ids and 1_000_001 not in ids and 0 not in ids


KEYS = st.tuples(st.sampled_from(["post", "page"]), st.integers(0, 5), st.text(max_size=8))


@given(st.lists(KEYS), st.lists(KEYS))
def test_fingerprints_hold_exactly_what_was_added(added, asked):
    keys = Fingerprints()
    for key in added:
        keys.add(key)
    assert keys.count == len(set(added))
    for key in added + asked:
        assert (key in keys) == (key in set(added))


def test_a_million_slugs_cost_eight_bytes_a_slot():
    keys = Fingerprints()
    for n in range(1_000_000):
        keys.add(("post", 0, f"post-{n}"))
    assert keys.count == 1_000_000
    assert len(keys.slots) == 2**21  # 16 MiB: at most half full
    assert ("post", 0, "post-999999") in keys and ("post", 0, "post-1000000") not in keys
