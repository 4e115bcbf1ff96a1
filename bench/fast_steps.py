"""The single head's training step, side by side: CPU ms per seed-step of every single-head family as
``train_heads`` trains it (the step written for its shape, ``lengthgen/training/fast_heads.py`` and
``fast_randomized.py``, where one applies), as the autograd path trains it (``StackedHeads``), and of the minimal
stacked rope head (``reference_head.py``), the yardstick.

    python bench/fast_steps.py [--rounds 5] [--steps 100] [--seeds 10] [--only rope fire ...] [--no-autograd]

One thread, the native CPU kernels and the allocator set as the workflow's jobs run them (``run_as_jobs_run``). Each
timing is one training call at ``--steps`` steps minus one at a tenth of them (the fixed cost, init and range fit,
cancels), after an untimed warm-up call of each. The calls run in interleaved rounds (minimal head, then every
family's two paths), so that the timings of a round ran under the same load; a family's ratio is the median over
rounds of its time over the round's minimal-head time.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from lengthgen.runtime.job import run_as_jobs_run  # noqa: E402

run_as_jobs_run("native")

import torch  # noqa: E402
import yaml  # noqa: E402

from lengthgen.models.head import HeadConfig  # noqa: E402
from lengthgen.pipeline.config import prepare_config  # noqa: E402
from lengthgen.task import TaskConfig, retrieval_targets  # noqa: E402
from lengthgen.training.loop import TrainConfig, fit, init_head, train_heads  # noqa: E402
from reference_head import train_minimal  # noqa: E402

CONFIG = yaml.safe_load((REPO / "config.yaml").read_text())
prepare_config(CONFIG, REPO / "workflow" / "schemas" / "config.schema.yaml")
OFFSET = 2  # one offset stands for all: the cost does not depend on it
TRAIN_LENGTH_MAX = CONFIG["task"]["train_length_max"]
# Every single-head family of the default run: (label, head options, config section of its training settings).
FAMILIES = [("rope", {"pe": "rope"}, "train"),
            ("learned", {"pe": "learned"}, "train"),
            ("linear attention", {"pe": "rope", "attention": "linear"}, "linear"),
            ("log-length", {"pe": "rope", "logit_scale": "log_length", "reference_length": TRAIN_LENGTH_MAX}, "train"),
            ("randomized_rope (variant)", {"pe": "randomized_rope"}, "train"),
            ("randomized_learned (variant)", {"pe": "randomized_learned"}, "train"),
            ("fire (variant)", {"pe": "fire"}, "train"),
            ("sinusoidal (variant)", {"pe": "sinusoidal"}, "train"),
            ("nope (variant)", {"pe": "nope"}, "train"),
            ("alibi (variant)", {"pe": "alibi"}, "train"),
            ("alibi_learned (variant)", {"pe": "alibi_learned"}, "train"),
            ("t5 (variant)", {"pe": "t5"}, "train")]


def head_config(options: dict) -> HeadConfig:
    task = CONFIG["task"]
    return HeadConfig(vocab_size=task["vocab_size"], trained_positions=task["train_length_max"], **CONFIG["model"],
                      **options)


def task_config() -> TaskConfig:
    task = CONFIG["task"]
    return TaskConfig(task["vocab_size"], OFFSET, task["train_length_min"], task["train_length_max"])


def train_settings(section: str, steps: int) -> TrainConfig:
    settings = CONFIG[section]
    return TrainConfig(steps=steps, batch_size=settings["batch_size"], lr=settings["lr"])


def fast_path(options: dict, section: str, seeds: list[int]) -> Callable[[int], None]:
    """A training call of ``steps`` as a job makes it: ``train_heads``, the fast step where it applies."""
    return lambda steps: train_heads(head_config(options), task_config(), train_settings(section, steps), seeds, "cpu")


def autograd_path(options: dict, section: str, seeds: list[int]) -> Callable[[int], None]:
    """The same call through the autograd path (``fit`` without a fast step: ``StackedHeads``)."""
    config = head_config(options)
    return lambda steps: fit([init_head(config, seed) for seed in seeds], seeds, task_config(),
                             train_settings(section, steps), "cpu", retrieval_targets, "bench")


def minimal_path(n_seeds: int) -> Callable[[int], None]:
    task, model, train = CONFIG["task"], CONFIG["model"], CONFIG["train"]
    return lambda steps: train_minimal(n_seeds, task["vocab_size"], model["d_model"], model["rope_base"], steps,
                                       train["batch_size"], (task["train_length_min"], task["train_length_max"]),
                                       OFFSET, train["lr"])


def ms_per_seed_step(train: Callable[[int], None], steps: int, n_seeds: int) -> float:
    """CPU ms per seed-step of ``train``: a call at ``steps`` minus one at a tenth of them."""
    def cpu_seconds(n: int) -> float:
        start = time.process_time()
        train(n)
        return time.process_time() - start

    short = steps // 10
    return 1000 * (cpu_seconds(steps) - cpu_seconds(short)) / (steps - short) / n_seeds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--only", nargs="+", metavar="WORD",
                        help="only the families whose label has one of these words")
    parser.add_argument("--no-autograd", action="store_true", help="only train_heads's path, not the autograd one")
    args = parser.parse_args()
    families = [family for family in FAMILIES if not args.only or set(args.only) & set(family[0].split())]
    kinds = ("fast",) if args.no_autograd else ("fast", "autograd")
    torch.set_num_threads(1)
    seeds = list(range(args.seeds))
    paths = {"minimal": minimal_path(args.seeds)}
    for label, options, section in families:
        paths[(label, "fast")] = fast_path(options, section, seeds)
        if "autograd" in kinds:
            paths[(label, "autograd")] = autograd_path(options, section, seeds)
    for train in paths.values():  # warm-up: first-call costs (lazy initialization, allocator growth)
        train(args.steps // 10)
    timings = {key: [] for key in paths}
    for _ in range(args.rounds):
        for key, train in paths.items():
            timings[key].append(ms_per_seed_step(train, args.steps, args.seeds))
    minimal = timings["minimal"]
    print(f"CPU ms per seed-step, {args.seeds} seeds side by side, one thread, {args.rounds} interleaved rounds of "
          f"{args.steps} steps (medians); minimal stacked rope head: {statistics.median(minimal):.3f} ms "
          f"(rounds {min(minimal):.3f} to {max(minimal):.3f}).\n")
    autograd = "autograd" in kinds
    print("| family | train_heads: ms | x minimal |" + (" autograd path: ms | x minimal |" if autograd else "")
          + "\n|---|---|---|" + ("---|---|" if autograd else ""))
    for label, _, _ in families:
        cells = [label]
        for path in kinds:
            times = timings[(label, path)]
            ratios = [time_ms / reference for time_ms, reference in zip(times, minimal)]
            cells += [f"{statistics.median(times):.3f}", f"{statistics.median(ratios):.2f}x"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
