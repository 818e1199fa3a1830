"""The models leak audit: a model whose style gives it away is found, identical texts are not."""

from __future__ import annotations

from harness.analysis.plan.plan_file import Design
from harness.analysis.simulation.study_folder import write_simulated_study
from harness.judge.blinding.leak_models import model_audit
from harness.study.store import Study


def _study(tmp_path, models: int, marked: bool):
    folder = write_simulated_study(
        tmp_path / f"s{models}{marked}", Design(samples=models, reviewers=1), topics=12, seed=2
    )
    with Study.open(folder) as study, study.transaction() as conn:
        conn.execute("UPDATE outputs SET model_key = 'model-' || sample")
        rows = conn.execute(
            "SELECT i.item_id, o.sample FROM items i JOIN outputs o USING (output_id)"
        ).fetchall()
        for n, (item, sample) in enumerate(rows):
            word = ["alpha", "beta", "gamma"][sample] if marked else "plain"
            conn.execute(
                "UPDATE items SET display_text = ? WHERE item_id = ?",
                (f"idea {n % 7} with {word} wording", item),
            )
    return folder


def test_a_model_that_gives_itself_away_is_found(tmp_path):
    with Study.open(_study(tmp_path, 2, marked=True)) as study:
        audit = model_audit(study, n_boot=200)
    assert audit is not None and audit.models == ["model-0", "model-1"]
    assert len(audit.auc) == 1 and audit.auc[0] > 0.95
    assert "model-1 vs model-0" in audit.summary()


def test_identical_styles_are_not_separable_and_three_models_get_one_auc_each(tmp_path):
    with Study.open(_study(tmp_path, 3, marked=False)) as study:
        audit = model_audit(study, n_boot=200)
    assert audit is not None and len(audit.auc) == 3
    assert all(lo <= 0.5 + 1e-9 for lo in audit.ci_low)
    assert set(audit.as_dict()["labels"]) == {"model-0", "model-1", "model-2"}


def test_one_model_has_no_model_audit(tmp_path):
    folder = write_simulated_study(tmp_path / "one", Design(samples=1, reviewers=1), topics=5)
    with Study.open(folder) as study:
        assert model_audit(study) is None


def test_configurations_of_one_model_are_named_as_such(tmp_path):
    folder = _study(tmp_path, 2, marked=True)
    with Study.open(folder) as study, study.transaction() as conn:
        conn.execute("UPDATE outputs SET model_key = 'local#t' || (sample + 1)")
    with Study.open(folder) as study:
        audit = model_audit(study, n_boot=50)
    assert audit is not None and audit.as_dict()["kind"] == "configurations"
    summary = audit.summary()
    assert summary.startswith(
        "Leak audit (configurations of local (SmolLM2-135M-Instruct)): AUC of telling a "
        "configuration's items from the others' local#t2 vs local#t1"
    )
