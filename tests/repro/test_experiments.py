"""Tests of repro.experiments (Sections 5.2 and 5.3): sensitivities, mechanism scales, vectorised
simulations against naive loops, determinism, the t-test and 'Imp' helpers. Fast (a few seconds)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpdro
from dpdro import data_dependent as dd
from dpdro.noise import PiecewiseUniform
from repro import experiments as ex
from repro.datasets import load_dataset, one_hot


@pytest.fixture(scope="module")
def postop():
    return load_dataset("post-operative")  # 87 rows, 1 numerical + 7 categorical features, 2 classes


@pytest.fixture(scope="module")
def ecoli():
    return load_dataset("ecoli")  # 336 rows, 5 numerical + 2 categorical, 2 classes


class Recorder:
    """A mechanism that adds nothing and records the sensitivity of each call."""

    def __init__(self):
        self.calls = []

    def __call__(self, values, sensitivity, rng):
        values = np.asarray(values, dtype=float)
        self.calls.append((values.shape, np.broadcast_to(np.asarray(sensitivity, float), values.shape).copy()))
        rng.random(values.shape)
        return values + 0.0


# ------------------------------------------------------------------------------------ mechanisms
def test_unit_mechanisms_match_closed_forms():
    mechs = ex.make_mechanisms(1.0, 0.1)
    assert mechs["GN"].unit_noise.sigma == pytest.approx(math.sqrt(2 * math.log(1.25 / 0.1)))
    # the authors hard-code the analytic Gaussian sigma for Δf = 1 at (1, 0.1) in sensitivities.jl
    assert mechs["AG"].unit_noise.sigma == pytest.approx(1.0858777651918035, rel=1e-6)
    assert mechs["TLN"].unit_noise.half_width == pytest.approx(math.log(1 + (math.e - 1) / 0.2))


@pytest.mark.parametrize("name", ["GN", "AG", "TLN", "OPT"])
def test_additive_noise_scales_with_sensitivity(name):
    opt = PiecewiseUniform(np.array([-2.0, -1.0, 0.0, 1.0, 2.0]), np.array([0.1, 0.4, 0.4, 0.1]))
    mech = ex.make_mechanisms(1.0, 0.1, opt_noise=opt)[name]
    vals = np.array([3.0, -1.0, 10.0, 0.5])
    sens = np.array([1.0, 2.0, 0.25, 7.0])
    noisy = mech(vals, sens, np.random.default_rng(5))
    u = np.random.default_rng(5).random(4)
    np.testing.assert_allclose(noisy - vals, sens * mech.unit_noise.ppf(u), rtol=1e-12, atol=1e-12)


def test_tln_samples_stay_in_support_and_have_the_right_scale():
    mech = ex.make_mechanisms(1.0, 0.1)["TLN"]
    x = mech(np.zeros(200_000), 2.0, np.random.default_rng(0))
    A = 2.0 * mech.unit_noise.half_width
    assert np.all(np.abs(x) <= A + 1e-12)
    assert np.mean(np.abs(x)) == pytest.approx(2.0 * mech.unit_noise.expected_loss("l1"), rel=0.01)


# ------------------------------------------------------------------------------------ naive Bayes
def test_sensitivities_paper_and_authors(postop):
    train = np.arange(postop.n)[::2]
    st = ex.nb_statistics(postop, train)
    width = postop.num_bounds[0, 1] - postop.num_bounds[0, 0]
    s_mean, s_sd = ex.nb_sensitivities(postop, st.prior, ex.NBSettings())
    np.testing.assert_allclose(s_mean[0], width / st.prior)
    np.testing.assert_allclose(s_sd[0], width / np.sqrt(st.prior))
    full = np.bincount(postop.y).astype(float)
    a_mean, a_sd = ex.nb_sensitivities(postop, st.prior, ex.NBSettings.authors())
    np.testing.assert_array_equal(a_mean[0], np.ceil(width / full))
    np.testing.assert_array_equal(a_sd[0], np.ceil(width / np.sqrt(full)))


def test_statistics_match_direct_counts(postop):
    rows = np.arange(10, 80)
    st = ex.nb_statistics(postop, rows)
    y = postop.y[rows]
    np.testing.assert_array_equal(st.prior, np.bincount(y, minlength=2))
    for v in range(postop.n_cat):
        for lv in range(len(postop.cat_levels[v])):
            for c in range(2):
                expect = np.sum((postop.X_cat[rows, v] == lv) & (y == c))
                assert st.counts[st.offsets[v] + lv, c] == expect
    for c in range(2):
        np.testing.assert_allclose(st.means[:, c], postop.X_num[rows][y == c].mean(axis=0))
        np.testing.assert_allclose(st.sds[:, c], postop.X_num[rows][y == c].std(axis=0))


def test_each_statistic_gets_its_sensitivity(postop):
    rows = np.arange(postop.n)
    st = ex.nb_statistics(postop, rows)
    rec = Recorder()
    ex.nb_noisy_stats(postop, st, rec, 3, np.random.default_rng(0), ex.NBSettings())
    s_mean, s_sd = ex.nb_sensitivities(postop, st.prior, ex.NBSettings())
    (sh_p, sp), (sh_c, sc), (sh_m, sm), (sh_s, ss) = rec.calls
    assert sh_p == (3, 2) and np.all(sp == 1.0)
    assert sh_c == (3, st.counts.shape[0], 2) and np.all(sc == 1.0)
    assert sh_m == (3, 1, 2) and np.allclose(sm, s_mean[None])
    assert sh_s == (3, 1, 2) and np.allclose(ss, s_sd[None])


def test_noisy_stats_use_the_mechanism_noise(postop):
    """GN noise on counts has the classical Gaussian standard deviation; floors are applied."""
    st = ex.nb_statistics(postop, np.arange(postop.n))
    gn = ex.make_mechanisms(1.0, 0.1)["GN"]
    noisy = ex.nb_noisy_stats(postop, st, gn, 4000, np.random.default_rng(1), ex.NBSettings())
    resid = noisy["counts"] - st.counts[None]
    big = st.counts >= 15  # far from the floor
    assert np.std(resid[:, big]) == pytest.approx(gn.unit_noise.sigma, rel=0.02)
    assert noisy["counts"].min() >= 1e-6 and noisy["prior"].min() >= 1e-6
    width = postop.num_bounds[:, 1] - postop.num_bounds[:, 0]
    assert np.all(noisy["sds"] >= 0.01 * width[None, :, None] - 1e-15)


def _naive_nb_error(ds, rows, prior, counts, means, sds, offsets):
    err = 0
    for i in rows:
        best, arg = -np.inf, 0
        for c in range(ds.n_classes):
            s = math.log(prior[c])
            for v in range(ds.n_cat):
                s += math.log(counts[offsets[v] + ds.X_cat[i, v], c] / prior[c])
            for v in range(ds.n_num):
                m, sd, x = means[v, c], sds[v, c], ds.X_num[i, v]
                s += -math.log(sd) - (x - m) ** 2 / (2 * sd * sd)
            if s > best:
                best, arg = s, c
        err += arg != ds.y[i]
    return err / len(rows)


@pytest.mark.parametrize("name", ["post-operative", "ecoli"])
def test_nb_vectorised_equals_naive_loop(name):
    ds = load_dataset(name)
    rng = np.random.default_rng(3)
    train, test = ex.split_indices(ds.n, rng)
    st = ex.nb_statistics(ds, train)
    tln = ex.make_mechanisms(1.0, 0.1)["TLN"]
    noisy = ex.nb_noisy_stats(ds, st, tln, 4, np.random.default_rng(4), ex.NBSettings())
    vec = ex.nb_errors(ds, test, noisy, max_block_cells=3 * test.size * 2)  # forces two blocks
    naive = [_naive_nb_error(ds, test, noisy["prior"][s], noisy["counts"][s], noisy["means"][s], noisy["sds"][s], st.offsets)
             for s in range(4)]
    np.testing.assert_allclose(vec, naive)


def test_run_naive_bayes_is_deterministic(ecoli):
    mechs = ex.make_mechanisms(1.0, 0.1)
    a = ex.run_naive_bayes(ecoli, mechs, n_splits=2, n_sims=5, seed=7)
    b = ex.run_naive_bayes(ecoli, mechs, n_splits=2, n_sims=5, seed=7)
    c = ex.run_naive_bayes(ecoli, mechs, n_splits=2, n_sims=5, seed=8)
    for side in ("in", "out"):
        for m in a[side]:
            np.testing.assert_array_equal(a[side][m], b[side][m])
    assert any(not np.array_equal(a["out"][m], c["out"][m]) for m in a["out"])


# ------------------------------------------------------------------------------------ coordinate descent
def _naive_pcd(X, y, unit_ppf, S, seed_init, seed_noise, T, K, lam, sens):
    """Scalar loops in the order of the authors' PCD_train, with the same random numbers."""
    n, d = X.shape
    ri, rn = np.random.default_rng(seed_init), np.random.default_rng(seed_noise)
    H0 = (ri.random((S, d)) - 0.5) * 2.0
    orders, noises = [], []
    for _t in range(T):
        orders.append(np.argsort(ri.random((S, d)), axis=1)[:, :K])
        noises.append([rn.random(S) for _k in range(K)])
    out = np.empty((S, d))
    for s in range(S):
        h = H0[s].copy()
        for t in range(T):
            xi = np.zeros((d, K + 1))
            xi[:, 0] = h
            inner = X @ xi[:, 0]
            for k in range(K):
                xi[:, k + 1] = xi[:, k]
                j = orders[t][s, k]
                q = sum((1.0 / (1.0 + math.exp(y[i] * inner[i]))) * (-y[i] * X[i, j]) for i in range(n))
                z = xi[j, k] - (q + sens * float(unit_ppf(noises[t][k][s]))) / n
                xi[j, k + 1] = z - lam if z >= lam else (z + lam if z <= -lam else 0.0)
                inner = inner + (xi[j, k + 1] - xi[j, k]) * X[:, j]
            h = xi[:, 1:].mean(axis=1)
        out[s] = h
    return out


