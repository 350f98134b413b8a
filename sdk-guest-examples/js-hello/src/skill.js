// js-hello: an example `tool` skill for the agent, written in plain JavaScript
// and turned into a WebAssembly component by build.mjs (QuickJS by default,
// StarlingMonkey with `--backend sm`; this file works with both).
//
// World: ../wit/js-hello.wit = agent:skill `tool-skill` narrowed to what this
// file uses: it implements the exported interface `agent:skill/tool` and
// imports only `agent:skill/log`.
//
// How WIT maps to JS (checked on both backends through the canonical ABI by
// test.mjs and by hand):
//   * the exported interface `tool` is the named export `tool`, an object whose
//     methods are the WIT functions in camelCase: `listTools`, `callTool`;
//   * records are plain objects with camelCase keys (`inputSchema`,
//     `requiresApproval`); `json` is just a string; enums (`log-level`) are
//     their case names as strings ("debug");
//   * a top-level `result<string, skill-error>`: RETURN the string for `ok`;
//     THROW the variant value for `err`, a plain object
//     `{ tag: "invalid-input", val: "..." }` (tag = the WIT case name, in
//     kebab-case). `throw { payload: { tag, val } }` (jco's ComponentError
//     shape) works too;
//   * anything else thrown traps the instance (the host sees a trap, not an
//     err, and must re-instantiate): an Error object (QuickJS traps even when
//     it carries `tag`/`val`; StarlingMonkey accepts that), a string, an
//     unknown tag, a missing `val`. Returning a non-string traps as well. So
//     every error below goes through `fail()` and the catch-all in `callTool`,
//     which always throws a plain `{ tag, val }`;
//   * an imported interface is an ES module named by its WIT name with
//     version; take its functions as named imports:
//     `import { log } from "agent:skill/log@0.2.0"` (a default import works on
//     QuickJS only).
//   * StarlingMonkey has no ICU: no String.prototype.normalize and no \p{...}
//     in regular expressions, hence the table and character classes below.

import { log as hostLog } from "agent:skill/log@0.2.0";
import { slugifySchema, wordStatsSchema } from "./schemas.js";

const TOOLS = {
  slugify: {
    description:
      "Turn text into a URL/file-name friendly slug: lower-case ASCII letters and digits " +
      "joined by a separator, accents removed. Returns the slug as plain text.",
    schema: slugifySchema,
    run: slugify,
  },
  word_stats: {
    description:
      "Count the words, lines, characters and unique words of a text and list its most " +
      "frequent words. Returns a JSON object.",
    schema: wordStatsSchema,
    run: wordStats,
  },
};

/** A `skill-error` value, thrown from an export to produce `err(...)`. */
class SkillError extends Error {
  constructor(tag, val) {
    super(`${tag}: ${val}`);
    this.tag = tag;
    this.val = val;
  }
}

function fail(tag, message) {
  throw new SkillError(tag, message);
}

function log(level, message) {
  hostLog(level, message);
}

// --- input validation (the host already checks the JSON Schema; the guest
// --- still checks what it relies on, and reports it as `invalid-input`) ----

