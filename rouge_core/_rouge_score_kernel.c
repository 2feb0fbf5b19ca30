/* The compiled path of the `rouge_score` preset: Google's rouge-score 0.1.2, exactly.
 *
 * Compiled into rouge_core._kernel (setup.py lists this file beside _kernel.c;
 * PyInit__kernel calls rouge_score_kernel_register) as the type
 * `RougeScoreKernel`.  rouge_core/rouge_score_preset.py is the reference it must
 * equal; rouge_core/kernel.py (`CompiledRougeScore`) sets it up.
 *
 * Per pair (candidate, references), everything rouge-score does, in C:
 *
 * - tokens (rouge_score/tokenize.py): `text.lower()` (Python's own str.lower, called
 *   only for a text that is not pure ASCII), every character outside [a-z0-9] is a
 *   separator; with a stemmer, each token longer than 3 characters is replaced by
 *   stem(token) (NLTK's PorterStemmer().stem, called once per distinct token: the
 *   answer is cached by token id), and a stem that is not [a-z0-9]+ is dropped;
 * - sentences for rougeLsum: the `\n`-separated lines (a line without tokens
 *   adds nothing to the union LCS, so only lines with tokens are kept);
 * - rougeN: clipped n-gram hits; P = hits / max(candidate n-grams, 1),
 *   R = hits / max(reference n-grams, 1);
 * - rougeL: the LCS length of the whole token sequences (bit-parallel rows);
 * - rougeLsum: per reference sentence, the union of one LCS path with each
 *   candidate sentence, walked back as rouge-score's _backtrack_norec does
 *   (diagonal on equal tokens, left only when the left cell is strictly
 *   greater, else up), each union token counted while its count lasts in both
 *   texts' unigram tables;
 * - F = 2 * P * R / (P + R) evaluated left to right (0.0 when P + R is 0);
 * - several references: per type the reference with the highest F, the first on
 *   ties (np.argmax in score_multi).
 *
 * Results are built as instances of a given tuple subclass: layout 0 gives
 * (precision, recall, fmeasure) as rouge-score's Score, with the int 0s that
 * rouge-score returns for rougeL/rougeLsum when a side has no tokens; layout 1
 * gives MetricStats (reference_total, candidate_total, hits, recall, precision,
 * f_measure) as rouge_score_preset.RougeScoreScorer does.  A pair that is not
 * (str, list/tuple of at least one str), or over the cell limit, gives None:
 * the caller scores it in Python, which raises the reference error.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* No fused multiply-add: setup.py compiles with -std=c11, under which GCC keeps
 * -ffp-contract=off, so 2 * p * r / (p + r) rounds as Python's floats do. */

enum { RS_NGRAM = 0, RS_LCS = 1, RS_LSUM = 2 };
#define RS_VOCAB_LIMIT (1 << 22) /* past it the vocabulary and the stem cache start afresh */

typedef struct { int32_t *a; Py_ssize_t n, cap; } RVec;

static int rvec_push(RVec *v, int32_t x) {
    if (v->n == v->cap) {
        Py_ssize_t cap = v->cap ? 2 * v->cap : 256;
        int32_t *a = realloc(v->a, (size_t)cap * sizeof(int32_t));
        if (!a) { PyErr_NoMemory(); return -1; }
        v->a = a; v->cap = cap;
    }
    v->a[v->n++] = x;
    return 0;
}

static void *rs_grow(void *p, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return p;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(p, c * size);
    if (!q) { PyErr_NoMemory(); return NULL; }
    *cap = c;
    return q;
}

/* One text read: its token ids, and where each sentence (a line with tokens) starts. */
typedef struct {
    RVec tok;
    RVec sent; /* start offsets; sent.a[nsent] == tok.n after reading */
} RText;

/* One vocabulary slot; a token of up to 16 bytes is compared on its inline copy
 * (p0, p1, zero-padded) without reading the arena: fewer cache misses. */
typedef struct { uint64_t hash, p0, p1; uint32_t off, len; int32_t id; } VEntry;

static inline void rs_prefix(const char *s, size_t n, uint64_t *p0, uint64_t *p1) {
    char b[16] = {0};
    memcpy(b, s, n < 16 ? n : 16);
    memcpy(p0, b, 8);
    memcpy(p1, b + 8, 8);
}

