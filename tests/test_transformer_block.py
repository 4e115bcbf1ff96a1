"""The decoder block and the whole decoder against a hand-written pre-norm transformer.

The reference below is written from the architecture's definition with plain tensor operations on the
module's own weights (every one of them drawn at random, LayerNorm gains and biases included, so that a
dropped or swapped norm shows): x + attention(norm_1(x)), then x + mlp(norm_2(x)); causal softmax attention
per head with logits q.k / sqrt(head_dim) plus an additive bias; an MLP of exact (erf) GELU; and for the
whole model, token plus position embedding, the blocks, a final norm and the unembedding."""

import copy
import math

import pytest
import torch

from lengthgen.models.encodings import build_encoding
from lengthgen.models.transformer import Block, Transformer, TransformerConfig

VOCAB, LENGTH, HEADS, WIDTH = 5, 6, 2, 8


def config(pe="nope", n_layers=1):
    return TransformerConfig(vocab_size=VOCAB, pe=pe, n_layers=n_layers, n_heads=HEADS, d_model=WIDTH,
                             trained_positions=LENGTH)


def randomized(module, seed=0):
    """``module`` in float64 with every parameter drawn from N(0, 0.5) (LayerNorm gains around 1)."""
    module = module.double()
    rng = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in module.named_parameters():
            noise = 0.5 * torch.randn(parameter.shape, generator=rng, dtype=torch.float64)
            parameter.copy_(noise + (1.0 if "norm" in name and name.endswith("weight") else 0.0))
    return module.eval()


def layer_norm(x, norm):
    mean = x.mean(-1, keepdim=True)
    variance = ((x - mean) ** 2).mean(-1, keepdim=True)  # biased, as LayerNorm's
    return (x - mean) / torch.sqrt(variance + 1e-5) * norm.weight + norm.bias


def linear(x, layer):
    return x @ layer.weight.T + layer.bias


def hand_attention(x, attention, bias):
    """Causal multi-head softmax attention; ``bias`` (T, T) added to every head's logits."""
    length, head_dim = x.shape[1], WIDTH // HEADS
    qkv = linear(x, attention.qkv)
    query, key, value = qkv[..., :WIDTH], qkv[..., WIDTH:2 * WIDTH], qkv[..., 2 * WIDTH:]
    heads = []
    for head in range(HEADS):
        part = slice(head * head_dim, (head + 1) * head_dim)
        logits = query[..., part] @ key[..., part].transpose(-2, -1) / math.sqrt(head_dim) + bias
        future = torch.ones(length, length, dtype=torch.bool).triu(1)  # key after the query
        weights = logits.masked_fill(future, -math.inf).softmax(-1)
        heads.append(weights @ value[..., part])
    return linear(torch.cat(heads, dim=-1), attention.projection)


def hand_mlp(x, mlp):
    hidden = linear(x, mlp.up)
    return linear(0.5 * hidden * (1 + torch.erf(hidden / math.sqrt(2))), mlp.down)


def hand_block(x, block, bias):
    x = x + hand_attention(layer_norm(x, block.attention_norm), block.attention, bias)
    return x + hand_mlp(layer_norm(x, block.mlp_norm), block.mlp)


