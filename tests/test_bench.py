"""bench/: a run's costs read from its records, the floor under them, and the speed ratios' arithmetic (made-up
numbers: nothing here times anything)."""

import importlib
import importlib.util
import json
import os
import sys
from pathlib import Path
from unittest import mock

import pytest

from lengthgen.runtime import job as jobs

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():
    """bench/benchmark.py as a module (bench/ is scripts, not a package). Its import chooses the native CPU kernels
    for the process, as a benchmark run should; here that choice is undone after it, or every later test of this
    session would run MKL's native paths, not the portable ones the tests run (conftest.py). The allocator settings
    are given, so that the import does not start the process again with them (``run_as_jobs_run``)."""
    spec = importlib.util.spec_from_file_location("bench_benchmark", REPO / "bench" / "benchmark.py")
    module = importlib.util.module_from_spec(spec)
    with (mock.patch.dict(os.environ, jobs.KEEP_FREED_MEMORY_ENV), mock.patch.dict(jobs._CHOSEN),
          # bench/ on the path as running bench/benchmark.py puts it, for its reference_head
          mock.patch.object(sys, "path", [str(REPO / "bench"), *sys.path])):
        spec.loader.exec_module(module)
    return module


def bench_script(name: str):
    """A module of bench/ (scripts beside each other, not a package), imported as running a bench script finds it."""
    with mock.patch.object(sys, "path", [str(REPO / "bench"), *sys.path]):
        return importlib.import_module(name)


@pytest.fixture(scope="module")
def records():
    return bench_script("run_records")


@pytest.fixture(scope="module")
def ratios():
    return bench_script("speed_ratios")


@pytest.fixture(scope="module")
def workflow_speed():
    return bench_script("workflow_speed")


def test_importing_bench_leaves_the_test_sessions_cpu_kernels(bench):
    assert {name: os.environ.get(name) for name in jobs.PORTABLE_CPU_ENV} == jobs.PORTABLE_CPU_ENV
    assert "cpu_kernels" not in jobs._CHOSEN


