"""Secrets for the PII barrier: the rule set of Yelp's detect-secrets, plus the few it lacks.

The known credential formats come from the regex plugins of ``detect-secrets`` (Apache-2.0,
maintained by Yelp, the rule set pre-commit hooks and CI scanners use): each plugin's own
``denylist`` patterns find a candidate and the plugin's own ``analyze_string`` confirms it (the
JWT plugin, for one, decodes the header and payload), so a new format or a fixed pattern arrives
with an upgrade of the package, not as a regex grown here. Only the pure part of a plugin is
used: never ``analyze_line`` or ``scan_line``, whose verification step can send a found key to
its provider over the network.

Left out of the plugins: the keyword-assignment ones (Artifactory, Cloudant, IBM Cloud IAM,
IBM COS HMAC, SoftLayer), which cost 0.8 to 3.3 seconds each over the real 761-file corpus (the
whole barrier takes 0.8) and whose ``name = value`` shapes the key = value rule below mostly
masks (their credentials in URLs are URL passwords); Discord and Telegram bot tokens, which have
no literal to search by (their patterns, tried at every position, cost a quarter of the whole
barrier); the OpenAI and npm ones, whose patterns backtrack quadratically on a hostile line
(the ``sk-`` and key = value rules cover those keys); the public-IP one (an address is not a
credential); and the keyword and high-entropy-string scanners, which are tuned for quoted
strings in source code, not prose.

Rules of this module, for what the plugins do not cover: Google API keys (``AIza`` and 35
characters, the shape gitleaks' ``gcp-api-key`` rule uses), a bare AWS secret access key on the
line of its key id (``AKIA``…) or the next one, GitHub fine-grained tokens (``github_pat_``),
and the project's earlier eager rules: ``sk-`` keys (OpenAI, Anthropic), Slack tokens without
the plugin's digit groups, private key blocks (the plugin only matches the BEGIN line; the rule
masks the key itself), and high-entropy values after ``key =``, ``token:``, ``password=``….

Every finding has a kind (``aws``, ``url_password``, ``jwt``, …) that the run report counts as
``secret:<kind>``. Each rule has literal needles, one of which every match contains (checked
case-insensitively, a superset), so only the lines holding one are searched.
"""

from __future__ import annotations

import functools
import importlib
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

Match = re.Match[str]

Span = tuple[int, int, str]
"""``(start, end, kind)`` of one secret."""


@dataclass(frozen=True)
class SecretRule:
    """One detector: where to look and how to find its matches in ``text[start:end]``.

    ``needles`` are lower-case literals one of which every match contains; the rule runs on the
    lines holding one (or, when ``one_line`` is false, on the whole text once one is there).
    ``None``: the rule's pattern starts with a literal the regex engine searches for fast, so
    it runs on the whole text."""

    kind: str
    needles: tuple[str, ...] | None
    find: Callable[[str, int, int], Iterator[tuple[int, int]]]
    one_line: bool = True


# --- detect-secrets plugins -------------------------------------------------------------------

Needles = tuple[str, ...] | None


@dataclass(frozen=True)
class _Plugin:
    """How one detect-secrets plugin is used: its class, our kind for it, the needles of each of
    its patterns (in ``denylist`` order), which patterns hold the secret in group 1 (the others
    mask the whole match), the characters a match runs on over, and where matches may start."""

    module: str
    name: str
    kind: str
    needles: tuple[Needles, ...]
    value_group: frozenset[int] = frozenset()
    tail: re.Pattern[str] | None = None
    anchor: re.Pattern[str] | None = None


