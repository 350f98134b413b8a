#!/usr/bin/env node
// Build dist/js_hello.wasm from src/skill.js.
//
// The WIT is the repository's wit/ (package agent:skill@0.2.0). The default
// world is wit/js-hello.wit here: `tool-skill` narrowed to the `log` import
// and the `tool` export (see that file for why). build.mjs stages it in a
// temporary directory with ../../wit as deps/agent-skill.
//
//   node build.mjs                     QuickJS backend (componentize-qjs), the
//                                      default: ~1.6 MB, fast to compile and run
//   node build.mjs --backend sm        StarlingMonkey backend (componentize-js):
//                                      ~12 MB, http and fetch-event features off
//   node build.mjs --world tool-skill  build against agent:skill/tool-skill
//                                      itself (imports every capability)
//   node build.mjs --write-schemas     rewrite schemas/*.json from src/schemas.js
//   node build.mjs --out FILE          write somewhere else than dist/js_hello.wasm
//
// It calls the compilers' JS APIs directly: `jco componentize` 1.35 cannot be
// used here (its WASI shim starts with no preopens and fails with "failed to
// get path metadata (os error 44)"). Nothing is downloaded: it works offline
// once `npm ci` has filled node_modules.
//
// After building it lists the component's imports and exports and fails if
// the component imports wasi:http or wasi:sockets (the agent host never links
// them), or (with wasm-tools on PATH) needs the component-model async feature.

