//! Python: Flask, Django, FastAPI sources; every sink family with a safe
//! look-alike.

use super::{hits, rules};

fn py(code: &str) -> Vec<String> {
    rules("python", code)
}

#[test]
fn sql_built_from_request_data_is_found_and_a_parameterised_query_is_not() {
    let bad = r#"
from flask import request
def view(cur):
    uid = request.args["id"]
    cur.execute(f"SELECT * FROM users WHERE id = {uid}")
"#;
    assert_eq!(hits("python", bad), vec![("PY-TAINT-SQLI".into(), 5)]);
    let safe = r#"
from flask import request
def view(cur):
    uid = request.args["id"]
    cur.execute("SELECT * FROM users WHERE id = %s", (uid,))
    cur.execute("SELECT * FROM users WHERE id = %d" % int(uid))
"#;
    assert!(py(safe).is_empty(), "{:?}", py(safe));
}

#[test]
fn django_request_get_through_a_helper_and_a_dict_reaches_raw_sql() {
    let bad = r#"
def build(name):
    return "SELECT * FROM t WHERE name = '%s'" % name

def view(request):
    params = {}
    params["who"] = request.GET.get("who")
    params["fixed"] = "bob"
    q = build(params["who"])
    Person.objects.raw(q)
"#;
    assert_eq!(hits("python", bad), vec![("PY-TAINT-SQLI".into(), 10)]);
    let safe = bad.replace("build(params[\"who\"])", "build(params[\"fixed\"])");
    assert!(py(&safe).is_empty(), "{:?}", py(&safe));
}

#[test]
fn commands_need_a_shell_or_a_command_string_and_quoting_cleans() {
    let bad = r#"
import os, subprocess, sys
def main():
    host = sys.argv[1]
    os.system("ping -c 1 " + host)
    subprocess.call("ping " + host, shell=True)
"#;
    assert_eq!(
        hits("python", bad),
        vec![("PY-TAINT-CMDI".into(), 5), ("PY-TAINT-CMDI".into(), 6)]
    );
    let safe = r#"
import os, shlex, subprocess, sys
def main():
    host = sys.argv[1]
    os.system("ping -c 1 " + shlex.quote(host))
    subprocess.call(["ping", host])
    os.system("uptime")
"#;
    assert!(py(safe).is_empty(), "{:?}", py(safe));
}

#[test]
fn fastapi_route_parameters_are_sources_for_paths_and_basename_cleans() {
    let bad = r#"
@app.get("/files/{name}")
def read(name: str):
    with open("/srv/files/" + name) as f:
        return f.read()
"#;
    assert_eq!(hits("python", bad), vec![("PY-TAINT-PATH".into(), 4)]);
    let safe = bad.replace("+ name)", "+ os.path.basename(name))");
    assert!(py(&safe).is_empty(), "{:?}", py(&safe));
}

#[test]
fn flask_route_returning_request_data_is_xss_and_escaping_cleans() {
    let bad = r#"
@app.route("/hello")
def hello():
    name = request.args.get("name", "")
    return "<h1>Hello " + name + "</h1>"
"#;
    assert_eq!(rules("python", bad), vec!["PY-TAINT-XSS".to_string()]);
    let safe = bad.replace("+ name +", "+ html.escape(name) +");
    assert!(py(&safe).is_empty(), "{:?}", py(&safe));
    let tmpl = r#"
@app.route("/t")
def t():
    return render_template_string("<p>" + request.form["x"] + "</p>")
"#;
    assert_eq!(hits("python", tmpl), vec![("PY-TAINT-XSS".into(), 4)]);
}

#[test]
fn eval_and_pickle_fire_only_on_tainted_data() {
    let bad = r#"
import pickle, base64
def view(request):
    expr = request.POST["expr"]
    eval(expr)
    obj = pickle.loads(base64.b64decode(request.COOKIES["state"]))
"#;
    assert_eq!(
        hits("python", bad),
        vec![("PY-TAINT-CODE".into(), 5), ("PY-TAINT-DESER".into(), 6)]
    );
    let safe = r#"
import pickle, yaml
def load_cache(path):
    eval("1 + 2")
    with open(path, "rb") as f:
        return pickle.load(f)
def view(request):
    yaml.load(request.body, Loader=yaml.SafeLoader)
"#;
    assert!(py(safe).is_empty(), "{:?}", py(safe));
}

#[test]
fn ssrf_redirect_ldap_xpath_and_the_session() {
    let bad = r#"
def view():
    url = request.args.get("url")
    requests.get(url)
    return redirect(request.args["next"])
def find(conn, tree):
    user = request.form["user"]
    conn.search_s("dc=x", ldap.SCOPE_SUBTREE, "(uid=" + user + ")")
    tree.xpath("//user[@name='" + user + "']")
    session["user"] = user
"#;
    assert_eq!(
        hits("python", bad),
        vec![
            ("PY-TAINT-LDAP".into(), 8),
            ("PY-TAINT-REDIRECT".into(), 5),
            ("PY-TAINT-SSRF".into(), 4),
            ("PY-TAINT-TRUST".into(), 10),
            ("PY-TAINT-XPATH".into(), 9),
        ]
    );
}