def test_pcd_vectorised_equals_naive_loop(postop):
    design = one_hot(postop)
    X, y = design.X[:40], design.y[:40]
    tln = ex.make_mechanisms(1.0, 0.1)["TLN"]
    settings = ex.PCDSettings(T=3, lam=1e-3)
    H = ex.pcd_train(X, y, tln, 3, np.random.default_rng(11), np.random.default_rng(12), settings, dtype=np.float64)
    K = math.ceil(X.shape[1] / 4)
    ref = _naive_pcd(X, y, lambda u: tln.unit_samples(np.array(u)), 3, 11, 12, 3, K, 1e-3, 2.0)
    np.testing.assert_allclose(H, ref, rtol=1e-10, atol=1e-12)
    H32 = ex.pcd_train(X, y, tln, 3, np.random.default_rng(11), np.random.default_rng(12), settings)  # float32
    np.testing.assert_allclose(H32, ref, rtol=0, atol=1e-6)


def test_pcd_records_queries_within_bounds(ecoli):
    design = one_hot(ecoli)
    assert np.abs(design.X).max() <= 1.0
    H, q = ex.pcd_train(design.X, design.y, ex.NonPrivate(), 2, np.random.default_rng(0), np.random.default_rng(1),
                        ex.PCDSettings(T=5), record_queries=True)
    K = math.ceil(design.X.shape[1] / 4)
    assert q.shape == (5 * K, 2)
    assert np.all(np.abs(q) < ecoli.n)
    err = ex.pcd_errors(H, design.X, design.y)
    assert err.shape == (2,) and np.all((0 <= err) & (err <= 1))


