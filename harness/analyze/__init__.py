"""`harness analyze`: the preregistered paired test that can falsify the hypothesis.

    from harness.analyze import analyze, prereg, power
    result = analyze("runs/demo")          # AnalysisResult: .summary(), .topics_frame(), ...
    prereg("runs/demo")                    # prereg.md + manifest section `prereg`
    power(topics=50, p_single=0.3, effect=0.1).curve   # DataFrame of power by topics

Modules: plan (the plan file), data (verified unblinding), consensus (per-topic proportions),
permutation, paired (McNemar, Tango), gee, equivalence, pooled (the literal rule), agreement,
secondary, sample_size (analytic power), simulate, planning (`power`), primary, verdict,
results, figures, render, report, preregister (`prereg`), run (`analyze`). statsmodels and
matplotlib load only when an analysis needs them.
"""

from __future__ import annotations

from harness._callable import make_module_callable
from harness.analyze.plan import Plan, load_plan
from harness.analyze.planning import PowerResult, power
from harness.analyze.preregister import PreregResult, prereg
from harness.analyze.results import AnalysisResult
from harness.analyze.run import analyze

__all__ = [
    "AnalysisResult",
    "Plan",
    "PowerResult",
    "PreregResult",
    "analyze",
    "load_plan",
    "power",
    "prereg",
]

make_module_callable(__name__, analyze)  # `harness.analyze(...)` calls `analyze(...)`