typedef struct {
    PyObject_HEAD
    int ntypes, layout, max_n, want_tokens, want_lsum;
    int *family, *nval;
    PyObject **names;
    PyObject *stem, *result_type, *zero;
    long long max_cells; /* -1: none */
    /* vocabulary: token bytes -> id */
    VEntry *table; size_t tcap; /* power of two */
    char *arena; size_t alen, acap;
    uint32_t *id_off, *id_len; int32_t *stem_of; size_t idcap;
    int32_t nvocab;
    /* dense per-pair scratch over ids */
    int32_t *cnt_r, *cnt_c, *slot; size_t dcap;
    /* texts */
    RText cand, ref;
    char *tbuf; size_t tbcap;
    /* scratch */
    uint64_t *masks; size_t maskcap;
    uint64_t *rows; size_t rowcap;
    uint8_t *marks; size_t markcap;
    int32_t *gpos, *grem; uint64_t *ghash; size_t gcap;
    double *best; size_t bestcap; /* per type: p, r, f, hits, rtot, ctot, int-zero flag */
    int busy;
} RSKernel;

/* ------------------------------------------------------------------ vocabulary */
static inline uint64_t rs_hash(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) { h ^= (uint8_t)s[i]; h *= 1099511628211ULL; }
    return h ^ (h >> 29);
}

static void rs_vocab_clear(RSKernel *k) {
    if (k->table) memset(k->table, 0, k->tcap * sizeof(VEntry));
    k->alen = 0;
    k->nvocab = 0;
}

static int rs_ids_reserve(RSKernel *k, size_t n) {
    if (n <= k->idcap) return 0;
    size_t cap = k->idcap ? k->idcap : 1024;
    while (cap < n) cap *= 2;
    uint32_t *o = realloc(k->id_off, cap * sizeof(uint32_t));
    if (!o) { PyErr_NoMemory(); return -1; }
    k->id_off = o;
    uint32_t *l = realloc(k->id_len, cap * sizeof(uint32_t));
    if (!l) { PyErr_NoMemory(); return -1; }
    k->id_len = l;
    int32_t *s = realloc(k->stem_of, cap * sizeof(int32_t));
    if (!s) { PyErr_NoMemory(); return -1; }
    k->stem_of = s;
    int32_t *a = realloc(k->cnt_r, cap * sizeof(int32_t));
    if (!a) { PyErr_NoMemory(); return -1; }
    k->cnt_r = a;
    int32_t *b = realloc(k->cnt_c, cap * sizeof(int32_t));
    if (!b) { PyErr_NoMemory(); return -1; }
    k->cnt_c = b;
    int32_t *c = realloc(k->slot, cap * sizeof(int32_t));
    if (!c) { PyErr_NoMemory(); return -1; }
    k->slot = c;
    for (size_t i = k->idcap; i < cap; i++) { k->cnt_r[i] = 0; k->cnt_c[i] = 0; k->slot[i] = -1; }
    k->idcap = cap;
    return 0;
}

/* The id of a token's bytes, added when new; -1 on error. */
static int32_t rs_intern(RSKernel *k, const char *s, size_t n) {
    if ((size_t)(k->nvocab + 1) * 2 > k->tcap) { /* grow the table to keep it at most half full */
        size_t cap = k->tcap ? 2 * k->tcap : 4096;
        VEntry *t = calloc(cap, sizeof(VEntry));
        if (!t) { PyErr_NoMemory(); return -1; }
        for (size_t i = 0; i < k->tcap; i++) {
            VEntry *e = &k->table[i];
            if (!e->len) continue;
            size_t j = e->hash & (cap - 1);
            while (t[j].len) j = (j + 1) & (cap - 1);
            t[j] = *e;
        }
        free(k->table);
        k->table = t;
        k->tcap = cap;
    }
    uint64_t h = rs_hash(s, n), p0, p1;
    rs_prefix(s, n, &p0, &p1);
    size_t j = h & (k->tcap - 1);
    for (;;) {
        VEntry *e = &k->table[j];
        if (!e->len) break;
        if (e->hash == h && e->len == n && e->p0 == p0 && e->p1 == p1 &&
            (n <= 16 || memcmp(k->arena + e->off + 16, s + 16, n - 16) == 0))
            return e->id;
        j = (j + 1) & (k->tcap - 1);
    }
    char *a = rs_grow(k->arena, &k->acap, k->alen + n, 1);
    if (!a) return -1;
    k->arena = a;
    if (rs_ids_reserve(k, (size_t)k->nvocab + 1) < 0) return -1;
    memcpy(k->arena + k->alen, s, n);
    int32_t id = k->nvocab++;
    VEntry *e = &k->table[j];
    e->hash = h; e->p0 = p0; e->p1 = p1; e->off = (uint32_t)k->alen; e->len = (uint32_t)n; e->id = id;
    k->id_off[id] = (uint32_t)k->alen; k->id_len[id] = (uint32_t)n;
    k->stem_of[id] = -2; /* not asked yet */
    k->alen += n;
    return id;
}

