"""The PII barrier: detection per kind, checksums, redaction that leaves nothing behind."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.screening.pii import (
    DEFAULT_MASK,
    PiiKind,
    iban_valid,
    luhn_valid,
    merge_spans,
    redact,
    redact_pii,
    scan,
)

VISA = "4111111111111111"
AMEX = "378282246310005"


def kinds(text: str) -> dict[str, int]:
    return scan(text).counts


@pytest.mark.parametrize(
    "text",
    [
        "contact jane.doe+backlog@mail.example.co.uk today",
        "card 4111 1111 1111 1111 expires",
        "card 4111-1111-1111-1111 expires",
        "card 4111.1111.1111.1111 expires",
        "card 4111/1111/1111/1111 expires",
        "iban de89370400440532013000 (lower case)",
        "iban de89 3704 0044 0532 0130 00 (lower case, grouped)",
        "b/user-carol@example.com/notes.md",
        "b/4111111111111111.md",
        f"card {VISA} expires",
        f"amex {AMEX[:4]} {AMEX[4:10]} {AMEX[10:]}",
        "ref 12 4111 1111 1111 1111",
        "call +49 30 1234567 now",
        "call (555) 123-4567 now",
        "call 555-123-4567 now",
        "call 030 12345678 now",
        "iban DE89 3704 0044 0532 0130 00 please",
        "iban GB82WEST12345698765432.",
        "key sk-proj-abcDEF1234567890abcdefXYZ",
        "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "aws AKIAIOSFODNN7EXAMPLE",
        "api_key = 'Zx9Kq2LmP4sT8vW1yB6n'",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
    ],
)
def test_each_kind_of_pii_is_detected(text):
    assert scan(text).detected


@pytest.mark.parametrize(
    "text",
    [
        "card 4111 1111 1111 1112 fails the Luhn check",
        "iban DE89 3704 0044 0532 0130 01 fails mod 97",
        "version 1.2.3, released 2024-01-15, host 192.168.100.200",
        "released 2024/01/15, build 10.20.30.40.50, path docs/2024/01/notes.md",
        "dotted 4111.1111.1111.1112 fails the Luhn check",
        "hash de89370400440532013001 fails mod 97",
        "counts 10 20 30 40 50 60",
        "commit 3f2a9c1 and ticket #12345",
        "api_key = 'example_placeholder_value'",
        "an @mention and user@localhost",
    ],
)
def test_look_alikes_are_not_pii(text):
    assert not scan(text).detected


def test_counts_are_per_kind_and_each_token_counts_once():
    text = "a@b.io, c@d.io, 4111 1111 1111 1111, AKIAIOSFODNN7EXAMPLE"
    assert kinds(text) == {"email": 2, "payment_card": 1, "secret:aws": 1}


def test_a_card_inside_an_email_counts_as_a_card_but_the_whole_email_is_masked():
    text = f"x {VISA}@bank.example y"
    redacted, found = redact_pii(text)
    assert found.counts == {"payment_card": 1}
    assert redacted == "x " + DEFAULT_MASK * len(f"{VISA}@bank.example") + " y"


def test_redaction_keeps_the_text_length_and_everything_outside_matches():
    text = "mail a@b.io now"
    assert redact_pii(text, mask="#")[0] == "mail ###### now"


def test_the_mask_must_be_one_character():
    with pytest.raises(ValueError, match="single character"):
        redact("abc", [(0, 1)], mask="**")


def test_overlapping_and_touching_spans_merge():
    assert merge_spans([(5, 8), (0, 3), (2, 4), (8, 9)]) == [(0, 4), (5, 9)]


def test_checksums_accept_known_good_numbers():
    assert luhn_valid(VISA)
    assert luhn_valid(AMEX)
    assert iban_valid("DE89 3704 0044 0532 0130 00")
    assert not iban_valid("DE89")


def test_findings_are_reported_in_text_order_with_their_kind():
    found = scan("AKIAIOSFODNN7EXAMPLE then a@b.io")
    assert [f.kind for f in found.findings] == [PiiKind.SECRET, PiiKind.EMAIL]


# --- properties -------------------------------------------------------------------------------

_FILLER = st.text(alphabet="abcdefghij XYZ,;:!()", max_size=30)


@st.composite
def card_numbers(draw: st.DrawFn) -> str:
    """Luhn-valid 16-digit numbers."""
    body = draw(st.lists(st.integers(0, 9), min_size=15, max_size=15))
    for check in range(10):
        digits = "".join(map(str, [*body, check]))
        if luhn_valid(digits):
            return digits
    raise AssertionError("unreachable: one check digit always fits")


@st.composite
def written_cards(draw: st.DrawFn) -> str:
    digits = draw(card_numbers())
    style = draw(st.sampled_from(["", " ", "-"]))
    return style.join(digits[i : i + 4] for i in range(0, 16, 4))


@given(_FILLER, written_cards(), _FILLER)
def test_redaction_leaves_no_digit_of_a_card_number(before, card, after):
    text = f"{before} {card} {after}"
    redacted, found = redact_pii(text)
    start = len(before) + 1
    assert found.counts.get("payment_card") == 1
    assert set(redacted[start : start + len(card)]) == {DEFAULT_MASK}
    assert not any(c.isdigit() for c in redacted)


@given(st.lists(written_cards(), min_size=2, max_size=4), st.sampled_from([" ", ", ", " and "]))
def test_several_adjacent_cards_are_all_masked(cards, joiner):
    redacted, _ = redact_pii(joiner.join(cards))
    assert not any(c.isdigit() for c in redacted)


_LOCAL = st.from_regex(r"[a-z][a-z0-9._+-]{0,12}[a-z0-9]", fullmatch=True)
_DOMAIN = st.from_regex(r"[a-z][a-z0-9-]{0,8}[a-z0-9](\.[a-z]{2,6}){1,2}", fullmatch=True)


@given(_FILLER, _LOCAL, _DOMAIN, _FILLER)
def test_redaction_leaves_no_part_of_an_email(before, local, domain, after):
    email = f"{local}@{domain}"
    text = f"{before} {email} {after}"
    redacted, found = redact_pii(text)
    start = len(before) + 1
    assert found.counts.get("email") == 1
    assert redacted[start : start + len(email)] == DEFAULT_MASK * len(email)
    assert redacted[:start] == text[:start]
    assert redacted[start + len(email) :] == text[start + len(email) :]


@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 20)), max_size=8))
def test_redact_masks_exactly_the_union_of_spans(raw_spans):
    text = "x" * 80
    spans = [(s, s + n) for s, n in raw_spans]
    redacted = redact(text, spans, mask="#")
    covered = {i for s, e in spans for i in range(s, e)}
    assert len(redacted) == len(text)
    assert {i for i, c in enumerate(redacted) if c == "#"} == covered


@pytest.mark.parametrize(
    "unit",
    ["12-", "a.", "sk-", "1234 ", "token token: ", "-----BEGIN RSA PRIVATE KEY-----\n", "(555) "],
)
def test_hostile_repetitive_text_is_scanned_without_blowing_up(unit):
    # Regression guard: unbounded backtracking once made these quadratic (minutes per file).
    text = unit * (50_000 // len(unit))
    redacted, _ = redact_pii(text)
    assert len(redacted) == len(text)
