"""Every initializer and option run by real MXNet 1.9.1 and by hybridnet after the same seed
(compare_with_mxnet.py ... init_programs.py compares what each wrote):

    HN_GOLDEN_BACKEND=mxnet|hybridnet python init_programs.py OUT_DIR

Each case seeds, initializes small Gluon layers (the initializer given to initialize(), as a
layer's own weight/bias initializer, or called on an array with an InitDesc) and writes the
values as CASE_PARAM.npy and the dumps() text as CASE_dumps.json: values must be MXNet's
exactly. Orthogonal is the exception, compared by statistics (see ORTHOGONAL_NOTE).
"""
import json
import os
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")
if os.environ.get("HN_GOLDEN_BACKEND") == "mxnet":
    import mxnet as mx
else:
    import hybridnet as mx
init, nn, nd = mx.init, mx.gluon.nn, mx.nd
OUT = sys.argv[1]

ORTHOGONAL_NOTE = ("NOTE: Orthogonal is compared by statistics (its Gram matrix, scale^2 I, and "
                   "the draw of the next parameter, which shows it consumed the same random "
                   "values): MXNet keeps a factor of numpy's LAPACK SVD of the random matrix, "
                   "whose signs and rotation hybridnet does not reproduce; hybridnet "
                   "orthonormalizes the same matrix by Gram-Schmidt.")


def save(case, name, value):
    value = value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)
    np.save(os.path.join(OUT, f"{case}_{name}.npy"), value)


def save_dumps(case, initializer):
    with open(os.path.join(OUT, f"{case}_dumps.json"), "w") as f:
        f.write(initializer.dumps())


def layers(weight_init=None, bias_init="zeros"):
    """A Dense and a Conv2D with known shapes, so initialize() draws at once, in this order."""
    net = nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(nn.Dense(6, in_units=5, weight_initializer=weight_init,
                         bias_initializer=bias_init))
        net.add(nn.Conv2D(4, kernel_size=3, in_channels=2, weight_initializer=weight_init,
                          bias_initializer=bias_init))
    return net


def write_params(case, net):
    for name, param in net.collect_params().items():
        save(case, name, param.data())


def global_init_case(case, initializer, seed=1):
    """initialize(initializer): every parameter without its own initializer gets it."""
    mx.random.seed(seed)
    net = layers()
    net.initialize(initializer)
    write_params(case, net)
    save_dumps(case, initializer)


def own_init_case(case, weight_init, bias_init, seed=2):
    """The layers' own initializers, under the default global one."""
    mx.random.seed(seed)
    net = layers(weight_init, bias_init)
    net.initialize()
    write_params(case, net)


RANDOM = {
    "uniform": init.Uniform(),
    "uniform_0_5": init.Uniform(0.5),
    "normal": init.Normal(),
    "normal_2": init.Normal(2),
}
for rnd in ("uniform", "gaussian"):
    for factor in ("avg", "in", "out"):
        for magnitude in (3, 2.34):
            name = f"xavier_{rnd}_{factor}_{str(magnitude).replace('.', '_')}"
            RANDOM[name] = init.Xavier(rnd_type=rnd, factor_type=factor, magnitude=magnitude)
for factor in ("avg", "in", "out"):
    for slope in (0.25, 0.1):
        RANDOM[f"msraprelu_{factor}_{str(slope).replace('.', '_')}"] = init.MSRAPrelu(factor,
                                                                                     slope)
for case, initializer in RANDOM.items():
    global_init_case(case, initializer)

for case, initializer in {"zero": init.Zero(), "one": init.One(),
                          "constant": init.Constant(0.3)}.items():
    global_init_case(case, initializer)

# Registered names, as layers take them.
own_init_case("named_xavier", "xavier", "ones")
own_init_case("named_normal", "normal", "zeros")
own_init_case("own_mixed_kinds", init.Xavier(rnd_type="gaussian"), init.Normal(0.3))
own_init_case("own_lstmbias", init.MSRAPrelu(), init.LSTMBias(2.0))

# Bilinear: the upsampling kernel on a 4-D weight.
mx.random.seed(3)
up = nn.Conv2D(2, kernel_size=4, in_channels=1, weight_initializer=init.Bilinear(),
               prefix="up_")
up.initialize()
save("bilinear", "weight", up.weight.data())
save_dumps("bilinear", init.Bilinear())
save_dumps("lstmbias", init.LSTMBias())

# Orthogonal: statistics, and the next draw.
print(ORTHOGONAL_NOTE)
for rand_type in ("uniform", "normal"):
    for units, in_units in ((6, 4), (3, 5)):
        case = f"orthogonal_{rand_type}_{units}x{in_units}"
        mx.random.seed(4)
        scale = 1.5
        dense = nn.Dense(units, in_units=in_units, prefix="o_",
                         weight_initializer=init.Orthogonal(scale, rand_type))
        after = nn.Dense(3, in_units=3, prefix="after_", weight_initializer=init.Uniform(1.0))
        dense.initialize()
        after.initialize()
        w = dense.weight.data().asnumpy().astype(np.float64)
        gram = w @ w.T if units <= in_units else w.T @ w
        save(case, "gram", gram.astype(np.float32))
        save(case, "next_draw", after.weight.data())
        save_dumps(case, init.Orthogonal(scale, rand_type))

# Initializer.__call__ with an InitDesc: names decide, "__init__" overrides.
mx.random.seed(5)
for case, desc, initializer in (
        ("call_weight", init.InitDesc("fc_weight"), init.Xavier()),
        ("call_bias", init.InitDesc("fc_bias"), init.Normal(0.5)),
        ("call_gamma", init.InitDesc("bn_gamma"), init.Zero()),
        ("call_beta", init.InitDesc("bn_beta"), init.One()),
        ("call_own", init.InitDesc("fc_bias", {"__init__": init.Constant(3).dumps()}),
         init.Zero()),
        ("call_own_named", init.InitDesc("fc_bias", {"__init__": "ones"}), init.Zero()),
        ("call_mixed_bias", "fc_bias", init.Mixed([".*bias", ".*"], [init.One(),
                                                                      init.Normal(0.5)])),
        ("call_mixed_weight", "fc_weight", init.Mixed([".*bias", ".*"],
                                                      [init.One(), init.Normal(0.5)]))):
    arr = nd.zeros((4, 3))
    initializer(desc, arr)
    save(case, "value", arr)

# float16 and float64 arrays: MXNet draws them in double.
for dtype in ("float16", "float64"):
    for name, initializer in (("uniform", init.Uniform(0.5)), ("normal", init.Normal(2)),
                              ("xavier", init.Xavier(rnd_type="gaussian"))):
        mx.random.seed(8)
        arr = nd.zeros((70, 3), dtype=dtype)
        initializer(init.InitDesc("fc_weight"), arr)
        save(f"call_{name}_{dtype}", "value", arr)

# Load: by name with arg:/aux: dropped, the default for the others.
saved = {"arg:fc_weight": nd.array(np.arange(12, dtype=np.float32).reshape(4, 3))}
loader = init.Load(saved, default_init=init.Uniform(0.5))
for case, name in (("load_found", "fc_weight"), ("load_default", "fc_other_weight")):
    mx.random.seed(6)
    arr = nd.zeros((4, 3))
    loader(name, arr)
    save(case, "value", arr)
