"""Live differential test: rouge_core against the official ROUGE-1.5.5 Perl script.

Every run draws a fresh seed (or takes ROUGE_DIFF_SEED), prints it, and from it
generates DOCS (>= 300) random documents and COMBOS (>= 10) random ROUGE-1.5.5
flag combinations.  For each combination the report of `render_report` must be
byte-identical to the script's stdout (`-a -d`: per-document lines, averages and
confidence intervals).  The script's stderr (warnings about missing peers and
empty texts) is not compared.  One difference is allowed, the one the README
documents under "Known differences": a ROUGE-W raw count above 10**15 in a
-t 1/-t 2 -d line that Perl prints in full and rouge_core with %.15g, the same
number at 15 digits.

The documents mix random lengths, empty and punctuation-only candidates and
references, a small vocabulary with many repeats, inflected words that stem,
stopwords, punctuation, hyphens, digits, non-ASCII text, empty and
whitespace-only sentences, CRLF, tabs, leading spaces, both text forms (str and
list of sentences), 1-5 references per document, 2-3 systems and systems that
miss some documents.

Time budget: the script scores about 25 documents a second on this 2-core
machine, so a combination does not score every document.  Each document is
first given to one combination (round robin over the combinations allowed for
it), then every combination is topped up with random documents to at least
SUBSET (>= 60) documents: each combination scores a random subset of >= 60
documents and the union of the subsets covers all the generated documents.
The Perl runs go two at a time in the background while the Python side scores.
A whole run takes 15-30 seconds here.

ROUGE-W: the script dies ("Illegal division by zero") on a reference without
tokens; rouge_core scores that reference 0.  So only "W-safe" documents, whose
references all start with a non-stopword token of at most 7 bytes (-b is never
below 8), go to combinations with -w; the others go to the rest, so every
combination is compared.

Both scoring paths run: the pure-Python report is compared with the script's,
and the compiled kernel's report (one score_batch call) must equal it.

Replay a failure: ROUGE_DIFF_SEED=<seed> pytest tests/test_differential.py
(add -k cNN for one combination).  On a mismatch the message shows the seed,
the flags, the first differing lines, the inputs of the first differing
document, and a reproduction shrunk against the script (one document, fewest
references, sentences, words and flags that still differ).
"""

from __future__ import annotations

import concurrent.futures
import difflib
import math
import os
import random
import re
import time

import pytest

from rouge_core import RougeScorer, RougeSettings, kernel_info, render_report
from tests.oracle import find_rouge155_home, run_rouge155

pytestmark = pytest.mark.oracle

SEED = int(os.environ.get("ROUGE_DIFF_SEED") or random.SystemRandom().randrange(2**32))
DOCS = max(300, int(os.environ.get("ROUGE_DIFF_DOCS") or 600))
COMBOS = max(10, int(os.environ.get("ROUGE_DIFF_COMBOS") or 20))
SUBSET = max(60, int(os.environ.get("ROUGE_DIFF_SUBSET") or 150))
SHRINK_SECONDS = float(os.environ.get("ROUGE_DIFF_SHRINK_SECONDS") or 90)
PERL_TIMEOUT = 900

print(f"\nrouge differential test: ROUGE_DIFF_SEED={SEED}")

# ------------------------------------------------------------------ vocabulary
# Content words and inflected forms that the -m stemmer or the WordNet
# exceptions change (running, cats, governmental, better -> well, women -> woman).
CONTENT = ["cat", "cats", "dog", "dogs", "mat", "sat", "run", "running", "runs", "ran", "government",
           "governmental", "govern", "good", "better", "best", "well", "woman", "women", "men", "man",
           "child", "children", "study", "studies", "studied", "studying", "happy", "happily",
           "happiness", "general", "generalization", "generalizations", "relational", "conditional",
           "ability", "abilities", "went", "goes", "mice", "mouse", "geese", "feet", "leaves",
           "hopping", "hoped", "sensational", "electrical", "formality", "adjustment", "dependent",
           "adoption", "irritant", "replacement", "caresses", "ponies", "ties", "agreed", "motoring",
           "sing", "filing", "tanned", "falling", "hissing", "fizzed", "failing", "troubled", "sized",
           "hopeful", "goodness", "triplicate", "formative", "formalize", "revival", "allowance",
           "inference", "airliner", "adjustable", "defensible", "effective", "probate", "cease",
           "axes", "criteria", "data", "analyses", "oxen", "knives", "wolves", "saw", "seen",
           "news", "model", "models", "modeling", "summary", "summaries", "summarization",
           "rouge", "score", "scores", "scored", "eval", "evaluation", "evaluations", "was", "has",
           "does", "did", "is", "are"]
