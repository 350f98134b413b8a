//! Throughput: a generated, realistic 100 MB xcodebuild log (compile
//! commands with their long invocations, warnings with excerpts, XCTest and
//! Swift Testing lines, colour codes) parsed by `parse_reader`. Goal (issue
//! 19): 100 MB in at most 2 s.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const BLOCK: &str = "\
SwiftCompile normal arm64 Compiling\\ ContentView.swift /Users/dev/Demo/Demo/ContentView.swift (in target 'Demo' from project 'Demo')
    cd /Users/dev/Demo
    /Applications/Xcode.app/Contents/Developer/Toolchains/XcodeDefault.xctoolchain/usr/bin/swift-frontend -frontend -c -primary-file /Users/dev/Demo/Demo/ContentView.swift -emit-module-path /Users/dev/Library/Developer/Xcode/DerivedData/Demo-abc/Build/Intermediates.noindex/Demo.build/Debug-iphonesimulator/Demo.build/Objects-normal/arm64/ContentView.swiftmodule -target arm64-apple-ios17.0-simulator -module-name Demo -Onone -enable-testing -g
/Users/dev/Demo/Demo/ContentView.swift:42:13: warning: initialization of immutable value 'unused' was never used; consider replacing with assignment to '_' or removing it
        let unused = 42
        ~~~~^~~~~~
\x1b[1mCompileC\x1b[0m /Users/dev/Library/Developer/Xcode/DerivedData/Demo-abc/Build/Intermediates.noindex/Demo.build/Objects-normal/arm64/Legacy.o /Users/dev/Demo/Demo/Legacy.m normal arm64 objective-c com.apple.compilers.llvm.clang.1_0.compiler (in target 'Demo' from project 'Demo')
    cd /Users/dev/Demo
    /Applications/Xcode.app/Contents/Developer/Toolchains/XcodeDefault.xctoolchain/usr/bin/clang -x objective-c -target arm64-apple-ios17.0-simulator -fmessage-length=0 -fdiagnostics-show-note-include-stack -fmacro-backtrace-limit=0 -std=gnu11 -fobjc-arc -fmodules -c /Users/dev/Demo/Demo/Legacy.m -o Legacy.o
Test Case '-[DemoTests.DemoTests testExample]' started.
Test Case '-[DemoTests.DemoTests testExample]' passed (0.001 seconds).
Test case 'DemoTests.testParallel()' passed on 'Clone 1 of iPhone 15 - Demo (4242)' (0.002 seconds)
\u{2714} Test addition() passed after 0.001 seconds.
";

/// Every fixture (build failures, signing, XCTest, parallel testing, Swift
/// Testing, SwiftPM, crashes, look-alikes) once per 50 compile blocks.
const FIXTURES: &[&str] = &[
    include_str!("../tests/data/xcodebuild-build-failed.log"),
    include_str!("../tests/data/xcodebuild-signing.log"),
    include_str!("../tests/data/xcodebuild-xctest.log"),
    include_str!("../tests/data/xcodebuild-parallel.log"),
    include_str!("../tests/data/swift-test-linux.log"),
    include_str!("../tests/data/swift-testing-macos.log"),
    include_str!("../tests/data/swift-build-failed.log"),
    include_str!("../tests/data/swift-test-crash.log"),
    include_str!("../tests/data/lookalikes.log"),
];

fn log_of(size: usize) -> Vec<u8> {
    let mut log = Vec::with_capacity(size + 64 * 1024);
    let mut i = 0u64;
    while log.len() < size {
        // Vary the line numbers so findings stay distinct up to the report's cap.
        let block = BLOCK.replace(":42:13:", &format!(":{}:13:", i % 5000 + 1));
        log.extend_from_slice(block.as_bytes());
        if i.is_multiple_of(50) {
            for f in FIXTURES {
                log.extend_from_slice(f.as_bytes());
            }
        }
        i += 1;
    }
    log
}

fn parse(c: &mut Criterion) {
    let log = log_of(100 * 1024 * 1024);
    let mut group = c.benchmark_group("xcode_log");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Bytes(log.len() as u64));
    group.bench_function("parse_reader_100MB", |b| {
        b.iter(|| {
            let report =
                xcode_log::parse_reader(black_box(&log[..]), xcode_log::Options::default())
                    .unwrap();
            assert!(report.summary.warnings > 0);
            black_box(report)
        })
    });
    group.finish();
}

criterion_group!(benches, parse);
criterion_main!(benches);
