"""The two kinds of error rouge_core raises: bad settings and bad input."""


class RougeConfigError(ValueError):
    """A setting is invalid: says which, the value received, and what is allowed."""


class RougeInputError(ValueError):
    """A text or reference list cannot be scored: says what is wrong and where."""
