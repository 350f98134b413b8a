//! Go: net/http and gin sources.

use super::hits;

#[test]
fn net_http_form_values_into_sql_commands_and_responses() {
    let bad = r#"
package main

func handler(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	rows, _ := db.Query("SELECT * FROM users WHERE name = '" + name + "'")
	cmd := exec.Command("sh", "-c", "echo "+r.FormValue("msg"))
	fmt.Fprintf(w, "<p>%s</p>", name)
	http.Redirect(w, r, r.FormValue("next"), 302)
}
"#;
    assert_eq!(
        hits("go", bad),
        vec![
            ("GO-TAINT-CMDI".into(), 7),
            ("GO-TAINT-REDIRECT".into(), 9),
            ("GO-TAINT-SQLI".into(), 6),
            ("GO-TAINT-XSS".into(), 8),
        ]
    );
    let safe = r#"
package main

func handler(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	rows, _ := db.Query("SELECT * FROM users WHERE name = $1", name)
	fmt.Fprintf(w, "<p>%s</p>", html.EscapeString(name))
	id, _ := strconv.Atoi(name)
	db.Exec(fmt.Sprintf("DELETE FROM t WHERE id = %d", id))
}
"#;
    assert!(hits("go", safe).is_empty(), "{:?}", hits("go", safe));
}

#[test]
fn gin_query_into_a_file_path() {
    let bad = "package main\n\nfunc h(c *gin.Context) {\n\tf := c.Query(\"f\")\n\tdata, _ := os.ReadFile(\"/srv/\" + f)\n\t_ = data\n}\n";
    assert_eq!(hits("go", bad), vec![("GO-TAINT-PATH".into(), 5)]);
    let safe = bad.replace("\"/srv/\" + f", "\"/srv/\" + filepath.Base(f)");
    assert!(hits("go", &safe).is_empty());
}
