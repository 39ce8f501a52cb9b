"""A model in BERT's shape for the multi-input tests, written as MXNet Gluon code that runs
under real MXNet 1.9.1 and under hybridnet (pass the package: mxnet or hybridnet): three inputs
(tokens, token types, valid length), embeddings, one self-attention masked by the valid length,
layer norm, and the pooled first token."""
import numpy as np


def model(mx):
    """The TinyBert class of the backend `mx`."""
    nn = mx.gluon.nn

    class TinyBert(nn.HybridBlock):
        def __init__(self, vocab=20, units=8, **kwargs):
            super(TinyBert, self).__init__(**kwargs)
            self._units = units
            with self.name_scope():
                self.word_embed = nn.Embedding(vocab, units)
                self.token_type_embed = nn.Embedding(2, units)
                self.qkv = nn.Dense(3 * units, flatten=False)
                self.norm = nn.LayerNorm()
                self.pooler = nn.Dense(units, activation="tanh")

        def hybrid_forward(self, F, tokens, token_types, valid_length):
            x = self.word_embed(tokens) + self.token_type_embed(token_types)
            q, k, v = F.split(self.qkv(x), num_outputs=3, axis=2)
            scores = F.sum(F.broadcast_mul(F.expand_dims(q, axis=2), F.expand_dims(k, axis=1)),
                           axis=3)
            steps = F.reshape(F.contrib.arange_like(tokens, axis=1), shape=(1, 1, -1))
            mask = F.broadcast_lesser(steps, F.reshape(valid_length, shape=(-1, 1, 1)))
            scores = F.where(F.broadcast_like(mask, scores), scores, F.ones_like(scores) * -1e4)
            attention = F.softmax(scores / float(np.sqrt(self._units)), axis=-1)
            context = F.sum(F.broadcast_mul(F.expand_dims(attention, axis=3),
                                            F.expand_dims(v, axis=1)), axis=2)
            h = self.norm(x + context)
            return h, self.pooler(F.slice_axis(h, axis=1, begin=0, end=1))

    return TinyBert


def inputs(mx):
    """Tokens, token types and valid lengths of a batch of two (as float32, as MXNet feeds
    Embedding)."""
    nd = mx.nd
    return [nd.array([[1, 5, 7, 0, 0], [3, 2, 9, 4, 0]]),
            nd.array([[0, 0, 1, 1, 0], [0, 1, 1, 1, 0]]), nd.array([3, 4])]
