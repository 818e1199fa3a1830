"""`harness topics draft` against the loopback OpenAI server: checked review files from
well-formed replies; a clear error and nothing written from malformed ones."""

from __future__ import annotations

import json
import re

import pytest

from harness.cli import main
from harness.curation.pairs import missing_pairs
from harness.errors import HarnessError
from harness.materials.bank import load_topic_bank
from tests.curation.conftest import write_bank
from tests.servers.openai_server import OpenAIServer

REPLIES = {
    ("Engineering", "Dentistry"): {
        "concepts_a": ["tuned mass dampers", "weld residual stress"],
        "concepts_b": ["enamel hypoplasia", "bruxism splints"],
        "relation": "a shared structural principle",
    },
    ("Engineering", "Health Professions"): {
        "concepts_a": ["cable-stayed bridges", "sandwich panel cores"],
        "concepts_b": ["radiographer fatigue", "wheelchair transfers"],
        "relation": "a shared structural principle",
    },
}


def fields_of(body: dict) -> tuple[str, str]:
    text = body["messages"][-1]["content"]
    a = re.search(r"^Field A: (.+?) \(", text, re.M).group(1)
    b = re.search(r"^Field B: (.+?) \(", text, re.M).group(1)
    return a, b


def well_formed(body: dict) -> str:
    reply = json.dumps(REPLIES[fields_of(body)])
    return f"Here is a topic:\n```json\n{reply}\n```"


@pytest.fixture
def bank(tmp_path, topics):
    """A small bank that passes every rule: the candidates are checked against it."""
    return write_bank(tmp_path / "bank" / "bank.yaml", topics)


def draft(server: OpenAIServer, out, bank, *extra: str) -> None:
    main(
        [
            "topics",
            "draft",
            "--fields",
            "Engineering",
            "Dentistry",
            "Health Professions",
            "--backend",
            "openai",
            "--model",
            "curator-model",
            "--base-url",
            server.base_url,
            "--bank",
            str(bank),
            "--out",
            str(out),
            *extra,
        ]
    )


def test_well_formed_replies_make_a_checked_review_file(tmp_path, monkeypatch, capsys, bank):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "drafts.yaml"
    with OpenAIServer(reply_text=well_formed) as server:
        draft(server, out, bank)
        asked = [fields_of(b) for b in server.log.chat_bodies]
    assert sorted(asked) == sorted(REPLIES)  # Dentistry, Health Professions share a domain
    drafted = load_topic_bank(out).topics  # a valid bank file on its own
    existing = {t.id for t in load_topic_bank(bank).topics}
    assert len(drafted) == 2 and not {t.id for t in drafted} & existing
    by_pair = {(t.field_a, t.field_b): t for t in drafted}
    assert by_pair[("Engineering", "Health Professions")].concepts_b == [
        "radiographer fatigue",
        "wheelchair transfers",
    ]
    assert all(t.known_links == [] for t in drafted)
    text = out.read_text()
    assert "model curator-model" in text and "NOT part of any bank" in text
    assert "# check of bank + candidates: passed" in text
    assert "#   near-duplicate topics: threshold cosine >= 0.8" in text
    assert text.count("  # check: ") == 2
    assert "wrote candidates to" in capsys.readouterr().out


def test_findings_are_written_beside_their_candidate(tmp_path, monkeypatch, bank):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    bundled = load_topic_bank(bank).topics[0]
    copied = {
        "concepts_a": bundled.concepts_a,
        "concepts_b": ["enamel hypoplasia", "an overly long five word concept"],
        "relation": "a shared structural principle",
    }

    def reply(body: dict) -> str:
        return json.dumps(copied if fields_of(body)[1] == "Dentistry" else REPLIES[fields_of(body)])

    out = tmp_path / "drafts.yaml"
    with OpenAIServer(reply_text=reply) as server:
        draft(server, out, bank)
    text = out.read_text()
    assert "# check of bank + candidates: FAILED" in text
    block = text.split("- id: ")[1]  # the first candidate's comments precede it
    assert "check: concept lengths: concept 'an overly long five word concept'" in text
    assert f"is a near duplicate of '{bundled.concepts_a[0]}' in topic {bundled.id}" in text
    assert "check: no findings" in block