def write_log(path: Path, cost: str | None) -> None:
    """A job's log, ending with its cost line (lengthgen/runtime/job.py: record_cost) unless ``cost`` is None."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("2026-12-05 08:00:00,000 root started\n" + (f"cost: {cost}\n" if cost else ""))


def test_stage_table_sums_every_job_of_a_rule_whatever_its_depth(records, tmp_path):
    logs = tmp_path / "logs"
    write_log(logs / "train_sweep/pe~rope/offset~1.log", "wall_s=10.00 cpu_s=8.00 max_rss_mb=300.5")
    write_log(logs / "train_sweep/pe~learned/offset~1.log", "wall_s=12.50 cpu_s=9.50 max_rss_mb=310.0")
    write_log(logs / "analyze_shift/K1.log", "wall_s=4.00 cpu_s=3.00 max_rss_mb=200.0")
    write_log(logs / "report.log", "wall_s=2.00 cpu_s=1.50 max_rss_mb=90.0")
    write_log(logs / "plot_shift/K1.log", None)  # a job killed before its end wrote no cost

    table = records.stage_table(logs)

    assert list(table.index) == ["train_sweep", "analyze_shift", "report"]  # largest CPU first
    assert table.loc["train_sweep"].to_dict() == {"jobs": 2, "wall s": 22.5, "CPU s": 17.5, "max RSS MB": 310.0}
    assert table.loc["analyze_shift", "jobs"] == 1
    assert table.loc["report", "CPU s"] == 1.5


def test_a_rerun_jobs_latest_cost_counts(records, tmp_path):
    log = tmp_path / "logs" / "report.log"
    write_log(log, "wall_s=2.00 cpu_s=1.50 max_rss_mb=90.0")
    log.write_text(log.read_text() + "cost: wall_s=3.00 cpu_s=2.50 max_rss_mb=95.0\n")
    assert records.stage_table(tmp_path / "logs").loc["report", "CPU s"] == 2.5


def test_stage_table_of_a_run_without_logs_is_empty(records, tmp_path):
    table = records.stage_table(tmp_path / "logs")
    assert table.empty
    assert list(table.columns) == ["jobs", "wall s", "CPU s", "max RSS MB"]


def test_the_runs_in_folders_of_their_own_are_split_from_the_main_run(records, tmp_path):
    write_log(tmp_path / "logs/report.log", "wall_s=1.00 cpu_s=1.00 max_rss_mb=1.0")
    for run in ("confirm/small_vocab", "confirm/fresh_seeds", "robustness/lr_0_03"):
        write_log(tmp_path / run / "logs/report.log", "wall_s=1.00 cpu_s=2.00 max_rss_mb=1.0")
    (tmp_path / "confirm/no_logs_yet").mkdir()
    runs = records.run_stages(tmp_path)
    assert list(runs) == ["main", "confirm/fresh_seeds", "confirm/small_vocab", "robustness/lr_0_03"]
    assert runs["main"].loc["report", "CPU s"] == 1.0 and runs["robustness/lr_0_03"].loc["report", "CPU s"] == 2.0



def test_job_costs_tell_the_jobs_that_started_torch(records, tmp_path):
    from lengthgen.runtime.device import TORCH_STARTED

    logs = tmp_path / "logs"
    write_log(logs / "evaluate/pe~rope/offset~1.log", "wall_s=3.00 cpu_s=2.50 max_rss_mb=300.0")
    log = logs / "evaluate/pe~rope/offset~1.log"
    log.write_text(f"2026-12-06 04:00:00,000 lengthgen.runtime.device {TORCH_STARTED} AVX512, MKL_CBWR=AUTO, 1 thread(s)\n"
                   + log.read_text())
    write_log(logs / "report.log", "wall_s=1.00 cpu_s=0.50 max_rss_mb=90.0")
    costs = records.job_costs(logs).set_index("stage")
    assert costs["torch"].to_dict() == {"evaluate": True, "report": False}
    assert costs.loc["evaluate", "cpu_s"] == 2.5


def test_run_floor_keeps_training_and_charges_the_other_jobs_their_imports(records):
    import pandas as pd

    costs = pd.DataFrame([
        {"log": "train_sweep/a.log", "stage": "train_sweep", "cpu_s": 100.0, "torch": True},
        {"log": "train_variants/b.log", "stage": "train_variants", "cpu_s": 50.0, "torch": True},
        {"log": "training_summary.log", "stage": "training_summary", "cpu_s": 0.8, "torch": False},  # not training
        {"log": "evaluate/c.log", "stage": "evaluate", "cpu_s": 3.0, "torch": True},
        {"log": "evaluate/d.log", "stage": "evaluate", "cpu_s": 1.2, "torch": True},  # under its imports: its own CPU
        {"log": "analyze_prop1.log", "stage": "analyze_prop1", "cpu_s": 30.0, "torch": True},
        {"log": "plot_shift.log", "stage": "plot_shift", "cpu_s": 2.0, "torch": False},  # no record: nothing
    ])
    start = {"train_sweep/a.log": 9.0, "training_summary.log": 0.5, "evaluate/c.log": 1.5, "evaluate/d.log": 1.5,
             "analyze_prop1.log": 2.0}
    floor = records.run_floor(costs, start, cores=2)
    assert floor.training_cpu == 150.0  # as run, whatever its imports cost
    assert (floor.other_jobs, floor.other_torch_jobs) == (5, 3)
    assert floor.other_cpu == pytest.approx(37.0)
    assert floor.other_floor_cpu == pytest.approx(0.5 + 1.5 + 1.2 + 2.0)
    assert floor.wall_s == pytest.approx((150.0 + 5.2) / 2)


def write_record(workdir: Path, output: str, record: dict) -> None:
    """Snakemake's record of one output file (.snakemake/metadata/<base64 of its path>), with the fields read here."""
    import base64

    folder = workdir / ".snakemake" / "metadata"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / base64.b64encode(output.encode()).decode()).write_text(json.dumps(record))


def test_a_jobs_imports_and_the_dags_shape_come_from_snakemakes_records(records, tmp_path):
    train = {"rule": "train_sweep", "job_hash": 1, "input": ["a", "b", "c"], "log": ["results/logs/train.log"],
             "params": ["'lengthgen/models/head.py@0123456789abcdef'", "'lengthgen/plots/__init__.py@00ff'",
                        "'docs/rule_history.yaml@0a'", "'rope'", "{'steps': 10}"]}
    report = {"rule": "report", "job_hash": 2, "input": ["d"], "log": ["results/logs/report.log"], "params": ["'x'"]}
    for output in ("model_0.pt", "model_1.pt", "model_2.pt"):
        write_record(tmp_path, output, train)
    write_record(tmp_path, "RESULTS.md", report)

    imports = records.job_imports(tmp_path)
    assert imports == {str((tmp_path / "results/logs/train.log").resolve()): ("lengthgen.models.head", "lengthgen.plots"),
                       str((tmp_path / "results/logs/report.log").resolve()): ()}
    # 2 jobs, 4 outputs; per job 2 outputs, (3 + 1) / 2 inputs, (5 + 1) / 2 params
    assert records.dag_shape(tmp_path) == {"jobs": 2, "outputs": 2, "inputs": 2, "params": 3}


def test_a_folder_without_records_is_named_in_the_error(records, tmp_path):
    with pytest.raises(FileNotFoundError, match="no records of finished jobs"):
        records.job_imports(tmp_path)