static inline int rs_valid(const char *s, Py_ssize_t n) { /* rouge-score's VALID_TOKEN_RE, fullmatch */
    if (n <= 0) return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return 0;
    }
    return 1;
}

/* The token as scored: itself, or its stem (cached); -1 dropped, -2 error. */
static int32_t rs_token(RSKernel *k, const char *s, size_t n) {
    int32_t id = rs_intern(k, s, n);
    if (id < 0) return -2;
    if (!k->stem || n <= 3) return id;
    int32_t st = k->stem_of[id];
    if (st != -2) return st;
    PyObject *word = PyUnicode_FromStringAndSize(s, (Py_ssize_t)n);
    if (!word) return -2;
    PyObject *out = PyObject_CallOneArg(k->stem, word);
    Py_DECREF(word);
    if (!out) return -2;
    if (!PyUnicode_Check(out)) {
        PyErr_Format(PyExc_TypeError, "the stemmer returned %.80s, not a str", Py_TYPE(out)->tp_name);
        Py_DECREF(out);
        return -2;
    }
    Py_ssize_t len;
    const char *u = PyUnicode_AsUTF8AndSize(out, &len);
    if (!u) { Py_DECREF(out); return -2; }
    if (rs_valid(u, len)) {
        st = rs_intern(k, u, (size_t)len);
        if (st < 0) { Py_DECREF(out); return -2; }
    } else {
        st = -1;
    }
    Py_DECREF(out);
    k->stem_of[id] = st; /* rs_intern may have moved stem_of: index again */
    return st;
}

/* ------------------------------------------------------------------ reading */
#define RS_READ(TYPE)                                                                              \
    do {                                                                                           \
        const TYPE *d = (const TYPE *)data;                                                        \
        for (Py_ssize_t i = 0; i <= n; i++) {                                                      \
            Py_UCS4 c = i < n ? d[i] : ' ';                                                        \
            char t = 0;                                                                            \
            if (c >= 'a' && c <= 'z') t = (char)c;                                                 \
            else if (c >= '0' && c <= '9') t = (char)c;                                            \
            else if (c >= 'A' && c <= 'Z') t = (char)(c + 32);                                     \
            if (t) {                                                                               \
                if (tlen + 1 > k->tbcap) {                                                         \
                    char *b = rs_grow(k->tbuf, &k->tbcap, tlen + 1, 1);                            \
                    if (!b) goto error;                                                            \
                    k->tbuf = b;                                                                   \
                }                                                                                  \
                k->tbuf[tlen++] = t;                                                               \
                continue;                                                                          \
            }                                                                                      \
            if (tlen) {                                                                            \
                int32_t id = rs_token(k, k->tbuf, tlen);                                           \
                if (id == -2) goto error;                                                          \
                if (id >= 0) {                                                                     \
                    if (line != last_line) {                                                       \
                        if (rvec_push(&out->sent, (int32_t)out->tok.n) < 0) goto error;            \
                        last_line = line;                                                          \
                    }                                                                              \
                    if (rvec_push(&out->tok, id) < 0) goto error;                                  \
                }                                                                                  \
                tlen = 0;                                                                          \
            }                                                                                      \
            if (c == '\n') line++;                                                                 \
        }                                                                                          \
    } while (0)

/* Read one str into out.  Returns 0, or -1 with an exception set. */
static int rs_read(RSKernel *k, PyObject *text, RText *out) {
    out->tok.n = 0;
    out->sent.n = 0;
    PyObject *lowered = NULL;
    if (!PyUnicode_IS_ASCII(text)) { /* Python's own Unicode lower case (e.g. KELVIN SIGN -> k) */
        lowered = PyObject_CallMethod(text, "lower", NULL);
        if (!lowered) return -1;
        text = lowered;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), line = 0, last_line = -1;
    size_t tlen = 0;
    if (kind == PyUnicode_1BYTE_KIND) RS_READ(Py_UCS1);
    else if (kind == PyUnicode_2BYTE_KIND) RS_READ(Py_UCS2);
    else RS_READ(Py_UCS4);
    Py_XDECREF(lowered);
    return rvec_push(&out->sent, (int32_t)out->tok.n);
error:
    Py_XDECREF(lowered);
    return -1;
}

/* ------------------------------------------------------------------ n-grams */
static inline uint64_t gram_hash(const int32_t *t, int n) {
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < n; i++) { h ^= (uint32_t)t[i]; h *= 0xff51afd7ed558ccdULL; h ^= h >> 32; }
    return h;
}

