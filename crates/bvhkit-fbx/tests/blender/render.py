"""A picture of a bvhkit FBX export as Blender imports it (docs/fbx.md).

Run as `blender -b --factory-startup --python render.py -- IN.fbx SECONDS OUT.png`:
imports IN.fbx with Blender's FBX importer, goes to the source time SECONDS
(Blender frame 1 + SECONDS * the scene's rounded rate, where the importer
puts that key), and renders the skinned boxes with Workbench (no GPU
needed) from the front-right, on a floor, to OUT.png (480 x 360).
"""

import math
import sys

import bpy
from mathutils import Vector

fbx, seconds, out = sys.argv[sys.argv.index("--") + 1 :][:3]
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.import_scene.fbx(filepath=fbx)
scene = bpy.context.scene
frame = 1.0 + float(seconds) * scene.render.fps
scene.frame_set(int(math.floor(frame)), subframe=frame - math.floor(frame))

# The posed boxes' extent.
deps = bpy.context.evaluated_depsgraph_get()
points = []
for o in scene.objects:
    if o.type == "MESH":
        ev = o.evaluated_get(deps)
        mesh = ev.to_mesh()
        points += [ev.matrix_world @ v.co for v in mesh.vertices]
        ev.to_mesh_clear()
lo = Vector([min(p[i] for p in points) for i in range(3)])
hi = Vector([max(p[i] for p in points) for i in range(3)])
center = (lo + hi) / 2
height = hi.z - lo.z

# A floor under the feet.
bpy.ops.mesh.primitive_plane_add(size=height * 4, location=(center.x, center.y, lo.z))
floor = bpy.context.active_object
floor.color = (0.55, 0.57, 0.6, 1.0)

# Camera from the front-right (Blender's front is -Y), a little above.
cam_data = bpy.data.cameras.new("camera")
cam_data.lens = 50
cam = bpy.data.objects.new("camera", cam_data)
scene.collection.objects.link(cam)
direction = Vector((0.55, -1.0, 0.25)).normalized()
cam.location = center + direction * height * 2.3
cam.rotation_euler = (center - cam.location).to_track_quat("-Z", "Y").to_euler()
scene.camera = cam

scene.render.engine = "BLENDER_WORKBENCH"
scene.display.shading.light = "STUDIO"
scene.display.shading.color_type = "OBJECT"
scene.display.shading.show_shadows = True
scene.display.shading.show_cavity = True
for o in scene.objects:
    if o.type == "MESH" and o != floor:
        o.color = (0.85, 0.45, 0.2, 1.0)
scene.world = bpy.data.worlds.new("world")
scene.world.color = (0.8, 0.85, 0.9)
scene.render.resolution_x = 480
scene.render.resolution_y = 360
scene.render.resolution_percentage = 100
scene.render.image_settings.file_format = "PNG"
scene.render.image_settings.color_mode = "RGB"
scene.render.image_settings.compression = 100
scene.render.filepath = out
bpy.ops.render.render(write_still=True)
