"""The slot postings' encoding, read as a search reads it: a term's slots in a span, and the
keys of the slots every term of a conjunction holds (`webapp.storage.postings`). No database:
the rows are made here as the batch statement returns them."""

from __future__ import annotations

import struct

from hypothesis import given
from hypothesis import strategies as st

from webapp.storage import postings

# Spans of up to 1 200 slots (about 1 000 events each): masks of a few slots and of hundreds,
# on either side of `postings.FEW_SLOTS`.
SPAN_SLOTS = 1_200
masks = st.one_of(st.integers(min_value=0, max_value=2**SPAN_SLOTS - 1),
                  st.sets(st.integers(min_value=0, max_value=SPAN_SLOTS - 1), max_size=20).map(
                      lambda slots: sum(1 << slot for slot in slots)))


def set_bits(mask: int) -> list[int]:
    """The slots of `mask`, read bit by bit."""
    return [slot for slot in range(mask.bit_length()) if mask >> slot & 1]


@given(masks)
def test_the_slots_of_a_mask_are_its_set_bits_lowest_first(mask):
    assert postings.slots_of(mask) == set_bits(mask)


@given(masks)
def test_a_terms_slots_read_back_as_written(mask):
    assert postings.decode(postings.encode(mask, SPAN_SLOTS)) == mask


@given(st.lists(masks, min_size=1, max_size=3), st.sets(st.integers(0, SPAN_SLOTS - 1)))
def test_a_row_gives_the_keys_of_the_slots_every_term_holds_but_free_ones(term_masks, freed):
    keys = [postings.FREE if slot in freed else 1_000_000 + 3 * slot
            for slot in range(SPAN_SLOTS)]
    packed = struct.pack(f">{SPAN_SLOTS}q", *keys)
    row = [0, 7, *(postings.encode(mask, SPAN_SLOTS) for mask in term_masks), packed]
    every = term_masks[0]
    for mask in term_masks[1:]:
        every &= mask
    expected = [keys[slot] for slot in set_bits(every) if slot not in freed]
    assert postings.matching_keys(row, len(term_masks)) == expected


def test_a_term_missing_from_the_span_matches_nothing():
    packed = struct.pack(">2q", 11, 12)
    row = [0, 7, postings.encode(0b11, 2), None, packed]
    assert postings.matching_keys(row, 2) == []
