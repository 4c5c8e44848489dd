"""How far a glb's joints are from `bvh positions` (docs/fbx.md, Speed: the
side-by-side of bvhkit's FBX export and Blender's route, both read by
FBX2glTF).

    python3 scripts/compare-glb-fk.py POSITIONS.csv FRAME_TIME SCALE EVERY A.glb [B.glb ...]

POSITIONS.csv is `bvh positions IN.bvh -o POSITIONS.csv`; each glb's node
world positions (a plain TRS forward kinematics over its nodes and first
animation, keys taken exactly at their times, so the frames compared must be
on its bake keys: every EVERY-th source frame) are compared, node by joint
name (an End Site `X_End` may be the node `X_end`, as Blender names it), with
the source's positions times SCALE (0.01 for a centimetre file read as
metres; 1 where the route took the file's units as metres). Prints the
largest distance relative to the figure's height at the first frame.
Standard library only."""
import bisect
import json
import math
import struct
import sys

def read_glb(path):
    b = open(path, 'rb').read()
    jlen = struct.unpack_from('<I', b, 12)[0]
    js = json.loads(b[20:20 + jlen])
    off = 20 + jlen
    blen = struct.unpack_from('<I', b, off)[0]
    return js, b[off + 8: off + 8 + blen]

def accessor(js, binb, i):
    a = js['accessors'][i]; bv = js['bufferViews'][a['bufferView']]
    n = {'SCALAR': 1, 'VEC3': 3, 'VEC4': 4, 'MAT4': 16}[a['type']]
    assert a['componentType'] == 5126
    start = bv.get('byteOffset', 0) + a.get('byteOffset', 0)
    stride = bv.get('byteStride', 4 * n)
    out = []
    for k in range(a['count']):
        out.append(struct.unpack_from('<%df' % n, binb, start + k * stride))
    return out

def qmat(q):
    x, y, z, w = q
    return [[1-2*(y*y+z*z), 2*(x*y-z*w), 2*(x*z+y*w)],
            [2*(x*y+z*w), 1-2*(x*x+z*z), 2*(y*z-x*w)],
            [2*(x*z-y*w), 2*(y*z+x*w), 1-2*(x*x+y*y)]]

def trs(t, r, s):
    m = qmat(r)
    M = [[m[i][j] * s[j] for j in range(3)] + [t[i]] for i in range(3)]
    return M + [[0, 0, 0, 1]]

def mul(A, B):
    return [[sum(A[i][k] * B[k][j] for k in range(4)) for j in range(4)] for i in range(4)]

def world_positions(path, times):
    js, binb = read_glb(path)
    nodes = js['nodes']
    parent = {}
    for i, n in enumerate(nodes):
        for c in n.get('children', []):
            parent[c] = i
    tracks = {}
    if js.get('animations'):
        an = js['animations'][0]
        for ch in an['channels']:
            smp = an['samplers'][ch['sampler']]
            tracks[(ch['target']['node'], ch['target']['path'])] = (
                [x[0] for x in accessor(js, binb, smp['input'])], accessor(js, binb, smp['output']))
    out = []
    for t in times:
        local = []
        for i, n in enumerate(nodes):
            tr = list(n.get('translation', [0, 0, 0])); ro = list(n.get('rotation', [0, 0, 0, 1])); sc = list(n.get('scale', [1, 1, 1]))
            for path, cur in (('translation', tr), ('rotation', ro), ('scale', sc)):
                if (i, path) in tracks:
                    ts, vs = tracks[(i, path)]
                    # The key nearest t: a long bake's 32-bit key times
                    # stray from k/60 by more than a microsecond.
                    k = min(bisect.bisect_left(ts, t), len(ts) - 1)
                    if k > 0 and abs(ts[k - 1] - t) < abs(ts[k] - t):
                        k -= 1
                    assert abs(ts[k] - t) < 1e-4, (path, ts[k], t)
                    cur[:] = vs[k]
            local.append(trs(tr, ro, sc))
        world = [None] * len(nodes)
        def w(i):
            if world[i] is None:
                world[i] = local[i] if i not in parent else mul(w(parent[i]), local[i])
            return world[i]
        out.append({nodes[i].get('name', ''): (w(i)[0][3], w(i)[1][3], w(i)[2][3]) for i in range(len(nodes))})
    return out

if __name__ == '__main__':
    csv_path, frame_time, scale, every = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
    ref = {}
    for line in open(csv_path):
        p = line.rstrip('\n').split(',')
        if p[0] == 'frame':
            continue
        f = int(p[0]); ref.setdefault(f, {})[','.join(p[1:-3])] = tuple(float(x) for x in p[-3:])
    frames = [f for f in sorted(ref) if f % every == 0]
    times = [f * frame_time for f in frames]
    size = None
    for glb in sys.argv[5:]:
        pos = world_positions(glb, times)
        worst, where, n, missing = 0.0, None, 0, set()
        ys = [p[1] for p in ref[frames[0]].values()]
        size = max(ys) - min(ys)
        for f, got in zip(frames, pos):
            for name, p in ref[f].items():
                name = name if name in got else name[:-4] + "_end" if name.endswith("_End") else name
                if name not in got:
                    missing.add(name); continue
                g = got[name]
                d = math.dist([c * scale for c in p], g) / (size * scale)
                if d > worst:
                    worst, where = d, (f, name)
                n += 1
        print(glb, 'frames', len(frames), 'joints compared', n // len(frames), 'missing', len(missing), 'worst/size %.3g' % worst, 'at frame %s joint %s' % where if where else '')
