#!/bin/sh
''''true; for p in /usr/bin/python3 python3; do "$p" -c "import torch" 2>/dev/null && exec "$p" "$0" "$@"; done; exec python3 "$0" "$@" # '''
# (The trampoline line above is the module's first string, so its docstring; the real one is
# assigned to __doc__, which argparse's --help shows.)
__doc__ = """torch_peer.py — nntrain's experiments in PyTorch, from the same initial weights: the peer
that nntrain's CPU and GPU figures are compared with. One script, three uses:

Compare with a run (loss curves and times):
    nntrain --config configs/peaks.json --epochs 0 --save-model init.json --out runs/init
    nntrain --config configs/peaks.json --init-model init.json --out runs/ref
    scripts/bench/torch_peer.py runs/ref --init init.json [--device cpu|gpu] [--threads N]
  Reads the run's config.resolved.json (data, model, optimizer, epochs) and metrics.csv, trains
  full batch with torch.optim.Adam/SGD in fp32 and prints, per checkpoint epoch, both losses and
  their relative difference, the epoch up to which they agree within 1e-4, and both times
  (warm-up excluded on both sides). Mini-batch configs are refused: the shuffle is nntrain's own.

CPU timing (scripts/bench/bench_cpu.sh): one JSON object on stdout (and in --json F):
    scripts/bench/torch_peer.py --device cpu --init init.json [--grid 200] [--epochs 2000]
        [--warmup 5] [--lr 0.08] [--threads N]
  Adam and MSE, full batch, the model and activations of init.json; --warmup epochs run first
  on a copy of the model and are excluded; time.perf_counter around the timed epochs only.

GPU timing (scripts/gpu/gpu-check.sh), the median of --reps, CUDA events after warm-up:
    scripts/bench/torch_peer.py --device gpu [--epochs 2000] [--reps 3] [--init init.json] [--json F]
    scripts/bench/torch_peer.py --device gpu --wide [--epochs 5] [--json F]
  eager  : the usual loop; the per-epoch loss stays on the device (no host sync per epoch).
  graphed: one step (with the loss write into a device array) captured in a CUDA graph (Adam
           capturable=True) and replayed once per epoch. docs/DESIGN.md §8: nntrain should be
           >= 20x faster than eager and >= 3x faster than graphed.
  Without --init the net is 2-20-5-1 (Glorot, seed 1). --wide: configs/wide.json's net instead
  (2->256->256->256->1, ReLU, 1000x1000 peaks samples, shuffled mini-batches of 65536, Adam lr
  0.001), eager only (an epoch's last batch is ragged, so one captured step cannot replay it);
  the batches are gathered on the device from a fresh permutation each epoch, as nntrain does.

--init (also spelled --init-model or --model) is an nntrain model.json (W is out x in, like
Linear.weight). Runs where PyTorch is installed (it prefers /usr/bin/python3 when that has torch);
elsewhere it says so and exits 77 (skipped), as does GPU timing where torch sees no CUDA device.
Exit 2 on bad input; 3 when a comparison asks for a GPU that torch cannot see.
"""
import argparse
import csv
import json
import os
import statistics
import sys
import time

SKIP = 77
torch = None  # imported in main(), so that a machine without PyTorch gets a skip, not a traceback


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


def load_init(path):
    spec = load_json(path, "initial model")
    if spec.get("format") != "nntrain-mlp":
        fail("%s is not an nntrain model.json" % path)
    return spec


def peaks_data(n1, n2, lo, hi, device="cpu"):
    """nntrain's peaks data (docs/DESIGN.md §1): x1 varies fastest, float64, stored as float32."""
    def lin(n):
        k = torch.arange(n, dtype=torch.float64)
        return torch.full((1,), lo, dtype=torch.float64) if n == 1 else lo + (hi - lo) * k / (n - 1)
    x1 = lin(n1).repeat(n2)
    x2 = lin(n2).repeat_interleave(n1)
    y = (3 * (1 - x1) ** 2 * torch.exp(-x1 ** 2 - (x2 + 1) ** 2)
         - 10 * (x1 / 5 - x1 ** 3 - x2 ** 5) * torch.exp(-x1 ** 2 - x2 ** 2)
         - 1.0 / 3 * torch.exp(-(x1 + 1) ** 2 - x2 ** 2))
    x = torch.stack([x1, x2], dim=1).float()
    return x.to(device), y.float().unsqueeze(1).to(device)


