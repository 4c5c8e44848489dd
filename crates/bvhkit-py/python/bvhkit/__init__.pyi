"""Read, write and compute forward kinematics of BVH motion-capture files.

A thin wrapper over the Rust library bvhkit: every rule lives there.

Example::

    >>> import bvhkit
    >>> bvh = bvhkit.read("samples/walk.bvh")
    >>> bvh.positions().shape            # frames x joints x 3
    (60, 24, 3)
    >>> bvh.joint_names[:3]
    ['Hips', 'Spine', 'Chest']
"""

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeAlias, final, overload

import numpy as np
import numpy.typing as npt

__version__: str

_Path: TypeAlias = str | os.PathLike[str]
_Repr: TypeAlias = Literal["quat", "matrix", "6d", "axis_angle", "euler"]
_PositionChannels: TypeAlias = Literal["replace", "add"]
# A crossfade: an int is frames, a float seconds, a str the command line's
# text ("12", "0.4s").
_Span: TypeAlias = int | float | str
# A weight: a number, the command line's text ("0..1", "0..1:smooth",
# "0:0,0.5:1,1:0"), or one weight per output frame.
_Weight: TypeAlias = float | str | Sequence[float] | npt.NDArray[np.floating]
_Reference: TypeAlias = Literal["tpose", "rest"] | int

class ParseError(ValueError):
    """A BVH text that does not parse.

    The message is ``path:line:column: message`` (``line:column: message``
    for ``parse``), saying what was expected and what was found.
    """

    path: str | None
    """The file, or None for ``parse``."""
    line: int | None
    """Line of the problem, from 1 (None when it has no place in the text)."""
    column: int | None
    """Column in characters, from 1."""

class BvhWarning(UserWarning):
    """Category of the warnings ``read(..., warn=True)`` emits."""

@final
class ReadWarning:
    """A problem lenient reading recovered from; unpacks as ``(line, column, message)``.

    ``str(w)`` is ``line:column: message``.
    """

    line: int | None
    column: int | None
    message: str
    kind: str
    """``FrameCount``, ``FrameTime``, ``MotionHeader``, ``RowLayout``,
    ``TruncatedFrame``, ``Hierarchy`` or ``Encoding``."""
    def __iter__(self) -> Iterator[int | str | None]: ...