STOPWORDS = ["the", "a", "of", "and", "to", "in", "on", "it", "was", "be", "at", "by", "for", "not",
             "this", "that", "with", "i", "s", "t", "which", "would", "also"]
DIGITS = ["1", "42", "2024", "3.14", "1,000", "007", "10th", "x2", "a1b2", "99%", "0"]
HYPHENS = ["well-known", "state-of-the-art", "-", "--", "e-mail", "co-operate", "-ing", "re-", "x-1"]
PUNCT = [".", ",", ";", ":", "!", "?", "(", ")", "'s", "don't", '"quoted"', "U.S.", "...", "&",
         "$5", "#tag", "@me", "a/b", "[x]", "'", "``", "<p>", "&amp;"]
NON_ASCII = ["café", "über", "naïve", "中文", "中", "😀", "é", "ü", "Ωmega", "straße", "\u212a",
             "\ufb01le", "İstanbul", "ß", "résumé", "日本語のテキスト", "x\u200by", "—", "«cat»"]
JOINERS = [" "] * 30 + ["  ", "\t", " \t ", "\x0b", "\x0c", "\r", "\u00a0", "\u2028", "\x85", "\x00", "\x1c", ""]
ODD_SENTENCES = ["", " ", "\t", "   ", ".", "- -", "…", "\r", " \r", "!!", "中"]
# Safe first words of a W-safe reference: no stopword, at most 7 bytes.
W_SAFE_WORDS = ["cats", "dog", "mat", "running", "women", "x42", "geese", "studies", "mice", "dogs"]
SYSTEM_NAMES = ["sysA", "sysB", "S10", "S9", "peer_x", "Z-last", "a1", "M", "baseline"]

_WEIGHTS = ["1.2", "1.2", "1.2", "1.5", "2", "1", "1.0", "0.8", "3.5", "1.20"]
_ALPHAS = ["0.5", "0.5", "0.5", "0", "1", "0.25", "0.8", ".5", "0.33"]
_CONFIDENCES = ["95", "95", "90", "83", "99", "50", "99.9", "100", "95.0", "0"]
_GAPS = ["-1", "0", "1", "4", "4", "2", "9"]


