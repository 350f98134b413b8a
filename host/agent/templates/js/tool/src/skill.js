// {{name}}: a tool skill in JavaScript (QuickJS, built by `agent skill build`).
//
// The world (wit/world.wit) exports `agent:skill/tool`: here the named export
// `tool`, whose methods are the WIT functions in camelCase. Imports are ES
// modules named by their WIT interface and version.
//
// Errors: return a string for `ok`; for `err(skill-error)` THROW a plain
// object `{ tag, val }` (tag: invalid-input, not-found, denied or failed).
// Anything else thrown (an Error, a string) traps the instance.
import { log } from "agent:skill/log@{{contract}}";

// The same value as schemas/hello.json (which SKILL.yaml names).
const HELLO_SCHEMA = {
  type: "object",
  properties: {
    name: { type: "string", description: "Who to greet" },
  },
  required: ["name"],
  additionalProperties: false,
};

export const tool = {
  listTools() {
    return [
      {
        name: "hello",
        description: "Greet someone by name.",
        inputSchema: JSON.stringify(HELLO_SCHEMA),
        requiresApproval: false,
      },
    ];
  },

  callTool(name, input) {
    if (name !== "hello") {
      throw { tag: "not-found", val: `no tool \`${name}\` in {{name}}` };
    }
    let args;
    try {
      args = JSON.parse(input);
    } catch (e) {
      throw { tag: "invalid-input", val: `input is not JSON: ${e.message}` };
    }
    const who = args !== null && typeof args.name === "string" ? args.name.trim() : "";
    if (who === "") {
      throw { tag: "invalid-input", val: "`name` is empty" };
    }
    log("debug", `greeting ${who}`);
    return `Hello, ${who}!`;
  },
};