def test_run_pcd_deterministic_and_common_random_numbers(ecoli):
    mechs = ex.make_mechanisms(1.0, 0.1)
    s = ex.PCDSettings(T=4)
    a = ex.run_pcd(ecoli, mechs, n_splits=1, n_sims=3, seed=2, settings=s)
    b = ex.run_pcd(ecoli, mechs, n_splits=1, n_sims=3, seed=2, settings=s)
    assert a["in"]["TLN"][0] == b["in"]["TLN"][0] and a["out"]["PCD"][0] == b["out"]["PCD"][0]


# ------------------------------------------------------------------------------------ helpers
def test_paired_one_sided_ttest_matches_scipy():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0.30, 0.02, 100), rng.normal(0.32, 0.02, 100)
    t, p = ex.paired_one_sided_ttest(a, b)
    ref = stats.ttest_rel(a, b, alternative="less")
    assert t == pytest.approx(ref.statistic) and p == pytest.approx(ref.pvalue)
    assert p < 1e-3
    assert ex.paired_one_sided_ttest(b, a)[1] > 0.99
    assert math.isnan(ex.paired_one_sided_ttest([0.1], [0.2])[1])
    assert ex.paired_one_sided_ttest([0.1, 0.1], [0.2, 0.2]) == (-math.inf, 0.0)


