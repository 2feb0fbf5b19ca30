/* rouge_core._kernel: the per-document statistics of rouge_core.scoring, compiled.
 *
 * The pure-Python code in rouge_core (scoring.py, text.py, ngram.py, lcs.py,
 * skip_bigram.py, perl_numbers.py) is the reference: for every pair this kernel
 * either returns exactly the MetricStats that RougeScorer.score returns (same
 * values, same Python types: an int stays an int where Perl keeps an integer)
 * or None, which tells rouge_core.kernel to score that pair in Python (a text
 * that is not a str or a list of str, a pair over a work limit, a number
 * outside the range handled here).  Each distinct raw token is filtered (the
 * stopword set, in Python) and stemmed (the WordNet exception dict, then a port
 * of stem.porter_stem, below) once, and memoised here.
 *
 * Per pair: every text is tokenized once into integer ids (shared by all metric
 * families); the ids are renumbered densely per pair so that counts are arrays:
 *   ROUGE-N   n-grams interned level by level: id_n(i) = intern(id_{n-1}(i), tok[i+n-1])
 *   ROUGE-L   bit-parallel LCS rows (Hyyro) with the script's backtrack, union marks
 *   ROUGE-W   the script's weighted-LCS dynamic programme, in doubles, in its order
 *             (L and W skip a sentence pair whose possible marks are all set already)
 *   ROUGE-S/SU skip-bigrams of the tokens shared by candidate and reference, counted
 *             in a dense matrix (or a hash table when the shared vocabulary is large)
 * and the finishing arithmetic (Perl's integer-preserving +, /, %.5f rounding,
 * F from the rounded R and P, -f A / B, jackknife) mirrors scoring.py line by line.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#include <immintrin.h> /* AVX-512 in add_perl_draws, where the CPU has it (checked at run time) */
#endif

#define EXACT_INT 9007199254740992.0 /* 2**53 */

/* ------------------------------------------------------------------ growable arrays */
/* Allocation helpers return -1 (or NULL) without setting a Python error: they
 * also run without the GIL.  Kernel_score_batch raises MemoryError. */
typedef struct { int32_t *a; Py_ssize_t n, cap; } IVec;
typedef struct { uint8_t *a; Py_ssize_t cap; } BVec;

static int ivec_reserve(IVec *v, Py_ssize_t need) {
    if (need <= v->cap) return 0;
    Py_ssize_t cap = v->cap ? v->cap : 64;
    while (cap < need) cap *= 2;
    int32_t *a = realloc(v->a, (size_t)cap * sizeof(int32_t));
    if (!a) return -1;
    v->a = a; v->cap = cap;
    return 0;
}
static inline int ivec_push(IVec *v, int32_t x) {
    if (v->n == v->cap && ivec_reserve(v, v->n + 1) < 0) return -1;
    v->a[v->n++] = x;
    return 0;
}
static int bvec_reserve(BVec *v, Py_ssize_t need) {
    if (need <= v->cap) return 0;
    Py_ssize_t cap = v->cap ? v->cap : 64;
    while (cap < need) cap *= 2;
    uint8_t *a = realloc(v->a, (size_t)cap);
    if (!a) return -1;
    v->a = a; v->cap = cap;
    return 0;
}
static void *grow(void *p, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return p;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(p, c * size);
    if (!q) return NULL;
    *cap = c;
    return q;
}

/* ------------------------------------------------------------------ string table */
typedef struct { uint64_t hash, pre0, pre1; uint32_t off, len; int32_t val; } SEntry; /* pre: first 16 bytes */
typedef struct { SEntry *e; size_t cap, n; char *arena; size_t alen, acap; } STable;

static uint64_t fnv(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) { h ^= (uint8_t)s[i]; h *= 1099511628211ULL; }
    return h | 1; /* 0 marks an empty slot */
}
static inline void prefix16(const char *s, size_t n, uint64_t *p0, uint64_t *p1) {
    char b[16] = {0};
    memcpy(b, s, n < 16 ? n : 16);
    memcpy(p0, b, 8);
    memcpy(p1, b + 8, 8);
}
/* A token's hash from its first 16 bytes (p0, p1, zero-padded) and the rest. */
static inline uint64_t token_hash(const char *s, size_t n, uint64_t p0, uint64_t p1) {
    uint64_t h = (p0 * 0x9E3779B97F4A7C15ULL) ^ ((p1 + n) * 0xC2B2AE3D27D4EB4FULL);
    if (n > 16) h ^= fnv(s + 16, n - 16);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 32;
    return h | 1;
}
static void stable_clear(STable *t) {
    if (t->e) memset(t->e, 0, t->cap * sizeof(SEntry));
    t->n = 0; t->alen = 0;
}
static void stable_free(STable *t) { free(t->e); free(t->arena); memset(t, 0, sizeof(*t)); }

/* The value for s, or INT32_MIN when absent; *slot is where it would go. */
static inline int32_t stable_get(STable *t, const char *s, size_t n, uint64_t h, uint64_t p0, uint64_t p1,
                                 size_t *slot) {
    size_t mask = t->cap - 1, i = h & mask;
    for (;;) {
        SEntry *e = &t->e[i];
        if (!e->hash) { *slot = i; return INT32_MIN; }
        if (e->hash == h && e->len == n && e->pre0 == p0 && e->pre1 == p1 &&
            (n <= 16 || memcmp(t->arena + e->off + 16, s + 16, n - 16) == 0))
            return e->val;
        i = (i + 1) & mask;
    }
}
static int stable_grow(STable *t) {
    size_t cap = t->cap ? t->cap * 2 : 1024;
    SEntry *e = calloc(cap, sizeof(SEntry));
    if (!e) return -1;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->e[i].hash) continue;
        size_t j = t->e[i].hash & (cap - 1);
        while (e[j].hash) j = (j + 1) & (cap - 1);
        e[j] = t->e[i];
    }
    free(t->e);
    t->e = e; t->cap = cap;
    return 0;
}
static int stable_put(STable *t, const char *s, size_t n, uint64_t h, uint64_t p0, uint64_t p1, int32_t val) {
    size_t slot;
    if ((t->n + 1) * 2 > t->cap) {
        if (stable_grow(t) < 0) return -1;
    }
    if (stable_get(t, s, n, h, p0, p1, &slot) != INT32_MIN) return 0;
    char *arena = grow(t->arena, &t->acap, t->alen + n + 1, 1);
    if (!arena) return -1;
    t->arena = arena;
    memcpy(t->arena + t->alen, s, n);
    t->e[slot].hash = h; t->e[slot].off = (uint32_t)t->alen; t->e[slot].len = (uint32_t)n; t->e[slot].val = val;
    t->e[slot].pre0 = p0; t->e[slot].pre1 = p1;
    t->alen += n; t->n++;
    return 0;
}

/* ------------------------------------------------------------------ 64-bit key map */
typedef struct { uint64_t *key; int32_t *val; uint32_t *stamp; size_t cap; uint32_t epoch; int shift; } UMap;

static int umap_reset(UMap *m, size_t items) {
    size_t cap = 256;
    while (cap < 2 * items) cap *= 2;
    if (cap > m->cap) {
        free(m->key); free(m->val); free(m->stamp);
        m->key = malloc(cap * sizeof(uint64_t));
        m->val = malloc(cap * sizeof(int32_t));
        m->stamp = calloc(cap, sizeof(uint32_t));
        if (!m->key || !m->val || !m->stamp) { m->cap = 0; return -1; }
        m->cap = cap; m->epoch = 0;
        m->shift = 64 - __builtin_ctzll(cap);
    }
    if (++m->epoch == 0) { memset(m->stamp, 0, m->cap * sizeof(uint32_t)); m->epoch = 1; }
    return 0;
}
/* The value slot of key, inserted with value `fresh` when absent (*is_new = 1). */
static inline int32_t *umap_slot(UMap *m, uint64_t key, int insert, int *is_new) {
    size_t mask = m->cap - 1, i = (size_t)((key * 0x9E3779B97F4A7C15ULL) >> m->shift);
    for (;;) {
        if (m->stamp[i] != m->epoch) {
            if (!insert) return NULL;
            m->stamp[i] = m->epoch; m->key[i] = key; m->val[i] = 0; *is_new = 1;
            return &m->val[i];
        }
        if (m->key[i] == key) { *is_new = 0; return &m->val[i]; }
        i = (i + 1) & mask;
    }
}

/* ------------------------------------------------------------------ Perl's numbers */
/* A number as rouge_core.perl_numbers keeps it: a Python int (is_int) or float.
 * Integers are kept below 2**53; anything larger sets `bail` and the pair is
 * scored in Python instead. */
typedef struct { int is_int; int64_t i; double d; } PNum;

static inline PNum pint(int64_t i) { PNum x = {1, i, 0.0}; return x; }
static inline PNum pflt(double d) { PNum x = {0, 0, d}; return x; }
static inline double tod(PNum x) { return x.is_int ? (double)x.i : x.d; }
static inline int pnonzero(PNum x) { return x.is_int ? x.i != 0 : x.d != 0.0; }

static inline int as_integer(PNum x, int64_t *out) { /* SvIV_please */
    if (x.is_int) { *out = x.i; return 1; }
    if (isfinite(x.d) && x.d == floor(x.d) && fabs(x.d) < EXACT_INT) { *out = (int64_t)x.d; return 1; }
    return 0;
}
static inline int lossless(double d, int64_t *out) { /* any integral double in the IV range */
    if (isfinite(d) && d == floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
        *out = (int64_t)d;
        return 1;
    }
    return 0;
}
static inline PNum checked_int(__int128 s, int *bail) {
    if (s >= (__int128)9007199254740992LL || s <= -(__int128)9007199254740992LL) { *bail = 1; return pint(0); }
    return pint((int64_t)s);
}
static PNum perl_add(PNum a, PNum b, int *bail) {
    int64_t x, y;
    int ok;
    if (!a.is_int && !b.is_int) ok = lossless(a.d, &x) && lossless(b.d, &y);
    else ok = as_integer(a, &x) && as_integer(b, &y);
    if (ok) {
        __int128 s = (__int128)x + y;
        if (s >= -((__int128)1 << 63) && s <= (((__int128)1 << 64) - 1)) return checked_int(s, bail);
    }
    return pflt(tod(a) + tod(b));
}
static PNum perl_divide(PNum a, PNum b, int *bail) {
    int64_t x, y;
    if (as_integer(a, &x) && as_integer(b, &y)) {
        if (x < 0 || y <= 0) { *bail = 1; return pint(0); }
        if (x % y == 0) return pint(x / y);
    }
    return pflt(tod(a) / tod(b));
}
static PNum python_add(PNum a, PNum b, int *bail) { /* Python's + on int/float */
    if (a.is_int && b.is_int) return checked_int((__int128)a.i + b.i, bail);
    return pflt(tod(a) + tod(b));
}
static double python_pow(double x, double y, int *bail) { /* float ** float for x >= 0, y > 0 */
    if (x == 1.0) return 1.0;
    if (x == 0.0) return 0.0;
    double r = pow(x, y);
    if (!isfinite(r) || x < 0) *bail = 1; /* Python raises here */
    return r;
}

/* sprintf("%7.5f", x) read back: correctly rounded both ways, so x*1e5 rounded
 * to an integer and divided by 1e5 is the same double whenever x*1e5 is not
 * within rounding error of a tie; otherwise print and parse. */
static double round5(double x) {
    if (fabs(x) < 1e9) {
        double y = x * 100000.0, r = nearbyint(y), frac = fabs(y - floor(y) - 0.5);
        if (frac > 1e-6) return r / 100000.0;
    }
    char buf[512];
    snprintf(buf, sizeof buf, "%.5f", x);
    return strtod(buf, NULL);
}
static double f_measure(double r, double p, double alpha) {
    double den = (1 - alpha) * p + alpha * r;
    return den > 0 ? round5(p * r / den) : 0.0;
}

static int pnum_from_object(PyObject *o, PNum *out, int *bail) {
    if (PyLong_CheckExact(o)) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (v == -1 && PyErr_Occurred()) return -1;
        if (overflow || v >= 9007199254740992LL || v <= -9007199254740992LL) { *bail = 1; *out = pint(0); return 0; }
        *out = pint(v);
        return 0;
    }
    if (PyFloat_CheckExact(o)) { *out = pflt(PyFloat_AS_DOUBLE(o)); return 0; }
    *bail = 1;
    *out = pint(0);
    return 0;
}
static PyObject *pnum_object(PNum x) { return x.is_int ? PyLong_FromLongLong(x.i) : PyFloat_FromDouble(x.d); }


/* ------------------------------------------------------------------ the -m stemmer */
/* rouge_core.stem.porter_stem, ported: the script's regular expressions are
 * sequences of character classes, each once or repeated (`*`); an optional group
 * `( )?` is written out as two patterns.  `matches` is a backtracking matcher
 * for exactly these (anchored at the start; at the end too for a full match),
 * so the conditions are the regexes' own, not a re-derivation of Porter's
 * measure.  Suffix rules take the longest listed suffix, which is what a
 * left-to-right search for `(a|b|...)$` finds. */
typedef struct { const uint8_t *cls; int star; } Item;
static uint8_t NV[256], NVY[256], VY[256], V5[256], CVC_END[256];
static uint8_t TOKEN_CHAR[128]; /* reading: the lowercased character, or 0 for a separator */