@final
class Bvh:
    """A parsed BVH file: skeleton, motion and the warnings of reading it.

    Immutable. Joints are in file order (parents before children), End Sites
    included as joints of their own, named ``<Parent>_End`` as
    ``bvh positions`` names them.

    Example::

        >>> bvh = bvhkit.parse(open("samples/walk.bvh", "rb").read())
        >>> len(bvh), bvh.n_joints, bvh.n_channels
        (60, 24, 60)
        >>> bvh.parents[:4]
        array([-1,  0,  1,  2])
    """

    @property
    def path(self) -> Path | None:
        """The file this was read from, as given (None for ``parse``)."""
    @property
    def joint_names(self) -> list[str]:
        """Joint names in file order, End Sites included (``<Parent>_End``)."""
    @property
    def parents(self) -> npt.NDArray[np.int64]:
        """Parent index of every joint, -1 for roots (a file may have several)."""
    @property
    def end_sites(self) -> npt.NDArray[np.bool_]:
        """Whether each joint is an End Site."""
    @property
    def offsets(self) -> npt.NDArray[np.float64]:
        """``OFFSET`` of every joint, joints x 3."""
    @property
    def channels(self) -> list[list[str]]:
        """Channel names of every joint (``[]`` for End Sites), e.g. ``['Zrotation', ...]``."""
    @property
    def channel_joints(self) -> npt.NDArray[np.int64]:
        """The joint of every motion column (length ``n_channels``)."""
    @property
    def frame_time(self) -> float:
        """Seconds per frame, exactly as written."""
    @property
    def fps(self) -> float:
        """Frames per second, ``1 / frame_time``."""
    @property
    def n_frames(self) -> int:
        """Number of frames (also ``len(bvh)``)."""
    @property
    def n_channels(self) -> int:
        """Number of channels: the motion's columns."""
    @property
    def n_joints(self) -> int:
        """Number of joints, End Sites included."""
    @property
    def motion(self) -> npt.NDArray[np.float64]:
        """The motion values, frames x channels, in the file's units and degrees.

        A read-only view of the values, not a copy; it keeps this object alive
        (``motion.base is bvh``). Copy it (``bvh.motion.copy()``) to change it.
        """
    @property
    def warnings(self) -> list[ReadWarning]:
        """What lenient reading recovered from, in file order (empty when strict)."""
    @property
    def report(self) -> str | None:
        """What the mix or retarget that made this ``Bvh`` said about its work.

        The notes ``bvh concat``/``blend``/``layer``/``loop``/``retarget``
        print on standard error, lines joined by ``"\\n"`` (``""`` when
        there is nothing to say); ``None`` for a ``Bvh`` read, parsed or
        edited. A clip resampled to the first clip's rate or converted into
        its channel layout is also announced by a ``BvhWarning``.

        Example::

            >>> walk = bvhkit.read("samples/walk.bvh")
            >>> for part in walk.loop(crossfade=10).report.split("; "):
            ...     print(part)
            loop of 50 frames (10 crossfaded)
            travel per cycle 183.3333 units and 0.00 degrees about y, kept
        """
    @overload
    def positions(
        self, frames: int, position_channels: _PositionChannels = "replace"
    ) -> npt.NDArray[np.float64]:
        """World positions of every joint: frames x joints x 3 (joints x 3 for an int).

        ``frames``: None (all), an int, a slice or a sequence of ints (negative
        counts from the end). ``position_channels``: ``"replace"`` (a position
        channel replaces the OFFSET component it names, as Blender and real
        files mean) or ``"add"`` (the format texts' reading). Computed on all
        cores with the GIL released; the same numbers as ``bvh positions``.

        Example::

            >>> bvh.positions(frames=slice(0, 10)).shape
            (10, 24, 3)
        """
    @overload
    def positions(
        self,
        frames: slice | Iterable[int] | None = None,
        position_channels: _PositionChannels = "replace",
    ) -> npt.NDArray[np.float64]: ...
    def rotations(
        self,
        repr: _Repr = "quat",
        space: Literal["local", "world"] = "local",
        order: str | None = None,
        continuous: bool = False,
    ) -> npt.NDArray[np.float64]:
        """Joint rotations: frames x joints x width, the same numbers as ``bvh rotations``.

        ``repr``: ``"quat"`` ([x, y, z, w], w >= 0), ``"matrix"`` (frames x
        joints x 3 x 3, acting on column vectors), ``"6d"`` (first two matrix
        columns), ``"axis_angle"`` (rotation vector, radians) or ``"euler"``
        (degrees, in each joint's own channel order, see ``euler_orders``; in
        local space these are the file's values). ``space``: ``"local"``
        (relative to the parent) or ``"world"``. ``order``: one Euler order
        for every joint (``"XYZ"``...). ``continuous``: no quaternion sign
        flips and no Euler jumps from frame to frame.

        Example::

            >>> bvh.rotations("6d", space="world").shape
            (60, 24, 6)
        """
    def euler_orders(self, order: str | None = None) -> list[str]:
        """The Euler order of each joint in ``rotations("euler", order=order)``."""
    # Edits: each returns a new Bvh (the core's ``bvhkit::edit``), the same
    # bytes as ``bvh edit`` with the matching flag; errors raise ValueError.
    def frames(self, start: int = 0, stop: int | None = None) -> Bvh:
        """Frames ``start`` up to ``stop`` (excluded; None: the end), clamped to the clip.

        As ``bvh edit --frames START..STOP``: a ``start`` past the clip's end
        raises ``ValueError`` with its message.

        Example::

            >>> len(bvh.frames(10, 20))
            10
        """
    def every(self, n: int) -> Bvh:
        """Every ``n``th frame from the first, ``Frame Time`` times ``n`` (``--every N``).

        Example::

            >>> half = bvh.every(2)
            >>> len(half), round(half.fps, 3)
            (30, 15.0)
        """
    def reverse(self) -> Bvh:
        """The frames in reverse order (``--reverse``).

        Example::

            >>> bool((bvh.reverse().motion[0] == bvh.motion[-1]).all())
            True
        """
    def resample(self, fps: float) -> Bvh:
        """Resampled to ``fps`` frames per second (``--fps N``).

        Rotations by quaternion SLERP, positions linearly; kept frames are
        copied bit for bit and ``Frame Time`` is exactly ``1 / fps``.

        Example::

            >>> len(bvh.resample(60))
            118
        """
    def reorder(self, order: str) -> Bvh:
        """Every joint's rotation channels in one Euler ``order`` (``--order ORDER``).

        Example::

            >>> bvh.reorder("XYZ").channels[1]
            ['Xrotation', 'Yrotation', 'Zrotation']
        """
    def relayout(
        self,
        order: str,
        positions: Literal["root", "all", "keep", "none"] = "root",
        position_channels: _PositionChannels = "replace",
        drop_motion: bool = False,
    ) -> Bvh:
        """Three rotation channels in ``order`` on every joint, position channels as asked.

        ``positions``: on the root only, on every joint, where they were, or
        nowhere (``--layout ORDER --layout-positions P``). A layout that
        drops position channels whose motion is lost (a world position moves
        by more than 1e-9 of the size) raises ValueError naming the joints,
        their channels and the distance, unless ``drop_motion=True``
        (``--drop-motion``).

        Example::

            >>> bvh.relayout("ZXY", positions="all").n_channels
            114
        """
    def convert_up(self, up: str = "y", source_up: str | None = None) -> Bvh:
        """Converted to up axis ``up`` from ``source_up`` (detected when None).

        Axes are ``"x"``, ``"-y"``, ...; each with its default forward axis
        (Blender's axis conversion), as ``bvh edit --up UP --source-up
        SOURCE``. ValueError when the up axis cannot be detected.

        Example::

            >>> zup = bvh.convert_up("z")
            >>> bvh.positions(0)[4].round(3).tolist(), zup.positions(0)[4].round(3).tolist()
            ([0.0, 152.319, 4.358], [0.0, -4.358, 152.319])
        """
    def scale(self, factor: float) -> Bvh:
        """Every length multiplied by ``factor`` (``--scale F``), from 0.000001 to 1000000.

        Example::

            >>> float(bvh.scale(100).offsets[1][1]) / float(bvh.offsets[1][1])
            100.0
        """
    def to_units(
        self,
        units: str,
        source_units: str | None = None,
        position_channels: _PositionChannels = "replace",
    ) -> Bvh:
        """Lengths converted to ``units`` from ``source_units`` (guessed from the size when None).

        Units: ``"m"``, ``"cm"``, ``"mm"``, ``"in"``, ``"cmu"``. As ``bvh edit
        --units U --source-units S``; ValueError when the unit
        cannot be guessed.

        Example::

            >>> float(bvh.to_units("m").offsets[1][1]) / float(bvh.offsets[1][1])
            0.01
        """
    def to_height(self, height: float) -> Bvh:
        """Scaled so that the figure is ``height`` tall, in file units (``--height H``).

        ``height`` from 0.000001 to 1000000.
        """
    def mirror(self) -> Bvh:
        """Left and right swapped: pairs found by name, confirmed by the rest pose (``--mirror``).

        Example::

            >>> m = bvh.mirror()   # the left hand's place is the right hand's, mirrored
            >>> bvh.positions(0)[9].round(3).tolist(), m.positions(0)[14].round(3).tolist()
            ([25.166, 87.826, 7.299], [-25.166, 87.826, 7.299])
        """
    def in_place_root(self, up: str | None = None) -> Bvh:
        """Root motion on the ground removed: the figure moves in place (``--in-place-root``).

        ``up``: the up axis (detected when None, else Y).

        Example::

            >>> bvh.positions()[-1, 0].round(2).tolist()           # the hips walk 2 m along Z
            [0.0, 96.47, 216.33]
            >>> bvh.in_place_root().positions()[-1, 0].round(2).tolist()
            [0.0, 96.47, 0.0]
        """
    def root_to_origin(self, up: str | None = None) -> Bvh:
        """Moved so that the first frame's root stands over the origin (``--root-to-origin``)."""
    def extract_root(self, name: str = "Root", up: str | None = None) -> Bvh:
        """The root motion moved onto a new ground-projected root joint ``name``.

        As ``bvh edit --extract-root NAME``.

        Example::

            >>> bvh.extract_root().joint_names[:2]
            ['Root', 'Hips']
        """
    def rename(self, mapping: dict[str, str]) -> Bvh:
        """Joints renamed by ``{old: new}`` (``--rename MAP``).

        Example::

            >>> bvh.rename({"Hips": "pelvis"}).joint_names[0]
            'pelvis'
        """
    def rename_pattern(self, old: str, new: str) -> Bvh:
        """Every joint name with ``old`` replaced by ``new`` (``--rename OLD=NEW``).

        Example::

            >>> bvh.rename_pattern("Left", "L_").joint_names[6:9]
            ['L_Shoulder', 'L_Arm', 'L_ForeArm']
        """
    def remove_joints(
        self, names: Sequence[str], position_channels: _PositionChannels = "replace"
    ) -> Bvh:
        """The named joints removed, their motion folded into their children (``--remove-joints``).

        Example::

            >>> "Neck" in bvh.remove_joints(["Neck"]).joint_names
            False
        """
    def strip_end_sites(self) -> Bvh:
        """Every End Site removed (``--strip-end-sites``).

        Example::

            >>> bvh.n_joints, bvh.strip_end_sites().n_joints
            (24, 19)
        """
    def add_end_sites(self) -> Bvh:
        """An End Site added to every leaf joint without one (``--add-end-sites``)."""
    def rest_pose(self, source: int | Bvh, position_channels: _PositionChannels = "replace") -> Bvh:
        """A new rest pose keeping the world positions (``--rest-pose FRAME|FILE``).

        ``source``: a frame number, or another ``Bvh`` whose skeleton's rest
        pose is taken.

        Example::

            >>> rest10 = bvh.rest_pose(10)
            >>> bool(abs(rest10.positions() - bvh.positions()).max() < 1e-9)
            True
        """
    # The blend family and retarget (``bvh concat``, ``blend``, ``layer``,
    # ``loop``, ``retarget``): new objects with a ``report``; errors are
    # ``ValueError`` with the core's message; the work runs with the GIL
    # released.
    def concat(
        self,
        *others: Bvh,
        crossfade: _Span | None = None,
        search: _Span | None = None,
        linear: bool = False,
        keep_position: bool = False,
        up: str | None = None,
    ) -> Bvh:
        """This clip then ``others``: ``bvhkit.concat([self, *others], ...)``.

        Example::

            >>> walk = bvhkit.read("samples/walk.bvh")
            >>> walk.concat(walk, walk).n_frames
            180
        """
    def blend(self, other: Bvh, weight: _Weight, joints: str | None = None) -> Bvh:
        """This clip blended towards ``other`` pose by pose (``bvh blend A B``).

        Per joint the quaternion SLERP from this clip's local rotation towards
        ``other``'s at ``weight`` (0: this clip, 1: ``other``), position
        channels mixed linearly; a joint at weight exactly 0 or 1 keeps that
        clip's channels bit for bit. ``weight`` is a number, the command
        line's text (a ramp ``"0..1"``, ``"0..1:smooth"``, or keys
        ``"0:0,0.5:1,1:0"`` with times as fractions of the clip) or a 1-D
        array of one weight per output frame (``ValueError`` when its length
        is not the output's). ``joints="Spine"`` blends only that joint and
        its subtree (a masked blend); the rest stays this clip's. The
        skeletons must match (``ValueError`` naming the first difference);
        ``other`` is converted into this clip's channel layout and resampled
        to its rate when they differ (a ``BvhWarning``), and the shorter clip
        holds its last frame.

        Example::

            >>> import numpy as np
            >>> walk = bvhkit.read("samples/walk.bvh")
            >>> back = walk.reverse()
            >>> half = walk.blend(back, 0.5)
            >>> fade_in = walk.blend(back, np.linspace(0, 1, walk.n_frames))
            >>> upper = walk.blend(back, 1.0, joints="Spine")  # Hips' 6 channels stay walk's
            >>> bool((upper.motion[:, :6] == walk.motion[:, :6]).all())
            True
        """
    def layer(
        self,
        add: Bvh,
        weight: _Weight | None = None,
        joints: str | None = None,
        reference: int = 0,
    ) -> Bvh:
        """``add``'s motion since its frame ``reference`` added on top of this clip.

        As ``bvh layer BASE ADD``: per joint ``q_base * slerp(1, q_ref^-1 *
        q_add, weight)``, positions ``+ weight * (add - ref)``. ``weight``
        (the influence, default 1) as in ``blend``, over this clip's length;
        ``joints`` limits the layer to a subtree. The output has this clip's
        length (a shorter layer holds its last frame).

        Example::

            >>> walk = bvhkit.read("samples/walk.bvh")
            >>> walk.layer(walk.reverse(), weight=0.5, joints="Neck").n_frames
            60
        """
    def loop(
        self,
        crossfade: _Span | None = None,
        linear: bool = False,
        travel: Literal["keep", "remove"] = "keep",
        up: str | None = None,
        search: _Span | None = None,
    ) -> Bvh:
        """This clip made to loop, its end crossfaded into its start (``bvh loop``).

        With N crossfade frames (default 0.25 s; at least one frame, at most
        half the clip) the loop is one cycle of ``n_frames - N`` frames.
        ``travel="keep"`` keeps the displacement and turn per cycle (play it
        again from where it ends); ``"remove"`` removes them at a constant
        rate so that the file loops in place (``--in-place``). ``search`` (a
        span, default none): up to that many frames dropped from the start
        and from the end so that the crossfaded ends are most alike
        (``--search``, said in ``report``). ``up``: the up axis (detected
        when None, else Y).

        Example::

            >>> walk = bvhkit.read("samples/walk.bvh")
            >>> walk.loop(crossfade="0.3s", travel="remove").n_frames  # 60 - 9
            51
        """
    def retarget(
        self,
        target: Bvh,
        map: _Path | dict[str, str] | None = None,
        reference: _Reference | None = None,
        source_reference: _Reference | None = None,
        source_up: str | None = None,
        target_up: str | None = None,
        position_channels: _PositionChannels = "replace",
        joint_translations: bool = False,
        lock_feet: bool = True,
    ) -> Bvh:
        """This motion on ``target``'s skeleton (``bvh retarget SRC --to TARGET``).

        Joints are paired by canonical bone (CMU, Mixamo, Bandai Namco,
        Rokoko, ... names), then by equal names; or by ``map``: a map file's
        path (``source = target`` lines) or a dict ``{source: target}``, the
        complete map. ``reference``: the common pose (``"tpose"`` by default,
        ``"rest"``, or a frame number of ``target``); ``source_reference``
        when the source's differs. The output has ``target``'s skeleton and
        this clip's frames and frame time; ``report`` lists the pairs and the
        joints left unmapped, then notes (``bvh: note:`` lines) what the map
        leaves out: a leg or arm of ``target`` that no source joint drives
        (kept in the reference pose), one of this clip with no counterpart
        in ``target`` (its motion dropped), and either clip on all fours
        (its hands as low as its feet in its first frame) onto one that is
        not (its front legs mapped as arms). Joints below the root keep
        ``target``'s offsets; ``joint_translations=True`` copies the source's
        translations into joints that have position channels
        (``--joint-translations``).
        ``lock_feet`` (the default) pins the target's feet where the
        source's are in contact, by two-bone IK of the legs, and lifts a
        swing foot passing nearer the ground than the source's to its
        clearance; ``lock_feet=False`` (``--no-lock-feet``) leaves every
        mapped limb exactly where the source's points; ``report`` ends with
        what the lock did, as the command prints it.

        Example::

            >>> walk = bvhkit.read("samples/walk.bvh")
            >>> rig = walk.rename({"Hips": "pelvis"})
            >>> on_rig = walk.retarget(rig, map={"Hips": "pelvis", "LeftUpLeg": "LeftUpLeg"})
            >>> on_rig.joint_names == rig.joint_names
            True
        """
    def clean(
        self,
        spikes: bool | float | None = None,
        butterworth: float | tuple[float, int] | None = None,
        savgol: tuple[int, int] | None = None,
        one_euro: tuple[float, float] | tuple[float, float, float] | None = None,
        joints: Sequence[str] | None = None,
        remove_drift: bool = False,
        ground: bool | Literal["smooth"] | None = None,
        lock_feet: bool = False,
        feet: Sequence[str] | None = None,
        up: str | None = None,
        strength: Mapping[str, float] | Sequence[tuple[str, float]] | None = None,
        contacts: _Path | Sequence[tuple[str, int, int]] | None = None,
        flatten_feet: bool = False,
    ) -> Bvh:
        """Cleaned motion, as ``bvh clean`` (``docs/cleaning.md``).

        Steps run in a fixed order: ``spikes`` (``True`` for k = 40, or a
        k), ``butterworth`` (cut-off Hz, or ``(cutoff, order)``; zero phase,
        scipy's ``butter`` + ``filtfilt``), ``savgol`` (``(window,
        polyorder)``; scipy's ``savgol_filter``), ``one_euro``
        (``(min_cutoff, beta[, d_cutoff])``), ``remove_drift``, ``ground``
        (``True``: a constant offset; ``"smooth"``: over time),
        ``lock_feet`` (feet in contact pinned by two-bone IK; ``feet`` and
        ``up`` as ``lint`` takes them; ``contacts``, with ``lock_feet``: the
        spans to lock instead of lint's, a CSV file of ``joint,start,end``
        lines as ``--contacts FILE``, or ``(joint, start, end)`` tuples,
        frames from 0, end included; ``flatten_feet``, with ``lock_feet``:
        each locked foot turned to its planted roll and pitch where its
        toe stays, as ``--flatten-feet``). ``joints`` limits smoothing to the
        joints named; ``strength`` gives joints a factor from 0 (unchanged)
        to 1 (the full filter, the default) that blends the filtered track
        with the original, as ``--strength``: selectors ``"NAME"`` (that
        joint), ``"NAME/*"`` (every joint below it) and ``"*"`` (all), later
        ones overriding earlier ones. ``report`` holds the summary.

        Example::

            >>> smooth = bvh.clean(butterworth=6)
            >>> len(smooth) == len(bvh)
            True
        """
    def lint(
        self,
        units: str | None = None,
        up: str | None = None,
        feet: Sequence[str] | None = None,
        ground: Literal["contacts", "lowest"] | float | None = None,
        loop: bool = False,
        position_channels: _PositionChannels = "replace",
        **thresholds: float,
    ) -> dict[str, Any]:
        """The motion-quality metrics and findings, as ``bvh lint --json``.

        A dict with ``units``, ``metres_per_unit``, ``up_axis``, ``fps``,
        ``frames``, ``size`` (m), ``feet``, ``ground`` (m along the up
        axis), ``metrics`` (``skate_ratio``, ``skate_ratio_kimodo``,
        ``foot_slide``, ``jitter``, ``spikes``, ``pops``, ``euler_jumps``,
        ... ; ``None`` where not measured), ``findings`` (each with
        ``kind``, ``frames`` as ``[first, last]``, ``joints``, ``value``,
        ``message``) and ``notes``. ``units``/``up`` override the guesses,
        ``feet`` names the foot joints, ``ground`` is ``"contacts"``
        (default), ``"lowest"`` or a height in metres, ``loop=True``
        measures the seam. Thresholds by ``bvh lint``'s option names with
        underscores (``spike_k=30``, ``contact_height=0.04``);
        ``docs/quality.md`` gives every formula.

        Example::

            >>> walk = bvhkit.read("samples/walk.bvh")
            >>> q = walk.lint()
            >>> sorted(q["metrics"])[:3]
            ['bone_stretch', 'euler_jumps', 'far_joints']
        """
    def to_bytes(self) -> bytes:
        """The canonical BVH text: reads back to the same values, bit for bit."""
    def portable(self, position_channels: _PositionChannels = "replace") -> Bvh:
        """Position channels every reader reads the same way (``--portable``).

        Constant position channels below a root are folded into the OFFSET,
        the OFFSET is zeroed under the others; world positions unchanged in
        either reading of position channels (docs/format.md).
        """
    def write(self, path: _Path, break_links: bool = False, portable: bool = False) -> None:
        """Writes the canonical text to ``path``, as the ``bvh`` command writes.

        ``portable=True`` writes ``self.portable()``'s text (``--portable``).

        The file is written under no name in its folder (Linux; elsewhere
        a temporary name) and put in place whole: ``path`` is always the old
        file or the complete new one, and nothing is left behind if the
        process is killed. A symbolic link is
        followed (its target is replaced, the link stays); a device or FIFO
        is written into, never replaced; an existing file keeps its mode
        (and owner, where allowed), a new one gets the umask's mode.

        A file with other hard links is refused (``OSError``): replacing it
        would leave its other names with the old contents. Write to another
        path, or pass ``break_links=True`` to replace this name only.
        Failures raise ``OSError`` subclasses with ``filename``
        (``FileNotFoundError`` for a missing folder, ...).
        """
    def __len__(self) -> int: ...

