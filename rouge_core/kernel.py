"""Which scoring path runs: the optional compiled kernel or the pure-Python reference.

`rouge_core._kernel` (C, built from `rouge_core/_kernel.c` by `pip install` when a
C compiler is present) computes the same per-document statistics as the pure-Python
code in `scoring.py` and `presets/rouge155.py`, which stays the reference and the fallback:

* no compiled module (no compiler at install time, a platform without a wheel,
  a zip import): pure Python, logged once on the "rouge_core" logger;
* `ROUGE_CORE_KERNEL=python` in the environment: pure Python, on purpose;
* `ROUGE_CORE_KERNEL=c`: the compiled kernel, and an error when it is missing.

The kernel hands back None for a pair it does not score itself (a text that is
not a str or a list of str, a pair over a work limit, numbers beyond 2**53);
`RougeScorer` then scores that pair in Python, so the results and the errors are
the same whichever path runs.  `kernel_info()` says which path is active, for
run records; the path never changes a number.
"""

from __future__ import annotations

import logging
import os

from rouge_core import names
from rouge_core.errors import RougeConfigError, RougeInputError
from rouge_core.sentence_split import splitter
from rouge_core.stem import morph_stem, wordnet_exceptions
from rouge_core.stopwords import smart_stopwords
from rouge_core.text import limit_bytes, limit_words, lines, sentences
from rouge_core.types import MetricStats, PreparedText

try:
    from rouge_core import _kernel
except ImportError as error:  # no compiler at install time, or a pure-Python install
    _kernel = None
    _IMPORT_ERROR: str | None = f"{type(error).__name__}: {error}"
else:
    _IMPORT_ERROR = None

ENVIRONMENT_VARIABLE = "ROUGE_CORE_KERNEL"
_log = logging.getLogger("rouge_core")
_logged = False


def _requested() -> str:
    value = os.environ.get(ENVIRONMENT_VARIABLE, "auto").strip().lower() or "auto"
    if value not in ("auto", "c", "python"):
        raise RougeConfigError(f"{ENVIRONMENT_VARIABLE} must be 'auto', 'c' or 'python'; got {value!r}")
    return value


def kernel_info() -> dict:
    """Which scoring path new scorers use, and why.

    Example:
        >>> sorted(kernel_info())
        ['available', 'kernel', 'reason', 'requested']
    """
    requested = _requested()
    if requested == "python":
        kernel, reason = "python", f"{ENVIRONMENT_VARIABLE}=python"
    elif _kernel is None:
        kernel, reason = "python", f"compiled kernel not available ({_IMPORT_ERROR})"
    else:
        kernel, reason = "c", f"compiled kernel {_kernel.__file__.rsplit('/', 1)[-1]}"
    return {"kernel": kernel, "requested": requested, "available": _kernel is not None, "reason": reason}


def perl_draws_adder():
    """The compiled sums of ROUGE-1.5.5's bootstrap (`add_perl_draws(rows, sums,
    columns, resamples, wide=True)`: sums[r] += rows[draw k of resample r] for each
    draw k in order, the script's drand48 draws made as they are used; `wide`: with
    AVX-512 where the CPU has it, the same bits), or None without the
    compiled kernel or under ROUGE_CORE_KERNEL=python, when rouge_core.resampling
    makes the same draws and additions, in the same order, with numpy."""
    if _kernel is None or _requested() == "python":
        return None
    return getattr(_kernel, "add_perl_draws", None)


def poisson_weights_maker():
    """The compiled Poisson(1) bootstrap weights (`poisson_weights(bases, cdf, out,
    replicates)`, rouge_core.resampling.poisson_weight_matrix's arithmetic in C), or
    None without the compiled kernel or under ROUGE_CORE_KERNEL=python, when numpy
    computes the same numbers."""
    if _kernel is None or _requested() == "python":
        return None
    return getattr(_kernel, "poisson_weights", None)