static void init_classes(void) {
    for (int c = 0; c < 128; c++)
        TOKEN_CHAR[c] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : (c >= 'A' && c <= 'Z') ? c + 32 : 0;
    for (int c = 0; c < 256; c++) {
        int v5 = c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
        NV[c] = !v5;
        NVY[c] = !v5 && c != 'y';
        VY[c] = v5 || c == 'y';
        V5[c] = v5;
        CVC_END[c] = !v5 && c != 'w' && c != 'x' && c != 'y';
    }
}

static int match_items(const Item *it, int ni, const char *s, int n, int pos, int full) {
    if (ni == 0) return !full || pos == n;
    if (!it->star) return pos < n && it->cls[(uint8_t)s[pos]] && match_items(it + 1, ni - 1, s, n, pos + 1, full);
    int end = pos;
    while (end < n && it->cls[(uint8_t)s[end]]) end++;
    for (int p = end; p >= pos; p--)
        if (match_items(it + 1, ni - 1, s, n, p, full)) return 1;
    return 0;
}

#define C_ {NV, 0}, {NVY, 1}
#define V_ {VY, 0}, {V5, 1}
static const Item MGR0_A[] = {C_, V_, C_}, MGR0_B[] = {V_, C_};
static const Item MEQ1_A[] = {C_, V_, C_, V_}, MEQ1_B[] = {C_, V_, C_}, MEQ1_C[] = {V_, C_, V_}, MEQ1_D[] = {V_, C_};
static const Item MGR1_A[] = {C_, V_, C_, V_, C_}, MGR1_B[] = {V_, C_, V_, C_};
static const Item VIS_A[] = {C_, {VY, 0}}, VIS_B[] = {{VY, 0}};
static const Item CVC_[] = {C_, {VY, 0}, {CVC_END, 0}};
#define N_(a) ((int)(sizeof(a) / sizeof(Item)))
#define M_(a, s, n, full) match_items(a, N_(a), s, n, 0, full)

static int mgr0(const char *s, int n) { return M_(MGR0_A, s, n, 0) || M_(MGR0_B, s, n, 0); }
static int mgr1(const char *s, int n) { return M_(MGR1_A, s, n, 0) || M_(MGR1_B, s, n, 0); }
static int meq1(const char *s, int n) {
    return M_(MEQ1_A, s, n, 1) || M_(MEQ1_B, s, n, 1) || M_(MEQ1_C, s, n, 1) || M_(MEQ1_D, s, n, 1);
}
static int vowel_in_stem(const char *s, int n) { return M_(VIS_A, s, n, 0) || M_(VIS_B, s, n, 0); }
static int cvc(const char *s, int n) { return M_(CVC_, s, n, 1); }

static int ends(const char *w, int n, const char *suffix) {
    int k = (int)strlen(suffix);
    return n >= k && memcmp(w + n - k, suffix, k) == 0;
}
/* The longest suffix of the list (pairs: suffix, replacement) that w ends with, or -1. */
static int longest(const char *const *list, int count, const char *w, int n) {
    int best = -1, best_len = 0;
    for (int i = 0; i < count; i++) {
        int k = (int)strlen(list[2 * i]);
        if (k > best_len && ends(w, n, list[2 * i])) { best = i; best_len = k; }
    }
    return best;
}
static const char *const STEP2[] = {
    "ational", "ate", "tional", "tion", "enci", "ence", "anci", "ance", "izer", "ize", "bli", "ble",
    "alli", "al", "entli", "ent", "eli", "e", "ousli", "ous", "ization", "ize", "ation", "ate",
    "ator", "ate", "alism", "al", "iveness", "ive", "fulness", "ful", "ousness", "ous", "aliti", "al",
    "iviti", "ive", "biliti", "ble", "logi", "log"};
static const char *const STEP3[] = {"icate", "ic", "ative", "", "alize", "al", "iciti", "ic",
                                    "ical", "ic", "ful", "", "ness", ""};
static const char *const STEP4[] = {"al", "", "ance", "", "ence", "", "er", "", "ic", "", "able", "",
                                    "ible", "", "ant", "", "ement", "", "ou", "", "ism", "", "ate", "",
                                    "iti", "", "ous", "", "ive", "", "ize", ""};

/* porter_stem on w[0..n) in place (w has room for n + 8 bytes); returns the new length. */
static int porter(char *w, int n) {
    if (n < 3) return n;
    int initial_y = w[0] == 'y';
    if (initial_y) w[0] = 'Y';
    /* Step 1a */
    if (ends(w, n, "sses") || ends(w, n, "ies")) n -= 2;
    else if (n >= 2 && w[n - 1] == 's' && w[n - 2] != 's') n -= 1;
    /* Step 1b */
    if (ends(w, n, "eed")) {
        if (mgr0(w, n - 3)) n -= 1;
    } else if (ends(w, n, "ed") || ends(w, n, "ing")) {
        int stem = n - (ends(w, n, "ed") ? 2 : 3);
        if (vowel_in_stem(w, stem)) {
            n = stem;
            if (ends(w, n, "at") || ends(w, n, "bl") || ends(w, n, "iz")) w[n++] = 'e';
            else if (n >= 2 && w[n - 1] == w[n - 2] && !strchr("aeiouylsz", w[n - 1])) n -= 1;
            else if (cvc(w, n)) w[n++] = 'e';
        }
    }
    /* Step 1c */
    if (n >= 1 && w[n - 1] == 'y' && vowel_in_stem(w, n - 1)) w[n - 1] = 'i';
    /* Steps 2 and 3 */
    const char *const *lists[2] = {STEP2, STEP3};
    int counts[2] = {(int)(sizeof STEP2 / sizeof *STEP2 / 2), (int)(sizeof STEP3 / sizeof *STEP3 / 2)};
    for (int step = 0; step < 2; step++) {
        int i = longest(lists[step], counts[step], w, n);
        if (i >= 0) {
            int stem = n - (int)strlen(lists[step][2 * i]);
            if (mgr0(w, stem)) {
                const char *rep = lists[step][2 * i + 1];
                memcpy(w + stem, rep, strlen(rep));
                n = stem + (int)strlen(rep);
            }
        }
    }
    /* Step 4, with CYL's sequential "ment" and "ent" rules */
    int i = longest(STEP4, (int)(sizeof STEP4 / sizeof *STEP4 / 2), w, n);
    if (i >= 0) {
        int stem = n - (int)strlen(STEP4[2 * i]);
        if (mgr1(w, stem)) n = stem;
    }
    if (ends(w, n, "ment") && mgr1(w, n - 4)) n -= 4;
    if (ends(w, n, "ent")) {
        if (mgr1(w, n - 3)) n -= 3;
    } else if (ends(w, n, "sion") || ends(w, n, "tion")) {
        if (mgr1(w, n - 3)) n -= 3;
    }
    /* Step 5 */
    if (n >= 1 && w[n - 1] == 'e') {
        int stem = n - 1;
        if (mgr1(w, stem) || (meq1(w, stem) && !cvc(w, stem))) n = stem;
    }
    if (ends(w, n, "ll") && mgr1(w, n)) n -= 1;
    if (initial_y) w[0] = 'y';
    return n;
}

/* ------------------------------------------------------------------ the kernel object */
enum { K_NGRAM = 0, K_LCS = 1, K_WLCS = 2, K_SKIP = 3 };
enum { M_AVERAGE = 0, M_BEST = 1, M_JACKKNIFE = 2 };

typedef struct {
    IVec tok;   /* the token stream (ROUGE-N, S/SU, unigram tables) */
    IVec ltok;  /* ROUGE-L/W tokens when they differ (the -b reader's bug) */
    IVec sent;  /* ROUGE-L/W sentence starts into ltok (or tok), then the end */
    int lsep;
    BVec mark, wmark;
    IVec gram;
} TextBuf;

typedef struct { PNum hits, rtot, ctot; double key; } RefCounts;

typedef struct {
    PyObject_HEAD
    /* settings */
    int max_ngram, rouge_l, wlcs, skip, stemming, mode, limited;
    long gap;  /* -1: no limit */
    double alpha, inverse;
    long long max_skip_bigrams, max_lcs_cells;
    PyObject *stem, *exceptions, *stopwords, *fweight, *stats_type, *tags;
    int ntags, *kind, *arg;
    /* memo: raw token -> id (or -1 for a stopword); stemmed token -> id */
    STable raw, vocab;
    int32_t nvocab;
    uint32_t *stamp; int32_t *local; size_t vcap; uint32_t epoch;
    /* ROUGE-W weights f(k), as scoring.RougeScorer._f returns them */
    PNum *w; size_t nw, wcap;
    /* per pair */
    TextBuf *texts; Py_ssize_t ntexts;
    int32_t *cntA, *cntB, *mslot, *sid; uint32_t *pstamp; uint64_t *mask1; size_t lcap; uint32_t pepoch;
    UMap map;
    uint32_t *matrix; size_t mcap;
    uint64_t *masks, *rows; size_t maskcap, rowcap;
    int32_t *fa, *fb, *pa, *pb; size_t fcap;
    double *sc_up, *sc; int32_t *run_up, *run; uint8_t *steps, *skipped; size_t dpcap, stepcap, skcap;
    char *tbuf; size_t tbcap;
    RefCounts *rc; size_t rccap;
    int64_t *shits; PNum *wbase; size_t refcap;
    int bail, busy;
    int packed; /* score_batch_packed: a pair's statistics as float64 bytes, not a dict */
} Kernel;

static void textbuf_free(TextBuf *t) {
    free(t->tok.a); free(t->ltok.a); free(t->sent.a); free(t->mark.a); free(t->wmark.a); free(t->gram.a);
}

static void Kernel_dealloc(Kernel *k) {
    Py_XDECREF(k->stem); Py_XDECREF(k->exceptions); Py_XDECREF(k->stopwords); Py_XDECREF(k->fweight);
    Py_XDECREF(k->stats_type); Py_XDECREF(k->tags);
    free(k->kind); free(k->arg);
    stable_free(&k->raw); stable_free(&k->vocab);
    free(k->stamp); free(k->local); free(k->w);
    for (Py_ssize_t i = 0; i < k->ntexts; i++) textbuf_free(&k->texts[i]);
    free(k->texts);
    free(k->cntA); free(k->cntB); free(k->mslot); free(k->sid); free(k->pstamp); free(k->mask1);
    free(k->map.key); free(k->map.val); free(k->map.stamp);
    free(k->matrix); free(k->masks); free(k->rows);
    free(k->fa); free(k->fb); free(k->pa); free(k->pb);
    free(k->sc_up); free(k->sc); free(k->run_up); free(k->run); free(k->steps); free(k->skipped);
    free(k->tbuf); free(k->rc); free(k->shits); free(k->wbase);
    Py_TYPE(k)->tp_free((PyObject *)k);
}

static int Kernel_init(Kernel *k, PyObject *args, PyObject *kwds) {
    static char *names[] = {"tags", "max_ngram", "rouge_l", "wlcs", "skip", "gap", "stemming", "stem",
                            "stopwords", "alpha", "inverse", "weight_of", "mode", "max_skip_bigrams",
                            "max_lcs_cells", "limited", "stats_type", "exceptions", NULL};
    PyObject *tags, *stem, *stopwords, *fweight, *stats_type, *exceptions = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!ippplpOOddOiLLpO|O", names, &PyList_Type, &tags,
                                     &k->max_ngram, &k->rouge_l, &k->wlcs, &k->skip, &k->gap, &k->stemming,
                                     &stem, &stopwords, &k->alpha, &k->inverse, &fweight, &k->mode,
                                     &k->max_skip_bigrams, &k->max_lcs_cells, &k->limited, &stats_type,
                                     &exceptions))
        return -1;
    if (exceptions != Py_None) {
        if (!PyDict_Check(exceptions)) {
            PyErr_SetString(PyExc_TypeError, "exceptions must be a dict or None");
            return -1;
        }
        Py_INCREF(exceptions);
        k->exceptions = exceptions; /* the compiled morph_stem replaces `stem` */
    }
    if (stopwords != Py_None && !PyAnySet_Check(stopwords)) {
        PyErr_SetString(PyExc_TypeError, "stopwords must be a set or None");
        return -1;
    }
    /* The metrics come parsed (rouge_core.names.MetricName.kernel_spec): (tag, family, n) with
     * family 0 n-gram, 1 LCS, 2 weighted LCS, 3 skip-bigram, 4 skip-bigram plus unigram; the
     * tag is only the result's key.  N-grams come first, n = 1, 2, ... in order (each level is
     * built from the one before), and each other family at most once. */
    k->ntags = (int)PyList_GET_SIZE(tags);
    k->kind = calloc(k->ntags + 1, sizeof(int));
    k->arg = calloc(k->ntags + 1, sizeof(int));
    PyObject *keys = PyList_New(k->ntags);
    if (!k->kind || !k->arg || !keys) { Py_XDECREF(keys); PyErr_NoMemory(); return -1; }
    int seen[5] = {0, 0, 0, 0, 0};
    for (int t = 0; t < k->ntags; t++) {
        PyObject *tag;
        int family, n;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(tags, t), "Uii;tags are (tag, family, n) tuples", &tag, &family, &n)) {
            Py_DECREF(keys);
            return -1;
        }
        int ngram_in_order = family == 0 && n == t + 1 && n <= k->max_ngram;
        if (family < 0 || family > 4 || (family == 0 && !ngram_in_order) || (family > 0 && (n != 0 || seen[family]))) {
            PyErr_Format(PyExc_ValueError, "metric %R: (family, n) = (%d, %d) is not the next metric of these "
                         "settings (n-grams 1..max_ngram first, then LCS 1, weighted LCS 2, skip-bigrams 3 or 4, "
                         "each once)", tag, family, n);
            Py_DECREF(keys);
            return -1;
        }
        seen[family] = 1;
        static const int kinds[5] = {K_NGRAM, K_LCS, K_WLCS, K_SKIP, K_SKIP};
        k->kind[t] = kinds[family];
        k->arg[t] = family == 0 ? n : family == 4; /* the n of an n-gram; with unigrams (-u) for skip-bigrams */
        Py_INCREF(tag);
        PyList_SET_ITEM(keys, t, tag);
    }
    k->tags = keys;
    Py_INCREF(stem); k->stem = stem;
    if (stopwords != Py_None && PySet_GET_SIZE(stopwords) > 0) { Py_INCREF(stopwords); k->stopwords = stopwords; }
    Py_INCREF(fweight); k->fweight = fweight;
    Py_INCREF(stats_type); k->stats_type = stats_type;
    return 0;
}

