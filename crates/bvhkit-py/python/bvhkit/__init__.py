"""Read, write and compute forward kinematics of BVH motion-capture files.

A thin wrapper over the Rust library bvhkit: every rule lives there.

Example::

    import bvhkit

    bvh = bvhkit.read("samples/walk.bvh")
    print(bvh)                      # <bvhkit.Bvh "samples/walk.bvh": ...>
    pos = bvh.positions()           # frames x joints x 3, float64
    quat = bvh.rotations("quat")    # frames x joints x 4, [x, y, z, w]
"""

# `X as X`: explicit re-exports (PEP 484); the stub __init__.pyi documents them.
from ._native import (
    Bvh as Bvh,
    BvhWarning as BvhWarning,
    ParseError as ParseError,
    ReadWarning as ReadWarning,
    __version__ as __version__,
    concat as concat,
    diff as diff,
    edit_file as edit_file,
    parse as parse,
    read as read,
    read_many as read_many,
)
