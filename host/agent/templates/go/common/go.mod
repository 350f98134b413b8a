// The Go sources next to this file are package `skill`. `agent skill build`
// compiles them together with the bindings it generates from wit/ (imported
// as "wit_component/agent_skill_<interface>") and the agentsdk support
// package ("wit_component/agentsdk") in build/go.
module {{stem}}

go 1.25
