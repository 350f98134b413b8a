// i18n-output: a transform skill in JavaScript that translates the agent's
// final output into the language configured in
//
//   [skills.config.i18n-output]
//   language = "fr"      # target language code
//   source = "en"        # the language the agent answers in (default "en")
//
// Code must survive a translation byte for byte, so before the model sees
// the text every fenced code block, inline code span, URL and file path is
// swapped for a placeholder (⟦0⟧, ⟦1⟧, ...), and swapped back afterwards.
// If the model dropped, duplicated or invented a placeholder, the output is
// returned untranslated and a warning is logged: a half-restored answer
// would be worse than an untranslated one.
//
// Nothing is sent to the model (and the output is returned as it is) when
// no language is configured, when it is the source language, when the
// output is empty, or when the output format is `json` or `jsonl` (machine
// output must stay parseable).
//
// JavaScript mapping (componentize-qjs): the exported interface
// `agent:skill/transform` is the named export `transform`; imports are ES
// modules named by interface and version; an imported function returning
// `result<T, E>` returns T or throws E; an export fails with
// `err(skill-error)` by throwing a plain `{ tag, val }` object.
import { log } from "agent:skill/log@0.2.0";
import { get as configGet } from "agent:skill/config@0.2.0";
import { complete } from "agent:skill/llm@0.2.0";

/** Language names the model is told, by primary subtag. */
const LANGUAGES = {
  ar: "Arabic", cs: "Czech", da: "Danish", de: "German", el: "Greek", en: "English",
  es: "Spanish", fi: "Finnish", fr: "French", he: "Hebrew", hi: "Hindi", hu: "Hungarian",
  id: "Indonesian", it: "Italian", ja: "Japanese", ko: "Korean", nb: "Norwegian Bokmål",
  nl: "Dutch", no: "Norwegian", pl: "Polish", pt: "Portuguese", ro: "Romanian",
  ru: "Russian", sv: "Swedish", th: "Thai", tr: "Turkish", uk: "Ukrainian",
  vi: "Vietnamese", zh: "Chinese",
};

/** Formats that are data, not prose: never translated. */
const MACHINE_FORMATS = new Set(["json", "jsonl"]);

// ---------------------------------------------------------------------------
// Configuration.

/** A string key of this skill's config section, or `undefined`. */
function configString(key) {
  const raw = configGet(key);
  if (raw === undefined || raw === null) return undefined;
  let value;
  try {
    value = JSON.parse(raw);
  } catch {
    throw { tag: "invalid-input", val: `config \`${key}\` is not JSON: ${raw}` };
  }
  if (typeof value !== "string") {
    throw {
      tag: "invalid-input",
      val: `config \`${key}\` must be a language code string such as "fr", not ${raw}`,
    };
  }
  const trimmed = value.trim();
  return trimmed === "" ? undefined : trimmed;
}

/** "pt-BR" -> "pt"; "EN_us" -> "en". */
function primary(code) {
  return code.toLowerCase().split(/[-_]/)[0];
}

function describe(code) {
  const name = LANGUAGES[primary(code)];
  return name ? `${name} (${code})` : code;
}

// ---------------------------------------------------------------------------
// Protecting code, URLs and paths.

const OPEN = "⟦";
const CLOSE = "⟧";
const PLACEHOLDER = /⟦\d+⟧/;