# ------------------------------------------------------------------ generation
class Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def word(self, pool: list[str]) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.55:
            w = rng.choice(pool)
        elif r < 0.70:
            w = rng.choice(STOPWORDS)
        elif r < 0.78:
            w = rng.choice(DIGITS)
        elif r < 0.85:
            w = rng.choice(HYPHENS)
        elif r < 0.92:
            w = rng.choice(PUNCT)
        else:
            w = rng.choice(NON_ASCII)
        r = rng.random()
        if r < 0.10:
            w = w.capitalize()
        elif r < 0.14:
            w = w.upper()
        if rng.random() < 0.10:
            w += rng.choice([".", ",", ";", "!", "?", "'s", ")"])
        return w

    def sentence(self, pool: list[str], max_words: int = 14) -> str:
        rng = self.rng
        if rng.random() < 0.08:
            return rng.choice(ODD_SENTENCES)
        n = rng.choice([1, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, max_words, rng.randint(1, max_words)])
        words = [self.word(pool) for _ in range(n)]
        s = words[0]
        for w in words[1:]:
            s += rng.choice(JOINERS) + w
        if rng.random() < 0.10:  # a leading separator is an empty first word for -l
            s = rng.choice([" ", " ", "  ", "\t", "\x0b", "\x0c", "\r", "\u00a0", "\x85", " \t"]) + s
        if rng.random() < 0.05:
            s += rng.choice([" ", "\t", "\r"])
        return s

    def as_text(self, sents: list[str]):
        """A str (sentences joined by LF or CRLF) or a list of sentences."""
        rng = self.rng
        if rng.random() < 0.5:
            if rng.random() < 0.1 and sents:  # a "\n" inside an element reads as a space
                i = rng.randrange(len(sents))
                sents = sents[:i] + [sents[i] + "\n" + self.sentence(["cats", "dog"], 3)] + sents[i + 1:]
            return list(sents)
        sep = rng.choice(["\n"] * 6 + ["\r\n", "\r\n", "\n\n"])
        text = sep.join(sents)
        if rng.random() < 0.5:
            text += rng.choice(["\n", "\r\n", "\n\n"])
        return text

    def empty_text(self):
        return self.rng.choice(["", "\n", "\n\n", [], [""], ["", ""], " ", ["\t"], "\r\n"])

    def punct_text(self):
        rng = self.rng
        sents = [" ".join(rng.choice(PUNCT[:16] + ["-", "--", "…", "中", "😀"]) for _ in range(rng.randint(1, 5)))
                 for _ in range(rng.randint(1, 3))]
        return self.as_text(sents)

    def mutate(self, sents: list[str], pool: list[str]) -> list[str]:
        rng = self.rng
        out = []
        for s in sents:
            words = s.split(" ")
            for _ in range(rng.randint(0, 4)):
                op = rng.random()
                i = rng.randrange(len(words) + 1)
                if op < 0.3 and words:
                    del words[min(i, len(words) - 1)]
                elif op < 0.6:
                    words.insert(i, self.word(pool))
                elif op < 0.8 and len(words) > 1:
                    j = rng.randrange(len(words))
                    k = rng.randrange(len(words))
                    words[j], words[k] = words[k], words[j]
                elif words:
                    j = min(i, len(words) - 1)
                    words.insert(j, words[j])
            if words or rng.random() < 0.5:
                out.append(" ".join(words))
        if rng.random() < 0.2:
            rng.shuffle(out)
        if rng.random() < 0.2:
            out.append(self.sentence(pool))
        return out

    def document(self, index: int, doc_id: str, systems: list[str]) -> dict:
        rng = self.rng
        style = rng.random()
        if style < 0.15:  # long texts from a tiny vocabulary: many LCS ties, heavy clipping
            pool, max_words, n_sents = rng.sample(CONTENT, rng.randint(1, 4)), 40, [3, 4, 5, 6, 8]
        elif style < 0.30:  # a few words from two or three
            pool, max_words, n_sents = rng.sample(CONTENT, rng.randint(1, 3)), 3, [1, 1, 2]
        else:
            pool, max_words, n_sents = rng.sample(CONTENT, rng.randint(3, 12)), 14, [1, 1, 2, 2, 3, 4, 5]
        w_safe = rng.random() < 0.6
        ref_sents = []
        references = []
        for _ in range(rng.choice([1, 1, 2, 2, 3, 3, 4, 5])):
            r = rng.random()
            sents = [self.sentence(pool, max_words) for _ in range(rng.choice(n_sents))]
            if w_safe:
                sents[0] = rng.choice(W_SAFE_WORDS) + " " + sents[0].lstrip(" \t")
            elif r < 0.10:
                references.append(self.empty_text())
                continue
            elif r < 0.17:
                references.append(self.punct_text())
                continue
            elif r < 0.22:
                sents = [" ".join(rng.choice(STOPWORDS) for _ in range(rng.randint(1, 6)))]
            ref_sents.append(sents)
            references.append(self.as_text(sents))
        present = [s for s in systems if rng.random() < 0.85] or [rng.choice(systems)]
        candidates = {}
        for system in present:
            r = rng.random()
            if r < 0.07:
                cand = self.empty_text()
            elif r < 0.11:
                cand = self.punct_text()
            elif r < 0.25 and ref_sents:
                cand = self.as_text(list(rng.choice(ref_sents)))  # same words as a reference
            elif r < 0.70 and ref_sents:
                cand = self.as_text(self.mutate(rng.choice(ref_sents), pool))
            else:
                cand = self.as_text([self.sentence(pool, max_words) for _ in range(rng.choice(n_sents + [6]))])
            candidates[system] = cand
        return {"index": index, "doc_id": doc_id, "references": references,
                "candidates": candidates, "w_safe": w_safe}

    def doc_ids(self, n: int) -> list[str]:
        """Unique ids of mixed shapes.  The leading numbers are unique too: the
        script's by_evalID ties equal numbers, and a tie prints in hash order."""
        rng = self.rng
        numbers = rng.sample(range(1, 20 * n), n)
        ids = []
        for k, number in enumerate(numbers):
            shape = rng.random()
            if shape < 0.35:
                ids.append(str(number))
            elif shape < 0.50:
                ids.append(f"{number}{rng.choice(['x', '_b', '-c', 'A'])}")
            elif shape < 0.75:
                ids.append(f"doc{number}")
            elif shape < 0.85:
                ids.append(f"D{number}")
            elif shape < 0.92:
                ids.append(f"_{number}")
            else:
                ids.append(f"+{number}")
        return ids

    def flags(self, allow_w: bool = True) -> list[tuple[str, str | None]]:
        """One random combination as (option letter, value or None) pairs."""
        rng = self.rng
        opts: list[tuple[str, str | None]] = [("n", str(rng.randint(1, 4)))]
        if rng.random() < 0.5:
            opts.append(("m", None))
        if rng.random() < 0.3:
            opts.append(("s", None))
        r = rng.random()
        if r < 0.25:
            opts.append(("l", str(rng.choice([1, 2, 3, 5, 8, 10, 15, 25, 40]))))
        elif r < 0.45:
            opts.append(("b", str(rng.choice([8, 9, 12, 20, 33, 50, 75, 100, 150]))))
        if rng.random() < 0.15:
            opts.append(("x", None))
        if allow_w and rng.random() < 0.5:
            opts.append(("w", rng.choice(_WEIGHTS)))
        if rng.random() < 0.65:
            opts.append(("2", rng.choice(_GAPS)))
            r = rng.random()
            if r < 0.4:
                opts.append(("u", None))
            elif r < 0.65:
                opts.append(("U", None))
            elif r < 0.7:
                opts += [("u", None), ("U", None)]
        opts.append(("f", rng.choice("AB")))
        opts.append(("p", rng.choice(_ALPHAS)))
        opts.append(("c", rng.choice(_CONFIDENCES)))
        opts.append(("r", str(1 if rng.random() < 0.08 else rng.randint(10, 200))))
        opts.append(("t", rng.choice("0000112")))
        opts.append(("d", None))
        rng.shuffle(opts)
        return opts