def model_from_json(spec):
    act = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh, "sigmoid": torch.nn.Sigmoid,
           "identity": torch.nn.Identity, "leaky_relu": lambda: torch.nn.LeakyReLU(0.01)}
    layers = []
    for L in spec["layers"]:
        lin = torch.nn.Linear(L["in"], L["out"])
        with torch.no_grad():
            lin.weight.copy_(torch.tensor(L["W"], dtype=torch.float32))
            lin.bias.copy_(torch.tensor(L["b"], dtype=torch.float32))
        layers.append(lin)
        name = L.get("activation", "identity")
        if name not in act:
            fail("activation %r is not supported by this peer" % name)
        if name != "identity":
            layers.append(act[name]())
    return torch.nn.Sequential(*layers)


def glorot_model(widths, seed=1):
    torch.manual_seed(seed)
    layers = []
    for i in range(len(widths) - 1):
        lin = torch.nn.Linear(widths[i], widths[i + 1])
        torch.nn.init.xavier_uniform_(lin.weight)
        torch.nn.init.zeros_(lin.bias)
        layers.append(lin)
        if i < len(widths) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def adam(params, lr, **kw):
    return torch.optim.Adam(params, lr=lr, betas=(0.9, 0.999), eps=1e-8, **kw)


def make_optimizer(params, o):
    if o["type"] == "adam":
        return torch.optim.Adam(params, lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"])
    if o["type"] == "sgd":
        return torch.optim.SGD(params, lr=o["lr"])
    fail("optimizer %r is not supported by this peer" % o["type"])


def train(model, opt, x, y, epochs):
    """Full-batch epochs; the losses (before each epoch's update) stay tensors: no sync per epoch."""
    losses = []
    for _ in range(epochs):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return losses


# --- compare with a run ------------------------------------------------------------------------

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


def rel(a, b):
    return abs(a - b) / max(abs(a), abs(b), 1e-30)


def print_comparison(a, cfg, nl, tl, epochs):
    every = max(1, cfg["train"]["log_every"])
    rows = sorted({1, *range(every, epochs + 1, every), epochs, *[e for e in (2, 10, 20, 50) if e <= epochs]})
    print("%8s %16s %16s %12s" % ("epoch", "nntrain " + a.nntrain_device, "pytorch", "rel. diff"))
    for e in rows:
        if e > len(tl):
            continue
        n = nl[e - 1] if e <= len(nl) else float("nan")
        r = rel(n, tl[e - 1]) if e <= len(nl) else float("nan")
        print("%8d %16.9g %16.9g %12.2e" % (e, n, tl[e - 1], r))
    k = min(len(nl), len(tl))
    agree = 0
    for i in range(k):
        if rel(nl[i], tl[i]) > 1e-4:
            break
        agree = i + 1
    first20 = max((rel(nl[i], tl[i]) for i in range(min(20, k))), default=0)
    print("curves agree within 1e-4 relative up to epoch %d of %d; largest relative difference over the first "
          "20 epochs %.2e" % (agree, k, first20))
    print("(later divergence is expected: lr 0.08 training is chaotic in fp32, docs/DESIGN.md §9)")


def compare_run(a):
    if a.init is None:
        fail("comparing with a run needs --init (the model.json the run started from)")
    cfg = load_json(os.path.join(a.run, "config.resolved.json"), "resolved config")
    init = load_init(a.init)
    if cfg["loss"] != "mse":
        fail("loss %r is not supported by this peer" % cfg["loss"])
    d = cfg["data"]
    if d.get("csv"):
        fail("this peer reproduces the peaks generator only (the run used %s)" % d["csv"])
    widths = [init["layers"][0]["in"]] + [L["out"] for L in init["layers"]]
    if widths != cfg["model"]["layers"]:
        fail("init model layers %s do not match the run's /model/layers %s" % (widths, cfg["model"]["layers"]))
    bs = cfg["train"]["batch_size"]
    if bs != 0 and bs < d["grid"][0] * d["grid"][1]:
        fail("mini-batch runs (/train/batch_size %d) are not reproduced: nntrain's shuffle is its own" % bs)
    cuda = a.device == "gpu"
    if cuda and not torch.cuda.is_available():
        print("torch_peer.py: CUDA requested but torch.cuda.is_available() is False; exit 3")
        sys.exit(3)
    dev = torch.device("cuda" if cuda else "cpu")
    x, y = peaks_data(d["grid"][0], d["grid"][1], d["range"][0], d["range"][1], dev)
    epochs = a.epochs if a.epochs is not None else cfg["train"]["epochs"]
    warmup = cfg["timing"]["warmup_epochs"]

    def sync():
        if cuda:
            torch.cuda.synchronize()

    if warmup:  # on a throw-away copy, as nntrain does (excluded from the time)
        m = model_from_json(init).to(dev)
        train(m, make_optimizer(m.parameters(), cfg["optimizer"]), x, y, warmup)
        sync()
    model = model_from_json(init).to(dev)
    opt = make_optimizer(model.parameters(), cfg["optimizer"])
    sync()
    t0 = time.perf_counter()
    losses = train(model, opt, x, y, epochs)
    sync()
    seconds = time.perf_counter() - t0
    tl = [float(v) for v in losses]

    nl = nntrain_losses(os.path.join(a.run, "metrics.csv"), a.nntrain_device)
    summary = load_json(os.path.join(a.run, "summary.json"), "summary")
    nrun = next((r for r in summary["runs"] if r["device"] == a.nntrain_device), None)
    print("PyTorch %s on %s (%d threads), fp32, %d samples, %d epochs, warm-up %d excluded"
          % (torch.__version__, dev.type, torch.get_num_threads(), x.shape[0], epochs, warmup))
    print_comparison(a, cfg, nl, tl, epochs)
    print("time: pytorch %.4f s (%.1f us/epoch)" % (seconds, 1e6 * seconds / max(epochs, 1)), end="")
    if nrun and nrun.get("train_seconds") and nrun["epochs"] == epochs:
        ts = nrun["train_seconds"]
        print("; nntrain %s %.4f s (%s): nntrain is %.2fx %s" % (
            a.nntrain_device, ts, nrun.get("backend", "?"), max(seconds / ts, ts / seconds),
            "faster" if ts < seconds else "slower"))
    else:
        print("; nntrain time not compared (different epoch count)")


# --- CPU timing ---------------------------------------------------------------------------------

def time_cpu(a):
    if a.init is None:
        fail("CPU timing needs --init (an nntrain model.json)")
    if a.wide or (a.reps or 1) != 1:
        fail("--wide and --reps are GPU timing options")
    spec = load_init(a.init)
    epochs = 2000 if a.epochs is None else a.epochs
    x, y = peaks_data(a.grid, a.grid, a.range[0], a.range[1])
    if a.warmup > 0:
        m = model_from_json(spec)
        train(m, adam(m.parameters(), a.lr), x, y, a.warmup)
    model = model_from_json(spec)
    opt = adam(model.parameters(), a.lr)
    t0 = time.perf_counter()
    losses = [float(v) for v in train(model, opt, x, y, epochs)]
    seconds = time.perf_counter() - t0
    res = {
        "torch": torch.__version__, "threads": torch.get_num_threads(), "samples": int(x.shape[0]),
        "epochs": epochs, "warmup_epochs": a.warmup, "train_seconds": seconds,
        "seconds_per_epoch": seconds / max(1, epochs),
        "initial_loss": losses[0] if losses else None, "final_loss": losses[-1] if losses else None,
        "losses_first20": losses[:20],
    }
    print(json.dumps(res))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=2)


