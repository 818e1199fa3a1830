"""The `generate` stage: matched prompts for every topic in every condition, with the audit that
shows the conditions differ only in where their concepts come from.

The package re-exports nothing: `harness.generation.match_audit` is read by `topics check` and
the CLI without the tokenizer and the topic bank. Modules: `generate_stage` (`generate`,
`render_prompts`, `select_topics`: the stage), `match_audit` (`audit_prompts`: length and wording
of the conditions side by side), `field_distance` (cosine distance between the fields'
descriptions under the offline sentence model, read from a table where one holds them),
`token_count` (the prompts' token counts from the embedded tokenizer's cached `tokenizers` form)
and `cached` (the user-cache files of both).
"""
