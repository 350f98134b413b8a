// The Go sources next to this file are package `skill`; `agent skill build`
// compiles them with the bindings generated from wit/ and the agentsdk
// support package in build/go.
module database

go 1.25
