"""The local backend's decoding loop, on a tiny random model saved as a transformers folder.

A tiny model (random weights, the embedded tokenizer) exercises everything the real one does:
chat template, left padding, per-completion seeds, rows leaving the batch, finish reasons.
The real embedded model runs in the one slow test at the end.
"""

from __future__ import annotations

import pytest
import torch

from harness.models import ChatRequest, GenerationParams, _decode, _rowcache, chat, open_backend
from harness.models.base import unit_seed
from harness.models.local import LocalBackend, sample_tokens

PROMPTS = [
    "Hi",
    "Tell me about ants and economics in two sentences please.",
    "Why?",
    "Combine enzyme kinetics with market microstructure.",
    "A",
    "Name a field.",
]


@pytest.fixture(scope="module")
def tiny_loaded(tiny_model):
    return LocalBackend(str(tiny_model)).load()


@pytest.fixture(params=["row caches", "shared cache"])
def tiny(request, tiny_model, tiny_loaded, monkeypatch):
    """A fresh backend (tests change its settings) sharing the loaded weights, decoding with
    per-row caches (Llama models) or with the generic decoder (every other architecture)."""
    if request.param == "shared cache":
        monkeypatch.setattr(_rowcache, "supports", lambda lm: False)
        tiny_loaded._lm.to(torch.float32)  # as loaded: the row caches may have left it in bf16
    return LocalBackend(
        str(tiny_model), batch_size=8, lm=tiny_loaded._lm, tokenizer=tiny_loaded._tokenizer
    ).load()


def requests(samples=1):
    return [
        ChatRequest(f"k{i}", [{"role": "user", "content": p}], samples)
        for i, p in enumerate(PROMPTS)
    ]


def texts(backend, reqs, params):
    return {(c.key, c.sample): c for c in backend.complete(reqs, params)}


@pytest.mark.parametrize(
    "params",
    [
        GenerationParams(temperature=0, max_tokens=10),
        GenerationParams(temperature=1.0, top_p=0.9, max_tokens=10),
    ],
)
def test_completion_does_not_depend_on_batch_or_order(tiny, params):
    together = texts(tiny, requests(samples=2), params)
    tiny.batch_size = 1
    alone = texts(tiny, list(reversed(requests(samples=2))), params)
    assert together.keys() == alone.keys() and len(together) == 12
    for unit, completion in together.items():
        assert completion.text == alone[unit].text
        assert completion.completion_tokens == alone[unit].completion_tokens


@pytest.mark.parametrize("precision", ["float32", "bfloat16", "int8"])
def test_row_caches_give_byte_identical_texts_at_any_batch_size(tiny_model, precision):
    backend = LocalBackend(str(tiny_model), precision=precision).load()  # own weights
    hot = GenerationParams(temperature=1.0, top_p=0.95, max_tokens=40, seed=5)
    runs = {}
    for size in (1, 5, 8, 16, 32):  # float rows padded to 8, 8, 8, 16 and 24; int8 unpadded
        backend.batch_size = size
        runs[size] = {
            u: (c.text, c.finish_reason) for u, c in texts(backend, requests(3), hot).items()
        }
    assert backend.run_settings()["matmul_dtype"] == precision
    weights = next(backend._lm.parameters()).dtype
    assert weights == (torch.bfloat16 if precision == "bfloat16" else torch.float32)
    assert len(runs[1]) == 18 and len({t for t, _ in runs[1].values()}) >= 12
    assert all(run == runs[1] for run in runs.values())


def test_row_caches_that_grow_give_the_same_texts(tiny_model, tiny_loaded, monkeypatch):
    backend = LocalBackend(str(tiny_model), lm=tiny_loaded._lm, tokenizer=tiny_loaded._tokenizer)
    hot = GenerationParams(temperature=1.0, top_p=0.95, max_tokens=20, seed=6)
    roomy = {u: c.text for u, c in texts(backend.load(), requests(), hot).items()}
    monkeypatch.setattr(_rowcache, "_FIRST_CAPACITY", 3)  # every row's cache doubles, twice
    grown = {u: c.text for u, c in texts(backend, requests(), hot).items()}
    assert grown == roomy and all(roomy.values())


