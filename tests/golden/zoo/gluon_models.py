"""The table of GluonCV / GluonNLP / gluon.rnn models the golden run checks (models_golden.py).

One row per model: its name, family, source, how MXNet builds it (pretrained=False; random
weights come from models_golden.py) and its inputs. The smallest variants and input sizes that
still run each family's ops: the whole golden run has to fit in a few minutes on 2 cores.
An input is (name, shape, low, high, integral): float32 uniform random values in [low, high),
rounded down when integral (token ids, token types, valid lengths: MXNet models take them as
float32).
"""
import importlib
import inspect

import mxnet as mx


def cv(name, **kwargs):
    """A GluonCV model-zoo model without pretrained weights (its backbone's neither)."""
    from gluoncv import model_zoo
    constructor = importlib.import_module("gluoncv.model_zoo.model_zoo")._models[name]
    if "pretrained_base" in inspect.signature(constructor).parameters:
        kwargs["pretrained_base"] = False
    return model_zoo.get_model(name, pretrained=False, **kwargs)


def faster_rcnn():
    """GluonCV's faster_rcnn_resnet50_v1b_voc with 300 / 20 RPN proposals before / after NMS
    at test time instead of 6000 / 300 (its constructor fixes them; the ROI head runs ResNet's
    last stage once per proposal, which dominates the run time)."""
    from gluoncv.data import VOCDetection
    from gluoncv.model_zoo.rcnn.faster_rcnn import get_faster_rcnn
    from gluoncv.model_zoo.resnetv1b import resnet50_v1b
    base = resnet50_v1b(pretrained=False, dilated=False, use_global_stats=True)
    features, top_features = mx.gluon.nn.HybridSequential(), mx.gluon.nn.HybridSequential()
    for layer in ["conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3"]:
        features.add(getattr(base, layer))
    top_features.add(base.layer4)
    return get_faster_rcnn(
        name="resnet50_v1b", dataset="voc", pretrained=False, features=features,
        top_features=top_features, classes=VOCDetection.CLASSES, short=600, max_size=1000,
        nms_thresh=0.3, nms_topk=400, post_nms=100, roi_mode="align", roi_size=(14, 14),
        strides=16, clip=None, rpn_channel=1024, base_size=16, scales=(2, 4, 8, 16, 32),
        ratios=(0.5, 1, 2), alloc_size=(128, 128), rpn_nms_thresh=0.7, rpn_train_pre_nms=12000,
        rpn_train_post_nms=2000, rpn_test_pre_nms=300, rpn_test_post_nms=20, rpn_min_size=16,
        num_sample=128, pos_iou_thresh=0.5, pos_ratio=0.25, max_num_gt=100)


def tsn():
    """GluonCV's resnet18_v1b_kinetics400 as a TSN over 2 segments (the zoo constructor always
    downloads the pretrained backbone, so the class is built directly)."""
    from gluoncv.model_zoo.action_recognition.actionrec_resnetv1b import ActionRecResNetV1b
    return ActionRecResNetV1b(depth=18, nclass=400, pretrained_base=False, num_segments=2,
                              dropout_ratio=0.5, init_std=0.01)


def segmentation(kind, **kwargs):
    """A GluonCV segmentation network on a ResNet-50 backbone (the zoo names only ResNet-101 for
    PSPNet and DeepLabV3 on VOC; the constructor is the same). crop_size sizes the pyramid
    pooling of PSPNet and DeepLabV3 to the input."""
    from gluoncv.model_zoo import deeplabv3, fcn, pspnet
    get = {"fcn": fcn.get_fcn, "psp": pspnet.get_psp, "deeplab": deeplabv3.get_deeplab}[kind]
    return get(dataset="pascal_voc", backbone="resnet50", pretrained=False, pretrained_base=False,
               **kwargs)


def bert():
    """A 2-layer BERT (GluonNLP's BERTModel) with pooler: tokens, token types, valid length."""
    from gluonnlp.model import bert as nlp_bert
    encoder = nlp_bert.BERTEncoder(num_layers=2, units=64, hidden_size=128, max_length=32,
                                   num_heads=4, dropout=0.0)
    return nlp_bert.BERTModel(encoder, vocab_size=100, token_type_vocab_size=2, units=64,
                              embed_size=64, use_pooler=True, use_decoder=False,
                              use_classifier=False)