def test_improvement_reproduces_a_paper_row():
    # Table 2, post-operative, in-sample: TLN 32.42%, OPT 31.43%, NB 25.65%, Imp 14.62%
    assert ex.improvement(32.42, 31.43, 25.65) == pytest.approx(14.62, abs=0.01)
    assert math.isnan(ex.improvement(1.0, 1.0, 1.0))


def test_summarize_picks_best_literature():
    res = {side: {"GN": np.array([0.4, 0.5]), "AG": np.array([0.3, 0.32]), "TLN": np.array([0.31, 0.33]),
                  "OPT": np.array([0.29, 0.30]), "NB": np.array([0.2, 0.2])} for side in ("in", "out")}
    s = ex.summarize(res, baseline="NB")
    assert s["in"]["best_literature"] == "AG"
    assert s["in"]["imp"] == pytest.approx(100 * (31.0 - 29.5) / (31.0 - 20.0))


def test_optimized_noise_cache_is_recertified_and_checked(tmp_path):
    import json

    wide = PiecewiseUniform(np.array([-10.0, 0.0, 10.0]), np.array([0.5, 0.5]), grid=1.0)  # delta = 1/20 at shift 1
    path = tmp_path / "opt.json"
    path.write_text(json.dumps({"noise": wide.to_dict(), "info": {"epsilon": 1.0, "delta": 0.1, "sensitivity": 1.0}}))
    noise, info = ex.optimized_unit_noise(1.0, 0.1, cache=path)
    assert info["certified_delta"] == pytest.approx(0.05, abs=1e-9)
    with pytest.raises(ValueError, match="cache"):
        ex.optimized_unit_noise(1.0, 0.2, cache=path)
    narrow = PiecewiseUniform(np.array([-1.0, 0.0, 1.0]), np.array([0.5, 0.5]), grid=1.0)  # delta = 1/2 at shift 1
    path.write_text(json.dumps({"noise": narrow.to_dict(), "info": {"epsilon": 1.0, "delta": 0.1, "sensitivity": 1.0}}))
    with pytest.raises(ValueError, match="only"):
        ex.optimized_unit_noise(1.0, 0.1, cache=path)


def test_stored_results_picks_the_largest_run(tmp_path):
    import json

    for k, s in [(2, 5), (10, 20), (4, 10)]:
        (tmp_path / f"table3_paper_{k}x{s}.json").write_text(json.dumps({"datasets": {"ecoli": {}} if k != 10 else {}}))
    assert ex.stored_results(3, directory=tmp_path)["file"] == "table3_paper_10x20.json"
    assert ex.stored_results(3, directory=tmp_path, dataset="ecoli")["file"] == "table3_paper_4x10.json"
    assert ex.stored_results(3, directory=tmp_path, splits=2, sims=5)["sims"] == 5
    assert ex.stored_results(2, directory=tmp_path) is None


# ------------------------------------------------------------------------------- data-dependent (OPT)
@pytest.fixture()
def dd_cache(tmp_path):
    """A private copy of the committed cache (missing entries are solved into the copy, never the repo)."""
    src = ex.DD_CACHE
    dst = tmp_path / "dd.json"
    if src.is_file():
        dst.write_text(src.read_text())
    return dst


