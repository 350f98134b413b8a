// {{name}}: a prompt skill in JavaScript (QuickJS, built by `agent skill build`).
//
// The world (wit/world.wit) exports `agent:skill/prompt`: here the named
// export `prompt`. Records are plain objects with camelCase keys
// (`context.userMessage`, `context.maxTokens`).
import { log } from "agent:skill/log@{{contract}}";

export const prompt = {
  fragments(context) {
    const fragments = [
      {
        title: "{{name}} guidelines",
        content: "Keep changes small, explain why, and add a test for every fix.",
        priority: 10,
      },
    ];
    if (context.languages.length > 0) {
      fragments.push({
        title: "project languages",
        content: `This project uses: ${context.languages.join(", ")}.`,
        priority: 20,
      });
    }
    log("debug", `${fragments.length} fragment(s) for mode ${context.mode}`);
    return fragments;
  },
};
