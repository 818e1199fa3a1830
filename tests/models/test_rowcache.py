"""The row caches' two shortcuts change no bit of what a row computes: a prompt prefix shared by
several prompts is prefilled once, and a prompt that joins a running batch is prefilled in the
decoding rows' own pass. On the tiny random Llama model of conftest.py; the embedded model in the
slow test at the end."""

from __future__ import annotations

import pytest
import torch

from harness.models import _int8, _rowcache, local
from harness.models._decode import Row
from harness.models.base import ChatRequest, GenerationParams
from harness.models.local import LocalBackend, common_prefix, shared_prefixes

INSTRUCTION = (
    "Rewrite the research idea below in plain, neutral language, in at most three short "
    "sentences. Keep every concept, method and purpose it names. Add nothing.\n\n"
)
TEXTS = [
    "Ants and markets.",
    "A study of enzyme kinetics as a model of order books in market microstructure.",
    "Use river networks to plan city bus routes; test it on three cities over a year.",
    "Graph colouring for exam timetables, compared with the schedules that registrars make by "
    "hand, over ten universities and two terms, with the clashes counted.",
    "Soil microbes that sense heavy metals, read by a phone camera.",
]
GREEDY = GenerationParams(temperature=0, max_tokens=12, seed=1)
HOT = GenerationParams(temperature=1.0, top_p=0.9, max_tokens=12, seed=2)


@pytest.fixture(scope="module", params=["bfloat16", "int8"])
def exact(request, tiny_model):
    """A backend whose products are row-exact: bfloat16 where the CPU multiplies it, or int8."""
    if request.param == "bfloat16" and not _rowcache.native_bf16():
        pytest.skip("bfloat16 products are row-exact only where the CPU multiplies them")
    if request.param == "int8" and not _int8.available():
        pytest.skip("fbgemm is x86 only")
    return LocalBackend(str(tiny_model), precision=request.param, batch_size=3).load()


def prompts(backend):
    return [backend._prompt_ids([{"role": "user", "content": INSTRUCTION + t}]) for t in TEXTS]


def prefill(decoder, ids):
    """Logits, keys and values of `ids` prefilled alone by `decoder`."""
    cache = decoder._cache(len(ids))
    return decoder._prefill(ids, cache), cache.keys, cache.values


def test_a_shared_prefix_changes_no_bit_of_a_prompts_prefill(exact):
    ids = prompts(exact)
    shared = exact._decoder(GREEDY, [common_prefix(ids)])
    whole = exact._decoder(GREEDY)
    for prompt in ids:
        for mine, theirs in zip(prefill(shared, prompt), prefill(whole, prompt), strict=True):
            assert torch.equal(mine, theirs)
    lengths = {prefix.length for prefix in shared._prefixes.values()}
    assert lengths and all(n % 16 == 0 and 16 <= n <= 96 for n in lengths)
    assert not whole._prefixes


def test_texts_are_the_same_with_and_without_shared_prefixes(exact, monkeypatch):
    requests = [ChatRequest(f"k{i}", [{"role": "user", "content": INSTRUCTION + t}], 2)
                for i, t in enumerate(TEXTS)]  # fmt: skip
    shared = [
        {(c.key, c.sample): c.text for c in exact.complete(requests, p)} for p in (GREEDY, HOT)
    ]
    monkeypatch.setattr(local, "shared_prefixes", lambda units: [])
    whole = [
        {(c.key, c.sample): c.text for c in exact.complete(requests, p)} for p in (GREEDY, HOT)
    ]
    assert shared == whole and len(shared[1]) == 10


def test_a_prompt_prefilled_beside_decoding_rows_gets_the_logits_it_gets_alone(exact):
    first, *others = prompts(exact)
    decoder = exact._decoder(GREEDY)
    decoder.join([Row(ids, seed=i) for i, ids in enumerate(others)])
    assert len(decoder.fresh) == 4 and decoder.logits is None  # prefilled by the next pass
    decoder.step()  # the four prompts, in one pass
    decoder.step()  # their first tokens
    newcomer = Row(first, seed=9)
    decoder.join([newcomer])
    decoder.step()  # the others' next tokens and the newcomer's prompt, in one pass
    assert not decoder.fresh and decoder.rows[-1] is newcomer
    alone, _, _ = prefill(exact._decoder(GREEDY), first)
    assert torch.equal(decoder.logits[-1:], alone)


def plain(backend, monkeypatch):
    """`backend` with both shortcuts off, as in float32: every prompt prefilled whole and
    alone, nothing shared."""
    made = backend._decoder

    def decoder(params, shared=()):
        rows = made(params)
        rows.rows_exact = False
        return rows

    monkeypatch.setattr(backend, "_decoder", decoder)
    return backend


def outcomes(backend, requests, params):
    return {
        (c.key, c.sample): (c.text, c.finish_reason) for c in backend.complete(requests, params)
    }


def test_texts_are_those_of_every_prompt_prefilled_whole_and_alone(exact, monkeypatch):
    requests = [ChatRequest(f"k{i}", [{"role": "user", "content": INSTRUCTION + t}], 2)
                for i, t in enumerate(TEXTS)]  # fmt: skip
    shortcuts = [outcomes(exact, requests, p) for p in (GREEDY, HOT)]
    whole = [outcomes(plain(exact, monkeypatch), requests, p) for p in (GREEDY, HOT)]
    assert shortcuts == whole and len(shortcuts[1]) == 10
    assert len({text for text, _ in shortcuts[1].values()}) > 5  # the texts do differ


