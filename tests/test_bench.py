"""bench/benchmark.py's split of a run by stage, from the jobs' ``benchmark:`` files."""

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():
    """bench/benchmark.py as a module (bench/ is scripts, not a package)."""
    sys.path.insert(0, str(REPO / "bench"))  # as running bench/benchmark.py puts it, for its reference_head
    spec = importlib.util.spec_from_file_location("bench_benchmark", REPO / "bench" / "benchmark.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def write_benchmark(path: Path, seconds: float, rss, cpu) -> None:
    """A benchmark file as Snakemake writes it ("NA" where a job ended before its first sample)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{seconds}\t0:00:00\t{rss}\t900.00\t100.00\t110.00\t0.00\t0.00\t50.00\t{cpu}\n")


def test_stage_table_sums_every_job_of_a_rule_whatever_its_depth(bench, tmp_path):
    benchmarks = tmp_path / "benchmarks"
    write_benchmark(benchmarks / "train_sweep/pe~rope/offset~1.tsv", 10.0, 300.5, 8.0)
    write_benchmark(benchmarks / "train_sweep/pe~learned/offset~1.tsv", 12.5, 310.0, 9.5)
    write_benchmark(benchmarks / "analyze_shift/K1.tsv", 4.0, 200.0, 3.0)
    write_benchmark(benchmarks / "report.tsv", 2.0, "NA", "NA")  # too short for a sample
    (benchmarks / "report.log").write_text("not a benchmark")

    table = bench.stage_table(benchmarks)

    assert list(table.index) == ["train_sweep", "analyze_shift", "report"]  # largest CPU first
    assert table.loc["train_sweep"].to_dict() == {"jobs": 2, "wall s": 22.5, "CPU s": 17.5, "max RSS MB": 310.0}
    assert table.loc["analyze_shift", "jobs"] == 1
    assert table.loc["report", "CPU s"] == 0  # NA counts as nothing
    assert table.loc["report", "max RSS MB"] != table.loc["report", "max RSS MB"]  # NaN: not measured


def test_stage_table_of_a_run_without_benchmarks_is_empty(bench, tmp_path):
    table = bench.stage_table(tmp_path / "benchmarks")
    assert table.empty
    assert list(table.columns) == ["jobs", "wall s", "CPU s", "max RSS MB"]


def test_confirmation_runs_benchmarks_are_found_in_their_own_results_folders(bench, tmp_path):
    for name in ("small_vocab", "fresh_seeds"):
        write_benchmark(tmp_path / "confirm" / name / "benchmarks/report.tsv", 1.0, 100.0, 1.0)
    (tmp_path / "confirm/no_benchmarks_yet").mkdir()
    assert [folder.parent.name for folder in bench.confirmation_benchmarks(tmp_path)] == ["fresh_seeds", "small_vocab"]


def test_the_minimal_head_computes_the_pipelines_rope_head(bench):
    """The yardstick of ``--speed`` does the pipeline's work: with the same weights, the rope head's loss."""
    import torch

    from lengthgen.model import AttentionHead, HeadConfig
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
