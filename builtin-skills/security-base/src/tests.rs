//! Unit tests (native: the tree-sitter rules are skipped here). Fake secrets
//! are assembled from pieces at run time so that no literal in this file
//! looks like a real credential.

use crate::{queries, scan_file, text};

/// Deterministic pseudo-random characters from `alphabet`.
fn fake_from(alphabet: &str, n: usize, seed: u64) -> String {
    let chars: Vec<char> = alphabet.chars().collect();
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            chars[((x >> 33) % chars.len() as u64) as usize]
        })
        .collect()
}

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

fn fake(n: usize, seed: u64) -> String {
    fake_from(ALNUM, n, seed)
}

/// (rule id, start line) of every finding.
fn hits(scanner: &str, path: &str, content: &str, language: Option<&str>) -> Vec<(String, u32)> {
    scan_file(scanner, path, content, language)
        .expect("known scanner")
        .into_iter()
        .map(|f| (f.rule_id, f.location.start_line))
        .collect()
}

fn ids(v: &[(String, u32)]) -> Vec<&str> {
    v.iter().map(|(id, _)| id.as_str()).collect()
}

fn one(rule: &str, line: u32) -> Vec<(String, u32)> {
    vec![(rule.to_string(), line)]
}

// ------------------------------------------------------------------ secrets