function parseInput(input) {
  let value;
  try {
    value = JSON.parse(input);
  } catch (e) {
    fail("invalid-input", `input is not valid JSON: ${e.message}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    fail("invalid-input", "input must be a JSON object");
  }
  return value;
}

function checkObject(obj, schema) {
  for (const key of schema.required) {
    if (!(key in obj)) fail("invalid-input", `missing required property '${key}'`);
  }
  for (const [key, value] of Object.entries(obj)) {
    const prop = schema.properties[key];
    if (!prop) {
      const known = Object.keys(schema.properties).join(", ");
      fail("invalid-input", `unknown property '${key}' (expected: ${known})`);
    }
    if (prop.type === "string" && typeof value !== "string") {
      fail("invalid-input", `'${key}' must be a string`);
    }
    if (prop.type === "integer") {
      if (!Number.isInteger(value)) fail("invalid-input", `'${key}' must be an integer`);
      if (prop.minimum !== undefined && value < prop.minimum)
        fail("invalid-input", `'${key}' must be >= ${prop.minimum}`);
      if (prop.maximum !== undefined && value > prop.maximum)
        fail("invalid-input", `'${key}' must be <= ${prop.maximum}`);
    }
    if (prop.enum && !prop.enum.includes(value)) {
      fail("invalid-input", `'${key}' must be one of ${prop.enum.map((v) => JSON.stringify(v)).join(", ")}`);
    }
  }
  return obj;
}

// --- the tools -------------------------------------------------------------

// Latin letters with diacritics -> ASCII. A table rather than only
// String.prototype.normalize("NFKD"), which StarlingMonkey (no ICU) lacks.
const FOLD = {};
for (const [ascii, letters] of Object.entries({
  a: "àáâãäåāăą", c: "çćĉċč", d: "ďđð", e: "èéêëēĕėęě", g: "ĝğġģ", h: "ĥħ",
  i: "ìíîïĩīĭįı", j: "ĵ", k: "ķ", l: "ĺļľŀł", n: "ñńņňŉ", o: "òóôõöøōŏő",
  r: "ŕŗř", s: "śŝşšſ", t: "ţťŧ", u: "ùúûüũūŭůűų", w: "ŵ", y: "ýÿŷ", z: "źżž",
  ss: "ß", ae: "æ", oe: "œ", th: "þ", ij: "ĳ",
})) {
  for (const ch of letters) FOLD[ch] = ascii;
}

function foldToAscii(text) {
  let s = text.toLowerCase().replace(/[^\x00-\x7f]/g, (ch) => FOLD[ch] ?? ch);
  if (typeof s.normalize === "function") {
    // Engines with Unicode normalization (QuickJS) also fold what the table
    // misses, e.g. Vietnamese: decompose, then drop the combining marks.
    s = s.normalize("NFKD").replace(/[\u0300-\u036f]/g, "");
  }
  return s;
}

function slugify(args) {
  const sep = args.separator ?? "-";
  const words = foldToAscii(args.text)
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
  if (words.length === 0) {
    fail("invalid-input", "'text' has no letters or digits to make a slug from");
  }
  let slug = words.join(sep);
  if (args.max_length !== undefined && slug.length > args.max_length) {
    const cut = slug.slice(0, args.max_length);
    const lastSep = cut.lastIndexOf(sep);
    slug = lastSep > 0 ? cut.slice(0, lastSep) : cut;
  }
  return slug;
}

const WORD_CHAR = "[^\\s!-/:-@\\[-`{-~\\u00a1-\\u00bf\\u00d7\\u00f7\\u2010-\\u2027\\u2030-\\u205e\\u3000-\\u303f\\uff01-\\uff0f]";
const WORD_RE = new RegExp(`${WORD_CHAR}+(?:['\u2019-]${WORD_CHAR}+)*`, "g");

function wordStats(args) {
  const text = args.text;
  const top = args.top ?? 5;
  // Words: runs of anything but white space and punctuation, with inner
  // apostrophes or hyphens (don't, e-mail). No \p{L}: StarlingMonkey's
  // SpiderMonkey is built without Unicode property escapes.
  const words = (text.match(WORD_RE) ?? []).map((w) => w.toLowerCase());
  const counts = new Map();
  for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
  const mostFrequent = [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, top)
    .map(([word, count]) => ({ word, count }));
  let lines = 0;
  if (text.length > 0) {
    lines = text.split(/\r\n|\r|\n/).length;
    if (/(\r\n|\r|\n)$/.test(text)) lines -= 1; // a final newline ends a line, it doesn't start one
  }
  return JSON.stringify({
    words: words.length,
    lines,
    chars: [...text].length, // Unicode code points, not UTF-16 units
    unique_words: counts.size,
    most_frequent: mostFrequent,
  });
}

// --- the export ------------------------------------------------------------

export const tool = {
  listTools() {
    return Object.entries(TOOLS).map(([name, t]) => ({
      name,
      description: t.description,
      inputSchema: JSON.stringify(t.schema),
      requiresApproval: false,
    }));
  },

  callTool(name, input) {
    log("debug", `js-hello: call-tool ${name} (${input.length} bytes of input)`);
    try {
      const t = Object.hasOwn(TOOLS, name) ? TOOLS[name] : undefined;
      if (!t) {
        fail("not-found", `no tool named '${name}' in js-hello (tools: ${Object.keys(TOOLS).join(", ")})`);
      }
      return t.run(checkObject(parseInput(input), t.schema));
    } catch (e) {
      // Re-shape into a bare `skill-error` variant value: exactly { tag, val }.
      if (e instanceof SkillError) throw { tag: e.tag, val: e.val };
      throw { tag: "failed", val: `js-hello: ${name}: ${e && e.message ? e.message : String(e)}` };
    }
  },
};
