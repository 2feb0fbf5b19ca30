/* NLTK's Porter stemmer in C, for rouge_core/_rouge_score_kernel.c.
 *
 * nltk.stem.porter.PorterStemmer() in its default NLTK_EXTENSIONS mode (the mode
 * rouge-score's DefaultTokenizer builds), rule for rule from NLTK 3.10's porter.py,
 * on a lowercase ASCII word.  rouge_core/kernel.py (`compiled_porter`) checks it
 * against the installed NLTK on probe words before the kernel uses it, and the
 * kernel calls NLTK's own stemmer when they differ (another NLTK version), so a
 * stem is always NLTK's.  tests/core/compat/test_compiled_porter.py compares the two
 * on every CNN/DM word and 100,000 generated strings.
 */
#include <string.h>

static inline int pv(char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }

static int p_cons(const char *w, int i) { /* _is_consonant */
    if (pv(w[i])) return 0;
    if (w[i] == 'y') {
        int negate = 0;
        while (i > 0 && w[i] == 'y') { negate = !negate; i--; }
        return (!pv(w[i])) != negate;
    }
    return 1;
}

static int p_measure(const char *w, int n) { /* _measure: "vc" pairs of the consonant flags */
    int m = 0, prev = -1; /* prev: flag of the previous letter (1 consonant) */
    for (int i = 0; i < n; i++) {
        int c = pv(w[i]) ? 0 : w[i] == 'y' ? (i == 0 ? 1 : !prev) : 1;
        if (c && prev == 0) m++;
        prev = c;
    }
    return m;
}

static int p_has_vowel(const char *w, int n) { /* _contains_vowel */
    int prev = -1;
    for (int i = 0; i < n; i++) {
        int c = pv(w[i]) ? 0 : w[i] == 'y' ? (i == 0 ? 1 : !prev) : 1;
        if (!c) return 1;
        prev = c;
    }
    return 0;
}

static int p_double(const char *w, int n) { return n >= 2 && w[n - 1] == w[n - 2] && p_cons(w, n - 1); }

static int p_cvc(const char *w, int n) {
    return (n >= 3 && p_cons(w, n - 3) && !p_cons(w, n - 2) && p_cons(w, n - 1) && w[n - 1] != 'w' &&
            w[n - 1] != 'x' && w[n - 1] != 'y') ||
           (n == 2 && !p_cons(w, 0) && p_cons(w, 1));
}

static int p_ends(const char *w, int n, const char *s) {
    int k = (int)strlen(s);
    return n >= k && memcmp(w + n - k, s, (size_t)k) == 0;
}

static int p_set(char *w, int stem_len, const char *rep) { /* w[:stem_len] + rep */
    int k = (int)strlen(rep);
    memcpy(w + stem_len, rep, (size_t)k);
    return stem_len + k;
}

enum { C_NONE, C_M0, C_M1, C_LOGI, C_ION };
typedef struct { const char *suffix, *rep; int cond; } PRule;

/* _apply_rule_list: the first rule whose suffix ends the word decides. */
static int p_rules(char *w, int n, const PRule *rules, int count) {
    for (int r = 0; r < count; r++) {
        if (!p_ends(w, n, rules[r].suffix)) continue;
        int stem = n - (int)strlen(rules[r].suffix), ok;
        switch (rules[r].cond) {
            case C_NONE: ok = 1; break;
            case C_M0: ok = p_measure(w, stem) > 0; break;
            case C_M1: ok = p_measure(w, stem) > 1; break;
            case C_LOGI: ok = p_measure(w, n - 3) > 0; break; /* word[:-3] */
            default: ok = p_measure(w, stem) > 1 && stem > 0 && (w[stem - 1] == 's' || w[stem - 1] == 't');
        }
        return ok ? p_set(w, stem, rules[r].rep) : n;
    }
    return n;
}

static const PRule STEP1A[] = {{"sses", "ss", C_NONE}, {"ies", "i", C_NONE}, {"ss", "ss", C_NONE}, {"s", "", C_NONE}};
static const PRule STEP2[] = {
    {"ational", "ate", C_M0}, {"tional", "tion", C_M0}, {"enci", "ence", C_M0}, {"anci", "ance", C_M0},
    {"izer", "ize", C_M0},    {"bli", "ble", C_M0},     {"alli", "al", C_M0},    {"entli", "ent", C_M0},
    {"eli", "e", C_M0},       {"ousli", "ous", C_M0},   {"ization", "ize", C_M0}, {"ation", "ate", C_M0},
    {"ator", "ate", C_M0},    {"alism", "al", C_M0},    {"iveness", "ive", C_M0}, {"fulness", "ful", C_M0},
    {"ousness", "ous", C_M0}, {"aliti", "al", C_M0},    {"iviti", "ive", C_M0},  {"biliti", "ble", C_M0},
    {"fulli", "ful", C_M0},   {"logi", "log", C_LOGI}};