import { copyFile, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import * as schemas from "./src/schemas.js";

const here = dirname(fileURLToPath(import.meta.url));
const AGENT_WIT_DIR = resolve(here, "../../wit"); // package agent:skill@0.2.0
const LOCAL_WIT_DIR = join(here, "wit"); // world js-hello
const ENTRY = join(here, "src", "skill.js");
// Tool name -> its schema in src/schemas.js; the files are what SKILL.yaml names.
const SCHEMA_FILES = {
  slugify: schemas.slugifySchema,
  word_stats: schemas.wordStatsSchema,
};

const { values: opts } = parseArgs({
  options: {
    backend: { type: "string", default: "qjs" },
    world: { type: "string", default: "js-hello" },
    out: { type: "string", default: join(here, "dist", "js_hello.wasm") },
    "write-schemas": { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (opts.help) {
  console.log("usage: node build.mjs [--backend qjs|sm] [--world js-hello|tool-skill] [--out FILE] [--write-schemas]");
  process.exit(0);
}
const backend = { qjs: "qjs", quickjs: "qjs", sm: "sm", starlingmonkey: "sm" }[opts.backend];
if (!backend) die(`unknown --backend '${opts.backend}' (expected qjs or sm)`);

const outPath = resolve(opts.out);
const display = (p) => (relative(process.cwd(), p).startsWith("..") ? p : relative(process.cwd(), p));

function die(message) {
  console.error(`build.mjs: error: ${message}`);
  process.exit(1);
}

// --- 1. schemas/*.json must match what list-tools returns --------------------
const stale = [];
for (const [tool, schema] of Object.entries(SCHEMA_FILES)) {
  const file = join(here, "schemas", `${tool}.json`);
  const want = JSON.stringify(schema, null, 2) + "\n";
  let have = null;
  try {
    have = await readFile(file, "utf8");
  } catch {}
  if (have !== null && JSON.stringify(JSON.parse(have)) === JSON.stringify(schema)) continue;
  if (opts["write-schemas"]) {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, want);
    console.log(`wrote ${relative(process.cwd(), file)}`);
  } else {
    stale.push(relative(here, file));
  }
}
if (stale.length) {
  die(`${stale.join(", ")} differ from src/schemas.js; run \`node build.mjs --write-schemas\``);
}

// --- 2. the WIT: agent:skill as is, or staged with the local world ----------
let witDir = AGENT_WIT_DIR;
let stagedWit = null;
if (opts.world !== "tool-skill") {
  stagedWit = await mkdtemp(join(tmpdir(), "js-hello-wit-"));
  const deps = join(stagedWit, "deps", "agent-skill");
  await mkdir(deps, { recursive: true });
  for (const [from, to] of [
    [AGENT_WIT_DIR, deps],
    [LOCAL_WIT_DIR, stagedWit],
  ]) {
    for (const f of await readdir(from)) if (f.endsWith(".wit")) await copyFile(join(from, f), join(to, f));
  }
  witDir = stagedWit;
}

// --- 3. compile ------------------------------------------------------------
const started = performance.now();
let component;
try {
  component = await compile();
} finally {
  if (stagedWit) await rm(stagedWit, { recursive: true, force: true });
}
const buildMs = performance.now() - started;

async function compile() {
  if (backend === "qjs") {
    let componentizeQjs;
    try {
      ({ componentize: componentizeQjs } = await import("componentize-qjs"));
    } catch (e) {
      die(`cannot load componentize-qjs (run \`npm ci\` first): ${e.message}`);
    }
    const result = await componentizeQjs({
      witPath: witDir,
      world: opts.world,
      jsSource: await readFile(ENTRY, "utf8"),
      jsPath: ENTRY, // relative imports (./schemas.js) resolve from here
      moduleRoot: join(here, "src"),
      // The non-async runtime: the default one uses component-model async
      // intrinsics (task.cancel...), which wasmtime only accepts with
      // wasm_component_model_async enabled.
      sync: true,
    });
    return result.component;
  }

  let componentizeJs;
  try {
    ({ componentize: componentizeJs } = await import("@bytecodealliance/componentize-js"));
  } catch (e) {
    die(`cannot load @bytecodealliance/componentize-js (run \`npm ci\` first): ${e.message}`);
  }
  // componentize-js reads the WIT through a WASI shim, the top-level
  // @bytecodealliance/preview2-shim (which it does not declare as a
  // dependency). preview2-shim >= 0.26 starts with no preopens, so the read
  // fails with "No such file or directory (os error 44)" (the bug that also
  // breaks `jco componentize` 1.35): preopen the WIT directory first.
  const fsShim = await import("@bytecodealliance/preview2-shim/filesystem");
  if (typeof fsShim._setPreopens === "function") fsShim._setPreopens({ [witDir]: witDir });
  const result = await componentizeJs({
    sourcePath: ENTRY,
    witPath: witDir,
    worldName: opts.world,
    // fetch() and the incoming-handler export would import/export wasi:http.
    disableFeatures: ["http", "fetch-event"],
  });
  return result.component;
}

await mkdir(dirname(outPath), { recursive: true });
const tmp = `${outPath}.tmp-${process.pid}`;
await writeFile(tmp, component);
await rename(tmp, outPath);

// --- 4. check the component's surface ---------------------------------------
const { componentWit } = await import("@bytecodealliance/jco");
const wit = await componentWit(component);
const worldBody = wit.slice(wit.indexOf("world root {"), wit.indexOf("\n}", wit.indexOf("world root {")));
const imports = [...worldBody.matchAll(/^\s*import ([^;:]+:[^;]+);/gm)].map((m) => m[1]);
const exports = [...worldBody.matchAll(/^\s*export ([^;]+);/gm)].map((m) => m[1].replace(/\s*\{$/, ""));

const forbidden = imports.filter((i) => /^wasi:(http|sockets)\//.test(i));
if (forbidden.length) die(`component imports ${forbidden.join(", ")}, which the agent host does not link`);
if (!exports.includes("agent:skill/tool@0.2.0")) die("component does not export agent:skill/tool@0.2.0");

let validated = "not checked (wasm-tools not on PATH)";
try {
  execFileSync("wasm-tools", ["validate", "--features=-cm-async", outPath], { stdio: ["ignore", "ignore", "pipe"] });
  validated = "valid without component-model async";
} catch (e) {
  if (e.code !== "ENOENT") die(`wasm-tools validate --features=-cm-async failed:\n${e.stderr}`);
}

const size = (await stat(outPath)).size;
console.log(`backend:  ${backend === "qjs" ? "QuickJS (componentize-qjs)" : "StarlingMonkey (componentize-js)"}, world ${opts.world}`);
console.log(`imports:  ${imports.join(", ")}`);
console.log(`exports:  ${exports.join(", ")}`);
if (exports.some((e) => e.startsWith("init:"))) {
  console.log("          (init: componentize-qjs's build-time initialiser, left exported; hosts ignore it)");
}
console.log(`validate: ${validated}`);
console.log(`built ${display(outPath)}: ${size} bytes (${(size / 1048576).toFixed(2)} MiB) in ${(buildMs / 1000).toFixed(2)} s`);
