// Smoke test of dist/js_hello.wasm without the agent host: jco transpiles the
// component to core wasm + JS glue, Node runs it, and small stubs stand in for
// the agent:skill imports (WASI comes from @bytecodealliance/preview2-shim).
// It checks list-tools, both tools, and the `skill-error` cases, through the
// real canonical ABI (so it also proves how JS errors are lowered).
//
// Usage: node test.mjs [path/to/component.wasm]   (default dist/js_hello.wasm)
// Offline once node_modules is installed. Prints "N passed, N failed".

import { transpile } from "@bytecodealliance/jco";
import * as shim from "@bytecodealliance/preview2-shim";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import v8 from "node:v8";
import { slugifySchema, wordStatsSchema } from "./src/schemas.js";

// The QuickJS runtime uses extended-const (on by default in wasmtime and in
// Node >= 21); Node 20 has it behind a V8 flag.
if (Number(process.versions.node.split(".")[0]) < 21) v8.setFlagsFromString("--experimental-wasm-extended-const");

const here = dirname(fileURLToPath(import.meta.url));
const wasmPath = process.argv[2] ?? join(here, "dist", "js_hello.wasm");

// --- host stubs ------------------------------------------------------------
const logged = [];
const denied = () => {
  throw { tag: "denied", val: "not granted in this smoke test" };
};
const agentImports = {
  "agent:skill/types": {},
  "agent:skill/log": { log: (level, message) => logged.push([level, message]) },
  "agent:skill/project": {
    name: () => "smoke",
    guestRoot: () => undefined,
    languages: () => [],
    buildSystem: () => undefined,
    mode: () => "cli",
  },
  "agent:skill/config": { getAll: () => "{}", get: () => undefined },
  "agent:skill/syntax": { languages: () => [], query: denied },
  "agent:skill/exec": { run: denied },
  "agent:skill/http": { fetch: denied },
  "agent:skill/llm": { complete: denied, completeJson: denied },
  "agent:skill/git": { status: denied, diff: denied, log: denied, show: denied },
  "agent:skill/git-write": { commit: denied, branch: denied },
  "agent:skill/skills": { invoke: denied },
};
const wasiImports = {};
for (const [pkg, ifaces] of Object.entries(shim)) {
  for (const [iface, impl] of Object.entries(ifaces)) {
    // preview2-shim names interfaces in camelCase: monotonicClock -> monotonic-clock
    wasiImports[`wasi:${pkg}/${iface.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase())}`] = impl;
  }
}

// --- transpile and instantiate ---------------------------------------------
const dir = await mkdtemp(join(tmpdir(), "js-hello-test-"));
let exports;
try {
  const { files } = await transpile(await readFile(wasmPath), {
    name: "skill",
    instantiation: { tag: "async" },
    noTypescript: true,
  });
  for (const [name, bytes] of Object.entries(files)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), bytes);
  }
  const { instantiate } = await import(pathToFileURL(join(dir, "skill.js")).href);
  const getCoreModule = async (name) => WebAssembly.compile(await readFile(join(dir, name)));
  const imports = { ...wasiImports, ...agentImports };
  const missing = [];
  const proxy = new Proxy(imports, {
    get: (t, k) => (k in t ? t[k] : (missing.push(k), {})),
  });
  exports = await instantiate(getCoreModule, proxy);
  if (missing.length) console.log(`note: imports with no stub: ${missing.join(", ")}`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
const tool = exports.tool ?? exports["agent:skill/tool@0.2.0"] ?? exports["agent:skill/tool"];

// --- checks ----------------------------------------------------------------
let passed = 0;
let failed = 0;
function check(name, fn) {
  try {
    fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (e) {
    failed++;
    const detail = e && e.payload !== undefined ? `err(${JSON.stringify(e.payload)})` : e && e.stack ? e.stack : e;
    console.log(`FAIL ${name}: ${detail}`);
  }
}
function eq(actual, expected, what = "value") {
  const a = JSON.stringify(actual);
  const b = JSON.stringify(expected);
  if (a !== b) throw new Error(`${what}: expected ${b}, got ${a}`);
}
// jco lowers `err(e)` of a top-level result to a thrown ComponentError whose
// `.payload` is the variant value { tag, val }.
function callErr(name, input) {
  try {
    const out = tool.callTool(name, input);
    throw new Error(`expected an error, got ok(${JSON.stringify(out)})`);
  } catch (e) {
    if (!e || e.payload === undefined) throw e;
    return e.payload;
  }
}

check("list-tools returns both tools with their schemas", () => {
  const specs = tool.listTools();
  eq(specs.map((s) => s.name), ["slugify", "word_stats"], "names");
  eq(JSON.parse(specs[0].inputSchema), slugifySchema, "slugify schema");
  eq(JSON.parse(specs[1].inputSchema), wordStatsSchema, "word_stats schema");
  eq(specs.map((s) => s.requiresApproval), [false, false], "requires-approval");
});
check("slugify", () => {
  eq(tool.callTool("slugify", JSON.stringify({ text: "  Héllo, Wörld! Ça va? Straße 42 " })), "hello-world-ca-va-strasse-42");
  eq(tool.callTool("slugify", JSON.stringify({ text: "Hello big World", separator: "_", max_length: 10 })), "hello_big");
});
check("word_stats", () => {
  const out = JSON.parse(tool.callTool("word_stats", JSON.stringify({ text: "The cat, the hat.\nDon’t panic!\n", top: 2 })));
  eq(out, {
    words: 6,
    lines: 2,
    chars: 31,
    unique_words: 5,
    most_frequent: [
      { word: "the", count: 2 },
      { word: "cat", count: 1 },
    ],
  });
  eq(JSON.parse(tool.callTool("word_stats", '{"text":""}')).words, 0, "empty text");
});
check("unknown tool -> not-found", () => {
  const e = callErr("nope", "{}");
  eq(e.tag, "not-found", "tag");
});
check("bad JSON -> invalid-input", () => eq(callErr("slugify", "{text:").tag, "invalid-input", "tag"));
check("not an object -> invalid-input", () => eq(callErr("slugify", "[1]").tag, "invalid-input", "tag"));
check("missing text -> invalid-input", () => {
  const e = callErr("word_stats", "{}");
  eq(e, { tag: "invalid-input", val: "missing required property 'text'" });
});
check("wrong type / unknown property / out of range -> invalid-input", () => {
  eq(callErr("slugify", '{"text":3}').tag, "invalid-input");
  eq(callErr("slugify", '{"text":"a","sep":"-"}').tag, "invalid-input");
  eq(callErr("word_stats", '{"text":"a","top":99}').tag, "invalid-input");
  eq(callErr("slugify", '{"text":"!!!"}').tag, "invalid-input");
});
check("instance still usable after errors", () => eq(tool.callTool("slugify", '{"text":"ok again"}'), "ok-again"));
check("log import called at debug level on each call", () => {
  if (logged.length < 10) throw new Error(`only ${logged.length} log calls`);
  eq(logged.every(([level]) => level === "debug"), true, "all debug");
  eq(logged[0][1].startsWith("js-hello: call-tool slugify"), true, "message");
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