def flag_string(opts, rng: random.Random | None = None) -> str:
    """Flags as typed; with an rng, sometimes bundled (-ms) or attached (-n2)."""
    parts: list[str] = []
    bundle = False  # whether parts[-1] is a group of switches that can take one more
    for letter, value in opts:
        if value is None:
            if rng is not None and bundle and rng.random() < 0.3:
                parts[-1] += letter
            else:
                parts.append(f"-{letter}")
            bundle = True
        else:
            if rng is not None and rng.random() < 0.15 and not value.startswith("-"):
                parts.append(f"-{letter}{value}")
            else:
                parts += [f"-{letter}", value]
            bundle = False
    return " ".join(parts)


def make_plan(seed: int):
    gen = Generator(seed)
    systems = gen.rng.sample(SYSTEM_NAMES, gen.rng.choice([2, 3, 3]))
    ids = gen.doc_ids(DOCS)
    docs = [gen.document(i, doc_id, systems) for i, doc_id in enumerate(ids)]
    combos = [gen.flags() for _ in range(COMBOS)]
    # At least a third of the combinations without -w take the documents that
    # would crash the script's ROUGE-W.
    no_w = [i for i, c in enumerate(combos) if not any(k == "w" for k, _ in c)]
    while len(no_w) < math.ceil(COMBOS / 3):
        i = gen.rng.choice([i for i in range(COMBOS) if i not in no_w])
        combos[i] = [(k, v) for k, v in combos[i] if k != "w"]
        no_w.append(i)
    strings = [flag_string(c, gen.rng) for c in combos]
    # Every document goes to one combination first, then each is topped up.
    members: list[set[int]] = [set() for _ in combos]
    for doc in gen.rng.sample(docs, len(docs)):
        eligible = range(COMBOS) if doc["w_safe"] else no_w
        smallest = min(len(members[i]) for i in eligible)
        members[gen.rng.choice([i for i in eligible if len(members[i]) == smallest])].add(doc["index"])
    for i in range(COMBOS):
        eligible = [d["index"] for d in docs if (d["w_safe"] or i in no_w) and d["index"] not in members[i]]
        need = max(0, SUBSET - len(members[i]))
        members[i].update(gen.rng.sample(eligible, min(need, len(eligible))))
    plan = [{"index": i, "opts": combos[i], "flags": strings[i], "docs": sorted(members[i])}
            for i in range(COMBOS)]
    return docs, plan


