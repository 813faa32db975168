"""Style control: recovers an injected length effect and removes it from the ratings."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import log_expit

from sciarena.board import compute_leaderboard, table_from_arrays
from sciarena.board.style import fit_style, style_matrix
from sciarena.board.synthetic import simulate
from sciarena.core.errors import LeaderboardInputError

TRUTH = np.linspace(-150, 150, 10)
VERBOSITY = np.array([0.8, -0.6, 0.5, -0.4, 0.0, 0.7, -0.8, 0.3, -0.2, 0.1])


@pytest.fixture(scope="module")
def verbose_votes():
    return simulate(TRUTH, 30_000, seed=21, length_effect=0.4, verbosity=VERBOSITY)


def test_recovers_length_effect_and_removes_it(verbose_votes):
    plain = compute_leaderboard(verbose_votes, bootstrap=0, by=())
    styled = compute_leaderboard(verbose_votes, bootstrap=40, by=(), style=("length",))
    (coef,) = styled.style
    assert coef.feature == "length"
    assert coef.ci_lower < 0.4 < coef.ci_upper or abs(coef.coefficient - 0.4) < 0.03
    assert coef.ci_lower > 0.3  # clearly positive
    centred = dict(zip(verbose_votes.models, 1000.0 + TRUTH - TRUTH.mean()))
    verbosity = dict(zip(verbose_votes.models, VERBOSITY))

    def errors(lb):
        models = [r.model for r in lb.rows]
        err = np.array([r.point - centred[r.model] for r in lb.rows])
        return err, np.array([verbosity[m] for m in models])

    plain_err, v1 = errors(plain)
    styled_err, v2 = errors(styled)
    assert np.corrcoef(plain_err, v1)[0, 1] > 0.9  # uncontrolled ratings reward verbosity
    assert np.sqrt((styled_err ** 2).mean()) < np.sqrt((plain_err ** 2).mean()) / 3
    assert np.abs(styled_err).max() < 25.0
    # what is left is estimation noise: the intervals cover the true ratings
    covered = sum(r.ci_lower <= centred[r.model] <= r.ci_upper for r in styled.rows)
    assert covered >= 8
    uncovered_plain = compute_leaderboard(verbose_votes, bootstrap=40, by=())
    assert sum(r.ci_lower <= centred[r.model] <= r.ci_upper for r in uncovered_plain.rows) <= 5


def test_no_effect_means_gamma_near_zero():
    table = simulate(TRUTH, 20_000, seed=5, verbosity=VERBOSITY)
    result = fit_style(table, ("length", "citations"), bootstrap=30)
    lo, hi = np.percentile(result.boot_gamma, [2.5, 97.5], axis=0)
    assert (lo < 0.05).all() and (hi > -0.05).all()
    assert np.abs(result.gamma).max() < 0.06


def test_point_fit_matches_released_objective_by_direct_minimisation():
    table = simulate(np.linspace(-100, 100, 6), 3000, seed=8, length_effect=0.3,
                     verbosity=np.linspace(-0.5, 0.5, 6))
    features = ("length", "citations")
    z, mask = style_matrix(table, features)
    a, b, o = table.a[mask], table.b[mask], table.outcome[mask]
    y = np.where(o == 0, 1.0, np.where(o == 1, 0.0, 0.5))
    alpha, reg, m = math.log(10.0), 0.5, 6

    def objective(params):  # released code: ratings r with logits α(r_a − r_b) + zγ
        r, g = params[:m], params[m:]
        eta = alpha * (r[a] - r[b]) + z @ g
        value = -(y * log_expit(eta) + (1 - y) * log_expit(-eta)).sum()
        return value + 0.25 * reg * 2 * (params @ params)

    ref = minimize(objective, np.zeros(m + 2), method="BFGS", options={"gtol": 1e-8}).x
    ours = fit_style(table, features, bootstrap=0)
    assert np.allclose(ours.gamma, ref[m:], atol=1e-4)
    assert np.allclose(ours.theta, alpha * ref[:m], atol=1e-4)


def test_style_input_errors():
    table = simulate(TRUTH, 2000, seed=1)
    with pytest.raises(LeaderboardInputError, match="supporting"):
        compute_leaderboard(table, style=("supporting",), bootstrap=0)
    with pytest.raises(LeaderboardInputError, match="unknown style"):
        compute_leaderboard(table, style=("emoji",), bootstrap=0)
    flat = table_from_arrays(["x", "y"], [0, 1, 0], [1, 0, 1], [0, 1, 2],
                             features={"length": np.full((3, 2), 100.0)})
    with pytest.raises(LeaderboardInputError, match="does not vary"):
        compute_leaderboard(flat, style=("length",), bootstrap=0, by=())


def test_votes_without_features_are_left_out_and_reported():
    table = simulate(TRUTH, 5000, seed=2)
    lengths = table.features["length"].copy()
    lengths[:500] = np.nan
    table = table_from_arrays(table.models, table.a, table.b, table.outcome,
                              features={"length": lengths})
    lb = compute_leaderboard(table, style=("length",), bootstrap=5, by=())
    assert lb.style_votes_used == 4500
    assert any("500 vote(s)" in note for note in lb.notes)


# --- the two procedures (docs/leaderboard.md) ----------------------------------------------------------

def test_both_procedures_recover_an_injected_length_effect(verbose_votes):
    for procedure in ("ours", "paper", "paper-sample"):
        lb = compute_leaderboard(verbose_votes, bootstrap=40, by=(), style=("length",),
                                 style_procedure=procedure)
        (coef,) = lb.style
        assert coef.ci_lower < 0.4 < coef.ci_upper, procedure
        assert coef.ci_lower > 0.2, procedure  # clearly positive
        assert lb.style_procedure == procedure
    assert compute_leaderboard(verbose_votes, bootstrap=0, by=(), style=("length",),
                               style_procedure="paper-sample").style_votes_used == 3000


def test_the_paper_procedure_fits_exactly_the_decisive_votes_when_few():
    table = simulate(TRUTH, 2500, seed=8, length_effect=0.3, verbosity=VERBOSITY)
    decisive = table.outcome <= 1
    assert 0 < (~decisive).sum() and decisive.sum() < 3000
    paper = fit_style(table, ("length",), bootstrap=0, procedure="paper-sample")
    direct = fit_style(table.subset(decisive), ("length",), bootstrap=0)
    assert paper.n_used == decisive.sum() and paper.n_undecided == (~decisive).sum() and paper.n_unsampled == 0
    np.testing.assert_allclose(paper.gamma, direct.gamma, rtol=1e-9)
    np.testing.assert_allclose(paper.theta, direct.theta, rtol=1e-9, atol=1e-12)
    ours = fit_style(table, ("length",), bootstrap=0)
    assert ours.n_used == table.n_votes and not np.allclose(ours.gamma, paper.gamma)


def test_the_paper_sample_is_seeded_and_of_decisive_votes(verbose_votes):
    decisive = int((verbose_votes.outcome <= 1).sum())
    one = fit_style(verbose_votes, ("length",), bootstrap=0, procedure="paper-sample", seed=1)
    again = fit_style(verbose_votes, ("length",), bootstrap=5, procedure="paper-sample", seed=1)
    other = fit_style(verbose_votes, ("length",), bootstrap=0, procedure="paper-sample", seed=2)
    assert one.n_used == 3000 and one.n_unsampled == decisive - 3000
    assert one.n_undecided == verbose_votes.n_votes - decisive
    assert one.gamma[0] == again.gamma[0]  # the sample does not depend on the bootstrap rounds
    assert one.gamma[0] != other.gamma[0]


def _some_uncited(table, every=7):
    """The table with one side citing nothing in every ``every``-th vote."""
    counts = table.features["citations"].copy()
    counts[::every, 1] = 0
    return table_from_arrays(table.models, table.a, table.b, table.outcome,
                             features={"length": table.features["length"], "citations": counts})


def test_the_released_procedure_keeps_decisive_votes_in_which_both_answers_cite(verbose_votes):
    # yale-nlp/SciArena scripts/bias_analysis/preference_calculate.py: citation_count_a > 0 and
    # citation_count_b > 0, winner in (model_a, model_b), no sample.
    table = _some_uncited(verbose_votes)
    counts = table.features["citations"]
    kept = (table.outcome <= 1) & (counts > 0).all(axis=1)
    paper = fit_style(table, ("length",), bootstrap=0, procedure="paper")
    direct = fit_style(table.subset(kept), ("length",), bootstrap=0)
    assert paper.n_used == kept.sum() > 3000
    assert paper.n_undecided == (table.outcome > 1).sum()
    assert paper.n_uncited == ((table.outcome <= 1) & ~(counts > 0).all(axis=1)).sum() > 0
    np.testing.assert_allclose(paper.gamma, direct.gamma, rtol=1e-9)
    np.testing.assert_allclose(paper.theta, direct.theta, rtol=1e-9, atol=1e-12)
    sample = fit_style(table, ("length",), bootstrap=0, procedure="paper-sample")
    assert sample.n_used == 3000 and sample.n_uncited == 0


def test_the_released_procedure_fits_each_feature_on_its_own(verbose_votes):
    # The released script fits length alone and citation count alone (supporting and irrelevant
    # together); a joint fit of length and citations gives other coefficients.
    table = _some_uncited(verbose_votes)
    lb = compute_leaderboard(table, bootstrap=0, by=(), style=("length", "citations"), style_procedure="paper")
    joint = fit_style(table, ("length", "citations"), bootstrap=0, procedure="paper")
    alone = {f: fit_style(table, (f,), bootstrap=0, procedure="paper") for f in ("length", "citations")}
    got = {c.feature: c.point for c in lb.style}
    for f, fitted in alone.items():
        assert got[f] == pytest.approx(float(fitted.gamma[0]), rel=1e-12)
    assert not np.allclose([got["length"], got["citations"]], joint.gamma, rtol=1e-6)
    # the ratings are those of the first fit (length), and the output says so
    by_model = {r.model: r.point for r in lb.rows}
    np.testing.assert_allclose([by_model[table.models[i]] for i in alone["length"].models],
                               1000.0 + (alone["length"].theta - alone["length"].theta.mean()) * 400 / math.log(10),
                               atol=1e-6)
    (note,) = [n for n in lb.notes if n.startswith("style procedure")]
    assert "released script" in note and "ratings from the length fit" in note and "2 fits" in note


def test_the_released_groups_pair_supporting_with_irrelevant():
    from sciarena.board.style import paper_groups

    assert paper_groups(("length", "supporting", "citations", "irrelevant")) == (
        ("length",), ("supporting", "irrelevant"), ("citations",))
    assert paper_groups(("irrelevant",)) == (("irrelevant",),)


def test_every_procedure_is_named_in_the_table_footer(verbose_votes, tmp_path, capsys):
    from sciarena.board.synthetic import write_jsonl
    from sciarena.cli.leaderboard import main

    path = tmp_path / "votes.jsonl"
    write_jsonl(verbose_votes, path, stop=4000)
    for procedure, words in (("ours", "half a win"), ("paper", "released script"),
                             ("paper-sample", "appendix C.2")):
        assert main(["--votes", str(path), "--bootstrap", "0", "--by", "none", "--min-battles", "0",
                     "--style", "length", "--style-procedure", procedure]) == 0
        out = capsys.readouterr().out
        assert f"style procedure '{procedure}'" in out and words in out, procedure


def test_dropping_ties_raises_the_length_coefficient(verbose_votes):
    # The simulator draws ties at the Bradley–Terry expected score, so the half-win fit is the
    # consistent one and the decisive-only fit overstates γ (about 1/(1 − tie-and-bad rate)).
    ours = fit_style(verbose_votes, ("length",), bootstrap=0).gamma[0]
    decisive = fit_style(verbose_votes.subset(verbose_votes.outcome <= 1), ("length",), bootstrap=0).gamma[0]
    assert 1.05 < decisive / ours < 1.4


def test_style_procedure_errors_and_the_cli_flag(verbose_votes, tmp_path, capsys):
    with pytest.raises(LeaderboardInputError, match="style procedure"):
        compute_leaderboard(verbose_votes, bootstrap=0, by=(), style=("length",), style_procedure="theirs")
    only_ties = table_from_arrays(["x", "y"], np.array([0, 1, 0]), np.array([1, 0, 1]), np.array([2, 3, 2]),
                                  features={"length": np.array([[10.0, 20.0], [30.0, 5.0], [8.0, 9.0]])})
    for procedure in ("paper", "paper-sample"):
        with pytest.raises(LeaderboardInputError, match="decisive"):
            fit_style(only_ties, ("length",), bootstrap=0, procedure=procedure)
    from sciarena.board.synthetic import write_jsonl
    from sciarena.cli.leaderboard import main

    path = tmp_path / "votes.jsonl"
    write_jsonl(verbose_votes, path, stop=6000)
    assert main(["--votes", str(path), "--format", "json", "--bootstrap", "0", "--by", "none",
                 "--style", "length", "--style-procedure", "paper-sample"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["style"]["procedure"] == "paper-sample" and out["style"]["votes_used"] == 3000
    assert any("tie and both-bad" in note for note in out["notes"])


def test_injected_supporting_and_irrelevant_effects_are_recovered_within_their_intervals():
    # Attribution counts as `label attribution` writes them: voters favour the side with more supporting
    # citations (γ = +0.3) and hold irrelevant ones against it (γ = −0.3), on the features style control uses.
    rng = np.random.default_rng(5)
    n, ratings = 20_000, np.linspace(-100, 100, 8)
    a = rng.integers(0, 8, n)
    b = (a + rng.integers(1, 8, n)) % 8
    supporting = rng.poisson(4.0, (n, 2)).astype(np.float64)
    irrelevant = rng.poisson(1.5, (n, 2)).astype(np.float64)

    def feature(counts: np.ndarray) -> np.ndarray:
        diff = (counts[:, 0] - counts[:, 1]) / (counts.sum(axis=1) + 1.0)
        return (diff - diff.mean()) / diff.std()

    truth = {"supporting": 0.3, "irrelevant": -0.3}
    logit = ((ratings[a] - ratings[b]) * math.log(10.0) / 400.0
             + truth["supporting"] * feature(supporting) + truth["irrelevant"] * feature(irrelevant))
    outcome = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-logit)), 0, 1)
    table = table_from_arrays([f"m{i}" for i in range(8)], a, b, outcome,
                              features={"supporting": supporting, "irrelevant": irrelevant})
    lb = compute_leaderboard(table, bootstrap=100, seed=0, min_battles=0, by=(), style=("supporting", "irrelevant"))
    fitted = {c.feature: c for c in lb.style}
    for name, gamma in truth.items():
        assert fitted[name].ci_lower <= gamma <= fitted[name].ci_upper, (name, fitted[name])
    assert fitted["supporting"].ci_lower > 0 > fitted["irrelevant"].ci_upper  # signs told apart
