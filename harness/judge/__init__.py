"""Blinded review: items, routing to reviewers, packets out and in, automated reviewers.

The package re-exports nothing: its modules load numpy, scikit-learn and pydantic models, and
`import harness` must stay light. The stage functions are public at the top level, `harness.blind`
(defined in `harness.judge.blinding.blind_stage`), `harness.import_reviews`
(`harness.judge.packets.packet_import`), `harness.run_automated` and
`harness.calibrate_automated` (`harness.judge.automated.auto_review`); everything else is
imported from its module:

    BlindResult                           harness.judge.blinding.blind_stage
    ImportProblems                        harness.judge.packets.packet_import
    review_status                         harness.judge.review_status
    load_roster, Roster, Reviewer         harness.judge.routing.roster
    make_items                            harness.judge.items.blinded_items
    route, plan_routing                   harness.judge.routing.route_items
    write_packets                         harness.judge.packets.packet_write
    write_commitment                      harness.judge.blinding.commitment
    classifier_audit, scan_packets        harness.judge.blinding.leak_audit
"""
