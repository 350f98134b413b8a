package skill

import (
	"fmt"
	"strings"
)

// The read-only guard. It reads the statement the way PostgreSQL's lexer
// does (string literals, quoted identifiers, dollar quotes, comments), so
// keywords and `;` inside literals or comments do not count, and refuses
// anything that is not a single reading statement. The server enforces it
// again: every query runs inside `BEGIN TRANSACTION READ ONLY`.

// Statements that may start a query.
var allowedFirst = map[string]bool{
	"SELECT": true, "WITH": true, "EXPLAIN": true, "SHOW": true, "TABLE": true, "VALUES": true,
}

// Keywords refused anywhere in the statement. The first keyword is already
// a reading one, so these are what can hide inside a reading statement:
// writes in a writable CTE (`WITH d AS (DELETE …) SELECT …`) or under
// `EXPLAIN ANALYZE`, `SELECT … INTO` (creates a table), `EXPLAIN CREATE
// TABLE … AS`, `EXPLAIN EXECUTE`, and DDL, privilege and COPY words that no
// reading statement contains. Row locks (`FOR UPDATE`, `FOR SHARE`, …) are
// checked separately.
var refusedKeywords = map[string]string{
	"INSERT": "writes", "UPDATE": "writes or row locks", "DELETE": "writes", "MERGE": "writes",
	"TRUNCATE": "writes", "INTO": "`SELECT … INTO` creates a table",
	"CREATE": "changes the schema", "ALTER": "changes the schema", "DROP": "changes the schema",
	"GRANT": "changes privileges", "REVOKE": "changes privileges",
	"COPY": "reads or writes files", "CALL": "runs procedures",
	"EXECUTE": "runs prepared statements", "PREPARE": "prepares statements",
	"DECLARE": "opens cursors",
}

// Functions refused when called: they act on the server or read its files
// even inside a read-only transaction.
var refusedFunctions = map[string]bool{
	"PG_TERMINATE_BACKEND": true, "PG_CANCEL_BACKEND": true, "PG_RELOAD_CONF": true,
	"PG_ROTATE_LOGFILE": true, "SET_CONFIG": true, "PG_NOTIFY": true,
	"PG_ADVISORY_LOCK": true, "PG_ADVISORY_XACT_LOCK": true, "PG_ADVISORY_LOCK_SHARED": true,
	"PG_ADVISORY_XACT_LOCK_SHARED": true, "PG_TRY_ADVISORY_LOCK": true, "PG_TRY_ADVISORY_XACT_LOCK": true,
	"PG_TRY_ADVISORY_LOCK_SHARED": true, "PG_TRY_ADVISORY_XACT_LOCK_SHARED": true,
	"PG_READ_FILE": true, "PG_READ_BINARY_FILE": true, "PG_LS_DIR": true, "PG_STAT_FILE": true,
	"LO_IMPORT": true, "LO_EXPORT": true, "LO_UNLINK": true, "LO_CREATE": true, "LO_FROM_BYTEA": true,
	"DBLINK": true, "DBLINK_EXEC": true, "DBLINK_CONNECT": true, "PG_SLEEP": true,
	"PG_SLEEP_FOR": true, "PG_SLEEP_UNTIL": true, "NEXTVAL": true, "SETVAL": true,
	"TXID_CURRENT": true, "PG_CURRENT_XACT_ID": true, "QUERY_TO_XML": true,
	"PG_CREATE_RESTORE_POINT": true, "PG_SWITCH_WAL": true, "PG_LOGICAL_EMIT_MESSAGE": true,
}

type token struct {
	word  string // upper-cased bare word, or "" for punctuation
	punct byte   // '(' ')' ';' ',' or 0
}

// readOnly checks `sql` and returns the statement to run (without a
// trailing `;`), or why it is refused.
func readOnly(sql string) (string, error) {
	tokens, end, err := lex(sql)
	if err != nil {
		return "", err
	}
	statement := strings.TrimSpace(sql[:end])
	if len(tokens) == 0 {
		return "", fmt.Errorf("the query is empty")
	}
	first := ""
	for _, t := range tokens {
		if t.punct == '(' {
			continue
		}
		first = t.word
		break
	}
	if !allowedFirst[first] {
		shown := first
		if shown == "" {
			shown = "punctuation"
		}
		return "", fmt.Errorf("only read-only queries are allowed (SELECT, WITH … SELECT, EXPLAIN, SHOW, TABLE, VALUES); this one starts with %s", shown)
	}
	for i, t := range tokens {
		if t.word == "" {
			continue
		}
		if why, refused := refusedKeywords[t.word]; refused {
			return "", fmt.Errorf("`%s` is not allowed in a read-only query (%s)", t.word, why)
		}
		if refusedFunctions[t.word] && i+1 < len(tokens) && tokens[i+1].punct == '(' {
			return "", fmt.Errorf("function `%s` is not allowed in a read-only query", strings.ToLower(t.word))
		}
		if t.word == "FOR" && i+1 < len(tokens) {
			switch tokens[i+1].word {
			case "UPDATE", "SHARE", "NO", "KEY":
				return "", fmt.Errorf("row locks (`FOR UPDATE`, `FOR SHARE`, …) are not allowed in a read-only query")
			}
		}
	}
	return statement, nil
}

