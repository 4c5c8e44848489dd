# Blender's own route: its BVH importer, then its FBX exporter (defaults).
# Debian's Blender 3.4.1 runs Python 3.11, where open(..., 'rU') (used by
# its BVH importer) is an error; the importer's module gets an open that
# reads 'rU' as 'r', nothing else changed.
import builtins
import sys

import bpy
import io_anim_bvh.import_bvh as import_bvh

def _open(file, mode="r", *args, **kwargs):
    return builtins.open(file, mode.replace("U", ""), *args, **kwargs)

import_bvh.open = _open
src, dst = sys.argv[sys.argv.index("--") + 1:][:2]
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.import_anim.bvh(filepath=src, update_scene_fps=True, update_scene_duration=True)
bpy.ops.export_scene.fbx(filepath=dst)
