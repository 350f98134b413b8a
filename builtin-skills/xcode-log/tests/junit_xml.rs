//! JUnit XML from parsed test results: well-formed (checked by a small
//! XML 1.0 well-formedness checker below), escaped, with the counts.

use xcode_log::junit::junit;
use xcode_log::{Framework, Options, TestFailure, TestResult, TestStatus, parse_str};

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Checks XML well-formedness: one root, tags nested and closed in order,
/// attributes quoted and unique, `&` only in the five predefined entities or
/// character references, no `<` in text or attribute values, only chars XML
/// 1.0 allows. Returns the element names in document order.
fn check_well_formed(xml: &str) -> Result<Vec<String>, String> {
    let body = xml
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
        .ok_or("no XML declaration")?;
    let mut stack: Vec<String> = Vec::new();
    let mut names = Vec::new();
    let mut roots = 0;
    let mut rest = body;
    let check_text = |t: &str| -> Result<(), String> {
        if let Some(c) = t
            .chars()
            .find(|&c| (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r'))
        {
            return Err(format!("control character {:?}", c));
        }
        let mut parts = t.split('&');
        parts.next();
        for p in parts {
            let end = p.find(';').ok_or_else(|| format!("bare & before {p:?}"))?;
            let entity = &p[..end];
            let ok = matches!(entity, "amp" | "lt" | "gt" | "quot" | "apos")
                || (entity.starts_with('#')
                    && entity[1..]
                        .trim_start_matches('x')
                        .chars()
                        .all(|c| c.is_ascii_hexdigit()));
            if !ok {
                return Err(format!("unknown entity &{entity};"));
            }
        }
        Ok(())
    };
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            if !rest.trim().is_empty() && stack.is_empty() {
                return Err("text after the root".into());
            }
            check_text(rest)?;
            break;
        };
        let text = &rest[..lt];
        if stack.is_empty() && !text.trim().is_empty() {
            return Err(format!("text outside the root: {text:?}"));
        }
        check_text(text)?;
        let gt = rest[lt..].find('>').ok_or("unclosed tag")? + lt;
        let tag = &rest[lt + 1..gt];
        rest = &rest[gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack
                .pop()
                .ok_or_else(|| format!("</{name}> closes nothing"))?;
            if open != name {
                return Err(format!("</{name}> closes <{open}>"));
            }
            continue;
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let name_end = tag.find(char::is_whitespace).unwrap_or(tag.len());
        let name = &tag[..name_end];
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(format!("bad element name {name:?}"));
        }
        let mut attrs = tag[name_end..].trim();
        let mut seen = Vec::new();
        while !attrs.is_empty() {
            let eq = attrs
                .find('=')
                .ok_or_else(|| format!("attribute without value in <{name}>"))?;
            let key = attrs[..eq].trim();
            if seen.contains(&key) {
                return Err(format!("duplicate attribute {key}"));
            }
            seen.push(key);
            let after = &attrs[eq + 1..];
            let value = after
                .strip_prefix('"')
                .ok_or_else(|| format!("unquoted {key}"))?;
            let close = value
                .find('"')
                .ok_or_else(|| format!("unterminated {key}"))?;
            let v = &value[..close];
            if v.contains('<') {
                return Err(format!("< in attribute {key}"));
            }
            check_text(v)?;
            attrs = value[close + 1..].trim_start();
        }
        if stack.is_empty() {
            roots += 1;
            if roots > 1 {
                return Err("two roots".into());
            }
        }
        names.push(name.to_string());
        if !self_closing {
            stack.push(name.to_string());
        }
    }
    if let Some(open) = stack.pop() {
        return Err(format!("<{open}> never closed"));
    }
    Ok(names)
}

#[test]
fn the_checker_rejects_what_is_not_well_formed() {
    let decl = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";
    for bad in [
        "<a><b></a></b>",
        "<a>x & y</a>",
        "<a b=\"<\"/>",
        "<a b=c/>",
        "<a/><b/>",
        "<a>\u{1}</a>",
        "<a>",
        "<a b=\"1\" b=\"2\"/>",
    ] {
        assert!(check_well_formed(&format!("{decl}{bad}")).is_err(), "{bad}");
    }
    assert!(check_well_formed(&format!("{decl}<a b=\"&amp;&#38;\"><c/>t &lt;</a>\n")).is_ok());
}

#[test]
fn junit_of_a_real_test_log_is_well_formed_and_counts_right() {
    let r = parse_str(&fixture("swift-test-linux.log"), Options::default());
    let xml = junit("DemoKit <tests> & more", &r.tests);
    let names = check_well_formed(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    assert_eq!(
        names.iter().filter(|n| *n == "testcase").count(),
        r.tests.len()
    );
    assert!(xml.contains("<testsuites name=\"DemoKit &lt;tests&gt; &amp; more\" tests=\"5\" failures=\"2\" skipped=\"1\""));
    assert!(
        xml.contains("<testsuite name=\"FormatterTests\" tests=\"2\" failures=\"1\" skipped=\"0\"")
    );
    assert!(
        xml.contains("<testsuite name=\"Swift Testing\" tests=\"3\" failures=\"1\" skipped=\"1\"")
    );
    assert!(xml.contains(
        "<testcase classname=\"Swift Testing\" name=\"Parses a quoted field\" time=\"0.003\">"
    ));
    assert!(xml.contains(
        "<failure message=\"Expectation failed: (fields.count → 1) == 2\">ParserTests.swift:21:9: Expectation failed: (fields.count → 1) == 2</failure>"
    ));
    assert!(xml.contains("<skipped/>"));
}

#[test]
fn junit_escapes_markup_quotes_and_drops_forbidden_characters() {
    let tests = vec![TestResult {
        suite: "Mod.\"Quoted\"<Suite>".into(),
        name: "test'<&>".into(),
        status: TestStatus::Failed,
        duration: Some(0.5),
        failures: vec![TestFailure {
            file: "/a/T.swift".into(),
            line: 3,
            column: 0,
            message: "XCTAssertEqual failed: (\"<a&b>\") is not equal to (\"\u{1b}[31m\u{7}\")"
                .into(),
        }],
        device: None,
        framework: Framework::Xctest,
    }];
    let xml = junit("n", &tests);
    check_well_formed(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    assert!(xml.contains(
        "classname=\"Mod.&quot;Quoted&quot;&lt;Suite&gt;\" name=\"test&apos;&lt;&amp;&gt;\""
    ));
    assert!(xml.contains("/a/T.swift:3: XCTAssertEqual failed: (&quot;&lt;a&amp;b&gt;&quot;) is not equal to (&quot;[31m&quot;)"));
}

#[test]
fn junit_of_no_tests_is_an_empty_well_formed_document() {
    let xml = junit("empty", &[]);
    assert_eq!(check_well_formed(&xml).unwrap(), ["testsuites"]);
}