DOC_LIST, PLAN = make_plan(SEED)


def cases_of(doc_indices) -> list[dict]:
    return [{"system": system, "doc_id": DOC_LIST[d]["doc_id"], "candidate": cand,
             "references": DOC_LIST[d]["references"]}
            for d in doc_indices for system, cand in DOC_LIST[d]["candidates"].items()]


def core_report(cases: list[dict], flags: str, kernel: str = "python") -> str:
    """rouge_core's report: scored one by one in pure Python, or in one batch by the compiled kernel."""
    settings = RougeSettings.from_flags(flags)
    scorer = RougeScorer(settings, kernel=kernel)
    if kernel == "c":
        scores = scorer.score_batch([(case["candidate"], case["references"]) for case in cases])
    else:
        scores = [scorer.score(candidate=case["candidate"], references=case["references"]) for case in cases]
    results: dict = {}
    for case, score in zip(cases, scores):
        results.setdefault(case["system"], {})[case["doc_id"]] = score
    return render_report(results, settings)


# ------------------------------------------------------------------ the oracle
@pytest.fixture(scope="module")
def rouge155_home():
    home = find_rouge155_home()
    if home is None:
        message = ("the official ROUGE-1.5.5 script is not installed (no .oracle and no "
                   "ROUGE155_HOME): run scripts/install_oracle.sh")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return home


@pytest.fixture(scope="module")
def perl_runs(request, rouge155_home):
    """The script's output for every selected combination, run two at a time in
    the background as soon as the first test asks."""
    wanted = sorted({item.callspec.params["combo"] for item in request.session.items
                     if getattr(item, "module", None) is request.module and hasattr(item, "callspec")
                     and "combo" in item.callspec.params})
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:  # shown even when output is captured
        with capture.global_and_fixture_disabled():
            reporter.write_line(f"rouge differential test: ROUGE_DIFF_SEED={SEED} ({len(DOC_LIST)} documents, "
                                f"{len(PLAN)} flag combinations, {len(wanted)} selected)")
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    futures = {i: pool.submit(run_rouge155, cases_of(PLAN[i]["docs"]), PLAN[i]["flags"],
                              rouge155_home, PERL_TIMEOUT) for i in wanted}
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


def test_plan_covers_every_document():
    covered = set().union(*(set(c["docs"]) for c in PLAN))
    assert len(DOC_LIST) >= 300 and len(PLAN) >= 10, f"seed={SEED}"
    assert covered == set(range(len(DOC_LIST))), f"seed={SEED}: documents not scored by any combination"
    assert all(len(c["docs"]) >= 60 for c in PLAN), f"seed={SEED}"
    for c in PLAN:
        if any(letter == "w" for letter, _ in c["opts"]):
            assert all(DOC_LIST[d]["w_safe"] for d in c["docs"]), f"seed={SEED} {c['flags']}"


def _combo_id(combo: dict) -> str:
    return f"seed{SEED}-c{combo['index']:02d}[{combo['flags'].replace(' ', '')}]"


