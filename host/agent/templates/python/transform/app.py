"""{{name}}: a transform skill. The host calls `Transform.apply` on the
agent's final output before it is shown or saved."""

from wit_world import exports
from wit_world.exports.transform import TransformContext


class Transform(exports.Transform):
    def apply(self, output: str, context: TransformContext) -> str:
        # Trailing spaces, tabs and carriage returns go from every line; a
        # final "\n" stays (the last piece of the split is then empty).
        return "\n".join(line.rstrip(" \t\r") for line in output.split("\n"))
