"""Train and evaluate heads through the workflow's own code path on the chosen device.

Prints the seconds per training step and the accuracy at every evaluation length, so a
researcher can see what a GPU (or a bigger CPU) buys and that the science is unchanged.

    python bench/device_check.py --device auto --steps 2000 --pe rope learned --offset 2
"""

import argparse
import time

import torch

from lengthgen.evaluation import accuracy_by_length
from lengthgen.data import eval_set_frame, eval_sets_from_frame
from lengthgen.model import HeadConfig
from lengthgen.task import TaskConfig
from lengthgen.runtime import configure_torch, resolve_device
from lengthgen.training import TrainConfig, train_head


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto")
    parser.add_argument("--pe", nargs="+", default=["rope", "learned"])
    parser.add_argument("--offset", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    configure_torch(args.threads)
    device = resolve_device(args.device)
    print(f"device: {device} ({torch.cuda.get_device_name(device) if device.type == 'cuda' else 'CPU'}), "
          f"torch {torch.__version__}")
    eval_sets = eval_sets_from_frame(eval_set_frame(0, args.offset, [16, 32, 64, 128, 256, 512, 1024], 1000, 16))
    for pe in args.pe:
        start = time.perf_counter()
        model, curve = train_head(HeadConfig(16, 64, pe, 1024), TaskConfig(16, args.offset, 8, 32),
                                  TrainConfig(args.steps, 256, 1e-2), args.seed, str(device))
        train_seconds = time.perf_counter() - start
        start = time.perf_counter()
        accuracy = accuracy_by_length(model, eval_sets, args.offset)
        eval_seconds = time.perf_counter() - start
        print(f"\n{pe}: {1000 * train_seconds / args.steps:.2f} ms/step over {args.steps} steps, "
              f"evaluation {eval_seconds:.1f} s, final training loss {curve['loss'].iloc[-1]:.2e}")
        print(accuracy.to_string(index=False))


if __name__ == "__main__":
    main()
