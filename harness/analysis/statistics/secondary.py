"""Secondary analyses, each a row with an estimate, an interval and a p-value, Holm-corrected
together. None of them can change the verdict; they show where the primary result comes from.
"""

from __future__ import annotations

import inspect
import math
import warnings
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd
from scipy import stats

from harness.analysis.plan.plan_file import Plan
from harness.analysis.report.results import Scale
from harness.analysis.statistics.consensus import CROSS, Judgments, TopicTable
from harness.analysis.statistics.gee import topic_subsample
from harness.analysis.statistics.holm import holm_adjust
from harness.analysis.statistics.pooled import single_conditions
from harness.analysis.statistics.primary import run_primary

if TYPE_CHECKING:
    from statsmodels.genmod.bayes_mixed_glm import (
        BayesMixedGLMResults,
        BinomialBayesMixedGLM,
    )


@dataclass(frozen=True)
class SecondaryTest:
    name: str
    label: str
    scale: Scale
    estimate: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    p_value: float | None = None
    alternative: str = "greater"
    n_topics: int = 0
    p_holm: float | None = None
    note: str = ""
    skipped: str | None = None  # why it did not run


def _skip(name: str, label: str, scale: Scale, reason: str) -> SecondaryTest:
    return SecondaryTest(name, label, scale, skipped=reason)


def _rows(j: Judgments, y: np.ndarray, table: TopicTable, single: str) -> np.ndarray:
    arms = np.isin(j.condition, (CROSS, *single_conditions(single)))
    result: np.ndarray = arms & ~np.isnan(y) & table.item_eligible[j.item]
    return result


def mixed_glm(j: Judgments, y: np.ndarray, table: TopicTable, plan: Plan) -> SecondaryTest:
    """Logistic model with topic and reviewer variance components (variational Bayes)."""
    import scipy.sparse as sparse
    from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM

    name, label = "mixed_glm", "Mixed logistic model (topic and reviewer variance components)"
    rows = _rows(j, y, table, plan.single)
    has = np.zeros(j.n_topics, dtype=bool)
    has[j.topic[rows]] = True
    chosen = topic_subsample(j.n_topics, has, plan.secondary.mixed_max_topics, plan.secondary.seed)
    note = ""
    if chosen is not None:
        rows &= np.isin(j.topic, chosen)
        note = f"random subsample of {chosen.size} of {int(has.sum())} topics. "
    endog, cross = y[rows], (j.condition[rows] == CROSS).astype(float)
    if endog.size == 0 or np.unique(endog).size < 2 or np.unique(cross).size < 2:
        return _skip(name, label, "odds ratio", "no variation in the outcome or the arms")
    topic = pd.factorize(j.topic[rows])[0]
    columns = [sparse.csr_matrix((np.ones(endog.size), (np.arange(endog.size), topic)))]
    ident = [np.zeros(topic.max() + 1, dtype=int)]
    reviewer = pd.factorize(j.reviewer[rows])[0]
    if reviewer.max() >= 1:
        columns.append(sparse.csr_matrix((np.ones(endog.size), (np.arange(endog.size), reviewer))))
        ident.append(np.ones(reviewer.max() + 1, dtype=int))
    exog = np.column_stack([np.ones_like(cross), cross])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = BinomialBayesMixedGLM(
            endog, exog, sparse.hstack(columns).tocsr(), np.concatenate(ident), vcp_p=1.0, fe_p=2.0
        )
        fit = _fit_vb(model, plan.secondary.seed)
    mean, sd = float(fit.fe_mean[1]), float(fit.fe_sd[1])
    return SecondaryTest(
        name,
        label,
        "odds ratio",
        math.exp(mean),
        math.exp(mean - 1.959964 * sd),
        math.exp(mean + 1.959964 * sd),
        float(stats.norm.sf(mean / sd)),
        "greater",
        int(np.unique(topic).size),
        note=note + "p = posterior probability that the log odds ratio is <= 0 "
        "(variational approximation).",
    )


def _fit_vb(model: BinomialBayesMixedGLM, seed: int) -> BayesMixedGLMResults:
    """L-BFGS-B (same optimum as BFGS, linear memory) from seeded starting values, so the same
    data give the same report. fit_vb draws its starting log-SDs as -0.5 + 0.1 N(0, 1): from
    `rng` since statsmodels 0.15, from numpy's global state before, where the same draw is given
    as `sd` instead."""
    rng = np.random.default_rng(seed)
    if "rng" in inspect.signature(model.fit_vb).parameters:
        return model.fit_vb(fit_method="L-BFGS-B", rng=rng)
    n = model.k_fep + model.k_vcp + model.k_vc
    return model.fit_vb(fit_method="L-BFGS-B", sd=np.exp(-0.5 + 0.1 * rng.normal(size=n)))