def test_a_ratio_says_met_or_missed_and_by_how_much(ratios):
    missed = ratios.Ratio("dry run", 3.0, 1.5, "made up")
    met = ratios.Ratio("fixed cost", 0.9, 1.2, "made up")
    share = ratios.Ratio("after training", 0.34, 0.20, "made up", share=True)
    no_goal = ratios.Ratio("training, fire head", 1.4, None, "made up", no_goal="see training")
    assert (missed.verdict(), missed.goal_text(), missed.shown(missed.value)) == ("missed by 2.00x", "<= 1.50x", "3.00x")
    assert met.verdict() == "met (0.75 of the goal)"
    assert (share.verdict(), share.goal_text(), share.shown(share.value)) == ("missed by 1.70x", "<= 20%", "34%")
    assert (no_goal.verdict(), no_goal.goal_text()) == ("", "see training")
    table = ratios.ratio_table([missed, share]).splitlines()
    assert table[2] == "| dry run | 3.00x | <= 1.50x | missed by 2.00x | made up |" and len(table) == 4


def test_a_paired_ratio_is_the_median_of_the_pairs_ratios(ratios):
    # pairs' ratios 2, 1.5 and 5: median 2 (the medians' ratio, 3 / 2, would mix timings of different loads)
    assert ratios.paired_ratio([2.0, 3.0, 10.0], [1.0, 2.0, 2.0]) == 2.0
    with pytest.raises(ValueError, match="2 costs against 3 yardsticks"):
        ratios.paired_ratio([1.0, 2.0], [1.0, 1.0, 1.0])


def test_a_missed_training_ratio_names_the_ops_that_take_most_of_its_step(bench, monkeypatch):
    made_up = {"aten::bmm": (12.0, 300.0), "aten::random_": (10.0, 500.0), "aten::view": (40.0, 20.0),
               "aten::mul": (4.0, 180.0)}
    monkeypatch.setattr(bench, "HOLDING_OPS", 3)
    monkeypatch.setattr(bench, "step_op_times", lambda family: made_up)
    family = bench.model_families(10, 1)[0]
    missed = bench.Ratio("training, rope head", 0.6, 0.5, "made up")
    lines = bench.holding_lines([(family, missed)])
    assert lines[-1] == ("- training, rope head: missed by 1.20x; 66 op calls a step; `aten::random_` 50%, "
                         "`aten::bmm` 30%, `aten::mul` 18% of its 1.00 ms of op self time")
    assert bench.holding_lines([]) == []


def test_the_share_after_training_counts_every_job_not_named_train(workflow_speed):
    import pandas as pd

    costs = pd.DataFrame({"stage": ["train_sweep", "train_transformer", "training_summary", "evaluate", "report"],
                          "cpu_s": [50.0, 30.0, 5.0, 10.0, 5.0]})
    ratio = workflow_speed.share_after_training_ratio(costs, "a made-up run")
    assert ratio.value == pytest.approx(0.20) and ratio.verdict() == "met (1.00 of the goal)"
    assert "20 of 100 CPU s" in ratio.basis and "5 jobs of a made-up run" in ratio.basis


def test_a_results_folder_without_cost_lines_is_named_in_the_error(workflow_speed, tmp_path):
    import pandas as pd

    empty = pd.DataFrame(columns=["stage", "cpu_s"])
    with pytest.raises(ValueError, match=f"{tmp_path}: no job wrote a cost line"):
        workflow_speed.share_after_training_ratio(empty, str(tmp_path))


def test_interleaved_timings_run_the_commands_in_turn(workflow_speed, tmp_path):
    import sys

    order = tmp_path / "order"
    commands = [([sys.executable, "-c", f"open({str(order)!r}, 'a').write({name!r})"], tmp_path) for name in "ab"]
    timings = workflow_speed.interleaved_cpu(commands, 2)
    assert order.read_text() == "abab"
    assert [len(timing) for timing in timings] == [2, 2]


def test_the_cheapest_torch_job_starts_torch_and_no_other_imports_less(workflow_speed):
    script, modules = workflow_speed.cheapest_torch_job()
    assert "lengthgen.runtime.device" in modules and "lengthgen.runtime.job" in modules
    for path in (REPO / "workflow" / "scripts").glob("*.py"):
        other = workflow_speed.script_modules(path.name)
        assert "lengthgen.runtime.device" not in other or len(other) >= len(modules), path.name