_KEY_HEADER = ("private key",)
_PLUGINS = (
    # the key id pattern starts with a literal "A"; the aws = '…' one needs its keyword
    _Plugin("aws", "AWSKeyDetector", "aws", (None, ("aws",)), frozenset({1})),
    _Plugin("basic_auth", "BasicAuthDetector", "url_password", (None,), frozenset({0})),
    _Plugin("stripe", "StripeDetector", "stripe", (("k_live_",),)),
    _Plugin("jwt", "JwtTokenDetector", "jwt", (None,),
            tail=re.compile(r"[A-Za-z0-9_.+/=-]{0,16384}"),
            anchor=re.compile(r"eyJ[A-Za-z0-9_=-]*")),
    _Plugin("github_token", "GitHubTokenDetector", "github", (None,)),
    _Plugin("gitlab_token", "GitLabTokenDetector", "gitlab",
            (("gl",), ("gr1348941",), ("gl",), ("gl",), ("gl",), ("gl",), ("gl",))),
    _Plugin("slack", "SlackDetector", "slack", (("xox",), ("hooks.slack.com",))),
    _Plugin("private_key", "PrivateKeyDetector", "private_key",
            (*[_KEY_HEADER] * 7, ("putty-user-key-file-2",))),
    _Plugin("pypi_token", "PypiTokenDetector", "pypi", (("pypi-age",), ("pypi-age",))),
    _Plugin("sendgrid", "SendGridDetector", "sendgrid", (("sg.",),)),
    _Plugin("square_oauth", "SquareOAuthDetector", "square", (("sq0csp-",),)),
    _Plugin("azure_storage_key", "AzureStorageKeyDetector", "azure_storage", (("accountkey=",),)),
    _Plugin("mailchimp", "MailchimpDetector", "mailchimp", (("-us",),)),
    _Plugin("twilio", "TwilioKeyDetector", "twilio", (None, None)),
)  # fmt: skip
# The JWT pattern (``eyJ[A-Za-z0-9-_=]+\.…``) backtracks over the whole run of header characters
# when no dot follows, and ``finditer`` retries it at every later ``eyJ`` of the run: quadratic on
# ``eyJeyJeyJ…``. It is only tried at the first ``eyJ`` of each such run (the anchor consumes the
# run): a match from a later ``eyJ`` of the same run would end at the same dot, so the first
# start finds whatever a later one would. The tail takes the signature, which the pattern's lazy
# last part leaves out.


def _plugin_rules(spec: _Plugin) -> list[SecretRule]:
    """A rule per pattern of the plugin, each match confirmed by the plugin itself."""
    module = importlib.import_module(f"detect_secrets.plugins.{spec.module}")
    plugin = getattr(module, spec.name)()
    patterns: list[re.Pattern[str]] = list(plugin.denylist)
    if len(patterns) != len(spec.needles):  # an upgrade changed the rule set: look again
        raise RuntimeError(f"{spec.name} has {len(patterns)} patterns, not {len(spec.needles)}")

    def matches(pattern: re.Pattern[str], text: str, start: int, end: int) -> Iterator[Match]:
        if spec.anchor is None:
            yield from pattern.finditer(text, start, end)
            return
        done = start
        for at in spec.anchor.finditer(text, start, end):
            if at.start() >= done and (match := pattern.match(text, at.start(), end)):
                done = match.end()
                yield match

    def finder(index: int) -> Callable[[str, int, int], Iterator[tuple[int, int]]]:
        pattern = patterns[index]

        def find(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
            for match in matches(pattern, text, start, end):
                if not any(True for _ in plugin.analyze_string(match.group())):
                    continue  # the plugin's own check refuses it
                if index in spec.value_group and match.group(1):
                    yield match.span(1)
                    continue
                stop = match.end()
                if spec.tail is not None and (tail := spec.tail.match(text, stop, end)):
                    stop = tail.end()
                yield match.start(), stop

        return find

    return [SecretRule(spec.kind, needles, finder(i)) for i, needles in enumerate(spec.needles)]


# --- rules of our own ---------------------------------------------------------------------------

# Every quantifier that can backtrack is bounded: files are untrusted and up to the size cap.
_GOOGLE_API_KEY = re.compile(r"(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![\w-])")
_SK_KEY = re.compile(r"(?<![\w-])sk-[A-Za-z0-9_-]{20,}")
_GITHUB_PAT = re.compile(r"(?<!\w)github_pat_[A-Za-z0-9_]{22,}")  # fine-grained tokens
_SLACK = re.compile(r"(?<!\w)xox[abprs]-[A-Za-z0-9-]{10,}")
# the key body is masked even when the END line is missing
_PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:\n[A-Za-z0-9+/=:, -]{0,200}){0,400}"
    r"(?:\n-----END [A-Z ]{0,40}PRIVATE KEY(?: BLOCK)?-----)?"
)
_AWS_KEY_ID = re.compile(r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}")
_AWS_SECRET_KEY = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_KEY_VALUE = re.compile(
    r"(?i)(?<![\w-])[\w-]{0,40}?(?:api[_-]?key|secret|token|passw(?:or)?d|access[_-]?key|auth)"
    r"[\w-]{0,40}[\"']?[ \t]{0,5}[:=][ \t]{0,5}[\"']?([A-Za-z0-9_\-/+=.]{16,})"
)
# Every keyword of _KEY_VALUE, lower-cased, contains one of these ("api_key" contains "key").
_KEY_VALUE_NEEDLES = ("key", "secret", "token", "passw", "auth")
_CHAR_CLASSES = (str.islower, str.isupper, str.isdigit)


