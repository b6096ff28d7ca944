"""A program's task as a dataset for Hugging Face training: ``raspc.dataset`` (what ``raspc
dataset`` writes, in memory).

    program = raspc.Program.from_file("programs/hist.rasp")
    ds = raspc.dataset(program, lengths=(1, 8), n=20000)   # datasets.DatasetDict: train, test
    ds.card["vocab"]                                        # the token ids' texts

The rows and the card are the C++ library's (trainer/dataset.hpp in the repository); this module
only turns them into a datasets.DatasetDict (when the ``datasets`` package is installed) or plain
lists, and writes Parquet through pyarrow.
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional, Sequence, Union

from . import _raspc
from .errors import InputError

COLUMNS = ("input", "output", "defined", "undefined", "input_ids", "labels", "length")


class Splits(dict):
    """{"train": ..., "test": ...} of plain lists of rows (dicts), with the dataset card as ``card``."""

    card: dict


def _features():
    import datasets
    text, ids = datasets.Value("string"), datasets.Value("int64")
    listed = getattr(datasets, "List", None) or datasets.Sequence  # List from datasets 4 on
    return datasets.Features({
        "input": listed(text), "output": listed(text), "defined": listed(datasets.Value("bool")), "undefined": text,
        "input_ids": listed(ids), "labels": listed(ids), "length": ids})


def _lengths(lengths):
    if isinstance(lengths, str):
        low, _, high = lengths.partition("-")
        try:
            return int(low), int(high or low)
        except ValueError:
            raise InputError(f"lengths: error: write the lengths as A-B, as in 1-8, not {lengths!r}") from None
    if (isinstance(lengths, (tuple, list)) and len(lengths) == 2 and
            all(isinstance(x, int) and not isinstance(x, bool) for x in lengths)):
        return int(lengths[0]), int(lengths[1])
    raise InputError(f"lengths: error: give (A, B) or \"A-B\", as in (1, 8), not {lengths!r:.60}")


def dataset(program, *, lengths: Union[str, Sequence[int]] = (1, 16), n: int = 10000, max_len: Optional[int] = None,
            vocab: Union[None, str, Sequence] = None, causal: Optional[bool] = None, seed: int = 1,
            held_out: int = 256, threads: int = 0, path: Union[None, str, os.PathLike] = None) -> Any:
    """The inputs of a program and the interpreter's labels, as ``raspc dataset`` writes them:
    ``n`` training inputs of ``lengths`` drawn from ``seed``, and the test split, the held-out
    inputs of ``raspc train`` and ``raspc compare`` (up to ``held_out`` a length, lengths 1 to
    ``max_len``, by default the longest training length), never among the training inputs.

    Returns a ``datasets.DatasetDict`` with the splits "train" and "test" when the ``datasets``
    package is installed, else a dict of plain lists of rows; either has the dataset card (program,
    vocabulary, mode, lengths, seed, counts) as ``.card``. A row: ``input``, ``output`` ("" where
    undefined), ``defined``, ``undefined`` (the interpreter's message, "" when defined),
    ``input_ids`` (BOS = 0 first), ``labels`` (aligned with input_ids, -100 at BOS and where
    undefined), ``length``. With ``path``, the folder is also written, with the card that
    examples/train_hf.py reads: as Parquet shards through pyarrow where ``datasets`` is installed
    (``datasets.load_dataset("parquet", data_dir=path)`` loads it), else as the JSON lines of
    ``raspc dataset``. Deterministic for a seed, whatever ``threads`` (0: every core)."""
    from . import _expect, _int, _native_program, _path, _text
    native = _native_program(program)
    if vocab is None:
        vocab = native.vocab
    elif isinstance(vocab, str):
        vocab = _raspc.parse_vocabulary(_text(vocab, "vocab"))
    if not isinstance(vocab, (list, tuple)):
        raise InputError(f"vocab: error: must be a list of tokens or a string, not {type(vocab).__name__}")
    if causal is None:
        causal = bool(native.causal)
    _expect(causal, bool, "causal", "True or False")
    shortest, longest = _lengths(lengths)
    max_len = longest if max_len is None else _int(max_len, "max_len", 1, 512)
    for value, name in ((shortest, "lengths"), (longest, "lengths")):
        _int(value, name, 1, 512)
    _int(n, "n", 0, _raspc.max_samples)
    _int(seed, "seed", 0, 2 ** 64 - 1)
    _int(held_out, "held_out", 0)
    _int(threads, "threads", 0, 1024)
    folder = None if path is None else _path(path, "path")
    threads = threads or os.cpu_count() or 1
    try:
        import datasets
    except ImportError:
        datasets = None
    # Without the datasets package (and pyarrow) the folder is written as `raspc dataset` writes it.
    data = _raspc.dataset(native, list(vocab), shortest, longest, max_len, n, seed, held_out, causal, threads,
                          folder if folder is not None and datasets is None else "")
    card = data["card"]
    if datasets is None:
        splits = Splits({name: [dict(zip(COLUMNS, row)) for row in zip(*(data[name][c] for c in COLUMNS))]
                         for name in ("train", "test")})
        splits.card = card
        return splits
    import pyarrow as pa
    import pyarrow.parquet as pq
    features = _features()
    tables = {name: pa.table({c: data[name][c] for c in COLUMNS}, schema=features.arrow_schema)
              for name in ("train", "test")}
    if folder is not None:
        def write(temporary):
            files = []
            for name, table in tables.items():
                file = f"{name}-00000-of-00001.parquet"
                pq.write_table(table, os.path.join(temporary, file))
                files.append(file)
            with open(os.path.join(temporary, "raspc_dataset.json"), "w") as f:
                json.dump(dict(card, files=files), f, indent=2, sort_keys=True)
                f.write("\n")
        _raspc.write_dataset_folder(folder, write)
    result = datasets.DatasetDict({name: datasets.Dataset(table) for name, table in tables.items()})
    result.card = card
    return result
