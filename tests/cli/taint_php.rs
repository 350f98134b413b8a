//! PHP through the real binary (issue 16): a page with HTML around
//! `<?php` is parsed by the bundled PHP grammar, request data reaching SQL,
//! the page and `include` is found with its flow (JSON and schema-valid
//! SARIF `codeFlows`), the escaped, cast and allowlisted look-alikes are
//! quiet, and the call checks report a weak password hash and a cookie
//! without `secure`.

use super::security::{audit_json, sandbox, triples};

const PAGE: &str = r#"<!doctype html>
<html><body>
<?php
$id = $_GET["id"];
$rows = mysqli_query($link, "SELECT * FROM items WHERE id = " . $id);
$safe = intval($_GET["id"]);
$ok = mysqli_query($link, "SELECT * FROM items WHERE id = " . $safe);
echo "<h1>" . $_GET["q"] . "</h1>";
echo "<h1>" . htmlspecialchars($_GET["q"], ENT_QUOTES) . "</h1>";
$page = in_array($_GET["p"] ?? "", ["home", "about"], true) ? $_GET["p"] : "home";
include "pages/" . $page . ".php";
include "pages/" . $_GET["raw"] . ".php";
$hash = md5($_POST["password"]);
setcookie("sid", $sid, time() + 3600, "/", "", false, true);
?>
</body></html>
"#;

#[test]
fn a_php_page_is_analysed_with_flows_and_its_safe_look_alikes_are_quiet() {
    let sb = sandbox();
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(dir.path().join("index.php"), PAGE).expect("write");
    let (c, report, stderr) = audit_json(&sb, dir.path(), &[]);
    assert_eq!(c, 1, "{stderr}");
    let got = triples(&report);
    let want = [
        ("PHP-COOKIE-001", 14),
        ("PHP-CRYPTO-001", 13),
        ("PHP-TAINT-PATH", 12),
        ("PHP-TAINT-SQLI", 5),
        ("PHP-TAINT-XSS", 8),
    ];
    let expected: Vec<(String, String, u32)> = want
        .iter()
        .map(|(r, l)| (r.to_string(), "index.php".to_string(), *l))
        .collect();
    assert_eq!(got, expected, "{stderr}");

    // The flow: the superglobal, the assignment, the query.
    let sqli = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["rule_id"] == "PHP-TAINT-SQLI")
        .expect("PHP-TAINT-SQLI");
    assert_eq!(sqli["cwe"], "CWE-89");
    let lines: Vec<u64> = sqli["flow"]
        .as_array()
        .expect("flow")
        .iter()
        .map(|s| s["line"].as_u64().expect("line"))
        .collect();
    assert_eq!(lines, [4, 5], "{sqli:#}");
    assert!(
        sqli["flow"][0]["note"]
            .as_str()
            .is_some_and(|n| n.contains("$_GET")),
        "{sqli:#}"
    );

    // SARIF: schema-valid, the PHP result with its code flow.
    let results = super::taint::sarif_results(&sb, dir.path());
    let (_, locations) = super::taint::thread_flow(&results, "PHP-TAINT-XSS");
    assert_eq!(locations[0]["kinds"][0], "source");
    assert_eq!(
        locations.last().expect("sink")["location"]["physicalLocation"]["region"]["startLine"],
        8
    );
}