# --- GPU timing ---------------------------------------------------------------------------------

def cuda_timer():
    return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)


def time_eager(model, init_state, x, y, epochs, warmup, lr, batch=0):
    """The usual loop, timed with CUDA events after `warmup` epochs. batch 0: the full batch
    every epoch; else shuffled mini-batches of `batch`, gathered on the device from a fresh
    permutation each epoch (an epoch's loss: the batches' mean, weighted by their sizes)."""
    n_all = x.shape[0]

    def run(n):
        model.load_state_dict(init_state)
        opt = adam(model.parameters(), lr)
        losses = torch.zeros(n, device=x.device)

        def step(xb, yb):
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
            return loss.detach()

        start, stop = cuda_timer()
        start.record()
        for e in range(n):
            if not batch:
                losses[e] = step(x, y)
                continue
            perm = torch.randperm(n_all, device=x.device)
            for b0 in range(0, n_all, batch):
                idx = perm[b0:b0 + batch]
                losses[e] += step(x.index_select(0, idx), y.index_select(0, idx)) * idx.numel() / n_all
        stop.record()
        torch.cuda.synchronize()
        return start.elapsed_time(stop) / 1e3, losses.cpu()
    run(warmup)
    return run(epochs)


def time_graphed(model, init_state, x, y, epochs, warmup, lr):
    model.load_state_dict(init_state)
    opt = adam(model.parameters(), lr, capturable=True)
    losses = torch.zeros(epochs + warmup + 3, device=x.device)
    slot = torch.zeros(1, dtype=torch.long, device=x.device)

    def step():
        opt.zero_grad(set_to_none=False)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.index_copy_(0, slot, loss.detach().view(1))
        slot.add_(1)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):  # PyTorch's recipe: warm up on a side stream before capture
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()

    def reset():
        with torch.no_grad():
            model.load_state_dict(init_state)
            for st in opt.state.values():
                for t in st.values():
                    if torch.is_tensor(t):
                        t.zero_()
            slot.zero_()
    reset()
    for _ in range(warmup):
        graph.replay()
    reset()
    torch.cuda.synchronize()
    start, stop = cuda_timer()
    start.record()
    for _ in range(epochs):
        graph.replay()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / 1e3, losses[:epochs].cpu()


