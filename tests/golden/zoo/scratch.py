"""Scratch files of the model tests: each model's exports are deleted once checked, so a run
holds one model's files at a time (CI machines may have only a few GB of free disk)."""
import glob
import os


def discard(prefix):
    """Removes every file whose path starts with prefix (an export's -symbol.json, -NNNN.params,
    inputs and outputs)."""
    for path in glob.glob(glob.escape(prefix) + "*"):
        if os.path.isfile(path):
            os.remove(path)
