//! Java: Servlet and Spring sources in the shapes of the servlet benchmark
//! suites (helpers, collections, StringBuilder, constant branches,
//! switch on a constant character).

use super::hits;

fn servlet(body: &str) -> String {
    format!(
        "public class T extends HttpServlet {{\n\
         public void doPost(HttpServletRequest request, HttpServletResponse response) throws Exception {{\n\
         {body}\n}}\n}}\n"
    )
}

fn java(body: &str) -> Vec<String> {
    hits("java", &servlet(body))
        .into_iter()
        .map(|(r, _)| r)
        .collect()
}

#[test]
fn get_parameter_into_statement_execute_and_prepare_statement() {
    let bad = r#"
String param = request.getParameter("id");
String sql = "SELECT * FROM USERS WHERE USERNAME='" + param + "'";
java.sql.Statement statement = conn.createStatement();
statement.executeQuery(sql);
java.sql.PreparedStatement ps = conn.prepareStatement("SELECT * FROM T WHERE A='" + param + "'");
"#;
    assert_eq!(java(bad), vec!["JAVA-TAINT-SQLI", "JAVA-TAINT-SQLI"]);
    let safe = r#"
String param = request.getParameter("id");
java.sql.PreparedStatement ps = conn.prepareStatement("SELECT * FROM T WHERE A=?");
ps.setString(1, param);
ps.execute();
int n = Integer.parseInt(param);
conn.createStatement().execute("SELECT * FROM T WHERE N=" + n);
"#;
    assert!(java(safe).is_empty(), "{:?}", java(safe));
}

#[test]
fn a_constant_condition_picks_its_branch() {
    let bad = r#"
String param = request.getHeader("Referer");
String bar;
int num = 106;
bar = (7 * 42) - num > 200 ? "This should never happen" : param;
Runtime.getRuntime().exec("cmd /c echo " + bar);
"#;
    assert_eq!(java(bad), vec!["JAVA-TAINT-CMDI"]);
    let safe = bad.replace("(7 * 42) - num > 200", "(7 * 18) + num > 200");
    assert!(java(&safe).is_empty(), "{:?}", java(&safe));
    let if_safe = r#"
String param = request.getParameter("p");
String bar = "safe";
int num = 86;
if ((7 * 42) - num > 200) bar = "This_should_always_happen"; else bar = param;
new java.io.File(bar);
"#;
    assert!(java(if_safe).is_empty(), "{:?}", java(if_safe));
}

#[test]
fn switch_on_a_constant_character_walks_its_case_only() {
    let body = |target: &str| {
        format!(
            r#"
String param = request.getParameter("p");
String bar;
String guess = "ABC";
char switchTarget = guess.charAt({target});
switch (switchTarget) {{
  case 'A': bar = param; break;
  case 'B': bar = "bobs_your_uncle"; break;
  case 'C': case 'D': bar = param; break;
  default: bar = "bobs_your_uncle"; break;
}}
response.getWriter().println(bar);
"#
        )
    };
    assert_eq!(java(&body("0")), vec!["JAVA-TAINT-XSS"]);
    assert!(java(&body("1")).is_empty(), "{:?}", java(&body("1")));
}

#[test]
fn maps_and_lists_with_constant_keys_are_followed_element_by_element() {
    let map = |key: &str| {
        format!(
            r#"
String param = request.getParameter("p");
java.util.HashMap<String, Object> map = new java.util.HashMap<String, Object>();
map.put("keyA", "a-Value");
map.put("keyB", param);
map.put("keyC", "another-Value");
String bar = (String) map.get("{key}");
response.getWriter().print(bar);
"#
        )
    };
    assert_eq!(java(&map("keyB")), vec!["JAVA-TAINT-XSS"]);
    assert!(java(&map("keyA")).is_empty(), "{:?}", java(&map("keyA")));
    let list = |i: &str| {
        format!(
            r#"
String param = request.getParameter("p");
java.util.List<String> valuesList = new java.util.ArrayList<String>();
valuesList.add("safe");
valuesList.add(param);
valuesList.add("moresafe");
valuesList.remove(0);
String bar = valuesList.get({i});
java.io.File f = new java.io.File("/tmp/" + bar);
"#
        )
    };
    assert_eq!(java(&list("0")), vec!["JAVA-TAINT-PATH"]);
    assert!(java(&list("1")).is_empty(), "{:?}", java(&list("1")));
}

