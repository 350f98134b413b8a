//! Parses a build log (or, with `--xcresult`, xcresulttool JSON) and prints
//! the report as JSON; `--junit` prints the JUnit XML instead.
//! `cargo run -p xcode-log --example parse_log -- build.log`

use std::io::BufReader;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let junit = args.iter().any(|a| a == "--junit");
    let xcresult = args.iter().any(|a| a == "--xcresult");
    let Some(path) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: parse_log [--junit] [--xcresult] FILE");
        return ExitCode::from(2);
    };
    let report = if xcresult {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{path}: {e}");
                return ExitCode::FAILURE;
            }
        };
        match xcode_log::xcresult::parse_xcresult(&text, xcode_log::Options::default()) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{path}: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("{path}: {e}");
                return ExitCode::FAILURE;
            }
        };
        match xcode_log::parse_reader(BufReader::new(file), xcode_log::Options::default()) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{path}: {e}");
                return ExitCode::FAILURE;
            }
        }
    };
    if junit {
        print!("{}", xcode_log::junit::junit(path, &report.tests));
    } else {
        match serde_json::to_string_pretty(&report) {
            Ok(json) => println!("{json}"),
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
