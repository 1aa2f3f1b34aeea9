// Load a jostle .glb in headless Chromium with three.js's GLTFLoader, play its "perturbed"
// and "original" animations with an AnimationMixer and print one JSON line:
//   {"nodes", "scene_nodes", "animations", "duration_s", "meshes", "played", "bone_moved",
//    "skinned_meshes", "skeletons", "bones", "skeleton_helper_bones", "skinned_bones_moved", ...}
// Usage: node threejs_check.mjs FILE.glb [--screenshot OUT.png]
// Exit code: 0 loaded and played; 1 load/play error; 2 usage or browser trouble.
// Everything is served from a throw-away 127.0.0.1 server (page.html, node_modules/three, the
// .glb); the page may reach nothing else. Chromium: $JOSTLE_CHROMIUM or /usr/bin/chromium.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const threeDir = path.join(here, 'node_modules', 'three');
const TIMEOUT_MS = 90_000;

function usage(msg) {
  console.error(`${msg}\nusage: node threejs_check.mjs FILE.glb [--screenshot OUT.png]`);
  process.exit(2);
}

const args = process.argv.slice(2);
let glbPath, shotPath;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--screenshot') shotPath = args[++i] ?? usage('--screenshot needs a path');
  else if (!glbPath) glbPath = args[i];
  else usage(`unexpected argument ${args[i]}`);
}
if (!glbPath) usage('no .glb given');
let glb;
try {
  glb = fs.readFileSync(glbPath);
} catch (e) {
  console.error(JSON.stringify({ error: `reading ${glbPath}: ${e.message}` }));
  process.exit(1);
}

const types = { '.html': 'text/html', '.js': 'text/javascript', '.glb': 'model/gltf-binary' };
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  let file = null;
  if (url.pathname === '/page.html') file = path.join(here, 'page.html');
  else if (url.pathname.startsWith('/three/')) {
    const f = path.normalize(path.join(threeDir, decodeURIComponent(url.pathname.slice(7))));
    if (f.startsWith(threeDir + path.sep)) file = f;
  }
  if (url.pathname === '/model.glb') {
    res.writeHead(200, { 'content-type': types['.glb'], 'content-length': glb.length });
    res.end(glb);
    return;
  }
  fs.readFile(file ?? '/nonexistent', (err, data) => {
    if (err) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream' });
    res.end(data);
  });
});

let browser, profile, code = 2;
const watchdog = setTimeout(() => {
  console.error(JSON.stringify({ error: `timed out after ${TIMEOUT_MS / 1000} s` }));
  process.exit(2);
}, TIMEOUT_MS);

try {
  await new Promise((ok, fail) => server.listen(0, '127.0.0.1', ok).on('error', fail));
  const origin = `http://127.0.0.1:${server.address().port}`;
  profile = fs.mkdtempSync(path.join(os.tmpdir(), 'jostle-chromium-'));
  const gl = shotPath ? ['--use-angle=swiftshader', '--enable-unsafe-swiftshader'] : ['--disable-gpu'];
  // A persistent context is how playwright takes our fresh --user-data-dir.
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.JOSTLE_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', ...gl, '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 800, height: 600 },
    timeout: 60_000,
  });
  const page = browser.pages()[0] ?? await browser.newPage();
  const pageErrors = [];
  page.on('pageerror', e => pageErrors.push(String(e)));
  page.on('response', r => { if (r.status() >= 400) pageErrors.push(`HTTP ${r.status()} ${r.url()}`); });
  // Only our own server: anything else is refused before it leaves the browser.
  await page.route('**/*', route =>
    route.request().url().startsWith(origin + '/') ? route.continue() : route.abort());
  await page.goto(`${origin}/page.html?glb=/model.glb${shotPath ? '&shot=1' : ''}`);
  await page.waitForFunction(() => window.__jostle !== undefined, null, { timeout: 60_000 });
  const r = await page.evaluate(() => window.__jostle);
  if (pageErrors.length) r.page_errors = pageErrors.slice(0, 10);
  if (r.error) {
    console.error(JSON.stringify(r));
    code = 1;
  } else {
    if (shotPath && r.webgl) {
      await page.locator('canvas').screenshot({ path: shotPath });
      r.screenshot = shotPath;
    }
    console.log(JSON.stringify(r));
    code = 0;
  }
} catch (e) {
  console.error(JSON.stringify({ error: String(e && e.message || e) }));
  code = 2;
} finally {
  if (browser) await browser.close().catch(() => {});
  server.close();
  if (profile) fs.rmSync(profile, { recursive: true, force: true });
  clearTimeout(watchdog);
}
process.exit(code);
