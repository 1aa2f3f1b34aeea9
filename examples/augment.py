"""Data augmentation with jostle: N random-throw variations of every clip of a folder,
written as .npz dataset arrays (see the README's "Dataset arrays").

    pip install ./python tqdm
    python examples/augment.py mocap out/augmented --variations 4
"""

import argparse
from pathlib import Path

import jostle
from tqdm import tqdm

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("folder", type=Path, help="folder of .bvh clips (searched recursively)")
parser.add_argument("out", type=Path, help="output folder")
parser.add_argument("--variations", type=int, default=4, help="variations per clip")
parser.add_argument("--balls", type=int, default=2, help="random throws per variation")
args = parser.parse_args()

jobs = [(clip, v) for clip in sorted(args.folder.rglob("*.bvh")) for v in range(args.variations)]
for clip, v in tqdm(jobs, unit="run"):
    run = jostle.perturb(clip, random_balls=args.balls, seed=v)
    run.save_npz(args.out / clip.relative_to(args.folder).with_suffix("") / f"v{v:02}.npz")