def choose(kernel: str | None) -> str:
    """The path for one scorer: `kernel` is "auto"/None (the environment decides), "c" or "python"."""
    global _logged
    requested = _requested() if kernel in (None, "auto") else kernel
    if requested not in ("auto", "c", "python"):
        raise RougeConfigError(f"kernel must be 'auto', 'c' or 'python'; got {kernel!r}")
    if requested == "c" and _kernel is None:
        raise RougeConfigError(f"the compiled kernel was requested but is not available ({_IMPORT_ERROR})")
    path = "c" if requested != "python" and _kernel is not None else "python"
    if not _logged:
        _logged = True
        info = kernel_info()
        if path == "c":
            _log.info("rouge_core: scoring with the %s", info["reason"])
        elif requested == "python":
            _log.info("rouge_core: scoring in pure Python (%s)", info["reason"])
        else:
            _log.warning("rouge_core: scoring in pure Python, 20-100x slower: %s", info["reason"])
    return path


class CompiledScorer:
    """The compiled kernel set up for one RougeScorer (its settings, stemmer, stopwords, limits).

    With `read_in_python` (the unicode preset, without -b) the preset reads each text in
    Python (`RougeScorer.prepare_pair`: normalising, cutting at -l, tokenizing, stopwords,
    stemming) and the kernel computes ROUGE-1.5.5's metrics on the result: each sentence
    goes to the kernel as its tokens' vocabulary ids written in hex, one ASCII word per
    token.  The metrics compare tokens only for equality, and equal tokens have equal ids
    within a pair, so the statistics are the Python path's.  (Under -b the token stream
    and ROUGE-L's sentences are cut differently, which these words do not carry.)"""

    packs = True  # score_batch(pairs, packed=True)

    def __init__(self, scorer, read_in_python: bool = False) -> None:
        s = scorer.settings
        metrics = scorer.metrics  # presets.rouge155.Rouge155Metrics
        self._settings = s
        if read_in_python and s.byte_limit is not None:
            raise ValueError("read_in_python needs settings without -b")
        # -l/-b: Python cuts the texts (text.py) and the kernel reads the cut sentences;
        # with read_in_python the preset has cut them already.
        self._limited = (s.word_limit is not None or s.byte_limit is not None) and not read_in_python
        self._prepare_pair = scorer.prepare_pair if read_in_python else None
        # A sentence_split other than "newline": Python cuts the sentences, C scores them.
        self._split = None if read_in_python else splitter(s.sentence_split)
        self._kernel = _kernel.Kernel(
            tags=[(tag, *names.parse(tag).kernel_spec()) for tag in scorer.tags],  # parsed: the kernel reads no tag
            max_ngram=s.max_ngram,
            rouge_l=s.rouge_l,
            wlcs=s.wlcs_weight is not None,
            skip=s.skip_distance is not None,
            gap=-1 if s.gap_limit is None else s.gap_limit,
            stemming=s.stemming and not read_in_python,
            stem=morph_stem,
            stopwords=set(smart_stopwords()) if s.remove_stopwords and not read_in_python else None,
            alpha=metrics.alpha,
            inverse=1 / metrics.weight,
            weight_of=metrics.weight_of,
            mode=("average", "best", "jackknife").index(s.multi_reference),
            max_skip_bigrams=scorer.max_skip_bigrams,
            max_lcs_cells=scorer.max_lcs_cells,
            limited=self._limited,
            stats_type=MetricStats,
            # the stemmer in C
            exceptions=wordnet_exceptions() if s.stemming and not read_in_python else None,
        )

    def _cut(self, text):
        """-l / -b: the sentence lists scoring.RougeScorer._prepare reads (text.py does the cutting)."""
        s = self._settings
        sents = sentences(text, self._split)
        if s.word_limit is not None:
            return (limit_words(sents, s.word_limit), None)
        return (limit_bytes(sents, s.byte_limit), limit_bytes(sents, s.byte_limit, lcs_bug=True))

    def score_batch(self, pairs: list, packed: bool = False) -> list:
        """One dict of MetricStats per (candidate, references), or None: score that pair
        in Python.  `packed`: each pair's statistics as `rouge_core.aggregate.stats_bytes`
        packs them (float64 bytes, the six MetricStats fields per metric in the
        scorer's tag order), made in C with no MetricStats on the way."""
        if self._prepare_pair is not None:
            pairs = [self._read(pair) for pair in pairs]
        elif self._limited:
            cut = []
            for pair in pairs:
                try:
                    candidate, references = pair
                    if not isinstance(references, (list, tuple)) or not references:
                        raise TypeError("not a list of references")
                    cut.append((self._cut(candidate), [self._cut(r) for r in references]))
                except (RougeInputError, TypeError, ValueError):
                    cut.append(None)  # Python scores it and raises the reference error
            pairs = cut
        elif self._split is not None:
            pairs = [self._presplit(pair) for pair in pairs]
        return self._kernel.score_batch_packed(pairs) if packed else self._kernel.score_batch(pairs)

    def _read(self, pair):
        """(candidate, references) read in Python, as the kernel's lists of sentences of
        id words; None (Python then scores the pair and raises its error) for a pair
        that is not texts."""
        try:
            candidate, references = pair
            cand, refs = self._prepare_pair(candidate, references)
        except (RougeInputError, TypeError, ValueError):
            return None
        return (_id_words(cand), [_id_words(r) for r in refs])

    def _presplit(self, pair):
        """(candidate, references) as lists of sentences (the kernel reads a list's
        items as sentences), or the pair unchanged when it is not texts (Python
        then raises its error)."""
        try:
            candidate, references = pair
            if not isinstance(references, (list, tuple)):
                return pair
            return (lines(candidate, self._split), [lines(r, self._split) for r in references])
        except (RougeInputError, TypeError, ValueError):
            return pair