def inputs(seed=1):
    return torch.randn(3, LENGTH, WIDTH, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


@pytest.mark.parametrize("record", [None, []], ids=["fused", "plain"])
def test_block_is_the_hand_written_pre_norm_block(record):
    block = randomized(Block(config()))
    encoding = build_encoding("nope", config().encoding_config())
    x = inputs()
    got = block(x, encoding, torch.arange(LENGTH), None, record)
    torch.testing.assert_close(got, hand_block(x, block, 0.0), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("record", [None, []], ids=["fused", "plain"])
def test_block_adds_the_given_mask_to_the_logits(record):
    block = randomized(Block(config()), seed=2)
    encoding = build_encoding("nope", config().encoding_config())
    bias = torch.randn(LENGTH, LENGTH, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    mask = bias.masked_fill(torch.ones(LENGTH, LENGTH, dtype=torch.bool).triu(1), -math.inf)
    x = inputs()
    got = block(x, encoding, torch.arange(LENGTH), mask, record)
    torch.testing.assert_close(got, hand_block(x, block, bias), rtol=1e-10, atol=1e-10)


def test_the_reference_is_not_blind_to_the_norms():
    """The weights above make each norm matter: without either the reference moves far."""
    block = randomized(Block(config()))
    x = inputs()
    unnormed = x + hand_attention(x, block.attention, 0.0)
    unnormed = unnormed + hand_mlp(layer_norm(unnormed, block.mlp_norm), block.mlp)
    assert (unnormed - hand_block(x, block, 0.0)).abs().max() > 0.1


@pytest.mark.parametrize("pe", ["learned", "nope"])
def test_decoder_is_embedding_blocks_final_norm_unembedding(pe):
    model = randomized(Transformer(config(pe, n_layers=2)), seed=4)
    tokens = torch.randint(VOCAB, (3, LENGTH), generator=torch.Generator().manual_seed(5))
    x = model.token_embedding.weight[tokens]
    if pe == "learned":
        x = x + model.encoding.table[:LENGTH]
    for block in model.blocks:
        x = hand_block(x, block, 0.0)
    expected = linear(layer_norm(x, model.final_norm), model.unembedding)
    logits, _ = model(tokens)
    torch.testing.assert_close(logits, expected, rtol=1e-10, atol=1e-10)
    traced, _ = model.trace(tokens)
    torch.testing.assert_close(traced, expected, rtol=1e-10, atol=1e-10)


def hand_attention_view(model, tokens, offset):
    """Per layer, then head, then query t and key s <= t: the hand-written decoder's logit and causal weight."""
    head_dim = WIDTH // HEADS
    x = model.token_embedding.weight[tokens] + model.encoding.table[offset:offset + LENGTH]
    logits, weights = [], []
    for block in model.blocks:
        qkv = linear(layer_norm(x, block.attention_norm), block.attention.qkv)
        for head in range(HEADS):
            query = qkv[..., head * head_dim:(head + 1) * head_dim]
            key = qkv[..., WIDTH + head * head_dim:WIDTH + (head + 1) * head_dim]
            for t in range(LENGTH):
                row = torch.stack([(query[:, t] * key[:, s]).sum(-1) / math.sqrt(head_dim) for s in range(t + 1)], 1)
                logits.append(row)
                weights.append(row.softmax(-1))
        x = hand_block(x, block, 0.0)
    return torch.cat(logits, 1), torch.cat(weights, 1)


def test_attention_lists_every_kept_logit_and_weight_by_hand():
    """``Transformer.attention``, the shift experiment's view: for layer, then head, then query t and key s <= t in
    order, the logit q_t . k_s / sqrt(head_dim) of the hand-written decoder at position ids offset .. offset + T - 1
    (0 .. T - 1 by default), and its causal softmax weight."""
    model = randomized(Transformer(TransformerConfig(vocab_size=VOCAB, pe="learned", n_layers=2, n_heads=HEADS,
                                                     d_model=WIDTH, trained_positions=16)), seed=6)
    tokens = torch.randint(VOCAB, (2, LENGTH), generator=torch.Generator().manual_seed(7))
    for offset, got in ((3, model.attention(tokens, position_offset=3)), (0, model.attention(tokens))):
        assert got[0].shape == got[1].shape == (2, 2 * HEADS * LENGTH * (LENGTH + 1) // 2)
        expected = hand_attention_view(model, tokens, offset)
        torch.testing.assert_close(got[0], expected[0], rtol=1e-10, atol=1e-10)
        torch.testing.assert_close(got[1], expected[1], rtol=1e-10, atol=1e-10)
    # the shift matters: the two views differ (a learned table's rows are not alike)
    assert (model.attention(tokens)[0] - model.attention(tokens, position_offset=3)[0]).abs().max() > 0.1


def test_a_biased_decoder_adds_the_bias_in_every_layer():
    """ALiBi's bias -0.5 (t - s) is added to every layer's logits, with the causal mask."""
    model = randomized(Transformer(config("alibi@slope=0.5", n_layers=2)), seed=8)
    tokens = torch.randint(VOCAB, (3, LENGTH), generator=torch.Generator().manual_seed(9))
    offsets = torch.arange(LENGTH)[:, None] - torch.arange(LENGTH)[None, :]  # t - s
    bias = -0.5 * offsets.double()  # (T, T)
    x = model.token_embedding.weight[tokens]
    for block in model.blocks:
        x = hand_block(x, block, bias)
    expected = linear(layer_norm(x, model.final_norm), model.unembedding)
    for logits in (model(tokens)[0], model.trace(tokens)[0]):
        torch.testing.assert_close(logits, expected, rtol=1e-10, atol=1e-10)


def test_loss_is_the_mean_cross_entropy_over_positions_with_a_target():
    from lengthgen.task import IGNORE_INDEX
    model = randomized(Transformer(config("learned")), seed=10)
    tokens = torch.randint(VOCAB, (2, LENGTH), generator=torch.Generator().manual_seed(11))
    targets = torch.full((2, LENGTH), IGNORE_INDEX)
    targets[0, 2], targets[0, 5], targets[1, 3] = 1, 4, 0  # three positions with a target
    logits, loss = model(tokens, targets)
    by_hand = [torch.logsumexp(logits[b, t], -1) - logits[b, t, v] for b, t, v in ((0, 2, 1), (0, 5, 4), (1, 3, 0))]
    torch.testing.assert_close(loss, sum(by_hand) / 3, rtol=1e-12, atol=1e-12)
    assert model(tokens)[1] is None  # no targets, no loss


def test_a_float32_decoder_stays_float32_with_float64_position_terms():
    """Sinusoidal position terms are float64; the decoder adds them in its own dtype."""
    model = Transformer(config("sinusoidal")).eval()
    logits, _ = model(torch.zeros(1, LENGTH, dtype=torch.long))
    assert logits.dtype == torch.float32


@pytest.mark.parametrize("pe", ["rope", "alibi", "sinusoidal"])
def test_the_decoder_makes_its_tensors_on_the_device_of_its_tokens(pe):
    """Positions and masks are made where the tokens are: on the meta device (shapes only, the one other than the
    CPU that every machine has) a CPU tensor among them would raise."""
    model = Transformer(config(pe)).to("meta")
    tokens = torch.zeros(2, LENGTH, dtype=torch.long, device="meta")
    for logits in (model(tokens)[0], model.trace(tokens)[0]):
        assert logits.device.type == "meta" and logits.shape == (2, LENGTH, VOCAB)


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_causal_mask_by_hand(dtype):
    from lengthgen.models.transformer import causal_mask
    mask = causal_mask(3, "cpu", dtype)
    inf = -math.inf
    assert mask.dtype == dtype and mask.tolist() == [[0.0, inf, inf], [0.0, 0.0, inf], [0.0, 0.0, 0.0]]
    assert causal_mask(3, "meta", dtype).device.type == "meta"


@pytest.mark.parametrize("pe", ["rope", "alibi@slope=0.5"])
def test_a_bfloat16_decoder_computes_in_bfloat16(pe):
    """Rotations run in float32 (complex numbers have no bfloat16) and come back in the model's dtype; masks are cast
    to it: a bfloat16 decoder's logits, and every traced logit, are bfloat16 and near the float64 decoder's."""
    reference = randomized(Transformer(config(pe, n_layers=2)), seed=12)
    model = copy.deepcopy(reference).to(torch.bfloat16)
    tokens = torch.randint(VOCAB, (2, LENGTH), generator=torch.Generator().manual_seed(13))
    logits, _ = model(tokens)
    traced, record = model.trace(tokens)
    assert logits.dtype == traced.dtype == torch.bfloat16
    assert all(layer.logits.dtype == layer.weights.dtype == torch.bfloat16 for layer in record)
    expected, _ = reference(tokens)
    torch.testing.assert_close(logits.double(), expected, rtol=0.1, atol=0.1)
    torch.testing.assert_close(traced.double(), expected, rtol=0.1, atol=0.1)


def test_under_bfloat16_autocast_the_float32_bias_is_cast_to_the_attention_dtype():
    """Training in bf16 autocasts a float32 model: its projections run in bfloat16 while the encoding's bias stays
    float32; the mask joins the attention in the attention's dtype (traced logits bfloat16, logits near float64's)."""
    reference = randomized(Transformer(config("alibi@slope=0.5", n_layers=2)), seed=14)
    model = copy.deepcopy(reference).float()
    tokens = torch.randint(VOCAB, (2, LENGTH), generator=torch.Generator().manual_seed(15))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits, _ = model(tokens)
        traced, record = model.trace(tokens)
    assert all(layer.logits.dtype == torch.bfloat16 for layer in record)
    expected, _ = reference(tokens)
    torch.testing.assert_close(logits.double(), expected, rtol=0.1, atol=0.1)
    torch.testing.assert_close(traced.double(), expected, rtol=0.1, atol=0.1)


def test_nanogpt_init_scales_the_residual_projections_by_the_depth():
    """nanoGPT's init: every weight N(0, 0.02^2), the two projections into the residual stream (the attention's
    output projection, the MLP's down projection) N(0, (0.02 / sqrt(2 n_layers))^2); biases zero."""
    model = Transformer(TransformerConfig(vocab_size=VOCAB, pe="nope", n_layers=4, n_heads=2, d_model=64,
                                          trained_positions=LENGTH, init_seed=3))
    residual = 0.02 / math.sqrt(2 * 4)
    for block in model.blocks:
        for weight, std in ((block.attention.projection.weight, residual), (block.mlp.down.weight, residual),
                            (block.attention.qkv.weight, 0.02), (block.mlp.up.weight, 0.02)):
            assert weight.std().item() == pytest.approx(std, rel=0.1)  # 4096 draws or more: within 3%
        assert not block.attention.projection.bias.any() and not block.mlp.down.bias.any()
    assert model.token_embedding.weight.std().item() == pytest.approx(0.02, rel=0.1)


@pytest.mark.parametrize("init, std", [("nanogpt", None), ("normal@std=0.3", 0.3)])
def test_the_learned_table_is_drawn_from_the_models_seed_and_init(init, std):
    """Row p of the learned table is N(0, std^2) from its own generator ("learned_row", init_seed, p): std the
    model's learned_init_std (None here) unless a named normal init sets every weight's."""
    from lengthgen.runtime.seeding import generator
    model = Transformer(TransformerConfig(vocab_size=VOCAB, pe="learned", n_layers=1, n_heads=HEADS, d_model=WIDTH,
                                          trained_positions=LENGTH, init=init, init_seed=7))
    std = std or model.config.learned_init_std
    rows = torch.stack([torch.randn(WIDTH, generator=generator("learned_row", 7, p)) * std for p in range(LENGTH)])
    torch.testing.assert_close(model.encoding.table.detach(), rows)


def test_transformers_train_on_the_default_device_without_being_told():
    """``train_transformers``' device defaults to "auto" (the GPU if there is one, else the CPU)."""
    from lengthgen.task import TaskConfig
    from lengthgen.training.loop import TrainConfig
    from lengthgen.training.loop import train_transformers
    (trained,) = train_transformers(config("rope"), TaskConfig(vocab_size=VOCAB, offset=1, train_length_min=3,
                                                              train_length_max=LENGTH), TrainConfig(steps=2, batch_size=2,
                                                                                                    lr=1e-3, log_every=1), [0])
    assert len(trained.curve) == 2 and trained.curve["loss"].notna().all()
