#!/usr/bin/python3
"""torch_peer_cpu.py — the PyTorch CPU peer for nntrain's benchmarks.

Trains the same MLP as nntrain from the same initial weights (a model.json written by
`nntrain --epochs 0 --save-model init.json`, docs/DESIGN.md §4) on the same peaks grid, with
torch.optim.Adam and MSE, full batch, and prints one JSON object with the timing and the
loss curve's ends. Run it with Debian's interpreter (/usr/bin/python3, python3-torch 1.13):

  /usr/bin/python3 scripts/torch_peer_cpu.py --model init.json --grid 200 --epochs 2000

Timing: `--warmup` epochs run first on a copy of the model and are excluded (as in nntrain);
then the clock (time.perf_counter) runs around the timed epochs only. Threads: PyTorch's
default (all cores) unless --threads is given.
"""
import argparse
import json
import time

import numpy as np
import torch

ACTIVATIONS = {
    "identity": None,
    "relu": torch.nn.ReLU,
    "tanh": torch.nn.Tanh,
    "sigmoid": torch.nn.Sigmoid,
    "leaky_relu": lambda: torch.nn.LeakyReLU(0.01),
}


def peaks_grid(n1, n2, lo, hi):
    """nntrain's peaks data (core/dataset.cpp): x1 varies fastest, computed in double, stored as float32."""
    def g(n):
        return np.array([lo if n == 1 else lo + (hi - lo) * k / (n - 1) for k in range(n)], dtype=np.float64)
    x1, x2 = np.meshgrid(g(n1), g(n2))  # x2 rows, x1 columns: row-major order has x1 fastest
    x1, x2 = x1.ravel(), x2.ravel()
    y = (3.0 * (1 - x1) ** 2 * np.exp(-x1 * x1 - (x2 + 1) ** 2)
         - 10.0 * (x1 / 5 - x1 ** 3 - x2 ** 5) * np.exp(-x1 * x1 - x2 * x2)
         - 1.0 / 3.0 * np.exp(-(x1 + 1) ** 2 - x2 * x2))
    x = np.stack([x1, x2], axis=1).astype(np.float32)
    return torch.from_numpy(x), torch.from_numpy(y.astype(np.float32).reshape(-1, 1))


def build_model(spec):
    layers = []
    for layer in spec["layers"]:
        lin = torch.nn.Linear(layer["in"], layer["out"])
        with torch.no_grad():
            lin.weight.copy_(torch.tensor(layer["W"], dtype=torch.float32))
            lin.bias.copy_(torch.tensor(layer["b"], dtype=torch.float32))
        layers.append(lin)
        act = ACTIVATIONS[layer["activation"]]
        if act is not None:
            layers.append(act())
    return torch.nn.Sequential(*layers)


def train(model, x, y, epochs, lr):
    opt = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-8)
    loss_fn = torch.nn.MSELoss()
    losses = []
    for _ in range(epochs):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return [float(v) for v in losses]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="initial weights (nntrain model.json)")
    ap.add_argument("--grid", type=int, default=200, help="peaks grid N (N x N samples)")
    ap.add_argument("--range", type=float, nargs=2, default=[-3.0, 3.0])
    ap.add_argument("--epochs", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--lr", type=float, default=0.08)
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads; 0 = PyTorch's default")
    a = ap.parse_args()

    if a.threads > 0:
        torch.set_num_threads(a.threads)
    with open(a.model) as f:
        spec = json.load(f)
    if spec.get("format") != "nntrain-mlp":
        raise SystemExit(f"{a.model}: not an nntrain model.json")
    x, y = peaks_grid(a.grid, a.grid, a.range[0], a.range[1])

    if a.warmup > 0:
        train(build_model(spec), x, y, a.warmup, a.lr)
    model = build_model(spec)
    t0 = time.perf_counter()
    losses = train(model, x, y, a.epochs, a.lr)
    seconds = time.perf_counter() - t0
    print(json.dumps({
        "torch": torch.__version__, "threads": torch.get_num_threads(), "samples": int(x.shape[0]),
        "epochs": a.epochs, "warmup_epochs": a.warmup, "train_seconds": seconds,
        "seconds_per_epoch": seconds / max(1, a.epochs),
        "initial_loss": losses[0] if losses else None, "final_loss": losses[-1] if losses else None,
        "losses_first20": losses[:20],
    }))


if __name__ == "__main__":
    main()