class TransformerSeq2Seq(mx.gluon.HybridBlock):
    """GluonNLP's transformer encoder and decoder as a translation model runs them in one pass
    (teacher forcing): source and target tokens with their valid lengths -> target logits.
    GluonNLP's NMTModel is an imperative Block, so this is the hybridizable equivalent."""

    def __init__(self, vocab=50, units=32, **kwargs):
        super().__init__(**kwargs)
        from gluonnlp.model import transformer
        with self.name_scope():
            self.encoder, self.decoder, _ = transformer.get_transformer_encoder_decoder(
                num_layers=2, units=units, hidden_size=64, num_heads=4, max_src_length=20,
                max_tgt_length=20, dropout=0.0, prefix="transformer_")
            self.src_embed = mx.gluon.nn.Embedding(vocab, units)
            self.tgt_embed = mx.gluon.nn.Embedding(vocab, units)
            self.proj = mx.gluon.nn.Dense(vocab, flatten=False)

    def hybrid_forward(self, F, src, tgt, src_valid_length, tgt_valid_length):
        memory, _ = self.encoder(self.src_embed(src), valid_length=src_valid_length)
        steps = F.contrib.arange_like(src, axis=1)
        memory_mask = F.broadcast_lesser(steps.reshape((1, -1)), src_valid_length.reshape((-1, 1)))
        out, _, _ = self.decoder(self.tgt_embed(tgt), [memory, memory_mask], tgt_valid_length)
        return self.proj(out)


