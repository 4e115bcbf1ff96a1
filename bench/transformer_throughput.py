"""Training throughput of the transformer, in tokens per second, through the workflow's own training loop.

Builds the transformer of a config's ``transformer`` section (config.yaml by default; layer it with
another config file as snakemake does), trains it on the task's training lengths, and prints the
tokens per second after a short warm-up. On a GPU (``--device auto`` picks one when present) it
also measures bfloat16 autocast.

    python bench/transformer_throughput.py                                          # the CPU config
    python bench/transformer_throughput.py --config configs/transformer_gpu.yaml   # the GPU config
"""

import argparse
import time
from pathlib import Path

import torch
import yaml

from lengthgen.config import derive_settings
from lengthgen.runtime import configure_torch, resolve_device
from lengthgen.task import TaskConfig
from lengthgen.training import TrainConfig
from lengthgen.transformer import TransformerConfig, train_transformer

REPO = Path(__file__).resolve().parents[1]
WARMUP_STEPS = 10


def load_config(paths: list[str]) -> dict:
    """config.yaml updated, section by section, by each of ``paths`` in turn."""
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    for path in paths:
        for section, values in yaml.safe_load(Path(path).read_text()).items():
            if isinstance(values, dict):
                config.setdefault(section, {}).update(values)
            else:
                config[section] = values
    derive_settings(config)
    return config


def throughput(model_config: TransformerConfig, task: TaskConfig, train: TrainConfig,
               device: str) -> tuple[float, float]:
    """(tokens per wall-clock second, tokens per CPU second of this process) of the timed steps, after a
    warm-up run. Tokens: batch x length, summed over steps. On a shared CPU the second is the steadier:
    it does not count the time other processes hold the cores."""
    warmup = TrainConfig(WARMUP_STEPS, train.batch_size, train.lr, train.log_every, train.precision)
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
    configure_torch(args.threads)
    device = str(resolve_device(args.device))
    config = load_config(args.config)
    task, model, transformer = config["task"], config["model"], config["transformer"]
    model_config = TransformerConfig(task["vocab_size"], args.pe, transformer["n_layers"], transformer["n_heads"],
                                     transformer["d_model"], model["max_positions"], model["rope_base"],
                                     model["learned_init_std"])
    task_config = TaskConfig(task["vocab_size"], config["sweep"]["offset"][0], task["train_length_min"],
                             task["train_length_max"])
    name = torch.cuda.get_device_name(device) if device.startswith("cuda") else f"CPU, {args.threads} thread(s)"
    print(f"device: {device} ({name}), torch {torch.__version__}")
    print(f"model: {transformer['n_layers']} layers, {transformer['n_heads']} heads, d_model {transformer['d_model']}, "
          f"pe {args.pe}; batch {transformer['batch_size']}, lengths {task['train_length_min']}.."
          f"{task['train_length_max']}; {args.steps} timed steps")
    precisions = ["float32", "bf16"] if device.startswith("cuda") else [transformer.get("precision", "float32")]
    for precision in precisions:
        train = TrainConfig(args.steps, transformer["batch_size"], transformer["lr"], args.steps, precision)
        per_wall_second, per_cpu_second = throughput(model_config, task_config, train, device)
        print(f"{precision}: {per_wall_second / 1e6:.4f} M tokens/s (wall clock), "
              f"{per_cpu_second / 1e6:.4f} M tokens per CPU second of this process")


if __name__ == "__main__":
    main()
