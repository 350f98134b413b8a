//! JUnit XML: pytest's `--junitxml` file, node's `--test-reporter=junit`.
//!
//! Every `<testcase>` anywhere in the document is a case (suites nest in
//! node's output): its name is `classname::name` (just `name` when there is
//! no classname), `file` and `time` are read when present; a `<failure>` or
//! `<error>` child makes it failed (message: the `message` attribute, then
//! the element's text), a `<skipped>` child makes it skipped.

use std::path::PathBuf;

use quick_xml::XmlVersion;
use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesStart, Event};
use quick_xml::reader::Reader;

use crate::{Outcome, ParseError, TestCase};

pub(crate) fn parse(xml: &str, source: &str) -> Result<Vec<TestCase>, ParseError> {
    let line_at = |position: u64| {
        let end = (position as usize).min(xml.len());
        xml.as_bytes()[..end]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1
    };
    let mut reader = Reader::from_str(xml);
    let mut cases = Vec::new();
    let mut current: Option<TestCase> = None;
    // Inside a <failure>, <error> or <skipped> of the current case: its text.
    let mut detail: Option<String> = None;
    let mut saw_root = false;
    loop {
        let event = reader.read_event().map_err(|error| {
            ParseError::new(
                source,
                line_at(reader.error_position()),
                format!("not well-formed XML: {error}"),
            )
        })?;
        let line = line_at(reader.buffer_position());
        match event {
            Event::Eof => break,
            Event::Start(element) | Event::Empty(element) if !saw_root => {
                saw_root = true;
                let root = element.local_name();
                if root.as_ref() != "testsuites" && root.as_ref() != "testsuite" {
                    return Err(ParseError::new(
                        source,
                        line,
                        format!(
                            "the root element is <{}>, expected <testsuites> or <testsuite>",
                            root.as_ref()
                        ),
                    ));
                }
            }
            Event::Start(element) if element.local_name().as_ref() == "testcase" => {
                if current.is_some() {
                    return Err(ParseError::new(
                        source,
                        line,
                        "a <testcase> inside another <testcase>",
                    ));
                }
                current = Some(testcase(&element, source, line)?);
            }
            Event::Empty(element) if element.local_name().as_ref() == "testcase" => {
                cases.push(testcase(&element, source, line)?);
            }
            Event::End(element) if element.local_name().as_ref() == "testcase" => {
                if let Some(case) = current.take() {
                    cases.push(case);
                }
            }
            Event::Start(element) => {
                if let Some(case) = current.as_mut()
                    && mark(case, &element, source, line)?
                {
                    detail = Some(String::new());
                }
            }
            Event::Empty(element) => {
                if let Some(case) = current.as_mut() {
                    mark(case, &element, source, line)?;
                }
            }
            Event::Text(text) => {
                if let Some(detail) = detail.as_mut() {
                    detail.push_str(&text.xml_content(XmlVersion::Implicit1_0));
                }
            }
            Event::CData(text) => {
                if let Some(detail) = detail.as_mut() {
                    detail.push_str(&text.xml_content(XmlVersion::Implicit1_0));
                }
            }
            Event::GeneralRef(reference) => {
                if let Some(detail) = detail.as_mut() {
                    let resolved = match reference.resolve_char_ref() {
                        Ok(Some(ch)) => ch.to_string(),
                        _ => {
                            let name = reference.xml_content(XmlVersion::Implicit1_0);
                            resolve_predefined_entity(&name).unwrap_or("").to_string()
                        }
                    };
                    detail.push_str(&resolved);
                }
            }
            Event::End(element) => {
                let name = element.local_name();
                if matches!(name.as_ref(), "failure" | "error" | "skipped")
                    && let (Some(text), Some(case)) = (detail.take(), current.as_mut())
                {
                    let text = text.trim();
                    if !text.is_empty() {
                        case.message = Some(match case.message.take() {
                            Some(message) if !text.contains(&message) => {
                                format!("{message}\n{text}")
                            }
                            _ => text.to_string(),
                        });
                    }
                }
            }
            _ => {}
        }
    }
    if !saw_root {
        return Err(ParseError::new(source, 0, "empty: no <testsuites> element"));
    }
    Ok(cases)
}

/// Applies a `<failure>`, `<error>` or `<skipped>` child to `case`; false
/// for any other element.
fn mark(
    case: &mut TestCase,
    element: &BytesStart<'_>,
    source: &str,
    line: usize,
) -> Result<bool, ParseError> {
    let outcome = match element.local_name().as_ref() {
        "failure" | "error" => Outcome::Failed,
        "skipped" => Outcome::Skipped,
        _ => return Ok(false),
    };
    // A failure outranks a skip seen before it.
    if case.outcome != Outcome::Failed {
        case.outcome = outcome;
    }
    if let Some(message) = attribute(element, "message", source, line)? {
        case.message = Some(message);
    }
    Ok(true)
}

fn testcase(element: &BytesStart<'_>, source: &str, line: usize) -> Result<TestCase, ParseError> {
    let name = attribute(element, "name", source, line)?
        .ok_or_else(|| ParseError::new(source, line, "a <testcase> without a name attribute"))?;
    let name = match attribute(element, "classname", source, line)? {
        Some(class) if !class.is_empty() => format!("{class}::{name}"),
        _ => name,
    };
    let duration_ms = match attribute(element, "time", source, line)? {
        None => None,
        Some(time) => Some(
            time.trim()
                .parse::<f64>()
                .map(|seconds| (seconds * 1000.0).round() as u64)
                .map_err(|_| {
                    ParseError::new(
                        source,
                        line,
                        format!("testcase `{name}`: time=\"{time}\" is not a number of seconds"),
                    )
                })?,
        ),
    };
    Ok(TestCase {
        file: attribute(element, "file", source, line)?.map(PathBuf::from),
        name,
        outcome: Outcome::Passed,
        duration_ms,
        message: None,
    })
}

fn attribute(
    element: &BytesStart<'_>,
    key: &str,
    source: &str,
    line: usize,
) -> Result<Option<String>, ParseError> {
    for attribute in element.attributes() {
        let attribute = attribute
            .map_err(|error| ParseError::new(source, line, format!("bad attribute: {error}")))?;
        if attribute.key.local_name().as_ref() == key {
            let value = attribute
                .normalized_value(XmlVersion::Implicit1_0)
                .map_err(|error| {
                    ParseError::new(source, line, format!("bad `{key}` value: {error}"))
                })?;
            return Ok(Some(value.into_owned()));
        }
    }
    Ok(None)
}
