// Validates every .glb in the folder given as the argument with the Khronos
// glTF-Validator and prints one JSON line per file: its name, error and
// warning counts, the first messages and the codes of all errors and warnings.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import validator from 'gltf-validator';

const dir = process.argv[2];
for (const f of readdirSync(dir).filter((n) => n.endsWith('.glb')).sort()) {
  const bytes = new Uint8Array(readFileSync(join(dir, f)));
  const report = await validator.validateBytes(bytes, { maxIssues: 20, uri: f });
  const messages = report.issues.messages
    .filter((m) => m.severity <= 1)
    .slice(0, 5)
    .map((m) => `${m.code} ${m.pointer ?? ''}: ${m.message}`);
  console.log(JSON.stringify({
    file: f,
    errors: report.issues.numErrors,
    warnings: report.issues.numWarnings,
    messages,
    codes: [...new Set(report.issues.messages.filter((m) => m.severity <= 1).map((m) => m.code))],
  }));
}
