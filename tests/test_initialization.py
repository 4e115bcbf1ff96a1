"""Model inits by name (``lengthgen/models/init.py``): each draws what it says, in every model family, and
the defaults are the inits the models had before the setting existed, bit for bit."""
import math
from dataclasses import replace

import pytest
import torch
from torch import nn

from lengthgen.models.encodings import EncodingConfig, build_encoding
from lengthgen.models.init import parse_init
from lengthgen.models.head import HeadConfig
from lengthgen.runtime.seeding import derive_seed
from lengthgen.training.loop import init_head, seeded_init
from lengthgen.models.transformer import Transformer, TransformerConfig

# Big enough that every projection holds D^2 = 16384 draws and the token embedding V D = 8192; the learned
# table's own std, 0.5, is neither named std, so a table left at it shows.
VOCAB, WIDTH, TRAINED, TABLE_STD = 64, 128, 256, 0.5
# Every single-head family: the encodings with parameters of their own (learned table, t5's buckets, FIRE's
# MLP and scalars, ALiBi's slope), the randomized table, and the linear and log-length heads (options of rope).
HEADS = {
    "rope": {}, "learned": {}, "t5": {}, "fire": {}, "alibi_learned": {},
    "randomized_learned@noise_max_length=512": {},
    "linear": {"pe": "rope", "attention": "linear"},
    "log_length": {"pe": "rope", "logit_scale": "log_length", "reference_length": TRAINED},
}
TRANSFORMERS = ["rope", "learned", "t5", "fire"]
# Scalars an encoding keeps under every init: they define its mechanism at init (lengthgen/models/init.py).
SCALARS = {"encoding.slope": 2.0 ** -8, "encoding.c": 0.1, "encoding.threshold_scale": 1.0}


def head(name: str, init: str, seed: int = 0):
    options = {"pe": name, **HEADS[name]}
    return init_head(HeadConfig(vocab_size=VOCAB, d_model=WIDTH, trained_positions=TRAINED, learned_init_std=TABLE_STD,
                                init=init, **options), seed)


def transformer(pe: str, init: str, seed: int = 0, n_layers: int = 2) -> Transformer:
    config = TransformerConfig(VOCAB, pe, n_layers=n_layers, n_heads=2, d_model=WIDTH, trained_positions=TRAINED,
                               learned_init_std=TABLE_STD, init=init)
    return seeded_init(Transformer, config, seed)


def models(init: str):
    """(name, model) of every family under ``init``: every single head and the transformers."""
    return ([(name, head(name, init)) for name in HEADS]
            + [(f"transformer {pe}", transformer(pe, init)) for pe in TRANSFORMERS])


def is_bias(name: str) -> bool:
    return name.rsplit(".", 1)[-1] == "bias"  # t5's ``bucket_bias`` is a table of logits, a weight


def is_norm(model: nn.Module, name: str) -> bool:
    return isinstance(model.get_submodule(name.rpartition(".")[0]), nn.LayerNorm)


def std_tolerance(n: int) -> float:
    """Five standard errors of an empirical std about a known mean 0, relative to the true std: for n draws
    of N(0, s^2), sqrt(mean(x^2)) / s has standard error 1 / sqrt(2 n). The draws are seeded, so the test
    cannot flake; five errors make a miss by chance about 1 in 10^6 for any seed, yet still tell std 0.02
    from 0.1 in the smallest tensor (FIRE's 32 weights: 5 / sqrt(64) = 0.63 < 1 - 0.02 / 0.1)."""
    return 5 / math.sqrt(2 * n)


def assert_normal(values: torch.Tensor, std: float, where: str) -> None:
    """``values`` look like draws of N(0, std^2): their root mean square is ``std`` within ``std_tolerance``,
    and, where there are enough of them to tell a normal from a uniform of the same std, about 4.55% lie
    beyond 2 std (a uniform has none there)."""
    values = values.detach().double().flatten()
    n = len(values)
    rms = values.square().mean().sqrt().item()
    assert abs(rms / std - 1) < std_tolerance(n), f"{where}: std {rms:.4g}, named {std:g} ({n} draws)"
    if n >= 1000:
        tail, expected = (values.abs() > 2 * std).double().mean().item(), math.erfc(2 / math.sqrt(2))
        assert abs(tail - expected) < 5 * math.sqrt(expected * (1 - expected) / n), f"{where}: {tail:.4f} beyond 2 std"


@pytest.mark.parametrize("std", [0.02, 0.1])
def test_a_normal_init_draws_every_weight_at_its_std_and_every_bias_zero(std):
    """``normal@std=S`` in every family draws each weight tensor N(0, S^2) (the
    learned table and the rows past it, t5's buckets and FIRE's MLP too) and sets each bias to exactly
    zero; normalization gains stay 1 and an encoding's scalars keep their values."""
    for family, model in models(f"normal@std={std}"):
        for name, parameter in model.named_parameters():
            where = f"{family}: {name}"
            if name in SCALARS:
                assert torch.equal(parameter, torch.tensor(SCALARS[name])), where
            elif is_norm(model, name):
                assert torch.equal(parameter, torch.ones_like(parameter) if name.endswith("weight")
                                   else torch.zeros_like(parameter)), where
            elif is_bias(name):
                assert torch.equal(parameter, torch.zeros_like(parameter)), where
            else:
                assert_normal(parameter, std, where)
        if hasattr(model.encoding, "initial_row"):  # rows past the stored table, drawn when read
            rows = torch.stack([model.encoding.initial_row(p) for p in range(TRAINED, 2 * TRAINED)])
            assert_normal(rows, std, f"{family}: learned rows past the table")


