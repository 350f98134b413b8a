// {{name}}: a security-rule skill in JavaScript (QuickJS, built by `agent skill build`).
//
// The world (wit/world.wit) exports `agent:skill/scanner`: here the named
// export `scanner`. Records are plain objects with camelCase keys, enums
// their case names as strings ("high"), `option` a value or `undefined`,
// tuples arrays.
//
// Errors: for `err(skill-error)` THROW a plain object `{ tag, val }`;
// anything else thrown traps the instance.
import { log } from "agent:skill/log@{{contract}}";

// `password`, optional spaces, `=` or `:`, optional spaces, then a quote.
const PASSWORD = /password *[=:] *(["'])/i;

/** The line with the quoted value (from the opening quote to its closing
 * quote, or to the end of the line) replaced by "***". */
function redact(line, match) {
  const open = match.index + match[0].length - 1;
  const close = line.indexOf(match[1], open + 1);
  const rest = close === -1 ? "" : line.slice(close + 1);
  return `${line.slice(0, open)}"***"${rest}`;
}

function scanPasswords(target) {
  const findings = [];
  target.content.split("\n").forEach((raw, i) => {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    const match = PASSWORD.exec(line);
    if (!match) return;
    findings.push({
      ruleId: "hardcoded-password",
      title: "Hard-coded password",
      description: "A password is written in the file; anyone who can read it can use it.",
      severity: "high",
      category: "secrets-exposure",
      cwe: "CWE-798",
      owasp: "A07:2021",
      location: {
        file: target.path,
        startLine: i + 1,
        endLine: i + 1,
        // 1-based, in characters (code points), not UTF-16 units.
        startColumn: [...line.slice(0, match.index)].length + 1,
        endColumn: 0,
        function: undefined,
      },
      evidence: redact(line, match),
      remediation: "Read the password from the environment or a secret store.",
      confidence: "high",
      references: [],
      metadata: [],
    });
  });
  return findings;
}

export const scanner = {
  listScanners() {
    return [
      {
        name: "hardcoded-password",
        description: "Passwords written into source or configuration",
        filePatterns: [],
        languages: [],
      },
    ];
  },

  scan(name, target) {
    if (name !== "hardcoded-password") {
      throw { tag: "not-found", val: `no scanner \`${name}\` in {{name}}` };
    }
    const findings = scanPasswords(target);
    if (findings.length > 0) log("debug", `${target.path}: ${findings.length} finding(s)`);
    return findings;
  },
};
