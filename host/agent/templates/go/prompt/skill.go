// Package skill is the {{name}} prompt skill.
//
// Fragments is the exported `prompt` interface's one function, a plain Go
// function of this package; the generated glue calls it after the
// garbage-collector guard of agentsdk.
package skill

import (
	"strings"

	"wit_component/agent_skill_prompt"
)

// Fragments returns the pieces of system prompt for this context.
func Fragments(ctx agent_skill_prompt.PromptContext) []agent_skill_prompt.PromptFragment {
	fragments := []agent_skill_prompt.PromptFragment{{
		Title:    "{{name}} guidelines",
		Content:  "Keep changes small, explain why, and add a test for every fix.",
		Priority: 10,
	}}
	if len(ctx.Languages) > 0 {
		fragments = append(fragments, agent_skill_prompt.PromptFragment{
			Title:    "project languages",
			Content:  "This project uses: " + strings.Join(ctx.Languages, ", ") + ".",
			Priority: 20,
		})
	}
	return fragments
}