@pytest.mark.parametrize("combo", [c["index"] for c in PLAN], ids=[_combo_id(c) for c in PLAN])
def test_report_matches_rouge155(combo, perl_runs, rouge155_home):
    plan = PLAN[combo]
    flags = plan["flags"]
    cases = cases_of(plan["docs"])
    where = (f"seed={SEED} combo c{combo:02d} flags {flags!r} ({len(plan['docs'])} docs, {len(cases)} cases); "
             f"replay: ROUGE_DIFF_SEED={SEED} pytest tests/test_differential.py -k c{combo:02d}")
    print(where)
    ours = core_report(cases, flags)
    if kernel_info()["available"] or os.environ.get("CI"):  # the compiled kernel must print the same
        compiled = core_report(cases, flags, kernel="c")
        if compiled != ours:
            lines = _differing_lines(ours, compiled)
            pytest.fail(f"{where}\nthe compiled kernel's report differs from the pure-Python one in "
                        f"{len(lines)} line(s); first: {lines[:3]}", pytrace=False)
    returncode, expected, stderr = perl_runs[combo].result()
    assert returncode == 0, f"{where}\nROUGE-1.5.5 exited {returncode}:\n{stderr[-3000:]}"
    if ours != expected and not _same_but_perl_integer_flags(expected, ours):
        pytest.fail(explain_mismatch(where, plan, cases, expected, ours, rouge155_home), pytrace=False)


_COUNT_FIELDS = re.compile(r"^(\S+ ROUGE-W-\S+ Eval \S+) R:(\S+) P:(\S+) F:(\S+)$")


def _same_but_perl_integer_flags(expected: str, ours: str) -> bool:
    """The one documented difference (README, "Known differences"; rouge_core.perl_numbers):
    a ROUGE-W raw count (-t 1/-t 2 -d) above 10**15 that Perl prints in full because
    an earlier addition read it as an exact integer, printed here with %.15g.  Such
    lines must still agree on every number at Perl's 15 printed digits."""
    exp, got = expected.splitlines(), ours.splitlines()
    if len(exp) != len(got):
        return False
    for e, g in zip(exp, got):
        if e == g:
            continue
        me, mg = _COUNT_FIELDS.match(e), _COUNT_FIELDS.match(g)
        if not (me and mg and me.group(1) == mg.group(1)):
            return False
        for a, b in zip(me.groups()[1:], mg.groups()[1:]):
            if a != b and not (max(float(a), float(b)) >= 1e15 and "%.15g" % float(a) == "%.15g" % float(b)):
                return False
    return True


# ------------------------------------------------------------------ reporting a mismatch
_EVAL_LINE = re.compile(r"^(\S+) (\S+) Eval (\S+) R:")


def _differing_lines(expected: str, ours: str) -> list[tuple[int, str, str]]:
    exp, got = expected.splitlines(), ours.splitlines()
    if len(exp) == len(got):
        return [(i + 1, e, g) for i, (e, g) in enumerate(zip(exp, got)) if e != g]
    diff = list(difflib.unified_diff(exp, got, "ROUGE-1.5.5", "rouge_core", n=0, lineterm=""))
    return [(0, "\n".join(diff[:60]), "")]


def _doc_of_line(line: str, cases: list[dict]):
    m = _EVAL_LINE.match(line)
    if not m:
        return None
    system, instance = m.group(1), m.group(3)
    doc_id = instance[: -len(system) - 1] if instance.endswith("." + system) else instance
    for case in cases:
        if case["doc_id"] == doc_id and case["system"] == system:
            return case
    return None


def explain_mismatch(where, plan, cases, expected, ours, home) -> str:
    lines = _differing_lines(expected, ours)
    per_doc = [line for line in lines if _EVAL_LINE.match(line[1])]
    shown = lines[:6] + [line for line in per_doc[:6] if line not in lines[:6]]
    out = [f"rouge_core differs from ROUGE-1.5.5: {where}",
           f"{len(lines)} differing line(s), {len(per_doc)} of them per-document; the first ones:"]
    for number, e, g in shown:
        if number == 0:
            out.append(e)
        else:
            out += [f"  line {number}:", f"    ROUGE-1.5.5: {e}", f"    rouge_core : {g}"]
    case = next((c for _, e, _ in lines if (c := _doc_of_line(e, cases))), None)
    if case is None:
        out.append("only averages/intervals differ (no per-document line): a bootstrap/averaging "
                   "mismatch over all the documents of this combination")
        return "\n".join(out)
    out += ["inputs of the first differing document:", f"  system={case['system']!r} doc_id={case['doc_id']!r}",
            f"  candidate={case['candidate']!r}", f"  references={case['references']!r}"]
    try:
        out += shrink(case, plan["opts"], home)
    except Exception as exc:  # the explanation must not hide the mismatch
        out.append(f"(shrinking failed: {exc!r})")
    return "\n".join(out)


