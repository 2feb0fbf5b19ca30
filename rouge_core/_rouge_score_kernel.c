/* The compiled path of the `rouge_score` preset: Google's rouge-score 0.1.2, exactly.
 *
 * Compiled into rouge_core._kernel (setup.py lists this file and _nltk_porter.c
 * beside _kernel.c; PyInit__kernel calls rouge_score_kernel_register) as the type
 * `RougeScoreKernel`.  rouge_core/rouge_score_preset.py and rouge_core/compat's
 * Python path are the references it must equal; rouge_core/kernel.py
 * (`CompiledRougeScore`) sets it up.
 *
 * Per pair (candidate, references), everything rouge-score does, in C:
 *
 * - tokens (rouge_score/tokenize.py): `text.lower()` (Python's own str.lower, called
 *   only for a text that is not pure ASCII), every character outside [a-z0-9] is a
 *   separator; with a stemmer, each token longer than 3 characters is replaced by
 *   its stem (NLTK's PorterStemmer().stem: the C port in _nltk_porter.c, or NLTK
 *   itself called from here; either way once per distinct token, kept in a stem
 *   cache across pairs), and a stem that is not [a-z0-9]+ is dropped;
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
 * Speed: each pair's tokens get small local ids (a per-pair vocabulary that stays
 * in cache), so n-gram and LCS tables are small dense arrays; the stem cache has
 * one 64-byte entry per token, looked up after a prefetch of every new token's
 * entry; results are built without the garbage collector tracking them.
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

/* A vocabulary: token bytes -> id, an open-addressing table of small slots (a
 * 32-bit tag of the hash and the id) and, per id, the token's first 16 bytes inline
 * (zero-padded), its length and where it lies in the arena; a token of up to 16
 * bytes is compared without reading the arena.  `epoch` empties it in O(1): a slot
 * of another epoch is empty.
 *
 * One is kept per pair (the tokens of the candidate and its references), so that
 * the n-gram and LCS tables are indexed by small ids that stay in cache; stems are
 * cached across pairs in the stem cache (SSlot). */
typedef struct { uint32_t stamp, tag; int32_t id; } VSlot;
typedef struct { uint64_t p0, p1, h; size_t off, len; } VInfo;
typedef struct {
    VSlot *slots; size_t cap; uint32_t epoch;
    VInfo *info; size_t icap; int32_t n;
    char *arena; size_t alen, acap;
} Vocab;

/* One entry of the stem cache, 64 bytes: a hit reads one cache line.  A raw token
 * or stem of more than 16 bytes keeps the rest in RSKernel.stext. */
typedef struct {
    uint64_t p0, p1;   /* the raw token's first 16 bytes, zero-padded */
    uint64_t s0, s1;   /* its stem's first 16 bytes */
    uint64_t raw_off;  /* where a raw token's bytes past the 16th are */
    uint64_t stem_off; /* where a stem's bytes past the 16th are */
    uint32_t len;      /* raw length; 0: an empty entry */
    int32_t slen;      /* stem length; -1: dropped (not [a-z0-9]+) */
    uint32_t tag, unused;
} SSlot;

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
    int builtin_stem; /* stem with rouge_score_nltk_porter instead of calling `stem` */
    long long max_cells; /* -1: none */
    /* this pair's tokens (local ids) and, per local id, its stem's local id and scratch */
    Vocab loc;
    int32_t *lstem, *cnt_r, *cnt_c, *slot; size_t lcap;
    /* the stem cache: raw token -> its stem, or dropped; one cache line per entry */
    SSlot *scache; size_t scap, sn;
    char *stext; size_t stext_len, stext_cap; /* bytes past the 16th of long tokens and stems */
    /* texts */
    RText cand, ref;
    char *tbuf; size_t tbcap;
    char *sbuf; size_t sbcap;
    RVec raw, rawline, pending; /* one text's raw token ids, their line numbers, ids awaiting a stem */
    /* scratch */
    uint64_t *masks; size_t maskcap;
    uint64_t *rows; size_t rowcap;
    uint8_t *marks; size_t markcap;
    int32_t *gpos, *grem; uint64_t *ghash; size_t gcap;
    double *best; size_t bestcap; /* per type: p, r, f, hits, rtot, ctot, int-zero flag */
    int busy;
} RSKernel;