def test_nb_dd_embed_rounds_ranges_up():
    fam = ex.NBDDFamily(cache=None, solve=False)
    lo, key = fam.embed(np.array([0.0, 1.0, 0.0, 0.0, -3.0]), np.array([0.3, 3.0, 4.9, 5.15, 400.0]),
                        np.array([1.0, 1.0, 1.0, 1.0, 2.0]))
    np.testing.assert_allclose(lo, [0.0, 1.0, 0.0, 0.0, -3.0])
    np.testing.assert_allclose(key, [0.5, 2.5, 5.0, 5.2, 201.5])  # (hi - lo)/s rounded up (to 0.5, or 0.1 from 5.1)
    e = ex.nb_dd_edges(201.5)
    np.testing.assert_allclose(e, [0, 0.5, 1, 2, 199.5, 200.5, 201.0, 201.5])
    assert ex.nb_dd_edges(1.0).size == 8 and ex.nb_dd_edges(0.5).size == 6  # 7 pieces, or R/β if fewer


def test_dd_mechanism_vectorised_matches_piecewise_loop(dd_cache):
    mech = ex.make_data_dependent(2, cache=dd_cache)
    rng = np.random.default_rng(3)
    lo = np.array([0.0, 0.0, -1.0, 0.0, 0.0, 2.0])
    hi = np.array([3.0, 80.0, 1.0, 0.4, 80.0, 2.5])
    s = np.array([1.0, 1.0, 0.5, 0.3, 1.0, 0.1])
    vals = lo + rng.random((50, 6)) * (hi - lo)
    vals[0] = lo
    vals[1] = hi  # the range ends are included
    noisy = mech(vals, s, np.random.default_rng(9), phi_lo=lo, phi_hi=hi)
    u = np.clip(np.random.default_rng(9).random(vals.shape), 1e-16, 1 - 1e-16)
    lo2, key = mech.family.embed(lo, hi, s)
    for i in range(vals.shape[0]):
        for j in range(6):
            m = mech.family.mechanism(key[j])
            t = min((vals[i, j] - lo2[j]) / s[j], np.nextafter(m.piece_edges[-1], 0))
            x = float(m.noise_for(t).ppf(u[i, j]))
            assert noisy[i, j] == pytest.approx(vals[i, j] + s[j] * x, abs=1e-12)
    with pytest.raises(ValueError, match="outside its range"):
        mech(np.array([4.0]), 1.0, rng, phi_lo=0.0, phi_hi=3.0)


def test_dd_wide_ranges_reuse_one_certified_solve(dd_cache):
    fam = ex.NBDDFamily(cache=dd_cache)
    base = fam.mechanism(ex.NB_DD_WIDE)
    wide = fam.mechanism(45001.0)
    assert wide.certify() <= 0.1 and base.certify() <= 0.1
    assert all(a is b for a, b in zip(wide.noises, base.noises)) and wide.piece_edges[-1] == 45001.0
    # at the lower end of Φ the data-dependent noise beats the data-independent optimum (E|X| ≈ 0.69)
    assert base.noises[0].expected_loss("l1") < 0.6 and wide.noises[3].expected_loss("l1") < 0.71
    assert list(fam.solved) == ["nb_l1_eps=1_delta=0.1_R=5.2"]


def test_pcd_dd_pieces_follow_the_sign_of_the_query(dd_cache):
    fam = ex.PCDDDFamily(cache=dd_cache, design="seven")
    lo, key = fam.embed(-100.0, 100.0, 2.0)
    assert lo == -101.0 and key == 101.0  # Φ = [-100, 100] ⊂ [-101, 101)
    unit = fam.mechanism(key)
    assert unit.certify() <= 0.1 and unit.sensitivity == 1.0
    q = fam.query_mechanism()
    assert q.sensitivity == 2.0 and q.certify() <= 0.1
    np.testing.assert_allclose((unit.piece_edges * 2.0) + lo, ex.pcd_dd_edges(101.0, "seven"))
    np.testing.assert_allclose(unit.noises[3].edges * 2.0, q.noises[3].edges)
    t = (np.array([-50.0, -2.0, -0.5, 0.0, 0.5, 2.0, 50.0]) - lo) / 2.0
    assert unit.piece(t).tolist() == [0, 1, 2, 3, 4, 5, 6]


