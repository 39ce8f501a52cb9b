"""pytest setup for the Python package's tests (CTest python.pytest runs them with the wheel
installed in build/bindings/python/venv). Paths come from the environment CTest sets."""
import os

import pytest

import hybridnet as mx


def env_path(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run the tests through CTest (python.pytest)")
    return value


@pytest.fixture(scope="session")
def source_dir():
    return env_path("HN_SOURCE_DIR")


@pytest.fixture(scope="session")
def fixtures_dir():
    path = env_path("HN_FIXTURES_DIR")
    if not os.path.isdir(path):
        pytest.fail(f"the MXNet fixtures {path} are missing")
    return path


@pytest.fixture(autouse=True)
def one_thread_and_seed():
    mx.set_num_threads(1)
    mx.random.seed(0)
    yield