/* Clipped n-gram hits of the candidate against the reference. */
static int rs_ngram_hits(RSKernel *k, const RText *c, const RText *r, int n, int64_t *hits) {
    Py_ssize_t rn = r->tok.n - n + 1, cn = c->tok.n - n + 1;
    *hits = 0;
    if (rn <= 0 || cn <= 0) return 0;
    if (n == 1) {
        int32_t *cnt = k->cnt_r;
        for (Py_ssize_t i = 0; i < r->tok.n; i++) cnt[r->tok.a[i]]++;
        int64_t h = 0;
        for (Py_ssize_t i = 0; i < c->tok.n; i++) {
            int32_t t = c->tok.a[i];
            if (cnt[t] > 0) { cnt[t]--; h++; }
        }
        for (Py_ssize_t i = 0; i < r->tok.n; i++) cnt[r->tok.a[i]] = 0;
        *hits = h;
        return 0;
    }
    size_t cap = 16;
    while (cap < 2 * (size_t)rn) cap *= 2;
    if (cap > k->gcap) {
        size_t want = cap;
        k->gcap = 0;
        free(k->gpos); free(k->grem); free(k->ghash);
        k->gpos = malloc(want * sizeof(int32_t));
        k->grem = malloc(want * sizeof(int32_t));
        k->ghash = malloc(want * sizeof(uint64_t));
        if (!k->gpos || !k->grem || !k->ghash) { PyErr_NoMemory(); return -1; }
        k->gcap = want;
    }
    int32_t *pos = k->gpos, *rem = k->grem;
    uint64_t *hs = k->ghash;
    for (size_t i = 0; i < cap; i++) pos[i] = -1;
    const int32_t *rt = r->tok.a, *ct = c->tok.a;
    for (Py_ssize_t i = 0; i < rn; i++) {
        uint64_t h = gram_hash(rt + i, n);
        size_t j = h & (cap - 1);
        for (;;) {
            if (pos[j] < 0) { pos[j] = (int32_t)i; rem[j] = 1; hs[j] = h; break; }
            if (hs[j] == h && memcmp(rt + pos[j], rt + i, (size_t)n * sizeof(int32_t)) == 0) { rem[j]++; break; }
            j = (j + 1) & (cap - 1);
        }
    }
    int64_t total = 0;
    for (Py_ssize_t i = 0; i < cn; i++) {
        uint64_t h = gram_hash(ct + i, n);
        size_t j = h & (cap - 1);
        while (pos[j] >= 0) {
            if (hs[j] == h && memcmp(rt + pos[j], ct + i, (size_t)n * sizeof(int32_t)) == 0) {
                if (rem[j] > 0) { rem[j]--; total++; }
                break;
            }
            j = (j + 1) & (cap - 1);
        }
    }
    *hits = total;
    return 0;
}

/* ------------------------------------------------------------------ LCS, bit-parallel */
/* Masks of the candidate tokens [a, b): k->slot[id] is the slot of a token, its
 * mask the W words at masks + slot * W.  rs_unmask resets the slots. */
static int rs_mask(RSKernel *k, const int32_t *t, Py_ssize_t len, Py_ssize_t W) {
    size_t nslots = 0;
    for (Py_ssize_t p = 0; p < len; p++) {
        int32_t id = t[p];
        if (k->slot[id] < 0) {
            k->slot[id] = (int32_t)nslots++;
            uint64_t *m = rs_grow(k->masks, &k->maskcap, nslots * (size_t)W, sizeof(uint64_t));
            if (!m) return -1;
            k->masks = m;
            memset(k->masks + (nslots - 1) * (size_t)W, 0, (size_t)W * sizeof(uint64_t));
        }
        k->masks[(size_t)k->slot[id] * (size_t)W + (size_t)(p >> 6)] |= 1ULL << (p & 63);
    }
    return 0;
}

static void rs_unmask(RSKernel *k, const int32_t *t, Py_ssize_t len) {
    for (Py_ssize_t p = 0; p < len; p++) k->slot[t[p]] = -1;
}

/* One row step: V = (V + U) | (V & ~U) with U = V & mask, over W words. */
static inline void rs_row(uint64_t *V, const uint64_t *M, Py_ssize_t W, uint64_t top) {
    uint64_t carry = 0;
    for (Py_ssize_t w = 0; w < W; w++) {
        uint64_t v = V[w], u = v & M[w];
        uint64_t s1 = v + u, c1 = s1 < v;
        uint64_t s2 = s1 + carry, c2 = s2 < s1;
        carry = c1 | c2;
        V[w] = s2 | (v & ~u);
    }
    V[W - 1] &= top;
}