/* ------------------------------------------------------------------ vocabulary */
static inline uint64_t rs_mix(uint64_t h) { /* a 64-bit finaliser (murmur3's fmix64) */
    h ^= h >> 33; h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33; h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

static inline uint64_t rs_hash(const char *s, size_t n, uint64_t p0, uint64_t p1) {
    uint64_t h = rs_mix(p0 ^ (p1 * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)n << 56));
    for (size_t i = 16; i < n; i++) { h ^= (uint8_t)s[i]; h *= 1099511628211ULL; }
    return n > 16 ? rs_mix(h) : h;
}

static void vocab_reset(Vocab *v) {
    if (++v->epoch == 0) { /* wrapped: clear the stamps once */
        if (v->slots) memset(v->slots, 0, v->cap * sizeof(VSlot));
        v->epoch = 1;
    }
    v->n = 0;
    v->alen = 0;
}

static void vocab_free(Vocab *v) { free(v->slots); free(v->info); free(v->arena); memset(v, 0, sizeof(*v)); }

static int vocab_grow(Vocab *v) { /* keep the table at most half full */
    size_t cap = v->cap ? 2 * v->cap : 1024;
    VSlot *t = calloc(cap, sizeof(VSlot));
    if (!t) { PyErr_NoMemory(); return -1; }
    if (v->epoch == 0) v->epoch = 1;
    for (int32_t id = 0; id < v->n; id++) { /* rehash from the ids */
        VInfo *e = &v->info[id];
        uint64_t h = e->h;
        size_t j = (size_t)h & (cap - 1);
        while (t[j].stamp == v->epoch) j = (j + 1) & (cap - 1);
        t[j].stamp = v->epoch; t[j].tag = (uint32_t)(h >> 32); t[j].id = id;
    }
    free(v->slots);
    v->slots = t;
    v->cap = cap;
    return 0;
}

/* The id of a token's bytes (p0, p1: its first 16 bytes, from rs_prefix), added
 * when new (*is_new); -1 on error. */
static int32_t vocab_id(Vocab *v, const char *s, size_t n, uint64_t p0, uint64_t p1, int *is_new) {
    *is_new = 0;
    if ((size_t)(v->n + 1) * 2 > v->cap && vocab_grow(v) < 0) return -1;
    uint64_t h = rs_hash(s, n, p0, p1);
    uint32_t tag = (uint32_t)(h >> 32);
    size_t j = (size_t)h & (v->cap - 1);
    for (;;) {
        VSlot *e = &v->slots[j];
        if (e->stamp != v->epoch) break;
        if (e->tag == tag) {
            VInfo *f = &v->info[e->id];
            if (f->len == n && f->p0 == p0 && f->p1 == p1 &&
                (n <= 16 || memcmp(v->arena + f->off + 16, s + 16, n - 16) == 0))
                return e->id;
        }
        j = (j + 1) & (v->cap - 1);
    }
    char *a = rs_grow(v->arena, &v->acap, v->alen + n, 1);
    if (!a) return -1;
    v->arena = a;
    VInfo *info = rs_grow(v->info, &v->icap, (size_t)v->n + 1, sizeof(VInfo));
    if (!info) return -1;
    v->info = info;
    memcpy(v->arena + v->alen, s, n);
    int32_t id = v->n++;
    v->slots[j].stamp = v->epoch; v->slots[j].tag = tag; v->slots[j].id = id;
    VInfo *f = &v->info[id];
    f->p0 = p0; f->p1 = p1; f->h = h; f->off = v->alen; f->len = n;
    v->alen += n;
    *is_new = 1;
    return id;
}