/* ------------------------------------------------------------------ reading */
static int vocab_reserve(Kernel *k, size_t n) {
    if (n <= k->vcap) return 0;
    size_t cap = k->vcap ? k->vcap : 1024;
    while (cap < n) cap *= 2;
    uint32_t *s = realloc(k->stamp, cap * sizeof(uint32_t));
    if (!s) { PyErr_NoMemory(); return -1; }
    memset(s + k->vcap, 0, (cap - k->vcap) * sizeof(uint32_t));
    k->stamp = s;
    int32_t *l = realloc(k->local, cap * sizeof(int32_t));
    if (!l) { PyErr_NoMemory(); return -1; }
    k->local = l; k->vcap = cap;
    return 0;
}

/* The id of a raw (lowercased) token: -1 for a stopword, -2 on error. */
static int32_t token_id(Kernel *k, const char *s, size_t n) {
    uint64_t p0, p1; /* s is k->tbuf, zero-padded to 16 bytes */
    memcpy(&p0, s, 8);
    memcpy(&p1, s + 8, 8);
    uint64_t h = token_hash(s, n, p0, p1);
    size_t slot;
    if (k->raw.cap) {
        int32_t v = stable_get(&k->raw, s, n, h, p0, p1, &slot);
        if (v != INT32_MIN) return v;
    }
    int32_t id;
    PyObject *str = NULL;
    if (k->stopwords || k->stemming) {
        str = PyUnicode_FromStringAndSize(s, (Py_ssize_t)n);
        if (!str) return -2;
    }
    int stop = 0;
    if (k->stopwords) {
        stop = PySet_Contains(k->stopwords, str);
        if (stop < 0) { Py_DECREF(str); return -2; }
    }
    if (stop) id = -1;
    else if (k->stemming) {
        PyObject *stemmed = NULL;
        Py_ssize_t len;
        const char *b;
        char *w = NULL;
        if (k->exceptions == NULL) { /* the given stemmer */
            stemmed = PyObject_CallOneArg(k->stem, str);
            if (!stemmed) { Py_DECREF(str); return -2; }
        } else if (n > 3) { /* morph_stem: the WordNet exception, else porter_stem */
            stemmed = PyDict_GetItemWithError(k->exceptions, str);
            if (stemmed) Py_INCREF(stemmed);
            else if (PyErr_Occurred()) { Py_DECREF(str); return -2; }
        }
        if (stemmed) {
            b = PyUnicode_AsUTF8AndSize(stemmed, &len);
            if (!b) { Py_DECREF(stemmed); Py_DECREF(str); return -2; }
        } else {
            w = malloc(n + 8);
            if (!w) { Py_DECREF(str); PyErr_NoMemory(); return -2; }
            memcpy(w, s, n);
            len = n > 3 ? porter(w, (int)n) : (Py_ssize_t)n;
            b = w;
        }
        uint64_t q0, q1;
        prefix16(b, (size_t)len, &q0, &q1);
        uint64_t hs = token_hash(b, (size_t)len, q0, q1);
        id = k->vocab.cap ? stable_get(&k->vocab, b, (size_t)len, hs, q0, q1, &slot) : INT32_MIN;
        if (id == INT32_MIN) {
            id = k->nvocab++;
            if (stable_put(&k->vocab, b, (size_t)len, hs, q0, q1, id) < 0) {
                Py_XDECREF(stemmed); Py_DECREF(str); free(w);
                return -2;
            }
        }
        Py_XDECREF(stemmed);
        free(w);
    } else id = k->nvocab++;
    Py_XDECREF(str);
    if (stable_put(&k->raw, s, n, h, p0, p1, id) < 0) return -2;
    if (vocab_reserve(k, (size_t)k->nvocab) < 0) return -2;
    return id;
}

/* Tokenize one str: a token is a maximal run of ASCII [A-Za-z0-9], lowercased
 * (text.sentences then text.tokenize).  With split_lines, every non-empty line
 * is a sentence (its start goes to `sent`); otherwise the whole str is one
 * sentence, kept when non-empty or when keep_empty. */
static int end_token(Kernel *k, size_t tlen, IVec *tok) {
    memset(k->tbuf + tlen, 0, 16);
    int32_t id = token_id(k, k->tbuf, tlen);
    if (id == -2) return -1;
    if (id >= 0 && ivec_push(tok, id) < 0) return -1;
    return 0;
}

