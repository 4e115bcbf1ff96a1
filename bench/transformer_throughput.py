"""Training throughput of the transformer, in tokens per second, through the workflow's own training loop.

Builds the transformer of a config's ``transformer`` section (config.yaml by default; layer it with
another config file as snakemake does), trains it on the task's training lengths, and prints the
tokens per second after a short warm-up. On a GPU (``--device auto`` picks one when present) it
also measures bfloat16 autocast.

    python bench/transformer_throughput.py                                          # the CPU config
    python bench/transformer_throughput.py --config configs/transformer_gpu.yaml   # the GPU config
"""

import argparse
import os
import time
from dataclasses import replace
from pathlib import Path

from lengthgen.runtime.job import run_as_jobs_run

# As the default config's jobs run (cpu_kernels: native), set before torch starts; export
# LENGTHGEN_BENCH_CPU_KERNELS=portable to time the portable kernels.
run_as_jobs_run(os.environ.get("LENGTHGEN_BENCH_CPU_KERNELS", "native"))

import torch  # noqa: E402
import yaml  # noqa: E402

from lengthgen.pipeline.config import prepare_config  # noqa: E402
from lengthgen.runtime.device import configure_torch, resolve_device  # noqa: E402
from lengthgen.task import TaskConfig  # noqa: E402
from lengthgen.training.loop import TrainConfig  # noqa: E402
from lengthgen.models.transformer import TransformerConfig  # noqa: E402
from lengthgen.training.loop import train_transformer  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
# Not 10: at 10 steps a warmup of 0.1 is one step, where OneCycleLR divides by zero (it needs warmup steps != 1).
WARMUP_STEPS = 20


def load_config(paths: list[str]) -> dict:
    """config.yaml updated, section by section, by each of ``paths`` in turn, with the schema's defaults and
    the derived settings filled in as the workflow fills them."""
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    for path in paths:
        for section, values in yaml.safe_load(Path(path).read_text()).items():
            if isinstance(values, dict):
                config.setdefault(section, {}).update(values)
            else:
                config[section] = values
    prepare_config(config, REPO / "workflow" / "schemas" / "config.schema.yaml")
    return config


def throughput(model_config: TransformerConfig, task: TaskConfig, train: TrainConfig,
               device: str) -> tuple[float, float]:
    """(tokens per wall-clock second, tokens per CPU second of this process) of the timed steps, after a
    warm-up run. Tokens: batch x length, summed over steps. On a shared CPU the second is the steadier:
    it does not count the time other processes hold the cores."""
    warmup = replace(train, steps=WARMUP_STEPS)
    train_transformer(model_config, task, warmup, seed=0, device=device)
    synchronize = torch.cuda.synchronize if torch.device(device).type == "cuda" else lambda: None
    synchronize()
    wall, cpu = time.perf_counter(), time.process_time()
    _, curve = train_transformer(model_config, task, train, seed=0, device=device)
    synchronize()
    tokens = train.batch_size * curve["length"].sum()
    return tokens / (time.perf_counter() - wall), tokens / (time.process_time() - cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", nargs="*", default=[], help="config files layered over config.yaml")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--steps", type=int, default=100, help="timed training steps")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--pe", default="rope")
    args = parser.parse_args()
    config = load_config(args.config)
    warmup_fraction = config["transformer"]["warmup_fraction"]
    if args.steps * warmup_fraction == 1:
        parser.error(f"--steps {args.steps}: its warmup would be one step, where OneCycleLR divides by zero")
    configure_torch(args.threads)
    device = str(resolve_device(args.device))
    task, model, transformer = config["task"], config["model"], config["transformer"]
    model_config = TransformerConfig(task["vocab_size"], args.pe, transformer["n_layers"], transformer["n_heads"],
                                     transformer["d_model"], task["train_length_max"], model["rope_base"],
                                     model["learned_init_std"])
    task_config = TaskConfig(task["vocab_size"], config["sweep"]["offset"][0], task["train_length_min"],
                             task["train_length_max"])
    name = torch.cuda.get_device_name(device) if device.startswith("cuda") else f"CPU, {args.threads} thread(s)"
    print(f"device: {device} ({name}), torch {torch.__version__}")
    print(f"model: {transformer['n_layers']} layers, {transformer['n_heads']} heads, d_model {transformer['d_model']}, "
          f"pe {args.pe}; batch {transformer['batch_size']}, lengths {task['train_length_min']}.."
          f"{task['train_length_max']}; {args.steps} timed steps")
    precisions = ["float32", "bf16"] if device.startswith("cuda") else [transformer["precision"]]
    for precision in precisions:
        train = TrainConfig(args.steps, transformer["batch_size"], transformer["lr"], args.steps, precision,
                            warmup_fraction)
        per_wall_second, per_cpu_second = throughput(model_config, task_config, train, device)
        print(f"{precision}: {per_wall_second / 1e6:.4f} M tokens/s (wall clock), "
              f"{per_cpu_second / 1e6:.4f} M tokens per CPU second of this process")


if __name__ == "__main__":
    main()