def test_the_synthetic_workflow_has_the_shape_asked_for(workflow_speed, tmp_path):
    """Snakemake's floor is measured on a DAG of the shape it names: so many jobs, each with its outputs, inputs
    from two earlier jobs and params (read back from Snakemake's record of one job)."""
    import base64
    import json
    import subprocess

    shape = {"jobs": 7, "outputs": 2, "inputs": 3, "params": 4}
    subprocess.run(workflow_speed.write_synthetic_workflow(tmp_path, shape), check=True, cwd=tmp_path, capture_output=True)
    assert sorted(path.relative_to(tmp_path).as_posix() for path in (tmp_path / "out").rglob("*")) == sorted(
        [f"out/{job}" for job in range(7)] + [f"out/{job}/{k}" for job in range(7) for k in range(2)])
    record = json.loads((tmp_path / ".snakemake/metadata" / base64.b64encode(b"out/6/0").decode()).read_text())
    assert sorted(record["input"]) == ["out/1/0", "out/2/0", "out/2/1"]  # job 6's parents: (6 - 1) // 2, (6 - 1) // 3
    assert len(record["params"]) == 4


def test_the_minimal_head_computes_the_pipelines_rope_head(bench):
    """The yardstick of ``--speed`` does the pipeline's work: with the same weights, the rope head's loss."""
    import torch

    from lengthgen.models.head import AttentionHead, HeadConfig
    from reference_head import MinimalRopeHeads

    minimal = MinimalRopeHeads(1, 16, 64, 1e4, torch.Generator().manual_seed(0))
    head = AttentionHead(HeadConfig(vocab_size=16, d_model=64, pe="rope", trained_positions=32))
    weights = {"token_embedding.weight": minimal.embedding, "query.weight": minimal.query, "key.weight": minimal.key,
               "value.weight": minimal.value, "unembedding.weight": minimal.unembedding,
               "query.bias": minimal.query_bias, "key.bias": minimal.key_bias, "value.bias": minimal.value_bias,
               "unembedding.bias": minimal.unembedding_bias}
    head.load_state_dict({name: value.detach()[0].reshape(-1) if name.endswith("bias") else value.detach()[0]
                          for name, value in weights.items()})
    tokens = torch.randint(16, (1, 64, 24), generator=torch.Generator().manual_seed(1))
    targets = tokens[..., -3]
    _, expected = head(tokens[0], targets[0])
    assert minimal.loss(tokens, targets).item() == pytest.approx(expected.item(), rel=1e-5)
    assert expected.item() > 1.0  # random weights: far from a solved task, so the losses are not both ~0


@pytest.mark.parametrize("pe", ["randomized_rope", "randomized_learned"])
def test_the_minimal_randomized_heads_compute_the_pipelines_heads(bench, pe):
    """A randomized variant's minimal head of its own shape does that head's work: with the same weights and ids,
    its loss."""
    import torch

    from lengthgen.models.encodings.randomized import sorted_random_subsets
    from lengthgen.models.head import AttentionHead, HeadConfig
    from reference_head import MinimalRandomizedLearnedHeads, MinimalRandomizedRopeHeads

    rows = 512
    minimal = (MinimalRandomizedRopeHeads(1, 16, 64, 1e4, rows, torch.Generator().manual_seed(0))
               if pe == "randomized_rope" else
               MinimalRandomizedLearnedHeads(1, 16, 64, rows, torch.Generator().manual_seed(0)))
    head = AttentionHead(HeadConfig(vocab_size=16, d_model=64, pe=f"{pe}@noise_max_length={rows}",
                                    trained_positions=32))
    weights = {"token_embedding.weight": minimal.embedding, "query.weight": minimal.query, "key.weight": minimal.key,
               "value.weight": minimal.value, "unembedding.weight": minimal.unembedding,
               "query.bias": minimal.query_bias, "key.bias": minimal.key_bias, "value.bias": minimal.value_bias,
               "unembedding.bias": minimal.unembedding_bias}
    state = {name: value.detach()[0].reshape(-1) if name.endswith("bias") else value.detach()[0]
             for name, value in weights.items()}
    if pe == "randomized_learned":
        state["encoding.table"] = minimal.table.detach()
    head.load_state_dict(state)
    generator = torch.Generator().manual_seed(1)
    tokens = torch.randint(16, (1, 64, 24), generator=generator)
    positions = sorted_random_subsets(64, 24, rows, generator)[None]
    targets = tokens[..., -3]
    _, expected = head(tokens[0], targets[0], positions=positions[0])
    assert minimal.loss(tokens, targets, positions).item() == pytest.approx(expected.item(), rel=1e-5)
    assert expected.item() > 1.0  # random weights: far from a solved task, so the losses are not both ~0


def test_a_randomized_familys_own_shape_ratio_is_its_pairs_median_without_a_goal(bench):
    family = next(family for family in bench.model_families(10, 1) if family.model_config.pe == "randomized_learned")
    ratio = bench.own_shape_ratio(family, [2.0, 3.0, 4.0], [4.0, 10.0, 5.0])
    assert ratio.value == 0.5 and ratio.goal is None and ratio.verdict() == ""
    assert "own shape" in ratio.what and "randomized_learned" in ratio.what