#define READ_LOOP(TYPE)                                                                            \
    do {                                                                                           \
        const TYPE *d = (const TYPE *)data;                                                        \
        for (Py_ssize_t i = 0; i < n; i++) {                                                       \
            Py_UCS4 c = d[i];                                                                      \
            if (split_lines && i == line && c != '\n' && sent && ivec_push(sent, (int32_t)tok->n) < 0) \
                return -1;                                                                         \
            uint8_t t = c < 128 ? TOKEN_CHAR[c] : 0;                                               \
            if (t) {                                                                               \
                if (tlen + 17 > k->tbcap) {                                                        \
                    char *b = grow(k->tbuf, &k->tbcap, tlen + 17, 1);                              \
                    if (!b) return -1;                                                             \
                    k->tbuf = b;                                                                   \
                }                                                                                  \
                k->tbuf[tlen++] = (char)t;                                                         \
            } else {                                                                               \
                if (tlen && end_token(k, tlen, tok) < 0) return -1;                                \
                tlen = 0;                                                                          \
                if (c == '\n') line = i + 1;                                                       \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* Tokenize one str: a token is a maximal run of ASCII [A-Za-z0-9], lowercased
 * (text.sentences then text.tokenize).  With split_lines, every non-empty line
 * is a sentence (its start goes to `sent`); otherwise the whole str is one
 * sentence, kept when non-empty or when keep_empty. */
static int read_str(Kernel *k, PyObject *s, IVec *tok, IVec *sent, int split_lines, int keep_empty) {
    if (PyUnicode_READY(s) < 0) return -1;
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    Py_ssize_t n = PyUnicode_GET_LENGTH(s), line = 0;
    size_t tlen = 0;
    if (!split_lines && sent && (n > 0 || keep_empty) && ivec_push(sent, (int32_t)tok->n) < 0) return -1;
    if (kind == PyUnicode_1BYTE_KIND) READ_LOOP(Py_UCS1);
    else if (kind == PyUnicode_2BYTE_KIND) READ_LOOP(Py_UCS2);
    else READ_LOOP(Py_UCS4);
    if (tlen && end_token(k, tlen, tok) < 0) return -1;
    return 0;
}

static int is_text(PyObject *t) {
    if (PyUnicode_Check(t)) return 1;
    if (!PyList_Check(t) && !PyTuple_Check(t)) return 0;
    PyObject **items = PySequence_Fast_ITEMS(t);
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(t); i++)
        if (!PyUnicode_Check(items[i])) return 0;
    return 1;
}

/* A list of sentences: each element one sentence; "" elements are skipped
 * unless keep_empty (the -l/-b lists keep them, as scoring._prepare does). */
static int read_list(Kernel *k, PyObject *t, IVec *tok, IVec *sent, int keep_empty) {
    PyObject **items = PySequence_Fast_ITEMS(t);
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(t); i++) {
        if (read_str(k, items[i], tok, sent, 0, keep_empty) < 0) return -1;
    }
    return 0;
}

/* Read one text into tb.  Returns 1 read, 0 not a text this kernel reads, -1 error. */
static int read_text(Kernel *k, PyObject *text, TextBuf *tb) {
    tb->tok.n = 0; tb->ltok.n = 0; tb->sent.n = 0; tb->lsep = 0;
    if (!k->limited) {
        if (!is_text(text)) return 0;
        if (PyUnicode_Check(text)) { if (read_str(k, text, &tb->tok, &tb->sent, 1, 0) < 0) return -1; }
        else if (read_list(k, text, &tb->tok, &tb->sent, 0) < 0) return -1;
    } else {
        /* (sentences, lcs_sentences or None), as kernel.py cuts them with text.py */
        if (!PyTuple_Check(text) || PyTuple_GET_SIZE(text) != 2) return 0;
        PyObject *sents = PyTuple_GET_ITEM(text, 0), *lcs = PyTuple_GET_ITEM(text, 1);
        if (!PyList_Check(sents) || !is_text(sents)) return 0;
        if (lcs == Py_None) {
            if (read_list(k, sents, &tb->tok, &tb->sent, 1) < 0) return -1;
        } else {
            if (!PyList_Check(lcs) || !is_text(lcs)) return 0;
            if (read_list(k, sents, &tb->tok, NULL, 1) < 0) return -1;
            if (read_list(k, lcs, &tb->ltok, &tb->sent, 1) < 0) return -1;
            tb->lsep = 1;
        }
    }
    IVec *l = tb->lsep ? &tb->ltok : &tb->tok;
    if (ivec_push(&tb->sent, (int32_t)l->n) < 0) return -1;
    return 1;
}

#define LTOK(tb) ((tb)->lsep ? (tb)->ltok.a : (tb)->tok.a)
#define LN(tb) ((tb)->lsep ? (tb)->ltok.n : (tb)->tok.n)
#define NSENT(tb) ((tb)->sent.n - 1)

/* ------------------------------------------------------------------ per-pair arrays */
static int local_reserve(Kernel *k, size_t V) {
    if (V <= k->lcap) return 0;
    size_t cap = k->lcap ? k->lcap : 256;
    while (cap < V) cap *= 2;
    free(k->cntA); free(k->cntB); free(k->mslot); free(k->sid); free(k->pstamp); free(k->mask1);
    k->mask1 = calloc(cap, sizeof(uint64_t));
    k->cntA = calloc(cap, sizeof(int32_t));
    k->cntB = calloc(cap, sizeof(int32_t));
    k->mslot = malloc(cap * sizeof(int32_t));
    k->sid = malloc(cap * sizeof(int32_t));
    k->pstamp = calloc(cap, sizeof(uint32_t));
    if (!k->cntA || !k->cntB || !k->mslot || !k->sid || !k->pstamp || !k->mask1) { k->lcap = 0; return -1; }
    for (size_t i = 0; i < cap; i++) { k->mslot[i] = -1; k->sid[i] = -1; }
    k->lcap = cap; k->pepoch = 0;
    return 0;
}

static int weights_reserve(Kernel *k, size_t upto) { /* f(0) .. f(upto) */
    if (upto < k->nw) return 0;
    PNum *w = grow(k->w, &k->wcap, upto + 1, sizeof(PNum));
    if (!w) return -1;
    k->w = w;
    for (size_t i = k->nw; i <= upto; i++) {
        PyObject *arg = PyLong_FromSize_t(i);
        if (!arg) return -1;
        PyObject *r = PyObject_CallOneArg(k->fweight, arg);
        Py_DECREF(arg);
        if (!r) return -1;
        int bail = 0;
        if (pnum_from_object(r, &k->w[i], &bail) < 0) { Py_DECREF(r); return -1; }
        Py_DECREF(r);
        if (bail) { k->bail = 1; return 0; } /* not cached: the pair goes to Python */
        k->nw = i + 1;
    }
    return 0;
}

static int f_of(Kernel *k, PNum x, PNum *out) { /* RougeScorer._f on a computed number */
    if (x.is_int && x.i >= 0 && (size_t)x.i < k->nw) { *out = k->w[x.i]; return 0; }
    PyObject *arg = pnum_object(x);
    if (!arg) return -1;
    PyObject *r = PyObject_CallOneArg(k->fweight, arg);
    Py_DECREF(arg);
    if (!r) return -1;
    int rc = pnum_from_object(r, out, &k->bail);
    Py_DECREF(r);
    return rc;
}

static int fvec_reserve(Kernel *k, size_t need) { /* the four scratch arrays fa, fb, pa, pb */
    if (need <= k->fcap) return 0;
    size_t cap = k->fcap ? k->fcap : 64;
    while (cap < need) cap *= 2;
    int32_t **arrays[4] = {&k->fa, &k->fb, &k->pa, &k->pb};
    for (int i = 0; i < 4; i++) {
        int32_t *a = realloc(*arrays[i], cap * sizeof(int32_t));
        if (!a) return -1;
        *arrays[i] = a;
    }
    k->fcap = cap;
    return 0;
}

/* ------------------------------------------------------------------ ROUGE-N */
static int ngram_counts(Kernel *k, TextBuf *T, Py_ssize_t nt, int n, RefCounts *out) {
    TextBuf *cand = &T[0];
    if (n == 1) {
        for (Py_ssize_t t = 0; t < nt; t++) {
            if (ivec_reserve(&T[t].gram, T[t].tok.n) < 0) return -1;
            memcpy(T[t].gram.a, T[t].tok.a, T[t].tok.n * sizeof(int32_t));
        }
    } else {
        size_t items = 0;
        for (Py_ssize_t t = 0; t < nt; t++) items += T[t].tok.n;
        if (umap_reset(&k->map, items) < 0) return -1;
        int32_t next = 0;
        for (Py_ssize_t t = 0; t < nt; t++) {
            Py_ssize_t m = T[t].tok.n - n + 1;
            int32_t *g = T[t].gram.a, *tok = T[t].tok.a;
            for (Py_ssize_t i = 0; i < m; i++) {
                int is_new;
                int32_t *v = umap_slot(&k->map, ((uint64_t)(uint32_t)g[i] << 32) | (uint32_t)tok[i + n - 1], 1, &is_new);
                if (is_new) *v = next++;
                g[i] = *v;
            }
        }
        if (local_reserve(k, (size_t)next) < 0) return -1;
    }
    Py_ssize_t nc = cand->tok.n - n + 1;
    if (nc < 0) nc = 0;
    int32_t *cnt = k->cntA;
    for (Py_ssize_t r = 1; r < nt; r++) {
        Py_ssize_t nr = T[r].tok.n - n + 1;
        if (nr < 0) nr = 0;
        int32_t *g = T[r].gram.a, *c = cand->gram.a;
        int64_t hits = 0;
        for (Py_ssize_t i = 0; i < nr; i++) cnt[g[i]]++;
        for (Py_ssize_t i = 0; i < nc; i++)
            if (cnt[c[i]] > 0) { hits++; cnt[c[i]]--; }
        for (Py_ssize_t i = 0; i < nr; i++) cnt[g[i]] = 0;
        out[r - 1].hits = pint(hits);
        out[r - 1].rtot = pint(nr);
        out[r - 1].ctot = pint(nc);
        out[r - 1].key = nr ? round5((double)hits / (double)nr) : 0.0;
    }
    return 0;
}

/* ------------------------------------------------------------------ ROUGE-S / SU */
static int64_t pair_total(Py_ssize_t n, long gap) {
    if (n < 2) return 0;
    int64_t D = gap < 0 ? n - 1 : (gap + 1 < n - 1 ? gap + 1 : n - 1);
    return D * (int64_t)n - D * (D + 1) / 2;
}

/* Clipped skip-bigram hits: only tokens in both texts can be in a shared pair,
 * so both texts are cut to those tokens (keeping their positions for the gap). */
static int skip_hits(Kernel *k, TextBuf *cand, TextBuf *ref, int64_t *out) {
    uint32_t ep = ++k->pepoch;
    if (ep == 0) { memset(k->pstamp, 0, k->lcap * sizeof(uint32_t)); ep = k->pepoch = 1; }
    for (Py_ssize_t i = 0; i < ref->tok.n; i++) k->pstamp[ref->tok.a[i]] = ep;
    if (fvec_reserve(k, (size_t)(cand->tok.n > ref->tok.n ? cand->tok.n : ref->tok.n)) < 0) return -1;
    int32_t S = 0;
    Py_ssize_t mc = 0, mr = 0;
    for (Py_ssize_t i = 0; i < cand->tok.n; i++) {
        int32_t t = cand->tok.a[i];
        if (k->pstamp[t] != ep) continue;
        if (k->sid[t] < 0) k->sid[t] = S++;
        k->fa[mc] = k->sid[t]; k->pa[mc++] = (int32_t)i;
    }
    for (Py_ssize_t i = 0; i < ref->tok.n; i++) {
        int32_t t = ref->tok.a[i];
        if (k->sid[t] < 0) continue;
        k->fb[mr] = k->sid[t]; k->pb[mr++] = (int32_t)i;
    }
    for (Py_ssize_t i = 0; i < cand->tok.n; i++) k->sid[cand->tok.a[i]] = -1;
    int64_t hits = 0, G = k->gap < 0 ? INT64_MAX : (int64_t)k->gap + 1;
    if (S <= 1024) {
        size_t cells = (size_t)S * (size_t)S;
        if (cells > k->mcap) {
            free(k->matrix);
            k->matrix = calloc(cells, sizeof(uint32_t));
            if (!k->matrix) { k->mcap = 0; return -1; }
            k->mcap = cells;
        }
        uint32_t *M = k->matrix;
        int64_t ref_pairs = 0;
        for (Py_ssize_t p = 0; p < mr; p++) {
            uint32_t *row = M + (size_t)k->fb[p] * S;
            for (Py_ssize_t q = p + 1; q < mr && k->pb[q] - k->pb[p] <= G; q++) { row[k->fb[q]]++; ref_pairs++; }
        }
        for (Py_ssize_t p = 0; p < mc; p++) {
            uint32_t *row = M + (size_t)k->fa[p] * S;
            for (Py_ssize_t q = p + 1; q < mc && k->pa[q] - k->pa[p] <= G; q++) {
                uint32_t *c = &row[k->fa[q]];
                if (*c) { hits++; (*c)--; }
            }
        }
        if ((size_t)ref_pairs > cells / 4) memset(M, 0, cells * sizeof(uint32_t));
        else
            for (Py_ssize_t p = 0; p < mr; p++) {
                uint32_t *row = M + (size_t)k->fb[p] * S;
                for (Py_ssize_t q = p + 1; q < mr && k->pb[q] - k->pb[p] <= G; q++) row[k->fb[q]] = 0;
            }
    } else {
        if (umap_reset(&k->map, (size_t)(pair_total(mr, k->gap) + 1)) < 0) return -1;
        int is_new;
        for (Py_ssize_t p = 0; p < mr; p++)
            for (Py_ssize_t q = p + 1; q < mr && k->pb[q] - k->pb[p] <= G; q++)
                (*umap_slot(&k->map, ((uint64_t)(uint32_t)k->fb[p] << 32) | (uint32_t)k->fb[q], 1, &is_new))++;
        for (Py_ssize_t p = 0; p < mc; p++)
            for (Py_ssize_t q = p + 1; q < mc && k->pa[q] - k->pa[p] <= G; q++) {
                int32_t *c = umap_slot(&k->map, ((uint64_t)(uint32_t)k->fa[p] << 32) | (uint32_t)k->fa[q], 0, &is_new);
                if (c && *c) { hits++; (*c)--; }
            }
    }
    *out = hits;
    return 0;
}

static int64_t clipped_unigrams(Kernel *k, const int32_t *a, Py_ssize_t na, const int32_t *b, Py_ssize_t nb) {
    int32_t *cnt = k->cntA;
    int64_t hits = 0;
    for (Py_ssize_t i = 0; i < na; i++) cnt[a[i]]++;
    for (Py_ssize_t i = 0; i < nb; i++)
        if (cnt[b[i]] > 0) { hits++; cnt[b[i]]--; }
    for (Py_ssize_t i = 0; i < na; i++) cnt[a[i]] = 0;
    return hits;
}

/* lcs_marks for a candidate sentence of at most 64 tokens: one machine word per
 * row.  The walk back does not test cell by cell: in row i, the cells where
 * c[i][j] - c[i-1][j] = 1 are the prefix parity of row_{i-1} XOR row_i (the
 * differences alternate +1, -1 along the row), so the first column to the left
 * where the script stops moving left (a diagonal match, or "up >= left") is the
 * highest set bit of (match mask | ~parity) below j. */
static inline uint64_t prefix_xor(uint64_t x) {
    x ^= x << 1; x ^= x << 2; x ^= x << 4; x ^= x << 8; x ^= x << 16; x ^= x << 32;
    return x;
}
static int lcs_marks_short(Kernel *k, TextBuf *T, Py_ssize_t nt, const int32_t *c, Py_ssize_t n) {
    uint64_t full = n == 64 ? ~0ULL : (1ULL << n) - 1;
    uint64_t *mask = k->mask1;
    for (Py_ssize_t j = 0; j < n; j++) mask[c[j]] |= 1ULL << j;
    for (Py_ssize_t r = 1; r < nt; r++) {
        TextBuf *ref = &T[r];
        const int32_t *rt = LTOK(ref);
        for (Py_ssize_t rs = 0; rs < NSENT(ref); rs++) {
            Py_ssize_t r0 = ref->sent.a[rs], m = ref->sent.a[rs + 1] - r0;
            if (m == 0) continue;
            const int32_t *a = rt + r0;
            if ((size_t)(m + 1) > k->rowcap || (size_t)m > k->fcap) {
                uint64_t *rw = grow(k->rows, &k->rowcap, m + 1, sizeof(uint64_t));
                if (rw) k->rows = rw;
                if (!rw || fvec_reserve(k, m) < 0) {
                    for (Py_ssize_t j = 0; j < n; j++) mask[c[j]] = 0;
                    return -1;
                }
            }
            /* Only rows whose token occurs in the candidate sentence change the
             * row (and the walk goes straight up through the others), so only
             * they are kept: at[p] is the reference position of kept row p. */
            uint64_t *rows = k->rows, row = full;
            int32_t *at = k->fa;
            uint8_t *marks = ref->mark.a + r0;
            Py_ssize_t kept = 0;
            int open = 0;
            rows[0] = full;
            for (Py_ssize_t i = 0; i < m; i++) { /* branch-free: a row without a match is the row above */
                uint64_t M = mask[a[i]], u = row & M;
                row = ((row + u) | (row - u)) & full;
                at[kept] = (int32_t)i;
                rows[kept + 1] = row;
                open |= (M != 0) & !marks[i];
                kept += M != 0;
            }
            /* No common token, or every position the walk could mark is marked
             * already (the marks are a union): nothing to add. */
            if (row == full || !open) continue;
            Py_ssize_t p = kept, j = n;
            while (p && j) {
                uint64_t below = j == 64 ? ~0ULL : (1ULL << j) - 1;
                if ((rows[p] & below) == below) break; /* c[i][j] = 0: no match left on the path */
                uint64_t M = mask[a[at[p - 1]]];
                uint64_t stop = (M | ~prefix_xor(rows[p - 1] ^ rows[p])) & below;
                if (!stop) break; /* left all the way to column 0 */
                int col = 63 - __builtin_clzll(stop);
                j = col + 1;
                if (M >> col & 1) { p--; j--; marks[at[p]] = 1; }
                else p--;
            }
        }
    }
    for (Py_ssize_t j = 0; j < n; j++) mask[c[j]] = 0;
    return 0;
}

/* ------------------------------------------------------------------ ROUGE-L */
/* Every reference's marks of one kind (`mark` for ROUGE-L, `wmark` for ROUGE-W),
 * sized to the reference and cleared: the union of a candidate's LCS paths. */
static int clear_marks(TextBuf *T, Py_ssize_t nt, size_t field) {
    for (Py_ssize_t r = 1; r < nt; r++) {
        BVec *marks = (BVec *)((char *)&T[r] + field);
        if (bvec_reserve(marks, LN(&T[r]) + 1) < 0) return -1;
        memset(marks->a, 0, LN(&T[r]) + 1);
    }
    return 0;
}

static int lcs_marks(Kernel *k, TextBuf *T, Py_ssize_t nt) {
    TextBuf *cand = &T[0];
    const int32_t *ct = LTOK(cand);
    if (clear_marks(T, nt, offsetof(TextBuf, mark)) < 0) return -1;
    for (Py_ssize_t cs = 0; cs < NSENT(cand); cs++) {
        Py_ssize_t c0 = cand->sent.a[cs], n = cand->sent.a[cs + 1] - c0;
        if (n == 0) continue;
        const int32_t *c = ct + c0;
        if (n <= 64) {
            if (lcs_marks_short(k, T, nt, c, n) < 0) return -1;
            continue;
        }
        Py_ssize_t W = (n + 63) >> 6;
        uint64_t last = (n & 63) ? ((1ULL << (n & 63)) - 1) : ~0ULL;
        /* position masks of the candidate sentence's tokens */
        int32_t slots = 0;
        for (Py_ssize_t j = 0; j < n; j++)
            if (k->mslot[c[j]] < 0) k->mslot[c[j]] = slots++;
        size_t need = (size_t)slots * W;
        if (need > k->maskcap) {
            uint64_t *m = grow(k->masks, &k->maskcap, need, sizeof(uint64_t));
            if (!m) return -1;
            k->masks = m;
        }
        memset(k->masks, 0, need * sizeof(uint64_t));
        for (Py_ssize_t j = 0; j < n; j++) k->masks[(size_t)k->mslot[c[j]] * W + (j >> 6)] |= 1ULL << (j & 63);
        for (Py_ssize_t r = 1; r < nt; r++) {
            TextBuf *ref = &T[r];
            const int32_t *rt = LTOK(ref);
            for (Py_ssize_t rs = 0; rs < NSENT(ref); rs++) {
                Py_ssize_t r0 = ref->sent.a[rs], m = ref->sent.a[rs + 1] - r0;
                if (m == 0) continue;
                const int32_t *a = rt + r0;
                size_t rneed = (size_t)(m + 1) * W;
                if (rneed > k->rowcap) {
                    uint64_t *rw = grow(k->rows, &k->rowcap, rneed, sizeof(uint64_t));
                    if (!rw) { /* reset the slots before leaving */
                        for (Py_ssize_t j = 0; j < n; j++) k->mslot[c[j]] = -1;
                        return -1;
                    }
                    k->rows = rw;
                }
                uint64_t *rows = k->rows;
                for (Py_ssize_t w = 0; w < W; w++) rows[w] = ~0ULL;
                rows[W - 1] = last;
                for (Py_ssize_t i = 0; i < m; i++) {
                    uint64_t *prev = rows + i * W, *row = prev + W;
                    int32_t s = k->mslot[a[i]];
                    if (s < 0) { memcpy(row, prev, W * sizeof(uint64_t)); continue; }
                    const uint64_t *M = k->masks + (size_t)s * W;
                    uint64_t carry = 0;
                    for (Py_ssize_t w = 0; w < W; w++) {
                        uint64_t v = prev[w], u = v & M[w];
                        uint64_t s1 = v + u, c1 = s1 < v;
                        uint64_t s2 = s1 + carry;
                        c1 |= s2 < s1;
                        carry = c1;
                        row[w] = s2 | (v - u);
                    }
                    row[W - 1] &= last;
                }
                const uint64_t *fin = rows + m * W;
                int full = fin[W - 1] == last;
                for (Py_ssize_t w = 0; full && w < W - 1; w++) full = fin[w] == ~0ULL;
                if (full) continue;
                int64_t length = n;
                for (Py_ssize_t w = 0; w < W; w++) length -= __builtin_popcountll(fin[w]);
                Py_ssize_t i = m, j = n;
                uint8_t *marks = ref->mark.a + r0;
                while (i && j) {
                    if (a[i - 1] == c[j - 1]) { i--; j--; marks[i] = 1; length--; continue; }
                    const uint64_t *up = rows + (i - 1) * W;
                    int64_t ones = 0;
                    Py_ssize_t full_words = j >> 6;
                    for (Py_ssize_t w = 0; w < full_words; w++) ones += __builtin_popcountll(up[w]);
                    if (j & 63) ones += __builtin_popcountll(up[full_words] & ((1ULL << (j & 63)) - 1));
                    if (j - ones == length) i--;
                    else j--;
                }
            }
        }
        for (Py_ssize_t j = 0; j < n; j++) k->mslot[c[j]] = -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ ROUGE-W */
static int wlcs_marks(Kernel *k, TextBuf *T, Py_ssize_t nt) {
    TextBuf *cand = &T[0];
    const int32_t *ct = LTOK(cand);
    if (clear_marks(T, nt, offsetof(TextBuf, wmark)) < 0) return -1;
    const PNum *wt = k->w;
    for (Py_ssize_t cs = 0; cs < NSENT(cand); cs++) {
        Py_ssize_t c0 = cand->sent.a[cs], n = cand->sent.a[cs + 1] - c0;
        if (n == 0) continue;
        const int32_t *c = ct + c0;
        uint32_t ep = ++k->pepoch;
        if (ep == 0) { memset(k->pstamp, 0, k->lcap * sizeof(uint32_t)); ep = k->pepoch = 1; }
        for (Py_ssize_t j = 0; j < n; j++) k->pstamp[c[j]] = ep;
        if ((size_t)(n + 1) > k->dpcap) {
            size_t cap = k->dpcap;
            double *d = grow(k->sc_up, &cap, n + 1, sizeof(double));
            if (!d) return -1;
            k->sc_up = d; cap = k->dpcap;
            if (!(d = grow(k->sc, &cap, n + 1, sizeof(double)))) return -1;
            k->sc = d; cap = k->dpcap;
            int32_t *ri = grow(k->run_up, &cap, n + 1, sizeof(int32_t));
            if (!ri) return -1;
            k->run_up = ri; cap = k->dpcap;
            if (!(ri = grow(k->run, &cap, n + 1, sizeof(int32_t)))) return -1;
            k->run = ri; k->dpcap = cap;
        }
        for (Py_ssize_t r = 1; r < nt; r++) {
            TextBuf *ref = &T[r];
            const int32_t *rt = LTOK(ref);
            for (Py_ssize_t rs = 0; rs < NSENT(ref); rs++) {
                Py_ssize_t r0 = ref->sent.a[rs], m = ref->sent.a[rs + 1] - r0;
                if (m == 0) continue;
                const int32_t *a = rt + r0;
                /* Only a position whose token is in the candidate sentence can be
                 * marked; when all of them are marked already, nothing changes. */
                const uint8_t *done = ref->wmark.a + r0;
                int open = 0;
                for (Py_ssize_t i = 0; i < m && !open; i++) open = k->pstamp[a[i]] == ep && !done[i];
                if (!open) continue;
                size_t sneed = (size_t)m * (size_t)(n + 1);
                if (sneed > k->stepcap) {
                    uint8_t *s = grow(k->steps, &k->stepcap, sneed, 1);
                    if (!s) return -1;
                    k->steps = s;
                }
                if ((size_t)m > k->skcap) {
                    uint8_t *s = grow(k->skipped, &k->skcap, m, 1);
                    if (!s) return -1;
                    k->skipped = s;
                }
                double *up = k->sc_up, *sc = k->sc;
                int32_t *uprun = k->run_up, *run = k->run;
                for (Py_ssize_t j = 0; j <= n; j++) { up[j] = 0.0; uprun[j] = 0; }
                int nondecreasing = 1;
                for (Py_ssize_t i = 0; i < m; i++) {
                    int32_t t = a[i];
                    if (nondecreasing && k->pstamp[t] != ep) {
                        k->skipped[i] = 1;
                        for (Py_ssize_t j = 0; j <= n; j++) uprun[j] = 0;
                        continue;
                    }
                    k->skipped[i] = 0;
                    uint8_t *step = k->steps + (size_t)i * (n + 1);
                    sc[0] = 0.0; run[0] = 0; step[0] = 0;
                    for (Py_ssize_t j = 1; j <= n; j++) {
                        if (t == c[j - 1]) {
                            int32_t kk = uprun[j - 1];
                            sc[j] = (up[j - 1] + tod(wt[kk + 1])) - tod(wt[kk]);
                            run[j] = kk + 1;
                            step[j] = 1;
                        } else if (up[j] >= sc[j - 1]) {
                            sc[j] = up[j]; run[j] = 0; step[j] = 0;
                        } else {
                            sc[j] = sc[j - 1]; run[j] = 0; step[j] = 2;
                        }
                    }
                    double *tmp = up; up = sc; sc = tmp;
                    int32_t *tr = uprun; uprun = run; run = tr;
                    nondecreasing = 1;
                    for (Py_ssize_t j = 0; j < n && nondecreasing; j++) nondecreasing = up[j] <= up[j + 1];
                }
                k->sc_up = up; k->sc = sc; k->run_up = uprun; k->run = run;
                Py_ssize_t i = m, j = n;
                uint8_t *marks = ref->wmark.a + r0;
                while (i && j) {
                    int move = k->skipped[i - 1] ? 0 : k->steps[(size_t)(i - 1) * (n + 1) + j];
                    if (move == 1) { i--; j--; marks[i] = 1; }
                    else if (move == 0) i--;
                    else j--;
                }
            }
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ combining */
static RefCounts best_of(const RefCounts *rc, Py_ssize_t n, Py_ssize_t skip) {
    Py_ssize_t b = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i == skip) continue;
        if (b < 0 || rc[i].key > rc[b].key) b = i;
    }
    return rc[b];
}

typedef struct { PNum rt, ct, h; double r, p, f; } Stats;

static Stats finish(Kernel *k, PNum hits, PNum rt, PNum ct, int weighted) {
    Stats s = {rt, ct, hits, 0, 0, 0};
    PNum recall = pnonzero(rt) ? perl_divide(hits, rt, &k->bail) : pint(0);
    PNum precision = pnonzero(ct) ? perl_divide(hits, ct, &k->bail) : pint(0);
    double r = tod(recall), p = tod(precision);
    if (weighted) { r = python_pow(r, k->inverse, &k->bail); p = python_pow(p, k->inverse, &k->bail); }
    s.r = round5(r); s.p = round5(p);
    s.f = f_measure(s.r, s.p, k->alpha);
    return s;
}

static Stats combine(Kernel *k, RefCounts *rc, Py_ssize_t n, int weighted) {
    if (k->mode == M_AVERAGE) {
        PNum h = pint(0), rt = pint(0), ct = pint(0);
        for (Py_ssize_t i = 0; i < n; i++) h = perl_add(h, rc[i].hits, &k->bail);
        for (Py_ssize_t i = 0; i < n; i++) rt = perl_add(rt, rc[i].rtot, &k->bail);
        for (Py_ssize_t i = 0; i < n; i++) ct = perl_add(ct, rc[i].ctot, &k->bail);
        return finish(k, h, rt, ct, weighted);
    }
    if (k->mode == M_BEST || n == 1) {
        RefCounts b = best_of(rc, n, -1);
        return finish(k, b.hits, b.rtot, b.ctot, weighted);
    }
    PNum srt = pint(0), sct = pint(0), sh = pint(0);
    double sr = 0, sp = 0, sf = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        RefCounts b = best_of(rc, n, i);
        Stats s = finish(k, b.hits, b.rtot, b.ctot, weighted);
        srt = python_add(srt, s.rt, &k->bail);
        sct = python_add(sct, s.ct, &k->bail);
        sh = python_add(sh, s.h, &k->bail);
        sr += s.r; sp += s.p; sf += s.f;
    }
    Stats out;
    out.rt = pflt(tod(srt) / (double)n);
    out.ct = pflt(tod(sct) / (double)n);
    out.h = pflt(tod(sh) / (double)n);
    out.r = round5(sr / (double)n); out.p = round5(sp / (double)n); out.f = round5(sf / (double)n);
    return out;
}

static PyObject *stats_object(Kernel *k, const Stats *s) {
    PyTypeObject *type = (PyTypeObject *)k->stats_type;
    PyObject *t = type->tp_alloc(type, 6);
    if (!t) return NULL;
    PyObject *v[6] = {pnum_object(s->rt), pnum_object(s->ct), pnum_object(s->h),
                      PyFloat_FromDouble(s->r), PyFloat_FromDouble(s->p), PyFloat_FromDouble(s->f)};
    for (int i = 0; i < 6; i++) {
        if (!v[i]) {
            for (int j = 0; j < 6; j++) Py_XDECREF(v[j]);
            Py_DECREF(t);
            return NULL;
        }
    }
    for (int i = 0; i < 6; i++) PyTuple_SET_ITEM(t, i, v[i]);
    if (PyObject_GC_IsTracked(t)) PyObject_GC_UnTrack(t); /* numbers only: no cycle to find */
    return t;
}

/* ------------------------------------------------------------------ one pair */
/* Every metric's per-reference counts of one pair, from the token ids alone:
 * runs without the GIL (no Python object is touched; errors are out of memory). */
static int count_all(Kernel *k, TextBuf *T, Py_ssize_t nt, int64_t *shits, PNum *wbase) {
    Py_ssize_t nrefs = nt - 1;
    int done_l = 0, done_w = 0, done_s = 0;
    for (int tag = 0; tag < k->ntags; tag++) {
        RefCounts *out = k->rc + (size_t)tag * nrefs;
        switch (k->kind[tag]) {
        case K_NGRAM:
            /* levels are computed in order: ROUGE-1..N come first in the tag list */
            if (ngram_counts(k, T, nt, k->arg[tag], out) < 0) return -1;
            break;
        case K_LCS: {
            if (!done_l && lcs_marks(k, T, nt) < 0) return -1;
            done_l = 1;
            int32_t *rcnt = k->cntA, *ccnt = k->cntB;
            for (Py_ssize_t r = 1; r < nt; r++) {
                TextBuf *ref = &T[r];
                for (Py_ssize_t i = 0; i < ref->tok.n; i++) rcnt[ref->tok.a[i]]++;
                for (Py_ssize_t i = 0; i < T[0].tok.n; i++) ccnt[T[0].tok.a[i]]++;
                const int32_t *lt = LTOK(ref);
                int64_t hits = 0;
                for (Py_ssize_t p = 0; p < LN(ref); p++) {
                    int32_t t = lt[p];
                    if (ref->mark.a[p] && rcnt[t] > 0 && ccnt[t] > 0) { hits++; rcnt[t]--; ccnt[t]--; }
                }
                for (Py_ssize_t i = 0; i < ref->tok.n; i++) rcnt[ref->tok.a[i]] = 0;
                for (Py_ssize_t i = 0; i < T[0].tok.n; i++) ccnt[T[0].tok.a[i]] = 0;
                int64_t base = LN(ref);
                out[r - 1].hits = pint(hits);
                out[r - 1].rtot = pint(base);
                out[r - 1].ctot = pint(T[0].tok.n);
                out[r - 1].key = base ? (double)hits / (double)base : 0.0;
            }
            break;
        }
        case K_WLCS: {
            if (!done_w && wlcs_marks(k, T, nt) < 0) return -1;
            done_w = 1;
            int32_t *rcnt = k->cntA, *ccnt = k->cntB;
            for (Py_ssize_t r = 1; r < nt; r++) {
                TextBuf *ref = &T[r];
                for (Py_ssize_t i = 0; i < ref->tok.n; i++) rcnt[ref->tok.a[i]]++;
                for (Py_ssize_t i = 0; i < T[0].tok.n; i++) ccnt[T[0].tok.a[i]]++;
                const int32_t *lt = LTOK(ref);
                const uint8_t *mk = ref->wmark.a;
                PNum hits = pint(0), base = pint(0);
                for (Py_ssize_t s = 0; s < NSENT(ref); s++) {
                    Py_ssize_t s0 = ref->sent.a[s], s1 = ref->sent.a[s + 1];
                    base = perl_add(base, k->w[s1 - s0], &k->bail);
                    int64_t run = 0;
                    for (Py_ssize_t p = s0; p < s1; p++) {
                        int32_t t = lt[p];
                        if (mk[p] && rcnt[t] > 0 && ccnt[t] > 0) {
                            run++;
                            if (p + 1 == s1 || !mk[p + 1]) { hits = perl_add(hits, k->w[run], &k->bail); run = 0; }
                            rcnt[t]--; ccnt[t]--;
                        }
                    }
                }
                for (Py_ssize_t i = 0; i < ref->tok.n; i++) rcnt[ref->tok.a[i]] = 0;
                for (Py_ssize_t i = 0; i < T[0].tok.n; i++) ccnt[T[0].tok.a[i]] = 0;
                out[r - 1].hits = hits;
                out[r - 1].key = 0.0;
                if (pnonzero(base))
                    out[r - 1].key = python_pow(tod(perl_divide(hits, base, &k->bail)), k->inverse, &k->bail);
                wbase[r - 1] = base; /* f(base) needs Python: score_pair adds it */
                out[r - 1].ctot = k->w[T[0].tok.n];
            }
            break;
        }
        case K_SKIP: {
            if (!done_s) {
                for (Py_ssize_t r = 1; r < nt; r++)
                    if (skip_hits(k, &T[0], &T[r], &shits[r - 1]) < 0) return -1;
                done_s = 1;
            }
            Py_ssize_t nc = T[0].tok.n;
            int64_t ctot = pair_total(nc, k->gap);
            for (Py_ssize_t r = 1; r < nt; r++) {
                Py_ssize_t nr = T[r].tok.n;
                int64_t hits = shits[r - 1], rtot = pair_total(nr, k->gap), c = ctot;
                if (k->arg[tag]) { /* -u: the unigrams too, all but the last token */
                    hits += clipped_unigrams(k, T[r].tok.a, nr > 1 ? nr - 1 : 0, T[0].tok.a, nc > 1 ? nc - 1 : 0);
                    rtot += nr > 1 ? nr - 1 : 0;
                    c += nc > 1 ? nc - 1 : 0;
                }
                out[r - 1].hits = pint(hits);
                out[r - 1].rtot = pint(rtot);
                out[r - 1].ctot = pint(c);
                out[r - 1].key = rtot ? round5((double)hits / (double)rtot) : 0.0;
            }
            break;
        }
        }
    }
    return 0;
}


static PyObject *score_pair(Kernel *k, PyObject *pair) {
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) Py_RETURN_NONE;
    PyObject *cand = PyTuple_GET_ITEM(pair, 0), *refs = PyTuple_GET_ITEM(pair, 1);
    if (!PyList_Check(refs) && !PyTuple_Check(refs)) Py_RETURN_NONE;
    Py_ssize_t nrefs = PySequence_Fast_GET_SIZE(refs), nt = nrefs + 1;
    if (nrefs == 0) Py_RETURN_NONE;
    PyObject **ritems = PySequence_Fast_ITEMS(refs);
    if (nt > k->ntexts) {
        TextBuf *t = realloc(k->texts, nt * sizeof(TextBuf));
        if (!t) return PyErr_NoMemory();
        memset(t + k->ntexts, 0, (nt - k->ntexts) * sizeof(TextBuf));
        k->texts = t; k->ntexts = nt;
    }
    if (k->nvocab > (1 << 22)) { /* bounded memo, as scoring.py bounds its vocabulary */
        stable_clear(&k->raw); stable_clear(&k->vocab);
        k->nvocab = 0;
    }
    TextBuf *T = k->texts;
    k->bail = 0;
    int rc = read_text(k, cand, &T[0]);
    for (Py_ssize_t r = 0; rc > 0 && r < nrefs; r++) rc = read_text(k, ritems[r], &T[r + 1]);
    if (rc < 0) return NULL;
    if (rc == 0) Py_RETURN_NONE;
    /* work limits (RougeScorer._check_cost): over a limit, Python raises the error */
    if (k->skip) {
        for (Py_ssize_t t = 0; t < nt; t++) {
            __int128 n = T[t].tok.n;
            __int128 all = n * (n - 1) / 2, pairs = k->gap < 0 || all < n * (k->gap + 1) ? all : n * (k->gap + 1);
            if (pairs > k->max_skip_bigrams) Py_RETURN_NONE;
        }
    }
    if (k->rouge_l || k->wlcs) {
        __int128 limit = k->wlcs ? (__int128)k->max_lcs_cells : 64 * (__int128)k->max_lcs_cells;
        for (Py_ssize_t r = 1; r < nt; r++)
            if ((__int128)LN(&T[0]) * LN(&T[r]) > limit) Py_RETURN_NONE;
    }
    /* dense ids for this pair */
    uint32_t ep = ++k->epoch;
    if (ep == 0) { memset(k->stamp, 0, k->vcap * sizeof(uint32_t)); ep = k->epoch = 1; }
    int32_t V = 0;
    Py_ssize_t longest = 0;
    for (Py_ssize_t t = 0; t < nt; t++) {
        for (int part = 0; part < 1 + T[t].lsep; part++) {
            IVec *v = part ? &T[t].ltok : &T[t].tok;
            for (Py_ssize_t i = 0; i < v->n; i++) {
                int32_t g = v->a[i];
                if (k->stamp[g] != ep) { k->stamp[g] = ep; k->local[g] = V++; }
                v->a[i] = k->local[g];
            }
        }
        for (Py_ssize_t s = 0; s < NSENT(&T[t]); s++) {
            Py_ssize_t len = T[t].sent.a[s + 1] - T[t].sent.a[s];
            if (len > longest) longest = len;
        }
        if (ivec_reserve(&T[t].gram, T[t].tok.n + 1) < 0) return NULL;
    }
    if (local_reserve(k, (size_t)V + 1) < 0) return NULL;
    if (k->wlcs) {
        size_t upto = (size_t)longest + 1;
        if ((size_t)T[0].tok.n > upto) upto = (size_t)T[0].tok.n;
        if (weights_reserve(k, upto) < 0) return NULL;
        if (k->bail) Py_RETURN_NONE;
    }
    if ((size_t)(k->ntags * nrefs) > k->rccap) {
        RefCounts *p = grow(k->rc, &k->rccap, (size_t)(k->ntags * nrefs), sizeof(RefCounts));
        if (!p) return NULL;
        k->rc = p;
    }
    if ((size_t)nrefs > k->refcap) {
        size_t cap = k->refcap;
        int64_t *sh = grow(k->shits, &cap, (size_t)nrefs, sizeof(int64_t));
        if (!sh) return NULL;
        k->shits = sh;
        cap = k->refcap;
        PNum *wb = grow(k->wbase, &cap, (size_t)nrefs, sizeof(PNum));
        if (!wb) return NULL;
        k->wbase = wb;
        k->refcap = cap;
    }
    int counted;
    Py_BEGIN_ALLOW_THREADS
    counted = count_all(k, T, nt, k->shits, k->wbase);
    Py_END_ALLOW_THREADS
    if (counted < 0) return NULL;
    for (int tag = 0; tag < k->ntags; tag++) /* ROUGE-W's reference total f(base), in Python's arithmetic */
        if (k->kind[tag] == K_WLCS)
            for (Py_ssize_t r = 0; r < nrefs; r++)
                if (f_of(k, k->wbase[r], &k->rc[(size_t)tag * nrefs + r].rtot) < 0) return NULL;
    if (k->bail) Py_RETURN_NONE;
    if (k->packed) { /* rouge_core.aggregate.stats_bytes: per tag the six MetricStats fields */
        PyObject *bytes = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)k->ntags * 6 * (Py_ssize_t)sizeof(double));
        if (!bytes) return NULL;
        char *at = PyBytes_AS_STRING(bytes);
        for (int tag = 0; tag < k->ntags; tag++) {
            Stats s = combine(k, k->rc + (size_t)tag * nrefs, nrefs, k->kind[tag] == K_WLCS);
            if (k->bail) { Py_DECREF(bytes); Py_RETURN_NONE; }
            /* a count is an int below 2**53 (larger ones bail) or a float: as a double, exact */
            double six[6] = {s.rt.is_int ? (double)s.rt.i : s.rt.d, s.ct.is_int ? (double)s.ct.i : s.ct.d,
                             s.h.is_int ? (double)s.h.i : s.h.d, s.r, s.p, s.f};
            memcpy(at + (size_t)tag * sizeof six, six, sizeof six);
        }
        return bytes;
    }
    PyObject *result = PyDict_New();
    if (!result) return NULL;
    for (int tag = 0; tag < k->ntags; tag++) {
        Stats s = combine(k, k->rc + (size_t)tag * nrefs, nrefs, k->kind[tag] == K_WLCS);
        if (k->bail) { Py_DECREF(result); Py_RETURN_NONE; }
        PyObject *st = stats_object(k, &s);
        if (!st || PyDict_SetItem(result, PyList_GET_ITEM(k->tags, tag), st) < 0) {
            Py_XDECREF(st);
            Py_DECREF(result);
            return NULL;
        }
        Py_DECREF(st);
    }
    return result;
}