#[test]
fn secret_rules_fire_on_their_tokens() {
    let aws_id = format!(
        "AKIA{}",
        fake_from("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16, 1)
    );
    let aws_secret = fake_from(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
        40,
        2,
    );
    let cases: Vec<(String, &str)> = vec![
        (format!("key = \"{aws_id}\"\n"), "SECRET-AWS-ACCESS-KEY"),
        (
            format!("aws_secret_access_key = {aws_secret}\n"),
            "SECRET-AWS-SECRET-KEY",
        ),
        (
            format!(
                "  \"private_key_id\": \"{}\",\n",
                fake_from("0123456789abcdef", 40, 3)
            ),
            "SECRET-GCP-SERVICE-ACCOUNT-KEY",
        ),
        (
            format!("const k = 'AIza{}';\n", fake(35, 4)),
            "SECRET-GCP-API-KEY",
        ),
        (
            format!(
                "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={}==;EndpointSuffix=core.windows.net\n",
                fake(86, 5)
            ),
            "SECRET-AZURE-STORAGE-KEY",
        ),
        (
            format!("GH = \"ghp_{}\"\n", fake(36, 6)),
            "SECRET-GITHUB-TOKEN",
        ),
        (format!("t: ghs_{}\n", fake(36, 7)), "SECRET-GITHUB-TOKEN"),
        (
            format!("x = github_pat_{}_{}\n", fake(22, 8), fake(59, 9)),
            "SECRET-GITHUB-FINE-GRAINED-PAT",
        ),
        (
            format!("t = 'glpat-{}'\n", fake(20, 10)),
            "SECRET-GITLAB-TOKEN",
        ),
        (
            format!(
                "slack = \"xoxb-{}-{}-{}\"\n",
                "1234567890",
                "9876543210",
                fake(24, 11)
            ),
            "SECRET-SLACK-TOKEN",
        ),
        (
            format!(
                "url = \"https://hooks.slack.com/services/T{}/B{}/{}\"\n",
                fake(8, 12).to_uppercase(),
                fake(8, 13).to_uppercase(),
                fake(24, 14)
            ),
            "SECRET-SLACK-WEBHOOK",
        ),
        (
            format!("stripe = \"sk_live_{}\"\n", fake(24, 15)),
            "SECRET-STRIPE-KEY",
        ),
        (
            format!("r = 'rk_live_{}'\n", fake(30, 16)),
            "SECRET-STRIPE-KEY",
        ),
        (
            format!(
                "twilio_key = \"SK{}\"\n",
                fake_from("0123456789abcdef", 32, 17)
            ),
            "SECRET-TWILIO-API-KEY",
        ),
        (
            format!("k = 'SG.{}.{}'\n", fake(22, 18), fake(43, 19)),
            "SECRET-SENDGRID-API-KEY",
        ),
        (
            format!("OPENAI = \"sk-proj-{}\"\n", fake(48, 20)),
            "SECRET-OPENAI-API-KEY",
        ),
        (
            format!("k = \"sk-{}T3BlbkFJ{}\"\n", fake(20, 21), fake(20, 22)),
            "SECRET-OPENAI-API-KEY",
        ),
        (
            format!("ANTHROPIC = \"sk-ant-api03-{}\"\n", fake(93, 23)),
            "SECRET-ANTHROPIC-API-KEY",
        ),
        (
            format!("//registry.npmjs.org/:_authToken=npm_{}\n", fake(36, 24)),
            "SECRET-NPM-TOKEN",
        ),
        (
            format!("password = pypi-AgEIcHlwaS5vcmc{}\n", fake(60, 25)),
            "SECRET-PYPI-TOKEN",
        ),
        (
            format!(
                "-----BEGIN RSA {}-----\n{}\n{}\n-----END RSA {}-----\n",
                "PRIVATE KEY",
                fake(64, 26),
                fake(64, 27),
                "PRIVATE KEY"
            ),
            "SECRET-PRIVATE-KEY",
        ),
        (
            format!(
                "token: eyJ{}.eyJ{}.{}\n",
                fake(20, 28),
                fake(30, 29),
                fake(43, 30)
            ),
            "SECRET-JWT",
        ),
        (
            format!(
                "DATABASE_URL=postgres://app:{}@db.internal:5432/app\n",
                fake(16, 31)
            ),
            "SECRET-DB-CONNECTION-STRING",
        ),
        (
            format!(
                "uri = \"mongodb+srv://admin:{}@cluster0.mongodb.net/test\"\n",
                fake(14, 32)
            ),
            "SECRET-DB-CONNECTION-STRING",
        ),
        (
            format!("db_password = \"{}\"\n", fake(18, 33)),
            "SECRET-GENERIC-CREDENTIAL",
        ),
        (
            format!("  \"apiKey\": \"{}\",\n", fake(32, 34)),
            "SECRET-GENERIC-CREDENTIAL",
        ),
    ];
    for (content, rule) in cases {
        let found = hits("secrets", "src/config.py", &content, Some("python"));
        assert_eq!(
            ids(&found),
            vec![rule],
            "content {content:?} gave {found:?}"
        );
        assert_eq!(found[0].1, 1, "line of {rule}");
    }
}

#[test]
fn secrets_allowlist_placeholders_and_examples() {
    let clean = [
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
        "password = \"changeme\"\n",
        "password = \"${DB_PASSWORD}\"\n",
        "password: \"<your-password>\"\n",
        "api_key = \"xxxxxxxxxxxxxxxx\"\n",
        "secret = \"example-secret-value\"\n",
        "token = os.environ[\"TOKEN\"]\n",
        "password = getpass.getpass()\n",
        "PASSWORD_FIELD = \"password_input\"\n",
        "token_url = \"https://example.com/oauth/token\"\n",
        "secret_key = settings.SECRET_KEY\n",
        "DATABASE_URL=postgres://user:${DB_PASS}@localhost/db\n",
        "DATABASE_URL=postgres://localhost:5432/db\n",
        "if line.startswith('-----BEGIN RSA PRIVATE KEY-----'):\n",
        "auth_header = \"Authorization\"\n",
        "tokenizer = \"bert-base-uncased\"\n",
        "key = \"module.submodule.attr\"\n",
        "password = \"aaaaaaaaaaaa\"\n",
        "some_token = \"placeholder_token\"\n",
        "\"output_token\": \"NextContinuationToken\",\n",
        "ALLOW_CREDENTIALS = \"Access-Control-Allow-Credentials\"\n",
        "ACCESS_KEY = 'AWS_ACCESS_KEY_ID'\n",
        "secret_id = f\"events!connection/{name}/{uuid}\"\n",
        "\"Unexpected_token_1012\": \"予期しないトークンです。\",\n",
        "\"AWS::ApiGateway::ApiKey\": \"4820a1f3c9d7e2b6a5f4c3d2e1b0a9f8\",\n",
        "key = b\"\\x9b\\xbe\\x43\\x6b\\xa9\\x40\\xf0\\x17\"\n",
    ];
    for content in clean {
        let found = hits("secrets", "app.py", content, Some("python"));
        assert!(found.is_empty(), "{content:?} gave {found:?}");
    }
}

#[test]
fn secrets_exact_lines_columns_and_redaction() {
    let token = format!("ghp_{}", fake(36, 40));
    let content = format!("line one\n\n# config\nGITHUB_TOKEN = \"{token}\"\nlast\n");
    let findings = scan_file("secrets", "cfg.py", &content, None).unwrap();
    assert_eq!(findings.len(), 1);
    let f = &findings[0];
    assert_eq!(f.location.start_line, 4);
    assert_eq!(f.location.start_column, 17);
    assert_eq!(f.location.end_column, 17 + 40);
    assert!(!f.evidence.contains(&token), "{}", f.evidence);
    assert_eq!(f.evidence, "GITHUB_TOKEN = \"ghp_…\"");
    assert_eq!(f.category, "secrets-exposure");
    assert_eq!(f.cwe.as_deref(), Some("CWE-798"));
    assert_eq!(text::redact("abcdefgh"), "abcd…");
}

#[test]
fn unquoted_credentials_in_config_files_only() {
    let v = fake(20, 60);
    let env = format!(
        "# settings\nDEBUG=1\nAPI_KEY={v}\nSECRET_KEY=${{SECRET_KEY}}\nPASSWORD=changeme\n"
    );
    assert_eq!(
        hits("secrets", ".env.production", &env, None),
        one("SECRET-GENERIC-CREDENTIAL", 3)
    );
    let yaml = format!("db:\n  user: app\n  password: {v}  # prod\n  token: ${{TOKEN}}\n");
    assert_eq!(
        hits("secrets", "config/app.yaml", &yaml, None),
        one("SECRET-GENERIC-CREDENTIAL", 3)
    );
    let code = format!("password = get_password()\ntoken = tokens[0]\nsecret = {v}\n");
    assert_eq!(hits("secrets", "app.py", &code, Some("python")), vec![]);
}

#[test]
fn secrets_in_json_and_connection_strings() {
    let pem = format!(
        "{{\n  \"type\": \"service_account\",\n  \"private_key\": \"-----BEGIN {}-----\\n{}\\n{}\\n-----END {}-----\\n\",\n}}\n",
        "PRIVATE KEY",
        fake(64, 50),
        fake(64, 51),
        "PRIVATE KEY"
    );
    assert_eq!(
        hits("secrets", "sa.json", &pem, None),
        one("SECRET-PRIVATE-KEY", 3)
    );
    let pw = fake(16, 52);
    let content = format!("x = 1\nDATABASE_URL = \"postgres://app:{pw}@db:5432/app\"\n");
    let f = &scan_file("secrets", "settings.py", &content, None).unwrap()[0];
    assert_eq!(f.rule_id, "SECRET-DB-CONNECTION-STRING");
    assert_eq!((f.location.start_line, f.location.start_column), (2, 17));
    assert!(!f.evidence.contains(&pw), "{}", f.evidence);
    let generic = format!("\n\n    db_password = \"{}\"\n", fake(20, 53));
    let f = &scan_file("secrets", "s.py", &generic, None).unwrap()[0];
    assert_eq!((f.location.start_line, f.location.start_column), (3, 5));
    assert_eq!(
        f.location.end_column,
        5 + "db_password = \"\"".len() as u32 + 20
    );
}

#[test]
fn inline_ignore_comments() {
    let t = format!("ghp_{}", fake(36, 41));
    let same_line = format!("x = \"{t}\"  # agent:ignore\n");
    assert!(hits("secrets", "a.py", &same_line, None).is_empty());
    let above = format!("// agent-security:ignore=SECRET-GITHUB-TOKEN\nconst x = \"{t}\";\n");
    assert!(hits("secrets", "a.js", &above, None).is_empty());
    let other_rule = format!("// agent-security:ignore=SECRET-JWT\nconst x = \"{t}\";\n");
    assert_eq!(
        hits("secrets", "a.js", &other_rule, None),
        one("SECRET-GITHUB-TOKEN", 2)
    );
    let two_above = format!("// agent-security:ignore\n\nconst x = \"{t}\";\n");
    assert_eq!(
        hits("secrets", "a.js", &two_above, None),
        one("SECRET-GITHUB-TOKEN", 3)
    );
    let bare = "import os\n# agent-security:ignore\nos.system(cmd)\n";
    assert!(hits("sast", "a.py", bare, Some("python")).is_empty());
}

#[test]
fn clean_text_has_no_secrets() {
    let content = "fn main() {\n    let key = map.get(\"name\");\n    println!(\"token count: {}\", n);\n}\n\
        Some prose about passwords, secrets and tokens.\n\
        password_hash = bcrypt.hashpw(password, salt)\n\
        export TOKEN=$(cat /run/secrets/token)\n\
        headers = {\"Authorization\": f\"Bearer {token}\"}\n";
    assert!(hits("secrets", "README.md", content, None).is_empty());
}

// --------------------------------------------------------------------- sast

fn sast(lang: &str, path: &str, content: &str) -> Vec<(String, u32)> {
    hits("sast", path, content, Some(lang))
}

#[test]
fn sast_python_rules() {
    let cases: &[(&str, &str)] = &[
        (
            "cur.execute(f\"SELECT * FROM users WHERE id = {uid}\")",
            "PY-SQLI-001",
        ),
        (
            "cur.execute(\"SELECT * FROM t WHERE n = '%s'\" % name)",
            "PY-SQLI-001",
        ),
        ("db.execute(\"DELETE FROM t WHERE id=\" + x)", "PY-SQLI-001"),
        ("os.system(\"rm -rf \" + path)", "PY-CMDI-001"),
        ("subprocess.run(cmd, shell=True)", "PY-CMDI-002"),
        ("return send_file(request.args.get('f'))", "PY-PATH-001"),
        ("h = hashlib.md5(data).hexdigest()", "PY-CRYPTO-001"),
        ("c = DES.new(key, DES.MODE_CBC)", "PY-CRYPTO-002"),
        ("token = str(random.random())", "PY-RANDOM-001"),
        ("obj = pickle.loads(blob)", "PY-DESER-001"),
        ("cfg = yaml.load(text)", "PY-DESER-002"),
        ("return Markup(user_bio)", "PY-XSS-001"),
        ("return render_template_string(tpl)", "PY-XSS-002"),
        ("r = requests.get(request.args['url'])", "PY-SSRF-001"),
        ("result = eval(expr)", "PY-EVAL-001"),
    ];
    for (line, rule) in cases {
        let content = format!("import x\n\n{line}\n");
        assert_eq!(sast("python", "app.py", &content), one(rule, 3), "{line}");
    }
}

#[test]
fn sast_python_negatives() {
    let clean = "import subprocess, hashlib, yaml, os\n\
        cur.execute(\"SELECT * FROM users WHERE id = %s\", (uid,))\n\
        cur.execute(\"SELECT 1\")\n\
        os.system(\"ls -l\")\n\
        subprocess.run([\"ls\", \"-l\"])\n\
        subprocess.run(\"ls -l\", shell=True)\n\
        h = hashlib.md5(data, usedforsecurity=False)\n\
        h = hashlib.sha256(data)\n\
        cfg = yaml.load(text, Loader=yaml.SafeLoader)\n\
        cfg = yaml.safe_load(text)\n\
        x = ast.literal_eval(s)\n\
        v = eval(\"1 + 2\")\n\
        # os.system(cmd) in a comment\n\
        pattern.exec(thing)\n\
        n = random.randint(1, 6)\n\
        return Markup(\"<b>static</b>\")\n\
        r = requests.get(\"https://api.example.com\")\n\
        if os.system('(less) 2>/dev/null') == 0: pass\n\
        subprocess.Popen([\"ver\"], shell=True)\n\
        subprocess.Popen([\"ls\", \"-l\"], shell=True)\n\
        def eval(self, env):\n";
    assert_eq!(sast("python", "clean.py", clean), vec![]);
}

#[test]
fn sast_js_rules() {
    let cases: &[(&str, &str)] = &[
        (
            "db.query(`SELECT * FROM users WHERE id = ${id}`);",
            "JS-SQLI-001",
        ),
        (
            "db.query(\"SELECT * FROM t WHERE n = '\" + name + \"'\");",
            "JS-SQLI-001",
        ),
        ("exec(\"ls \" + dir, cb);", "JS-CMDI-001"),
        ("child_process.exec(`git log ${ref}`);", "JS-CMDI-001"),
        ("res.sendFile(req.params.name);", "JS-PATH-001"),
        ("const h = crypto.createHash('md5');", "JS-CRYPTO-001"),
        (
            "const c = crypto.createCipheriv('des-ede3', k, iv);",
            "JS-CRYPTO-002",
        ),
        ("const token = Math.random().toString(36);", "JS-RANDOM-001"),
        ("el.innerHTML = userInput;", "JS-XSS-001"),
        ("document.write(location.hash);", "JS-XSS-002"),
        (
            "<div dangerouslySetInnerHTML={{ __html: props.html }} />",
            "JS-XSS-003",
        ),
        ("const r = await fetch(req.query.url);", "JS-SSRF-001"),
        ("eval(code);", "JS-EVAL-001"),
        ("const f = new Function(body);", "JS-EVAL-002"),
        ("setTimeout(\"run(\" + x + \")\", 10);", "JS-EVAL-003"),
    ];
    for (line, rule) in cases {
        let content = format!("const child_process = require('child_process');\n\n{line}\n");
        assert_eq!(
            sast("javascript", "app.js", &content),
            one(rule, 3),
            "{line}"
        );
    }
    let deser =
        "const serialize = require('node-serialize');\nconst o = serialize.unserialize(body);\n";
    assert_eq!(sast("typescript", "a.ts", deser), one("JS-DESER-001", 2));
}

#[test]
fn sast_js_negatives() {
    let clean = "const re = /a+/;\n\
        const m = re.exec(text);\n\
        db.query('SELECT * FROM users WHERE id = $1', [id]);\n\
        el.innerHTML = '';\n\
        el.innerHTML = '<b>static</b>';\n\
        form.innerHTML = \"&gt;&gt;&gt; \";\n\
        declare function eval(x: string): any;\n\
        function execSync(command, options = {}) {\n\
        el.textContent = userInput;\n\
        const h = crypto.createHash('sha256');\n\
        const n = Math.random() * 10;\n\
        setTimeout(() => run(x), 10);\n\
        // eval(code)\n\
        document.write('<p>hi</p>');\n\
        const r = await fetch('/api/items');\n\
        <div dangerouslySetInnerHTML={{ __html: DOMPurify.sanitize(html) }} />\n";
    assert_eq!(sast("javascript", "clean.js", clean), vec![]);
}

#[test]
fn sast_other_languages() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "go",
            "rows, err := db.Query(fmt.Sprintf(\"SELECT * FROM u WHERE id=%s\", id))",
            "GO-SQLI-001",
        ),
        (
            "go",
            "out, _ := exec.Command(\"sh\", \"-c\", userCmd).Output()",
            "GO-CMDI-001",
        ),
        (
            "go",
            "data, _ := os.ReadFile(r.URL.Query().Get(\"f\"))",
            "GO-PATH-001",
        ),
        ("go", "sum := md5.Sum(data)", "GO-CRYPTO-001"),
        ("go", "c, _ := des.NewCipher(key)", "GO-CRYPTO-002"),
        (
            "go",
            "resp, _ := http.Get(r.FormValue(\"url\"))",
            "GO-SSRF-001",
        ),
        (
            "java",
            "stmt.executeQuery(\"SELECT * FROM u WHERE n='\" + name + \"'\");",
            "JAVA-SQLI-001",
        ),
        ("java", "Runtime.getRuntime().exec(cmd);", "JAVA-CMDI-001"),
        (
            "java",
            "File f = new File(base, request.getParameter(\"f\"));",
            "JAVA-PATH-001",
        ),
        (
            "java",
            "MessageDigest md = MessageDigest.getInstance(\"MD5\");",
            "JAVA-CRYPTO-001",
        ),
        (
            "java",
            "Cipher c = Cipher.getInstance(\"AES/ECB/PKCS5Padding\");",
            "JAVA-CRYPTO-002",
        ),
        (
            "java",
            "Object o = new XMLDecoder(in).readObject();",
            "JAVA-DESER-002",
        ),
        (
            "java",
            "URL u = new URL(request.getParameter(\"u\"));",
            "JAVA-SSRF-001",
        ),
        (
            "rust",
            "sqlx::query(&format!(\"SELECT * FROM u WHERE id = {id}\"))",
            "RUST-SQLI-001",
        ),
        (
            "rust",
            "Command::new(\"sh\").arg(\"-c\").arg(&cmd).status()?;",
            "RUST-CMDI-001",
        ),
        ("rust", "let d = md5::compute(data);", "RUST-CRYPTO-001"),
        (
            "swift",
            "let d = Insecure.MD5.hash(data: data)",
            "SWIFT-CRYPTO-001",
        ),
        (
            "swift",
            "sqlite3_exec(db, \"SELECT * FROM t WHERE n = '\\(name)'\", nil, nil, nil)",
            "SWIFT-SQLI-001",
        ),
        (
            "ruby",
            "User.where(\"name = '#{params[:name]}'\")",
            "RUBY-SQLI-001",
        ),
        (
            "ruby",
            "system(\"convert #{file} out.png\")",
            "RUBY-CMDI-001",
        ),
        ("ruby", "out = `ls #{dir}`", "RUBY-CMDI-001"),
        ("ruby", "obj = Marshal.load(data)", "RUBY-DESER-001"),
        ("ruby", "d = Digest::MD5.hexdigest(s)", "RUBY-CRYPTO-001"),
        ("ruby", "send_file(params[:path])", "RUBY-PATH-001"),
        ("c", "system(cmd);", "C-CMDI-001"),
        ("cpp", "FILE *p = popen(buf, \"r\");", "C-CMDI-001"),
        ("c", "MD5_Init(&ctx);", "C-CRYPTO-001"),
    ];
    for (lang, line, rule) in cases {
        let content = format!("// header\n\n{line}\n");
        assert_eq!(sast(lang, "f", &content), one(rule, 3), "{lang}: {line}");
    }
    let java_deser = "import java.io.ObjectInputStream;\nObjectInputStream in = new ObjectInputStream(s);\nObject o = in.readObject();\n";
    assert_eq!(sast("java", "A.java", java_deser), one("JAVA-DESER-001", 3));
}

