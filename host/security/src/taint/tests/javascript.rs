//! JavaScript and TypeScript: Express handlers, Node sinks, the DOM.

use super::hits;

#[test]
fn express_query_into_sql_shell_files_and_responses() {
    let bad = r#"
app.get("/u", (req, res) => {
  const id = req.query.id;
  db.query(`SELECT * FROM users WHERE id = ${id}`);
  exec("ls " + req.params.dir);
  fs.readFile("/data/" + req.body.file, cb);
  res.send("<p>" + id + "</p>");
  res.redirect(req.query.next);
});
"#;
    assert_eq!(
        hits("javascript", bad),
        vec![
            ("JS-TAINT-CMDI".into(), 5),
            ("JS-TAINT-PATH".into(), 6),
            ("JS-TAINT-REDIRECT".into(), 8),
            ("JS-TAINT-SQLI".into(), 4),
            ("JS-TAINT-XSS".into(), 7),
        ]
    );
    let safe = r#"
app.get("/u", (req, res) => {
  const id = parseInt(req.query.id, 10);
  db.query("SELECT * FROM users WHERE id = ?", [req.query.id]);
  db.query(`SELECT * FROM users WHERE id = ${id}`);
  res.send("<p>" + escapeHtml(req.query.name) + "</p>");
  exec("ls /tmp");
});
"#;
    assert!(
        hits("javascript", safe).is_empty(),
        "{:?}",
        hits("javascript", safe)
    );
}

#[test]
fn typescript_eval_and_dom_sinks() {
    let bad = r#"
function show(req: Request): void {
  const code: string = req.body.code;
  eval(code);
  document.getElementById("x").innerHTML = location.hash;
}
"#;
    assert_eq!(
        hits("typescript", bad),
        vec![("JS-TAINT-CODE".into(), 4), ("JS-TAINT-XSS".into(), 5)]
    );
    let safe = "function f(): void {\n  eval(\"1 + 1\");\n  el.innerHTML = \"<b>hi</b>\";\n}\n";
    assert!(hits("typescript", safe).is_empty());
}