static PyObject *score_batch(Kernel *k, PyObject *pairs);

/* A call while another is scoring (from a Python callback of another thread) gets
 * None for every pair and leaves the other call's mode alone. */
static PyObject *score_batch_as(Kernel *k, PyObject *pairs, int packed) {
    if (k->busy) return score_batch(k, pairs);
    k->packed = packed;
    PyObject *out = score_batch(k, pairs);
    k->packed = 0;
    return out;
}

static PyObject *Kernel_score_batch(Kernel *k, PyObject *pairs) { return score_batch_as(k, pairs, 0); }

static PyObject *Kernel_score_batch_packed(Kernel *k, PyObject *pairs) { return score_batch_as(k, pairs, 1); }

static PyObject *score_batch(Kernel *k, PyObject *pairs) {
    PyObject *seq = PySequence_Fast(pairs, "pairs must be a sequence of (candidate, references)");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *out = PyList_New(n);
    if (!out) { Py_DECREF(seq); return NULL; }
    PyObject **items = PySequence_Fast_ITEMS(seq);
    /* The scratch buffers belong to one call at a time; a call from another
     * thread while this one waits in a Python callback gets None for every
     * pair (scored in Python instead). */
    int mine = !k->busy;
    k->busy = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *r;
        if (mine) r = score_pair(k, items[i]);
        else { r = Py_None; Py_INCREF(r); }
        if (!r) {
            if (!PyErr_Occurred()) PyErr_NoMemory(); /* the helpers return -1 without a Python error */
            k->busy = 0;
            Py_DECREF(out);
            Py_DECREF(seq);
            return NULL;
        }
        PyList_SET_ITEM(out, i, r);
    }
    if (mine) k->busy = 0;
    Py_DECREF(seq);
    return out;
}

