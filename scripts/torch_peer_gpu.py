#!/usr/bin/env python3
"""torch_peer_gpu.py — the reference experiment (docs/DESIGN.md §1) in PyTorch on the GPU: the peer
that nntrain's GPU numbers are compared with (docs/DESIGN.md §8: nntrain should be >= 20x faster
than eager PyTorch and >= 3x faster than PyTorch replaying a CUDA-graphed step).

Two variants, same data, model, Adam and epochs, timed with CUDA events after warm-up,
the median of --reps:
  eager   : the usual loop (forward, MSE, backward, Adam step); the per-epoch loss is kept
            on the device (no host sync per epoch), as nntrain does.
  graphed : one training step (including the loss write into a device array) captured in a
            CUDA graph (Adam capturable=True) and replayed once per epoch.

  python3 scripts/torch_peer_gpu.py [--epochs 2000] [--reps 3] [--init-model model.json] [--json F]
  python3 scripts/torch_peer_gpu.py --wide [--epochs 5] [--json F]

--wide: the wide network of configs/wide.json instead (2->256->256->256->1, ReLU, 1000x1000 = 1M
peaks samples, shuffled mini-batches of 65536, Adam lr 0.001), eager only (the last batch of an
epoch is ragged, so one captured step cannot replay it); the batches are gathered on the device
from a fresh permutation each epoch, as nntrain gathers its shuffled rows.

--init-model starts from nntrain's weights (model.json; W is out x in like Linear.weight),
so the loss curves can be compared with nntrain's metrics.csv.
"""
import argparse
import json
import statistics
import sys

import torch


def peaks_data(n, lo, hi, device):
    g = torch.linspace(lo, hi, n, dtype=torch.float64)
    x1 = g.repeat(n)                     # x1 varies fastest
    x2 = g.repeat_interleave(n)
    z = (3 * (1 - x1) ** 2 * torch.exp(-x1 ** 2 - (x2 + 1) ** 2)
         - 10 * (x1 / 5 - x1 ** 3 - x2 ** 5) * torch.exp(-x1 ** 2 - x2 ** 2)
         - 1 / 3 * torch.exp(-(x1 + 1) ** 2 - x2 ** 2))
    x = torch.stack([x1, x2], dim=1).float().to(device)
    y = z.float().unsqueeze(1).to(device)
    return x, y


def make_model(widths, device, init_model=None, seed=1):
    torch.manual_seed(seed)
    layers = []
    for i in range(len(widths) - 1):
        lin = torch.nn.Linear(widths[i], widths[i + 1])
        torch.nn.init.xavier_uniform_(lin.weight)
        torch.nn.init.zeros_(lin.bias)
        layers.append(lin)
        if i < len(widths) - 2:
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers).to(device)
    if init_model:
        spec = json.load(open(init_model))
        lins = [m for m in model if isinstance(m, torch.nn.Linear)]
        if len(lins) != len(spec["layers"]):
            sys.exit(f"{init_model}: {len(spec['layers'])} layers, expected {len(lins)}")
        with torch.no_grad():
            for lin, l in zip(lins, spec["layers"]):
                lin.weight.copy_(torch.tensor(l["W"], dtype=torch.float32))
                lin.bias.copy_(torch.tensor(l["b"], dtype=torch.float32))
    return model


def time_eager(model, init_state, x, y, epochs, warmup, lr, batch=0):
    """The usual loop, timed with CUDA events after `warmup` epochs. batch 0: the full batch
    every epoch; else shuffled mini-batches of `batch`, gathered on the device from a fresh
    permutation each epoch (an epoch's loss: the batches' mean, weighted by their sizes)."""
    n_all = x.shape[0]

    def run(n):
        model.load_state_dict(init_state)
        opt = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-8)
        losses = torch.zeros(n, device=x.device)

        def step(xb, yb):
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
            return loss.detach()

        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
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
    opt = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-8, capturable=True)
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
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(epochs):
        graph.replay()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / 1e3, losses[:epochs].cpu()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--epochs", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--grid", type=int, default=200)
    ap.add_argument("--lr", type=float, default=0.08)
    ap.add_argument("--init-model")
    ap.add_argument("--wide", action="store_true", help="the wide network of configs/wide.json (see above)")
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA device for PyTorch", file=sys.stderr)
        return 77
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32, as nntrain
    torch.backends.cudnn.allow_tf32 = False
    if a.wide:
        a.grid, a.lr = 1000, 0.001
    x, y = peaks_data(a.grid, -3.0, 3.0, dev)
    model = make_model([2, 256, 256, 256, 1] if a.wide else [2, 20, 5, 1], dev, a.init_model)
    init_state = {k: v.clone() for k, v in model.state_dict().items()}

    res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "epochs": a.epochs,
           "samples": x.shape[0], "layers": "2-256-256-256-1" if a.wide else "2-20-5-1"}
    variants = (("eager", time_eager), ("graphed", time_graphed))
    if a.wide:
        variants = (("eager", lambda *args: time_eager(*args, batch=65536)),)
        res["batch_size"] = 65536
    for name, fn in variants:
        times, losses = [], None
        for _ in range(a.reps):
            t, losses = fn(model, init_state, x, y, a.epochs, a.warmup, a.lr)
            times.append(t)
        res[f"{name}_seconds"] = statistics.median(times)
        res[f"{name}_seconds_all"] = times
        res[f"{name}_first_losses"] = [float(v) for v in losses[:20]]
        res[f"{name}_final_loss"] = float(losses[-1])
        print(f"torch {res['layers']} {name:<8} {res[f'{name}_seconds']:.5f} s for {a.epochs} epochs "
              f"({1e6 * res[f'{name}_seconds'] / a.epochs:.1f} us/epoch), final loss {res[f'{name}_final_loss']:.6g}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
