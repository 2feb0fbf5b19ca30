"""A Python port of the idea of Beam Java's CombineFnTester.

For a CombineFn and a list of inputs, the output must be the same however the
inputs are split into accumulators (1, 2, n/2 and n parts, random cut points,
shuffled), however the accumulators are merged (left fold, right fold, balanced
and random trees, with empty accumulators mixed in), and with the fn and every
accumulator pickled and unpickled between steps, as runners do.
"""

from __future__ import annotations

import pickle
import random

import numpy as np


def _fold(fn, items):
    acc = fn.create_accumulator()
    for item in items:
        acc = fn.add_input(acc, item)
    return acc


def _roundtrip(obj):
    return pickle.loads(pickle.dumps(obj))


def _merge_tree(fn, accumulators, rng, shape):
    accs = list(accumulators)
    if shape == "left":
        total = accs[0]
        for acc in accs[1:]:
            total = fn.merge_accumulators([total, acc])
        return total
    if shape == "right":
        total = accs[-1]
        for acc in reversed(accs[:-1]):
            total = fn.merge_accumulators([acc, total])
        return total
    if shape == "flat":
        return fn.merge_accumulators(accs)
    while len(accs) > 1:  # random tree: merge random neighbours, random fan-in
        k = rng.randint(2, min(4, len(accs)))
        i = rng.randrange(0, len(accs) - k + 1)
        merged = fn.merge_accumulators([_roundtrip(a) for a in accs[i : i + k]])
        accs[i : i + k] = [merged]
    return accs[0]


def _splits(items, rng):
    n = len(items)
    for parts in sorted({1, 2, max(1, n // 2), max(1, n)}):
        yield [items[i::parts] for i in range(parts)]
    for _ in range(4):
        shuffled = items[:]
        rng.shuffle(shuffled)
        cuts = sorted(rng.sample(range(n + 1), min(n + 1, rng.randint(1, 6))))
        bounds = [0] + cuts + [n]
        yield [shuffled[a:b] for a, b in zip(bounds, bounds[1:])]


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and np.isnan(a):
        return isinstance(b, float) and np.isnan(b)
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b, equal_nan=True)
    return a == b


def check_combine_fn(fn, items, expected=None, seed: int = 0, trials: int = 3):
    """Assert every split, order, merge tree and pickling gives one output.

    Returns that output (compared to `expected` when given)."""
    rng = random.Random(seed)
    fn = _roundtrip(fn)
    reference = fn.extract_output(_fold(fn, items))
    if expected is not None:
        assert _same(reference, expected), f"{type(fn).__name__}: {reference!r} != {expected!r}"
    for _ in range(trials):
        for parts in _splits(list(items), rng):
            for shape in ("left", "right", "flat", "random"):
                worker_fn = _roundtrip(fn)
                accs = [_roundtrip(_fold(worker_fn, part)) for part in parts]
                accs.insert(rng.randrange(len(accs) + 1), worker_fn.create_accumulator())  # an empty one
                merged = _merge_tree(worker_fn, accs, rng, shape)
                if hasattr(worker_fn, "compact"):
                    merged = worker_fn.compact(merged)
                output = _roundtrip(worker_fn).extract_output(_roundtrip(merged))
                assert _same(output, reference), (
                    f"{type(fn).__name__}: split into {[len(p) for p in parts]} merged {shape} "
                    f"gave {output!r}, one pass gave {reference!r}"
                )
    return reference
