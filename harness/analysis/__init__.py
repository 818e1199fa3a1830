"""`harness analyze`: the preregistered paired test that can falsify the hypothesis.

    from harness.analysis import analyze, prereg, power
    result = analyze("runs/demo")          # AnalysisResult: .summary(), .topics_frame(), ...
    prereg("runs/demo")                    # prereg.md + manifest section `prereg`
    power(topics=50, p_single=0.3, effect=0.1).curve   # DataFrame of power by topics

Sub-packages, lowest first: `plan` (the plan file and the registry of primary tests),
`statistics` (the tests, estimates and the verdict rule), `report` (results objects, rendering,
figures), `simulation` (simulated studies) and `planning` (power and sample size, `prereg`).
At the top: `data` (verified unblinding) and `run` (`analyze`).
The heavy libraries (numpy, scipy, statsmodels, matplotlib) load only inside these functions.
"""

from __future__ import annotations

from harness.analysis.planning.power_analysis import power
from harness.analysis.planning.preregister import prereg
from harness.analysis.run import analyze

__all__ = ["analyze", "power", "prereg"]