def read(path: _Path, strict: bool = False, warn: bool = False) -> Bvh:
    """Reads a BVH file.

    Lenient by default: problems real files have (wrong ``Frames:``, a cut
    last frame, ...) are repaired and listed in ``Bvh.warnings``;
    ``strict=True`` raises ``ParseError`` on the first. ``warn=True`` also
    emits every warning through ``warnings.warn`` (category ``BvhWarning``).
    Missing or unreadable files raise ``OSError`` subclasses
    (``FileNotFoundError``, ``IsADirectoryError``, ``PermissionError``).

    Example::

        >>> bvh = bvhkit.read("samples/walk.bvh")
        >>> bvh.fps
        30.000030000029998
    """

def edit_file(
    src: _Path,
    dst: _Path,
    *,
    strict: bool = False,
    source_up: str | None = None,
    source_units: str | None = None,
    layout_positions: Literal["root", "all", "keep", "none"] = "root",
    position_channels: _PositionChannels = "replace",
    drop_motion: bool = False,
    portable: bool = False,
    break_links: bool = False,
    **steps: Any,
) -> list[str]:
    """Edits the BVH file ``src`` into ``dst`` without loading the clip (``bvh edit``).

    The keyword ``steps`` apply in the order given and are named as the
    ``Bvh`` edit methods, with the same values: ``frames=(start, stop)``
    (``stop`` may be None), ``every=n``, ``reverse=True``, ``resample=fps``,
    ``reorder="ZXY"``, ``relayout="ZXY"`` (with ``layout_positions``,
    ``drop_motion``), ``convert_up="z"``, ``scale=f``, ``to_units="m"``,
    ``to_height=h``, ``mirror=True``, ``in_place_root=True``,
    ``root_to_origin=True``, ``extract_root="Root"``, ``rename={old: new}``,
    ``rename_pattern=(old, new)``, ``remove_joints=[names]``,
    ``strip_end_sites=True``, ``add_end_sites=True``, ``rest_pose=frame``
    or a ``Bvh``; each at most once (a keyword cannot repeat). ``source_up``
    is the input's up axis for ``convert_up`` and the root-motion steps,
    ``source_units`` its unit for ``to_units`` (else detected and guessed,
    as the command does).

    The run is the command's, in the core: frames are parsed, edited and
    written a batch at a time (the clip's values are never all in memory;
    the file's text is read into memory), looking at frames first where a
    step must (the up axis, the unit, the root-motion carrier, a rest-pose
    frame, and with ``portable=True`` which position channels stay
    constant); ``reverse``, ``resample``, ``to_height`` and a stream that
    cannot confirm what it looked at run on the whole clip.
    The bytes are those of ``bvh edit`` with the same flags in the same
    order, and of the same ``Bvh`` methods chained. ``dst`` is written as
    ``Bvh.write`` writes (never half-written; ``break_links``), and never
    over ``src`` (``ValueError``).

    Returns the notes the command prints (unit guessed, up axis detected,
    reading warnings, ...), each starting with ``src``. Errors: ``OSError``
    subclasses for the files, ``ParseError`` for a text that does not
    parse, ``ValueError`` for an edit the clip refuses, ``TypeError`` for
    an unknown step.

    Example::

        >>> bvhkit.edit_file("samples/walk.bvh", "/tmp/walk-half.bvh", every=2, to_units="m")
        ['samples/walk.bvh: units guessed: centimetres (size 162.4169 ≈ 1.62 m)']
        >>> bvhkit.read("/tmp/walk-half.bvh").n_frames
        30
    """