static PyObject *Kernel_morph_stem(Kernel *k, PyObject *token) {
    /* The compiled morph_stem of one lowercase ASCII token (for tests). */
    if (!k->exceptions) { PyErr_SetString(PyExc_ValueError, "no compiled stemmer (exceptions=None)"); return NULL; }
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(token, &n);
    if (!s) return NULL;
    if (n > 3) {
        PyObject *e = PyDict_GetItemWithError(k->exceptions, token);
        if (e) { Py_INCREF(e); return e; }
        if (PyErr_Occurred()) return NULL;
    }
    char *w = malloc(n + 8);
    if (!w) return PyErr_NoMemory();
    memcpy(w, s, n);
    Py_ssize_t len = n > 3 ? porter(w, (int)n) : n;
    PyObject *out = PyUnicode_FromStringAndSize(w, len);
    free(w);
    return out;
}

static PyObject *Kernel_porter_stem(Kernel *k, PyObject *token) {
    /* The compiled porter_stem (for tests). */
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(token, &n);
    if (!s) return NULL;
    char *w = malloc(n + 8);
    if (!w) return PyErr_NoMemory();
    memcpy(w, s, n);
    PyObject *out = PyUnicode_FromStringAndSize(w, porter(w, (int)n));
    free(w);
    return out;
}

static PyObject *Kernel_vocabulary_size(Kernel *k, PyObject *unused) { return PyLong_FromLong(k->nvocab); }