#[test]
fn sast_other_languages_negatives() {
    let go = "rows, err := db.Query(\"SELECT * FROM u WHERE id = $1\", id)\nout, _ := exec.Command(\"ls\", \"-l\").Output()\nout2, _ := exec.Command(\"sh\", \"-c\", \"ls -l\").Output()\nh := sha256.Sum256(data)\n";
    assert_eq!(sast("go", "a.go", go), vec![]);
    let java = "PreparedStatement ps = conn.prepareStatement(\"SELECT * FROM u WHERE n = ?\");\nRuntime.getRuntime().exec(\"ls\");\nCipher c = Cipher.getInstance(\"AES/GCM/NoPadding\");\nMessageDigest md = MessageDigest.getInstance(\"SHA-256\");\n";
    assert_eq!(sast("java", "A.java", java), vec![]);
    let rust = "let rows = sqlx::query(\"SELECT * FROM u WHERE id = $1\").bind(id);\nCommand::new(\"ls\").arg(\"-l\").status()?;\nlet s = format!(\"select {}\", x);\n";
    assert_eq!(sast("rust", "a.rs", rust), vec![]);
    let ruby = "User.where(name: params[:name])\nsystem(\"ls\", \"-l\")\nout = `ls -l`\nobj = JSON.parse(data)\n";
    assert_eq!(sast("ruby", "a.rb", ruby), vec![]);
    let c = "#include <stdlib.h>\nsystem(\"ls -l\");\nmy_system(cmd);\nobj->system(cmd);\n";
    assert_eq!(sast("c", "a.c", c), vec![]);
    // A language the rules do not know: nothing.
    assert_eq!(
        sast("kotlin", "a.kt", "Runtime.getRuntime().exec(cmd)\n"),
        vec![]
    );
    assert_eq!(hits("sast", "a.txt", "os.system(cmd)\n", None), vec![]);
}

