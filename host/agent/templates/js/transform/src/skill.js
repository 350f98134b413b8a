// {{name}}: a transform skill in JavaScript (QuickJS, built by `agent skill build`).
//
// The world (wit/world.wit) exports `agent:skill/transform`: here the named
// export `transform`. `context` is `{ mode, format }`.
//
// Errors: for `err(skill-error)` THROW a plain object `{ tag, val }`; the
// host then keeps the untransformed output and warns.
import { log } from "agent:skill/log@{{contract}}";

export const transform = {
  apply(output, context) {
    // Trailing spaces, tabs and carriage returns off every line; a final
    // "\n" stays.
    const result = output
      .split("\n")
      .map((line) => line.replace(/[ \t\r]+$/, ""))
      .join("\n");
    log("debug", `trimmed ${output.length - result.length} character(s) (${context.format})`);
    return result;
  },
};