def shannon_entropy(text: str) -> float:
    """Bits per character; random tokens score high, words and repeated characters low."""
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _char_classes(value: str) -> int:
    return sum(any(test(c) for c in value) for test in _CHAR_CLASSES)


def _pattern(pattern: re.Pattern[str]) -> Callable[[str, int, int], Iterator[tuple[int, int]]]:
    def find(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
        for match in pattern.finditer(text, start, end):
            yield match.span()

    return find


def _aws_secret_keys(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """A 40-character AWS secret access key, bare, on the line of an AWS key id or the next:
    random-looking (lower case, upper case and digits, 3.5 bits a character or more), so a
    40-digit hex commit id next to a key id stays."""
    lines = _lines_at(text, (m.start() for m in _AWS_KEY_ID.finditer(text, start, end)))
    found: set[tuple[int, int]] = set()
    for line_start, line_end in lines:
        after = text.find("\n", line_end + 1) if line_end < len(text) else -1
        stop = len(text) if after == -1 else after
        for match in _AWS_SECRET_KEY.finditer(text, line_start, stop):
            value, span = match.group(), match.span()
            if span not in found and _char_classes(value) == 3 and shannon_entropy(value) >= 3.5:
                found.add(span)
                yield span


def _key_values(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """High-entropy values after ``api_key =``, ``token:``, ``password=`` and the like."""
    line = text[start:end]
    if ":" not in line and "=" not in line:
        return
    for match in _KEY_VALUE.finditer(text, start, end):
        value = match.group(1)
        if _char_classes(value) >= 2 and shannon_entropy(value) >= 3.5:
            yield match.span(1)


_OWN_RULES = (
    SecretRule("google_api_key", ("aiza",), _pattern(_GOOGLE_API_KEY)),
    SecretRule("aws", None, _aws_secret_keys),
    SecretRule("sk_key", ("sk-",), _pattern(_SK_KEY)),
    SecretRule("github", ("github_pat_",), _pattern(_GITHUB_PAT)),
    SecretRule("slack", ("xox",), _pattern(_SLACK)),
    SecretRule("private_key", ("private key",), _pattern(_PRIVATE_KEY_BLOCK), one_line=False),
    SecretRule("key_value", _KEY_VALUE_NEEDLES, _key_values),
)


@functools.cache
def rules() -> tuple[SecretRule, ...]:
    """Every rule, in the order that decides a token's kind when several match it: the private
    key block first (it covers the plugin's BEGIN line), the plugins, then our own rules."""
    block = next(rule for rule in _OWN_RULES if rule.kind == "private_key")
    rest = tuple(rule for rule in _OWN_RULES if rule is not block)
    return (block, *(rule for p in _PLUGINS for rule in _plugin_rules(p)), *rest)


def find_secrets(text: str) -> Iterator[Span]:
    """Every secret in ``text``: ``(start, end, kind)``, rule by rule."""
    low = text.lower()
    same_offsets = len(low) == len(text)  # a few characters change length when lower-cased
    whole = [(0, len(text))]
    # needles → the regions to search: the lines holding one, or the whole text
    known: dict[tuple[tuple[str, ...], bool], list[tuple[int, int]]] = {}
    for rule in rules():
        needles = rule.needles
        key = (needles or (), rule.one_line)
        if needles is None:
            regions = whole
        elif key in known:
            regions = known[key]
        elif not any(needle in low for needle in needles):
            regions = known[key] = []
        elif not rule.one_line or not same_offsets:
            regions = known[key] = whole
        else:
            regions = known[key] = _lines_at(text, _needle_positions(low, needles))
        for start, end in regions:
            for span in rule.find(text, start, end):
                yield span[0], span[1], rule.kind


def _needle_positions(low: str, needles: tuple[str, ...]) -> Iterator[int]:
    for needle in needles:
        at = low.find(needle)
        while at != -1:
            yield at
            at = low.find(needle, at + len(needle))


def _lines_at(text: str, positions: Iterator[int]) -> list[tuple[int, int]]:
    """``[start, end)`` of every line holding one of ``positions``, in text order."""
    lines: set[tuple[int, int]] = set()
    covered_to = -1
    for at in sorted(positions):
        if at < covered_to:
            continue
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end == -1 else end
        lines.add((start, end))
        covered_to = end
    return sorted(lines)
