//! PHP: superglobals and Laravel requests into every sink family, each
//! with a safe look-alike (escaped, cast, allowlisted, prepared).

use super::hits;

fn php(code: &str) -> Vec<(String, u32)> {
    hits("php", code)
}

#[test]
fn superglobals_reach_sql_commands_files_html_and_eval() {
    let bad = r#"<html><body>
<?php
$id = $_GET['id'];
$r = mysqli_query($link, "SELECT * FROM items WHERE id = " . $id);
$q = $_POST["q"];
$rows = $pdo->query("SELECT * FROM t WHERE name LIKE '%$q%'");
system("nslookup " . $_REQUEST['host']);
$out = `ls {$_GET['dir']}`;
include $_GET['tpl'] . ".php";
echo "<p>Hi " . $_COOKIE['name'] . "</p>";
eval("return " . $_POST['expr'] . ";");
$o = unserialize($_COOKIE['state']);
?>
</body></html>
"#;
    assert_eq!(
        php(bad),
        vec![
            ("PHP-TAINT-CMDI".into(), 7),
            ("PHP-TAINT-CMDI".into(), 8),
            ("PHP-TAINT-CODE".into(), 11),
            ("PHP-TAINT-DESER".into(), 12),
            ("PHP-TAINT-PATH".into(), 9),
            ("PHP-TAINT-SQLI".into(), 4),
            ("PHP-TAINT-SQLI".into(), 6),
            ("PHP-TAINT-XSS".into(), 10),
        ]
    );
    let safe = r#"<?php
$id = intval($_GET['id']);
$r = mysqli_query($link, "SELECT * FROM items WHERE id = " . $id);
$n = (int) $_POST['n'];
$rows = $pdo->query("SELECT * FROM t LIMIT " . $n);
$stmt = $pdo->prepare("SELECT * FROM t WHERE name = ?");
$stmt->execute([$_POST['q']]);
$e = mysqli_real_escape_string($link, $_GET['e']);
mysqli_query($link, "SELECT * FROM t WHERE e = '" . $e . "'");
system("nslookup " . escapeshellarg($_REQUEST['host']));
include "pages/" . basename($_GET['tpl']) . ".php";
echo "<p>Hi " . htmlspecialchars($_COOKIE['name'], ENT_QUOTES) . "</p>";
$o = unserialize($_COOKIE['state'], ["allowed_classes" => false]);
echo count(json_decode($_POST['doc'], true));
echo shell_exec("uptime");
"#;
    assert!(php(safe).is_empty(), "{:?}", php(safe));
}

#[test]
fn redirects_requests_ldap_xpath_and_the_session() {
    let bad = r#"<?php
header("Location: " . $_GET['to']);
$ch = curl_init();
curl_setopt($ch, CURLOPT_URL, $_POST['hook']);
$body = file_get_contents($_GET['feed']);
$f = ldap_search($ds, "dc=corp", "(cn=" . $_GET['cn'] . ")");
$xp = new DOMXPath($dom);
$nodes = $xp->query("//u[@id='" . $_GET['u'] . "']");
$_SESSION['role'] = $_POST['role'];
"#;
    assert_eq!(
        php(bad),
        vec![
            ("PHP-TAINT-LDAP".into(), 6),
            ("PHP-TAINT-PATH".into(), 5),
            ("PHP-TAINT-REDIRECT".into(), 2),
            ("PHP-TAINT-SSRF".into(), 4),
            ("PHP-TAINT-SSRF".into(), 5),
            ("PHP-TAINT-TRUST".into(), 9),
            ("PHP-TAINT-XPATH".into(), 8),
        ]
    );
    let safe = r#"<?php
$to = in_array($_GET['to'] ?? '', ['/a', '/b'], true) ? $_GET['to'] : '/';
header("Location: " . $to);
header("Location: /search?q=" . urlencode($_GET['q']));
curl_setopt($ch, CURLOPT_URL, "https://api.example.com/v1");
$body = file_get_contents("https://api.example.com/x?c=" . urlencode($_GET['c']));
$f = ldap_search($ds, "dc=corp", "(cn=" . ldap_escape($_GET['cn'], "", LDAP_ESCAPE_FILTER) . ")");
$_SESSION['size'] = (int) $_GET['size'];
if (!is_numeric($_GET['page'])) {
    exit;
}
$nodes = $xp->query("//p[" . $_GET['page'] . "]");
"#;
    assert!(php(safe).is_empty(), "{:?}", php(safe));
}

