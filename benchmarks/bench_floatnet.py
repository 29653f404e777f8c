"""Throughput of the rounded evaluator: vectorised vs a per-neuron Python loop vs numpy float16.

Reports (inputs x neurons) per second on one C3 network in float16 and the ratios. numpy float16
rounds every op only because the format is float16; it is the speed anchor, not a general method.
Run: ``python benchmarks/bench_floatnet.py``.
"""

import time

import numpy as np

from icml26.floatnet import FloatFormat, build_depth3


def _best(fn, repeat=3):
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def _naive(net, X):
    fmt, out = net.fmt, []
    for x in X:
        a = list(x)
        for k, (W, b) in enumerate(net.layers):
            z = [b[r] for r in range(len(b))]
            for r in range(len(b)):
                for j in range(W.shape[1]):
                    z[r] = float(fmt.add(z[r], fmt.mul(W[r, j], a[j])))
            a = z if k == net.depth - 1 else [max(v, 0.0) for v in z]
        out.append(a[0])
    return np.array(out)


def _float16(net, X):
    a = X.astype(np.float16)
    for k, (W, b) in enumerate(net.layers):
        z = np.broadcast_to(b.astype(np.float16), (len(a), len(b))).copy()
        W16 = W.astype(np.float16)
        for j in range(W.shape[1]):
            z = z + a[:, j : j + 1] * W16[:, j]  # each float16 op rounds (bias-first order)
        a = z if k == net.depth - 1 else np.maximum(z, np.float16(0))
    return a[:, 0].astype(np.float64)


def main() -> None:
    fmt = FloatFormat(11, 15)
    v = fmt.values()
    rng = np.random.default_rng(0)
    D = np.sort(rng.choice(v[(v >= 0.5) & (v < 8)], 150, replace=False))[:, None]
    f = fmt.round(np.sin(D[:, 0]))
    net = build_depth3(fmt, 1, lambda X: f, domain=D)
    work = len(D) * sum(net.widths)
    ref = net(D, engine="dense")
    with np.errstate(over="ignore", invalid="ignore"):
        assert np.array_equal(_float16(net, D), ref), "float16 anchor disagrees"
    sub = D[:3]
    assert np.array_equal(_naive(net, sub), net(sub))
    rows = {
        "vectorised dense": work / _best(lambda: net(D, engine="dense")),
        "vectorised sparse": work / _best(lambda: net(D, engine="sparse")),
        "naive per-neuron loop": len(sub) * sum(net.widths) / _best(lambda: _naive(net, sub), 1),
    }
    with np.errstate(over="ignore", invalid="ignore"):
        rows["numpy float16 (anchor)"] = work / _best(lambda: _float16(net, D))
    anchor = rows["numpy float16 (anchor)"]
    print(f"C3 net on {len(D)} float16 inputs, widths {net.widths}")
    print(f"{'evaluator':<26}{'inputs*neurons/s':>18}{'vs float16':>12}")
    for name, rate in rows.items():
        print(f"{name:<26}{rate:>18.3g}{rate / anchor:>12.3g}")


if __name__ == "__main__":
    main()