def conditional_logit(j: Judgments, table: TopicTable, plan: Plan) -> SecondaryTest:
    """Item consensus (novel when the item's score exceeds the threshold), conditioned on topic."""
    from statsmodels.discrete.conditional_models import ConditionalLogit

    name, label = "conditional_logit", "Conditional logit on item consensus, by topic"
    arms = np.isin(j.item_condition, (CROSS, *single_conditions(plan.single)))
    keep = arms & table.item_eligible
    has = np.zeros(j.n_topics, dtype=bool)
    has[j.item_topic[keep]] = True
    chosen = topic_subsample(j.n_topics, has, plan.secondary.heavy_max_topics, plan.secondary.seed)
    note = ""
    if chosen is not None:
        keep &= np.isin(j.item_topic, chosen)
        note = f"random subsample of {chosen.size} of {int(has.sum())} topics. "
    endog = (table.item_score[keep] > plan.consensus.threshold).astype(float)
    groups = j.item_topic[keep]
    exog = (j.item_condition[keep] == CROSS).astype(float)[:, None]
    informative = _informative_groups(endog, groups)
    if not informative.any() or np.unique(exog[informative]).size < 2:
        return _skip(name, label, "odds ratio", "no topic with both outcomes")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = ConditionalLogit(
            endog[informative], exog[informative], groups=groups[informative]
        ).fit(disp=0)
    beta, se = float(fit.params[0]), float(fit.bse[0])
    if not (math.isfinite(beta) and math.isfinite(se) and se > 0):
        return _skip(name, label, "odds ratio", "the model did not converge (separation)")
    return SecondaryTest(
        name,
        label,
        "odds ratio",
        math.exp(beta),
        math.exp(beta - 1.959964 * se),
        math.exp(beta + 1.959964 * se),
        float(stats.norm.sf(beta / se)),
        "greater",
        int(np.unique(groups[informative]).size),
        note=note + "Topics whose items all agree carry no information and drop out.",
    )


def _informative_groups(endog: np.ndarray, groups: np.ndarray) -> np.ndarray:
    sums = np.bincount(groups, weights=endog)
    sizes = np.bincount(groups)
    mixed = (sums > 0) & (sums < sizes)
    result: np.ndarray = mixed[groups]
    return result


def primary_variant(
    j: Judgments,
    plan: Plan,
    name: str,
    label: str,
    *,
    unsure: str | None = None,
    min_reviewers: int | None = None,
    note: str = "",
) -> SecondaryTest:
    """The primary analysis on a variant of the data (a reviewer kind, another unsure coding)."""
    outcome = run_primary(j, plan, unsure=unsure, min_reviewers=min_reviewers)
    if outcome.n_topics < 2:
        return _skip(name, label, "difference", f"only {outcome.n_topics} complete topics")
    return SecondaryTest(
        name,
        label,
        "difference",
        outcome.estimate,
        outcome.ci_low,
        outcome.ci_high,
        outcome.p_greater,
        "greater",
        outcome.n_topics,
        note=note,
    )


def reviewer_kinds(j: Judgments, plan: Plan) -> list[SecondaryTest]:
    kinds = j.reviewer_kind if j.reviewer_kind is not None else np.array([])
    out = []
    for kind in ("human", "automated"):
        name, label = f"reviewer_kind:{kind}", f"Primary analysis, {kind} reviewers only"
        mask = np.isin(j.reviewer, np.flatnonzero(kinds == kind))
        if not mask.any():
            out.append(_skip(name, label, "difference", f"no {kind} reviews"))
            continue
        out.append(
            primary_variant(
                j.subset(mask),
                plan,
                name,
                label,
                min_reviewers=1,
                note="Items need one review of this kind.",
            )
        )
    return out


