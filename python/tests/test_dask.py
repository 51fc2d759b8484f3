"""A folder through Dask's distributed scheduler on a local cluster of 2 worker
processes (docs/python.md's recipe): the same samples as `carillon render
FOLDER --output-dir OUT --jobs 2 --bits 32`, augmentation drawn by the same keys."""
import os
from pathlib import Path

import numpy as np
import pytest

from conftest import FONT, OPENMSX, RATE, cli, float_wav

OPTIONS = {"max_duration": 10.0, "transpose": "-2..2", "tempo": "0.9..1.1", "seed": 5}


def render_one(path, root):
    """A worker's task: one file, keyed as the CLI keys it (its path below the root)."""
    import carillon
    key = os.path.relpath(path, root)
    return key, carillon.render(path, soundfont=FONT, sample_rate=RATE, key=key, **OPTIONS)


def test_a_folder_through_a_dask_local_cluster_equals_render_jobs_2(tmp_path):
    distributed = pytest.importorskip("distributed")
    folder = tmp_path / "in"
    (folder / "sub").mkdir(parents=True)
    files = []
    for i, f in enumerate(OPENMSX[:6]):
        target = folder / ("sub" if i % 2 else "") / Path(f).name
        target.symlink_to(f)
        files.append(str(target))
    cli("render", folder, "--output-dir", tmp_path / "out", "--jobs", 2, "--bits", 32, "-r", RATE, "--soundfont", FONT,
        "--max-duration", 10, "--transpose=-2..2", "--tempo", "0.9..1.1", "--seed", 5, "-q")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        rendered = dict(client.gather(client.map(render_one, files, root=str(folder))))
    assert len(rendered) == len(files)
    for key, audio in rendered.items():
        wav = float_wav(tmp_path / "out" / Path(key).with_suffix(".wav"))
        assert audio.tobytes() == wav, key
