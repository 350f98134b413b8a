//! Guards, constant tables, merges and scopes across languages: each
//! vulnerable flow next to its guarded look-alike (a local-path check
//! that resets the value, a host allowlist on the parsed URL, a strict
//! pattern, a containment check, a constant table, a dead branch behind a
//! module constant, a comprehension's own variable).

use super::hits;

#[test]
fn a_local_path_check_that_resets_the_target_cleans_a_redirect() {
    let code = r#"
class A {
    void go(HttpServletRequest request, HttpServletResponse response) {
        String next = request.getParameter("next");
        if (next == null || !next.startsWith("/") || next.startsWith("//")) {
            next = "/home";
        }
        response.sendRedirect(request.getContextPath() + next);
        String raw = request.getParameter("raw");
        response.sendRedirect(request.getContextPath() + raw);
    }
}
"#;
    // The context path (a parameter's value) next to the checked target
    // does not undo the check; the unchecked one is reported.
    assert_eq!(hits("java", code), vec![("JAVA-TAINT-REDIRECT".into(), 10)]);
    let ruby = r#"
class SessionsController < ApplicationController
  def create
    target = params[:return_to].to_s
    target = "/" unless target.start_with?("/") && !target.start_with?("//")
    redirect_to target
    redirect_to params[:other]
  end
end
"#;
    assert_eq!(hits("ruby", ruby), vec![("RUBY-TAINT-REDIRECT".into(), 7)]);
}

#[test]
fn a_host_allowlist_on_the_parsed_url_cleans_the_request_but_not_the_path() {
    let go = r#"
package main

var allowed = map[string]bool{"api.github.com": true}

func proxy(w http.ResponseWriter, r *http.Request) {
	u, err := url.Parse(r.URL.Query().Get("url"))
	if err != nil || u.Scheme != "https" || !allowed[u.Hostname()] {
		http.Error(w, "forbidden", 400)
		return
	}
	resp, _ := http.Get(u.String())
	_ = resp
}
"#;
    assert!(hits("go", go).is_empty(), "{:?}", hits("go", go));
    let py = r#"
import requests
from urllib.parse import urlparse
from flask import request, abort
ALLOWED = {"api.example.com"}
def fetch():
    url = request.args.get("url", "")
    parts = urlparse(url)
    if parts.hostname not in ALLOWED:
        abort(400)
    requests.get(url, timeout=5)
    open("/srv/cache/" + url)
"#;
    // The host check says nothing about a file path built from the URL.
    assert_eq!(hits("python", py), vec![("PY-TAINT-PATH".into(), 12)]);
}

#[test]
fn a_strict_pattern_and_a_containment_check_clean_what_they_check() {
    let ts = r#"
import { execSync } from "child_process";
app.get("/log", (req, res) => {
  const branch = String(req.query.branch);
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(branch)) return res.status(400).end();
  execSync(`git log ${branch}`);
  execSync(`git log ${req.query.other}`);
});
"#;
    assert_eq!(hits("typescript", ts), vec![("JS-TAINT-CMDI".into(), 7)]);
    let php = r#"<?php
$base = realpath("/srv/reports");
$path = realpath($base . "/" . ($_GET["file"] ?? ""));
if ($path === false || strpos($path, $base . "/") !== 0) {
    exit;
}
readfile($path);
readfile("/srv/reports/" . $_GET["other"]);
"#;
    assert_eq!(hits("php", php), vec![("PHP-TAINT-PATH".into(), 8)]);
}

#[test]
fn constant_tables_dead_branches_and_comprehension_scopes() {
    let py = r#"
from django.http import FileResponse, HttpResponse
from django.utils.html import escape
REPORTS = {"daily": "/srv/daily.csv", "weekly": "/srv/weekly.csv"}
SHOW_RAW = False

def report(request):
    path = REPORTS.get(request.GET.get("r", ""))
    return FileResponse(open(path, "rb"))

def banner(request):
    message = "Welcome"
    if SHOW_RAW:
        message = request.GET.get("m", message)
    return HttpResponse("<div>" + message + "</div>")

def wishlist(request):
    items = [escape(i) for i in request.GET.getlist("item")]
    return HttpResponse("<ul>" + "".join("<li>%s</li>" % i for i in items) + "</ul>")

def raw(request):
    items = [i for i in request.GET.getlist("item")]
    return HttpResponse("<ul>" + "".join("<li>%s</li>" % i for i in items) + "</ul>")
"#;
    assert_eq!(hits("python", py), vec![("PY-TAINT-XSS".into(), 23)]);
}