def test_a_failed_pass_fails_its_rows_once_and_the_rest_decode_as_before(exact, monkeypatch):
    requests = [ChatRequest(f"k{i}", [{"role": "user", "content": INSTRUCTION + t}])
                for i, t in enumerate(TEXTS)]  # fmt: skip
    short = GenerationParams(temperature=0, max_tokens=3, seed=1)
    # the two shortest prompts start first and end first: the next prompts join running rows
    groups = [([requests[0], requests[4]], short), (requests[1:4], GREEDY)]
    exact.batch_size = 3
    clean = {c.key: c.text for _, c in exact.complete_groups(groups)}
    real, failed_passes = _rowcache._Pass.__init__, []

    def fail_once(self, caches, written, padded, prompts):
        """The first pass with rows decoding and a joined prompt to prefill fails."""
        if caches and prompts and not failed_passes:
            failed_passes.append(len(caches) + len(prompts))
            raise RuntimeError("out of memory")
        real(self, caches, written, padded, prompts)

    monkeypatch.setattr(_rowcache._Pass, "__init__", fail_once)
    out = [c for _, c in exact.complete_groups(groups)]
    assert sorted(c.key for c in out) == sorted(clean)  # one completion each
    failed = {c.key for c in out if c.error}
    assert [len(failed)] == failed_passes and len(failed) < len(requests)
    assert all("generation failed: RuntimeError: out of memory" in c.error for c in out if c.error)
    assert {c.key: c.text for c in out if not c.error} == {
        k: t for k, t in clean.items() if k not in failed
    }


def test_float32_rows_are_prefilled_alone_and_share_no_prefix(tiny_model):
    backend = LocalBackend(str(tiny_model), precision="float32").load()
    ids = prompts(backend)
    decoder = backend._decoder(GREEDY, [common_prefix(ids)])
    assert not decoder.rows_exact and not decoder._shared
    decoder.join([Row(ids[0], seed=0)])
    assert not decoder.fresh and decoder.logits.shape[0] == 1


@pytest.mark.parametrize(
    ("shared", "prompt", "length"),
    [
        (67, 118, 64),  # whole vectors of 16 tokens
        (24, 97, 16),
        (32, 112, 32),
        (300, 400, 96),  # at most 96
        (40, 41, 32),  # at least two tokens left to prefill
        (17, 18, 16),
        (15, 80, 0),  # less than a vector: nothing shared
    ],
)
def test_a_shared_prefix_is_cut_to_whole_vectors_of_at_most_96_tokens(shared, prompt, length):
    assert _rowcache._prefix_length(shared, prompt) == length


def test_each_group_shares_the_beginning_of_its_prompts():
    assert common_prefix([[1, 2, 3, 4], [1, 2, 5], [1, 2, 3]]) == [1, 2]
    assert common_prefix([[7, 8], [7, 8]]) == [7, 8]
    assert common_prefix([[1, 2], [3]]) == []
    units = [
        local._Unit(ChatRequest(k, [{"role": "user", "content": k}]), 0, ids, 0, GREEDY, group)
        for k, ids, group in [("a", [1, 2, 3], 0), ("b", [1, 2, 4], 0), ("c", [5, 6], 1)]
    ]
    assert shared_prefixes(units) == [[1, 2]]  # a group of one completion shares nothing


@pytest.mark.slow
def test_embedded_model_shared_prefixes_and_joined_prompts_change_no_bit():
    """The embedded model at its default precision (row-exact on an x86 CPU): prompts of the
    blinded steps' shape, 40 to 500 tokens, prefilled with the shared instruction and alone."""
    backend = LocalBackend().load()
    decoder = backend._decoder(GREEDY)
    if not decoder.rows_exact:
        pytest.skip("the products at this precision are not row-exact here")
    words = [
        "ants",
        "markets",
        "enzymes",
        "rivers",
        "graphs",
        "soil",
        "microbes",
        "phones",
        "timetables",
    ]
    ids = [
        backend._prompt_ids(
            [{"role": "user", "content": INSTRUCTION + " ".join(words[: 1 + i % 9] * (i + 1))}]
        )
        for i in range(0, 60, 4)
    ]
    assert min(map(len, ids)) < 100 and max(map(len, ids)) > 400
    shared = backend._decoder(GREEDY, [common_prefix(ids)])
    for prompt in ids:
        for mine, theirs in zip(prefill(shared, prompt), prefill(decoder, prompt), strict=True):
            assert torch.equal(mine, theirs)
    requests = [ChatRequest(f"k{i}", [{"role": "user", "content": INSTRUCTION + t}])
                for i, t in enumerate(TEXTS)]  # fmt: skip
    backend.batch_size = 2  # rows join a running batch, their prompts in its passes
    together = {c.key: c.text for c in backend.complete(requests, GREEDY)}
    backend.batch_size = 1
    alone = {}
    for request in requests:  # each alone: no shared prefix, no neighbour
        alone.update({c.key: c.text for c in backend.complete([request], GREEDY)})
    assert together == alone
