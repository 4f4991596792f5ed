#!/bin/sh
''''true; for p in /usr/bin/python3 python3; do "$p" -c "import torch" 2>/dev/null && exec "$p" "$0" "$@"; done; exec python3 "$0" "$@" # '''
"""torch_peer.py — the same experiment in PyTorch, from the same initial weights, compared
with an nntrain run.

    nntrain --config configs/peaks.json --epochs 0 --save-model init.json --out runs/init
    nntrain --config configs/peaks.json --init-model init.json --out runs/ref
    scripts/torch_peer.py runs/ref --init init.json [--device cpu|cuda] [--threads N]

Reads the run's config.resolved.json (data, model, optimizer, epochs) and metrics.csv, builds
torch.nn.Linear layers from init.json (model.json: W is out x in, as Linear.weight), trains
full batch with torch.optim.Adam/SGD in fp32 and prints, per checkpoint epoch, both losses and
their relative difference, the epoch up to which they agree within 1e-4, and both times
(warm-up excluded on both sides). Mini-batch configs are refused: the shuffle is nntrain's own.
Runs where PyTorch is installed (it prefers /usr/bin/python3 when that has torch); elsewhere
it says so and exits 77 (skipped). Exit 2 on bad input.
"""
import argparse
import csv
import json
import os
import sys
import time

SKIP = 77


def fail(msg):
    sys.stderr.write("torch_peer.py: error: %s\n" % msg)
    sys.exit(2)


def load_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        fail("cannot read %s %s: %s" % (what, path, e.strerror))
    except ValueError as e:
        fail("%s %s is not valid JSON: %s" % (what, path, e))


def peaks(torch, x, y):
    # docs/DESIGN.md §1, in float64 like nntrain, then rounded to float32.
    return (3 * (1 - x) ** 2 * torch.exp(-x ** 2 - (y + 1) ** 2)
            - 10 * (x / 5 - x ** 3 - y ** 5) * torch.exp(-x ** 2 - y ** 2)
            - 1.0 / 3 * torch.exp(-(x + 1) ** 2 - y ** 2))


def make_data(torch, cfg):
    d = cfg["data"]
    if d.get("csv"):
        fail("this peer reproduces the peaks generator only (the run used %s)" % d["csv"])
    n1, n2 = d["grid"]
    lo, hi = d["range"]

    def lin(n):
        k = torch.arange(n, dtype=torch.float64)
        return torch.full((1,), lo, dtype=torch.float64) if n == 1 else lo + (hi - lo) * k / (n - 1)
    g1, g2 = lin(n1), lin(n2)
    x1 = g1.repeat(n2)                       # x1 varies fastest
    x2 = g2.repeat_interleave(n1)
    y = peaks(torch, x1, x2)
    x = torch.stack([x1, x2], dim=1).float()
    return x, y.float().unsqueeze(1)


def make_model(torch, model_json, cfg):
    act = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh, "sigmoid": torch.nn.Sigmoid,
           "identity": torch.nn.Identity, "leaky_relu": lambda: torch.nn.LeakyReLU(0.01)}
    layers = []
    for k, L in enumerate(model_json["layers"]):
        lin = torch.nn.Linear(L["in"], L["out"])
        with torch.no_grad():
            lin.weight.copy_(torch.tensor(L["W"], dtype=torch.float32))
            lin.bias.copy_(torch.tensor(L["b"], dtype=torch.float32))
        layers.append(lin)
        name = L.get("activation", "identity")
        if name not in act:
            fail("activation %r is not supported by this peer" % name)
        layers.append(act[name]())
    widths = [model_json["layers"][0]["in"]] + [L["out"] for L in model_json["layers"]]
    if widths != cfg["model"]["layers"]:
        fail("init model layers %s do not match the run's /model/layers %s" % (widths, cfg["model"]["layers"]))
    return torch.nn.Sequential(*layers)


