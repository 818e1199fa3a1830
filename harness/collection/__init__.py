"""The `collect` stage: run model backends over a study's pending prompts and store every
completion, one commit per completion, resumable at any point.

The package re-exports nothing, so importing one of its modules loads that module's imports alone
(the models a study holds are read from the store, `harness.study.tables.collect_models`, by the
closing line of every stage too). Modules:
`collect_stage` (`collect`, `collect_one`, `collect_models`: the run), `model_plan` (which models
a run serves and with what settings), `collect_settings` (`CollectSettings`: what a run is asked
for), `collect_result` (`CollectResult`: what a run did), `model_removal` (`collect --remove`:
a model taken out of a study before it is blinded) and `stopped_models` (models whose latest run
stopped on failures no retry heals, and what to do about each).
"""