# ------------------------------------------------------------------ shrinking
def _differs(case: dict, flags: str, home) -> tuple[bool, str, str]:
    """(differs, perl stdout, ours) for one case alone; False when the script dies."""
    one = [{**case, "doc_id": "1", "system": "S"}]
    returncode, expected, _ = run_rouge155(one, flags, home, PERL_TIMEOUT)
    if returncode != 0:
        return False, expected, ""
    ours = core_report(one, flags)
    return ours != expected, expected, ours


def _units(text):
    """A text as a list of sentences plus how to put it back."""
    if isinstance(text, str):
        return text.split("\n"), (lambda parts: "\n".join(parts))
    return list(text), list


def shrink(case: dict, opts, home) -> list[str]:
    """Greedy reduction of one differing document against the script."""
    deadline = time.monotonic() + SHRINK_SECONDS
    opts = [o for o in opts if o[0] != "d"] + [("d", None)]
    ok, _, _ = _differs(case, flag_string(opts), home)
    if not ok:
        return ["(this document alone does not reproduce the difference: it depends on the others)"]
    case = dict(case, system="S", doc_id="1")

    def attempt(candidate_case, candidate_opts) -> bool:
        return time.monotonic() < deadline and _differs(candidate_case, flag_string(candidate_opts), home)[0]

    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        # Flags: drop options, and lower -n.
        for i in range(len(opts)):
            if i < len(opts) and opts[i][0] not in ("d",):
                trial = opts[:i] + opts[i + 1:]
                if attempt(case, trial):
                    opts, changed = trial, True
        # References: keep fewer.
        i = 0
        while len(case["references"]) > 1 and i < len(case["references"]):
            trial = dict(case, references=case["references"][:i] + case["references"][i + 1:])
            if attempt(trial, opts):
                case, changed = trial, True
            else:
                i += 1
        # Sentences, then space-separated words, of every text.
        for slot in ["candidate"] + list(range(len(case["references"]))):
            def get(c, s=slot):
                return c["candidate"] if s == "candidate" else c["references"][s]

            def put(c, value, s=slot):
                if s == "candidate":
                    return dict(c, candidate=value)
                refs = list(c["references"])
                refs[s] = value
                return dict(c, references=refs)

            parts, build = _units(get(case))
            j = 0
            while j < len(parts):
                trial_parts = parts[:j] + parts[j + 1:]
                if attempt(put(case, build(trial_parts)), opts):
                    parts, case, changed = trial_parts, put(case, build(trial_parts)), True
                else:
                    j += 1
            for j in range(len(parts)):
                words = parts[j].split(" ")
                k = 0
                while k < len(words) and len(words) > 1:
                    trial_words = words[:k] + words[k + 1:]
                    trial_parts = parts[:j] + [" ".join(trial_words)] + parts[j + 1:]
                    if attempt(put(case, build(trial_parts)), opts):
                        words, parts, case, changed = trial_words, trial_parts, put(case, build(trial_parts)), True
                    else:
                        k += 1
    flags = flag_string(opts)
    _, expected, ours = _differs(case, flags, home)
    diff = _differing_lines(expected, ours)
    out = ["shrunk reproduction (one document, system 'S', eval id '1'):",
           f"  flags = {flags!r}", f"  candidate = {case['candidate']!r}", f"  references = {case['references']!r}"]
    for number, e, g in diff[:8]:
        out += [f"    ROUGE-1.5.5: {e}", f"    rouge_core : {g}"] if number else [e]
    if time.monotonic() >= deadline:
        out.append("  (shrinking stopped at its time limit)")
    return out
