// Package skill is the {{name}} transform skill.
//
// Apply is the exported `transform` interface's one function, a plain Go
// function of this package; the generated glue calls it after the
// garbage-collector guard of agentsdk.
package skill

import (
	"strings"

	"wit_component/agent_skill_transform"
	"wit_component/agentsdk"
)

// Apply returns the output with trailing spaces, tabs and carriage returns
// removed from every line (a final newline is kept).
func Apply(output string, ctx agent_skill_transform.TransformContext) agentsdk.Result {
	lines := strings.Split(output, "\n")
	for i, line := range lines {
		lines[i] = strings.TrimRight(line, " \t\r")
	}
	return agentsdk.Ok(strings.Join(lines, "\n"))
}
