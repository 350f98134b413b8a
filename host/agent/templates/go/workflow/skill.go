// Package skill is the {{name}} workflow skill.
//
// The exported `workflow` interface is two plain Go functions of this
// package, ListWorkflows and RunWorkflow; the generated glue calls them after
// the garbage-collector guard of agentsdk.
package skill

import (
	"encoding/json"
	"strings"

	"wit_component/agent_skill_workflow"
	"wit_component/agentsdk"
)

// ListWorkflows describes every workflow of this skill.
func ListWorkflows() []agent_skill_workflow.WorkflowSpec {
	return []agent_skill_workflow.WorkflowSpec{{
		Name:        "word-count",
		Description: "Count the words and lines of a text.",
		InputSchema: `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
	}}
}

// RunWorkflow runs workflow `name` with its JSON input; the output is JSON.
func RunWorkflow(name string, input string) agentsdk.Result {
	switch name {
	case "word-count":
		return wordCount(input)
	default:
		return agentsdk.NotFound("workflow", name)
	}
}

func wordCount(input string) agentsdk.Result {
	var args struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal([]byte(input), &args); err != nil {
		return agentsdk.InvalidInput("input is not a JSON object with a `text` string: " + err.Error())
	}
	if args.Text == nil {
		return agentsdk.InvalidInput("`text` is missing")
	}
	text := *args.Text
	lines := 0
	if text != "" {
		lines = strings.Count(text, "\n") + 1
		if strings.HasSuffix(text, "\n") {
			lines--
		}
	}
	out, err := json.Marshal(struct {
		Words int `json:"words"`
		Lines int `json:"lines"`
	}{len(strings.Fields(text)), lines})
	if err != nil {
		return agentsdk.Failed(err.Error())
	}
	return agentsdk.Ok(string(out))
}
