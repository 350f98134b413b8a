// Package skill is the database tool skill: read-only SQL against the
// project's PostgreSQL database through `psql`, run by the host's exec
// capability (permission shell:exec, program allowlist `exec: [psql]`).
//
// The connection string comes from `url` in [skills.config.database] of the
// user's config.toml, or else from DATABASE_URL (permission env:read, named
// in the manifest's `env:`).
package skill

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"

	"wit_component/agent_skill_config"
	"wit_component/agent_skill_exec"
	"wit_component/agent_skill_log"
	"wit_component/agent_skill_types"
	"wit_component/agentsdk"

	witTypes "go.bytecodealliance.org/pkg/wit/types"
)

const (
	querySchema  = `{"type":"object","properties":{"query":{"type":"string","description":"One read-only SQL statement: SELECT, WITH … SELECT, EXPLAIN, SHOW, TABLE or VALUES. No ` + "`;`" + `-separated statements."},"max_rows":{"type":"integer","minimum":1,"maximum":1000,"description":"Rows to show (default 100); the rest are counted, not shown."}},"required":["query"],"additionalProperties":false}`
	schemaSchema = `{"type":"object","properties":{"table":{"type":"string","description":"Only this table (` + "`name` or `schema.name`" + `); every table when absent."}},"additionalProperties":false}`

	defaultRows = 100
	timeoutMs   = 30_000
)

// ListTools describes the two tools (the manifest declares the same).
func ListTools() []agent_skill_types.ToolSpec {
	return []agent_skill_types.ToolSpec{
		{
			Name:             "db_query",
			Description:      "Execute a read-only SQL query against the project database",
			InputSchema:      querySchema,
			RequiresApproval: true,
		},
		{
			Name:             "db_schema",
			Description:      "Show database schema (tables, columns, types)",
			InputSchema:      schemaSchema,
			RequiresApproval: false,
		},
	}
}

// CallTool runs tool `name` with its JSON input.
func CallTool(name string, input string) agentsdk.Result {
	switch name {
	case "db_query":
		return dbQuery(input)
	case "db_schema":
		return dbSchema(input)
	default:
		return agentsdk.NotFound("tool", name)
	}
}

func dbQuery(input string) agentsdk.Result {
	var args struct {
		Query   string `json:"query"`
		MaxRows *int   `json:"max_rows"`
	}
	if err := json.Unmarshal([]byte(input), &args); err != nil {
		return agentsdk.InvalidInput("input is not a JSON object with a `query` string: " + err.Error())
	}
	statement, err := readOnly(args.Query)
	if err != nil {
		return agentsdk.InvalidInput("refused: " + err.Error())
	}
	limit := defaultRows
	if args.MaxRows != nil {
		if *args.MaxRows < 1 || *args.MaxRows > 1000 {
			return agentsdk.InvalidInput("`max_rows` must be between 1 and 1000")
		}
		limit = *args.MaxRows
	}
	table, failed := psql(statement)
	if failed != nil {
		return *failed
	}
	return agentsdk.Ok(table.render(limit))
}