/* The local id of a token's bytes, its per-id scratch set up when new; -1 on error. */
static int32_t rs_local(RSKernel *k, const char *s, size_t n, uint64_t p0, uint64_t p1) {
    int is_new;
    int32_t id = vocab_id(&k->loc, s, n, p0, p1, &is_new);
    if (id < 0 || !is_new) return id;
    if ((size_t)id >= k->lcap) {
        size_t cap = k->lcap ? 2 * k->lcap : 1024;
        int32_t *a = realloc(k->lstem, cap * sizeof(int32_t));
        if (!a) { PyErr_NoMemory(); return -1; }
        k->lstem = a;
        a = realloc(k->cnt_r, cap * sizeof(int32_t));
        if (!a) { PyErr_NoMemory(); return -1; }
        k->cnt_r = a;
        a = realloc(k->cnt_c, cap * sizeof(int32_t));
        if (!a) { PyErr_NoMemory(); return -1; }
        k->cnt_c = a;
        a = realloc(k->slot, cap * sizeof(int32_t));
        if (!a) { PyErr_NoMemory(); return -1; }
        k->slot = a;
        k->lcap = cap;
    }
    k->lstem[id] = -2; k->cnt_r[id] = 0; k->cnt_c[id] = 0; k->slot[id] = -1;
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


/* NLTK's Porter stemmer, ported to C: rouge_core/_nltk_porter.c. */
int rouge_score_nltk_porter(char *w, int n);


static int rs_stext(RSKernel *k, const char *s, size_t n, uint64_t *off) {
    char *a = rs_grow(k->stext, &k->stext_cap, k->stext_len + n, 1);
    if (!a) return -1;
    k->stext = a;
    memcpy(a + k->stext_len, s, n);
    *off = k->stext_len;
    k->stext_len += n;
    return 0;
}

static int rs_scache_grow(RSKernel *k) { /* keep it at most half full */
    size_t cap = k->scap ? 2 * k->scap : 4096;
    SSlot *t = calloc(cap, sizeof(SSlot));
    if (!t) { PyErr_NoMemory(); return -1; }
    for (size_t i = 0; i < k->scap; i++) {
        SSlot *e = &k->scache[i];
        if (!e->len) continue;
        uint64_t h = ((uint64_t)e->tag << 32) | e->unused; /* the hash, kept for rehashing */
        size_t j = (size_t)h & (cap - 1);
        while (t[j].len) j = (j + 1) & (cap - 1);
        t[j] = *e;
    }
    free(k->scache);
    k->scache = t;
    k->scap = cap;
    return 0;
}

/* The stem of a raw token, from the cache or computed: *out / *len (copied to
 * k->sbuf), or *len -1 when rouge-score drops it.  Returns 0, or -1 with an
 * exception set. */
static int rs_stem(RSKernel *k, const char *s, size_t n, uint64_t h, const char **out, int32_t *len,
                   uint64_t *q0, uint64_t *q1) {
    if ((k->sn + 1) * 2 > k->scap && rs_scache_grow(k) < 0) return -1;
    uint64_t p0, p1;
    rs_prefix(s, n, &p0, &p1);
    uint32_t tag = (uint32_t)(h >> 32);
    size_t j = (size_t)h & (k->scap - 1);
    char *b = rs_grow(k->sbuf, &k->sbcap, n + 32, 1); /* room for a stem of n + 1 bytes */
    if (!b) return -1;
    k->sbuf = b;
    SSlot *e;
    for (;;) {
        e = &k->scache[j];
        if (!e->len) break;
        if (e->tag == tag && e->len == n && e->p0 == p0 && e->p1 == p1 &&
            (n <= 16 || memcmp(k->stext + e->raw_off, s + 16, n - 16) == 0)) {
            *len = e->slen;
            *q0 = e->s0;
            *q1 = e->s1;
            if (e->slen > 0) {
                memcpy(b, &e->s0, 8);
                memcpy(b + 8, &e->s1, 8);
                if (e->slen > 16) memcpy(b + 16, k->stext + e->stem_off, (size_t)e->slen - 16);
            }
            *out = b;
            return 0;
        }
        j = (j + 1) & (k->scap - 1);
    }
    /* not cached: stem it */
    const char *stem;
    Py_ssize_t slen;
    PyObject *res = NULL;
    if (k->builtin_stem) {
        memcpy(b, s, n);
        slen = rouge_score_nltk_porter(b, (int)n);
        stem = b;
    } else {
        PyObject *word = PyUnicode_FromStringAndSize(s, (Py_ssize_t)n);
        if (!word) return -1;
        res = PyObject_CallOneArg(k->stem, word);
        Py_DECREF(word);
        if (!res) return -1;
        if (!PyUnicode_Check(res)) {
            PyErr_Format(PyExc_TypeError, "the stemmer returned %.80s, not a str", Py_TYPE(res)->tp_name);
            Py_DECREF(res);
            return -1;
        }
        stem = PyUnicode_AsUTF8AndSize(res, &slen);
        if (!stem) { Py_DECREF(res); return -1; }
    }
    SSlot fresh = {0};
    fresh.p0 = p0; fresh.p1 = p1; fresh.len = (uint32_t)n; fresh.tag = tag; fresh.unused = (uint32_t)h;
    if (n > 16 && rs_stext(k, s + 16, n - 16, &fresh.raw_off) < 0) { Py_XDECREF(res); return -1; }
    if (rs_valid(stem, slen)) {
        fresh.slen = (int32_t)slen;
        rs_prefix(stem, (size_t)slen, &fresh.s0, &fresh.s1);
        if (slen > 16 && rs_stext(k, stem + 16, (size_t)slen - 16, &fresh.stem_off) < 0) {
            Py_XDECREF(res);
            return -1;
        }
    } else {
        fresh.slen = -1;
    }
    if (res) { /* NLTK's stem, in res's buffer: copy it to sbuf (the builtin one is there already) */
        char *o = rs_grow(k->sbuf, &k->sbcap, (size_t)slen + 1, 1);
        if (!o) { Py_DECREF(res); return -1; }
        k->sbuf = o;
        memcpy(o, stem, (size_t)slen);
    }
    Py_XDECREF(res);
    *e = fresh;
    k->sn++;
    *len = fresh.slen;
    *q0 = fresh.s0;
    *q1 = fresh.s1;
    *out = k->sbuf;
    return 0;
}

/* Stems for the raw tokens of one text (k->raw): first the stem cache entries of
 * every distinct new token are prefetched, then looked up (their cache misses
 * overlap instead of queueing).  lstem[id]: -2 not asked, -3 pending, -1 dropped,
 * else the local id of the stem. */
static int rs_resolve_stems(RSKernel *k) {
    k->pending.n = 0;
    for (Py_ssize_t i = 0; i < k->raw.n; i++) {
        int32_t id = k->raw.a[i];
        if (k->lstem[id] != -2 || k->loc.info[id].len <= 3) continue;
        k->lstem[id] = -3;
        if (rvec_push(&k->pending, id) < 0) return -1;
        if (k->scap) __builtin_prefetch(&k->scache[(size_t)k->loc.info[id].h & (k->scap - 1)]);
    }
    for (Py_ssize_t i = 0; i < k->pending.n; i++) {
        int32_t id = k->pending.a[i];
        const char *stem;
        int32_t len;
        VInfo *v = &k->loc.info[id];
        uint64_t q0, q1;
        if (rs_stem(k, k->loc.arena + v->off, v->len, v->h, &stem, &len, &q0, &q1) < 0) return -1;
        int32_t st = -1;
        if (len >= 0 && (st = rs_local(k, stem, (size_t)len, q0, q1)) < 0) return -1;
        k->lstem[id] = st;
    }
    return 0;
}

/* ------------------------------------------------------------------ reading */
/* A character's token byte: [a-z0-9] as itself, [A-Z] lowercased, else 0 (a separator). */
static char RS_CHAR[128];

static void rs_init_chars(void) {
    for (int c = 0; c < 128; c++)
        RS_CHAR[c] = (char)((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : (c >= 'A' && c <= 'Z') ? c + 32 : 0);
}

static int rvec_reserve(RVec *v, Py_ssize_t need) {
    if (need <= v->cap) return 0;
    Py_ssize_t cap = v->cap ? v->cap : 256;
    while (cap < need) cap *= 2;
    int32_t *a = realloc(v->a, (size_t)cap * sizeof(int32_t));
    if (!a) { PyErr_NoMemory(); return -1; }
    v->a = a;
    v->cap = cap;
    return 0;
}

#define RS_READ(TYPE)                                                                              \
    do {                                                                                           \
        const TYPE *d = (const TYPE *)data;                                                        \
        for (Py_ssize_t i = 0; i <= n; i++) {                                                      \
            Py_UCS4 c = i < n ? d[i] : ' ';                                                        \
            char t = c < 128 ? RS_CHAR[c] : 0;                                                     \
            if (t) {                                                                               \
                if (tlen + 1 > k->tbcap) {                                                         \
                    char *b = rs_grow(k->tbuf, &k->tbcap, tlen + 1, 1);                            \
                    if (!b) goto error;                                                            \
                    k->tbuf = b;                                                                   \
                }                                                                                  \
                if (tlen < 8) q0 |= (uint64_t)(uint8_t)t << (8 * tlen);                            \
                else if (tlen < 16) q1 |= (uint64_t)(uint8_t)t << (8 * (tlen - 8));                \
                k->tbuf[tlen++] = t;                                                               \
                continue;                                                                          \
            }                                                                                      \
            if (tlen) {                                                                            \
                int32_t id = rs_local(k, k->tbuf, tlen, q0, q1);                                   \
                q0 = q1 = 0;                                                                       \
                if (id < 0) goto error;                                                            \
                k->raw.a[k->raw.n++] = id; /* room reserved: a text of n characters has at most */ \
                k->rawline.a[k->rawline.n++] = (int32_t)line; /* n / 2 + 1 tokens */               \
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
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), line = 0;
    size_t tlen = 0;
    uint64_t q0 = 0, q1 = 0; /* the token's first 16 bytes, as rs_prefix packs them */
    k->raw.n = 0;
    k->rawline.n = 0;
    if (rvec_reserve(&k->raw, n / 2 + 2) < 0 || rvec_reserve(&k->rawline, n / 2 + 2) < 0 ||
        rvec_reserve(&out->tok, n / 2 + 2) < 0 || rvec_reserve(&out->sent, n / 2 + 3) < 0)
        goto error;
    if (kind == PyUnicode_1BYTE_KIND) RS_READ(Py_UCS1);
    else if (kind == PyUnicode_2BYTE_KIND) RS_READ(Py_UCS2);
    else RS_READ(Py_UCS4);
    Py_CLEAR(lowered);
    int stemming = k->stem || k->builtin_stem;
    if (stemming && rs_resolve_stems(k) < 0) return -1;
    /* the tokens as scored (stems; dropped ones left out), a sentence per line with tokens */
    int32_t last_line = -1;
    for (Py_ssize_t i = 0; i < k->raw.n; i++) {
        int32_t id = k->raw.a[i];
        if (stemming && k->loc.info[id].len > 3) id = k->lstem[id];
        if (id < 0) continue;
        if (k->rawline.a[i] != last_line) {
            out->sent.a[out->sent.n++] = (int32_t)out->tok.n;
            last_line = k->rawline.a[i];
        }
        out->tok.a[out->tok.n++] = id;
    }
    out->sent.a[out->sent.n++] = (int32_t)out->tok.n;
    return 0;
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
    int bits = 64 / n;
    if (bits < 31 ? (uint64_t)k->loc.n < (1ULL << bits) : 1) {
        /* every n-gram packed exactly into 64 bits (local ids are small): compare keys only */
        for (Py_ssize_t i = 0; i < rn; i++) {
            uint64_t key = 0;
            for (int g = 0; g < n; g++) key = (key << bits) | (uint32_t)rt[i + g];
            size_t j = (size_t)rs_mix(key) & (cap - 1);
            for (;;) {
                if (pos[j] < 0) { pos[j] = 0; rem[j] = 1; hs[j] = key; break; }
                if (hs[j] == key) { rem[j]++; break; }
                j = (j + 1) & (cap - 1);
            }
        }
        int64_t total = 0;
        for (Py_ssize_t i = 0; i < cn; i++) {
            uint64_t key = 0;
            for (int g = 0; g < n; g++) key = (key << bits) | (uint32_t)ct[i + g];
            size_t j = (size_t)rs_mix(key) & (cap - 1);
            while (pos[j] >= 0) {
                if (hs[j] == key) {
                    if (rem[j] > 0) { rem[j]--; total++; }
                    break;
                }
                j = (j + 1) & (cap - 1);
            }
        }
        *hits = total;
        return 0;
    }
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

static inline int rs_popcount(uint64_t x) {
#if defined(__POPCNT__) || !defined(__GNUC__)
    return __builtin_popcountll(x);
#else /* without -mpopcnt GCC calls libgcc for __builtin_popcountll: count inline */
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
#endif
}

static inline Py_ssize_t popcount_prefix(const uint64_t *V, Py_ssize_t j) { /* set bits among 0..j-1 */
    Py_ssize_t c = 0, w = 0;
    for (; (w + 1) * 64 <= j; w++) c += rs_popcount(V[w]);
    if (j & 63) c += rs_popcount(V[w] & ((1ULL << (j & 63)) - 1));
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
        /* Only floats and ints inside: the collector need not follow it, and the
         * dict holding only such tuples then stays untracked too (as CPython
         * itself untracks them lazily). */
        if (!type->tp_dictoffset) PyObject_GC_UnTrack(item); /* no __dict__ that could hold more */
        int rc = PyDict_SetItem(dict, k->names[t], item);
        Py_DECREF(item);
        if (rc < 0) goto error;
    }
    /* str keys and untracked tuples only: untrack the dict too, as CPython's collector
     * would on its next pass (a container stored into it later tracks it again). */
    if (!type->tp_dictoffset && PyObject_GC_IsTracked(dict)) PyObject_GC_UnTrack(dict);
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
    if (k->sn > RS_VOCAB_LIMIT) { /* the stem cache starts afresh */
        memset(k->scache, 0, k->scap * sizeof(SSlot));
        k->sn = 0;
        k->stext_len = 0;
    }
    vocab_reset(&k->loc);
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
    return PyLong_FromSize_t(k->sn);
}

/* ------------------------------------------------------------------ type */
static void RSKernel_dealloc(RSKernel *k) {
    for (int t = 0; t < k->ntypes; t++) Py_XDECREF(k->names ? k->names[t] : NULL);
    free(k->names); free(k->family); free(k->nval);
    Py_XDECREF(k->stem); Py_XDECREF(k->result_type); Py_XDECREF(k->zero);
    vocab_free(&k->loc);
    free(k->lstem); free(k->cnt_r); free(k->cnt_c); free(k->slot);
    free(k->scache); free(k->stext);
    free(k->cand.tok.a); free(k->cand.sent.a); free(k->ref.tok.a); free(k->ref.sent.a);
    free(k->tbuf); free(k->sbuf); free(k->raw.a); free(k->rawline.a); free(k->pending.a); free(k->masks); free(k->rows); free(k->marks);
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
    if (PyUnicode_Check(stem) && PyUnicode_CompareWithASCIIString(stem, "nltk-porter") == 0) {
        k->builtin_stem = 1;
        stem = Py_None;
    } else if (stem != Py_None && !PyCallable_Check(stem)) {
        PyErr_SetString(PyExc_TypeError, "stem must be a callable, \"nltk-porter\" (the compiled one) or None");
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
     "Distinct raw tokens in the stem cache."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject RSKernelType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rouge_core._kernel.RougeScoreKernel",
    .tp_basicsize = sizeof(RSKernel),
    .tp_dealloc = (destructor)RSKernel_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "rouge-score 0.1.2's scores in C, for rouge_core.presets.rouge_score (see rouge_core.kernel).",
    .tp_methods = RSKernel_methods,
    .tp_init = (initproc)RSKernel_init,
    .tp_new = PyType_GenericNew,
};

static PyObject *rs_nltk_porter_stem(PyObject *self, PyObject *word) {
    if (!PyUnicode_Check(word) || !PyUnicode_IS_ASCII(word)) {
        PyErr_SetString(PyExc_TypeError, "nltk_porter_stem takes an ASCII str");
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(word);
    if (n > 1 << 20) {
        PyErr_SetString(PyExc_ValueError, "nltk_porter_stem takes words of at most 2**20 characters");
        return NULL;
    }
    char *b = malloc((size_t)n + 8);
    if (!b) return PyErr_NoMemory();
    memcpy(b, PyUnicode_DATA(word), (size_t)n);
    for (Py_ssize_t i = 0; i < n; i++)
        if (b[i] >= 'A' && b[i] <= 'Z') b[i] = (char)(b[i] + 32); /* stem(word, to_lowercase=True) */
    int len = rouge_score_nltk_porter(b, (int)n);
    PyObject *out = PyUnicode_FromStringAndSize(b, len);
    free(b);
    return out;
}

static PyMethodDef rs_functions[] = {
    {"nltk_porter_stem", (PyCFunction)rs_nltk_porter_stem, METH_O,
     "NLTK's PorterStemmer().stem(word) (NLTK_EXTENSIONS mode) in C, for an ASCII word."},
    {NULL, NULL, 0, NULL},
};

int rouge_score_kernel_register(PyObject *module) {
    rs_init_chars();
    if (PyModule_AddFunctions(module, rs_functions) < 0) return -1;
    if (PyType_Ready(&RSKernelType) < 0) return -1;
    Py_INCREF(&RSKernelType);
    if (PyModule_AddObject(module, "RougeScoreKernel", (PyObject *)&RSKernelType) < 0) {
        Py_DECREF(&RSKernelType);
        return -1;
    }
    return 0;
}