#[test]
fn sast_finding_fields() {
    let f = &scan_file(
        "sast",
        "app.py",
        "x = 1\nresult = eval(expr)\n",
        Some("python"),
    )
    .unwrap()[0];
    assert_eq!(f.rule_id, "PY-EVAL-001");
    assert_eq!(f.cwe.as_deref(), Some("CWE-95"));
    assert_eq!(f.owasp.as_deref(), Some("A03:2021"));
    assert_eq!(f.category, "injection");
    assert_eq!((f.location.start_line, f.location.start_column), (2, 10));
    assert_eq!(f.evidence, "result = eval(expr)");
    assert!(!f.remediation.is_empty() && !f.references.is_empty());
}

#[test]
fn tree_sitter_queries_are_well_formed() {
    // The queries compile host-side (checked by the syntax crate's tests);
    // here: each captures @call, names a known language and a known rule.
    for q in queries::QUERIES {
        assert!(q.query.contains("@call"), "{}", q.id);
        assert!(
            q.languages
                .iter()
                .all(|l| crate::SAST_LANGUAGES.contains(l))
        );
        assert!(crate::sast::RULES.iter().any(|r| r.id == q.id), "{}", q.id);
        let open = q.query.matches('(').count();
        let close = q.query.matches(')').count();
        assert_eq!(open, close, "{}", q.id);
    }
}