def test_seeds_and_samples(tiny):
    hot = GenerationParams(temperature=1.5, top_p=1.0, max_tokens=12, seed=1)
    first = texts(tiny, requests(samples=2), hot)
    again = texts(tiny, requests(samples=2), hot)
    other = texts(tiny, requests(samples=2), GenerationParams(1.5, 1.0, 12, seed=2))
    assert {u: c.text for u, c in first.items()} == {u: c.text for u, c in again.items()}
    assert sum(first[u].text != other[u].text for u in first) >= 6
    assert sum(first[(f"k{i}", 0)].text != first[(f"k{i}", 1)].text for i in range(6)) >= 3


def test_later_samples_alone_equal_the_same_samples_asked_with_the_first(tiny):
    hot = GenerationParams(temperature=1.5, top_p=1.0, max_tokens=12, seed=3)
    tiny.batch_size = 1  # one shape of forward pass: only the sample numbering can differ
    whole = texts(tiny, requests(samples=3), hot)
    later = [ChatRequest(r.key, r.messages, 2, first_sample=1) for r in requests()]
    tail = texts(tiny, later, hot)
    assert set(tail) == {(f"k{i}", s) for i in range(6) for s in (1, 2)}
    assert all(tail[unit].text == whole[unit].text for unit in tail)


def test_provenance_fields(tiny, tiny_model):
    [c] = tiny.complete(requests()[:1], GenerationParams(temperature=0, max_tokens=5))
    assert c.ok and c.finish_reason == "length" and c.completion_tokens == 5
    assert c.prompt_tokens == len(tiny._prompt_ids([{"role": "user", "content": PROMPTS[0]}]))
    assert c.model_reported == tiny_model.name and c.system_fingerprint.startswith("sha256:")
    assert c.cost_usd == 0.0 and c.attempts == 1 and c.latency_s > 0
    assert tiny.model == str(tiny_model) and tiny.name == "local"


def test_stop_token_ends_a_row_and_the_others_continue(tiny):
    greedy = GenerationParams(temperature=0, max_tokens=8)
    before = texts(tiny, requests(), greedy)
    raw = [
        tiny.generate([tiny._prompt_ids([{"role": "user", "content": p}])], [0], greedy)[0][0]
        for p in PROMPTS
    ]
    stopper = raw[1][2]  # the third token k1 generates becomes an end-of-sequence token
    tiny._eos = tiny._eos | {stopper}
    after = texts(tiny, requests(), greedy)
    assert after[("k1", 0)].finish_reason == "stop" and after[("k1", 0)].completion_tokens == 2
    untouched = [i for i, tokens in enumerate(raw) if stopper not in tokens]
    assert len(untouched) >= 3
    for i in untouched:  # rows that did not stop are unaffected by their neighbour leaving
        assert after[(f"k{i}", 0)].text == before[(f"k{i}", 0)].text


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_rows_joining_a_running_batch_get_what_they_would_alone(tiny, monkeypatch, temperature):
    params = GenerationParams(temperature=temperature, top_p=0.9, max_tokens=12, seed=4)
    raw = [
        tiny.generate(
            [tiny._prompt_ids([{"role": "user", "content": p}])], [unit_seed(4, f"k{i}", 0)], params
        )[0][0]
        for i, p in enumerate(PROMPTS)
    ]
    tiny._eos = tiny._eos | {raw[1][3], raw[4][6]}  # some rows now end early, at different steps
    tiny.batch_size = 1
    alone = texts(tiny, requests(samples=2), params)
    joins = []
    for cls in (_decode.Decoder, _rowcache.RowDecoder):
        real = cls.join
        monkeypatch.setattr(
            cls,
            "join",
            lambda self, rows, real=real: joins.append(bool(self.rows)) or real(self, rows),
        )
    tiny.batch_size = 3
    together = texts(tiny, requests(samples=2), params)
    assert any(joins), "no row joined a running batch"
    assert {u: (c.text, c.finish_reason) for u, c in together.items()} == {
        u: (c.text, c.finish_reason) for u, c in alone.items()
    }
    assert {c.finish_reason for c in together.values()} == {"stop", "length"}


