"""No positional encoding (NoPE): the logit does not depend on positions."""

from lengthgen.models.encodings.base import EncodingConfig, PositionalEncoding

# What each encoding's mechanism is (defined in docs/adding-an-encoding.md): read as text by the workflow,
# without importing this module (lengthgen/models/encodings_table.py), so every value is a literal.
DECLARATIONS = {
    "nope": {
        "class": "NoPositionalEncoding",
        "offset_only": True,  # trivially: the logit does not depend on positions
        "trained_past_range": True,
        "monotone_in_offset": True,  # the position part is constant
        "position_term": False,  # no hook: the head sees a bag of tokens
    },
}


class NoPositionalEncoding(PositionalEncoding):
    """No positional encoding (NoPE): the head sees a bag of tokens."""


    def __init__(self, config: EncodingConfig):
        super().__init__()