// ------------------------------------------------------------------- config

fn config(path: &str, content: &str) -> Vec<(String, u32)> {
    hits("config", path, content, None)
}

#[test]
fn dockerfile_rules() {
    let df = "FROM python:latest AS build\nRUN pip install x\n\nFROM ubuntu\nADD https://example.com/tool.tgz /opt/\nENV API_TOKEN=s3cr3tV4lu3x9Q DEBUG=1\nARG DB_PASSWORD=hunter2Hunter\nUSER root\nCMD [\"app\"]\n";
    assert_eq!(
        config("Dockerfile", df),
        vec![
            ("DOCKER-LATEST-TAG".to_string(), 1),
            ("DOCKER-LATEST-TAG".to_string(), 4),
            ("DOCKER-ADD-URL".to_string(), 5),
            ("DOCKER-SECRET-ENV".to_string(), 6),
            ("DOCKER-SECRET-ENV".to_string(), 7),
            ("DOCKER-ROOT-USER".to_string(), 8),
        ]
    );
    let f = scan_file("config", "Dockerfile", df, None).unwrap();
    assert!(
        !f[3].evidence.contains("s3cr3tV4lu3x9Q"),
        "{}",
        f[3].evidence
    );

    let no_user = "FROM node:20-alpine\nCOPY . .\n";
    assert_eq!(
        config("svc/Dockerfile", no_user),
        one("DOCKER-ROOT-USER", 1)
    );

    let clean = "FROM golang:1.22 AS build\nRUN go build -o /app\nFROM gcr.io/distroless/static:nonroot@sha256:abc\nCOPY --from=build /app /app\nENV PASSWORD_FILE=/run/secrets/pw TOKEN=\nARG GITHUB_TOKEN\nUSER nonroot:nonroot\n";
    assert_eq!(config("Dockerfile", clean), vec![]);
    let stage_ref = "FROM rust:1.80 AS builder\nFROM builder\nUSER 1000\n";
    assert_eq!(config("Dockerfile.prod", stage_ref), vec![]);
}

