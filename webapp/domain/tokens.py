"""Secrets the site hands out and keeps only as digests: what is stored of a token, and the
tokens a person's review page shows for what waits for their confirmation."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass


def hash_token(token: str) -> str:
    """What is stored of a token: its SHA-256 (hex)."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class ReviewTokens:
    """The tokens the review page shows: a confirmation's stored hash, signed with the site's
    secret (`<hash>.<signature>`).

    The page cannot show the token that was first made (only its hash is kept), and making
    it a new one on every view would let a GET — a link from another site — break the
    confirmation a person is about to make. A signed hash is the same on every view and
    changes nothing; it stands for the same single-use, expiring confirmation as the token.
    """

    secret: bytes

    def token_for(self, token_hash: str) -> str:
        """The token the review page shows for the confirmation stored under `token_hash`."""
        return f"{token_hash}.{self._signature(token_hash)}"

    def hash_of(self, token: str) -> str:
        """The stored hash `token` stands for: a review token's own, else its SHA-256."""
        token_hash, dot, signature = token.partition(".")
        if dot and hmac.compare_digest(signature, self._signature(token_hash)):
            return token_hash
        return hash_token(token)

    def _signature(self, token_hash: str) -> str:
        digest = hmac.new(self.secret, b"review:" + token_hash.encode(), hashlib.sha256)
        return base64.urlsafe_b64encode(digest.digest()).decode().rstrip("=")


# A check-in code's length in base32 letters: 60 bits, shown in three groups of four.
CHECK_IN_LETTERS = 12
# What a typed code may hold besides its letters: the dashes it is shown with, spaces.
CODE_SEPARATORS = re.compile(r"[\s\-‐‑‒–—_.]+")
# Digits base32 has no use for, read as the letters they are mistaken for at a door.
LOOKALIKES = str.maketrans({"0": "O", "1": "I", "8": "B"})
BASE32_CODE = re.compile(rf"[A-Z2-7]{{{CHECK_IN_LETTERS}}}")


def canonical_check_in_code(typed: str) -> str | None:
    """A typed or scanned code as the mail shows it ("k7qm 2xpa64td" → "K7QM-2XPA-64TD"),
    or None when it cannot be one (wrong length, a letter no code has). Full-width letters
    (what a Chinese input method types) count as the letters they are."""
    folded = unicodedata.normalize("NFKC", typed)
    letters = CODE_SEPARATORS.sub("", folded).upper().translate(LOOKALIKES)
    if not BASE32_CODE.fullmatch(letters):
        return None
    return "-".join(letters[start:start + 4] for start in range(0, CHECK_IN_LETTERS, 4))


@dataclass(frozen=True)
class CheckInCodes:
    """The code a person shows at the door (typed, or as the QR code of their mail): an HMAC
    of the registration's id with the site's secret, shortened.

    Derived rather than stored: nothing more to keep or migrate, and whoever holds the secret
    (the site, a check-in desk) can tell whether a code belongs to a registration. Someone who
    has only the id (a list, an agent's answer) cannot make the code. Changing the secret
    changes every code: mail already sent then shows codes the site no longer accepts."""

    secret: bytes

    def code_for(self, registration_id: str) -> str:
        """The registration's check-in code, e.g. "K7QM-2XPA-64TD": upper-case letters and
        digits (QR's compact alphanumeric mode), read aloud or typed without ambiguity."""
        digest = hmac.new(self.secret, b"check-in:" + registration_id.encode(),
                          hashlib.sha256).digest()
        letters = base64.b32encode(digest).decode()[:CHECK_IN_LETTERS]
        return "-".join(letters[start:start + 4] for start in range(0, CHECK_IN_LETTERS, 4))

    def registration_of(self, code: str, registration_ids: Iterable[str]) -> str | None:
        """Which of `registration_ids` has the (canonical) `code`, or None. Every id is
        compared in constant time: the code is derived, not stored, so it is found by
        deriving each candidate's."""
        found = None
        for registration_id in registration_ids:
            if hmac.compare_digest(self.code_for(registration_id), code):
                found = registration_id
        return found


@dataclass(frozen=True)
class ManageLinks:
    """The signature in a registration's manage link, mailed with every mail about it: an
    HMAC of the registration's id with the site's secret.

    Whoever can read the mail may see that registration and cancel it (through the review
    and single-use confirmation every cancellation takes) from any device, without signing
    in: a registration belongs to the address it was made with. Derived, like check-in codes,
    and with a purpose of its own in the HMAC: a check-in code shown at the door cancels
    nothing."""

    secret: bytes

    def signature_for(self, registration_id: str) -> str:
        """The signature a manage link of this registration carries."""
        digest = hmac.new(self.secret, b"manage:" + registration_id.encode(),
                          hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def signs(self, registration_id: str, signature: str) -> bool:
        """Whether `signature` is this registration's."""
        return hmac.compare_digest(signature, self.signature_for(registration_id))
