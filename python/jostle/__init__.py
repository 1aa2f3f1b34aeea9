"""jostle: motion capture that reacts to physics.

Load a BVH clip, throw balls at its character, simulate, and get the perturbed motion back
as NumPy arrays (the same arrays, names, shapes and dtypes as ``jostle perturb --npz``),
with the run's metrics and the CLI's .glb / BVH / .npz outputs::

    import jostle
    run = jostle.perturb("mocap/demo_walk.bvh", [{"t": 1.5, "target": "right_forearm", "speed": 12.0}])
    run.positions.shape        # (frames, joints, 3), float32, metres, Y up
    run.metrics["balls"][0]["body"]
    run.save_glb("out/demo_walk.glb")

Units are SI throughout (m, kg, s; angles in degrees where named ``_deg``); the world is
Y-up, quaternions are (x, y, z, w). The simulation runs without the GIL, so threads run
clips in parallel; Ctrl-C interrupts a call within about 0.1 s of simulation.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Union

from ._jostle import (
    BALL_KEYS,
    DATASET_ARRAYS,
    BvhError,
    Clip,
    Perturbation,
    SimulationError,
    __version__,
)
from . import _jostle

__all__ = [
    "Ball",
    "BvhError",
    "Clip",
    "DATASET_ARRAYS",
    "Perturbation",
    "SimulationError",
    "info",
    "load",
    "perturb",
]

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Ball:
    """A thrown ball, with the keys of the CLI's ``--ball`` spec.

    Either aimed: ``Ball(t=1.2, target="right_forearm", speed=12.0)`` arrives at the
    target body's centre at ``t`` (s), launched 3 m in front of the figure unless
    ``from_`` is given; or launched: ``Ball(t=0.5, from_=(0, 1.5, 3), velocity=(0, 0, -12))``
    leaves ``from_`` (m, world, Y up) at ``t`` with ``velocity`` (m/s).
    ``mass`` in kg (default 0.45, a handball), ``radius`` in m (default 0.095).
    Targets: the clip's joint names or head, chest, pelvis, left_/right_ + upper_arm,
    forearm, hand, thigh, shin, foot.
    """

    t: float
    target: Optional[str] = None
    speed: Optional[float] = None
    from_: Optional[Sequence[float]] = None
    velocity: Optional[Sequence[float]] = None
    mass: Optional[float] = None
    radius: Optional[float] = None

    def to_dict(self) -> Dict[str, Any]:
        """The ball as a dict with the CLI's keys (``from``, not ``from_``); unset keys left out."""
        d = {
            "t": self.t,
            "target": self.target,
            "speed": self.speed,
            "from": self.from_,
            "velocity": self.velocity,
            "mass": self.mass,
            "radius": self.radius,
        }
        return {k: v for k, v in d.items() if v is not None}


def _ball_dict(b: Union[Ball, Mapping[str, Any]]) -> Any:
    return b.to_dict() if isinstance(b, Ball) else b


def perturb(
    path: PathLike,
    balls: Iterable[Union[Ball, Mapping[str, Any]]] = (),
    *,
    random_balls: int = 0,
    seed: int = 0,
    mass: Optional[float] = None,
    height: Optional[float] = None,
    step: Optional[float] = None,
    **options: Any,
) -> Perturbation:
    """Throw ``balls`` at the character of the BVH clip at ``path`` and simulate the clip.

    ``balls``: dicts with the keys ``t, target, speed, from, velocity, mass, radius`` (as the
    CLI's ``--ball``) or :class:`Ball` objects. ``random_balls=N`` adds N random throws,
    deterministic for a given ``seed`` (note: the CLI's ``--seed`` defaults to 1, this to 0).
    ``mass`` (kg) and ``height`` (m, stature) rescale the figure; ``step`` is the simulation
    step in s (default 1/240). Every other option of ``jostle perturb`` is a keyword by its
    long name: ``drift="post"``, ``projection="step"|"mass"``, ``k_s=…``, ``k_0``, ``k_g``,
    ``k_stance``, ``damping_time``, ``beta``, ``root="spring"|"pinned"``, ``root_hz``,
    ``no_ground=True``, ``no_falls=True``, ``reflex_fraction`` (1: off), ``reflex_root``,
    ``reflex_latency``, ``reflex_ramp``, ``no_feedback=True``, ``no_feedforward=True``, ``scale``, ``keep_first_frame=True``,
    ``skeleton="spec.toml"``, ``cutoff`` (Hz), ``gltf_layout="skinned"|"nodes"``.
    Every frame is simulated (the arrays' contact labels come from the run), as
    ``jostle perturb --npz`` does.

    Returns a :class:`Perturbation`. Raises ``FileNotFoundError``/``OSError`` for a file that
    cannot be read, :class:`BvhError` for a malformed BVH (the message names file and line),
    ``ValueError`` for a bad ball or option (the message names the key) or a clip that makes
    no character, :class:`SimulationError` if the simulation blows up, and
    ``KeyboardInterrupt`` on Ctrl-C. The GIL is released while the clip simulates.
    """
    for name, value, top in (("random_balls", random_balls, 2**63), ("seed", seed, 2**64)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < top:
            raise ValueError(f"`{name}` must be a whole number >= 0, got {value!r}")
    opts = dict(options)
    opts.update(mass=mass, height=height, step=step)
    if isinstance(balls, (Ball, Mapping)):  # one ball given bare
        balls = [balls]
    ball_list = [_ball_dict(b) for b in balls]
    return _jostle.perturb(os.fspath(path), ball_list, random_balls, seed, opts)


def load(path: PathLike) -> Clip:
    """Parse the BVH file at ``path``: fps, frames, joint names, parents and raw channels.

    Raises ``FileNotFoundError``/``OSError`` or :class:`BvhError` (naming file and line).
    """
    return _jostle.load(os.fspath(path))


def info(path: PathLike, **options: Any) -> Dict[str, Any]:
    """What ``jostle info --json`` prints for the clip at ``path``, as a dict: frames, rate,
    joints → bodies, DOF and joint types, units, height (m) and mass (kg), notes.

    Takes the clip-loading options of :func:`perturb` (``scale``, ``height``, ``mass``,
    ``keep_first_frame``, ``skeleton``, ``cutoff``).
    """
    return _jostle.info(os.fspath(path), options)
