package agentsdk

// Result helpers, written into build/go/agentsdk when the world's bindings
// include agent:skill/types (every world that imports log or uses a shared
// type does).

import (
	"strings"

	"wit_component/agent_skill_types"

	witTypes "go.bytecodealliance.org/pkg/wit/types"
)

// Result is what tools, workflows and transforms return.
type Result = witTypes.Result[string, agent_skill_types.SkillError]

// Ok is a successful result with text `s`.
func Ok(s string) Result {
	return witTypes.Ok[string, agent_skill_types.SkillError](s)
}

// InvalidInput is a `invalid-input` skill error: the input did not match.
func InvalidInput(msg string) Result {
	return witTypes.Err[string](agent_skill_types.MakeSkillErrorInvalidInput(msg))
}

// NotFound is a `not-found` skill error: no tool, workflow or scanner `name`.
func NotFound(what, name string) Result {
	return witTypes.Err[string](agent_skill_types.MakeSkillErrorNotFound(notFound(what, name)))
}

// Denied is a `denied` skill error: a capability the export needed was refused.
func Denied(msg string) Result {
	return witTypes.Err[string](agent_skill_types.MakeSkillErrorDenied(msg))
}

// Failed is a `failed` skill error: anything else.
func Failed(msg string) Result {
	return witTypes.Err[string](agent_skill_types.MakeSkillErrorFailed(msg))
}

func notFound(what, name string) string {
	return "no " + what + " named `" + name + "`"
}

// NotFoundError is the `not-found` skill error itself, for exports whose
// result is not a string (scanners).
func NotFoundError(what, name string) agent_skill_types.SkillError {
	return agent_skill_types.MakeSkillErrorNotFound(notFound(what, name))
}

// CapabilityMessage is the text of a capability error, prefixed with its kind.
func CapabilityMessage(e agent_skill_types.CapabilityError) string {
	switch e.Tag() {
	case agent_skill_types.CapabilityError_Denied:
		return "denied: " + e.Denied()
	case agent_skill_types.CapabilityError_Unavailable:
		return "unavailable: " + e.Unavailable()
	case agent_skill_types.CapabilityError_Invalid:
		return "invalid: " + e.Invalid()
	case agent_skill_types.CapabilityError_Failed:
		return "failed: " + e.Failed()
	case agent_skill_types.CapabilityError_TimedOut:
		return "timed out"
	case agent_skill_types.CapabilityError_LimitExceeded:
		return "limit exceeded: " + e.LimitExceeded()
	}
	return "capability error"
}

// FromCapability turns a capability error into the skill error to return:
// `denied` stays `denied`, everything else is `failed`.
func FromCapability(e agent_skill_types.CapabilityError) Result {
	if e.Tag() == agent_skill_types.CapabilityError_Denied {
		return Denied(strings.TrimSpace(e.Denied()))
	}
	return Failed(CapabilityMessage(e))
}
