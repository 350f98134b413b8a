// Package skill is the {{name}} tool skill.
//
// Every function of the exported `tool` interface is a plain Go function of
// this package: ListTools and CallTool. The generated glue calls them (after
// the garbage-collector guard of agentsdk), so there is nothing else to wire.
package skill

import (
	"encoding/json"
	"strings"

	"wit_component/agent_skill_types"
	"wit_component/agentsdk"
)

const helloSchema = `{"type":"object","properties":{"name":{"type":"string","description":"Who to greet"}},"required":["name"],"additionalProperties":false}`

// ListTools describes every tool of this skill.
func ListTools() []agent_skill_types.ToolSpec {
	return []agent_skill_types.ToolSpec{{
		Name:             "hello",
		Description:      "Greet someone by name.",
		InputSchema:      helloSchema,
		RequiresApproval: false,
	}}
}

// CallTool runs tool `name` with its JSON input.
func CallTool(name string, input string) agentsdk.Result {
	switch name {
	case "hello":
		return hello(input)
	default:
		return agentsdk.NotFound("tool", name)
	}
}

func hello(input string) agentsdk.Result {
	var args struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(input), &args); err != nil {
		return agentsdk.InvalidInput("input is not a JSON object with a `name` string: " + err.Error())
	}
	who := strings.TrimSpace(args.Name)
	if who == "" {
		return agentsdk.InvalidInput("`name` is empty")
	}
	return agentsdk.Ok("Hello, " + who + "!")
}
