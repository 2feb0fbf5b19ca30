"""The `unicode` preset: real text in many scripts against hand-computed scores,
every metric family and multi-reference mode against ROUGE-1.5.5's own rules
(the rouge155 preset, checked against the Perl script elsewhere) through a
transliteration, and where it agrees and disagrees with rouge155 on English.

The unicode preset keeps ROUGE-1.5.5's metric semantics, so by hand:
R = hits / reference count and P = hits / candidate count, each rounded to five
decimals, and F = R*P / (0.5*P + 0.5*R) from the rounded R and P, rounded.
"""

import gzip
import hashlib
import json
import random

import pytest

from rouge_core import RougeConfigError, RougeScorer, RougeSettings
from rouge_core.stem import morph_stem
from rouge_core.unicode_text import snowball_stemmer
from tests.conftest import SHARED_DATA, require_shared


def unicode_scores(candidate, references, flags="-n 2", **options):
    settings = RougeSettings.from_preset("unicode", flags, **options)
    return RougeScorer(settings).score(candidate=candidate, references=references)


def rpf(stats):
    return stats.recall, stats.precision, stats.f_measure


# ----------------------------------------------------------- hand-computed, per script
def test_latin_with_accents_french_with_and_without_stemming():
    candidate, reference = "L'élève a mangé une pomme.", "Une élève mange la pomme."
    # Tokens: candidate l, élève, a, mangé, une, pomme (6); reference une, élève,
    # mange, la, pomme (5). ROUGE-1 hits: élève, une, pomme = 3.
    # R = 3/5 = 0.6, P = 3/6 = 0.5, F = 0.3 / (0.25 + 0.3) = 6/11 = 0.545454.. -> 0.54545.
    plain = unicode_scores(candidate, [reference])
    assert rpf(plain["ROUGE-1"]) == (0.6, 0.5, 0.54545)
    # French Snowball stems: élève -> élev, mangé and mange -> mang, pomme -> pomm
    # (une, la, a, l unchanged). Hits: élev, mang, une, pomm = 4.
    # R = 4/5 = 0.8, P = 4/6 -> 0.66667, F = 0.8*0.66667 / (0.5*0.66667 + 0.5*0.8)
    #   = 0.533336 / 0.733335 = 0.727273.. -> 0.72727.
    # ROUGE-2: candidate (l élev) (élev a) (a mang) (mang une) (une pomm), reference
    # (une élev) (élev mang) (mang la) (la pomm): no shared bigram, 0.
    # ROUGE-L: the LCS of [l élev a mang une pomm] and [une élev mang la pomm] is
    # élev mang pomm = 3: R = 3/5 = 0.6, P = 3/6 = 0.5, F = 0.54545.
    stemmed = unicode_scores(candidate, [reference], "-n 2 -m", language="french")
    assert rpf(stemmed["ROUGE-1"]) == (0.8, 0.66667, 0.72727)
    assert rpf(stemmed["ROUGE-2"]) == (0.0, 0.0, 0.0)
    assert rpf(stemmed["ROUGE-L"]) == (0.6, 0.5, 0.54545)
    # ROUGE-1.5.5 splits "élève" at the accents into "l ve" and "mangé" into "mang".
    rouge155 = RougeScorer(RougeSettings.from_flags("-n 1")).score(candidate=candidate, references=[reference])
    assert rpf(rouge155["ROUGE-1"]) != rpf(plain["ROUGE-1"])


