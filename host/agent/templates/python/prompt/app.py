"""{{name}}: a prompt skill. When the skill is active, the host calls
`Prompt.fragments` while it builds the system prompt, and adds the fragments
(lowest priority first, trimmed to `max_context_tokens`)."""

from wit_world import exports
from wit_world.exports.prompt import PromptContext, PromptFragment


class Prompt(exports.Prompt):
    def fragments(self, context: PromptContext) -> list[PromptFragment]:
        out = [
            PromptFragment(
                title="{{name}} guidelines",
                content="Keep changes small, explain why, and add a test for every fix.",
                priority=10,
            )
        ]
        if context.languages:
            out.append(
                PromptFragment(
                    title="project languages",
                    content="This project uses: " + ", ".join(context.languages) + ".",
                    priority=20,
                )
            )
        return out