static inline Py_ssize_t popcount_prefix(const uint64_t *V, Py_ssize_t j) { /* set bits among 0..j-1 */
    Py_ssize_t c = 0, w = 0;
    for (; (w + 1) * 64 <= j; w++) c += __builtin_popcountll(V[w]);
    if (j & 63) c += __builtin_popcountll(V[w] & ((1ULL << (j & 63)) - 1));
    return c;
}

/* LCS length of ref [0, m) against the masked candidate of n tokens. */
static Py_ssize_t rs_lcs_length(RSKernel *k, const int32_t *ref, Py_ssize_t m, Py_ssize_t n) {
    Py_ssize_t W = (n + 63) / 64;
    uint64_t top = (n & 63) ? ((1ULL << (n & 63)) - 1) : ~0ULL;
    uint64_t *V = rs_grow(k->rows, &k->rowcap, (size_t)W, sizeof(uint64_t));
    if (!V) return -1;
    k->rows = V;
    for (Py_ssize_t w = 0; w < W; w++) V[w] = ~0ULL;
    V[W - 1] &= top;
    for (Py_ssize_t i = 0; i < m; i++) {
        int32_t s = k->slot[ref[i]];
        if (s >= 0) rs_row(V, k->masks + (size_t)s * (size_t)W, W, top);
    }
    return n - popcount_prefix(V, n);
}

/* Mark the ref positions on rouge-score's LCS path of ref [0, m) against cand [0, n). */
static int rs_lcs_marks(RSKernel *k, const int32_t *ref, Py_ssize_t m, const int32_t *cand, Py_ssize_t n,
                        uint8_t *marks) {
    Py_ssize_t W = (n + 63) / 64;
    uint64_t top = (n & 63) ? ((1ULL << (n & 63)) - 1) : ~0ULL;
    uint64_t *R = rs_grow(k->rows, &k->rowcap, (size_t)(m + 1) * (size_t)W, sizeof(uint64_t));
    if (!R) return -1;
    k->rows = R;
    for (Py_ssize_t w = 0; w < W; w++) R[w] = ~0ULL;
    R[W - 1] &= top;
    int any = 0;
    for (Py_ssize_t i = 0; i < m; i++) {
        uint64_t *prev = R + (size_t)i * (size_t)W, *cur = prev + W;
        memcpy(cur, prev, (size_t)W * sizeof(uint64_t));
        int32_t s = k->slot[ref[i]];
        if (s >= 0) { rs_row(cur, k->masks + (size_t)s * (size_t)W, W, top); any = 1; }
    }
    if (!any) return 0;
    Py_ssize_t i = m, j = n;
    Py_ssize_t length = n - popcount_prefix(R + (size_t)m * (size_t)W, n);
    while (i > 0 && j > 0 && length > 0) {
        if (ref[i - 1] == cand[j - 1]) {
            i--; j--;
            marks[i] = 1;
            length--;
        } else if (j - popcount_prefix(R + (size_t)(i - 1) * (size_t)W, j) == length) {
            i--; /* the cell above holds the same length: left is not greater */
        } else {
            j--;
        }
    }
    return 0;
}

/* rougeLsum's hits: union LCS per reference sentence, clipped by both unigram tables. */
static int rs_lsum_hits(RSKernel *k, const RText *c, const RText *r, int64_t *hits) {
    *hits = 0;
    Py_ssize_t rn = r->tok.n, nc = c->sent.n - 1, nr = r->sent.n - 1;
    if (rn == 0 || c->tok.n == 0) return 0;
    uint8_t *marks = rs_grow(k->marks, &k->markcap, (size_t)rn, 1);
    if (!marks) return -1;
    k->marks = marks;
    memset(marks, 0, (size_t)rn);
    for (Py_ssize_t cs = 0; cs < nc; cs++) {
        const int32_t *ct = c->tok.a + c->sent.a[cs];
        Py_ssize_t cl = c->sent.a[cs + 1] - c->sent.a[cs];
        if (rs_mask(k, ct, cl, (cl + 63) / 64) < 0) { rs_unmask(k, ct, cl); return -1; }
        for (Py_ssize_t rs = 0; rs < nr; rs++) {
            Py_ssize_t a = r->sent.a[rs], b = r->sent.a[rs + 1];
            if (rs_lcs_marks(k, r->tok.a + a, b - a, ct, cl, marks + a) < 0) { rs_unmask(k, ct, cl); return -1; }
        }
        rs_unmask(k, ct, cl);
    }
    int32_t *cr = k->cnt_r, *cc = k->cnt_c;
    for (Py_ssize_t i = 0; i < rn; i++) cr[r->tok.a[i]]++;
    for (Py_ssize_t i = 0; i < c->tok.n; i++) cc[c->tok.a[i]]++;
    int64_t h = 0;
    for (Py_ssize_t i = 0; i < rn; i++) {
        if (!marks[i]) continue;
        int32_t t = r->tok.a[i];
        if (cc[t] > 0 && cr[t] > 0) { h++; cc[t]--; cr[t]--; }
    }
    for (Py_ssize_t i = 0; i < rn; i++) cr[r->tok.a[i]] = 0;
    for (Py_ssize_t i = 0; i < c->tok.n; i++) cc[c->tok.a[i]] = 0;
    *hits = h;
    return 0;
}