// A fenced code block: ``` or ~~~ (3 or more) at the start of a line, up to
// a closing fence of the same character and at least the same length on its
// own line, or to the end of the text when it is never closed.
const FENCED = /^([ \t]{0,3})(`{3,}|~{3,})[^\n]*\n[\s\S]*?(?:^[ \t]{0,3}\2[`~]*[ \t]*$|(?![\s\S]))/gm;
// An inline code span: a run of backticks, then anything up to the same run.
const INLINE = /(`+)(?!`)[\s\S]*?[^`]\1(?!`)/g;
// URLs: scheme://..., up to whitespace or a closing bracket/quote; trailing
// sentence punctuation stays outside.
const URL = /\b[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^\s<>"'`)\]]+[^\s<>"'`)\].,;:!?]/g;
// File paths: absolute (/a/b), home (~/a), relative (./a, ../a), or two or
// more components (src/main.rs, .github/workflows); and bare file names with
// a known extension (README.md). A component never ends in a dot, so the
// full stop after a path stays prose.
const C = String.raw`\.?[\w@+-]+(?:\.[\w@+-]+)*`;
const EXT = "c|cc|cpp|cs|css|go|h|hpp|html|ini|java|js|json|jsx|kt|lock|md|mjs|php|py|rb|rs|sh|sql|swift|toml|ts|tsx|txt|wasm|wit|xml|ya?ml";
const PATH = new RegExp(
  String.raw`(?<![\w.@+/-])(?:(?:~|\.{1,2})?(?:\/${C})+|${C}(?:\/${C})+)\/?` +
    String.raw`|(?<![\w.@+/-])[\w@+-]+(?:\.[\w@+-]+)*\.(?:${EXT})\b`,
  "g",
);

/** `text` with the protected pieces replaced by numbered placeholders, and
 * the pieces in order. */
function protect(text) {
  const pieces = [];
  let out = text;
  for (const pattern of [FENCED, INLINE, URL, PATH]) {
    out = out.replace(pattern, (match) => {
      // Never swallow a placeholder made by an earlier pattern.
      if (PLACEHOLDER.test(match)) return match;
      // Two plain words around one slash are prose ("and/or", "input/output").
      if (pattern === PATH && /^[^\W\d_]+\/[^\W\d_]+$/.test(match)) return match;
      pieces.push(match);
      return `${OPEN}${pieces.length - 1}${CLOSE}`;
    });
  }
  return { text: out, pieces };
}

/** Puts the pieces back, or returns the reason why it cannot: every
 * placeholder must appear exactly once, and no other may appear. */
function restore(translated, pieces) {
  const seen = new Map();
  for (const m of translated.matchAll(/⟦(\d+)⟧/g)) {
    seen.set(m[1], (seen.get(m[1]) ?? 0) + 1);
  }
  const problems = [];
  pieces.forEach((_, i) => {
    const n = seen.get(String(i)) ?? 0;
    if (n !== 1) problems.push(`${OPEN}${i}${CLOSE} appears ${n} times`);
  });
  for (const key of seen.keys()) {
    if (!(Number(key) < pieces.length)) problems.push(`unknown placeholder ${OPEN}${key}${CLOSE}`);
  }
  if (problems.length > 0) return { problems };
  // A function replacer: `$` in code must not be read as a pattern.
  return { text: translated.replace(/⟦(\d+)⟧/g, (_, i) => pieces[Number(i)]) };
}

// ---------------------------------------------------------------------------
// The model call.

function instructions(target, source, placeholders) {
  const lines = [
    `You translate text from ${describe(source)} into ${describe(target)}.`,
    "Answer with the translation only: no preamble, no notes, no quotes around it, no code fence around it.",
    "Keep the Markdown structure (headings, lists, emphasis, tables, line breaks) as it is.",
  ];
  if (placeholders > 0) {
    lines.push(
      `The text contains placeholders written ${OPEN}N${CLOSE} (N a number) that stand for code, URLs and file paths. ` +
        `Copy every placeholder into the translation exactly once, unchanged, where it belongs; never translate, ` +
        `remove, merge or add placeholders.`,
    );
  }
  return lines.join("\n");
}

/** The model's text without a code fence it may have wrapped it in. */
function unwrap(answer) {
  const m = /^```[^\n]*\n([\s\S]*)\n```\s*$/.exec(answer.trim());
  return (m ? m[1] : answer).trim();
}

function translate(core, target, source) {
  if (PLACEHOLDER.test(core)) {
    log("warn", `i18n-output: the output itself contains text like ${OPEN}0${CLOSE}; showing it untranslated`);
    return core;
  }
  const { text, pieces } = protect(core);
  let answer;
  try {
    answer = complete({
      system: instructions(target, source, pieces.length),
      messages: [{ role: "user", content: text }],
      maxTokens: undefined,
      temperature: 0,
    });
  } catch (e) {
    // A capability-error: { tag: "denied" | "failed" | ..., val }.
    const err = e && typeof e === "object" && "tag" in e ? e : (e?.payload ?? {});
    const why = err.val !== undefined ? `${err.tag}: ${err.val}` : String(err.tag ?? e);
    throw { tag: err.tag === "denied" ? "denied" : "failed", val: `translation request failed (${why})` };
  }
  const restored = restore(unwrap(answer), pieces);
  if (restored.problems) {
    log(
      "warn",
      `i18n-output: the model did not keep the protected code/URL/path placeholders ` +
        `(${restored.problems.join("; ")}); showing the output untranslated`,
    );
    return core;
  }
  log("info", `i18n-output: translated ${core.length} characters into ${describe(target)}`);
  return restored.text;
}

// ---------------------------------------------------------------------------
// The export.

export const transform = {
  apply(output, context) {
    if (MACHINE_FORMATS.has(context.format)) {
      log("debug", `i18n-output: ${context.format} output left as it is`);
      return output;
    }
    const target = configString("language");
    if (target === undefined) {
      log("debug", "i18n-output: no `language` in [skills.config.i18n-output]; nothing to do");
      return output;
    }
    const source = configString("source") ?? "en";
    if (primary(target) === primary(source)) {
      log("debug", `i18n-output: output is already in ${describe(source)}`);
      return output;
    }
    // Translate the text between its leading and trailing whitespace, which
    // stays as it was (the model trims).
    const m = /^(\s*)([\s\S]*?)(\s*)$/.exec(output);
    const [, lead, core, trail] = m;
    if (core === "") return output;
    return lead + translate(core, target, source) + trail;
  },
};
