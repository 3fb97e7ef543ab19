r"""Machine-learning experiments of Sections 5.2 and 5.3: DP naïve Bayes and DP proximal
coordinate descent (Tables 2 and 3).

Selvi, Liu and Wiesemann compare their optimised noise with the Gaussian, analytic Gaussian and
truncated Laplace mechanisms inside two learning algorithms, on UCI datasets:

* **naïve Bayes** (Section 5.2, Table 2, :mod:`.naive_bayes`): the class counts, the
  class-conditional level counts (sensitivity 1) and the class-conditional means and standard
  deviations of the numerical features are perturbed one by one, and the perturbed statistics
  classify (post-processing);
* **proximal coordinate descent** (Section 5.3, Table 3, :mod:`.pcd`, kernels in
  :mod:`.pcd_kernels`) for ℓ1-regularised logistic regression: every coordinate update perturbs
  the gradient sum Σ_i σ(−y_i h^⊤x_i)(−y_i x_il) ∈ (−n, n), sensitivity 2.

Every perturbed statistic gets (ε, δ) = (1, 0.1) on its own, as in the paper (and the authors'
code): the classifier as a whole is *not* (1, 0.1)-DP. The paper does not account for
composition across statistics or coordinate updates, and neither do we (this package reproduces
the experiment).

The modules, by role:

* :mod:`.mechanisms`: the mechanisms as pluggable samplers ``mech(values, sensitivity, rng)``
  (GN, AG, TLN, the data-independent OPT, no noise) and their pre-drawn noise tables;
* :mod:`.data_dependent`: the data-dependent "(OPT)" of both tables, its design and its cache;
* :mod:`.naive_bayes` and :mod:`.pcd`: the two experiments;
* :mod:`.stats`: splits and seeds, Imp, the paired t-test and confidence intervals, table rows;
* :mod:`.reports`: stored results, the paper's values, ledger rows and the HTML tables.

Common random numbers: all mechanisms of one simulation draw their uniforms from identically
seeded generators (and the coordinate descent shares its initial points and coordinate orders), so
paired differences between mechanisms have little simulation noise. Simulations are vectorised: a
block of simulations is one array operation or one compiled kernel call.

Every public name of the modules is importable from here (``from repro import experiments as ex``).
"""

from .data_dependent import (
    DD_CACHE,
    NB_DD_WIDE,
    DataDependentNoise,
    DDFamily,
    NBDDFamily,
    PCDDDFamily,
    PieceQuantiles,
    coordinate_descent_loss,
    coordinate_descent_losses,
    dilate_noise,
    equal_mass_weight,
    make_data_dependent,
    nb_dd_edges,
    pcd_dd_edges,
    solve_dd_cached,
)
from .mechanisms import (
    AdditiveNoise,
    NoiseMechanism,
    NoiseTable,
    NonPrivate,
    call_mechanism,
    make_mechanisms,
    optimized_unit_noise,
)
from .naive_bayes import (
    NBSettings,
    NBStats,
    nb_errors,
    nb_noisy_stats,
    nb_sensitivities,
    nb_statistics,
    run_naive_bayes,
)
from .pcd import (
    PCD_BACKENDS,
    PCDSettings,
    pcd_backend,
    pcd_device,
    pcd_errors,
    pcd_step_array,
    pcd_train,
    run_pcd,
)
from .reports import (
    ML_TOLERANCE,
    RESULTS_DIR,
    imp_meaningful,
    ml_comparison_html,
    ml_comparison_text,
    ml_ledger_rows,
    ml_tolerance,
    paper_tables,
    stored_results,
)
from .stats import (
    MECHANISM_ORDER,
    dp_ranking,
    improvement,
    paired_difference_ci,
    paired_one_sided_ttest,
    split_indices,
    split_seeds,
    summarize,
)

__all__ = [
    "AdditiveNoise",
    "DD_CACHE",
    "DDFamily",
    "DataDependentNoise",
    "MECHANISM_ORDER",
    "ML_TOLERANCE",
    "ml_tolerance",
    "NBDDFamily",
    "NBSettings",
    "NBStats",
    "NB_DD_WIDE",
    "NoiseMechanism",
    "NoiseTable",
    "NonPrivate",
    "PCDDDFamily",
    "PCDSettings",
    "PCD_BACKENDS",
    "PieceQuantiles",
    "RESULTS_DIR",
    "call_mechanism",
    "coordinate_descent_loss",
    "coordinate_descent_losses",
    "dilate_noise",
    "dp_ranking",
    "equal_mass_weight",
    "imp_meaningful",
    "improvement",
    "make_data_dependent",
    "make_mechanisms",
    "ml_comparison_html",
    "ml_comparison_text",
    "ml_ledger_rows",
    "nb_dd_edges",
    "nb_errors",
    "nb_noisy_stats",
    "nb_sensitivities",
    "nb_statistics",
    "optimized_unit_noise",
    "paired_difference_ci",
    "paired_one_sided_ttest",
    "paper_tables",
    "pcd_backend",
    "pcd_device",
    "pcd_dd_edges",
    "pcd_errors",
    "pcd_step_array",
    "pcd_train",
    "run_naive_bayes",
    "run_pcd",
    "solve_dd_cached",
    "split_indices",
    "split_seeds",
    "stored_results",
    "summarize",
]
