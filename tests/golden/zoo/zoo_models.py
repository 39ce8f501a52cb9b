"""The golden model zoo: what zoo_golden.py checks against real MXNet and the ONNX tests
(tests/onnx/onnx_models.py) export. zoo_runner builds every name in C++."""

MODELS = [  # (get_model name, input size)
    ("resnet18_v1", 224), ("resnet18_v2", 224), ("resnet50_v1", 64), ("resnet50_v2", 64),
    ("densenet121", 224), ("squeezenet1.0", 224), ("squeezenet1.1", 224), ("inceptionv3", 299),
    ("mobilenet0.25", 224), ("mobilenetv2_0.25", 224), ("alexnet", 96), ("vgg11_bn", 32),
]

# Small networks using every layer of conv_layers.h: (name, input shape).
LAYER_NETS = [("layers2d", (2, 3, 16, 16)), ("layers1d", (2, 3, 20)), ("layers3d", (1, 2, 6, 6, 6))]

# Further variants, compared with MXNet by symbol JSON only: (get_model name, input size).
JSON_ONLY = [("resnet34_v1", 32), ("resnet101_v2", 32), ("densenet161", 224), ("mobilenet1.0", 32),
             ("mobilenetv2_0.75", 32)]

# MXNet-written models in tests/data/mxnet: (prefix, epoch, input shape).
FIXTURES = [("mnist-lenet-0", 10, (2, 1, 28, 28)), ("cifar_resnet20_v1", 0, (2, 3, 32, 32)),
            ("cifar_resnet20_v2", 0, (2, 3, 32, 32))]