#[test]
fn branches_merge_and_allowlists_clean() {
    let merged = r#"
def view(cur):
    v = request.args["v"]
    if len(v) > 3:
        q = "SELECT 1"
    else:
        q = "SELECT " + v
    cur.execute(q)
"#;
    assert_eq!(hits("python", merged), vec![("PY-TAINT-SQLI".into(), 8)]);
    let allow = r#"
ALLOWED = {"name", "date"}
def view(cur):
    col = request.args["sort"]
    if col not in ALLOWED:
        abort(400)
    cur.execute("SELECT * FROM t ORDER BY " + col)
"#;
    assert!(py(allow).is_empty(), "{:?}", py(allow));
    let inside = r#"
def view(cur):
    col = request.args["sort"]
    if col in ("name", "date"):
        cur.execute("SELECT * FROM t ORDER BY " + col)
"#;
    assert!(py(inside).is_empty(), "{:?}", py(inside));
}

#[test]
fn methods_and_attributes_carry_taint() {
    let bad = r#"
class Repo:
    def query(self, sql):
        self.cur.execute(sql)

    def find(self):
        self.name = request.args["name"]
        self.query("SELECT * FROM t WHERE n = '" + self.name + "'")
"#;
    assert_eq!(hits("python", bad), vec![("PY-TAINT-SQLI".into(), 4)]);
}

#[test]
fn a_route_returning_html_text_built_from_request_data_is_xss_and_safe_responses_are_not() {
    // Returned text made of request data: the raw value, concatenation,
    // an f-string, `%` and `.format`, an element of a parsed document.
    let bad = r#"
import json
from flask import Flask, request, make_response, Response
app = Flask(__name__)

@app.route("/a")
def a():
    return request.args.get("name")

@app.route("/b")
def b():
    name = request.args.get("name", "")
    return "<p>Hello " + name + "</p>"

@app.route("/c")
def c():
    return f"<p>{request.args['q']}</p>"

@app.route("/d")
def d():
    return "<b>%s</b>" % request.form["x"]

@app.route("/e")
def e():
    data = json.loads(request.data)
    return "<i>{}</i>".format(data["who"])

@app.route("/f")
def f():
    return Response(request.args.get("m"))
"#;
    assert_eq!(
        hits("python", bad),
        vec![
            ("PY-TAINT-XSS".into(), 8),
            ("PY-TAINT-XSS".into(), 13),
            ("PY-TAINT-XSS".into(), 17),
            ("PY-TAINT-XSS".into(), 21),
            ("PY-TAINT-XSS".into(), 26),
            ("PY-TAINT-XSS".into(), 30),
        ]
    );
    // Safe responses: an autoescaping template, JSON, a contained file,
    // a redirect's own category, digests, numbers, a process's output,
    // another module's result, a parsed document's repr, a non-HTML type.
    let safe = r#"
import hashlib, hmac, json, os, subprocess, base64
from flask import Flask, request, render_template, jsonify, send_from_directory, Response
from app import fetcher
app = Flask(__name__)

@app.route("/1")
def one():
    return render_template("hello.html", name=request.args.get("name"))

@app.route("/2")
def two():
    return jsonify(user=request.args.get("name"))

@app.route("/3")
def three():
    return send_from_directory("/srv/files", request.args.get("file", ""))

@app.route("/4")
def four():
    pw = request.args.get("password", "")
    return hashlib.pbkdf2_hmac("sha256", pw.encode(), os.urandom(16), 200_000).hex()

@app.route("/5")
def five():
    key = request.args.get("k", "")
    mac = hmac.new(b"secret", key.encode(), hashlib.sha256).hexdigest()
    return base64.b64encode(hashlib.sha256(key.encode()).digest()).decode() + mac

@app.route("/6")
def six():
    return str(int(request.args.get("n", "0")) + 1)

@app.route("/7")
def seven():
    host = request.args.get("host", "")
    out = subprocess.run(["ping", "-c", "1", host], capture_output=True, check=False)
    return out.stdout

@app.route("/8")
def eight():
    return fetcher.download(request.args["url"])

@app.route("/9")
def nine():
    return str(json.loads(request.data))

@app.route("/10")
def ten():
    return Response(request.args.get("m"), mimetype="application/json")

@app.route("/11")
def eleven():
    return str(len(request.args.get("q", "")))
"#;
    assert!(py(safe).is_empty(), "{:?}", hits("python", safe));
}