static PyMethodDef Kernel_methods[] = {
    {"score_batch", (PyCFunction)Kernel_score_batch, METH_O,
     "score_batch(pairs) -> list: for each (candidate, references) a dict of MetricStats by tag, "
     "or None where the pair must be scored in Python."},
    {"score_batch_packed", (PyCFunction)Kernel_score_batch_packed, METH_O,
     "score_batch_packed(pairs) -> list: score_batch's statistics as rouge_core.aggregate.stats_bytes "
     "packs them (float64 bytes, six per tag), or None where the pair must be scored in Python."},
    {"vocabulary_size", (PyCFunction)Kernel_vocabulary_size, METH_NOARGS, "Distinct tokens memoised."},
    {"morph_stem", (PyCFunction)Kernel_morph_stem, METH_O, "The compiled rouge_core.stem.morph_stem."},
    {"porter_stem", (PyCFunction)Kernel_porter_stem, METH_O, "The compiled rouge_core.stem.porter_stem."},
    {NULL}};

static PyTypeObject KernelType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rouge_core._kernel.Kernel",
    .tp_basicsize = sizeof(Kernel),
    .tp_dealloc = (destructor)Kernel_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The compiled scoring kernel for one RougeScorer's settings (see rouge_core.kernel).",
    .tp_methods = Kernel_methods,
    .tp_init = (initproc)Kernel_init,
    .tp_new = PyType_GenericNew,
};

/* drand48 (the script's srand/rand): x = (A x + C) mod 2^48, srand(r) seeds (r << 16) + 0x330E;
 * splitmix64 (the pipeline's counter streams): the golden gamma and its two multipliers */
#define DRAND48_A 0x5DEECE66DULL
#define DRAND48_C 0xBULL
#define GOLDEN_GAMMA 0x9E3779B97F4A7C15ULL
#define SPLITMIX_M1 0xBF58476D1CE4E5B9ULL
#define SPLITMIX_M2 0x94D049BB133111EBULL

/* add_perl_draws(rows, sums, columns, resamples): ROUGE-1.5.5's bootstrap sums with
 * the script's draws made here, as they are used: resample r is srand(r), so its
 * drand48 state starts at (r << 16) + 0x330E and steps x = (0x5DEECE66D x + 0xB) mod
 * 2^48 once per draw, and draw k is int(n * x / 2^48): the arithmetic of
 * rouge_core.resampling._generate_draws (the exact product of two doubles, one
 * rounding, truncation), with no array of n x resamples draws.  rows: C-contiguous
 * float64 (n, columns); sums: float64 (resamples, columns), added to in place, each
 * sum left to right in draw order.  A resample's draws are made TILE at a time, and
 * its sums held in registers, WIDE columns at a time, while a tile's rows are added
 * (one load and store of a sum per tile, not per draw: 10.8 -> 6.0 ns per draw of 24
 * columns at 8,000 documents).  `wide` (the default): with AVX-512 where the CPU
 * has it, below: 4.5 -> 2.4 ns a draw. */
#if defined(__GNUC__)
typedef double v2d __attribute__((vector_size(16))); /* two doubles: SSE2 on x86-64, NEON on arm64 */
static inline v2d load2(const double *p) {
    v2d v;
    memcpy(&v, p, sizeof v); /* (unaligned) */
    return v;
}
static inline void store2(double *p, v2d v) { memcpy(p, &v, sizeof v); }
#endif

#if defined(__GNUC__)
/* add_vectors_V: sum[0 .. 2V) (and sum[2V] when `lone`) += the drawn rows' values there (rows of `stride`
 * doubles), V two-lane vectors held in registers: V independent chains of
 * additions, each lane its column's sum left to right in draw order (the bits of
 * a scalar loop).  One pass over the draws for up to 24 columns: a column summed
 * alone is a chain of dependent adds, 4 cycles a draw. */
#define AHEAD 12 /* draws: a row's cache lines are asked for this many draws before it is added (the
                    * draws are known a tile ahead; rows of a large system are read from memory) */
static inline void prefetch_row(const double *row, Py_ssize_t stride) {
    const char *start = (const char *)row, *end = (const char *)(row + stride) - 1;
    for (const char *line = start; line < end; line += 64) __builtin_prefetch(line);
    __builtin_prefetch(end);
}
#define ADD_VECTORS(V)                                                                                        \
    static void add_vectors_##V(double *restrict sum, const double *restrict values, const int64_t *restrict drawn, \
                                int64_t count, Py_ssize_t stride, int lone) {                                 \
        v2d a[V];                                                                                             \
        double h = lone ? sum[2 * V] : 0.0; /* a last, odd column: one scalar chain in the same pass */       \
        _Pragma("GCC unroll 12") for (int j = 0; j < V; j++) a[j] = load2(sum + 2 * j);                       \
        for (int64_t k = 0; k < count; k++) {                                                                 \
            if (k + AHEAD < count) prefetch_row(values + drawn[k + AHEAD] * stride, stride);                  \
            const double *restrict row = values + drawn[k] * stride;                                          \
            _Pragma("GCC unroll 12") for (int j = 0; j < V; j++) a[j] += load2(row + 2 * j);                  \
            if (lone) h += row[2 * V];                                                                        \
        }                                                                                                     \
        _Pragma("GCC unroll 12") for (int j = 0; j < V; j++) store2(sum + 2 * j, a[j]);                       \
        if (lone) sum[2 * V] = h;                                                                             \
    }
ADD_VECTORS(1)
ADD_VECTORS(2)
ADD_VECTORS(3)
ADD_VECTORS(4)
ADD_VECTORS(5)
ADD_VECTORS(6)
ADD_VECTORS(7)
ADD_VECTORS(8)
ADD_VECTORS(9)
ADD_VECTORS(10)
ADD_VECTORS(11)
ADD_VECTORS(12)
typedef void (*add_vectors_fn)(double *restrict, const double *restrict, const int64_t *restrict, int64_t, Py_ssize_t,
                               int);
static const add_vectors_fn add_vectors[13] = {NULL, add_vectors_1, add_vectors_2, add_vectors_3, add_vectors_4,
                                               add_vectors_5, add_vectors_6, add_vectors_7, add_vectors_8,
                                               add_vectors_9, add_vectors_10, add_vectors_11, add_vectors_12};
#endif

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
/* The same sums with AVX-512 where the CPU has it (F, DQ and VL, checked once, at
 * run time: the module is built for any x86-64): four resamples' draws made in one
 * vector of 64-bit lanes, then added in the same loop, eight doubles a vector, so
 * that a column's chain of dependent additions (4 cycles each) is one of twelve in
 * flight.  A vector's lanes are independent IEEE additions, as the two-lane ones
 * (no fused multiply-add: there is no multiply), so every column's sum is still
 * left to right in its resample's draw order: the same bits.  A pass takes up to
 * 24 columns in three vectors, the last one's lanes past the columns masked. */
enum { WIDE_LANES = 4, WIDE_VECTORS = 3 };

/* add_avx512_T: four resamples' sums (rows `sum_stride` apart) += the rows (`stride`
 * doubles apart; 64-byte aligned, or read from memory anyway) their draws pick (drawn[4k + l]: draw k of
 * resample l), in T vectors of eight columns, the last one's lanes outside `tail`
 * masked (loaded as zero, never stored); `ahead`: rows asked for AHEAD draws early. */
#define ADD_AVX512(T)                                                                                         \
    __attribute__((target("avx512f"))) static void add_avx512_##T(                                            \
        double *restrict sum, Py_ssize_t sum_stride, const double *restrict values, const int64_t *restrict drawn, \
        int64_t count, Py_ssize_t stride, __mmask8 tail, int ahead) {                                         \
        __m512d a[WIDE_LANES][T];                                                                             \
        _Pragma("GCC unroll 4") for (int l = 0; l < WIDE_LANES; l++) {                                        \
            _Pragma("GCC unroll 3") for (int j = 0; j < T - 1; j++) a[l][j] = _mm512_loadu_pd(sum + l * sum_stride + 8 * j); \
            a[l][T - 1] = _mm512_maskz_loadu_pd(tail, sum + l * sum_stride + 8 * (T - 1));                    \
        }                                                                                                     \
        for (int64_t k = 0; k < count; k++) {                                                                 \
            const int64_t *restrict d = drawn + WIDE_LANES * k;                                               \
            if (ahead && k + AHEAD < count)                                                                   \
                _Pragma("GCC unroll 4") for (int l = 0; l < WIDE_LANES; l++)                                  \
                    prefetch_row(values + d[WIDE_LANES * AHEAD + l] * stride, 8 * T);                         \
            _Pragma("GCC unroll 4") for (int l = 0; l < WIDE_LANES; l++) {                                    \
                const double *restrict row = values + d[l] * stride;                                          \
                _Pragma("GCC unroll 3") for (int j = 0; j < T - 1; j++)                                       \
                    a[l][j] = _mm512_add_pd(a[l][j], _mm512_loadu_pd(row + 8 * j));                          \
                a[l][T - 1] = _mm512_add_pd(a[l][T - 1], _mm512_maskz_loadu_pd(tail, row + 8 * (T - 1)));    \
            }                                                                                                 \
        }                                                                                                     \
        _Pragma("GCC unroll 4") for (int l = 0; l < WIDE_LANES; l++) {                                        \
            _Pragma("GCC unroll 3") for (int j = 0; j < T - 1; j++) _mm512_storeu_pd(sum + l * sum_stride + 8 * j, a[l][j]); \
            _mm512_mask_storeu_pd(sum + l * sum_stride + 8 * (T - 1), tail, a[l][T - 1]);                     \
        }                                                                                                     \
    }
ADD_AVX512(1)
ADD_AVX512(2)
ADD_AVX512(3)
typedef void (*add_avx512_fn)(double *restrict, Py_ssize_t, const double *restrict, const int64_t *restrict,
                              int64_t, Py_ssize_t, __mmask8, int);

/* Draws k0 .. k0 + count - 1 of four resamples at once (their drand48 states in x,
 * stepped), as drawn[4k + l]: the scalar loop's arithmetic in 64-bit lanes (the
 * low 64 bits of the product, the exact conversion of x < 2^48, the same two
 * roundings of the multiplications, truncation), so the same draws. */
__attribute__((target("avx512f,avx512dq,avx512vl"))) static void draws_avx512(uint64_t *x, int64_t count, int64_t n,
                                                                             int64_t *drawn) {
    __m256i state = _mm256_loadu_si256((const __m256i *)x);
    const __m256i multiplier = _mm256_set1_epi64x((long long)DRAND48_A), increment = _mm256_set1_epi64x((long long)DRAND48_C),
                  mask = _mm256_set1_epi64x((1LL << 48) - 1), last = _mm256_set1_epi64x(n - 1);
    const __m256d unit = _mm256_set1_pd(0x1p-48), scale = _mm256_set1_pd((double)n);
    for (int64_t k = 0; k < count; k++) {
        state = _mm256_and_si256(_mm256_add_epi64(_mm256_mullo_epi64(state, multiplier), increment), mask);
        const __m256i i = _mm256_cvttpd_epi64(_mm256_mul_pd(scale, _mm256_mul_pd(_mm256_cvtepi64_pd(state), unit)));
        _mm256_storeu_si256((__m256i *)(drawn + WIDE_LANES * k), _mm256_min_epi64(i, last));
    }
    _mm256_storeu_si256((__m256i *)x, state);
}
static const add_avx512_fn add_avx512[WIDE_VECTORS + 1] = {NULL, add_avx512_1, add_avx512_2, add_avx512_3};

static int has_avx512(void) {
    static int found = -1;
    if (found < 0) {
        __builtin_cpu_init();
        found = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                __builtin_cpu_supports("avx512vl");
    }
    return found;
}
#endif

/* sum[c] += values[drawn[k] * columns + c] for c < columns, k = 0 .. count-1, each sum
 * left to right. */
static inline void add_drawn_rows(double *restrict sum, const double *restrict values, const int64_t *restrict drawn,
                                  int64_t count, Py_ssize_t columns) {
    Py_ssize_t c0 = 0;
#if defined(__GNUC__)
    while (c0 < columns) {
        const Py_ssize_t left = columns - c0;
        if (left == 1) { /* one column left and no vector: it alone */
            double h = sum[c0];
            for (int64_t k = 0; k < count; k++) h += values[drawn[k] * columns + c0];
            sum[c0] = h;
            break;
        }
        const Py_ssize_t vectors = left / 2 < 12 ? left / 2 : 12;
        const int lone = left < 24 && (left & 1); /* the last, odd column, added in this last pass */
        add_vectors[vectors](sum + c0, values + c0, drawn, count, columns, lone);
        c0 += 2 * vectors + lone;
    }
#else
    enum { WIDE = 4 }; /* four sums held in registers */
    for (; c0 + WIDE <= columns; c0 += WIDE) {
        double h0 = sum[c0], h1 = sum[c0 + 1], h2 = sum[c0 + 2], h3 = sum[c0 + 3];
        for (int64_t k = 0; k < count; k++) {
            const double *restrict row = values + drawn[k] * columns + c0;
            h0 += row[0];
            h1 += row[1];
            h2 += row[2];
            h3 += row[3];
        }
        sum[c0] = h0;
        sum[c0 + 1] = h1;
        sum[c0 + 2] = h2;
        sum[c0 + 3] = h3;
    }
    for (; c0 < columns; c0++) {
        double h = sum[c0];
        for (int64_t k = 0; k < count; k++) h += values[drawn[k] * columns + c0];
        sum[c0] = h;
    }
#endif
}

