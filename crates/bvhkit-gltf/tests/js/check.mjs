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
      }
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