def test_the_default_head_init_keeps_pytorch_s():
    """``torch_default``: token embeddings N(0, 1), linear weights and biases U(+-1/sqrt(fan_in)), whose std
    is 1/sqrt(3 fan_in); the learned table at ``learned_init_std``."""
    for name in HEADS:
        model = head(name, "torch_default")
        assert_normal(model.token_embedding.weight, 1.0, f"{name}: token embedding")
        for layer in (model.query, model.key, model.value, model.unembedding):
            bound = 1 / math.sqrt(layer.in_features)
            assert layer.weight.abs().max() <= bound and layer.bias.abs().max() <= bound
            assert abs(layer.weight.std().item() * math.sqrt(3) / bound - 1) < std_tolerance(layer.weight.numel())
            assert layer.bias.abs().min() > 0  # drawn, not zeroed
        if hasattr(model.encoding, "table"):
            assert_normal(model.encoding.table, model.config.learned_init_std, f"{name}: learned table")


@pytest.mark.parametrize("n_layers", [1, 3])
def test_the_transformer_s_default_is_nanogpt_s(n_layers):
    """``nanogpt``: weights N(0, 0.02^2), the projections into the residual stream N(0, 0.02^2 / (2 n_layers)),
    zero biases, LayerNorm gains 1, and the encoding's own init (the learned table at ``learned_init_std``)."""
    model = transformer("learned", TransformerConfig.init, n_layers=n_layers)
    assert model.config.init == "nanogpt"
    for name, parameter in model.named_parameters():
        if name == "encoding.table":
            assert_normal(parameter, model.config.learned_init_std, name)
        elif is_norm(model, name) or is_bias(name):
            assert torch.equal(parameter, torch.full_like(parameter, float(name.endswith("norm.weight")))), name
        else:
            residual = name.endswith(("projection.weight", "down.weight"))
            assert_normal(parameter, 0.02 / math.sqrt(2 * n_layers) if residual else 0.02, name)


def test_torch_default_on_the_transformer_keeps_pytorch_s():
    model = transformer("rope", "torch_default")
    assert_normal(model.token_embedding.weight, 1.0, "token embedding")
    assert model.blocks[0].attention.qkv.bias.abs().min() > 0


def head_built_as_before(config: HeadConfig, seed: int) -> dict[str, torch.Tensor]:
    """The weights of a head of ``config`` made the way ``AttentionHead`` made them before ``model.init``
    existed: its layers built in order from the seeded global generator, left at PyTorch's init."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed("init", seed))
        d = config.d_model
        layers = {"token_embedding": nn.Embedding(config.vocab_size, d),
                  "encoding": build_encoding(config.pe, EncodingConfig(d, config.trained_positions, config.rope_base,
                                                                       config.learned_init_std, init_seed=seed)),
                  "query": nn.Linear(d, d), "key": nn.Linear(d, d), "value": nn.Linear(d, d),
                  "unembedding": nn.Linear(d, config.vocab_size)}
    return {f"{layer}.{name}": value for layer, module in layers.items() for name, value in module.state_dict().items()}


@pytest.mark.parametrize("name", HEADS)
def test_the_default_head_init_is_the_one_before_the_setting_bit_for_bit(name):
    model = head(name, HeadConfig.init, seed=3)
    assert model.config.init == "torch_default"
    before = head_built_as_before(model.config, 3)
    assert list(model.state_dict()) == list(before)
    for key, value in model.state_dict().items():
        assert torch.equal(value, before[key]), key


@pytest.mark.parametrize("pe", TRANSFORMERS)
def test_the_default_transformer_init_is_the_one_before_the_setting_bit_for_bit(pe):
    """Before ``transformer.init`` existed, the decoder drew nanoGPT's init over its PyTorch-built layers, in
    this order, with this rule; the encoding kept its own."""
    model = transformer(pe, TransformerConfig.init, seed=2)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed("init", 2))
        before = Transformer(replace(model.config, init="torch_default"))
        for module in [before.token_embedding, before.blocks, before.unembedding]:
            for name, parameter in module.named_parameters():
                if name.endswith("bias"):
                    nn.init.zeros_(parameter)
                elif parameter.dim() > 1:
                    residual = name.endswith("projection.weight") or name.endswith("down.weight")
                    nn.init.normal_(parameter, 0.0, 0.02 / math.sqrt(2 * model.config.n_layers) if residual else 0.02)
    for key, value in model.state_dict().items():
        assert torch.equal(value, before.state_dict()[key]), key


@pytest.mark.parametrize("init", ["torch_default", "normal@std=0.1"])
def test_an_init_depends_on_the_seed_alone(init):
    first, again, other = head("learned", init, seed=4), head("learned", init, seed=4), head("learned", init, seed=5)
    torch.manual_seed(123)  # global state outside the init does not matter
    after_reseed = head("learned", init, seed=4)
    for key, value in first.state_dict().items():
        assert torch.equal(value, again.state_dict()[key]) and torch.equal(value, after_reseed.state_dict()[key]), key
    assert not torch.equal(first.query.weight, other.query.weight)


@pytest.mark.parametrize("name, message", [
    ("normal", "model init 'normal': normal needs a std"),
    ("normal@std=-0.1", "model init 'normal@std=-0.1': std -0.1 is not positive and finite"),
    ("normal@std=inf", "is not of the form"),
    ("kaiming", "unknown model init 'kaiming'; allowed: nanogpt, normal, torch_default"),
    ("torch_default@std=1", "model init 'torch_default@std=1': torch_default has no parameter 'std' "
                            "(parameters: none)"),
])
def test_a_bad_init_name_is_refused_by_the_model_too(name, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        head("rope", name)


def test_init_names_parse():
    assert parse_init("normal@std=0.02").std == 0.02 and parse_init("normal@std=0.02").encoding_std == 0.02
    assert parse_init("torch_default").encoding_std is None and parse_init("nanogpt").encoding_std is None