/* ------------------------------------------------------------------ scores */
static inline double rs_fmeasure(double p, double r) { /* rouge_score.scoring.fmeasure */
    return p + r > 0 ? 2 * p * r / (p + r) : 0.0;
}

enum { B_P, B_R, B_F, B_HITS, B_RTOT, B_CTOT, B_ZERO, B_N };

/* The scores of every type for one reference into out[type * B_N ...]. */
static int rs_score_ref(RSKernel *k, const RText *c, const RText *r, double *out) {
    int lcs_masked = 0;
    for (int t = 0; t < k->ntypes; t++) {
        double *o = out + t * B_N;
        int64_t hits = 0, rtot, ctot;
        int zero = 0;
        if (k->family[t] == RS_NGRAM) {
            int n = k->nval[t];
            if (rs_ngram_hits(k, c, r, n, &hits) < 0) return -1;
            rtot = r->tok.n - n + 1 > 0 ? r->tok.n - n + 1 : 0;
            ctot = c->tok.n - n + 1 > 0 ? c->tok.n - n + 1 : 0;
            o[B_P] = (double)hits / (double)(ctot > 1 ? ctot : 1);
            o[B_R] = (double)hits / (double)(rtot > 1 ? rtot : 1);
        } else {
            rtot = r->tok.n;
            ctot = c->tok.n;
            if (rtot == 0 || ctot == 0) {
                zero = 1; /* rouge-score returns Score(0, 0, 0) with ints here */
            } else if (k->family[t] == RS_LCS) {
                if (!lcs_masked) {
                    if (rs_mask(k, c->tok.a, ctot, (ctot + 63) / 64) < 0) { rs_unmask(k, c->tok.a, ctot); return -1; }
                    lcs_masked = 1;
                }
                Py_ssize_t l = rs_lcs_length(k, r->tok.a, rtot, ctot);
                if (l < 0) { rs_unmask(k, c->tok.a, ctot); return -1; }
                hits = l;
            } else {
                if (lcs_masked) { rs_unmask(k, c->tok.a, ctot); lcs_masked = 0; }
                if (rs_lsum_hits(k, c, r, &hits) < 0) return -1;
            }
            o[B_P] = zero ? 0.0 : (double)hits / (double)ctot;
            o[B_R] = zero ? 0.0 : (double)hits / (double)rtot;
        }
        o[B_F] = rs_fmeasure(o[B_P], o[B_R]);
        o[B_HITS] = (double)hits; o[B_RTOT] = (double)rtot; o[B_CTOT] = (double)ctot; o[B_ZERO] = zero;
    }
    if (lcs_masked) rs_unmask(k, c->tok.a, c->tok.n);
    return 0;
}

static PyObject *rs_result(RSKernel *k, const double *best) {
    PyObject *dict = PyDict_New();
    if (!dict) return NULL;
    PyTypeObject *type = (PyTypeObject *)k->result_type;
    for (int t = 0; t < k->ntypes; t++) {
        const double *o = best + t * B_N;
        PyObject *item;
        if (k->layout == 0) {
            item = type->tp_alloc(type, 3);
            if (!item) goto error;
            for (int f = 0; f < 3; f++) {
                PyObject *v;
                if (o[B_ZERO]) { v = k->zero; Py_INCREF(v); }
                else v = PyFloat_FromDouble(o[f == 0 ? B_P : f == 1 ? B_R : B_F]);
                if (!v) { Py_DECREF(item); goto error; }
                PyTuple_SET_ITEM(item, f, v);
            }
        } else {
            item = type->tp_alloc(type, 6);
            if (!item) goto error;
            PyObject *v[6] = {PyLong_FromLongLong((long long)o[B_RTOT]), PyLong_FromLongLong((long long)o[B_CTOT]),
                              PyLong_FromLongLong((long long)o[B_HITS]), PyFloat_FromDouble(o[B_R]),
                              PyFloat_FromDouble(o[B_P]), PyFloat_FromDouble(o[B_F])};
            for (int f = 0; f < 6; f++) {
                if (!v[f]) {
                    for (int g = 0; g < 6; g++) Py_XDECREF(v[g]);
                    Py_DECREF(item);
                    goto error;
                }
            }
            for (int f = 0; f < 6; f++) PyTuple_SET_ITEM(item, f, v[f]);
        }
        int rc = PyDict_SetItem(dict, k->names[t], item);
        Py_DECREF(item);
        if (rc < 0) goto error;
    }
    return dict;
error:
    Py_DECREF(dict);
    return NULL;
}