def test_cyrillic_russian_with_capitals():
    # Casefolding: КОШКА -> кошка. Candidate кошка, сидит, на, ковре (4); reference
    # кошка, сидела, на, красном, ковре (5). ROUGE-1 hits: кошка, на, ковре = 3:
    # R = 3/5 = 0.6, P = 3/4 = 0.75, F = 0.45 / (0.375 + 0.3) = 2/3 -> 0.66667.
    # ROUGE-L: LCS кошка на ковре = 3, the same. ROUGE-2: (кошка сидит) (сидит на)
    # (на ковре) against (кошка сидела) (сидела на) (на красном) (красном ковре): 0.
    got = unicode_scores("Кошка сидит на ковре.", ["КОШКА сидела на красном ковре."])
    assert rpf(got["ROUGE-1"]) == (0.6, 0.75, 0.66667)
    assert rpf(got["ROUGE-L"]) == (0.6, 0.75, 0.66667)
    assert rpf(got["ROUGE-2"]) == (0.0, 0.0, 0.0)
    # ROUGE-1.5.5 and rouge-score see no token at all in Cyrillic.
    assert RougeScorer(RougeSettings.from_flags("-n 1")).score(
        candidate="Кошка сидит на ковре.", references=["КОШКА сидела на красном ковре."])["ROUGE-1"].recall == 0


def test_arabic_with_presentation_forms():
    # The candidate's first word is written in presentation forms (U+FEAB U+FEEB U+FE90),
    # which NFKC turns into ذهب. Candidate ذهب الولد إلى المدرسة (4 tokens);
    # reference ذهب الطفل إلى المدرسة صباحا (5).
    # ROUGE-1: hits ذهب, إلى, المدرسة = 3: R = 3/5 = 0.6, P = 3/4 = 0.75, F = 0.66667.
    # ROUGE-2: candidate (ذهب الولد) (الولد إلى) (إلى المدرسة); reference (ذهب الطفل)
    # (الطفل إلى) (إلى المدرسة) (المدرسة صباحا): 1 hit. R = 1/4 = 0.25,
    # P = 1/3 -> 0.33333, F = 0.25*0.33333 / (0.5*0.33333 + 0.5*0.25)
    #   = 0.0833325 / 0.291665 = 0.285713.. -> 0.28571.
    got = unicode_scores("\ufeab\ufeeb\ufe90 الولد إلى المدرسة", ["ذهب الطفل إلى المدرسة صباحا"])
    assert rpf(got["ROUGE-1"]) == (0.6, 0.75, 0.66667)
    assert rpf(got["ROUGE-2"]) == (0.25, 0.33333, 0.28571)


def test_chinese_on_characters():
    # Each Han character is a token; "。" is punctuation. Candidate 我 喜 欢 北 京 (5);
    # reference 我 非 常 喜 欢 北 京 的 秋 天 (10).
    # ROUGE-1: all 5 candidate characters hit: R = 5/10 = 0.5, P = 5/5 = 1,
    #   F = 0.5 / (0.5 + 0.25) = 2/3 -> 0.66667. ROUGE-L: 我喜欢北京 is a subsequence
    #   of the reference: LCS 5, the same.
    # ROUGE-2: candidate 我喜 喜欢 欢北 北京 (4); reference 我非 非常 常喜 喜欢 欢北 北京
    #   京的 的秋 秋天 (9); hits 喜欢 欢北 北京 = 3. R = 3/9 -> 0.33333, P = 3/4 = 0.75,
    #   F = 0.33333*0.75 / (0.375 + 0.166665) = 0.2499975 / 0.541665 = 0.461535.. -> 0.46154.
    got = unicode_scores("我喜欢北京。", ["我非常喜欢北京的秋天。"])
    assert rpf(got["ROUGE-1"]) == (0.5, 1.0, 0.66667)
    assert rpf(got["ROUGE-2"]) == (0.33333, 0.75, 0.46154)
    assert rpf(got["ROUGE-L"]) == (0.5, 1.0, 0.66667)
    # The complaint this preset answers: rouge-score's tokenizer scores Chinese as 0.
    same = RougeScorer(RougeSettings.from_preset("rouge_score")).score(
        candidate="我喜欢北京", references=["我喜欢北京"])
    assert rpf(same["rouge1"]) == (0.0, 0.0, 0.0)


def segmented(sentence):
    """A stand-in word segmenter: the text comes pre-segmented with spaces."""
    return sentence.split()