def test_prompt_too_long_for_the_model_fails_alone(tiny):
    reqs = requests()[:2] + [ChatRequest("long", [{"role": "user", "content": "word " * 400}])]
    out = texts(tiny, reqs, GenerationParams(max_tokens=4))
    error = out[("long", 0)].error
    assert error.startswith("prompt of") and "256 positions" in error
    assert out[("k0", 0)].ok and out[("k1", 0)].ok


def test_sample_tokens_greedy_nucleus_and_distribution():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    gens = [torch.Generator().manual_seed(i) for i in range(1)]
    assert sample_tokens(logits, GenerationParams(temperature=0), gens).tolist() == [0]
    tight = GenerationParams(temperature=1.0, top_p=0.4)
    assert {
        int(sample_tokens(logits, tight, [torch.Generator().manual_seed(s)])) for s in range(50)
    } == {0}
    nucleus = GenerationParams(temperature=1.0, top_p=0.7)  # keeps tokens 0 and 1
    draws = [
        int(sample_tokens(logits, nucleus, [torch.Generator().manual_seed(s)])) for s in range(2000)
    ]
    assert set(draws) == {0, 1}
    assert 0.55 < draws.count(0) / 2000 < 0.70  # 0.5 / 0.8 = 0.625
    full = GenerationParams(temperature=1.0, top_p=1.0)
    draws = [
        int(sample_tokens(logits, full, [torch.Generator().manual_seed(s)])) for s in range(2000)
    ]
    assert 0.02 < draws.count(3) / 2000 < 0.09


def test_a_rows_pick_does_not_depend_on_its_neighbours_nucleus():
    torch.manual_seed(0)
    peaked = torch.randn((1, 1000)) * 4  # nucleus inside the shortlist
    flat = torch.zeros((1, 1000))  # nucleus wider than the shortlist: the whole vocabulary
    params = GenerationParams(temperature=1.0, top_p=0.95)
    for seed in range(200):
        alone = sample_tokens(peaked, params, [torch.Generator().manual_seed(seed)])
        both = sample_tokens(
            torch.cat([peaked, flat]), params, [torch.Generator().manual_seed(seed)] * 2
        )
        assert int(both[0]) == int(alone[0])


def test_nucleus_wider_than_the_shortlist_uses_the_whole_vocabulary():
    logits = torch.zeros((2, 1000))  # uniform: the nucleus holds 950 tokens
    params = GenerationParams(temperature=1.0, top_p=0.95)
    picks = {
        int(sample_tokens(logits, params, [torch.Generator().manual_seed(s)] * 2)[0])
        for s in range(300)
    }
    assert max(picks) > 256


def test_unit_seed_depends_on_seed_key_and_sample():
    seeds = {unit_seed(s, k, n) for s in (0, 1) for k in ("a", "b") for n in (0, 1)}
    assert len(seeds) == 8 and all(0 <= s < 2**63 for s in seeds)


@pytest.mark.parametrize("native", [False, True])
def test_a_run_records_its_decoder_and_matmul_precision(tiny_model, monkeypatch, native):
    """The texts depend on the precision, so the manifest must say which one a run used:
    `auto` is bfloat16 on a CPU that multiplies it natively, else int8 (fbgemm)."""
    monkeypatch.setattr(_rowcache, "native_bf16", lambda: native)
    backend = LocalBackend(str(tiny_model), batch_size=2).load()  # own weights: may become bf16
    texts(backend, requests()[:2], GenerationParams(temperature=0, max_tokens=3))
    settings = backend.run_settings()
    assert settings["decoder"] == "row caches"
    assert settings["matmul_dtype"] == ("bfloat16" if native else "int8")
    assert ("quantisation" in settings) is not native
    weights = str(next(backend._lm.parameters()).dtype)[len("torch.") :]
    assert weights == ("bfloat16" if native else "float32")
    assert settings["threads_used"] == torch.get_num_threads()
    monkeypatch.setattr(_rowcache, "supports", lambda lm: False)
    assert backend.run_settings()["decoder"] == "generic"
    assert backend.run_settings()["matmul_dtype"] == weights


