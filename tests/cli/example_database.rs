//! The `database` example (a Go tool skill), end to end: built from source
//! with `agent skill build`, checked with `agent skill test`, then run
//! through `agent skill call` against a stand-in `psql` first on PATH that
//! prints real `psql --csv` output for the statements it expects and records
//! every argv it gets. Refused statements must never reach it.

use std::path::{Path, PathBuf};

use agent_tests::{Sandbox, copy_tree, text, workspace};

use super::{code, ok, sandbox};

const URL: &str = "postgres://reader@db.internal:5432/app";

const SCHEMA_SQL: &str = "SELECT table_schema, table_name, column_name, data_type, is_nullable \
     FROM information_schema.columns WHERE table_schema NOT IN ('pg_catalog', 'information_schema') \
     ORDER BY table_schema, table_name, ordinal_position";

/// A `psql` that records its argv (one argument a line, then `--`) and
/// answers the statement (its 11th argument) like the real one with --csv.
fn fake_psql(dir: &Path, record: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir bin");
    let script = format!(
        r#"#!/bin/sh
for a in "$@"; do printf '%s\n' "$a" >> '{record}'; done
printf -- '--\n' >> '{record}'
case "${{11}}" in
  "SELECT id, email FROM users ORDER BY id")
    printf 'id,email\n1,ada@example.com\n2,"bob, jr@example.com"\n3,\n' ;;
  *information_schema.columns*)
    printf 'table_schema,table_name,column_name,data_type,is_nullable\npublic,orders,id,bigint,NO\npublic,orders,total_cents,integer,YES\npublic,users,id,integer,NO\npublic,users,email,text,YES\n' ;;
  *)
    printf 'psql:<stdin>:1: ERROR:  relation "missing" does not exist\nLINE 1: SELECT * FROM missing\n' >&2
    exit 1 ;;
esac
"#,
        record = record.display()
    );
    let psql = bin.join("psql");
    agent_tests::write_executable(&psql, &script);
    bin
}

/// The argv the skill must give psql for `statement`.
fn argv(url: &str, statement: &str) -> String {
    [
        "-X",
        "-q",
        "-v",
        "ON_ERROR_STOP=1",
        "--csv",
        "--dbname",
        url,
        "-c",
        "BEGIN TRANSACTION READ ONLY",
        "-c",
        statement,
        "-c",
        "ROLLBACK",
        "--",
    ]
    .iter()
    .map(|a| format!("{a}\n"))
    .collect()
}

struct Env {
    sb: Sandbox,
    skill: PathBuf,
    path: String,
    record: PathBuf,
    _tmp: tempfile::TempDir,
}

impl Env {
    fn call(
        &self,
        tool: &str,
        input: &str,
        allow: &[&str],
        url: Option<&str>,
    ) -> std::process::Output {
        let skill = self.skill.to_str().expect("utf-8 path");
        let mut args = vec!["skill", "call", skill, tool, "--input", input];
        for grant in allow {
            args.extend(["--allow", grant]);
        }
        let mut cmd = self.sb.agent_cmd(&args);
        cmd.env("PATH", &self.path).env_remove("DATABASE_URL");
        if let Some(url) = url {
            cmd.env("DATABASE_URL", url);
        }
        cmd.output().expect("running agent")
    }

    fn recorded(&self) -> String {
        std::fs::read_to_string(&self.record).unwrap_or_default()
    }
}

const GRANTS: &[&str] = &["shell:exec:psql", "env:read:DATABASE_URL"];