def test_chinese_through_a_word_segmenter():
    # Words 我 | 喜欢 | 北京 (3) against 我 | 非常 | 喜欢 | 北京 | 的 | 秋天 (6):
    # ROUGE-1 hits 3: R = 3/6 = 0.5, P = 3/3 = 1, F = 0.66667. ROUGE-2: candidate
    # (我 喜欢) (喜欢 北京); reference (我 非常) (非常 喜欢) (喜欢 北京) (北京 的) (的 秋天):
    # 1 hit: R = 1/5 = 0.2, P = 1/2 = 0.5, F = 0.1 / (0.25 + 0.1) = 2/7 -> 0.28571.
    settings = RougeSettings.from_preset("unicode", "-n 2", tokenizer=segmented)
    got = RougeScorer(settings).score(candidate="我 喜欢 北京", references=["我 非常 喜欢 北京 的 秋天"])
    assert rpf(got["ROUGE-1"]) == (0.5, 1.0, 0.66667)
    assert rpf(got["ROUGE-2"]) == (0.2, 0.5, 0.28571)
    assert "|tok:custom:tests.core.test_unicode_preset.segmented|" in settings.signature()


def test_japanese_on_characters_with_half_width_katakana():
    # NFKC turns the half-width ﾀﾜｰ into タワー. Candidate 東 京 タ ワ ー に 行 き ま し た
    # (11); reference 昨 日 東 京 タ ワ ー へ 行 っ た (11; "、" is punctuation).
    # ROUGE-1 hits: 東 京 タ ワ ー 行 た = 7: R = P = 7/11 -> 0.63636, F = 0.63636.
    # ROUGE-L: 東京タワー, 行, た in order in both: LCS 7, the same.
    # ROUGE-2: 10 bigrams each; shared 東京 京タ タワ ワー = 4: R = P = F = 0.4.
    got = unicode_scores("東京タワーに行きました", ["昨日、東京ﾀﾜｰへ行った"])
    assert rpf(got["ROUGE-1"]) == (0.63636, 0.63636, 0.63636)
    assert rpf(got["ROUGE-L"]) == (0.63636, 0.63636, 0.63636)
    assert rpf(got["ROUGE-2"]) == (0.4, 0.4, 0.4)


def test_thai_on_characters():
    # Thai characters, the combining vowel ิ included, are tokens: candidate
    # แ ม ว ก ิ น (6); reference แ ม ว ก ิ น ป ล า (9). ROUGE-1: 6 hits,
    # R = 6/9 -> 0.66667, P = 1, F = 0.66667 / (0.5 + 0.333335) = 0.8000024.. -> 0.8.
    got = unicode_scores("แมวกิน", ["แมวกินปลา"], "-n 1")
    assert rpf(got["ROUGE-1"]) == (0.66667, 1.0, 0.8)


def test_devanagari_words_keep_their_combining_marks():
    # हिन्दी is one token (Python's \w would cut it at the marks into ह, न, द).
    # Candidate मैं हिन्दी बोलता हूँ, reference मैं हिन्दी पढ़ता हूँ: 4 tokens each,
    # 3 hits: R = P = F = 0.75.
    got = unicode_scores("मैं हिन्दी बोलता हूँ", ["मैं हिन्दी पढ़ता हूँ"], "-n 1")
    assert rpf(got["ROUGE-1"]) == (0.75, 0.75, 0.75)


def test_greek_casefolding_merges_final_sigma():
    # Casefolding maps Σ and the final ς to σ: ΟΔΟΣ and οδος are one token.
    got = unicode_scores("ΟΔΟΣ", ["οδος"], "-n 1")
    assert rpf(got["ROUGE-1"]) == (1.0, 1.0, 1.0)


# --------------------------------- every family and mode, through a transliteration
WORDS = ("кошка Кошка сидит на ковре мир ذهب المدرسة إلى हिन्दी हूँ élève Élève pomme "
         "straße STRASSE οδός Οδός ΟΔΌΣ 東京 北京 喜欢 タワー ไทย 1990 ١٩٩٠ ok").split()


def transliterate(word):
    """Each token of a vocabulary word as one ASCII word (one name per distinct token)."""
    from rouge_core.unicode_text import normalize, tokenize

    return " ".join(f"w{ALPHABET.index(t)}" for t in tokenize(normalize(word)))


