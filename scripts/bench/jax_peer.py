#!/usr/bin/env python3
"""jax_peer.py — the JAX peer for the CPU side: nntrain's peaks net (2->20->5->1, Glorot
uniform init, Adam lr 0.08, full batch or shuffled mini-batches, MSE) trained in JAX with the
whole training loop in one jit (lax.fori_loop over epochs), on the CPU. Prints the seconds of
`--epochs` epochs (compile and one warm-up call excluded), min of `--reps`, per activation.

    taskset -c 0 python3 scripts/bench/jax_peer.py [--grid 100] [--epochs 300]
        [--batch 0] [--acts relu,tanh,sigmoid] [--reps 3]

Pin it to one core with taskset to compare with `nntrain --threads 1` (XLA's CPU client
otherwise uses every core). JAX is looked for in the running python3; run it with a venv's
python (python3 -m venv /tmp/jaxv && /tmp/jaxv/bin/pip install jax). Without JAX it says so
and exits 77 (skipped). The weights are JAX's own draw, not nntrain's: this is a timing peer,
not a numerical one (torch_peer.py is that).
"""
import argparse
import sys
import time

SKIP = 77

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    print("jax_peer.py: JAX is not installed for %s; skipped (exit 77)" % sys.executable)
    sys.exit(SKIP)

jax.config.update("jax_platforms", "cpu")


def peaks_data(n, lo=-3.0, hi=3.0):
    """nntrain's peaks data (docs/DESIGN.md §1): x1 varies fastest, float64, stored as float32."""
    import numpy as np
    k = np.arange(n, dtype=np.float64)
    lin = lo + (hi - lo) * k / (n - 1)
    x1, x2 = np.tile(lin, n), np.repeat(lin, n)
    y = (3 * (1 - x1) ** 2 * np.exp(-x1 ** 2 - (x2 + 1) ** 2)
         - 10 * (x1 / 5 - x1 ** 3 - x2 ** 5) * np.exp(-x1 ** 2 - x2 ** 2)
         - 1.0 / 3 * np.exp(-(x1 + 1) ** 2 - x2 ** 2))
    return jnp.asarray(np.stack([x1, x2], 1), jnp.float32), jnp.asarray(y[:, None], jnp.float32)


def init(widths, key):
    params = []
    for a, b in zip(widths[:-1], widths[1:]):
        key, k = jax.random.split(key)
        lim = (6.0 / (a + b)) ** 0.5
        params.append((jax.random.uniform(k, (a, b), jnp.float32, -lim, lim), jnp.zeros((b,), jnp.float32)))
    return params


def make_train(act, epochs, batch, n, lr=0.08, b1=0.9, b2=0.999, eps=1e-8):
    f = {"relu": jax.nn.relu, "tanh": jnp.tanh, "sigmoid": jax.nn.sigmoid}[act]

    def loss(params, x, y):
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w + b
            if i + 1 < len(params):
                h = f(h)
        return jnp.mean((h - y) ** 2)

    grad = jax.value_and_grad(loss)
    nb = 1 if batch <= 0 else (n + batch - 1) // batch

    def step(state, xb, yb):
        params, m, v, t = state
        _, g = grad(params, xb, yb)
        t = t + 1
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        c1, c2 = 1 - b1 ** t, 1 - b2 ** t
        params = jax.tree_util.tree_map(lambda p, m, v: p - lr / c1 * m / (jnp.sqrt(v / c2) + eps), params, m, v)
        return params, m, v, t

    @jax.jit
    def train(params, x, y, key):
        zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
        state = (params, zeros, zeros, jnp.float32(0))

        def epoch(e, state):
            if batch <= 0:
                return step(state, x, y)
            perm = jax.random.permutation(jax.random.fold_in(key, e), n)

            def one(b, state):  # the last batch is padded by wrapping around (timing peer)
                idx = jnp.take(perm, (b * batch + jnp.arange(batch)) % n)
                return step(state, x[idx], y[idx])
            return jax.lax.fori_loop(0, nb, one, state)
        return jax.lax.fori_loop(0, epochs, epoch, state)[0]

    return train


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grid", type=int, default=100)
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--batch", type=int, default=0, help="0 = full batch")
    ap.add_argument("--acts", default="relu,tanh,sigmoid")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    x, y = peaks_data(a.grid)
    n = x.shape[0]
    print("jax %s, %s, %d samples, 2->20->5->1, batch %s, %d epochs" %
          (jax.__version__, jax.devices()[0].platform, n, a.batch or "full", a.epochs))
    for act in a.acts.split(","):
        train = make_train(act, a.epochs, a.batch, n)
        params, key = init([2, 20, 5, 1], jax.random.PRNGKey(1)), jax.random.PRNGKey(2)
        jax.block_until_ready(train(params, x, y, key))  # compile + warm-up
        times = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            jax.block_until_ready(train(params, x, y, key))
            times.append(time.perf_counter() - t0)
        print("%-8s min %.4f s  all %s" % (act, min(times), " ".join("%.4f" % t for t in times)))


if __name__ == "__main__":
    main()