def test_pcd_dd_appendix_partition():
    e = ex.pcd_dd_edges(432.0)  # the GitHub appendix's cylinder-bands partition
    assert e.size == 43 and e[0] == -432.0 and e[1] == -10.0 and e[-2] == 10.0 and np.allclose(np.diff(e[1:-1]), 0.5)
    fam = ex.PCDDDFamily(cache=None, solve=False)
    assert fam.design == "appendix42"
    lo, key = fam.embed(-5.0, 5.0, 2.0)  # narrow ranges are embedded in the solved Φ = [-16, 16)
    assert lo == -16.0 and key == 16.0
    with pytest.raises(ValueError, match="design"):
        ex.PCDDDFamily(design="nine")



def test_pcd_dd_appendix_family_from_cache(dd_cache):
    fam = ex.PCDDDFamily(cache=dd_cache)
    lo, key = fam.embed(-432.0, 432.0, 2.0)
    unit = fam.mechanism(key)
    assert unit.n_pieces == 42 and unit.certify() <= 0.1
    q = fam.query_mechanism()
    # pieces of negative queries push the noise down, of positive queries up (away from a sign flip)
    assert q.noises[0].mean < -0.3 < 0.3 < q.noises[-1].mean
    t = (np.array([-100.0, -0.25, 0.25, 100.0]) - lo) / 2.0
    assert unit.piece(t).tolist() == [0, 20, 21, 41]


def test_pcd_dd_solves_pass_the_design_choice_of_a_complete_solve(tmp_path, monkeypatch):
    """A coordinate-descent family missing from the cache is solved by dd.upper_bound with its
    design's ``complete`` (interior point for the 42-piece "appendix42", rounds for "seven")."""
    seen = []

    class Stop(Exception):
        pass

    def fake_upper_bound(problem, partition, *, complete=False):
        seen.append((len(problem.piece_spec) - 1, complete))
        raise Stop

    monkeypatch.setattr(dd, "upper_bound", fake_upper_bound)
    for design, pieces, complete in (("appendix42", 42, True), ("seven", 7, False)):
        with pytest.raises(Stop):
            ex.PCDDDFamily(design=design, cache=tmp_path / "dd.json").query_mechanism()
        assert seen[-1] == (pieces, complete)


def test_dd_cache_is_recertified_on_load(dd_cache):
    import json

    key, build = "nb_l1_eps=1_delta=0.1_R=0.5", (lambda: ex.NBDDFamily().build_problem(0.5))
    mech, info = ex.solve_dd_cached(key, build, cache=dd_cache)
    assert info["recertified_delta"] <= 0.1 and mech.certify() <= 0.1
    data = json.loads(dd_cache.read_text())
    for nz in data[key]["mechanism"]["noises"]:  # tamper: every piece's noise a single cell at 0 (not private)
        p = np.zeros(len(nz["probs"]))
        p[len(p) // 2] = 1.0
        nz["probs"] = p.tolist()
    dd_cache.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="DP, above"):
        ex.solve_dd_cached(key, build, cache=dd_cache, solve=False)


def test_dd_column_independent_of_other_mechanisms(postop, dd_cache):
    dd = ex.make_data_dependent(2, cache=dd_cache)
    mechs = ex.make_mechanisms(1.0, 0.1, opt_noise=PiecewiseUniform(np.array([-2.0, -1.0, 0.0, 1.0, 2.0]),
                                                                    np.array([0.1, 0.4, 0.4, 0.1])))
    both = ex.run_naive_bayes(postop, {**mechs, "(OPT)": dd}, n_splits=2, n_sims=5, seed=1)
    alone = ex.run_naive_bayes(postop, {"(OPT)": dd}, n_splits=2, n_sims=5, seed=1, baseline=False)
    assert set(alone["in"]) == {"(OPT)"}
    for side in ("in", "out"):
        np.testing.assert_array_equal(both[side]["(OPT)"], alone[side]["(OPT)"])
    row = ex.summarize(both, baseline="NB")["in"]
    assert {"imp_dd", "t_dd", "p_dd"} <= set(row)


