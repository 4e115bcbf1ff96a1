"""Positional encodings, one module per family, registered by name in the table their modules declare.

What every encoding shares is ``base.py``, re-exported here; an encoding's class is imported from its own module
when its name is looked up (``ENCODINGS``, ``build_encoding``), so importing this package imports no encoding.
"""

from lengthgen.models.encodings.base import (ENCODINGS, EncodingConfig, PositionalEncoding,  # noqa: F401
                                             build_encoding, encoding_parameters, query_key_offsets,
                                             register, resolve_encoding, rotary_frequencies)
