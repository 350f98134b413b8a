// Package skill is the {{name}} security-rule skill.
//
// The exported `scanner` interface is two plain Go functions of this
// package, ListScanners and Scan; the generated glue calls them after the
// garbage-collector guard of agentsdk.
package skill

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"wit_component/agent_skill_scanner"
	"wit_component/agent_skill_types"
	"wit_component/agentsdk"

	witTypes "go.bytecodealliance.org/pkg/wit/types"
)

// ScanResult is what Scan returns: findings or a skill error.
type ScanResult = witTypes.Result[[]agent_skill_types.Finding, agent_skill_types.SkillError]

// `password`, optional spaces, `=` or `:`, optional spaces, then a quoted
// value (group 1: the value with its quotes).
var passwordRe = regexp.MustCompile(`(?i)password *[=:] *("[^"]*"?|'[^']*'?)`)

// ListScanners describes every scanner of this skill.
func ListScanners() []agent_skill_scanner.ScannerSpec {
	return []agent_skill_scanner.ScannerSpec{{
		Name:         "hardcoded-password",
		Description:  "Passwords written into source or configuration",
		FilePatterns: []string{},
		Languages:    []string{},
	}}
}

// Scan scans one file with scanner `name`.
func Scan(name string, target agent_skill_scanner.ScanTarget) ScanResult {
	if name != "hardcoded-password" {
		return witTypes.Err[[]agent_skill_types.Finding](agentsdk.NotFoundError("scanner", name))
	}
	findings := []agent_skill_types.Finding{}
	for i, line := range strings.Split(target.Content, "\n") {
		line = strings.TrimSuffix(line, "\r")
		match := passwordRe.FindStringIndex(line)
		if match == nil {
			continue
		}
		column := uint32(utf8.RuneCountInString(line[:match[0]]) + 1)
		evidence := passwordRe.ReplaceAllStringFunc(line, func(m string) string {
			sub := passwordRe.FindStringSubmatchIndex(m)
			return m[:sub[2]] + `"***"`
		})
		findings = append(findings, agent_skill_types.Finding{
			RuleId:      "hardcoded-password",
			Title:       "Hard-coded password",
			Description: "A password is written in the file; anyone who can read it can use it.",
			Severity:    agent_skill_types.Severity_High,
			Category:    "secrets-exposure",
			Cwe:         witTypes.Some("CWE-798"),
			Owasp:       witTypes.Some("A07:2021"),
			Location: agent_skill_types.Location{
				File:        target.Path,
				StartLine:   uint32(i + 1),
				EndLine:     uint32(i + 1),
				StartColumn: column,
				EndColumn:   0,
				Function:    witTypes.None[string](),
			},
			Evidence:    evidence,
			Remediation: "Read the password from the environment or a secret store.",
			Confidence:  agent_skill_types.Confidence_High,
			References:  []string{},
			Metadata:    []witTypes.Tuple2[string, string]{},
		})
	}
	return witTypes.Ok[[]agent_skill_types.Finding, agent_skill_types.SkillError](findings)
}