const K8S_BAD: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      hostNetwork: true
      containers:
        - name: app
          image: web:1.0
          securityContext:
            privileged: true
            runAsUser: 0
        - name: sidecar
          image: side:1.0
          resources:
            limits:
              cpu: 100m
      volumes:
        - name: host
          hostPath:
            path: /var/run
";

#[test]
fn kubernetes_rules() {
    assert_eq!(
        config("deploy/web.yaml", K8S_BAD),
        vec![
            ("K8S-HOST-NAMESPACE".to_string(), 8),
            ("K8S-NO-RESOURCE-LIMITS".to_string(), 10),
            ("K8S-PRIVILEGED".to_string(), 13),
            ("K8S-RUN-AS-ROOT".to_string(), 14),
            ("K8S-RUN-AS-ROOT".to_string(), 15),
            ("K8S-HOSTPATH".to_string(), 22),
        ]
    );
    let good = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  securityContext:\n    runAsNonRoot: true\n  containers:\n  - name: app\n    image: app:1.2\n    resources:\n      limits:\n        memory: 128Mi\n---\napiVersion: v1\nkind: ConfigMap\ndata:\n  privileged: \"true\"\n";
    assert_eq!(config("k8s/pod.yml", good), vec![]);
    // Not Kubernetes at all.
    assert_eq!(
        config("conf/app.yaml", "privileged: true\nhostPath: /x\n"),
        vec![]
    );
}

#[test]
fn github_actions_rules() {
    let wf = "name: ci
on:
  pull_request_target:
    types: [opened]
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          ref: ${{ github.event.pull_request.head.sha }}
      - uses: actions/setup-node@1d0ff469b7ec7b3cb9d8673fde0c81c44821de2a # v4
      - uses: ./local-action
      - run: echo ${{ secrets.NPM_TOKEN }}
      - run: |
          npm ci
          echo \"token=${{ secrets.DEPLOY_KEY }}\" > out
      - run: npm publish
        env:
          NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}
";
    assert_eq!(
        config(".github/workflows/ci.yml", wf),
        vec![
            ("GHA-UNPINNED-ACTION".to_string(), 9),
            ("GHA-PR-TARGET-CHECKOUT".to_string(), 11),
            ("GHA-SECRET-ECHO".to_string(), 14),
            ("GHA-SECRET-ECHO".to_string(), 17),
        ]
    );
    let safe = "on: [push, pull_request]\njobs:\n  b:\n    steps:\n      - uses: actions/checkout@8e5e7e5ab8b370d6c329ec480221332ada57f0ab\n        with:\n          ref: ${{ github.event.pull_request.head.sha }}\n";
    assert_eq!(config(".github/workflows/b.yaml", safe), vec![]);
}

#[test]
fn terraform_rules() {
    let tf = r#"resource "aws_s3_bucket_acl" "b" {
  bucket = aws_s3_bucket.b.id
  acl    = "public-read"
}

resource "aws_s3_bucket_public_access_block" "b" {
  block_public_acls   = false
  block_public_policy = true
}

