//! `agent config ...`

use anyhow::Result;

use crate::app::App;
use crate::cli::{ConfigCommand, Format, exit};

pub fn run(app: &mut App, cmd: ConfigCommand) -> Result<u8> {
    let file = app.paths.config_file();
    match cmd {
        ConfigCommand::Path => println!("{}", file.display()),
        ConfigCommand::Show { format } => {
            let config = app.config()?;
            let keys = config.api_keys(|k| std::env::var(k).ok());
            match format {
                Format::Json => {
                    let api_keys: serde_json::Map<String, serde_json::Value> = keys
                        .iter()
                        .map(|k| {
                            (
                                k.provider.as_str().to_string(),
                                serde_json::json!({ "env": k.var, "set": k.set }),
                            )
                        })
                        .collect();
                    let out = serde_json::json!({
                        "file": file.display().to_string(),
                        "file_exists": file.is_file(),
                        "config": config.to_json(),
                        "api_keys": api_keys,
                    });
                    println!("{}", serde_json::to_string_pretty(&out)?);
                }
                Format::Text => {
                    let state = if file.is_file() {
                        "read"
                    } else {
                        "not found; defaults"
                    };
                    println!("# config file: {} ({state})", file.display());
                    println!(
                        "# effective configuration: the file, then defaults, then environment overrides"
                    );
                    for k in &keys {
                        let set = if k.set { "set" } else { "not set" };
                        println!("# {} API key: ${} is {set}", k.provider, k.var);
                    }
                    println!();
                    print!("{}", config.to_toml()?);
                }
            }
        }
    }
    Ok(exit::OK)
}
