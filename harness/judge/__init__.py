"""Blinded review: items, routing to reviewers, packets out and in, automated reviewers.

The package re-exports nothing: its modules load numpy, scikit-learn and pydantic models, and
`import harness` must stay light. The stage functions are public at the top level, `harness.blind`
(defined in `harness.judge.blinding`), `harness.import_reviews` (`harness.judge.sheets_in`),
`harness.run_automated` and `harness.calibrate_automated` (`harness.judge.automated`); everything
else is imported from its module:

    BlindResult                           harness.judge.blinding
    ImportProblems                        harness.judge.sheets_in
    review_status                         harness.judge.status
    load_roster, Roster, Reviewer         harness.judge.roster
    make_items                            harness.judge.items
    route, plan_routing                   harness.judge.routing
    write_packets                         harness.judge.sheets_out
    write_commitment                      harness.judge.commitment
    classifier_audit, scan_packets        harness.judge.leak
"""