def test_coordinate_descent_loss():
    c = ex.coordinate_descent_loss(+1)
    assert c(np.array([-2.0, -1.0, 0.0, 0.5, 3.0])).tolist() == [1001.0, 1.0, 0.0, 0.5, 3.0]
    c = ex.coordinate_descent_loss(-1)
    assert c(np.array([-3.0, 2.0])).tolist() == [3.0, 1001.0]
    c = ex.coordinate_descent_loss(0)
    assert c(np.array([-2.0, 2.0])).tolist() == [1001.0, 1001.0]
    losses = ex.coordinate_descent_losses([-4.0, -2.0, 0.0, 2.0, 4.0])
    assert [float(x(np.array(-3.0))) for x in losses] == [3.0, 3.0, 2001.0, 2001.0]
    part = dpdro.Partition.uniform(L=8, beta=1.0)
    for lo, hi in ((2.0, 6.0), (-6.0, -2.0)):
        edges = [lo, 0.5 * (lo + hi), hi]
        losses = ex.coordinate_descent_losses(edges)
        prob = dd.Problem(epsilon=1.0, delta=0.1, sensitivity=2.0, phi_lo=lo, phi_hi=hi, pieces=edges,
                                    loss=losses)
        ub = dd.upper_bound(prob, part)
        assert ub.mechanism.certify() <= 0.1
        assert ub.piece_losses.tolist() == [n.expected_loss(c) for n, c in zip(ub.noises, losses)]
        # the noise avoids the steep side opposite to the query's sign
        assert all(np.sign(n.mean) == np.sign(lo) and abs(n.mean) > 1.0 for n in ub.noises)
        assert dd.lower_bound(prob, part).value <= ub.value


def test_ml_comparison_html_colours_the_deviation():
    paper = {"a": {"in": {"GN": 10.0, "NB": 5.0, "(OPT)": 8.0, "Imp": 20.0}},
             "b": {"in": {"GN": 1.0, "NB": 1.0, "(OPT)": 1.0, "Imp": 1.0}}}
    stored = {"a": {"summary": {"in": {"errors": {"GN": 10.4, "NB": 6.5, "(OPT)": 20.0}, "imp": 21.0,
                                       "p": 0.01, "best_literature": "GN"}},
                    "per_split": {"in": {"GN": [0.10, 0.11], "NB": [0.06, 0.07]}}}}
    html = ex.ml_comparison_html("in", ["a", "b"], ["GN", "NB"], paper, stored, {"a": (100, 1000)},
                                 caption="Table 9 <in>")
    assert "<caption>Table 9 &lt;in&gt;</caption>" in html and "100×1000" in html
    assert '<td class="mlcmp-ok" title="ours − paper: +0.40">10.40</td>' in html  # within 0.5
    assert '<td class="mlcmp-near" title="ours − paper: +1.50">6.50</td>' in html  # within 4 × 0.5
    assert '<td class="mlcmp-far" title="ours − paper: +12.00">20.00</td>' in html
    assert '<td class="mlcmp-ok" title="ours − paper: +1.0">21.0</td>' in html  # Imp: within 5
    assert html.count("not offline") == 1 and "1.0e-02" in html


def test_ml_comparison_html_labels_missing_datasets_and_drops_the_sign_of_zero():
    paper = {"a": {"in": {"GN": 10.0, "NB": 5.0, "(OPT)": 8.0, "Imp": 20.0}},
             "b": {"in": {"GN": 1.0, "NB": 1.0, "(OPT)": 1.0, "Imp": -0.001}}}
    stored = {"a": {"summary": {"in": {"errors": {"GN": 10.0, "NB": 5.0, "(OPT)": 8.0},
                                       "imp": -0.04, "p": 0.5, "best_literature": "GN"}}}}
    html = ex.ml_comparison_html("in", ["a", "b"], ["GN", "NB"], paper, stored,
                                 {"a": (4, 40)}, unavailable="not included")
    assert html.count("not included") == 1 and "not offline" not in html
    # an Imp of -0.04 (ours, one decimal) or -0.001 (paper, two decimals as the paper prints
    # them) is shown as 0.0 / 0.00, not -0.0 / -0.00
    assert 'title="ours − paper: -20.0">0.0</td>' in html
    assert "-0.0" not in html.replace("-20.0", "") and html.count("<td>0.00</td>") == 1
