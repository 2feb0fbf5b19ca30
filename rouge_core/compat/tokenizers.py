"""rouge-score's `rouge_score.tokenizers`: a `Tokenizer` has `tokenize(text)`.

`DefaultTokenizer(use_stemmer)` is rouge-score's default: `tokenize.tokenize` with
NLTK's `PorterStemmer()` when stemming.  A `RougeScorer` given a DefaultTokenizer
(or none) scores on the compiled kernel; any other tokenizer object is called from
Python, exactly as rouge-score calls it.
"""

from __future__ import annotations

import abc

from rouge_core.compat.tokenize import ensure_str
from rouge_core.presets.rouge_score import tokenize as _preset_tokenize


class Tokenizer(abc.ABC):
    """Abstract base class for a tokenizer: subclasses override `tokenize(text)`."""

    @abc.abstractmethod
    def tokenize(self, text):
        raise NotImplementedError("Tokenizer must override tokenize() method")


class DefaultTokenizer(Tokenizer):
    """rouge-score's default tokenizer, optionally with the Porter stemmer.

    Example:
        >>> DefaultTokenizer(use_stemmer=True).tokenize("Cats are running fast")
        ['cat', 'are', 'run', 'fast']
    """

    def __init__(self, use_stemmer: bool = False) -> None:
        self.use_stemmer = bool(use_stemmer)

    def tokenize(self, text):
        # presets.rouge_score.tokenize is rouge-score's tokenize.tokenize with
        # porter.PorterStemmer().stem behind a cache (tests/core/compat checks both).
        if type(text) is str:
            return _preset_tokenize(text, self.use_stemmer)
        # rouge-score's order: lower() first (None, a number: its AttributeError), then
        # six.ensure_str (bytes decoded as UTF-8; a bytearray: TypeError), never lowered again.
        return _preset_tokenize(ensure_str(text.lower()), self.use_stemmer, lower=False)
