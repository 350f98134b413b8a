"""{{name}}: a tool skill. The host calls `Tool.list_tools` once at load and
`Tool.call_tool` for every call the model (or `agent skill call`) makes."""

import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import log
from wit_world.imports.types import (
    LogLevel,
    SkillError_InvalidInput,
    SkillError_NotFound,
    ToolSpec,
)

# The same JSON Schema as schemas/hello.json (the host checks input against it
# before calling).
HELLO_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "Who to greet"}},
    "required": ["name"],
    "additionalProperties": False,
}


def hello(args: object) -> str:
    name = args.get("name") if isinstance(args, dict) else None
    if not isinstance(name, str) or not name.strip():
        raise Err(SkillError_InvalidInput("`name` is empty"))
    log.log(LogLevel.DEBUG, f"greeting {name.strip()}")
    return f"Hello, {name.strip()}!"


class Tool(exports.Tool):
    def list_tools(self) -> list[ToolSpec]:
        return [
            ToolSpec(
                name="hello",
                description="Greet someone by name.",
                input_schema=json.dumps(HELLO_SCHEMA),
                requires_approval=False,
            )
        ]

    def call_tool(self, name: str, input: str) -> str:
        if name != "hello":
            raise Err(SkillError_NotFound(f"no tool `{name}`"))
        try:
            args = json.loads(input)
        except ValueError as e:
            raise Err(SkillError_InvalidInput(f"input is not JSON: {e}"))
        return hello(args)
