"""Loopback OpenAI-compatible server for backend tests; a tiny Llama model for the local ones."""

from __future__ import annotations

import pytest
import torch

from tests.servers.openai_server import Faults, OpenAIServer


@pytest.fixture
def serve():
    """serve(**server options) -> a started OpenAIServer, stopped after the test."""
    started = []

    def start(**options):
        server = OpenAIServer(**options).__enter__()
        started.append(server)
        return server

    yield start
    for server in started:
        server.__exit__(None, None, None)


@pytest.fixture
def faults():
    return Faults


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from transformers import LlamaConfig, LlamaForCausalLM

    from harness.models.embedded import load_tokenizer

    tokenizer = load_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        initializer_range=0.2,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    # peaked next-token distributions, as in a trained model (random ones are nearly flat)
    model.lm_head.weight.data.normal_(0.0, 1.0)
    folder = tmp_path_factory.mktemp("tiny-llama")
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