#[test]
fn helpers_string_builders_and_sanitizers() {
    let code = r#"
public class T extends HttpServlet {
  public void doPost(HttpServletRequest request, HttpServletResponse response) throws Exception {
    String param = "";
    java.util.Enumeration<String> headers = request.getHeaders("X");
    if (headers != null && headers.hasMoreElements()) {
      param = headers.nextElement();
    }
    String bar = new Test().doSomething(request, param);
    response.getWriter().format(bar, "a");
    String clean = new Test().escape(param);
    response.getWriter().write(clean);
  }
  private class Test {
    public String doSomething(HttpServletRequest request, String param) {
      StringBuilder sb = new StringBuilder();
      sb.append("x");
      sb.append(param);
      return sb.toString();
    }
    public String escape(String param) {
      return org.owasp.esapi.ESAPI.encoder().encodeForHTML(param);
    }
  }
}
"#;
    assert_eq!(hits("java", code), vec![("JAVA-TAINT-XSS".into(), 10)]);
}

#[test]
fn cookies_ldap_xpath_trust_boundary_and_spring_parameters() {
    let bad = r#"
String param = "noCookieValueSupplied";
javax.servlet.http.Cookie[] theCookies = request.getCookies();
if (theCookies != null) {
  for (javax.servlet.http.Cookie theCookie : theCookies) {
    if (theCookie.getName().equals("c")) {
      param = java.net.URLDecoder.decode(theCookie.getValue(), "UTF-8");
      break;
    }
  }
}
javax.naming.directory.DirContext ctx = ads.getDirContext();
String filter = "(&(objectclass=person)(uid=" + param + "))";
ctx.search("name", filter, new Object[0], sc);
javax.xml.xpath.XPath xp = javax.xml.xpath.XPathFactory.newInstance().newXPath();
xp.evaluate("/Employees/Employee[@emplid='" + param + "']", doc);
request.getSession().setAttribute("userid", param);
"#;
    assert_eq!(
        java(bad),
        vec!["JAVA-TAINT-LDAP", "JAVA-TAINT-TRUST", "JAVA-TAINT-XPATH"]
    );
    let spring = r#"
@RestController
public class C {
  @GetMapping("/u")
  public String u(@RequestParam("name") String name, String other) {
    jdbc.queryForList("SELECT * FROM u WHERE n = '" + name + "'");
    jdbc.queryForList("SELECT * FROM u WHERE n = '" + other + "'");
    return "ok";
  }
}
"#;
    assert_eq!(hits("java", spring), vec![("JAVA-TAINT-SQLI".into(), 6)]);
}

#[test]
fn insecure_cookies_and_weak_randomness_for_security_values() {
    let bad = r#"
double value = new java.util.Random().nextDouble();
String rememberMeKey = Double.toString(value).substring(2);
javax.servlet.http.Cookie rememberMe = new javax.servlet.http.Cookie("rememberMe", rememberMeKey);
rememberMe.setPath(request.getRequestURI());
response.addCookie(rememberMe);
"#;
    assert_eq!(java(bad), vec!["JAVA-COOKIE-001", "JAVA-WEAKRAND-001"]);
    let safe = r#"
double value = java.security.SecureRandom.getInstance("SHA1PRNG").nextDouble();
String rememberMeKey = Double.toString(value).substring(2);
javax.servlet.http.Cookie rememberMe = new javax.servlet.http.Cookie("rememberMe", rememberMeKey);
rememberMe.setSecure(true);
response.addCookie(rememberMe);
"#;
    assert!(java(safe).is_empty(), "{:?}", java(safe));
    let shuffle =
        "int pick = new java.util.Random().nextInt(10);\nresponse.getWriter().println(pick);\n";
    assert!(java(shuffle).is_empty(), "{:?}", java(shuffle));
}
