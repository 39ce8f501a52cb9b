"""Datasets, samplers and the DataLoader (mx.gluon.data)."""
from . import vision
from .dataloader import DataLoader, default_batchify_fn
from .dataset import ArrayDataset, Dataset, RecordFileDataset, SimpleDataset
from .sampler import BatchSampler, FilterSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset", "Sampler", "SequentialSampler",
           "RandomSampler", "FilterSampler", "BatchSampler", "DataLoader", "default_batchify_fn",
           "vision"]
