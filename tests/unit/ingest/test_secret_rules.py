"""The secret rules of the PII barrier (issue 28, item 6): the detect-secrets rule set and the
rules it lacks, each finding counted as ``secret:<kind>`` and masked by the default policy."""

from __future__ import annotations

import pytest
from detect_secrets.plugins.jwt import JwtTokenDetector
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.routing.model import Policy
from ingest.screening.pii import PROTECTED_KINDS, PiiKind, redact, scan
from ingest.screening.secret_rules import find_secrets

M = "█"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
AWS_ID, AWS_SECRET = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def protected(text: str) -> str:
    """``text`` as the default policy (``protect``) stores it."""
    return redact(text, scan(text).only(PROTECTED_KINDS).spans)


@pytest.mark.parametrize(
    ("text", "secret", "label"),
    [
        ("db postgres://admin:Pg-s3cret@db.internal/app ok", "Pg-s3cret", "url_password"),
        ("git https://user:pw@git.example.com/x.git ok", "pw", "url_password"),
        ("ftp ftp://user:pw@host ok", "pw", "url_password"),
        ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc ok", "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
         "stripe"),
        ("maps AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY ok",
         "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "google_api_key"),
        (f"Authorization: Bearer {JWT} ok", JWT, "jwt"),
        (f"aws {AWS_ID} ok", AWS_ID, "aws"),
        ("gitlab glpat-xYz1234567890abcdEFGH ok", "glpat-xYz1234567890abcdEFGH", "gitlab"),
        ("gh ghp_" + "a1B2" * 9 + " ok", "ghp_" + "a1B2" * 9, "github"),
        ("gh github_pat_11ABCDEFG0123456789_abcdefghijklmnop ok",
         "github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "github"),
        ("pypi pypi-AgEIcHlwaS5vcmc" + "x7Y" * 24 + " ok", "pypi-AgEIcHlwaS5vcmc" + "x7Y" * 24,
         "pypi"),
        ("mail SG." + "a1B" * 7 + "c." + "d2E" * 14 + "f ok",
         "SG." + "a1B" * 7 + "c." + "d2E" * 14 + "f", "sendgrid"),
        ("sq sq0csp-" + "a1B" * 14 + "c ok", "sq0csp-" + "a1B" * 14 + "c", "square"),
        ("az AccountKey=" + "a1B+" * 22 + " ok", "AccountKey=" + "a1B+" * 22, "azure_storage"),
        ("mc " + "0a1b" * 8 + "-us12 ok", "0a1b" * 8 + "-us12", "mailchimp"),
        ("tw AC" + "0a1b" * 8 + " ok", "AC" + "0a1b" * 8, "twilio"),
        ("hook https://hooks.slack.com/services/T0AB/B0CD/xyzXYZ123 ok",
         "https://hooks.slack.com/services/T0AB/B0CD/xyzXYZ123", "slack"),
        ("api_key = 'Zx9Kq2LmP4sT8vW1yB6n'", "Zx9Kq2LmP4sT8vW1yB6n", "key_value"),
    ],
)  # fmt: skip
def test_each_kind_is_found_counted_and_masked_by_default(text, secret, label):
    found = scan(text)
    assert found.counts == {f"secret:{label}": 1}
    assert [f.kind for f in found.findings] == [PiiKind.SECRET]
    assert protected(text) == text.replace(secret, M * len(secret))


def test_a_password_in_a_url_is_a_secret_not_an_email_address():
    text = "clone https://deploy:Gh7xTok3n@git.example.com/team/x.git today"
    found = scan(text)
    assert found.counts == {"secret:url_password": 1}  # not {"email": 1}
    # only the password is masked; the user, the host and the path stay readable
    assert protected(text) == text.replace("Gh7xTok3n", M * 9)
    assert Policy.PROTECT.masked(found.counts) == {"secret:url_password": 1}


def test_a_jwt_is_masked_whole_signature_included():
    text = f"token={JWT}&next"
    assert scan(text).counts == {"secret:jwt": 1}
    assert protected(text) == "token=" + M * len(JWT) + "&next"


@pytest.mark.parametrize(
    "text",
    [
        f"id {AWS_ID} secret {AWS_SECRET} (rotate)",
        f"id {AWS_ID}\nsecret {AWS_SECRET}\n",
        f"{AWS_ID},{AWS_SECRET}",
    ],
)
def test_a_bare_aws_secret_key_next_to_its_key_id_is_masked(text):
    found = scan(text)
    assert found.counts == {"secret:aws": 2}
    masked = protected(text)
    assert AWS_ID not in masked
    assert AWS_SECRET not in masked
    assert "AKIA" not in masked
    assert "EXAMPLEKEY" not in masked


@pytest.mark.parametrize(
    "text",
    [
        f"a 40-character token with no key id near it: {AWS_SECRET}",
        f"id {AWS_ID}\n\nsecret two lines below {AWS_SECRET}",
        f"id {AWS_ID} commit 3f2a9c1d4e5b6a7f8091a2b3c4d5e6f708192a3b",  # hex: not a secret key
    ],
)
def test_a_40_character_token_far_from_a_key_id_is_not_an_aws_secret(text):
    counts = scan(text).counts
    assert counts.get("secret:aws", 0) == (1 if AWS_ID in text else 0)


@pytest.mark.parametrize(
    "text",
    [
        "test key sk_test_4eC39HqLyjWDarjtT1zdp7dc is for the sandbox",
        "eyJfoo.eyJbar.baz is not a JWT (no JSON header)",
        "AIza is just a prefix; AIzaShort too",
        "see https://git.example.com/team/x.git and mailto:ops@example.com",
        "a service at http://localhost:8080/path and ssh://git@host/repo",
    ],
)
def test_look_alikes_are_not_secrets(text):
    assert not any(label.startswith("secret") for label in scan(text).counts)


def test_policies_mask_secret_labels_by_their_kind():
    counts = {"email": 2, "secret:aws": 1, "secret:jwt": 3}
    assert Policy.PROTECT.masked(counts) == {"secret:aws": 1, "secret:jwt": 3}
    assert Policy.REDACT.masked(counts) == counts
    assert Policy.STORE.masked(counts) == {}


_JWT_TOKENS = [*JWT.split("."), "eyJ", ".", "-", "_", "=", "+", "/", " ", "a", "\n", "e"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_JWT_TOKENS), max_size=40).map("".join))
def test_jwt_anchoring_finds_what_the_plugin_pattern_finds_everywhere(text):
    """JWTs are only tried at the first ``eyJ`` of a run (linear on hostile text); the tokens
    found are those the plugin's own pattern finds trying every position."""
    if text.count(".") < 1:
        text = f"{text} {JWT}"
    plugin = JwtTokenDetector()
    expected = sorted(
        m.start() for m in plugin.denylist[0].finditer(text) if plugin.is_formally_valid(m.group())
    )
    assert sorted(start for start, _, kind in find_secrets(text) if kind == "jwt") == expected


def test_the_jwt_property_sees_real_tokens():
    text = f"a {JWT} b eyJeyJ.x\n{JWT}."
    assert len([s for s in find_secrets(text) if s[2] == "jwt"]) == 2


@pytest.mark.parametrize(
    "unit",
    ["eyJ", "eyJa.", "://a:b@", "xoxb-1-", "AKIA", "aws key '", "glpat-", "sq0csp-", "AIza",
     "BEGIN RSA PRIVATE KEY", f"{AWS_ID}\n{AWS_SECRET}\n", "a@b.io "],
)  # fmt: skip
def test_hostile_repetitive_text_is_scanned_without_blowing_up(unit):
    # Regression guard: quadratic backtracking (the JWT pattern retried at every "eyJ") or a
    # quadratic overlap check (thousands of findings) would take minutes here.
    text = unit * (200_000 // len(unit))
    assert len(redact(text, scan(text).spans)) == len(text)