def _alphabet():
    from rouge_core.unicode_text import normalize, tokenize

    return sorted({t for w in WORDS for t in tokenize(normalize(w))})


ALPHABET = _alphabet()


def pair_rng(seed, pair_id):
    digest = hashlib.sha256(f"{seed}:{pair_id}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def word_texts(rng, count):
    texts = []
    for _ in range(count):
        sentences = [[rng.choice(WORDS) for _ in range(rng.randint(0, 12))] for _ in range(rng.randint(1, 3))]
        texts.append(sentences)
    return texts


def render(sentences, word=lambda w: w):
    return "\n".join(" , ".join(word(w) for w in s) for s in sentences)


@pytest.mark.parametrize("flags", [
    "-n 4 -w 1.2 -2 4 -U -f A", "-n 2 -2 -1 -u -w 1.5 -f B", "-n 3 -2 2 -w 2 -f B -p 0.3",
])
@pytest.mark.parametrize("jackknife", [False, True])
def test_every_family_and_mode_equals_rouge155_on_transliterated_text(flags, jackknife):
    assert len(ALPHABET) == 28 and "ذهب" in ALPHABET and "東" in ALPHABET
    mode = {"multi_reference": "jackknife"} if jackknife else {}
    unicode = RougeScorer(RougeSettings.from_preset("unicode", flags, **mode))
    rouge155 = RougeScorer(RougeSettings.from_flags(flags).replace(**mode))
    for pair_id in range(150):
        rng = pair_rng(7, pair_id)
        candidate, *references = word_texts(rng, rng.randint(2, 4))
        got = unicode.score(candidate=render(candidate), references=[render(r) for r in references])
        expected = rouge155.score(candidate=render(candidate, transliterate),
                                  references=[render(r, transliterate) for r in references])
        assert got == expected, (candidate, references)


# ------------------------------------- the compiled kernel against the Python reference
def messy_unicode_text(rng):
    """Lines of words from every script (capitals, digits, marks, CJK, RTL), punctuation,
    empty lines and lines without a token; sometimes a list of sentences."""
    pool = WORDS + ENGLISH + ["...", "—", "!", "Ⅻ", "ﬁn", "Ｔｏｋｙｏ", "e\u0301te", "🙂"]

    def word():  # a known word, or a made-up one: thousands of distinct tokens in all
        if rng.random() < 0.5:
            return rng.choice(pool)
        return "".join(rng.choice("abeiksдкоαβλ東京ไท0") for _ in range(rng.randint(1, 4)))

    lines = [" ".join(word() for _ in range(rng.choice([0, 1, 3, 8, 20, 70])))
             for _ in range(rng.randint(0, 4))]
    return lines if rng.random() < 0.2 else rng.choice(["\n", "\r\n", "\n\n"]).join(lines)


UNICODE_FLAG_SETS = [
    ("-n 2", {}), ("-n 4 -w 1.2 -2 4 -U -f A", {}), ("-n 2 -m -s", {"language": "english"}),
    ("-n 3 -2 -1 -u -w 1.5 -f B -m", {"language": "russian"}), ("-n 1 -x -2 2", {"language": "french"}),
    ("-n 2 -w 1.2 -p 0.3", {"multi_reference": "jackknife"}),
    ("-n 2 -m", {"language": "german", "multi_reference": "jackknife"}),
    ("-n 2 -2 4 -U", {"tokenizer": str.split}), ("-n 2 -l 10", {}),
    ("-n 4 -l 25 -w 1.2 -2 -1 -U -m -s", {"language": "english"}), ("-n 2 -b 40 -w 1.2", {}),
]


@pytest.mark.parametrize("flags, options", UNICODE_FLAG_SETS)
def test_the_kernel_scores_as_the_python_reference(flags, options):
    # The same statistics, value for value and type for type, and the same errors;
    # under -b the kernel is not used (ROUGE-L's sentences are cut apart from the tokens).
    from rouge_core import RougeInputError
    from tests.conftest import require_kernel

    require_kernel("c")
    settings = RougeSettings.from_preset("unicode", flags, **options)
    python = RougeScorer(settings, kernel="python", max_lcs_cells=3_000)  # some pairs over it: errors
    compiled = RougeScorer(settings, kernel="c", max_lcs_cells=3_000)
    assert compiled.kernel == ("python" if "-b" in flags else "c")
    rng = pair_rng(9, flags)
    pairs = [(messy_unicode_text(rng), [messy_unicode_text(rng) for _ in range(rng.randint(1, 4))])
             for _ in range(400)]
    pairs += [(None, ["a"]), ("a", "a"), ("a", []), (["a", 3], ["a"]), ("a", [None])]
    expected, got = python.score_batch(pairs), compiled.score_batch(pairs)

    def signature(result):
        if isinstance(result, RougeInputError):
            return ("error", str(result), result.reason)
        return [(tag, [(type(x), x) for x in stats]) for tag, stats in result.items()]

    for pair, e, g in zip(pairs, expected, got):
        assert signature(g) == signature(e), pair
    if compiled.kernel == "c":  # the kernel itself scored the pairs: not Python against itself
        direct = compiled._compiled.score_batch(pairs)
        assert sum(r is not None for r in direct) >= 0.9 * sum(not isinstance(e, RougeInputError) for e in expected)
    assert sum(isinstance(e, RougeInputError) for e in expected) >= 5


# ------------------------------------------- English: where unicode and rouge155 agree
CNNDM_FILE = (SHARED_DATA / "cnndm_test_outputs"
              / "see2017_pointer_gen_cov.jsonl.gz")


def cnndm_ascii_rows(count):
    require_shared(CNNDM_FILE)
    rows = []
    with gzip.open(CNNDM_FILE, "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if (row["candidate"] + "".join(row["references"])).isascii():
                rows.append(row)
            if len(rows) == count:
                return rows
    return rows


@pytest.mark.parametrize("flags", ["-n 2 -w 1.2 -2 4 -U", "-n 2 -s -2 4 -u -f B"])
def test_ascii_english_without_stemming_scores_as_rouge155(flags):
    # On ASCII text NFKC changes nothing, casefolding is ASCII lowercasing and the
    # tokens are the runs of [a-z0-9]: the rules coincide, so do the numbers
    # (the SMART stopword list is the English list of both).
    options = {"language": "english"} if "-s" in flags else {}
    unicode = RougeScorer(RougeSettings.from_preset("unicode", flags, **options))
    rouge155 = RougeScorer(RougeSettings.from_flags(flags))
    rows = cnndm_ascii_rows(300)
    assert len(rows) == 300
    for row in rows:
        assert unicode.score(candidate=row["candidate"], references=row["references"]) == rouge155.score(
            candidate=row["candidate"], references=row["references"])


ENGLISH = ("the a of and cats running dogs jumped quick happiness ponies caresses agreed connected "
           "relational hopeful sensational walking walked houses trees played plays book books "
           "electricity seas 1999 u.s. it's don't state-of-the-art").split()


def test_english_stemming_scores_as_rouge155_where_the_stemmers_agree():
    # Words whose Snowball English stem equals ROUGE-1.5.5's (Porter + WordNet, on
    # tokens longer than 3 characters; shorter ones unchanged in both).
    snowball = snowball_stemmer("english")

    def agree(token):
        return snowball(token) == (morph_stem(token) if len(token) > 3 else token)

    from rouge_core.text import tokenize

    words = [w for w in ENGLISH if all(agree(t) for t in tokenize(w.lower()))]
    assert len(words) >= 25
    unicode = RougeScorer(RougeSettings.from_preset("unicode", "-n 2 -2 4 -U -w 1.2 -m", language="english"))
    rouge155 = RougeScorer(RougeSettings.from_flags("-n 2 -2 4 -U -w 1.2 -m"))
    for pair_id in range(200):
        rng = pair_rng(8, pair_id)
        texts = [[[rng.choice(words) for _ in range(rng.randint(0, 12))] for _ in range(rng.randint(1, 3))]
                 for _ in range(rng.randint(2, 4))]
        candidate, *references = ["\n".join(" ".join(s) for s in t) for t in texts]
        assert unicode.score(candidate=candidate, references=references) == rouge155.score(
            candidate=candidate, references=references)


def test_english_where_unicode_and_rouge155_differ():
    # Candidate "Birds fly quickly", reference "A bird flies quick", ROUGE-1 with stemming.
    # rouge155 (-m): birds -> bird, fly (3 characters: not stemmed), quickly -> quickli;
    #   a, bird, flies -> fli, quick. Hits: bird = 1. R = 1/4 = 0.25, P = 1/3 -> 0.33333,
    #   F = 0.0833325 / 0.291665 -> 0.28571.
    # unicode (Snowball English stems every token): bird, fli, quick; a, bird, fli, quick.
    #   Hits 3: R = 3/4 = 0.75, P = 1, F = 0.75 / (0.5 + 0.375) = 6/7 -> 0.85714.
    candidate, references = "Birds fly quickly", ["A bird flies quick"]
    rouge155 = RougeScorer(RougeSettings.from_flags("-n 1 -m")).score(candidate=candidate, references=references)
    unicode = unicode_scores(candidate, references, "-n 1 -m", language="english")
    assert rpf(rouge155["ROUGE-1"]) == (0.25, 0.33333, 0.28571)
    assert rpf(unicode["ROUGE-1"]) == (0.75, 1.0, 0.85714)
    # Other differences, by rule:
    # * short words: Snowball stems "its" to "it"; ROUGE-1.5.5 leaves tokens of 3 characters.
    # * WordNet exceptions: ROUGE-1.5.5 maps "geese" to "goose"; Snowball gives "gees".
    # * non-ASCII letters: ROUGE-1.5.5 cuts "naïve" into "na", "ve"; unicode keeps "naïve"
    #   (and does not strip accents: "naïve" and "naive" stay different).
    assert unicode_scores("its", ["it"], "-n 1 -m", language="english")["ROUGE-1"].recall == 1.0
    assert RougeScorer(RougeSettings.from_flags("-n 1 -m")).score(
        candidate="its", references=["it"])["ROUGE-1"].recall == 0.0
    assert (snowball_stemmer("english")("geese"), morph_stem("geese")) == ("gees", "goose")
    naive = unicode_scores("naïve", ["na ve"], "-n 1")["ROUGE-1"].recall
    assert naive == 0.0
    assert RougeScorer(RougeSettings.from_flags("-n 1")).score(
        candidate="naïve", references=["na ve"])["ROUGE-1"].recall == 1.0


# ------------------------------------------------------------------------ settings
def test_unicode_signature():
    import unicodedata
    from importlib.metadata import version

    s = RougeSettings.from_preset("unicode", "-n 2 -m -s", language="english")
    assert s.signature(version="0.1.0") == (
        f"unicode|lang:english|norm:nfkc-casefold@ucd{unicodedata.unidata_version}|"
        f"tok:unicode-v1@regex{version('regex')}|n:2|L:yes|W:no|S:no|"
        f"stem:snowball-english@nltk{version('nltk')}|stop:smart|limit:none|sent:newline|mref:average|alpha:0.5|t:0|"
        "ci:95%@1000|v:0.1.0"
    )


@pytest.mark.parametrize("options, message", [
    (dict(language="klingon"), "unknown language"),
    (dict(stemming=True), "needs a language"),
    (dict(remove_stopwords=True, language="german"), "no stopword list is packaged"),
    (dict(rouge_types=("rouge1",)), "rouge_types does not apply"),
    (dict(tokenizer="jieba"), "callable"),
])
def test_unicode_settings_the_preset_refuses(options, message):
    with pytest.raises(RougeConfigError, match=message):
        RougeSettings(preset="unicode", **options)


def test_unknown_preset():
    with pytest.raises(RougeConfigError, match="unknown preset"):
        RougeSettings(preset="sacrerouge")