def diff(
    a: Bvh,
    b: Bvh,
    map: Literal["auto"] | _Path | dict[str, str] | None = None,
    units: str | None = None,
    position_channels: _PositionChannels = "replace",
    worst: int = 10,
) -> dict[str, Any]:
    """How far clip ``b`` is from clip ``a`` (the reference), as ``bvh diff``.

    A dict with ``mpjpe``, ``mpjpe_root`` (each clip's hips subtracted),
    ``pa_mpjpe`` (after a per-frame Procrustes fit with scale), in metres;
    ``rotation_deg`` (mean geodesic angle of the paired joints' channel
    rotations); ``joints`` (per pair); ``per_frame`` (NumPy array);
    ``worst_frames``, ``worst_joints`` and ``notes``. Joints pair by name,
    else by the retarget name families, or by ``map``.

    Example::

        >>> walk = bvhkit.read("samples/walk.bvh")
        >>> bvhkit.diff(walk, walk)["mpjpe"]
        0.0
    """

def concat(
    clips: Sequence[Bvh],
    crossfade: _Span | None = None,
    search: _Span | None = None,
    linear: bool = False,
    keep_position: bool = False,
    up: str | None = None,
) -> Bvh:
    """Clips of one skeleton one after another (``bvh concat``).

    Each clip continues from where the one before ends: moved on the ground
    and turned about the up axis (``up``, detected from the first clip when
    None, else Y) so that its first frame stands where the previous clip's
    last frame stands, facing the same way; ``keep_position=True`` leaves
    every clip where it is. ``crossfade`` overlaps each seam: an int
    (frames), a float (seconds) or the command line's text (``"12"``,
    ``"0.4s"``); smoothstep weights (``linear=True``: a straight ramp).
    With a crossfade the seam may move by up to ``search`` (a span as
    ``crossfade``; 0.5 s by default, ``0`` keeps it where the clips meet):
    frames are dropped from the end of a clip and the start of the next so
    that the crossfaded frames are in the same phase of the gait (reported).
    Without it the output has exactly every clip's frames. The skeletons must
    match; clips at another rate are resampled to the first's. The output has
    the first clip's skeleton and frame time.

    Example::

        >>> walk = bvhkit.read("samples/walk.bvh")
        >>> path = bvhkit.concat([walk, walk.reverse()], crossfade="0.2s")
        >>> path.n_frames
        104
        >>> for part in path.report.split("; "):
        ...     print(part)
        clip 1: moved 0.0000 units and turned 0.00 degrees about y to start at frame 49
        crossfade of 6 frames
        seam moved to match the gait: 5 frames dropped before it, 5 of this clip
    """