// lex splits `sql` into words and punctuation outside literals and comments.
// `end` is where the statement ends: before a final `;` (only whitespace and
// comments may follow it). A second statement, an unterminated literal or
// comment, or a psql backslash command is an error.
func lex(sql string) (tokens []token, end int, err error) {
	end = len(sql)
	terminated := false
	i := 0
	for i < len(sql) {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			depth := 0
			for {
				if i+1 >= len(sql) {
					return nil, 0, fmt.Errorf("unterminated /* comment")
				}
				if sql[i] == '/' && sql[i+1] == '*' {
					depth++
					i += 2
				} else if sql[i] == '*' && sql[i+1] == '/' {
					depth--
					i += 2
					if depth == 0 {
						break
					}
				} else {
					i++
				}
			}
		case terminated:
			return nil, 0, fmt.Errorf("only one statement is allowed: found more after `;`")
		case c == ';':
			terminated = true
			end = i
			i++
		case c == '\'':
			n, err := quoted(sql, i, '\'', false)
			if err != nil {
				return nil, 0, err
			}
			i = n
			tokens = append(tokens, token{word: "'"})
		case c == '"':
			n, err := quoted(sql, i, '"', false)
			if err != nil {
				return nil, 0, err
			}
			i = n
			tokens = append(tokens, token{word: `"`})
		case c == '$' && dollarTag(sql, i) != "":
			tag := dollarTag(sql, i)
			close := strings.Index(sql[i+len(tag):], tag)
			if close < 0 {
				return nil, 0, fmt.Errorf("unterminated dollar-quoted string %s", tag)
			}
			i += len(tag) + close + len(tag)
			tokens = append(tokens, token{word: "$"})
		case c == '\\':
			return nil, 0, fmt.Errorf("backslash commands are not allowed")
		case isWordStart(c):
			start := i
			for i < len(sql) && isWordPart(sql[i]) {
				i++
			}
			word := strings.ToUpper(sql[start:i])
			// E'…' (escape strings), B'…', X'…', U&'…': a literal prefix.
			if i < len(sql) && sql[i] == '\'' && (word == "E" || word == "B" || word == "X" || word == "N") {
				n, err := quoted(sql, i, '\'', word == "E")
				if err != nil {
					return nil, 0, err
				}
				i = n
				tokens = append(tokens, token{word: "'"})
				continue
			}
			if word == "U" && strings.HasPrefix(sql[i:], "&'") || word == "U" && strings.HasPrefix(sql[i:], `&"`) {
				n, err := quoted(sql, i+1, sql[i+1], false)
				if err != nil {
					return nil, 0, err
				}
				i = n
				tokens = append(tokens, token{word: "'"})
				continue
			}
			tokens = append(tokens, token{word: word})
		case c == '(' || c == ')' || c == ',':
			tokens = append(tokens, token{punct: c})
			i++
		default:
			i++
		}
	}
	return tokens, end, nil
}

// quoted returns the index just past the literal that starts at sql[i]
// (a doubled quote is an escaped quote; in E'' strings so is \').
func quoted(sql string, i int, q byte, backslash bool) (int, error) {
	i++
	for i < len(sql) {
		switch {
		case backslash && sql[i] == '\\':
			i += 2
		case sql[i] == q && i+1 < len(sql) && sql[i+1] == q:
			i += 2
		case sql[i] == q:
			return i + 1, nil
		default:
			i++
		}
	}
	if q == '"' {
		return 0, fmt.Errorf("unterminated quoted identifier")
	}
	return 0, fmt.Errorf("unterminated string literal")
}

// dollarTag is the `$tag$` that opens a dollar-quoted string at sql[i], or "".
func dollarTag(sql string, i int) string {
	j := i + 1
	for j < len(sql) && (isWordStart(sql[j]) || (j > i+1 && sql[j] >= '0' && sql[j] <= '9')) {
		j++
	}
	if j < len(sql) && sql[j] == '$' {
		return sql[i : j+1]
	}
	return ""
}

func isWordStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func isWordPart(c byte) bool {
	return isWordStart(c) || (c >= '0' && c <= '9') || c == '$'
}
