"""The package's version, for signatures and run records (one place, read by `rouge_core.__version__`)."""

__version__ = "0.1.0"