/* One pair: a new dict, Py_None (new ref) for "score it in Python", NULL on error. */
static PyObject *rs_pair(RSKernel *k, PyObject *candidate, PyObject *references) {
    if (!PyUnicode_Check(candidate) || !(PyList_Check(references) || PyTuple_Check(references))) Py_RETURN_NONE;
    Py_ssize_t nrefs = PySequence_Fast_GET_SIZE(references);
    PyObject **refs = PySequence_Fast_ITEMS(references);
    if (nrefs == 0) Py_RETURN_NONE;
    for (Py_ssize_t i = 0; i < nrefs; i++)
        if (!PyUnicode_Check(refs[i])) Py_RETURN_NONE;
    if (k->nvocab > RS_VOCAB_LIMIT) rs_vocab_clear(k);
    size_t need = (size_t)k->ntypes * B_N * 2 + 1;
    double *best = rs_grow(k->best, &k->bestcap, need, sizeof(double));
    if (!best) return NULL;
    k->best = best;
    double *cur = best + (size_t)k->ntypes * B_N;
    if (rs_read(k, candidate, &k->cand) < 0) return NULL;
    for (Py_ssize_t i = 0; i < nrefs; i++) {
        if (rs_read(k, refs[i], &k->ref) < 0) return NULL;
        if (k->max_cells >= 0 && (long long)k->cand.tok.n * (long long)k->ref.tok.n > k->max_cells)
            Py_RETURN_NONE; /* over RougeScorer's max_lcs_cells: Python raises the reference error */
        if (rs_score_ref(k, &k->cand, &k->ref, i == 0 ? best : cur) < 0) return NULL;
        if (i > 0)
            for (int t = 0; t < k->ntypes; t++)
                if (cur[t * B_N + B_F] > best[t * B_N + B_F])
                    memcpy(best + t * B_N, cur + t * B_N, B_N * sizeof(double));
    }
    return rs_result(k, best);
}

static PyObject *RSKernel_score(RSKernel *k, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "score(candidate, references) takes 2 arguments");
        return NULL;
    }
    if (k->busy) {
        PyErr_SetString(PyExc_RuntimeError, "RougeScoreKernel is not reentrant (the stemmer called it back)");
        return NULL;
    }
    k->busy = 1;
    PyObject *r = rs_pair(k, args[0], args[1]);
    k->busy = 0;
    return r;
}

static PyObject *RSKernel_score_batch(RSKernel *k, PyObject *pairs) {
    PyObject *seq = PySequence_Fast(pairs, "score_batch takes a sequence of (candidate, references) pairs");
    if (!seq) return NULL;
    if (k->busy) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_RuntimeError, "RougeScoreKernel is not reentrant (the stemmer called it back)");
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *out = PyList_New(n);
    if (!out) { Py_DECREF(seq); return NULL; }
    k->busy = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PySequence_Fast_ITEMS(seq)[i], *r;
        if (PyTuple_Check(pair) && PyTuple_GET_SIZE(pair) == 2)
            r = rs_pair(k, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1));
        else if (PyList_Check(pair) && PyList_GET_SIZE(pair) == 2)
            r = rs_pair(k, PyList_GET_ITEM(pair, 0), PyList_GET_ITEM(pair, 1));
        else { r = Py_None; Py_INCREF(r); }
        if (!r) { k->busy = 0; Py_DECREF(out); Py_DECREF(seq); return NULL; }
        PyList_SET_ITEM(out, i, r);
    }
    k->busy = 0;
    Py_DECREF(seq);
    return out;
}

static PyObject *RSKernel_vocabulary_size(RSKernel *k, PyObject *unused) {
    return PyLong_FromLong(k->nvocab);
}