def _ols_hc3(d: np.ndarray, covariates: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import statsmodels.api as sm

    fit = sm.OLS(d, sm.add_constant(covariates.to_numpy(float), has_constant="add")).fit(
        cov_type="HC3"
    )
    return np.asarray(fit.params), np.asarray(fit.bse), np.asarray(fit.pvalues)


def moderators(
    table: TopicTable, covariates: pd.DataFrame, prefix: str, label: str, note: str
) -> list[SecondaryTest]:
    """Regress complete topics' d_t on covariates (OLS, HC3 errors); two-sided slopes."""
    keep = table.complete
    frame = covariates.loc[keep].reset_index(drop=True)
    d = table.d
    usable = [c for c in frame.columns if frame[c].notna().all() and frame[c].nunique() > 1]
    out = [
        _skip(f"{prefix}:{c}", f"{label}: {c}", "slope", "no variation across topics")
        for c in frame.columns
        if c not in usable
    ]
    if not usable or d.size < len(usable) + 3:
        if usable:
            out += [
                _skip(f"{prefix}:{c}", f"{label}: {c}", "slope", "too few topics") for c in usable
            ]
        return out
    params, bse, pvalues = _ols_hc3(d, frame[usable])
    for index, column in enumerate(usable, start=1):
        out.append(
            SecondaryTest(
                f"{prefix}:{column}",
                f"{label}: {column}",
                "slope",
                float(params[index]),
                float(params[index] - 1.959964 * bse[index]),
                float(params[index] + 1.959964 * bse[index]),
                float(pvalues[index]),
                "two-sided",
                int(d.size),
                note=note,
            )
        )
    return out


def field_distance(table: TopicTable, topics: pd.DataFrame) -> list[SecondaryTest]:
    covariates = topics[["taxonomy_distance", "embedding_distance"]].astype(float)
    return moderators(
        table,
        covariates,
        "field_distance",
        "Field distance moderator",
        "Change in d_t per unit of distance (OLS on topics, HC3 errors).",
    )


def geometry(
    table: TopicTable, geometry_frame: pd.DataFrame, topic_ids: np.ndarray, single: str
) -> list[SecondaryTest]:
    """d_t against cross-minus-single differences in attention entropy and concept split."""
    if geometry_frame.empty:
        return [
            _skip(
                "geometry",
                "Attention-geometry covariates",
                "slope",
                "the study has no geometry measurements",
            )
        ]
    wide = geometry_frame.pivot_table(
        index="topic_id", columns="condition", values=["entropy", "split_index"], aggfunc="mean"
    )
    singles = [c for c in ("single_a", "single_b") if single in ("mean_of_singles", c)]
    covariates = pd.DataFrame(index=pd.Index(topic_ids, name="topic_id"))
    for measure in ("entropy", "split_index"):
        if (measure, "cross") in wide and all((measure, s) in wide for s in singles):
            delta = wide[(measure, "cross")] - wide[[(measure, s) for s in singles]].mean(axis=1)
            covariates[f"delta_{measure}"] = delta.reindex(covariates.index)
    if covariates.empty:
        return [
            _skip(
                "geometry",
                "Attention-geometry covariates",
                "slope",
                "geometry does not cover the compared conditions",
            )
        ]
    return moderators(
        table,
        covariates.reset_index(drop=True),
        "geometry",
        "Attention geometry (cross minus single)",
        "Change in d_t per unit of the prompt's attention measure (OLS, HC3).",
    )


def holm(tests: list[SecondaryTest]) -> list[SecondaryTest]:
    """Holm step-down adjusted p-values across the tests that ran."""
    ran = [i for i, t in enumerate(tests) if t.skipped is None and t.p_value is not None]
    if not ran:
        return tests
    adjusted = holm_adjust(np.array([tests[i].p_value for i in ran], dtype=float))
    out = list(tests)
    for position, i in enumerate(ran):
        out[i] = replace(tests[i], p_holm=float(adjusted[position]))
    return out


def per_reviewer(j: Judgments, y: np.ndarray, table: TopicTable, single: str) -> pd.DataFrame:
    """Descriptive: each reviewer's share of novel verdicts by arm (no test)."""
    rows = _rows(j, y, table, single)
    frame = pd.DataFrame(
        {"reviewer": j.reviewer[rows], "cross": j.condition[rows] == CROSS, "y": y[rows]}
    )
    ids = j.reviewer_ids if j.reviewer_ids is not None else np.arange(j.n_reviewers)
    kinds = j.reviewer_kind if j.reviewer_kind is not None else np.array([""] * j.n_reviewers)
    out = []
    for key, group in frame.groupby("reviewer"):
        code = cast(int, key)  # groupby types its keys as any scalar; "reviewer" holds codes
        cross = group.loc[group["cross"], "y"]
        single_y = group.loc[~group["cross"], "y"]
        out.append(
            {
                "reviewer_id": str(ids[code]),
                "kind": str(kinds[code]),
                "judgments": len(group),
                "novel_cross": float(cross.mean()) if len(cross) else math.nan,
                "novel_single": float(single_y.mean()) if len(single_y) else math.nan,
            }
        )
    result = pd.DataFrame(
        out, columns=["reviewer_id", "kind", "judgments", "novel_cross", "novel_single"]
    )
    result["difference"] = result["novel_cross"] - result["novel_single"]
    return result
