"""Every optimizer and learning-rate scheduler against real MXNet 1.9.1 (CTest golden.optimizers):
the same random weights and the same 100 gradients through MXNet's optimizer and hybridnet's,
updated the way gluon.Trainer does (an Updater given every weight at once). The weights after each
of the first 10 steps must agree within 1e-5, relative to the largest magnitude, and after 100
steps within 1e-4; with multi_precision the float32 master copies are held to that, the float16
weights to float16's precision. Exit 77 (skipped) when MXNet is not installed.

    python optimizers_golden.py MXNET_PYTHON WORK        (the driver, under hybridnet's python)

The driver runs this file under both interpreters with HN_GOLDEN_BACKEND set; each writes
WORK/<backend>/<scenario>.npz, which the driver compares.
"""
import os
import subprocess
import sys

import numpy as np

STEPS = 100
EARLY = 10
SHAPES = [(5, 4), (7,), (3, 2, 2)]

# (name, optimizer, keywords, options): options may hold "dtype" (float16 weights),
# "lr_mult"/"wd_mult" (by index) and "scheduler" (class name and keywords).
SCENARIOS = [
    ("sgd", "sgd", {"learning_rate": 0.1}, {}),
    ("sgd_momentum_wd", "sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3}, {}),
    ("sgd_clip_rescale", "sgd", {"learning_rate": 0.1, "momentum": 0.9, "clip_gradient": 0.5,
                                 "rescale_grad": 0.5}, {}),
    ("sgd_mult", "sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01},
     {"lr_mult": {0: 0.5, 2: 2.0}, "wd_mult": {1: 0.0}}),
    ("sgd_mp_momentum", "sgd", {"learning_rate": 0.1, "momentum": 0.9, "multi_precision": True},
     {"dtype": "float16"}),
    ("sgd_mp", "sgd", {"learning_rate": 0.1, "multi_precision": True}, {"dtype": "float16"}),
    ("ccsgd", "ccsgd", {"learning_rate": 0.05, "momentum": 0.5}, {}),
    ("nag", "nag", {"learning_rate": 0.05, "momentum": 0.9, "wd": 1e-3}, {}),
    ("nag_plain", "nag", {"learning_rate": 0.05}, {}),
    ("nag_mp", "nag", {"learning_rate": 0.05, "momentum": 0.9, "multi_precision": True},
     {"dtype": "float16"}),
    ("adam", "adam", {}, {}),
    ("adam_wd_clip", "adam", {"learning_rate": 0.01, "wd": 0.01, "clip_gradient": 1.0}, {}),
    ("adam_mp", "adam", {"learning_rate": 0.01, "multi_precision": True}, {"dtype": "float16"}),
    ("adamax", "adamax", {"wd": 0.01}, {}),
    ("nadam", "nadam", {"wd": 0.01}, {}),
    ("rmsprop", "rmsprop", {"learning_rate": 0.01, "wd": 0.01}, {}),
    ("rmsprop_centered", "rmsprop", {"learning_rate": 0.01, "centered": True,
                                     "clip_weights": 2.0, "clip_gradient": 1.5}, {}),
    ("adagrad", "adagrad", {"learning_rate": 0.1, "wd": 0.01, "clip_gradient": 1.0}, {}),
    ("adadelta", "adadelta", {"wd": 0.001, "rho": 0.95}, {}),
    ("signum", "signum", {"learning_rate": 0.01, "wd": 0.01, "wd_lh": 0.01}, {}),
    ("signsgd", "signum", {"learning_rate": 0.01, "momentum": 0.0, "wd": 0.01}, {}),
    ("ftml", "ftml", {"learning_rate": 0.01, "wd": 0.01}, {}),
    ("ftrl", "ftrl", {"learning_rate": 0.1, "lamda1": 0.001, "wd": 0.01}, {}),
    ("lamb", "lamb", {"learning_rate": 0.01, "wd": 0.01}, {}),
    ("lamb_bounds", "lamb", {"learning_rate": 0.01, "bias_correction": False,
                             "lower_bound": 0.5, "upper_bound": 2.0}, {}),
    ("lamb_mp", "lamb", {"learning_rate": 0.01, "wd": 0.01, "multi_precision": True},
     {"dtype": "float16"}),
    ("lars", "lars", {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3, "eta": 0.01}, {}),
    ("dcasgd", "dcasgd", {"learning_rate": 0.05, "wd": 0.01}, {}),
    ("test", "test", {"rescale_grad": 0.01}, {}),
    ("sched_factor", "sgd", {"learning_rate": 0.1, "momentum": 0.9},
     {"scheduler": ("FactorScheduler", {"step": 10, "factor": 0.7, "warmup_steps": 5,
                                        "warmup_begin_lr": 0.01})}),
    ("sched_multifactor", "sgd", {"momentum": 0.9},
     {"scheduler": ("MultiFactorScheduler", {"step": [20, 50], "factor": 0.5, "base_lr": 0.2,
                                             "warmup_steps": 5, "warmup_mode": "constant"})}),
    ("sched_poly", "adam", {},
     {"scheduler": ("PolyScheduler", {"max_update": 80, "base_lr": 0.01, "pwr": 2,
                                      "warmup_steps": 10})}),
    ("sched_cosine", "sgd", {"momentum": 0.9},
     {"scheduler": ("CosineScheduler", {"max_update": 90, "base_lr": 0.1, "final_lr": 0.001,
                                        "warmup_steps": 5})}),
]


def flatten(state):
    if state is None:
        return []
    if isinstance(state, (list, tuple)):
        return [a for s in state for a in flatten(s)]
    return [state]


def run_backend(backend, out_dir):
    if backend == "mxnet":
        import mxnet as mx
    else:
        import hybridnet as mx
    optimizer, lr_scheduler, nd = mx.optimizer, mx.lr_scheduler, mx.nd
    os.makedirs(out_dir, exist_ok=True)
    for name, opt_name, kwargs, options in SCENARIOS:
        rng = np.random.RandomState(7)
        dtype = options.get("dtype", "float32")
        initial = [rng.normal(size=s).astype(dtype) for s in SHAPES]
        grads = [[(rng.normal(size=s) * 2).astype(dtype) for s in SHAPES] for _ in range(STEPS)]
        kwargs = dict(kwargs)
        if "scheduler" in options:
            cls_name, sched_kwargs = options["scheduler"]
            kwargs["lr_scheduler"] = getattr(lr_scheduler, cls_name)(**sched_kwargs)
        opt = optimizer.create(opt_name, **kwargs)
        if "lr_mult" in options:
            opt.set_lr_mult(options["lr_mult"])
        if "wd_mult" in options:
            opt.set_wd_mult(options["wd_mult"])
        weights = [nd.array(w, dtype=dtype) for w in initial]
        indices = list(range(len(weights)))
        if backend == "mxnet":
            updater = optimizer.get_updater(opt)

            def step(g):
                updater(indices, g, weights)

            def states():
                return [updater.states[i] for i in indices]
        else:
            state = [opt.create_state_multi_precision(i, w) for i, w in zip(indices, weights)]

            def step(g):
                opt.update_multi_precision(indices, weights, g, state)

            def states():
                return state
        record = {}
        for t in range(STEPS):
            step([nd.array(g, dtype=dtype) for g in grads[t]])
            if t < EARLY or t == STEPS - 1:
                for k, w in enumerate(weights):
                    record[f"w{k}_step{t + 1}"] = w.asnumpy()
                if dtype == "float16":
                    for k, s in enumerate(states()):
                        masters = [a for a in flatten(s) if a.dtype == np.float32
                                   and a.shape == weights[k].shape]
                        # The master copy is the float32 array holding the weight's values.
                        best = min(masters, key=lambda a: float(np.max(np.abs(
                            a.asnumpy() - weights[k].asnumpy().astype(np.float32)))))
                        record[f"master{k}_step{t + 1}"] = best.asnumpy()
        record["learning_rate"] = np.array([opt.learning_rate], dtype=np.float64)
        record["num_update"] = np.array([opt.num_update], dtype=np.int64)
        np.savez(os.path.join(out_dir, name + ".npz"), **record)


def compare(ours, theirs):
    failures = 0
    for name, _opt, _kwargs, options in SCENARIOS:
        a = np.load(os.path.join(ours, name + ".npz"))
        b = np.load(os.path.join(theirs, name + ".npz"))
        worst_early, worst_final = 0.0, 0.0
        for key in b.files:
            if key not in a.files:
                print(f"FAIL {name}: {key} missing")
                failures += 1
                continue
            x, y = a[key].astype(np.float64), b[key].astype(np.float64)
            scale = max(float(np.max(np.abs(y))), 1e-6)
            rel = float(np.max(np.abs(x - y))) / scale
            half = options.get("dtype") == "float16" and key.startswith("w")
            step = int(key.rsplit("step", 1)[1]) if "step" in key else STEPS
            tolerance = 2e-3 if half else (1e-5 if step <= EARLY else 1e-4)
            if key in ("learning_rate", "num_update"):
                tolerance = 1e-6
            if key in ("learning_rate", "num_update"):
                pass
            elif step <= EARLY:
                worst_early = max(worst_early, rel)
            else:
                worst_final = max(worst_final, rel)
            if rel > tolerance:
                print(f"FAIL {name} {key}: relative difference {rel:.3g} > {tolerance:g}")
                failures += 1
        print(f"{name}: weights' worst relative difference {worst_early:.2g} in steps "
              f"1-{EARLY}, {worst_final:.2g} after {STEPS}")
    return failures


def main():
    backend = os.environ.get("HN_GOLDEN_BACKEND")
    if backend:
        run_backend(backend, sys.argv[1])
        return 0
    if len(sys.argv) != 3:
        sys.exit("usage: optimizers_golden.py MXNET_PYTHON WORK")
    mxnet_python, work = sys.argv[1], sys.argv[2]
    probe = subprocess.run([mxnet_python, "-c", "import mxnet; print(mxnet.__version__)"],
                           capture_output=True, text=True) if os.path.exists(mxnet_python) else None
    if probe is None or probe.returncode != 0:
        print(f"SKIP: real MXNet is not importable from {mxnet_python} "
              "(scripts/setup-mxnet.sh installs it)")
        return 77
    ours, theirs = os.path.join(work, "hybridnet"), os.path.join(work, "mxnet")
    for python, backend, out in ((sys.executable, "hybridnet", ours),
                                 (mxnet_python, "mxnet", theirs)):
        done = subprocess.run([python, os.path.abspath(__file__), out],
                              env=dict(os.environ, HN_GOLDEN_BACKEND=backend),
                              capture_output=True, text=True)
        if done.returncode != 0:
            print(f"FAIL: the {backend} run exited {done.returncode}:\n{done.stderr[-3000:]}")
            return 1
    failures = compare(ours, theirs)
    print(f"MXNet {probe.stdout.strip()} and hybridnet: {len(SCENARIOS)} optimizer scenarios, "
          f"{failures} differences over tolerance")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