def parse(data: bytes | bytearray | str, strict: bool = False, warn: bool = False) -> Bvh:
    """Parses a BVH text held in memory; see ``read``.

    Example::

        >>> tiny = bvhkit.parse(b"HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 1 Yrotation }"
        ...                    b" MOTION Frames: 1 Frame Time: 0.5 90")
        >>> tiny.motion
        array([[90.]])
    """

@overload
def read_many(
    paths: Sequence[_Path],
    threads: int | None = None,
    positions: Literal[False] = False,
    strict: bool = False,
    errors: Literal["raise"] = "raise",
    position_channels: _PositionChannels = "replace",
) -> list[Bvh]:
    """Reads many files on all cores (a pool of ``threads``, 1 to 1024, when given), GIL released.

    Results are in input order: a ``Bvh`` per file, or ``(Bvh, positions)``
    with ``positions=True``. ``errors="raise"`` (default) raises the error of
    the first failing file in input order, after all are read;
    ``errors="return"`` puts the exception object (``ParseError``,
    ``FileNotFoundError``, ...) in that file's place.

    Example::

        >>> from pathlib import Path
        >>> files = sorted(Path("mocap").glob("*.bvh"))
        >>> for bvh, pos in bvhkit.read_many(files, positions=True):
        ...     print(bvh.path, pos.shape)
    """

@overload
def read_many(
    paths: Sequence[_Path],
    threads: int | None = None,
    positions: Literal[True] = ...,
    strict: bool = False,
    errors: Literal["raise"] = "raise",
    position_channels: _PositionChannels = "replace",
) -> list[tuple[Bvh, npt.NDArray[np.float64]]]: ...
@overload
def read_many(
    paths: Sequence[_Path],
    threads: int | None = None,
    positions: bool = False,
    strict: bool = False,
    errors: Literal["raise", "return"] = "raise",
    position_channels: _PositionChannels = "replace",
) -> list[Bvh | tuple[Bvh, npt.NDArray[np.float64]] | Exception]: ...
