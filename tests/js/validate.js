// Validate .glb files with the Khronos glTF validator; prints one JSON line per file.
// Usage: node validate.js FILE.glb...   Exit code 1 if any file has errors or warnings.
const fs = require('fs');
const validator = require('gltf-validator');
(async () => {
  let bad = 0;
  for (const f of process.argv.slice(2)) {
    const r = await validator.validateBytes(new Uint8Array(fs.readFileSync(f)), { maxIssues: 100, writeTimestamp: false });
    const i = r.issues;
    const msgs = i.messages.filter(m => m.severity <= 1).slice(0, 10).map(m => `${m.code} ${m.pointer || ''}: ${m.message}`);
    console.log(JSON.stringify({ file: f, errors: i.numErrors, warnings: i.numWarnings, infos: i.numInfos, hints: i.numHints, messages: msgs }));
    if (i.numErrors > 0 || i.numWarnings > 0) bad++;
  }
  process.exit(bad ? 1 : 0);
})().catch(e => { console.error(e); process.exit(2); });
