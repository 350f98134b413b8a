//! The iOS data-flow pass: secrets and text-field input reaching
//! `UserDefaults` through variables, properties and interpolation; web
//! views loading URLs from deep links, text fields and query parameters;
//! and the safe look-alikes of each.

fn flow(lang: &str, src: &str) -> Vec<(String, u32)> {
    let mut found = Vec::new();
    let mut errs = Vec::new();
    let path = if lang == "swift" {
        "App/A.swift"
    } else {
        "App/A.m"
    };
    super::flow::scan(path, Some(lang), src, &mut found, &mut errs);
    assert!(errs.is_empty(), "{errs:?}");
    let mut v: Vec<(String, u32)> = found
        .into_iter()
        .map(|f| (f.rule_id, f.location.start_line))
        .collect();
    v.sort();
    v
}

fn want(list: &[(&str, u32)]) -> Vec<(String, u32)> {
    let mut v: Vec<(String, u32)> = list.iter().map(|(i, l)| ((*i).to_string(), *l)).collect();
    v.sort();
    v
}

#[test]
fn secrets_reach_user_defaults_through_variables_properties_and_interpolation() {
    let src = r#"final class Login {
    var lastEntry = ""
    let defaults = UserDefaults.standard
    func save() {
        let t = passwordField.text
        UserDefaults.standard.set(t, forKey: "pw")
        let token = response.token
        defaults.set(token, forKey: "session")
        let note = "saved \(t ?? "")"
        defaults.set(note, forKey: "note")
        lastEntry = pinField.text ?? ""
    }
    func persist() {
        UserDefaults.standard.set(lastEntry, forKey: "entry")
    }
    func preferences(theme: String) {
        let label = "Enter your password"
        defaults.set(label, forKey: "label")
        let t = themePicker.selectedTheme
        defaults.set(t, forKey: "theme")
        defaults.set(true, forKey: "onboarded")
        let counter = Counter()
        counter.set(token, forKey: "x")
    }
}
"#;
    assert_eq!(
        flow("swift", src),
        want(&[
            ("IOS-SEC-001", 6),
            ("IOS-SEC-001", 8),
            ("IOS-SEC-001", 10),
            ("IOS-SEC-001", 14),
        ]),
        "the `t` of preferences() is another variable than save()'s; a label \
         that mentions a password is text, not a secret; a Counter is not UserDefaults"
    );
}

#[test]
fn the_finding_says_where_the_value_came_from() {
    let src = "func f() {\n    let t = passwordField.text\n    UserDefaults.standard.set(t, forKey: \"pw\")\n}\n";
    let mut found = Vec::new();
    let mut errs = Vec::new();
    super::flow::scan("A.swift", Some("swift"), src, &mut found, &mut errs);
    let f = &found[0];
    assert_eq!(f.scanner, "apple-dev/rules");
    assert_eq!(f.metadata["flow"], "`t` = passwordField.text (line 2)");
    assert!(
        f.description
            .ends_with("Here: `t` = passwordField.text (line 2)."),
        "{}",
        f.description
    );
    assert_eq!(f.cwe.as_deref(), Some("CWE-922"));
}

#[test]
fn web_views_loading_deep_links_text_fields_and_query_parameters() {
    let src = r#"final class Browser: UIResponder {
    @IBOutlet var webView: WKWebView!
    func application(_ app: UIApplication, open url: URL, options: [UIApplication.OpenURLOptionsKey: Any] = [:]) -> Bool {
        webView.load(URLRequest(url: url))
        return true
    }
    func scene(_ scene: UIScene, openURLContexts URLContexts: Set<UIOpenURLContext>) {
        guard let first = URLContexts.first else { return }
        let target = first.url
        webView.load(URLRequest(url: target))
    }
    func search() {
        let q = searchField.text ?? ""
        let page = URL(string: "https://search.example/?q=" + q)!
        webView.load(URLRequest(url: page))
    }
    func open(components: URLComponents) {
        let next = components.queryItems?.first?.value ?? ""
        webView.loadHTMLString("<a href='\(next)'>next</a>", baseURL: nil)
        webView.loadFileURL(URL(fileURLWithPath: next), allowingReadAccessTo: URL(fileURLWithPath: "/"))
    }
    func safe() {
        webView.load(URLRequest(url: URL(string: "https://help.example/start")!))
        let page = Bundle.main.url(forResource: "about", withExtension: "html")!
        webView.loadFileURL(page, allowingReadAccessTo: page.deletingLastPathComponent())
        let html = try! String(contentsOf: Bundle.main.url(forResource: "intro", withExtension: "html")!)
        webView.loadHTMLString(html, baseURL: nil)
        webView.loadHTMLString("<p>Hello</p>", baseURL: nil)
    }
    var body: some View {
        WebView(view: webView).onOpenURL { link in
            webView.load(URLRequest(url: link))
        }
    }
}
"#;
    assert_eq!(
        flow("swift", src),
        want(&[
            ("IOS-WEBVIEW-003", 4),
            ("IOS-WEBVIEW-003", 10),
            ("IOS-WEBVIEW-003", 15),
            ("IOS-WEBVIEW-001", 19),
            ("IOS-WEBVIEW-003", 20),
            ("IOS-WEBVIEW-003", 32),
        ]),
    );
}

#[test]
fn javascript_on_a_web_view_that_loads_file_urls() {
    let with_files = r#"func show() {
    let prefs = WKPreferences()
    prefs.javaScriptEnabled = true
    webView.configuration.defaultWebpagePreferences.allowsContentJavaScript = true
    let page = Bundle.main.url(forResource: "help", withExtension: "html")!
    webView.loadFileURL(page, allowingReadAccessTo: page)
}
"#;
    assert_eq!(
        flow("swift", with_files),
        want(&[("IOS-WEBVIEW-004", 3), ("IOS-WEBVIEW-004", 4)])
    );
    let remote_only = with_files.replace(
        "webView.loadFileURL(page, allowingReadAccessTo: page)",
        "webView.load(URLRequest(url: URL(string: \"https://help.example\")!))",
    );
    assert_eq!(
        flow("swift", &remote_only),
        want(&[]),
        "no file URL, no finding"
    );
    let off = with_files.replace("= true", "= false");
    assert_eq!(flow("swift", &off), want(&[]), "JavaScript off");
    let other_type = format!(
        "final class Remote {{\n    func show() {{\n        webView.configuration.preferences.javaScriptEnabled = true\n    }}\n}}\nfinal class Local {{\n{with_files}}}\n"
    );
    assert_eq!(
        flow("swift", &other_type),
        want(&[("IOS-WEBVIEW-004", 9), ("IOS-WEBVIEW-004", 10)]),
        "a type that loads no file URL is not reported"
    );
}

#[test]
fn objective_c_user_defaults_through_a_variable() {
    let src = r#"@implementation Vault
- (void)save {
    NSString *t = self.passwordField.text;
    NSUserDefaults *d = [NSUserDefaults standardUserDefaults];
    [d setObject:t forKey:@"pw"];
    NSString *theme = self.themeName;
    [d setObject:theme forKey:@"theme"];
    NSString *entry = [self.pinField text];
    [[NSUserDefaults standardUserDefaults] setObject:entry forKey:@"entry"];
}
@end
"#;
    assert_eq!(
        flow("objective-c", src),
        want(&[("IOS-SEC-001", 5), ("IOS-SEC-001", 9)])
    );
}