def test_malformed_replies_raise_and_write_nothing(tmp_path, monkeypatch, capsys, bank):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "drafts.yaml"
    same = json.dumps(
        {
            "concepts_a": ["pulp capping", "tuned mass dampers"],
            "concepts_b": ["pulp capping", "wheelchair transfers"],
            "relation": "a link",
        }
    )
    for text, reason in [
        ("Sorry, I cannot help.", "no JSON object in the reply"),
        ('{"concepts_a": ["x", ', "no JSON object"),
        (same, "concept 'pulp capping' appears on both sides"),
    ]:
        with OpenAIServer(reply_text=lambda body, t=text: t) as server:
            with pytest.raises(SystemExit) as done:
                draft(server, out, bank, "--attempts", "2")
            assert server.log.counts["requests"] == 4  # 2 candidates x 2 attempts
        assert done.value.code == 2
        err = capsys.readouterr().err
        assert "2 of 2 candidates had no usable reply after 2 attempt(s); nothing written" in err
        assert reason in err
        assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["bank"]


def test_missing_pairs_are_absent_cross_domain_and_spread(tmp_path):
    loaded = load_topic_bank()
    tax = loaded.taxonomy
    topics = loaded.topics[:100]  # the whole bank now holds nearly every pair; its start does not
    have = {frozenset((t.field_a, t.field_b)) for t in topics}
    pairs = missing_pairs(topics, tax, 20)
    assert len(pairs) == 20 and len(set(pairs)) == 20
    for a, b in pairs:
        assert frozenset((a, b)) not in have
        assert tax.field(a).domain != tax.field(b).domain
    used = {
        f: sum(f in (t.field_a, t.field_b) for t in topics) for f in (f.name for f in tax.fields)
    }
    loads = [used[a] + used[b] for a, b in pairs]
    assert loads == sorted(loads)


def test_review_file_is_never_a_bank_file(tmp_path):
    from harness.curation.draft import draft_topics

    bank = tmp_path / "bank.yaml"
    bank.write_text(load_topic_bank().files[0].read_text())
    with pytest.raises(HarnessError, match="must not be a bank file"):
        draft_topics(
            bank,
            fields=["Mathematics", "Dentistry"],
            bank=[bank],
            backend="openai",
            model="m",
            base_url="http://127.0.0.1:9/v1",
            max_attempts=1,
        )


def test_missing_pairs_through_the_cli(tmp_path, monkeypatch, bank):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    located = load_topic_bank(bank)
    expected = missing_pairs(located.topics, located.taxonomy, 2)
    replies = iter(["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta"])

    def reply(body: dict) -> str:
        words = [next(replies) for _ in range(4)]
        return json.dumps(
            {
                "concepts_a": [f"{words[0]} lattice", f"{words[1]} kernel"],
                "concepts_b": [f"{words[2]} ritual", f"{words[3]} tissue"],
                "relation": "a shared mechanism",
            }
        )

    out = tmp_path / "drafts.yaml"
    with OpenAIServer(reply_text=reply) as server:
        main(
            [
                "topics",
                "draft",
                "--missing-pairs",
                "2",
                "--backend",
                "openai",
                "--model",
                "m",
                "--base-url",
                server.base_url,
                "--bank",
                str(bank),
                "--out",
                str(out),
            ]
        )
        asked = sorted(fields_of(b) for b in server.log.chat_bodies)
    assert asked == sorted(expected)
    drafted = load_topic_bank(out).topics
    assert sorted((t.field_a, t.field_b) for t in drafted) == sorted(expected)