resource "aws_security_group" "web" {
  ingress {
    from_port   = 443
    to_port     = 443
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"]
  }
  ingress {
    from_port   = 22
    to_port     = 22
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"]
  }
  ingress {
    from_port   = 3389
    to_port     = 3389
    protocol    = "tcp"
    cidr_blocks = ["10.0.0.0/8"]
  }
}

resource "aws_security_group_rule" "all" {
  type        = "ingress"
  from_port   = 0
  to_port     = 0
  protocol    = "-1"
  cidr_blocks = ["0.0.0.0/0"]
}
"#;
    assert_eq!(
        config("infra/main.tf", tf),
        vec![
            ("TF-S3-PUBLIC-ACL".to_string(), 3),
            ("TF-S3-PUBLIC-ACCESS-BLOCK-DISABLED".to_string(), 7),
            ("TF-SG-OPEN-INGRESS".to_string(), 22),
            ("TF-SG-OPEN-INGRESS".to_string(), 37),
        ]
    );
}

#[test]
fn config_ignores_other_files() {
    assert_eq!(config("src/main.rs", "USER root\n"), vec![]);
}

#[test]
fn unknown_scanner_is_not_found() {
    assert!(matches!(
        scan_file("nope", "a", "", None),
        Err(agent_skill_sdk::types::SkillError::NotFound(_))
    ));
}

#[test]
fn scanner_specs_and_manifest_agree() {
    let manifest = include_str!("../SKILL.yaml");
    for spec in crate::scanner_specs() {
        assert!(
            manifest.contains(&format!("- name: {}", spec.name)),
            "{}",
            spec.name
        );
    }
}

#[test]
fn rule_ids_are_unique_per_scanner() {
    let mut seen = std::collections::HashSet::new();
    // The generic credential rule has a quoted and an unquoted form.
    for r in crate::secrets::RULES.iter().map(|r| r.id()) {
        assert!(seen.insert(r) || r == "SECRET-GENERIC-CREDENTIAL", "{r}");
    }
    let mut seen = std::collections::HashSet::new();
    for r in crate::sast::RULES {
        assert!(seen.insert(r.id), "{}", r.id);
    }
}

/// Rough native timing of the three scanners over a generated 100,000-line
/// corpus: `cargo test --release -p security-base -- --ignored --nocapture`.
#[test]
#[ignore = "timing, run by hand"]
fn timing_100k_lines() {
    let py = "import os\nfrom app import db\n\ndef handler(request, token_store):\n    key = request.args.get(\"key\")\n    user = db.get_user(key)\n    if not user:\n        return None\n    token = token_store.issue(user.id, secret_key=settings.SECRET)\n    password_hash = hash_password(request.form[\"password\"])\n    return {\"token\": token, \"name\": user.name}\n\n";
    let js = "const express = require('express');\nconst app = express();\napp.get('/items/:id', async (req, res) => {\n  const key = req.params.id;\n  const item = await store.get(key);\n  res.json({ item, token: req.headers.authorization });\n});\n\n";
    let mut files = Vec::new();
    let mut lines = 0;
    let mut i = 0;
    while lines < 100_000 {
        let (src, lang, path) = if i % 2 == 0 {
            (py, "python", format!("src/m{i}.py"))
        } else {
            (js, "javascript", format!("web/m{i}.js"))
        };
        let content = src.repeat(20);
        lines += content.lines().count();
        files.push((path, content, lang));
        i += 1;
    }
    for scanner in ["secrets", "sast", "config"] {
        let start = std::time::Instant::now();
        let mut n = 0;
        for (path, content, lang) in &files {
            n += scan_file(scanner, path, content, Some(lang)).unwrap().len();
        }
        println!(
            "{scanner}: {lines} lines, {} files, {n} findings, {:?}",
            files.len(),
            start.elapsed()
        );
    }
}

/// Prints every finding over the tree at `$SB_SCAN_DIR` (false-positive
/// review by hand): `SB_SCAN_DIR=... cargo test -p security-base -- --ignored --nocapture scan_dir`.
#[test]
#[ignore = "manual review"]
fn scan_dir() {
    let Ok(root) = std::env::var("SB_SCAN_DIR") else {
        return;
    };
    let mut stack = vec![std::path::PathBuf::from(&root)];
    let (mut files, mut total) = (0, 0);
    let start = std::time::Instant::now();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                if !p.ends_with(".git") && !p.ends_with("target") && !p.ends_with("node_modules") {
                    stack.push(p);
                }
                continue;
            }
            let Ok(content) = std::fs::read_to_string(&p) else {
                continue;
            };
            if content.len() > 1 << 20 {
                continue;
            }
            let rel = p
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let ext = rel.rsplit('.').next().unwrap_or("");
            let lang = match ext {
                "py" => Some("python"),
                "js" | "mjs" | "cjs" | "jsx" => Some("javascript"),
                "ts" => Some("typescript"),
                "tsx" => Some("tsx"),
                "go" => Some("go"),
                "java" => Some("java"),
                "rs" => Some("rust"),
                "swift" => Some("swift"),
                "rb" => Some("ruby"),
                "c" | "h" => Some("c"),
                "cc" | "cpp" | "cxx" | "hpp" | "hh" => Some("cpp"),
                _ => None,
            };
            files += 1;
            for scanner in ["secrets", "sast", "config"] {
                for f in scan_file(scanner, &rel, &content, lang).unwrap() {
                    total += 1;
                    println!(
                        "{} {}:{} {}",
                        f.rule_id, rel, f.location.start_line, f.evidence
                    );
                }
            }
        }
    }
    println!("{files} files, {total} findings, {:?}", start.elapsed());
}

