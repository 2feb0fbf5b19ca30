"""The two kinds of error rouge_core raises: bad settings and bad input."""


class RougeConfigError(ValueError):
    """A setting is invalid: says which, the value received, and what is allowed."""


class RougeInputError(ValueError):
    """A text or reference list cannot be scored: says what is wrong and where.

    `reason` is a short code for tables of errors: "wrong_type" (not a text, or
    no references) or "too_costly" (over a work limit of `RougeScorer`).
    """

    def __init__(self, message: str, reason: str = "wrong_type"):
        super().__init__(message)
        self.reason = reason
