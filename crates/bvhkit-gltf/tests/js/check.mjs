// Validates every DIR/*.glb and DIR/*.gltf with the Khronos glTF-Validator and, when
// DIR/NAME.expect.json and DIR/NAME.expect.bin are present, loads it with
// three.js's GLTFLoader, samples the first animation at every frame time and
// compares every joint's world position with the expected positions
// (f64 little-endian, [frames][joints][3]). Prints one JSON line per file;
// exits 1 when any file fails. Driven by tests/node.rs.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import validator from 'gltf-validator';

// GLTFLoader looks at navigator.userAgent (not a global before node 21).
if (typeof globalThis.navigator === 'undefined') globalThis.navigator = { userAgent: 'node' };
const THREE = await import('three');
const { GLTFLoader } = await import('three/addons/loaders/GLTFLoader.js');

const dir = process.argv[2];
let failed = false;
for (const f of readdirSync(dir).filter((f) => f.endsWith('.glb') || f.endsWith('.gltf')).sort()) {
  const path = join(dir, f);
  const bytes = new Uint8Array(readFileSync(path));
  const result = { file: f };
  // .gltf files may refer to a side .bin in the same folder.
  const external = (uri) => Promise.resolve(new Uint8Array(readFileSync(join(dir, decodeURIComponent(uri)))));
  const report = await validator.validateBytes(bytes, { maxIssues: 50, uri: f, externalResourceFunction: external });
  result.errors = report.issues.numErrors;
  result.warnings = report.issues.numWarnings;
  result.issues = report.issues.messages
    .filter((m) => m.severity <= 1)
    .slice(0, 10)
    .map((m) => `${m.code} ${m.pointer ?? ''} ${m.message}`);
  if (result.errors || result.warnings) failed = true;

  const base = path.slice(0, path.lastIndexOf('.'));
  if (f.endsWith('.glb') && existsSync(base + '.expect.json')) {
    const meta = JSON.parse(readFileSync(base + '.expect.json', 'utf8'));
    const raw = readFileSync(base + '.expect.bin');
    const expected = new Float64Array(raw.buffer, raw.byteOffset, raw.byteLength / 8);
    const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    const gltf = await new Promise((ok, err) => new GLTFLoader().parse(ab, '', ok, err));
    const byNode = new Map();
    gltf.scene.traverse((o) => {
      const a = gltf.parser.associations.get(o);
      if (a && a.nodes !== undefined && !byNode.has(a.nodes)) byNode.set(a.nodes, o);
    });
    const objects = meta.nodes.map((n) => byNode.get(n));
    if (objects.some((o) => o === undefined)) {
      result.load = 'a joint node is missing from the loaded scene';
      failed = true;
    } else {
      const mixer = new THREE.AnimationMixer(gltf.scene);
      if (gltf.animations.length) {
        const action = mixer.clipAction(gltf.animations[0]);
        action.setLoop(THREE.LoopOnce, 1);
        action.clampWhenFinished = true; // the last frame, not a wrap to the first
        action.play();
      }
      const v = new THREE.Vector3();
      let maxErr = 0;
      let worst = null;
      const nj = meta.nodes.length;
      // The skinned boxes: 24 vertices each, along the bone from a joint
      // (the one it is weighted to) to one of its children, so the centroid
      // of a box, skinned by three.js, is the midpoint of the two joints'
      // expected positions. Boxes are rigid: toward a child whose position
      // channels move it off its OFFSET the box keeps its rest length, so
      // only bones to children without position channels are compared.
      const meshes = [];
      gltf.scene.traverse((o) => { if (o.isSkinnedMesh) meshes.push(o); });
      let maxMeshErr = 0;
      // Upright: in how many frames the head (three.js's world Y) is above
      // the mean of the feet.
      let headAbove = 0;
      const hasFeet = meta.head !== null && meta.feet.length > 0;
      let boxes = 0;
      const c = new THREE.Vector3();
      const meshStep = Math.max(1, Math.floor(meta.frames / 50));
      for (let i = 0; i < meta.frames; i++) {
        if (gltf.animations.length) mixer.setTime(Math.fround(meta.times[i]));
        gltf.scene.updateMatrixWorld(true);
        for (let j = 0; j < nj; j++) {
          v.setFromMatrixPosition(objects[j].matrixWorld);
          const k = (i * nj + j) * 3;
          const e = Math.max(
            Math.abs(v.x - expected[k]),
            Math.abs(v.y - expected[k + 1]),
            Math.abs(v.z - expected[k + 2]),
          );
          if (!(e <= maxErr)) {
            maxErr = e;
            worst = { frame: i, joint: j };
          }
        }
        if (hasFeet) {
          const hy = v.setFromMatrixPosition(objects[meta.head].matrixWorld).y;
          let fy = 0;
          for (const f of meta.feet) fy += v.setFromMatrixPosition(objects[f].matrixWorld).y;
          if (hy > fy / meta.feet.length) headAbove++;
        }
        if (i % meshStep !== 0 && i !== meta.frames - 1) continue;
        for (const mesh of meshes) {
          const count = mesh.geometry.attributes.position.count;
          const jointOf = mesh.skeleton.bones.map((b) => objects.indexOf(b));
          for (let b0 = 0; b0 < count; b0 += 24) {
            c.set(0, 0, 0);
            for (let k = b0; k < b0 + 24; k++) {
              mesh.getVertexPosition(k, v);
              c.add(v.applyMatrix4(mesh.matrixWorld));
            }
            c.multiplyScalar(1 / 24);
            const J = jointOf[mesh.geometry.attributes.skinIndex.getX(b0)];
            let best = Infinity;
            for (let ch = 0; ch < nj; ch++) {
              if (meta.parents[ch] !== J || meta.translated[ch]) continue;
              const a = (i * nj + J) * 3;
              const d = (i * nj + ch) * 3;
              best = Math.min(best, Math.max(
                Math.abs(c.x - (expected[a] + expected[d]) / 2),
                Math.abs(c.y - (expected[a + 1] + expected[d + 1]) / 2),
                Math.abs(c.z - (expected[a + 2] + expected[d + 2]) / 2),
              ));
            }
            if (best === Infinity) continue;
            if (!(best <= maxMeshErr)) maxMeshErr = best;
            if (i === 0) boxes++;
          }
        }
      }
      if (hasFeet) result.head_above_feet = meta.frames ? headAbove / meta.frames : null;
      result.boxes = boxes;
      result.expect_boxes = meta.expect_boxes;
      result.max_mesh_err = maxMeshErr;
      if (!(maxMeshErr <= meta.tol)) failed = true;
      result.max_err = maxErr;
      result.tol = meta.tol;
      result.worst = worst;
      result.frames = meta.frames;
      if (!(maxErr <= meta.tol)) failed = true;
    }
  }
  console.log(JSON.stringify(result));
}
process.exit(failed ? 1 : 0);