class LanguageModel(mx.gluon.HybridBlock):
    """GluonNLP's StandardRNN LSTM language model with its begin state as inputs: tokens (T, N)
    and the two layers' h and c -> logits and the final states."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        import gluonnlp as nlp
        with self.name_scope():
            self.lm = nlp.model.StandardRNN("lstm", 100, 32, 32, 2, 0.0, 0.0)

    def hybrid_forward(self, F, tokens, h, c):
        out, (h_out, c_out) = self.lm(tokens, [h, c])
        return out, h_out, c_out


class ImageAndFeatures(mx.gluon.HybridBlock):
    """A small two-input, two-output gluon network (an image and a feature vector -> class
    scores and an embedding): the multi-input, multi-output paths with ops that run today,
    while BERT waits for its sequence ops."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        nn = mx.gluon.nn
        with self.name_scope():
            self.image = nn.HybridSequential()
            self.image.add(nn.Conv2D(8, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
                           nn.GlobalAvgPool2D(), nn.Flatten())
            self.features = nn.Dense(8, activation="tanh")
            self.classes = nn.Dense(5)

    def hybrid_forward(self, F, image, features):
        embedding = F.concat(self.image(image), self.features(features), dim=1)
        return F.softmax(self.classes(embedding)), embedding


class RecurrentLayer(mx.gluon.HybridBlock):
    """gluon.rnn.LSTM / GRU (2 layers, bidirectional) in layout TNC or NTC with its begin states
    as inputs, as a hybridized layer exports it (data0 the sequence, then h0 and for LSTM c0):
    the output sequence and the final states."""

    def __init__(self, mode, layout, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.rnn = getattr(mx.gluon.rnn, mode)(16, num_layers=2, layout=layout,
                                                   bidirectional=True, input_size=8)

    def hybrid_forward(self, F, sequence, *states):
        out, final = self.rnn(sequence, list(states))
        return [out] + list(final)


def rnn_inputs(mode, layout):
    """The sequence (T=5, N=3, C=8 in the given layout) and the begin states (4, N, 16)."""
    shape = (5, 3, 8) if layout == "TNC" else (3, 5, 8)
    states = 2 if mode == "LSTM" else 1
    return [floats("data0", shape, -1, 1)] + [floats(f"data{k + 1}", (4, 3, 16), -1, 1)
                                              for k in range(states)]


def image(*shape):
    return [("data", (1, 3) + shape, 0.0, 1.0, False)]


def ints(name, shape, low, high):
    return (name, shape, low, high, True)


def floats(name, shape, low, high):
    return (name, shape, low, high, False)

# (name, family, source, constructor, inputs)
MODELS = [
    ("resnest14", "classification", "GluonCV", lambda: cv("resnest14"), image(64, 64)),
    ("se_resnext50_32x4d", "classification", "GluonCV", lambda: cv("se_resnext50_32x4d"),
     image(64, 64)),
    ("mobilenetv3_small", "classification", "GluonCV", lambda: cv("mobilenetv3_small"),
     image(64, 64)),
    ("darknet53", "classification", "GluonCV", lambda: cv("darknet53"), image(64, 64)),
    ("ssd_300_mobilenet0.25_voc", "detection", "GluonCV", lambda: cv("ssd_300_mobilenet0.25_voc"),
     image(256, 256)),
    ("yolo3_mobilenet0.25_voc", "detection", "GluonCV", lambda: cv("yolo3_mobilenet0.25_voc"),
     image(224, 224)),
    ("faster_rcnn_resnet50_v1b_voc", "detection", "GluonCV",
     faster_rcnn,
     image(256, 256)),
    ("mask_rcnn_resnet18_v1b_coco", "instance segmentation", "GluonCV",
     lambda: cv("mask_rcnn_resnet18_v1b_coco", rpn_test_pre_nms=300, rpn_test_post_nms=20),
     image(256, 256)),
    ("center_net_resnet18_v1b_voc", "detection", "GluonCV",
     lambda: cv("center_net_resnet18_v1b_voc"), image(256, 256)),
    ("fcn_resnet50_voc", "segmentation", "GluonCV",
     lambda: segmentation("fcn", crop_size=96, base_size=96), image(96, 96)),
    ("psp_resnet50_voc", "segmentation", "GluonCV",
     lambda: segmentation("psp", crop_size=96, base_size=96), image(96, 96)),
    ("deeplab_resnet50_voc", "segmentation", "GluonCV",
     lambda: segmentation("deeplab", crop_size=96, base_size=96), image(96, 96)),
    ("simple_pose_resnet18_v1b", "pose estimation", "GluonCV",
     lambda: cv("simple_pose_resnet18_v1b"), image(128, 96)),
    ("resnet18_v1b_kinetics400 (TSN, 2 segments)", "action recognition", "GluonCV", tsn,
     [floats("data", (2, 3, 112, 112), 0.0, 1.0)]),
    ("i3d_resnet50_v1_kinetics400", "action recognition", "GluonCV",
     lambda: cv("i3d_resnet50_v1_kinetics400"),
     [floats("data", (1, 3, 8, 64, 64), 0.0, 1.0)]),
    ("image_and_features", "two inputs, two outputs", "gluon.nn", ImageAndFeatures,
     [floats("data0", (2, 3, 16, 16), 0, 1), floats("data1", (2, 6), -1, 1)]),
    ("bert_2layer", "language (BERT)", "GluonNLP", bert,
     [ints("data0", (2, 8), 0, 100), ints("data1", (2, 8), 0, 2), ints("data2", (2,), 3, 9)]),
    ("transformer_seq2seq", "translation (transformer)", "GluonNLP", TransformerSeq2Seq,
     [ints("data0", (2, 7), 0, 50), ints("data1", (2, 6), 0, 50), ints("data2", (2,), 3, 8),
      ints("data3", (2,), 2, 7)]),
    ("lstm_language_model", "language model (LSTM)", "GluonNLP", LanguageModel,
     [ints("data0", (5, 2), 0, 100), floats("data1", (2, 2, 32), -1, 1),
      floats("data2", (2, 2, 32), -1, 1)]),
    ("lstm_tnc", "recurrent (LSTM)", "gluon.rnn", lambda: RecurrentLayer("LSTM", "TNC"),
     rnn_inputs("LSTM", "TNC")),
    ("lstm_ntc", "recurrent (LSTM)", "gluon.rnn", lambda: RecurrentLayer("LSTM", "NTC"),
     rnn_inputs("LSTM", "NTC")),
    ("gru_tnc", "recurrent (GRU)", "gluon.rnn", lambda: RecurrentLayer("GRU", "TNC"),
     rnn_inputs("GRU", "TNC")),
    ("gru_ntc", "recurrent (GRU)", "gluon.rnn", lambda: RecurrentLayer("GRU", "NTC"),
     rnn_inputs("GRU", "NTC")),
]
