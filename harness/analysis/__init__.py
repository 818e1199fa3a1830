"""`harness analyze`: the preregistered paired test that can falsify the hypothesis.

    from harness import analyze, prereg, power   # or harness.analysis.run.analyze, ...
    result = analyze("runs/demo")          # AnalysisResult: .summary(), .topics_frame(), ...
    prereg("runs/demo")                    # prereg.md + manifest section `prereg`
    power(topics=50, p_single=0.3, effect=0.1).curve   # DataFrame of power by topics

Sub-packages, lowest first: `plan` (the plan file and the registry of primary tests),
`statistics` (the tests, estimates and the verdict rule), `report` (results objects, rendering,
figures), `simulation` (simulated studies) and `planning` (power and sample size, `prereg`).
At the top: `data` (verified unblinding) and `run` (`analyze`).

This file imports nothing: the stages import the heavy libraries (numpy, scipy, statsmodels,
matplotlib) at their tops, and a reader of the plan alone (`judge`, `status`) needs none of them.
"""