def make_optimizer(torch, params, o):
    if o["type"] == "adam":
        return torch.optim.Adam(params, lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"])
    if o["type"] == "sgd":
        return torch.optim.SGD(params, lr=o["lr"])
    fail("optimizer %r is not supported by this peer" % o["type"])


def train(torch, model, opt, x, y, epochs, device):
    losses = torch.empty(epochs, dtype=torch.float32, device=device)
    for e in range(epochs):
        opt.zero_grad(set_to_none=True)
        loss = torch.mean((model(x) - y) ** 2)   # the loss before this epoch's update
        loss.backward()
        opt.step()
        losses[e] = loss.detach()
    return losses


def nntrain_losses(path, device):
    out = []
    try:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                if r["device"] == device:
                    out.append(float(r["loss"]))
    except OSError as e:
        fail("cannot read %s: %s" % (path, e.strerror))
    except (KeyError, ValueError):
        fail("%s is not an nntrain metrics.csv" % path)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="nntrain run folder (config.resolved.json, metrics.csv, summary.json)")
    ap.add_argument("--init", required=True, help="the initial weights the run started from (model.json)")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    ap.add_argument("--nntrain-device", default="cpu", help="which of the run's curves to compare (cpu or gpu)")
    ap.add_argument("--epochs", type=int, help="train this many epochs (default: the run's)")
    a = ap.parse_args()

    try:
        import torch
    except ImportError as e:
        print("torch_peer.py: skipped: PyTorch is not installed for %s (%s); it runs where torch exists "
              "(Debian: python3-torch, or pip install torch)" % (sys.executable, e))
        sys.exit(SKIP)

    cfg = load_json(os.path.join(a.run, "config.resolved.json"), "resolved config")
    init = load_json(a.init, "initial model")
    if init.get("format") != "nntrain-mlp":
        fail("%s is not an nntrain model.json" % a.init)
    if cfg["loss"] != "mse":
        fail("loss %r is not supported by this peer" % cfg["loss"])
    x, y = make_data(torch, cfg)
    bs = cfg["train"]["batch_size"]
    if bs not in (0,) and bs < x.shape[0]:
        fail("mini-batch runs (/train/batch_size %d) are not reproduced: nntrain's shuffle is its own" % bs)
    if a.device == "cuda" and not torch.cuda.is_available():
        print("torch_peer.py: CUDA requested but torch.cuda.is_available() is False; exit 3")
        sys.exit(3)
    if a.threads:
        torch.set_num_threads(a.threads)
    epochs = a.epochs if a.epochs is not None else cfg["train"]["epochs"]
    warmup = cfg["timing"]["warmup_epochs"]
    dev = torch.device(a.device)
    x, y = x.to(dev), y.to(dev)

    def sync():
        if a.device == "cuda":
            torch.cuda.synchronize()

    # Warm-up on a throw-away copy, as nntrain does (excluded from the time).
    if warmup:
        m = make_model(torch, init, cfg).to(dev)
        train(torch, m, make_optimizer(torch, m.parameters(), cfg["optimizer"]), x, y, warmup, dev)
        sync()
    model = make_model(torch, init, cfg).to(dev)
    opt = make_optimizer(torch, model.parameters(), cfg["optimizer"])
    sync()
    t0 = time.perf_counter()
    losses = train(torch, model, opt, x, y, epochs, dev)
    sync()
    seconds = time.perf_counter() - t0
    tl = losses.cpu().tolist()

    nl = nntrain_losses(os.path.join(a.run, "metrics.csv"), a.nntrain_device)
    summary = load_json(os.path.join(a.run, "summary.json"), "summary")
    nrun = next((r for r in summary["runs"] if r["device"] == a.nntrain_device), None)
    print("PyTorch %s on %s (%d threads), fp32, %d samples, %d epochs, warm-up %d excluded"
          % (torch.__version__, a.device, torch.get_num_threads(), x.shape[0], epochs, warmup))
    every = max(1, cfg["train"]["log_every"])
    rows = sorted({1, *range(every, epochs + 1, every), epochs, *[e for e in (2, 10, 20, 50) if e <= epochs]})
    print("%8s %16s %16s %12s" % ("epoch", "nntrain " + a.nntrain_device, "pytorch", "rel. diff"))
    for e in rows:
        if e > len(tl):
            continue
        n = nl[e - 1] if e <= len(nl) else float("nan")
        rel = abs(n - tl[e - 1]) / max(abs(n), abs(tl[e - 1]), 1e-30) if e <= len(nl) else float("nan")
        print("%8d %16.9g %16.9g %12.2e" % (e, n, tl[e - 1], rel))
    k = min(len(nl), len(tl))
    agree = 0
    for i in range(k):
        if abs(nl[i] - tl[i]) / max(abs(nl[i]), abs(tl[i]), 1e-30) > 1e-4:
            break
        agree = i + 1
    first20 = max((abs(nl[i] - tl[i]) / max(abs(nl[i]), abs(tl[i]), 1e-30) for i in range(min(20, k))), default=0)
    print("curves agree within 1e-4 relative up to epoch %d of %d; largest relative difference over the first "
          "20 epochs %.2e" % (agree, k, first20))
    print("(later divergence is expected: lr 0.08 training is chaotic in fp32, docs/DESIGN.md §9)")
    print("time: pytorch %.4f s (%.1f us/epoch)" % (seconds, 1e6 * seconds / max(epochs, 1)), end="")
    if nrun and nrun.get("train_seconds") and nrun["epochs"] == epochs:
        ts = nrun["train_seconds"]
        print("; nntrain %s %.4f s (%s): nntrain is %.2fx %s" % (
            a.nntrain_device, ts, nrun.get("backend", "?"), max(seconds / ts, ts / seconds),
            "faster" if ts < seconds else "slower"))
    else:
        print("; nntrain time not compared (different epoch count)")


if __name__ == "__main__":
    main()