static const PRule STEP3[] = {{"icate", "ic", C_M0}, {"ative", "", C_M0}, {"alize", "al", C_M0},
                              {"iciti", "ic", C_M0}, {"ical", "ic", C_M0}, {"ful", "", C_M0},
                              {"ness", "", C_M0}};
static const PRule STEP4[] = {{"al", "", C_M1},   {"ance", "", C_M1}, {"ence", "", C_M1}, {"er", "", C_M1},
                              {"ic", "", C_M1},   {"able", "", C_M1}, {"ible", "", C_M1}, {"ant", "", C_M1},
                              {"ement", "", C_M1}, {"ment", "", C_M1}, {"ent", "", C_M1}, {"ion", "", C_ION},
                              {"ou", "", C_M1},   {"ism", "", C_M1},  {"ate", "", C_M1},  {"iti", "", C_M1},
                              {"ous", "", C_M1},  {"ive", "", C_M1},  {"ize", "", C_M1}};
#define P_COUNT(a) ((int)(sizeof(a) / sizeof(PRule)))

static const char *const POOL[][2] = {
    {"sky", "sky"},       {"skies", "sky"},     {"dying", "die"},     {"lying", "lie"},
    {"tying", "tie"},     {"news", "news"},     {"innings", "inning"}, {"inning", "inning"},
    {"outings", "outing"}, {"outing", "outing"}, {"cannings", "canning"}, {"canning", "canning"},
    {"howe", "howe"},     {"proceed", "proceed"}, {"exceed", "exceed"}, {"succeed", "succeed"}};

static int p_step1b(char *w, int n) {
    if (p_ends(w, n, "ied")) return p_set(w, n - 3, n == 4 ? "ie" : "i");
    if (p_ends(w, n, "eed")) return p_measure(w, n - 3) > 0 ? p_set(w, n - 3, "ee") : n;
    int stem = -1;
    if (p_ends(w, n, "ed") && p_has_vowel(w, n - 2)) stem = n - 2;
    else if (p_ends(w, n, "ing") && p_has_vowel(w, n - 3)) stem = n - 3;
    if (stem < 0) return n;
    if (p_ends(w, stem, "at")) return p_set(w, stem - 2, "ate");
    if (p_ends(w, stem, "bl")) return p_set(w, stem - 2, "ble");
    if (p_ends(w, stem, "iz")) return p_set(w, stem - 2, "ize");
    if (p_double(w, stem)) {
        char last = w[stem - 1];
        return (last != 'l' && last != 's' && last != 'z') ? stem - 1 : stem;
    }
    if (p_measure(w, stem) == 1 && p_cvc(w, stem)) return p_set(w, stem, "e");
    return stem;
}

static int p_step2(char *w, int n) {
    while (p_ends(w, n, "alli") && p_measure(w, n - 4) > 0) n = p_set(w, n - 4, "al"); /* then step 2 again */
    return p_rules(w, n, STEP2, P_COUNT(STEP2));
}

/* Stem the word w[0:n] in place (w has room for n + 8 bytes); returns the stem's length. */
int rouge_score_nltk_porter(char *w, int n) {
    for (size_t i = 0; i < sizeof(POOL) / sizeof(POOL[0]); i++)
        if ((int)strlen(POOL[i][0]) == n && memcmp(w, POOL[i][0], (size_t)n) == 0) return p_set(w, 0, POOL[i][1]);
    if (n <= 2) return n;
    if (p_ends(w, n, "ies") && n == 4) n = p_set(w, 1, "ie");
    else n = p_rules(w, n, STEP1A, P_COUNT(STEP1A));
    n = p_step1b(w, n);
    if (p_ends(w, n, "y") && n - 1 > 1 && p_cons(w, n - 2)) w[n - 1] = 'i'; /* step 1c */
    n = p_step2(w, n);
    n = p_rules(w, n, STEP3, P_COUNT(STEP3));
    n = p_rules(w, n, STEP4, P_COUNT(STEP4));
    if (p_ends(w, n, "e")) { /* step 5a */
        int m = p_measure(w, n - 1);
        if (m > 1 || (m == 1 && !p_cvc(w, n - 1))) n--;
    }
    if (p_ends(w, n, "ll") && p_measure(w, n - 1) > 1) n--; /* step 5b */
    return n;
}