def test_an_unknown_precision_is_refused_in_one_line():
    from harness.errors import HarnessError
    from harness.models.settings import build_settings

    with pytest.raises(HarnessError, match=r"^precision: 'int4' is not one of auto, float32"):
        build_settings("local", {"precision": "int4"})
    assert build_settings("local", {"precision": "float32"}).precision == "float32"
    with pytest.raises(HarnessError, match="precision"):
        LocalBackend(precision="fp8")


def test_bad_local_model_path_is_a_user_error(tmp_path):
    from harness.errors import HarnessError

    with pytest.raises(HarnessError, match="local model not found"):
        open_backend("local", str(tmp_path / "missing"))
    with pytest.raises(HarnessError, match="batch size"):
        LocalBackend(batch_size=0)


@pytest.mark.slow
def test_embedded_model_batched_equals_one_at_a_time():
    engine = open_backend("local", batch_size=3)
    greedy = GenerationParams(temperature=0, max_tokens=12)
    reqs = requests()[:3]
    together = texts(engine, reqs, greedy)
    engine.batch_size = 1
    alone = texts(engine, reqs, greedy)
    assert {u: c.text for u, c in together.items()} == {u: c.text for u, c in alone.items()}
    assert all(c.model_reported.endswith(".gguf") for c in together.values())
    text = chat(engine, [{"role": "user", "content": "Say hello."}], greedy)
    assert isinstance(text, str) and text


def test_groups_decoded_together_equal_each_group_alone(tiny):
    greedy = GenerationParams(temperature=0, max_tokens=5, seed=3)
    hot = GenerationParams(temperature=1.0, top_p=0.9, max_tokens=12, seed=4)
    alone = [texts(tiny, requests(), greedy), texts(tiny, requests(2), hot)]
    tiny.batch_size = 4  # rows of both groups share batches
    together: list[dict] = [{}, {}]
    for group, c in tiny.complete_groups([(requests(), greedy), (requests(2), hot)]):
        together[group][(c.key, c.sample)] = c
    for mine, theirs in zip(together, alone, strict=True):
        assert mine.keys() == theirs.keys()
        for unit, c in mine.items():
            assert (c.text, c.finish_reason) == (theirs[unit].text, theirs[unit].finish_reason)
    assert max(c.completion_tokens for c in together[0].values()) <= 5
    assert max(c.completion_tokens for c in together[1].values()) > 5


def test_backends_of_one_model_share_its_weights(tiny_model, monkeypatch):
    from harness.models import embedded

    loads = []
    real = embedded.load_model
    monkeypatch.setattr(embedded, "load_model", lambda m: loads.append(m) or real(m))
    first = LocalBackend(str(tiny_model)).load()
    second = LocalBackend(str(tiny_model), batch_size=32).load()
    assert len(loads) <= 1 and second._lm is first._lm  # none: the module's backend holds it


@pytest.mark.slow
def test_embedded_model_in_int8_follows_float32():
    """int8 (the default on CPUs without bfloat16) predicts the float32 model's own texts: its
    most likely next token agrees at most positions, and it never moves them far."""
    from harness.models import _int8

    if not _int8.available():
        pytest.skip("fbgemm is x86 only")
    exact = LocalBackend(precision="float32", batch_size=4).load()
    quantised = LocalBackend(precision="int8").load()
    greedy = GenerationParams(temperature=0, max_tokens=48)
    written = texts(exact, requests()[1:5], greedy)
    agree = total = 0
    for (key, _), completion in written.items():
        chat_ = next(r.messages for r in requests() if r.key == key)
        prompt = exact._prompt_ids(chat_)
        ids = prompt + exact._tokenizer(completion.text, add_special_tokens=False)["input_ids"]
        a, b = (e._decoder(greedy).sequence_logits(ids) for e in (exact, quantised))
        agree += int((a.argmax(-1) == b.argmax(-1))[len(prompt) - 1 :].sum())
        total += len(ids) - len(prompt) + 1
    assert total > 100 and agree / total > 0.8
    assert quantised.run_settings()["matmul_dtype"] == "int8"
