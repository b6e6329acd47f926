"""Deterministic synthetic markdown corpus for benchmarks (same seed → same documents).

The text imitates technical documentation closely enough for keyword-search timings to mean
something: English function words (most of them stop words), a Zipf–Mandelbrot distributed
general vocabulary, and per-document topic words, so a question about one document's topic hits
a few thousand chunks out of a hundred thousand instead of all of them. Documents have a title,
an H1, H2 sections with optional H3 subsections, repeated headings and fenced code blocks with
``#`` comment lines (which must not become headings).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from dataclasses import dataclass


def _words(text: str) -> list[str]:
    return text.split()


REPOSITORIES = tuple(f"acme/eng/repo-{number}" for number in range(5))
# Stop words (dropped by the analyzer) are six times as frequent as the other function words,
# which then each cover roughly one chunk in eight, about as in English prose.
_FUNCTION_WORDS = 6 * _words(
    "the a an and to of in is for on with as by it that this be are or from at not can will when if"
) + _words(
    "how do does what which should there then so but all any each only also into after before "
    "about its their they our these some such was has been one more other new use using need "
    "must would could"
)
_GENERAL_WORDS = _words(
    "run test build deploy configure service server client request response error retry "
    "timeout queue worker job task phase step stage release version branch commit merge "
    "review policy rule access token secret key user account role permission team owner "
    "data table index schema migration database cache memory disk file path directory log "
    "metric alert incident page dashboard monitor health check status report audit event "
    "message topic stream batch schedule cron window limit quota budget cost price invoice "
    "payment customer order product catalog search query filter sort result score rank "
    "network proxy gateway route endpoint port host cluster node pod container image "
    "registry package dependency library module function method class object field value "
    "default option setting flag feature toggle rollout rollback canary backup restore"
)
_HEADINGS = _words(
    "Overview Prerequisites Phases Configuration Usage Troubleshooting Rollback FAQ Examples "
    "Limits Security Monitoring Ownership Background Decision Consequences Testing Notes"
)
_QUESTION_TEMPLATES = (
    "how do I {g} the {t} {t} for {g} {t}",
    "what is the {g} of {t} {t} when {t} fails",
    "which {t} should we {g} to fix the {t} {g}",
    "where are the {t} {g} and {t} {t} documented",
    "why does the {t} {g} fail after {t} {t}",
    "how to {g} {t} {t} without breaking the {t}",
)
_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]


@dataclass(frozen=True, slots=True)
class CorpusDocument:
    """One synthetic document version with the attributes the index filters on."""

    element_id: str
    version_id: str
    repository_key: str
    title: str
    body: str
    classification_rank: int
    source_kind: str
    type_key: str
    recorded_at: float


class _Vocabulary:
    """Word pools and cumulative weights derived from one seed."""

    def __init__(self, seed: int, *, general_size: int = 6000, topics: int = 800) -> None:
        rng = random.Random(f"vocabulary-{seed}")
        pseudo = _pseudo_words(rng, general_size + topics * 20)
        self.general = _GENERAL_WORDS + pseudo[: general_size - len(_GENERAL_WORDS)]
        self.general_cum = list(itertools.accumulate(1 / (r + 10) for r in range(general_size)))
        topic_pool = pseudo[general_size - len(_GENERAL_WORDS) :]
        self.topics = [topic_pool[i * 20 : (i + 1) * 20] for i in range(topics)]
        self.topic_cum = list(itertools.accumulate(1 / (r + 2) for r in range(20)))


def _pseudo_words(rng: random.Random, count: int) -> list[str]:
    words: dict[str, None] = {}
    while len(words) < count:
        words["".join(rng.choices(_SYLLABLES, k=rng.randint(2, 4)))] = None
    return list(words)


def generate_documents(seed: int) -> Iterator[CorpusDocument]:
    """Yield an endless, deterministic stream of synthetic markdown documents."""
    vocabulary = _Vocabulary(seed)
    rng = random.Random(f"documents-{seed}")
    for number in itertools.count():
        yield _document(vocabulary, rng, number)


def generate_questions(seed: int, count: int) -> list[str]:
    """Deterministic ten-word natural questions about the corpus of the same seed."""
    vocabulary = _Vocabulary(seed)
    rng = random.Random(f"questions-{seed}")
    questions = []
    for _ in range(count):
        topic = rng.choice(vocabulary.topics)
        template = rng.choice(_QUESTION_TEMPLATES)
        words = template.split()
        filled = [_fill(word, rng, vocabulary, topic) for word in words]
        questions.append(" ".join(filled) + "?")
    return questions


def _fill(slot: str, rng: random.Random, vocabulary: _Vocabulary, topic: list[str]) -> str:
    if slot == "{t}":
        return rng.choices(topic, cum_weights=vocabulary.topic_cum)[0]
    if slot == "{g}":
        return rng.choice(vocabulary.general[:400])
    return slot


def _document(vocabulary: _Vocabulary, rng: random.Random, number: int) -> CorpusDocument:
    topic = rng.choice(vocabulary.topics)
    writer = _Writer(vocabulary, rng, topic + rng.choice(vocabulary.topics)[:5])
    title = " ".join(word.capitalize() for word in rng.sample(topic[:8], rng.randint(2, 3)))
    parts = [f"# {title}\n\n", writer.paragraph()]
    for _ in range(rng.randint(3, 7)):
        parts.append(f"\n## {writer.heading()}\n\n{writer.paragraph()}")
        if rng.random() < 0.2:
            parts.append(writer.code_block())
        for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
            parts.append(f"\n### {writer.heading()}\n\n{writer.paragraph()}")
    return CorpusDocument(
        element_id=f"el_{number:07d}",
        version_id=f"ver_{number:07d}",
        repository_key=REPOSITORIES[number % len(REPOSITORIES)],
        title=title,
        body="".join(parts),
        classification_rank=rng.choices((0, 1, 2, 3), weights=(2, 5, 2, 1))[0],
        source_kind=rng.choices(("CANONICAL", "INGESTED_EVIDENCE"), weights=(3, 2))[0],
        type_key=rng.choice(("ameide:doc", "ameide:sop", "ameide:ingest.backlog_md")),
        recorded_at=1_700_000_000.0 + number * 60.0,
    )


class _Writer:
    """Writes headings, paragraphs and code for one document's topic words."""

    def __init__(self, vocabulary: _Vocabulary, rng: random.Random, topic: list[str]) -> None:
        self.vocabulary = vocabulary
        self.rng = rng
        self.topic = topic
        self.topic_cum = list(itertools.accumulate(1 / (r + 2) for r in range(len(topic))))

    def heading(self) -> str:
        rng = self.rng
        word = rng.choices(self.topic, cum_weights=self.topic_cum)[0]
        return f"{rng.choice(_HEADINGS)} {word}" if rng.random() < 0.7 else rng.choice(_HEADINGS)

    def paragraph(self) -> str:
        paragraphs = []
        for _ in range(self.rng.choice((1, 1, 2))):
            sentences = [self.sentence() for _ in range(self.rng.randint(2, 6))]
            paragraphs.append(" ".join(sentences) + "\n")
        return "\n".join(paragraphs)

    def sentence(self) -> str:
        rng, vocabulary = self.rng, self.vocabulary
        length = rng.randint(8, 18)
        functional = round(length * 0.4)
        topical = round(length * 0.25)
        words = rng.choices(_FUNCTION_WORDS, k=functional)
        words += rng.choices(
            vocabulary.general, cum_weights=vocabulary.general_cum, k=length - functional - topical
        )
        words += rng.choices(self.topic, cum_weights=self.topic_cum, k=topical)
        rng.shuffle(words)
        return " ".join(words).capitalize() + "."

    def code_block(self) -> str:
        word = self.rng.choice(self.topic)
        return f"\n```bash\n# {word} setup\nmake {word}\n## not a heading\n```\n"
