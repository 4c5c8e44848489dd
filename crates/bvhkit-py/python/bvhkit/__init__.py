"""Read, write and compute forward kinematics of BVH motion-capture files.

A thin wrapper over the Rust library bvhkit: every rule lives there.

Example::

    import bvhkit

    bvh = bvhkit.read("samples/walk.bvh")
    print(bvh)                      # <bvhkit.Bvh "samples/walk.bvh": ...>
    pos = bvh.positions()           # frames x joints x 3, float64
    quat = bvh.rotations("quat")    # frames x joints x 4, [x, y, z, w]
"""

from ._native import (
    Bvh,
    BvhWarning,
    ParseError,
    ReadWarning,
    __version__,
    concat,
    parse,
    read,
    read_many,
)

__all__ = [
    "Bvh",
    "BvhWarning",
    "ParseError",
    "ReadWarning",
    "__version__",
    "concat",
    "parse",
    "read",
    "read_many",
]