#[test]
fn example_database_builds_and_runs_only_read_only_sql_through_psql() {
    let sb = sandbox();
    let tmp = tempfile::tempdir().expect("tmp");
    let skill = tmp.path().join("database");
    copy_tree(&workspace().join("sdk-guest-examples/database"), &skill);
    for scratch in ["build", "dist"] {
        let _ = std::fs::remove_dir_all(skill.join(scratch));
    }
    let key = sb.trusted_key();
    let (key_file, _) = key.write_pair(tmp.path(), "ci").expect("key file");

    // Built from source by the real binary, signed with the trusted key.
    let built = sb.agent(&[
        "skill",
        "build",
        skill.to_str().expect("utf-8"),
        "--key",
        key_file.to_str().expect("utf-8"),
    ]);
    let stdout = ok(&built);
    assert!(stdout.contains("building database 1.0.0 (Go)"), "{stdout}");
    assert!(stdout.contains("wit-bindgen go"), "{stdout}");
    assert!(
        stdout.contains(&format!("signed with key {}", key.public().id())),
        "{stdout}"
    );
    let wasm = std::fs::read(skill.join("dist/database.wasm")).expect("component");
    assert_eq!(
        &wasm[..8],
        b"\0asm\x0d\0\x01\0",
        "a component, not a core module"
    );
    // The generated glue runs the GC guard before every export.
    let glue =
        std::fs::read_to_string(skill.join("build/go/export_agent_skill_tool/wit_bindings.go"))
            .expect("glue");
    assert!(
        glue.contains("agentsdk.Enter()\n\treturn skill.CallTool(_name, _input)"),
        "{glue}"
    );

    let tested = sb.agent(&["skill", "test", skill.to_str().expect("utf-8")]);
    let stdout = ok(&tested);
    assert!(
        stdout.contains("db_query — Execute a read-only SQL query"),
        "{stdout}"
    );
    assert!(stdout.contains("PASS  database"), "{stdout}");

    let record = tmp.path().join("psql-calls.txt");
    let bin = fake_psql(tmp.path(), &record);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = Env {
        sb,
        skill,
        path,
        record,
        _tmp: tmp,
    };

    // A query: one statement, the trailing `;` dropped, in a read-only
    // transaction, rendered as a table (NULL is empty in psql's CSV).
    let out = env.call(
        "db_query",
        r#"{"query":"SELECT id, email FROM users ORDER BY id;"}"#,
        GRANTS,
        Some(URL),
    );
    assert_eq!(
        ok(&out).trim_end(),
        "id | email\n\
         ---+--------------------\n\
         1  | ada@example.com\n\
         2  | bob, jr@example.com\n\
         3  |\n\
         (3 rows)"
    );
    let mut expected = argv(URL, "SELECT id, email FROM users ORDER BY id");
    assert_eq!(env.recorded(), expected);

    // The row cap.
    let out = env.call(
        "db_query",
        r#"{"query":"SELECT id, email FROM users ORDER BY id","max_rows":1}"#,
        GRANTS,
        Some(URL),
    );
    assert_eq!(
        ok(&out).trim_end(),
        "id | email\n---+----------------\n1  | ada@example.com\n(3 rows, first 1 shown)"
    );
    expected.push_str(&argv(URL, "SELECT id, email FROM users ORDER BY id"));
    assert_eq!(env.recorded(), expected);

    // The schema, grouped by table.
    let out = env.call("db_schema", "{}", GRANTS, Some(URL));
    assert_eq!(
        ok(&out).trim_end(),
        "public.orders\n\
         \x20 id           bigint   not null\n\
         \x20 total_cents  integer  null\n\
         public.users\n\
         \x20 id           integer  not null\n\
         \x20 email        text     null"
    );
    expected.push_str(&argv(URL, SCHEMA_SQL));
    assert_eq!(env.recorded(), expected);

    // A server error comes back as the tool's failure, with psql's message.
    let out = env.call(
        "db_query",
        r#"{"query":"SELECT * FROM missing"}"#,
        GRANTS,
        Some(URL),
    );
    let (_, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stderr}");
    assert!(
        stderr.contains(
            "database.db_query failed: psql failed (exit 1): psql:<stdin>:1: ERROR:  relation \"missing\" does not exist"
        ),
        "{stderr}"
    );
    expected.push_str(&argv(URL, "SELECT * FROM missing"));
    assert_eq!(env.recorded(), expected);

    // The connection from [skills.config.database] wins over DATABASE_URL.
    let config = env.sb.paths().config_file();
    std::fs::create_dir_all(config.parent().expect("config dir")).expect("mkdir");
    std::fs::write(
        &config,
        "[skills.config.database]\nurl = \"postgres://cfg@localhost/cfgdb\"\n",
    )
    .expect("config.toml");
    let out = env.call(
        "db_query",
        r#"{"query":"SELECT id, email FROM users ORDER BY id"}"#,
        &["shell:exec:psql"],
        None,
    );
    assert!(ok(&out).contains("(3 rows)"));
    expected.push_str(&argv(
        "postgres://cfg@localhost/cfgdb",
        "SELECT id, email FROM users ORDER BY id",
    ));
    assert_eq!(env.recorded(), expected);
    std::fs::remove_file(&config).expect("rm config.toml");

    // Refusals: never reach psql.
    let refusals = [
        (
            "DELETE FROM users",
            "refused: only read-only queries are allowed (SELECT, WITH … SELECT, EXPLAIN, SHOW, TABLE, VALUES); this one starts with DELETE",
        ),
        (
            "SELECT 1; DROP TABLE x",
            "refused: only one statement is allowed: found more after `;`",
        ),
        (
            "WITH gone AS (DELETE FROM users RETURNING *) SELECT count(*) FROM gone",
            "refused: `DELETE` is not allowed in a read-only query (writes)",
        ),
        (
            "EXPLAIN ANALYZE UPDATE users SET email = ''",
            "refused: `UPDATE` is not allowed in a read-only query (writes or row locks)",
        ),
        (
            "SELECT * INTO copy_of_users FROM users",
            "refused: `INTO` is not allowed in a read-only query (`SELECT … INTO` creates a table)",
        ),
        (
            "SELECT * FROM users FOR SHARE",
            "refused: row locks (`FOR UPDATE`, `FOR SHARE`, …) are not allowed in a read-only query",
        ),
        (
            "COPY users TO '/tmp/x'",
            "refused: only read-only queries are allowed (SELECT, WITH … SELECT, EXPLAIN, SHOW, TABLE, VALUES); this one starts with COPY",
        ),
        (
            "SELECT pg_terminate_backend(42)",
            "refused: function `pg_terminate_backend` is not allowed in a read-only query",
        ),
        (
            "\\! rm -rf /",
            "refused: backslash commands are not allowed",
        ),
        (
            "SELECT 'it''s' /* unterminated",
            "refused: unterminated /* comment",
        ),
    ];
    for (query, message) in refusals {
        let input = serde_json::json!({ "query": query }).to_string();
        let out = env.call("db_query", &input, GRANTS, Some(URL));
        let (stdout, stderr) = text(&out);
        assert_eq!(code(&out), 1, "{query}: {stdout}{stderr}");
        assert!(
            stderr.contains(&format!("database.db_query invalid input: {message}")),
            "{query}: {stderr}"
        );
        assert_eq!(env.recorded(), expected, "{query} reached psql");
    }

    // `;` and keywords inside literals and comments are not statements.
    let out = env.call(
        "db_query",
        r#"{"query":"SELECT ';' AS \"DELETE;\" -- ; DROP TABLE x\n;  /* ; */"}"#,
        GRANTS,
        Some(URL),
    );
    assert_eq!(code(&out), 1);
    expected.push_str(&argv(URL, "SELECT ';' AS \"DELETE;\" -- ; DROP TABLE x"));
    assert_eq!(env.recorded(), expected);

    // Without the exec grant the host refuses (exit 4) before psql runs.
    let out = env.call(
        "db_query",
        r#"{"query":"SELECT 1"}"#,
        &["env:read:DATABASE_URL"],
        Some(URL),
    );
    let (_, stderr) = text(&out);
    assert_eq!(code(&out), 4, "{stderr}");
    assert!(
        stderr.contains("grant it with --allow database/shell:exec:psql"),
        "{stderr}"
    );
    assert_eq!(env.recorded(), expected);

    // No connection configured: a clear failure, psql not run.
    let out = env.call("db_query", r#"{"query":"SELECT 1"}"#, GRANTS, None);
    let (_, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stderr}");
    assert!(stderr.contains("no database configured"), "{stderr}");
    assert_eq!(env.recorded(), expected);
}
