"""The transformer experiment: its analysis and checks, section text, figures and table schemas."""