// Table names for db_schema: `name` or `schema.name`, unquoted identifiers.
var tableName = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_$]*\.)?[A-Za-z_][A-Za-z0-9_$]*$`)

func dbSchema(input string) agentsdk.Result {
	var args struct {
		Table string `json:"table"`
	}
	if err := json.Unmarshal([]byte(input), &args); err != nil {
		return agentsdk.InvalidInput("input is not a JSON object: " + err.Error())
	}
	query := "SELECT table_schema, table_name, column_name, data_type, is_nullable " +
		"FROM information_schema.columns " +
		"WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
	if args.Table != "" {
		if !tableName.MatchString(args.Table) {
			return agentsdk.InvalidInput("`table` must be `name` or `schema.name` (letters, digits, `_`)")
		}
		if schema, name, ok := strings.Cut(args.Table, "."); ok {
			query += " AND table_schema = '" + schema + "' AND table_name = '" + name + "'"
		} else {
			query += " AND table_name = '" + args.Table + "'"
		}
	}
	query += " ORDER BY table_schema, table_name, ordinal_position"
	result, failed := psql(query)
	if failed != nil {
		return *failed
	}
	if len(result.rows) == 0 {
		if args.Table != "" {
			return agentsdk.InvalidInput("no table named `" + args.Table + "`")
		}
		return agentsdk.Ok("The database has no tables (outside pg_catalog and information_schema).")
	}
	var out strings.Builder
	width, typeWidth := 0, 0
	for _, row := range result.rows {
		if len(row) == 5 {
			width = max(width, utf8.RuneCountInString(row[2]))
			typeWidth = max(typeWidth, utf8.RuneCountInString(row[3]))
		}
	}
	current := ""
	for _, row := range result.rows {
		if len(row) != 5 {
			continue
		}
		if name := row[0] + "." + row[1]; name != current {
			current = name
			out.WriteString(name + "\n")
		}
		null := "null"
		if row[4] == "NO" {
			null = "not null"
		}
		fmt.Fprintf(&out, "  %s  %s  %s\n", pad(row[2], width), pad(row[3], typeWidth), null)
	}
	if result.truncated {
		out.WriteString("(output cut at the host's size limit: ask for one table)\n")
	}
	return agentsdk.Ok(strings.TrimSuffix(out.String(), "\n"))
}

// connection is the database URL: config `url` first, then DATABASE_URL.
func connection() (string, *agentsdk.Result) {
	if value := agent_skill_config.Get("url"); value.IsSome() {
		var url string
		if err := json.Unmarshal([]byte(value.Some()), &url); err != nil || strings.TrimSpace(url) == "" {
			r := agentsdk.Failed("`url` in [skills.config.database] of config.toml must be a non-empty string")
			return "", &r
		}
		return url, nil
	}
	if url := os.Getenv("DATABASE_URL"); url != "" {
		return url, nil
	}
	r := agentsdk.Failed("no database configured: set `url` in [skills.config.database] of config.toml, " +
		"or DATABASE_URL in the environment and grant it (`--allow database/env:read:DATABASE_URL`)")
	return "", &r
}

type table struct {
	header    []string
	rows      [][]string
	truncated bool
}

// psql runs one statement inside a read-only transaction and reads its CSV.
func psql(statement string) (table, *agentsdk.Result) {
	url, failed := connection()
	if failed != nil {
		return table{}, failed
	}
	agent_skill_log.Log(agent_skill_types.LogLevel_Debug, "psql: "+statement)
	result := agent_skill_exec.Run(agent_skill_exec.ExecRequest{
		Program: "psql",
		Args: []string{
			"-X", "-q", "-v", "ON_ERROR_STOP=1", "--csv", "--dbname", url,
			"-c", "BEGIN TRANSACTION READ ONLY",
			"-c", statement,
			"-c", "ROLLBACK",
		},
		Cwd:       witTypes.None[string](),
		Env:       []witTypes.Tuple2[string, string]{},
		Stdin:     witTypes.None[[]uint8](),
		TimeoutMs: witTypes.Some[uint32](timeoutMs),
	})
	if result.IsErr() {
		r := agentsdk.FromCapability(result.Err())
		return table{}, &r
	}
	out := result.Ok()
	if out.TimedOut {
		r := agentsdk.Failed(fmt.Sprintf("psql did not finish within %d s", timeoutMs/1000))
		return table{}, &r
	}
	if out.ExitCode.IsNone() || out.ExitCode.Some() != 0 {
		code := "killed"
		if out.ExitCode.IsSome() {
			code = fmt.Sprintf("exit %d", out.ExitCode.Some())
		}
		r := agentsdk.Failed(fmt.Sprintf("psql failed (%s): %s", code, strings.TrimSpace(out.Stderr)))
		return table{}, &r
	}
	t, err := parseCSV(out.Stdout, out.Truncated)
	if err != nil {
		r := agentsdk.Failed("could not read psql's CSV output: " + err.Error())
		return table{}, &r
	}
	return t, nil
}

// parseCSV reads psql's --csv output: a header, then one record per row.
// When the host cut the output, the last, possibly partial record is dropped.
func parseCSV(text string, truncated bool) (table, error) {
	reader := csv.NewReader(strings.NewReader(text))
	reader.FieldsPerRecord = -1
	var records [][]string
	for {
		record, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if truncated {
				break
			}
			return table{}, err
		}
		records = append(records, record)
	}
	if truncated && len(records) > 1 && !strings.HasSuffix(text, "\n") {
		records = records[:len(records)-1]
	}
	t := table{truncated: truncated}
	if len(records) > 0 {
		t.header, t.rows = records[0], records[1:]
	}
	return t, nil
}

// render is an aligned text table with at most `limit` rows.
func (t table) render(limit int) string {
	if len(t.header) == 0 {
		return "(no result set)"
	}
	shown := t.rows
	if len(shown) > limit {
		shown = shown[:limit]
	}
	widths := make([]int, len(t.header))
	for i, h := range t.header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, row := range shown {
		for i := range widths {
			if i < len(row) {
				widths[i] = max(widths[i], utf8.RuneCountInString(cell(row[i])))
			}
		}
	}
	var out strings.Builder
	line := func(cells []string) {
		parts := make([]string, len(widths))
		for i := range widths {
			value := ""
			if i < len(cells) {
				value = cell(cells[i])
			}
			parts[i] = pad(value, widths[i])
		}
		out.WriteString(strings.TrimRight(strings.Join(parts, " | "), " ") + "\n")
	}
	line(t.header)
	rule := make([]string, len(widths))
	for i, w := range widths {
		rule[i] = strings.Repeat("-", w)
	}
	out.WriteString(strings.Join(rule, "-+-") + "\n")
	for _, row := range shown {
		line(row)
	}
	switch {
	case t.truncated:
		fmt.Fprintf(&out, "(%d rows shown; the output was cut at the host's size limit: add a LIMIT or select fewer columns)", len(shown))
	case len(t.rows) > len(shown):
		fmt.Fprintf(&out, "(%d rows, first %d shown)", len(t.rows), len(shown))
	case len(t.rows) == 1:
		out.WriteString("(1 row)")
	default:
		fmt.Fprintf(&out, "(%d rows)", len(t.rows))
	}
	return out.String()
}

// cell shows a value on one line.
func cell(value string) string {
	return strings.NewReplacer("\r", `\r`, "\n", `\n`, "\t", `\t`).Replace(value)
}

func pad(value string, width int) string {
	return value + strings.Repeat(" ", width-utf8.RuneCountInString(value))
}