def _id_words(text: PreparedText) -> list[str]:
    """A prepared text's sentences, each its token ids in hex joined by spaces ("a 1f 3"),
    " " for a sentence without tokens (kept, as Python keeps it); memoised on the text
    (a reference's PreparedText is cached by the scorer)."""
    words = text.counts.get("id_words")
    if words is None:
        ids, at, words = text.ids, 0, []
        for sentence in text.sentences:
            words.append(" ".join([format(i, "x") for i in ids[at : at + len(sentence)]]) or " ")
            at += len(sentence)
        text.counts["id_words"] = words
    return words


# ------------------------------------------------------------------ the rouge_score preset
# rouge_core/_rouge_score_kernel.c, compiled into the same module: rouge-score 0.1.2's
# rougeN / rougeL / rougeLsum with its tokenizer and score_multi's best F.
ROUGE_SCORE_FAMILIES = {"n": 0, "lcs": 1, "lcs_sentences": 2}


def rouge_score_family(metric) -> str | None:
    """The compiled rouge_score kernel's family of a metric (a `rouge_core.names.MetricName`):
    "n" (rougeN), "lcs" (rougeL), "lcs_sentences" (rougeLsum), or None when the
    kernel does not score it (rougeW, skip-bigrams: those stay in Python)."""
    if metric.family == "n":
        return "n"
    if metric.family == "L":
        return "lcs_sentences" if metric.summary_level else "lcs"
    return None


def rouge_score_kernel_available() -> bool:
    """Whether the compiled module has the rouge_score kernel (a build older than it has not)."""
    return _kernel is not None and hasattr(_kernel, "RougeScoreKernel")


# Words that take every rule of NLTK's Porter stemmer (each suffix on short and long
# stems, and NLTK's irregular forms): the compiled stemmer is used only when it gives
# NLTK's own stem for each of them.
_PROBE_STEMS = ("", "r", "tr", "happ", "gener", "conn", "hop", "fil", "agr", "y", "oat", "feud", "electr",
                "sens", "contr", "bowdl", "ceas", "roll", "a1", "sky")
