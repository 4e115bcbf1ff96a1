"""The lengthgen files each workflow script runs, and what figure and report jobs must not import."""

import subprocess
import sys

import pytest

from conftest import REPO
from lengthgen.pipeline.sources import lengthgen_files, runs_something

SCRIPTS = REPO / "workflow" / "scripts"
# Jobs that run no model: they must start without torch (seconds of import per job).
NO_MODEL_SCRIPTS = ["plot.py", "write_report.py", "combine_tables.py", "combine_claims.py",
                    "judge_claims.py", "plot_claims.py"]
# Experiments that read no model: their analysis jobs, and every figure job, start without torch.
NO_MODEL_EXPERIMENTS = ["generalization", "variants", "multiseed"]
PLOTS = sorted(path.parent.name for path in (REPO / "lengthgen" / "experiments").glob("*/figures.py"))


def modules(script: str) -> list[str]:
    files = lengthgen_files(REPO, SCRIPTS / script)
    return [".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__") for path in files
            if path.suffix == ".py"]


def test_a_script_runs_the_modules_it_imports_and_theirs():
    train = modules("train.py")
    assert {"lengthgen.training.loop", "lengthgen.models.head", "lengthgen.models.encodings", "lengthgen.runtime.seeding"} <= set(train)
    assert not any(name.startswith("lengthgen.plots") or name.startswith("lengthgen.experiments") for name in train)


def assert_torch_free(module_names: list[str], also: tuple[str, ...] = ()) -> None:
    """Importing ``module_names`` loads no torch, nor any of ``also``."""
    imports = "; ".join(f"import {name}" for name in module_names)
    check = (f"{imports}; import sys; loaded = [name for name in ('torch', *{also!r}) if name in sys.modules]; "
             "assert not loaded, f'{loaded} imported'")
    result = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("module", ["lengthgen.experiments.catalog", "lengthgen.studies.drift"])
def test_the_workflow_plan_and_the_drift_command_do_not_import_torch(module):
    assert_torch_free([module])


def test_package_docstrings_are_not_inputs_but_a_package_imported_by_name_is():
    plot = modules("plot.py")
    assert "lengthgen.plots" in plot
    assert "lengthgen" not in plot and "lengthgen.experiments" not in modules("analyze.py")
    # A package that defines a name runs with every import of its submodules (robustness.tables here); one that is a
    # docstring and dunder names runs nothing, and a module of constants runs something (its values decide checks).
    assert runs_something(REPO / "lengthgen" / "studies" / "robustness" / "__init__.py")
    assert not runs_something(REPO / "lengthgen" / "__init__.py")
    assert not runs_something(REPO / "lengthgen" / "experiments" / "__init__.py")
    assert runs_something(REPO / "lengthgen" / "experiments" / "prop1" / "thresholds.py")
    assert "lengthgen.studies.robustness" in modules("robustness.py")


@pytest.mark.heavy
@pytest.mark.parametrize("experiment", NO_MODEL_EXPERIMENTS)
def test_experiments_that_read_no_model_do_not_import_torch(experiment):
    assert_torch_free(["lengthgen.experiments.runner", f"lengthgen.experiments.{experiment}.analysis"])


@pytest.mark.heavy
@pytest.mark.parametrize("plot", PLOTS)
def test_figure_jobs_do_not_import_torch(plot):
    """A figure job draws the figures and writes the section text (workflow/scripts/plot.py), from tables alone:
    no torch, and no scipy (0.4 CPU-s) either."""
    assert_torch_free(["lengthgen.plots", "lengthgen.experiments.sections", f"lengthgen.experiments.{plot}.figures",
                       f"lengthgen.experiments.{plot}.section"], also=("scipy",))


@pytest.mark.heavy
@pytest.mark.parametrize("script", NO_MODEL_SCRIPTS)
def test_jobs_that_run_no_model_do_not_import_torch(script):
    assert_torch_free(modules(script))


@pytest.mark.parametrize("script", ["make_eval_set.py", "train.py", "evaluate.py",
                                    "evaluate_transformer.py"])
def test_models_do_not_depend_on_the_claim_rules(script):
    """A rule is changed far more often than a model; editing one must rerun analyses, not training. So is
    the report of the range fits (its table, its reasons, the filter for past-range claims)."""
    sources = lengthgen_files(REPO, SCRIPTS / script)
    assert REPO / "lengthgen" / "checks" / "shared_rules.py" not in sources
    assert REPO / "lengthgen" / "report" / "training.py" not in sources
