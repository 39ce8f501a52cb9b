"""hybridnet.runtime: mx.runtime.Features in MXNet's shape, over hn_runtime_feature_get."""
import pytest

import hybridnet as mx


def test_features_in_mxnets_shape():
    features = mx.runtime.Features()
    assert features is mx.runtime.Features()  # one per process, as MXNet's
    assert features.is_enabled("MKLDNN") and features.is_enabled("blas_open")
    assert not features.is_enabled("CUDA")
    listed = mx.runtime.feature_list()
    assert [f.name for f in listed] == list(features)
    assert [f.index for f in listed] == list(range(len(listed)))
    assert repr(features["MKLDNN"]) == "✔ MKLDNN" and repr(features["CUDA"]) == "✖ CUDA"
    assert all(f.description for f in listed)


def test_instruction_sets_agree_with_the_cpu():
    with open("/proc/cpuinfo") as f:
        flags = next(line.split(":", 1)[1].split() for line in f if line.startswith("flags"))
    features = mx.runtime.Features()
    assert features.is_enabled("CPU_AVX2") == ("avx2" in flags and "fma" in flags)
    assert features.is_enabled("CPU_AVX512") == ("avx512f" in flags)
    exact = any(flag in flags for flag in ("avx512_vnni", "avx_vnni", "amx_int8"))
    assert features.is_enabled("INT8_EXACT") == exact


def test_unknown_feature_names_the_known_ones():
    with pytest.raises(RuntimeError, match=r"unknown runtime feature 'TPU'.*MKLDNN"):
        mx.runtime.Features().is_enabled("TPU")