#[test]
fn the_request_body_is_a_source_and_reading_it_is_not_a_file_access() {
    let code = r#"<?php
$body = file_get_contents('php://input');
$data = json_decode($body, true);
$rows = mysqli_query($link, "SELECT * FROM t WHERE k = '" . $data["k"] . "'");
$conf = file_get_contents("/etc/app/config.json");
"#;
    assert_eq!(php(code), vec![("PHP-TAINT-SQLI".into(), 4)]);
}

#[test]
fn a_laravel_request_and_a_helper_function_carry_taint() {
    let bad = r#"<?php
namespace App\Http\Controllers;

function run_report($name) {
    return shell_exec("report " . $name);
}

class ReportController extends Controller
{
    public function show(Request $request)
    {
        $rows = DB::select("SELECT * FROM r WHERE k = '" . $request->input('k') . "'");
        return run_report($request->query('name'));
    }
}
"#;
    assert_eq!(
        php(bad),
        vec![("PHP-TAINT-CMDI".into(), 5), ("PHP-TAINT-SQLI".into(), 12)]
    );
}

#[test]
fn weak_hashes_random_values_ciphers_and_cookies_are_found_and_strong_ones_are_not() {
    let bad = r#"<?php
$digest = md5($_POST['password']);
$sig = hash('sha1', $apiSecret . $payload);
$reset_token = substr(str_shuffle(md5(mt_rand())), 0, 16);
$pin = rand(1000, 9999);
$ct = openssl_encrypt($card, 'bf-cbc', $key);
$ct2 = openssl_encrypt($card, 'AES-256-ECB', $key);
setcookie('sid', $sid, time() + 60, '/', '', false, true);
setcookie('remember', $v, ['expires' => 0, 'httponly' => true]);
session_set_cookie_params(['lifetime' => 0, 'secure' => false]);
"#;
    let found: Vec<(String, u32)> = php(bad)
        .into_iter()
        .filter(|(r, _)| !r.contains("-TAINT-"))
        .collect();
    assert_eq!(
        found,
        vec![
            ("PHP-COOKIE-001".into(), 8),
            ("PHP-COOKIE-001".into(), 9),
            ("PHP-COOKIE-001".into(), 10),
            ("PHP-CRYPTO-001".into(), 2),
            ("PHP-CRYPTO-001".into(), 3),
            ("PHP-CRYPTO-001".into(), 4),
            ("PHP-CRYPTO-002".into(), 6),
            ("PHP-CRYPTO-002".into(), 7),
            ("PHP-RANDOM-001".into(), 4),
            ("PHP-RANDOM-001".into(), 5),
        ]
    );
    let safe = r#"<?php
$hash = password_hash($_POST['password'], PASSWORD_DEFAULT);
$sig = hash_hmac('sha256', $payload, $apiSecret);
$etag = md5($body);
$reset_token = bin2hex(random_bytes(32));
$pin = random_int(1000, 9999);
$shuffle = rand(0, count($items) - 1);
$ct = openssl_encrypt($card, 'aes-256-gcm', $key, OPENSSL_RAW_DATA, $iv, $tag);
setcookie('sid', $sid, ['expires' => 0, 'secure' => true, 'httponly' => true]);
setcookie('sid', $sid, time() + 60, '/', '', true, true);
session_set_cookie_params(['lifetime' => 0, 'secure' => true]);
"#;
    assert!(php(safe).is_empty(), "{:?}", php(safe));
}
