use super::*;

/// The single capture of the single match, or a panic saying what came back.
fn one(language: &str, source: &str, q: &str) -> Capture {
    let matches = query(language, source, q).unwrap_or_else(|e| panic!("{language}: {e}"));
    assert_eq!(matches.len(), 1, "{language}: {matches:#?}");
    assert_eq!(matches[0].captures.len(), 1, "{language}: {matches:#?}");
    matches[0].captures[0].clone()
}

/// (name, text, start line, start column, end line, end column)
fn pos(c: &Capture) -> (&str, &str, u32, u32, u32, u32) {
    (
        &c.name,
        &c.text,
        c.start_line,
        c.start_column,
        c.end_line,
        c.end_column,
    )
}

/// (language, source, query, (text, start line, start column, end line, end column))
type Case = (
    &'static str,
    &'static str,
    &'static str,
    (&'static str, u32, u32, u32, u32),
);

#[test]
fn every_language_parses_and_queries_with_positions() {
    let cases: &[Case] = &[
        (
            "python",
            "x = 1\ndef foo():\n    pass\n",
            "(function_definition name: (identifier) @name)",
            ("foo", 2, 5, 2, 8),
        ),
        (
            "javascript",
            "let a = 1;\nfunction foo() {}\n",
            "(function_declaration name: (identifier) @name)",
            ("foo", 2, 10, 2, 13),
        ),
        (
            "typescript",
            "let a: number = 1;\ninterface Foo { x: string }\n",
            "(interface_declaration name: (type_identifier) @name)",
            ("Foo", 2, 11, 2, 14),
        ),
        (
            "tsx",
            "let a: number = 1;\nconst x = <div />;\n",
            "(jsx_self_closing_element) @name",
            ("<div />", 2, 11, 2, 18),
        ),
        (
            "go",
            "package main\n\nfunc Foo() {}\n",
            "(function_declaration name: (identifier) @name)",
            ("Foo", 3, 6, 3, 9),
        ),
        (
            "java",
            "class A {\n  void run() {}\n}\n",
            "(method_declaration name: (identifier) @name)",
            ("run", 2, 8, 2, 11),
        ),
        (
            "rust",
            "fn main() {}\n",
            "(function_item name: (identifier) @name)",
            ("main", 1, 4, 1, 8),
        ),
        (
            "swift",
            "let x = 1\nfunc greet() {}\n",
            "(function_declaration name: (simple_identifier) @name)",
            ("greet", 2, 6, 2, 11),
        ),
        (
            "ruby",
            "x = 1\ndef hello\nend\n",
            "(method name: (identifier) @name)",
            ("hello", 2, 5, 2, 10),
        ),
        (
            "c",
            "int x;\nint main(void) { return 0; }\n",
            "(function_declarator declarator: (identifier) @name)",
            ("main", 2, 5, 2, 9),
        ),
        (
            "cpp",
            "#include <x>\nclass Foo {};\n",
            "(class_specifier name: (type_identifier) @name)",
            ("Foo", 2, 7, 2, 10),
        ),
        (
            "objective-c",
            "#import <Foundation/Foundation.h>\n@interface Vault : NSObject\n@end\n",
            "(class_interface . (identifier) @name)",
            ("Vault", 2, 12, 2, 17),
        ),
        (
            "php",
            "<html><?php\nfunction greet() {}\n",
            "(function_definition name: (name) @name)",
            ("greet", 2, 10, 2, 15),
        ),
    ];
    let covered: Vec<&str> = cases.iter().map(|c| c.0).collect();
    assert_eq!(covered, languages(), "one case per bundled language");
    for (language, source, q, (text, sl, sc, el, ec)) in cases {
        let c = one(language, source, q);
        assert_eq!(
            pos(&c),
            ("name", *text, *sl, *sc, *el, *ec),
            "{language}: {c:?}"
        );
        assert_eq!(
            &source[c.start_byte as usize..c.end_byte as usize],
            *text,
            "{language}: byte offsets"
        );
    }
}

#[test]
fn multi_line_nodes_end_just_past_their_last_character() {
    let c = one(
        "python",
        "x = 1\ndef foo():\n    pass\n",
        "(function_definition) @f",
    );
    assert_eq!(pos(&c), ("f", "def foo():\n    pass", 2, 1, 3, 9));
    assert_eq!((c.start_byte, c.end_byte), (6, 25));
}

#[test]
fn columns_count_bytes_not_characters() {
    let c = one(
        "python",
        "s = \"é\"; t = 1\n",
        "((identifier) @id (#eq? @id \"t\"))",
    );
    assert_eq!(pos(&c), ("id", "t", 1, 11, 1, 12));
    assert_eq!(c.start_byte, 10);
}

#[test]
fn several_patterns_and_captures_report_pattern_index_and_names() {
    let src = "import os\nos.system(cmd)\neval(x)\n";
    let q = r#"
        (call function: (attribute object: (identifier) @obj attribute: (identifier) @fn)
              (#eq? @obj "os") (#eq? @fn "system")) @call
        (call function: (identifier) @fn (#eq? @fn "eval")) @call
    "#;
    let m = query("python", src, q).unwrap();
    assert_eq!(m.len(), 2, "{m:#?}");
    assert_eq!(m[0].pattern, 0);
    let names: Vec<&str> = m[0].captures.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["call", "obj", "fn"]);
    assert_eq!(m[0].captures[0].text, "os.system(cmd)");
    assert_eq!(m[1].pattern, 1);
    assert_eq!(m[1].captures[0].start_line, 3);
}

fn texts(language: &str, source: &str, q: &str) -> Vec<String> {
    query(language, source, q)
        .unwrap()
        .into_iter()
        .flat_map(|m| m.captures.into_iter().map(|c| c.text))
        .collect()
}

#[test]
fn predicates_are_honoured() {
    let src = "foo = 1\nbar = 2\nbaz = 3\nfoo_bar = bar\n";
    let left = |pred: &str| {
        texts(
            "python",
            src,
            &format!("((assignment left: (identifier) @id) {pred})"),
        )
    };
    assert_eq!(left(r#"(#eq? @id "bar")"#), ["bar"]);
    assert_eq!(left(r#"(#not-eq? @id "bar")"#), ["foo", "baz", "foo_bar"]);
    assert_eq!(left(r#"(#match? @id "^ba")"#), ["bar", "baz"]);
    assert_eq!(left(r#"(#not-match? @id "^ba")"#), ["foo", "foo_bar"]);
    assert_eq!(left(r#"(#any-of? @id "foo" "baz" "nope")"#), ["foo", "baz"]);
    assert_eq!(
        left(r#"(#not-any-of? @id "foo" "baz")"#),
        ["bar", "foo_bar"]
    );
    // capture against capture
    assert_eq!(
        texts(
            "python",
            "a = a\nb = c\n",
            "((assignment left: (identifier) @l right: (identifier) @r) (#eq? @l @r))"
        ),
        ["a", "a"]
    );
    // #set! is accepted and changes nothing
    assert_eq!(left(r#"(#eq? @id "baz") (#set! kind "x")"#), ["baz"]);
}

#[test]
fn unsupported_predicates_are_refused_not_ignored() {
    let e = query(
        "python",
        "x = 1\n",
        r#"((identifier) @id (#lua-match? @id "x"))"#,
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, SyntaxError::BadQuery { .. }), "{e:?}");
    assert!(msg.contains("#lua-match?"), "{msg}");
}

#[test]
fn compiled_queries_are_cached_and_shared_across_threads() {
    let (lang, rust) = grammar("rust").unwrap();
    let text = "(function_item name: (identifier) @cache_test_unique)";
    let a = compiled(lang, &rust, text).unwrap();
    let b = compiled(lang, &rust, text).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    let c = std::thread::spawn(move || {
        let (lang, rust) = grammar("rust").unwrap();
        compiled(lang, &rust, text).unwrap()
    })
    .join()
    .unwrap();
    assert!(Arc::ptr_eq(&a, &c));
    // The same text in another language is another query.
    let (clang, c_grammar) = grammar("c").unwrap();
    let same = "(identifier) @cache_test_unique";
    assert!(!Arc::ptr_eq(
        &compiled(clang, &c_grammar, same).unwrap(),
        &compiled(lang, &rust, same).unwrap()
    ));
    // And through the public API the result is stable.
    let src = "fn a() {}\nfn b() {}\n";
    assert_eq!(
        query("rust", src, text).unwrap(),
        query("rust", src, text).unwrap()
    );
}

#[test]
fn the_last_tree_is_reused_only_for_the_same_source() {
    let q = "(identifier) @id";
    assert_eq!(texts("rust", "fn a() {}\n", q), ["a"]);
    assert_eq!(texts("rust", "fn b() {}\n", q), ["b"]);
    assert_eq!(texts("rust", "fn b() {}\n", q), ["b"]);
    // same text, another language: parsed again with that grammar
    assert_eq!(
        query("rust", "x = 1\n", "(source_file) @f").unwrap().len(),
        1
    );
    assert_eq!(query("python", "x = 1\n", "(module) @m").unwrap().len(), 1);
    assert_eq!(
        query("rust", "x = 1\n", "(source_file) @f").unwrap().len(),
        1
    );
}

#[test]
fn unknown_language_lists_the_known_ones() {
    let e = query("cobol", "", "(x) @x").unwrap_err();
    let msg = e.to_string();
    assert!(matches!(&e, SyntaxError::UnknownLanguage { name, .. } if name == "cobol"));
    assert!(
        msg.contains("python, javascript, typescript, tsx, go, java, rust, swift, ruby, c, cpp"),
        "{msg}"
    );
}

#[test]
fn bad_queries_say_where_and_what() {
    let e = query("python", "", "(function_definition name: (identifier) @n").unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, SyntaxError::BadQuery { .. }), "{e:?}");
    assert!(msg.contains("line 1, column"), "{msg}");
    assert!(msg.contains("syntax error"), "{msg}");

    let e = query("python", "", "(function_definition)\n  (no_such_node) @n").unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("line 2, column 4"), "{msg}");
    assert!(msg.contains("unknown node type"), "{msg}");
    assert!(msg.contains("no_such_node"), "{msg}");

    let e = query("go", "", "(function_declaration nope: (identifier) @n)").unwrap_err();
    assert!(e.to_string().contains("unknown field"), "{e}");
}

#[test]
fn oversized_source_and_query_are_refused() {
    let big = "x".repeat(MAX_SOURCE_BYTES + 1);
    let e = query("python", &big, "(identifier) @i").unwrap_err();
    assert!(
        matches!(e, SyntaxError::TooLarge { what: "source", .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("8388608"), "{e}");
    let q = " ".repeat(MAX_QUERY_BYTES + 1);
    let e = query("python", "", &q).unwrap_err();
    assert!(
        matches!(e, SyntaxError::TooLarge { what: "query", .. }),
        "{e:?}"
    );
}

#[test]
fn too_many_matches_is_an_error_not_a_silent_cut() {
    let src = format!("[{}]\n", vec!["a"; MAX_MATCHES + 1].join(","));
    let e = query("python", &src, "(identifier) @i").unwrap_err();
    assert!(
        matches!(
            e,
            SyntaxError::TooLarge {
                what: "matches",
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn syntax_errors_in_the_source_still_give_matches() {
    let src = "def ok():\n    pass\ndef broken(:\n";
    let found = texts("python", src, "(function_definition name: (identifier) @n)");
    assert_eq!(found.first().map(String::as_str), Some("ok"), "{found:?}");
}

#[test]
fn language_for_path_maps_extensions() {
    for (path, lang) in [
        ("a/b.py", Some("python")),
        ("x.JS", Some("javascript")),
        ("x.mjs", Some("javascript")),
        ("x.cjs", Some("javascript")),
        ("x.jsx", Some("javascript")),
        ("x.ts", Some("typescript")),
        ("x.tsx", Some("tsx")),
        ("main.go", Some("go")),
        ("A.java", Some("java")),
        ("lib.rs", Some("rust")),
        ("App.swift", Some("swift")),
        ("app.rb", Some("ruby")),
        ("x.c", Some("c")),
        ("x.h", Some("c")),
        ("x.cc", Some("cpp")),
        ("x.cpp", Some("cpp")),
        ("x.cxx", Some("cpp")),
        ("x.hpp", Some("cpp")),
        ("x.hh", Some("cpp")),
        ("Vault.m", Some("objective-c")),
        ("Bridge.mm", Some("objective-c")),
        ("index.php", Some("php")),
        ("view.PHTML", Some("php")),
        ("Makefile", None),
        ("dir.py/file", None),
        ("x.txt", None),
        (".py", Some("python")),
    ] {
        assert_eq!(language_for_path(path), lang, "{path}");
    }
    for l in languages() {
        assert!(grammar(l).is_ok(), "{l}");
    }
}

/// A 2,000-line Python file parsed and queried; prints the time (run with --nocapture).
#[test]
fn timing_two_thousand_line_python_file() {
    let mut src = String::from("import os\nimport subprocess\n\n");
    let mut i = 0;
    while src.lines().count() < 2000 {
        src.push_str(&format!(
            "def handler_{i}(request, user):\n    path = os.path.join('/srv', request.args['p{i}'])\n    if user.is_admin:\n        subprocess.call(['ls', path])\n    return {{'n': {i}, 'path': path}}\n\n"
        ));
        i += 1;
    }
    let q = r#"(call function: (attribute object: (identifier) @m attribute: (identifier) @f)
                 (#eq? @m "subprocess") (#any-of? @f "call" "run" "Popen")) @c"#;
    let t = std::time::Instant::now();
    let first = query("python", &src, q).unwrap();
    let cold = t.elapsed();
    // another source of the same size: a fresh parse with the query already compiled
    let src2 = src.replace("handler_", "h_");
    let t = std::time::Instant::now();
    let second = query("python", &src2, q).unwrap();
    let warm = t.elapsed();
    // the same source again: tree reused
    let t = std::time::Instant::now();
    let third = query("python", &src2, q).unwrap();
    let reused = t.elapsed();
    assert_eq!(first.len(), i);
    assert_eq!(second.len(), i);
    assert_eq!(third.len(), i);
    // ten SAST-like patterns in one query: one pass over the tree
    let many = r#"
        (call function: (attribute object: (identifier) @m attribute: (identifier) @f)
              (#eq? @m "subprocess") (#any-of? @f "call" "run" "Popen")) @c
        (call function: (attribute object: (identifier) @m attribute: (identifier) @f)
              (#eq? @m "os") (#any-of? @f "system" "popen")) @c
        (call function: (identifier) @f (#any-of? @f "eval" "exec")) @c
        (call function: (attribute object: (identifier) @m attribute: (identifier) @f)
              (#eq? @m "pickle") (#any-of? @f "loads" "load")) @c
        (call function: (attribute object: (identifier) @m attribute: (identifier) @f)
              (#eq? @m "yaml") (#eq? @f "load")) @c
        (call function: (attribute object: (identifier) @m attribute: (identifier) @f)
              (#eq? @m "hashlib") (#any-of? @f "md5" "sha1")) @c
        (call function: (attribute attribute: (identifier) @f) (#eq? @f "execute")
              arguments: (argument_list (binary_operator) @sql)) @c
        (call function: (attribute object: (identifier) @m attribute: (identifier) @f)
              (#eq? @m "requests") (#any-of? @f "get" "post")) @c
        (call function: (identifier) @f (#eq? @f "open")
              arguments: (argument_list (subscript))) @c
        (call function: (attribute object: (identifier) @m attribute: (identifier) @f)
              (#eq? @m "os.path") (#eq? @f "join")) @c
    "#;
    query("python", &src2, many).unwrap();
    let t = std::time::Instant::now();
    let n = query("python", &src2, many).unwrap().len();
    let ten = t.elapsed();
    println!(
        "2,000-line python ({} bytes, {} matches): compile+parse+query {cold:?}, parse+query {warm:?}, query on reused tree {reused:?}, ten-pattern query on reused tree {ten:?} ({n} matches)",
        src.len(),
        first.len()
    );
}
