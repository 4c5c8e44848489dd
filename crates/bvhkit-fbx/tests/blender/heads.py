"""Blender's FBX importer on bvhkit exports: the world position of every
bone's head at chosen key times, for crates/bvhkit-fbx/tests/blender.rs.

Run as `blender -b --factory-startup --python heads.py -- JOB.json OUT.json`.
JOB.json is a list of {"name", "fbx", "times": [seconds, ...]}; OUT.json
gets, for each, {"name", "fps", "bones": {bone: [[x, y, z] per time]},
"error"}: positions in Blender's world (Z up, metres), after the axis
conversion and unit scale Blender's importer applies from the file's
GlobalSettings. A time t is evaluated at Blender frame `1 + t * fps` with
its subframe: the importer puts FBX time 0 at frame 1 (its `anim_offset`)
and times its keys with the scene's rate rounded to an integer
(`scene.render.fps`, which it sets from the file's `CustomFrameRate`), so
that is where the key of a source frame is.
"""

import json
import math
import sys
import traceback

import bpy

job_path, out_path = sys.argv[sys.argv.index("--") + 1 :][:2]
with open(job_path, encoding="utf-8") as f:
    job = json.load(f)

results = []
for case in job:
    result = {"name": case["name"], "bones": {}, "error": None}
    try:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        status = bpy.ops.import_scene.fbx(filepath=case["fbx"])
        if "FINISHED" not in status:
            raise RuntimeError(f"import_scene.fbx returned {status}")
        scene = bpy.context.scene
        fps = scene.render.fps
        result["fps"] = fps
        armatures = [o for o in scene.objects if o.type == "ARMATURE"]
        for t in case["times"]:
            frame = 1.0 + t * fps
            whole = math.floor(frame)
            scene.frame_set(int(whole), subframe=frame - whole)
            bpy.context.view_layer.update()
            for arm in armatures:
                for pb in arm.pose.bones:
                    head = arm.matrix_world @ pb.head
                    result["bones"].setdefault(pb.name, []).append(list(head))
    except Exception:  # noqa: BLE001 (reported to the Rust test)
        result["error"] = traceback.format_exc()
    results.append(result)

with open(out_path, "w", encoding="utf-8") as f:
    json.dump(results, f)