#[test]
fn python_request_data_through_a_variable_reaches_ssrf_and_path_sinks() {
    let code = "@app.route('/f')\ndef f():\n    url = request.args.get('url')\n    name = request.form['name']\n    safe = 'https://example.org'\n    requests.get(safe)\n    r = requests.get(url).text\n    return send_file(os.path.join('/srv', name))\n";
    let got: Vec<(String, u32)> = crate::sast::scan("app.py", code, Some("python"))
        .into_iter()
        .map(|f| (f.rule_id, f.location.start_line))
        .collect();
    assert_eq!(
        got,
        vec![
            ("PY-SSRF-001".to_string(), 7),
            ("PY-PATH-001".to_string(), 8)
        ]
    );
    // A variable used before it is assigned from the request is not tainted.
    let before = "def g():\n    requests.get(url)\n    url = request.args.get('u')\n";
    assert!(crate::sast::scan("b.py", before, Some("python")).is_empty());
}

#[test]
fn send_from_directory_with_request_data_is_safe() {
    let code = "def d():\n    filename = request.args.get('file', '')\n    return send_from_directory('/srv/files', filename)\n";
    assert!(crate::sast::scan("app.py", code, Some("python")).is_empty());
}

/// Issue 16: every secrets rule is data with examples; each example that
/// must match yields a finding of that rule, none that must not does.
#[test]
fn every_secret_rule_matches_its_examples() {
    use crate::secret_rules::{Example, RULES, expand_example};
    let text = |e: &Example| match e {
        Example::Text(t) | Example::At { text: t, .. } => t.clone(),
    };
    let mut failures = Vec::new();
    for (r, rule) in RULES.iter().enumerate() {
        let cases = rule
            .examples
            .matches
            .iter()
            .map(|e| (e, true))
            .chain(rule.examples.no_match.iter().map(|e| (e, false)));
        for (i, (example, must)) in cases.enumerate() {
            let content = format!(
                "{}\n",
                expand_example(&text(example), (r * 100 + i) as u64 + 1)
            );
            let path = rule.example_path(example);
            let found = crate::secrets::scan(path, &content)
                .iter()
                .any(|f| f.rule_id == rule.id);
            if found != must {
                failures.push(format!(
                    "{} {} {path}: {content:?}",
                    rule.id,
                    if must {
                        "missed"
                    } else {
                        "matched the look-alike"
                    }
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn github_checksums_are_computed_as_github_does() {
    use crate::secret_rules::{base62_crc32, checksum_valid, expand_example};
    // CRC-32 (IEEE) of "123456789" is the standard check value.
    assert_eq!(crate::secret_rules::crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(base62_crc32("123456789").len(), 6);
    let token = expand_example("ghp_{a:30}{crc}", 7);
    assert!(checksum_valid(&token), "{token}");
    let mut broken = token.clone();
    broken.replace_range(4..5, if &token[4..5] == "A" { "B" } else { "A" });
    assert!(!checksum_valid(&broken));
    // A valid checksum: high confidence; a broken one: reported, medium.
    let f = crate::secrets::scan("a.txt", &format!("t = {token}\n"));
    assert_eq!(f[0].confidence, agent_skill_sdk::types::Confidence::High);
    assert!(f[0].metadata.contains(&("checksum".into(), "valid".into())));
    let f = crate::secrets::scan("a.txt", &format!("t = {broken}\n"));
    assert_eq!(f[0].confidence, agent_skill_sdk::types::Confidence::Medium);
}

#[test]
fn the_rules_file_is_checked_field_by_field() {
    let parse = |yaml: &str| -> Result<Vec<crate::secret_rules::SecretRule>, String> {
        let file: crate::secret_rules::RulesFile =
            serde_yaml::from_str(yaml).map_err(|e| e.to_string())?;
        crate::secret_rules::check(file.rules)
    };
    let bad_regex = "rules:\n- id: X\n  title: t\n  severity: high\n  keywords: [a]\n  pattern: '('\n  examples: {match: [a]}\n";
    let e = parse(bad_regex).unwrap_err();
    assert!(e.contains("rule 1 (X): pattern"), "{e}");
    let unknown = "rules:\n- id: X\n  title: t\n  severity: high\n  keywords: [a]\n  pattern: 'a'\n  colour: red\n  examples: {match: [a]}\n";
    assert!(parse(unknown).unwrap_err().contains("colour"));
    let everywhere = "rules:\n- id: X\n  title: t\n  severity: high\n  pattern: '(a)'\n  examples: {match: [a]}\n";
    assert!(
        parse(everywhere)
            .unwrap_err()
            .contains("no keywords and no files")
    );
    let no_examples = "rules:\n- id: X\n  title: t\n  severity: high\n  keywords: [a]\n  pattern: '(a)'\n  examples: {match: []}\n";
    assert!(parse(no_examples).unwrap_err().contains("no example"));
}