def time_gpu(a):
    if not torch.cuda.is_available():
        print("skipped: no CUDA device for PyTorch", file=sys.stderr)
        sys.exit(SKIP)
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32, as nntrain
    torch.backends.cudnn.allow_tf32 = False
    epochs, reps = (2000 if a.epochs is None else a.epochs), (3 if a.reps is None else a.reps)
    if a.wide:
        a.grid, a.lr = 1000, 0.001
    x, y = peaks_data(a.grid, a.grid, a.range[0], a.range[1], dev)
    widths = [2, 256, 256, 256, 1] if a.wide else [2, 20, 5, 1]
    model = (model_from_json(load_init(a.init)) if a.init else glorot_model(widths)).to(dev)
    init_state = {k: v.clone() for k, v in model.state_dict().items()}
    lins = [m for m in model if isinstance(m, torch.nn.Linear)]
    layers = "-".join(str(w) for w in [lins[0].in_features] + [m.out_features for m in lins])
    res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "epochs": epochs,
           "samples": x.shape[0], "layers": layers}
    variants = (("eager", time_eager), ("graphed", time_graphed))
    if a.wide:
        variants = (("eager", lambda *args: time_eager(*args, batch=65536)),)
        res["batch_size"] = 65536
    for name, fn in variants:
        times, losses = [], None
        for _ in range(reps):
            t, losses = fn(model, init_state, x, y, epochs, a.warmup, a.lr)
            times.append(t)
        res[f"{name}_seconds"] = statistics.median(times)
        res[f"{name}_seconds_all"] = times
        res[f"{name}_first_losses"] = [float(v) for v in losses[:20]]
        res[f"{name}_final_loss"] = float(losses[-1])
        print(f"torch {layers} {name:<8} {res[f'{name}_seconds']:.5f} s for {epochs} epochs "
              f"({1e6 * res[f'{name}_seconds'] / epochs:.1f} us/epoch), final loss {res[f'{name}_final_loss']:.6g}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=2)


def main():
    global torch
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", nargs="?", help="an nntrain run folder to compare with (else: timing only)")
    ap.add_argument("--device", default="cpu", choices=["cpu", "gpu", "cuda"], help="where torch runs (cuda = gpu)")
    ap.add_argument("--init", "--init-model", "--model", dest="init", help="initial weights (nntrain model.json)")
    ap.add_argument("--epochs", type=int, help="default: the run's when comparing, else 2000")
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    ap.add_argument("--nntrain-device", default="cpu", help="comparing: which of the run's curves (cpu or gpu)")
    ap.add_argument("--grid", type=int, default=200, help="timing: peaks grid N (N x N samples)")
    ap.add_argument("--range", type=float, nargs=2, default=[-3.0, 3.0], help="timing: peaks domain")
    ap.add_argument("--warmup", type=int, default=5, help="timing: untimed epochs first")
    ap.add_argument("--lr", type=float, default=0.08, help="timing: Adam's learning rate")
    ap.add_argument("--reps", type=int, help="GPU timing: repeats, the median is reported (default 3)")
    ap.add_argument("--wide", action="store_true", help="GPU timing: configs/wide.json's net (see above)")
    ap.add_argument("--json", help="timing: also write the results here")
    a = ap.parse_args()
    if a.device == "cuda":
        a.device = "gpu"
    try:
        import torch as t
    except ImportError as e:
        print("torch_peer.py: skipped: PyTorch is not installed for %s (%s); it runs where torch exists "
              "(Debian: python3-torch, or pip install torch)" % (sys.executable, e))
        sys.exit(SKIP)
    torch = t
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    if a.run is not None:
        compare_run(a)
    elif a.device == "cpu":
        time_cpu(a)
    else:
        time_gpu(a)


if __name__ == "__main__":
    main()
