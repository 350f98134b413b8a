//! The vocabulary of Xcode's logs: build-command verbs, signing messages,
//! Run Script phase names, and how a diagnostic is made from a line's parts.

use crate::event::{Diagnostic, Kind, Level};
use crate::scan::split_target;

/// Xcode's build-command verbs: a line starting with one of them ends a
/// script phase's output.
pub(crate) const COMMANDS: &[&str] = &[
    "CompileSwift ",
    "SwiftCompile ",
    "SwiftDriver",
    "SwiftEmitModule ",
    "EmitSwiftModule ",
    "CompileSwiftSources ",
    "CompileC ",
    "Ld ",
    "CodeSign ",
    "ProcessInfoPlistFile ",
    "CopySwiftLibs ",
    "CompileAssetCatalog ",
    "CompileStoryboard ",
    "LinkStoryboards ",
    "CompileXIB ",
    "Touch ",
    "Validate ",
    "ProcessProductPackaging ",
    "CreateBuildDirectory ",
    "WriteAuxiliaryFile ",
    "GenerateDSYMFile ",
    "CpResource ",
    "CopyPlistFile ",
    "MkDir ",
    "SymLink ",
    "SwiftMergeGeneratedHeaders ",
    "ExtractAppIntentsMetadata ",
    "RegisterExecutionPolicyException ",
    "GenerateAssetSymbols ",
    "ProcessProductPackagingDER ",
    "=== BUILD TARGET ",
    "ScanDependencies ",
    "Copy ",
    "Libtool ",
    "CreateUniversalBinary ",
];

/// A diagnostic with its `(in target … from project …)` split off.
pub(crate) fn located(
    kind: Kind,
    level: Level,
    file: &str,
    line: u32,
    column: u32,
    message: &str,
) -> Diagnostic {
    let (message, target, project) = split_target(message);
    Diagnostic {
        kind: Some(kind),
        level: Some(level),
        file: if file == "ld" || !file.contains(['/', '.']) {
            String::new()
        } else {
            file.to_string()
        },
        line,
        column,
        message: message.to_string(),
        target: target.map(str::to_string),
        project: project.map(str::to_string),
        ..Diagnostic::default()
    }
}

pub(crate) fn crash(message: String) -> Diagnostic {
    Diagnostic {
        kind: Some(Kind::Crash),
        level: Some(Level::Error),
        message,
        ..Diagnostic::default()
    }
}

/// Code-signing and provisioning messages, whatever prints them.
pub(crate) fn is_signing(message: &str) -> bool {
    const WORDS: &[&str] = &[
        "No profiles for",
        "provisioning profile",
        "Provisioning profile",
        "Signing for ",
        "signing certificate",
        "Code Signing",
        "code signing",
        "errSecInternalComponent",
        "requires a development team",
        "No Account for Team",
        "Code signing",
    ];
    WORDS.iter().any(|w| message.contains(w))
}

/// `Run\ Script /path/Script-X.sh` → `Run Script`.
pub(crate) fn phase_name(rest: &str) -> String {
    let mut name = String::new();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    name.push(n);
                }
            }
            ' ' if chars.peek() == Some(&'/') => break,
            _ => name.push(c),
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phase_names_are_unescaped() {
        assert_eq!(
            phase_name("Run\\ SwiftLint /Users/me/Script-1.sh"),
            "Run SwiftLint"
        );
    }
}
