"""The decisive design through the real entry point: the whole bank (363 topics), two outputs
per prompt, every topic adjudicated by two careful reviewers (97% accurate on their planned
controls and on real items alike), primary reviewers at 85%. With no true difference `harness analyze` says
REFUTED; with a true +0.10 it says SUPPORTED (the rule: `statistics.verdict`, joint test)."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.analysis.helpers import CONDITIONS, TWO_HUMANS, build_study, control_judgments

ADJ = {"ada": "human", "abe": "human"}
ROLES = {"ada": "adjudicator", "abe": "adjudicator"}
VERDICT = ("published", "not_published")


def _bank_study(path, effect: float, seed: int):
    rng = np.random.default_rng(seed)
    topics = [f"t{t:03d}" for t in range(363)]
    base = 1 / (1 + np.exp(-(np.log(0.3 / 0.7) + rng.normal(0, 1.0, len(topics)))))
    rows = []
    for (i, t), c, s in itertools.product(enumerate(topics), CONDITIONS, range(2)):
        p = min(base[i] + (effect if c == "cross" else 0.0), 1.0)
        truth = int(rng.random() < p)
        for r in TWO_HUMANS:
            rows.append((t, c, s, r, VERDICT[truth if rng.random() < 0.85 else 1 - truth]))
        for a in ADJ:
            rows.append((t, c, s, a, VERDICT[truth if rng.random() < 0.97 else 1 - truth]))
    # the planned controls: `controls.adjudicator_share` 0.4 of each adjudicator's 2,178 items
    controls = control_judgments(872, list(ADJ), sensitivity=0.97, specificity=0.97, seed=seed)
    return build_study(
        path, rows, reviewers=TWO_HUMANS | ADJ, roles=ROLES, sample=topics, controls=controls
    )


@pytest.mark.parametrize(("effect", "verdict"), [(0.0, "REFUTED"), (0.10, "SUPPORTED")])
def test_the_whole_bank_all_adjudicated_decides(tmp_path, fast_plan, effect, verdict):
    study = _bank_study(tmp_path / "s", effect, seed=3)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "analyze",
            "--study",
            str(study),
            "--plan",
            str(fast_plan),
            "--allow-deviation",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"VERDICT: {verdict}" in proc.stdout, proc.stdout[-3000:]
    if verdict == "REFUTED":  # what it assumes, and how much harder real items could be
        assert "their J on real items is at least" in proc.stdout
