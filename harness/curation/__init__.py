"""Curation of topic banks: the quality checks of `harness topics check` (`check_bank` in
`harness.curation.check`, the rules in `harness.curation.rules`) and the drafting of candidate
topics (`harness topics draft`, `draft_topics` in `harness.curation.draft`) into a review file,
never into a bank."""