static PyObject *add_perl_draws(PyObject *self, PyObject *args) {
    Py_buffer rows, sums;
    Py_ssize_t columns, resamples;
    int wide = 1;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*w*nn|p", &rows, &sums, &columns, &resamples, &wide)) return NULL;
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
    wide = wide && has_avx512();
    /* rows near enough to be read from cache are copied 64-byte aligned, each padded
     * to a multiple of 8 columns: every vector load is one cache line (2.4 against 4.5
     * ns a draw of 24 columns at 8,000 documents; unaligned, 3.4).  Past 8 MiB the
     * rows come from memory whatever their alignment: read in place (no copy, no
     * memory beyond the caller's). */
    const Py_ssize_t padded = (columns + 7) / 8 * 8;
    double *aligned = NULL;
    const double *wide_rows = NULL;
    Py_ssize_t wide_stride = columns;
#else
    wide = 0;
#endif
    PyObject *result = NULL;
    enum { TILE = 64, LANES = 4 };
    uint64_t *state = NULL;
    int64_t *drawn = NULL;
    if (columns <= 0 || resamples <= 0 || rows.len % (Py_ssize_t)(columns * sizeof(double)) ||
        sums.len != (Py_ssize_t)(resamples * columns * sizeof(double))) {
        PyErr_SetString(PyExc_ValueError, "add_perl_draws: the buffers do not match columns and resamples");
        goto done;
    }
    const int64_t n = rows.len / (Py_ssize_t)(columns * sizeof(double));
    state = PyMem_Malloc(resamples * sizeof(uint64_t));
    drawn = PyMem_Malloc(LANES * TILE * sizeof(int64_t));
    if (!state || !drawn) {
        PyErr_NoMemory();
        goto done;
    }
    const double *values = rows.buf;
    double *out = sums.buf;
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
    /* rows asked for ahead only when they are far (past 8 MiB: 100,000 documents of
     * 24 columns, 8.2 against 9.6 ns a draw); nearer, the asking costs more than it saves */
    const int ahead = (size_t)n * padded * sizeof(double) > ((size_t)8 << 20);
    if (wide && ahead)
        wide_rows = values;
    else if (wide) {
        wide_rows = aligned = aligned_alloc(64, (size_t)n * padded * sizeof(double) + 64);
        wide_stride = padded;
        if (!aligned) {
            PyErr_NoMemory();
            goto done;
        }
        for (int64_t i = 0; i < n; i++) {
            memcpy(aligned + i * padded, values + i * columns, columns * sizeof(double));
            memset(aligned + i * padded + columns, 0, (padded - columns) * sizeof(double));
        }
    }
#endif
    const uint64_t mask = ((uint64_t)1 << 48) - 1;
    const double scale = (double)n;
    for (Py_ssize_t r = 0; r < resamples; r++) state[r] = ((uint64_t)r << 16) + 0x330E;
    Py_BEGIN_ALLOW_THREADS;
    for (int64_t k0 = 0; k0 < n; k0 += TILE) {
        const int64_t k1 = k0 + TILE < n ? k0 + TILE : n;
        /* LANES resamples' draws made together (each resample's drand48 steps are one
         * chain of dependent multiplies), then each resample's rows added */
        for (Py_ssize_t r0 = 0; r0 < resamples; r0 += LANES) {
            const Py_ssize_t lanes = resamples - r0 < LANES ? resamples - r0 : LANES;
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
            if (wide_rows && lanes == WIDE_LANES) { /* four resamples at once: their draws, then 24 columns a pass */
                draws_avx512(state + r0, k1 - k0, n, drawn);
                for (Py_ssize_t c0 = 0; c0 < columns; c0 += 8 * WIDE_VECTORS) {
                    const Py_ssize_t left = columns - c0 < 8 * WIDE_VECTORS ? columns - c0 : 8 * WIDE_VECTORS;
                    const int vectors = (int)((left + 7) / 8), last = (int)(left - 8 * (vectors - 1));
                    add_avx512[vectors](out + r0 * columns + c0, columns, wide_rows + c0, drawn, k1 - k0, wide_stride,
                                        (__mmask8)((1u << last) - 1), ahead);
                }
                continue;
            }
#endif
            uint64_t x[LANES] = {0};
            for (Py_ssize_t l = 0; l < lanes; l++) x[l] = state[r0 + l];
            for (int64_t k = 0; k < k1 - k0; k++) {
                for (int l = 0; l < LANES; l++) {
                    x[l] = (x[l] * DRAND48_A + DRAND48_C) & mask;
                    const int64_t i = (int64_t)(scale * ((double)(int64_t)x[l] * 0x1p-48)); /* (x < 2^48: exact) */
                    drawn[l * TILE + k] = i < n ? i : n - 1;
                }
            }
            for (Py_ssize_t l = 0; l < lanes; l++) {
                state[r0 + l] = x[l];
                add_drawn_rows(out + (r0 + l) * columns, values, drawn + l * TILE, k1 - k0, columns);
            }
        }
    }
    Py_END_ALLOW_THREADS;
    result = Py_None;
    Py_INCREF(result);
done:
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
    free(aligned);
#endif
    PyMem_Free(state);
    PyMem_Free(drawn);
    PyBuffer_Release(&rows);
    PyBuffer_Release(&sums);
    return result;
}

/* poisson_weights(bases, cdf, out, replicates, as_double=False): the pipeline's
 * Poisson(1) bootstrap weights (rouge_core.resampling.poisson_weight_matrix) of k
 * documents: for document i with stream base h = bases[i] and replicate r, x =
 * splitmix64(h + r * gamma), u = (x >> 11) * 2^-53 and the weight is how many of
 * the cdf's values are <= u (numpy's searchsorted(cdf, u, side="right")).  The
 * uint64 arithmetic wraps as numpy's does and u is exact, so the weights are
 * numpy's, bit for bit.  bases: uint64 (k,); cdf: float64, ascending; out: (k,
 * replicates), written: int64, or float64 (the same whole numbers) with as_double. */
static inline int64_t poisson_level(uint64_t x, const double *level, Py_ssize_t levels) {
    x = (x ^ (x >> 30)) * SPLITMIX_M1;
    x = (x ^ (x >> 27)) * SPLITMIX_M2;
    x ^= x >> 31;
    const double u = (double)(int64_t)(x >> 11) * 0x1p-53; /* (53 bits: a signed conversion is exact) */
    /* four compares without a branch (a weight is below 4 in 98% of draws), a
     * loop for the rest: a branch on every level was mispredicted often */
    int64_t w = 0;
    if (levels >= 4) w = (level[0] <= u) + (level[1] <= u) + (level[2] <= u) + (level[3] <= u);
    if (w == 4 || levels < 4)
        while (w < levels && level[w] <= u) w++;
    return w;
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
/* Replicates [0, replicates - replicates % 8) of one document, eight at a time: the
 * scalar arithmetic in 64-bit lanes (wrapping products, the exact conversion of 53
 * bits, the same compares), a lane past the sixth level finished by the scalar
 * loop.  1 against 2.9 ns a weight (most of it now the store). */
enum { VECTOR_LEVELS = 6 };
__attribute__((target("avx512f,avx512dq"))) static Py_ssize_t poisson_row_avx512(uint64_t h, const double *level,
                                                                                Py_ssize_t levels, Py_ssize_t replicates,
                                                                                int64_t *ints, double *doubles) {
    const uint64_t gamma = GOLDEN_GAMMA;
    const __m512i step = _mm512_set1_epi64((long long)(8 * gamma)), c1 = _mm512_set1_epi64((long long)SPLITMIX_M1),
                  c2 = _mm512_set1_epi64((long long)SPLITMIX_M2), one = _mm512_set1_epi64(1);
    __m512d l[VECTOR_LEVELS];
    for (int j = 0; j < VECTOR_LEVELS; j++) l[j] = _mm512_set1_pd(level[j]);
    const __m512d unit = _mm512_set1_pd(0x1p-53);
    /* lane j of replicate block r0: h + (r0 + j + 1) * gamma */
    __m512i x0 = _mm512_set_epi64((long long)(h + 8 * gamma), (long long)(h + 7 * gamma), (long long)(h + 6 * gamma),
                                  (long long)(h + 5 * gamma), (long long)(h + 4 * gamma), (long long)(h + 3 * gamma),
                                  (long long)(h + 2 * gamma), (long long)(h + gamma));
    Py_ssize_t r0 = 0;
    for (; r0 + 8 <= replicates; r0 += 8, x0 = _mm512_add_epi64(x0, step)) {
        __m512i x = _mm512_mullo_epi64(_mm512_xor_si512(x0, _mm512_srli_epi64(x0, 30)), c1);
        x = _mm512_mullo_epi64(_mm512_xor_si512(x, _mm512_srli_epi64(x, 27)), c2);
        x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 31));
        const __m512d u = _mm512_mul_pd(_mm512_cvtepi64_pd(_mm512_srli_epi64(x, 11)), unit);
        __m512i w = _mm512_setzero_si512();
        __mmask8 past = 0;
        for (int j = 0; j < VECTOR_LEVELS; j++) {
            past = _mm512_cmp_pd_mask(l[j], u, _CMP_LE_OQ);
            w = _mm512_mask_add_epi64(w, past, w, one);
        }
        if (ints) _mm512_storeu_si512((void *)(ints + r0), w);
        else _mm512_storeu_pd(doubles + r0, _mm512_cvtepi64_pd(w));
        if (past) /* a weight of VECTOR_LEVELS or more (1 in 1,600): the scalar loop, for those lanes */
            for (int j = 0; j < 8; j++)
                if (past >> j & 1) {
                    const int64_t v = poisson_level(h + (uint64_t)(r0 + j + 1) * gamma, level, levels);
                    if (ints) ints[r0 + j] = v;
                    else doubles[r0 + j] = (double)v;
                }
    }
    return r0;
}

#endif

static PyObject *poisson_weights(PyObject *self, PyObject *args) {
    Py_buffer bases, cdf, out;
    Py_ssize_t replicates;
    int as_double = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*w*n|p", &bases, &cdf, &out, &replicates, &as_double)) return NULL;
    PyObject *result = NULL;
    const Py_ssize_t k = bases.len / (Py_ssize_t)sizeof(uint64_t);
    const Py_ssize_t levels = cdf.len / (Py_ssize_t)sizeof(double);
    if (replicates < 0 || bases.len % (Py_ssize_t)sizeof(uint64_t) || cdf.len % (Py_ssize_t)sizeof(double) ||
        out.len != (Py_ssize_t)(k * replicates * sizeof(int64_t))) {
        PyErr_SetString(PyExc_ValueError, "poisson_weights: the buffers do not match the documents and replicates");
        goto done;
    }
    const uint64_t *base = bases.buf;
    const double *level = cdf.buf;
    const uint64_t gamma = GOLDEN_GAMMA;
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
    const int wide = levels >= VECTOR_LEVELS && has_avx512();
#endif
    Py_BEGIN_ALLOW_THREADS;
    for (Py_ssize_t i = 0; i < k; i++) {
        int64_t *ints = as_double ? NULL : (int64_t *)out.buf + i * replicates;
        double *doubles = as_double ? (double *)out.buf + i * replicates : NULL;
        Py_ssize_t r = 0;
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
        if (wide) r = poisson_row_avx512(base[i], level, levels, replicates, ints, doubles);
#endif
        for (; r < replicates; r++) {
            const int64_t w = poisson_level(base[i] + (uint64_t)(r + 1) * gamma, level, levels);
            if (ints) ints[r] = w;
            else doubles[r] = (double)w;
        }
    }
    Py_END_ALLOW_THREADS;
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&bases);
    PyBuffer_Release(&cdf);
    PyBuffer_Release(&out);
    return result;
}

static PyMethodDef kernel_functions[] = {
    {"add_perl_draws", add_perl_draws, METH_VARARGS,
     "add_perl_draws(rows, sums, columns, resamples, wide=True): ROUGE-1.5.5's bootstrap sums, the script's draws "
     "made as used; wide: with AVX-512 where the CPU has it, else two-lane vectors (the same bits)."},
    {"poisson_weights", poisson_weights, METH_VARARGS,
     "poisson_weights(bases, cdf, out, replicates, as_double=False): the pipeline's Poisson(1) bootstrap weights of "
     "some documents, as int64 or float64."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef kernel_module = {PyModuleDef_HEAD_INIT, "_kernel",
                                           "The compiled kernel behind rouge_core.RougeScorer.score_batch.", -1,
                                           kernel_functions};

/* rouge_core/_rouge_score_kernel.c: the rouge_score preset's RougeScoreKernel. */
int rouge_score_kernel_register(PyObject *module);

PyMODINIT_FUNC PyInit__kernel(void) {
    init_classes();
    if (PyType_Ready(&KernelType) < 0) return NULL;
    PyObject *m = PyModule_Create(&kernel_module);
    if (!m) return NULL;
    Py_INCREF(&KernelType);
    if (PyModule_AddObject(m, "Kernel", (PyObject *)&KernelType) < 0) {
        Py_DECREF(&KernelType);
        Py_DECREF(m);
        return NULL;
    }
    if (rouge_score_kernel_register(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    PyModule_AddIntConstant(m, "ABI", 1);
    return m;
}
