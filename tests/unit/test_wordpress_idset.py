"""The import's set of WordPress ids (``wordpress.importer.IdSet``): a bit an id."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sitemap_server.wordpress.importer import IdSet

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