_PROBE_SUFFIXES = (
    "", "s", "sses", "ies", "ss", "ied", "eed", "ed", "ing", "ating", "bled", "izing", "lling", "ssed", "y",
    "ational", "tional", "enci", "anci", "izer", "bli", "alli", "entli", "eli", "ousli", "ization", "ation",
    "ator", "alism", "iveness", "fulness", "ousness", "aliti", "iviti", "biliti", "fulli", "logi", "icate",
    "ative", "alize", "iciti", "ical", "ful", "ness", "al", "ance", "ence", "er", "ic", "able", "ible", "ant",
    "ement", "ment", "ent", "sion", "tion", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize", "e", "ll",
    "ying", "yy", "ly",
)
_PROBE_WORDS = "sky skies dying lying tying news innings inning outings outing cannings canning howe proceed exceed succeed"
_compiled_porter_checked: dict = {}


def compiled_porter(stem):
    """"nltk-porter" (the kernel's own C port of NLTK's Porter stemmer) when `stem` is
    NLTK's `PorterStemmer().stem` in its default mode and the port gives its stems on
    every probe word (once per process); else `stem` itself, which the kernel calls
    once per distinct token (another NLTK version, another stemmer)."""
    owner = getattr(stem, "__self__", None)
    if owner is None or type(owner).__name__ != "PorterStemmer" or getattr(owner, "mode", None) != getattr(
        owner, "NLTK_EXTENSIONS", object()
    ):
        return stem
    key = type(owner).__module__
    if key not in _compiled_porter_checked:
        probes = [s + x for s in _PROBE_STEMS for x in _PROBE_SUFFIXES] + _PROBE_WORDS.split()
        differing = [w for w in probes if _kernel.nltk_porter_stem(w) != stem(w)]
        if differing:
            _log.warning(
                "rouge_core: the compiled Porter stemmer differs from this NLTK's on %d probe words (e.g. %r); "
                "stemming through NLTK",
                len(differing),
                differing[0],
            )
        _compiled_porter_checked[key] = not differing
    return "nltk-porter" if _compiled_porter_checked[key] else stem


class CompiledRougeScore:
    """The compiled rouge_score kernel for one list of rouge types.

    Args:
        types: `rouge_core.names.MetricName`s that `rouge_score_family` places.
        stem: NLTK's `PorterStemmer().stem`, or None.  The kernel stems with its C
            port of it (`compiled_porter`), or else calls it once per distinct
            token longer than 3 characters; either way the stems are cached.
        result_type: the named tuple the results are built as.
        layout: 0 for `(precision, recall, fmeasure)` as rouge-score's `Score`, with
            its int 0s for rougeL/rougeLsum when a side has no tokens; 1 for
            `MetricStats`, as the rouge_score preset scores.
        max_cells: a pair whose candidate tokens x reference tokens exceed it
            gives None (scored, and refused, in Python); None for no limit.

    `score(candidate, references)` and `score_batch(pairs)` give, per pair, a dict
    of `result_type` by type name (the best F over the references, the first on
    ties), or None for a pair the kernel does not score (not a str candidate with a
    non-empty list of str references, or over max_cells).
    """

    def __init__(self, types, *, stem, result_type, layout: int, max_cells: int | None = None) -> None:
        if not rouge_score_kernel_available():
            raise RougeConfigError(f"the compiled rouge_score kernel is not available ({_IMPORT_ERROR or 'old build'})")
        spec = [(t.tag("rouge_score"), ROUGE_SCORE_FAMILIES[rouge_score_family(t)], t.n) for t in types]
        self.stemmer = None if stem is None else compiled_porter(stem)
        self._kernel = _kernel.RougeScoreKernel(spec, self.stemmer, result_type, layout, -1 if max_cells is None else max_cells)
        self.score = self._kernel.score

    def score_batch(self, pairs) -> list:
        return self._kernel.score_batch(pairs)
