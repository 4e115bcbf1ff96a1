"""Adam's fused step, called without ``torch.optim``.

``torch.optim`` imports ``torch._dynamo`` on an optimizer's first use (its ``add_param_group`` and
``step`` wrappers), which costs about 1.8 CPU-s, more than ``import torch`` itself, in every training
job. ``FusedAdam`` keeps Adam's state and calls the kernel that ``torch.optim.Adam(fused=True)`` runs,
``torch._fused_adam_``, with the same arguments: the same bits (``tests/test_adam.py``), without the
import. Only what training uses: one learning rate per step, default betas and eps, no weight decay.
"""

import torch

BETAS = (0.9, 0.999)  # torch.optim.Adam's defaults
EPS = 1e-8


class FusedAdam:
    def __init__(self, parameters):
        self.parameters = list(parameters)
        self.exp_avgs = [torch.zeros_like(p, memory_format=torch.preserve_format) for p in self.parameters]
        self.exp_avg_sqs = [torch.zeros_like(p, memory_format=torch.preserve_format) for p in self.parameters]
        # float32 step counts on the parameter's device, as torch.optim keeps them for the fused kernel
        self.steps = [torch.zeros((), dtype=torch.float32, device=p.device) for p in self.parameters]

    def step(self, lr: float) -> None:
        """One Adam step at learning rate ``lr`` for every parameter that has a gradient."""
        chosen = [i for i, p in enumerate(self.parameters) if p.grad is not None]
        if not chosen:
            return
        steps = [self.steps[i] for i in chosen]
        torch._foreach_add_(steps, 1)
        torch._fused_adam_([self.parameters[i] for i in chosen], [self.parameters[i].grad for i in chosen],
                           [self.exp_avgs[i] for i in chosen], [self.exp_avg_sqs[i] for i in chosen], [], steps,
                           amsgrad=False, lr=lr, beta1=BETAS[0], beta2=BETAS[1], weight_decay=0.0, eps=EPS,
                           maximize=False, grad_scale=None, found_inf=None)