/* ------------------------------------------------------------------ type */
static void RSKernel_dealloc(RSKernel *k) {
    for (int t = 0; t < k->ntypes; t++) Py_XDECREF(k->names ? k->names[t] : NULL);
    free(k->names); free(k->family); free(k->nval);
    Py_XDECREF(k->stem); Py_XDECREF(k->result_type); Py_XDECREF(k->zero);
    free(k->table); free(k->arena); free(k->id_off); free(k->id_len); free(k->stem_of);
    free(k->cnt_r); free(k->cnt_c); free(k->slot);
    free(k->cand.tok.a); free(k->cand.sent.a); free(k->ref.tok.a); free(k->ref.sent.a);
    free(k->tbuf); free(k->masks); free(k->rows); free(k->marks);
    free(k->gpos); free(k->grem); free(k->ghash); free(k->best);
    Py_TYPE(k)->tp_free((PyObject *)k);
}

static int RSKernel_init(RSKernel *k, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"types", "stem", "result_type", "layout", "max_cells", NULL};
    PyObject *types, *stem, *result_type;
    int layout;
    long long max_cells;
    if (k->names) {
        PyErr_SetString(PyExc_RuntimeError, "RougeScoreKernel is initialised once");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!OOiL", kwlist, &PyList_Type, &types, &stem, &result_type,
                                     &layout, &max_cells))
        return -1;
    if (!PyType_Check(result_type) || !PyType_IsSubtype((PyTypeObject *)result_type, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "result_type must be a tuple subclass (a named tuple)");
        return -1;
    }
    if (layout != 0 && layout != 1) {
        PyErr_SetString(PyExc_ValueError, "layout must be 0 (precision, recall, fmeasure) or 1 (MetricStats)");
        return -1;
    }
    if (stem != Py_None && !PyCallable_Check(stem)) {
        PyErr_SetString(PyExc_TypeError, "stem must be a callable or None");
        return -1;
    }
    int nt = (int)PyList_GET_SIZE(types);
    k->names = calloc((size_t)nt + 1, sizeof(PyObject *));
    k->family = calloc((size_t)nt + 1, sizeof(int));
    k->nval = calloc((size_t)nt + 1, sizeof(int));
    if (!k->names || !k->family || !k->nval) { PyErr_NoMemory(); return -1; }
    for (int t = 0; t < nt; t++) {
        PyObject *name;
        int family, n;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(types, t), "Uii;types are (name, family, n) tuples", &name,
                              &family, &n))
            return -1;
        if (family < RS_NGRAM || family > RS_LSUM || (family == RS_NGRAM && (n < 1 || n > 9))) {
            PyErr_Format(PyExc_ValueError, "type %R: family must be 0 (n-gram, n 1..9), 1 (L) or 2 (Lsum)", name);
            return -1;
        }
        Py_INCREF(name);
        k->names[t] = name;
        k->family[t] = family;
        k->nval[t] = n;
        k->ntypes = t + 1;
    }
    if (stem != Py_None) { Py_INCREF(stem); k->stem = stem; }
    Py_INCREF(result_type);
    k->result_type = result_type;
    k->layout = layout;
    k->max_cells = max_cells;
    k->zero = PyLong_FromLong(0);
    if (!k->zero) return -1;
    return 0;
}

static PyMethodDef RSKernel_methods[] = {
    {"score", (PyCFunction)(void (*)(void))RSKernel_score, METH_FASTCALL,
     "score(candidate, references) -> {type: result} (best F over references), or None: score it in Python"},
    {"score_batch", (PyCFunction)RSKernel_score_batch, METH_O,
     "score_batch([(candidate, references), ...]) -> [score(...) of each pair]"},
    {"vocabulary_size", (PyCFunction)RSKernel_vocabulary_size, METH_NOARGS,
     "Distinct tokens and stems remembered (the stem cache is per token id)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject RSKernelType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rouge_core._kernel.RougeScoreKernel",
    .tp_basicsize = sizeof(RSKernel),
    .tp_dealloc = (destructor)RSKernel_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "rouge-score 0.1.2's scores in C, for rouge_core.rouge_score_preset (see rouge_core.kernel).",
    .tp_methods = RSKernel_methods,
    .tp_init = (initproc)RSKernel_init,
    .tp_new = PyType_GenericNew,
};

int rouge_score_kernel_register(PyObject *module) {
    if (PyType_Ready(&RSKernelType) < 0) return -1;
    Py_INCREF(&RSKernelType);
    if (PyModule_AddObject(module, "RougeScoreKernel", (PyObject *)&RSKernelType) < 0) {
        Py_DECREF(&RSKernelType);
        return -1;
    }
    return 0;
}
