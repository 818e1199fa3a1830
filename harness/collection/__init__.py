"""The `collect` stage: run model backends over a study's pending prompts and store every
completion, one commit per completion, resumable at any point.

Modules: `collect_stage` (`collect`, `collect_one`, `collect_models`: the run), `model_plan`
(which models a run serves and with what settings), `collect_settings` (`CollectSettings`: what a
run is asked for), `collect_result` (`CollectResult`: what a run did) and `model_removal`
(`collect --remove`: a model taken out of a study before it is blinded).
"""

from __future__ import annotations

from harness.collection.collect_result import CollectResult
from harness.collection.collect_settings import CollectSettings
from harness.collection.collect_stage import collect, collect_models, collect_one

__all__ = ["CollectResult", "CollectSettings", "collect", "collect_models", "collect_one"]
