// Loads every DIR/NAME.bvh with three.js's BVHLoader and compares the world
// position of every bone (End Sites included, in file order) at every frame
// with DIR/NAME.expect.bin (f64 little-endian, [frames][joints][3]), as the
// loader's animation clip poses the skeleton: each bone's position and
// quaternion track at key `frame`, then the world matrices. Prints one JSON
// line per file: its largest distance from the expected positions and the
// number of bones and frames three.js saw. Driven by tests/cli/portable.rs.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as THREE from 'three';
import { BVHLoader } from 'three/addons/loaders/BVHLoader.js';

const dir = process.argv[2];
for (const f of readdirSync(dir).filter((f) => f.endsWith('.bvh')).sort()) {
  const result = { file: f };
  try {
    const text = readFileSync(join(dir, f), 'utf8');
    const { skeleton, clip } = new BVHLoader().parse(text);
    const bones = skeleton.bones;
    const raw = readFileSync(join(dir, f.replace(/\.bvh$/, '.expect.bin')));
    const expected = new Float64Array(raw.buffer, raw.byteOffset, raw.byteLength / 8);
    const frames = expected.length / (3 * bones.length);
    result.bones = bones.length;
    result.frames = frames;
    // Two tracks (position, quaternion) per bone that is not an End Site, in bone order.
    const tracks = clip.tracks;
    const moving = [];
    for (let i = 0, t = 0; i < bones.length; i++) {
      const isEnd = bones[i].name === 'ENDSITE' && bones[i].children.length === 0;
      if (!isEnd) {
        moving.push([bones[i], tracks[t], tracks[t + 1]]);
        t += 2;
      }
    }
    if (moving.length * 2 !== tracks.length) throw new Error(`${tracks.length} tracks for ${moving.length} bones`);
    const root = bones[0];
    const p = new THREE.Vector3();
    let worst = 0;
    for (let k = 0; k < frames; k++) {
      for (const [bone, pos, rot] of moving) {
        bone.position.fromArray(pos.values, 3 * k);
        bone.quaternion.fromArray(rot.values, 4 * k);
      }
      root.updateMatrixWorld(true);
      for (let j = 0; j < bones.length; j++) {
        p.setFromMatrixPosition(bones[j].matrixWorld);
        const e = 3 * (k * bones.length + j);
        const d = Math.hypot(p.x - expected[e], p.y - expected[e + 1], p.z - expected[e + 2]);
        if (!(d <= worst)) worst = d; // NaN counts as the worst
      }
    }
    result.max_error = Number.isFinite(worst) ? worst : 1e300;
  } catch (e) {
    result.load = String(e && e.message ? e.message : e);
  }
  console.log(JSON.stringify(result));
}
