"""Type stubs of the jostle package (see __init__.py for the full docstrings)."""

import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy
from numpy.typing import NDArray

__version__: str
DATASET_ARRAYS: List[Tuple[str, str, str]]
BALL_KEYS: List[str]

PathLike = Union[str, os.PathLike[str]]

class BvhError(ValueError):
    """A malformed BVH file; the message names the file and line."""

class SimulationError(RuntimeError):
    """The simulation blew up or its contact solver failed."""

class Ball:
    """A thrown ball with the keys of the CLI's --ball spec (s, m, m/s, kg)."""

    t: float
    target: Optional[str]
    speed: Optional[float]
    from_: Optional[Sequence[float]]
    velocity: Optional[Sequence[float]]
    mass: Optional[float]
    radius: Optional[float]
    def __init__(
        self,
        t: float,
        target: Optional[str] = None,
        speed: Optional[float] = None,
        from_: Optional[Sequence[float]] = None,
        velocity: Optional[Sequence[float]] = None,
        mass: Optional[float] = None,
        radius: Optional[float] = None,
    ) -> None: ...
    def to_dict(self) -> Dict[str, Any]: ...

class Perturbation:
    """A perturbed clip. F frames, J clip joints, N bodies, B balls; world frame metres,
    Y up; quaternions (x, y, z, w)."""

    fps: NDArray[numpy.float64]
    """float64 (): frames per second of every per-frame array"""
    step_s: NDArray[numpy.float64]
    """float64 (): simulation step, s"""
    joint_names: NDArray[numpy.str_]
    """str (J,): the clip's joints, in file (hierarchy) order"""
    parents: NDArray[numpy.int32]
    """int32 (J,): each joint's parent index, -1 for the root"""
    positions: NDArray[numpy.float32]
    """float32 (F, J, 3): perturbed: each joint's world position, m"""
    rotations: NDArray[numpy.float32]
    """float32 (F, J, 4): perturbed: each joint's rotation relative to its parent (the root's to the world), xyzw"""
    original_positions: NDArray[numpy.float32]
    """float32 (F, J, 3): the mocap's, as positions"""
    original_rotations: NDArray[numpy.float32]
    """float32 (F, J, 4): the mocap's, as rotations"""
    root_positions: NDArray[numpy.float32]
    """float32 (F, 3): perturbed root joint's world position, m"""
    deviation_deg: NDArray[numpy.float32]
    """float32 (F, J): angle between each joint's perturbed and original rotation, degrees"""
    body_names: NDArray[numpy.str_]
    """str (N,): the simulated bodies"""
    body_joints: NDArray[numpy.int32]
    """int32 (N,): the clip joint each body's pose drives"""
    contact: NDArray[numpy.bool_]
    """bool (F, N): body received a contact impulse (floor or ball) in a simulation step since the previous frame"""
    floor_height: NDArray[numpy.float64]
    """float64 (): the floor's height, m"""
    balls: NDArray[numpy.float32]
    """float32 (F, B, 3): ball centres, m; NaN before launch"""
    ball_radius: NDArray[numpy.float64]
    """float64 (B,): m"""
    ball_mass: NDArray[numpy.float64]
    """float64 (B,): kg"""
    ball_launch_time: NDArray[numpy.float64]
    """float64 (B,): s"""
    ball_launch_position: NDArray[numpy.float64]
    """float64 (B, 3): centre at launch, m"""
    ball_launch_velocity: NDArray[numpy.float64]
    """float64 (B, 3): m/s"""
    ball_hit: NDArray[numpy.bool_]
    """bool (B,): the ball touched the character"""
    ball_hit_body: NDArray[numpy.int32]
    """int32 (B,): first body it touched (index into body_names), -1 if none"""
    ball_hit_time: NDArray[numpy.float64]
    """float64 (B,): first contact with the character, s; NaN if none"""
    ball_impulse: NDArray[numpy.float64]
    """float64 (B,): magnitude of the impulse it gave the character, N·s"""
    fell: NDArray[numpy.bool_]
    """bool (): a hit knocked the character down"""
    fall_time: NDArray[numpy.float64]
    """float64 (): when it let go of the mocap, s; NaN if it did not"""
    recovery_time: NDArray[numpy.float64]
    """float64 (): from the last impact until every joint is back within 2° for good, s; NaN if never or fallen"""
    after_last_hit: NDArray[numpy.float64]
    """float64 (): the clip's time left after the last impact, s (under 2 s with recovery_time NaN and not fallen: the clip ended too soon to tell); NaN without a hit"""
    @property
    def metrics(self) -> Dict[str, Any]:
        """The CLI's --metrics JSON as a dict (without `out`; `timing` is this call's)."""
    @property
    def arrays(self) -> Dict[str, NDArray[Any]]:
        """Every dataset array by name."""
    @property
    def glb(self) -> bytes:
        """The .glb bytes ("perturbed" and "original" animations)."""
    @property
    def bvh(self) -> str:
        """The perturbed motion as BVH text (the input's hierarchy and channel orders)."""
    def save_glb(self, path: PathLike) -> None:
        """Write the .glb (the CLI's bytes), via a temporary file renamed."""
    def save_bvh(self, path: PathLike) -> None:
        """Write the BVH (the CLI's bytes), via a temporary file renamed."""
    def save_npz(self, path: PathLike) -> None:
        """Write the dataset arrays as .npz (the CLI's bytes), via a temporary file renamed."""

class Clip:
    """A parsed BVH clip (file units, degrees)."""

    path: str
    fps: float
    frame_time: float
    frames: int
    joint_names: List[str]
    parents: NDArray[numpy.int32]
    offsets: NDArray[numpy.float64]
    channel_names: List[str]
    channels: NDArray[numpy.float64]

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
) -> Perturbation: ...
def load(path: PathLike) -> Clip: ...
def info(path: PathLike, **options: Any) -> Dict[str, Any]: ...
