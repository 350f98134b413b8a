// {{name}}: a workflow skill in JavaScript (QuickJS, built by `agent skill build`).
//
// The world (wit/world.wit) exports `agent:skill/workflow`: here the named
// export `workflow`. Inputs and outputs are JSON text.
//
// Errors: for `err(skill-error)` THROW a plain object `{ tag, val }`
// (tag: invalid-input, not-found, denied or failed); anything else thrown
// traps the instance.
import { log } from "agent:skill/log@{{contract}}";

const WORD_COUNT_SCHEMA = {
  type: "object",
  properties: { text: { type: "string" } },
  required: ["text"],
};

/** Words (whitespace-separated tokens) and lines (a trailing "\n" does not
 * start a new line; empty text has none). */
function wordCount(text) {
  const words = text.split(/\s+/).filter((w) => w !== "").length;
  let lines = 0;
  if (text !== "") {
    lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  }
  return { words, lines };
}

export const workflow = {
  listWorkflows() {
    return [
      {
        name: "word-count",
        description: "Count the words and lines of a text.",
        inputSchema: JSON.stringify(WORD_COUNT_SCHEMA),
      },
    ];
  },

  runWorkflow(name, input) {
    if (name !== "word-count") {
      throw { tag: "not-found", val: `no workflow \`${name}\` in {{name}}` };
    }
    let args;
    try {
      args = JSON.parse(input);
    } catch (e) {
      throw { tag: "invalid-input", val: `input is not JSON: ${e.message}` };
    }
    if (args === null || typeof args !== "object" || typeof args.text !== "string") {
      throw { tag: "invalid-input", val: "`text` must be a string" };
    }
    const result = wordCount(args.text);
    log("debug", `word-count: ${result.words} words, ${result.lines} lines`);
    return JSON.stringify(result);
  },
};
