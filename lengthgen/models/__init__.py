"""The models: the single head and the transformer, their positional encodings, inits and files on disk."""
