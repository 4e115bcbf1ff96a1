"""The prop1 experiment: its analysis and checks, section text, figures and table schemas."""
