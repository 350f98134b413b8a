//! A hostile tool skill against the host's filesystem guard: FIFOs and
//! sockets, writes into `.git` and `.agent/skills` (also relative to a
//! directory descriptor), symlinks out of the mount, the agent's own files.
//! Every tool reports the OS error text, so tests can assert the refusal.

wit_bindgen::generate!({
    path: "../../../wit",
    world: "tool-skill",
    generate_all,
});

use std::ffi::CString;

use agent::skill::types::{SkillError, ToolSpec};
use exports::agent::skill::tool::Guest;

struct FsHostile;

fn arg(input: &serde_json::Value, key: &str) -> String {
    input
        .get(key)
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string()
}

fn failed(what: &str, e: std::io::Error) -> SkillError {
    SkillError::Failed(format!("{what} failed: {e}"))
}

fn c(s: &str) -> Result<CString, SkillError> {
    CString::new(s).map_err(|e| SkillError::InvalidInput(e.to_string()))
}

/// `openat(open(dir, O_DIRECTORY), path, O_CREAT|O_WRONLY|O_TRUNC)`, then
/// writes `text`: a write relative to a directory descriptor.
fn write_at(dir: &str, path: &str, text: &str) -> Result<String, SkillError> {
    let (dir, path) = (c(dir)?, c(path)?);
    // SAFETY: valid C strings; descriptors are closed below.
    unsafe {
        let dfd = libc::open(dir.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY);
        if dfd < 0 {
            return Err(failed("open dir", std::io::Error::last_os_error()));
        }
        let fd = libc::openat(
            dfd,
            path.as_ptr(),
            libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
            0o644,
        );
        let err = std::io::Error::last_os_error();
        libc::close(dfd);
        if fd < 0 {
            return Err(failed("openat", err));
        }
        let n = libc::write(fd, text.as_ptr().cast(), text.len());
        let err = std::io::Error::last_os_error();
        libc::close(fd);
        if n < 0 {
            return Err(failed("write", err));
        }
    }
    Ok("written".into())
}

/// `mkdirat(open(dir, O_DIRECTORY), path)`.
fn mkdir_at(dir: &str, path: &str) -> Result<String, SkillError> {
    let (dir, path) = (c(dir)?, c(path)?);
    // SAFETY: valid C strings; the descriptor is closed below.
    unsafe {
        let dfd = libc::open(dir.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY);
        if dfd < 0 {
            return Err(failed("open dir", std::io::Error::last_os_error()));
        }
        let r = libc::mkdirat(dfd, path.as_ptr(), 0o755);
        let err = std::io::Error::last_os_error();
        libc::close(dfd);
        if r < 0 {
            return Err(failed("mkdirat", err));
        }
    }
    Ok("created".into())
}

fn symlink(target: &str, link: &str) -> Result<String, SkillError> {
    let (target, link) = (c(target)?, c(link)?);
    // SAFETY: valid C strings.
    if unsafe { libc::symlink(target.as_ptr(), link.as_ptr()) } < 0 {
        return Err(failed("symlink", std::io::Error::last_os_error()));
    }
    Ok("linked".into())
}

const TOOLS: [&str; 10] = [
    "read", "write", "append", "write-at", "mkdir-at", "symlink", "rename", "hardlink", "remove",
    "list",
];

impl Guest for FsHostile {
    fn list_tools() -> Vec<ToolSpec> {
        TOOLS
            .iter()
            .map(|name| ToolSpec {
                name: name.to_string(),
                description: format!("hostile filesystem tool `{name}`"),
                input_schema: r#"{"type":"object"}"#.to_string(),
                requires_approval: true,
            })
            .collect()
    }

    fn call_tool(name: String, input: String) -> Result<String, SkillError> {
        let input: serde_json::Value =
            serde_json::from_str(&input).map_err(|e| SkillError::InvalidInput(e.to_string()))?;
        let path = arg(&input, "path");
        match name.as_str() {
            "read" => std::fs::read_to_string(&path).map_err(|e| failed("read", e)),
            "write" => std::fs::write(&path, arg(&input, "text"))
                .map(|_| "written".into())
                .map_err(|e| failed("write", e)),
            "append" => {
                use std::io::Write;
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(&path)
                    .and_then(|mut f| f.write_all(arg(&input, "text").as_bytes()))
                    .map(|_| "appended".into())
                    .map_err(|e| failed("append", e))
            }
            "write-at" => write_at(&arg(&input, "dir"), &path, &arg(&input, "text")),
            "mkdir-at" => mkdir_at(&arg(&input, "dir"), &path),
            "symlink" => symlink(&arg(&input, "target"), &path),
            "rename" => std::fs::rename(arg(&input, "from"), arg(&input, "to"))
                .map(|_| "renamed".into())
                .map_err(|e| failed("rename", e)),
            "hardlink" => std::fs::hard_link(arg(&input, "from"), arg(&input, "to"))
                .map(|_| "linked".into())
                .map_err(|e| failed("hardlink", e)),
            "remove" => std::fs::remove_file(&path)
                .map(|_| "removed".into())
                .map_err(|e| failed("remove", e)),
            "list" => {
                let mut names: Vec<String> = std::fs::read_dir(&path)
                    .map_err(|e| failed("list", e))?
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect();
                names.sort();
                Ok(names.join(","))
            }
            other => Err(SkillError::NotFound(other.to_string())),
        }
    }
}

export!(FsHostile);
