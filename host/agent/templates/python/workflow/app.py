"""{{name}}: a workflow skill. `agent workflow run word-count` (and the model,
which sees workflows as tools) calls `Workflow.run_workflow`."""

import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports.workflow import WorkflowSpec
from wit_world.imports.types import SkillError_InvalidInput, SkillError_NotFound

WORD_COUNT_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}


def word_count(input: str) -> str:
    try:
        args = json.loads(input)
    except ValueError as e:
        raise Err(SkillError_InvalidInput(f"input is not JSON: {e}"))
    text = args.get("text") if isinstance(args, dict) else None
    if not isinstance(text, str):
        raise Err(SkillError_InvalidInput("`text` must be a string"))
    words = len(text.split())
    # Lines split on "\n"; a trailing "\n" does not start a new line.
    lines = 0 if text == "" else len(text.split("\n")) - (1 if text.endswith("\n") else 0)
    return json.dumps({"words": words, "lines": lines})


class Workflow(exports.Workflow):
    def list_workflows(self) -> list[WorkflowSpec]:
        return [
            WorkflowSpec(
                name="word-count",
                description="Count the words and lines of a text.",
                input_schema=json.dumps(WORD_COUNT_SCHEMA),
            )
        ]

    def run_workflow(self, name: str, input: str) -> str:
        if name == "word-count":
            return word_count(input)
        raise Err(SkillError_NotFound(f"no workflow `{name}`"))
