"""The slot postings' encoding, read as a search reads it: a term's slots in a span, and the
keys of the slots every term of a conjunction holds (`webapp.storage.postings`). No database:
the rows are made here as the batch statement returns them."""

from __future__ import annotations

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


# A week's span, the longest (`postings.LONGEST_SPAN_DAYS`), and the 7th of them.
SPAN_KEYS = postings.LONGEST_SPAN_DAYS * postings.KEYS_PER_DAY
SPAN = 7
FIRST = SPAN * SPAN_KEYS
# A span's keys: anywhere in it, its last one included, and free slots among them.
span_keys = st.lists(st.one_of(st.just(postings.FREE), st.integers(FIRST, FIRST + SPAN_KEYS - 1)),
                     max_size=SPAN_SLOTS)


@given(span_keys)
def test_a_spans_keys_read_back_as_written_in_four_bytes_each(keys):
    packed = postings.packed_keys(keys, FIRST)
    assert len(packed) == 4 * len(keys)
    assert postings.unpacked_keys(packed, FIRST) == keys


@given(st.lists(masks, min_size=1, max_size=3), st.sets(st.integers(0, SPAN_SLOTS - 1)))
def test_a_row_gives_the_keys_of_the_slots_every_term_holds_but_free_ones(term_masks, freed):
    keys = [postings.FREE if slot in freed else FIRST + 3 * slot for slot in range(SPAN_SLOTS)]
    packed = postings.packed_keys(keys, FIRST)
    row = [0, SPAN, *(postings.encode(mask, SPAN_SLOTS) for mask in term_masks), packed]
    every = term_masks[0]
    for mask in term_masks[1:]:
        every &= mask
    expected = [keys[slot] for slot in set_bits(every) if slot not in freed]
    assert postings.matching_keys(row, len(term_masks), SPAN_KEYS) == expected


def test_a_term_missing_from_the_span_matches_nothing():
    packed = postings.packed_keys([FIRST + 11, FIRST + 12], FIRST)
    row = [0, SPAN, postings.encode(0b11, 2), None, packed]
    assert postings.matching_keys(row, 2, SPAN_KEYS) == []
