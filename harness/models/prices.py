"""Token prices and cost accounting.

Prices are USD per million tokens, as published by the provider; the built-in table covers a few
common OpenAI models and is meant to be checked and extended. Users add or override entries with
a YAML or JSON file, named by the `HARNESS_PRICES` environment variable or the `prices` option:

    gpt-4o-mini: {input: 0.15, output: 0.60}
    my-vllm-model: {input: 0, output: 0}

A model name matches an entry exactly, or else the longest entry it starts with
(`gpt-4o-mini-2024-07-18` is priced as `gpt-4o-mini`). Batch API requests cost `batch_discount`
of the normal price.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from harness.errors import HarnessError

PRICES_ENV = "HARNESS_PRICES"

#: USD per 1M tokens (input, output). Published list prices; verify before relying on them.
BUILTIN_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4-turbo": (10.00, 30.00),
    "gpt-3.5-turbo": (0.50, 1.50),
    "o1": (15.00, 60.00),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
}


@dataclass(frozen=True)
class Price:
    input: float  # USD per 1M prompt tokens
    output: float  # USD per 1M completion tokens

    def cost(self, prompt_tokens: int | None, completion_tokens: int | None) -> float | None:
        if prompt_tokens is None and completion_tokens is None:
            return None
        return ((prompt_tokens or 0) * self.input + (completion_tokens or 0) * self.output) / 1e6


class PriceTable:
    """Model name -> Price, built-in entries overridden by a user file."""

    def __init__(self, entries: dict[str, Price] | None = None, batch_discount: float = 0.5):
        self.entries = dict(entries or {})
        self.batch_discount = batch_discount

    @classmethod
    def load(cls, path: str | Path | None = None) -> PriceTable:
        """Built-in prices plus the file at `path` (or `$HARNESS_PRICES`), which wins."""
        table = cls({name: Price(*p) for name, p in BUILTIN_PRICES.items()})
        source = path or os.environ.get(PRICES_ENV)
        if source:
            table.entries.update(read_price_file(Path(source)))
        return table

    def price(self, model: str) -> Price | None:
        if model in self.entries:
            return self.entries[model]
        prefixes = [name for name in self.entries if model.startswith(name)]
        return self.entries[max(prefixes, key=len)] if prefixes else None

    def cost(
        self,
        model: str,
        prompt_tokens: int | None,
        completion_tokens: int | None,
        *,
        batch: bool = False,
    ) -> float | None:
        """USD for one completion, or None when the model has no price."""
        price = self.price(model)
        if price is None:
            return None
        cost = price.cost(prompt_tokens, completion_tokens)
        if cost is not None and batch:
            cost *= self.batch_discount
        return cost


def read_price_file(path: Path) -> dict[str, Price]:
    """Read `{model: {input: USD/1M, output: USD/1M}}` from YAML or JSON."""
    if not path.is_file():
        raise HarnessError("price table not found", file=path)
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except Exception as error:  # yaml and json raise different types
        raise HarnessError(f"cannot parse price table: {error}", file=path) from None
    if not isinstance(data, dict):
        raise HarnessError("price table must map model names to {input, output}", file=path)
    prices = {}
    for name, entry in data.items():
        if not isinstance(entry, dict) or set(entry) != {"input", "output"}:
            raise HarnessError(
                "expected {input: USD per 1M, output: USD per 1M}", file=path, row=str(name)
            )
        try:
            prices[str(name)] = Price(float(entry["input"]), float(entry["output"]))
        except (TypeError, ValueError):
            raise HarnessError("prices must be numbers", file=path, row=str(name)) from None
        if prices[str(name)].input < 0 or prices[str(name)].output < 0:
            raise HarnessError("prices must not be negative", file=path, row=str(name))
    return prices
