//! Version ordering per ecosystem.
//!
//! * crates.io, npm, SwiftURL: SemVer 2.0 (prerelease < release, build metadata ignored); a
//!   leading `v` and missing minor/patch components are tolerated (`1.2` = `1.2.0`).
//! * Go: SemVer with the `v` prefix, `+incompatible` ignored, pseudo-versions ordered as the
//!   prereleases they are (`v0.0.0-20191109021931-daa7c04131f5`).
//! * PyPI: PEP 440 (epoch, release, pre a/b/rc, post, dev, local; normalised spellings).
//! * RubyGems: `Gem::Version` (numeric and alphabetic segments; any letter makes a prerelease).
//! * CocoaPods: SemVer-like (lenient SemVer, falling back to Gem-style segments).

use std::cmp::Ordering;

use crate::Ecosystem;

/// Compares two versions with the ecosystem's rules; `None` if either does not parse.
pub fn compare(ecosystem: Ecosystem, a: &str, b: &str) -> Option<Ordering> {
    match ecosystem {
        Ecosystem::CratesIo | Ecosystem::Npm | Ecosystem::SwiftURL => {
            Some(parse_semver(a)?.cmp_precedence(&parse_semver(b)?))
        }
        Ecosystem::Go => Some(parse_go(a)?.cmp_precedence(&parse_go(b)?)),
        Ecosystem::PyPI => Some(Pep440::parse(a)?.cmp(&Pep440::parse(b)?)),
        Ecosystem::RubyGems => Some(GemVersion::parse(a)?.cmp(&GemVersion::parse(b)?)),
        Ecosystem::CocoaPods => match (parse_semver(a), parse_semver(b)) {
            (Some(x), Some(y)) => Some(x.cmp_precedence(&y)),
            _ => Some(GemVersion::parse(a)?.cmp(&GemVersion::parse(b)?)),
        },
    }
}

/// Whether the version parses under the ecosystem's rules.
pub fn is_valid(ecosystem: Ecosystem, v: &str) -> bool {
    compare(ecosystem, v, v).is_some()
}

/// Lenient SemVer: optional `v`/`=` prefix, `1` / `1.2` padded with zeros.
pub fn parse_semver(v: &str) -> Option<semver::Version> {
    let v = v.trim();
    let v = v.strip_prefix(['v', 'V', '=']).unwrap_or(v);
    if let Ok(parsed) = semver::Version::parse(v) {
        return Some(parsed);
    }
    // Pad the core: split off prerelease/build first.
    let cut = v.find(['-', '+']).unwrap_or(v.len());
    let (core, rest) = v.split_at(cut);
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty()
        || parts.len() > 3
        || parts
            .iter()
            .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let mut padded: Vec<String> = parts.iter().map(|p| trim_zeros(p)).collect();
    while padded.len() < 3 {
        padded.push("0".into());
    }
    semver::Version::parse(&format!("{}{rest}", padded.join("."))).ok()
}

fn trim_zeros(p: &str) -> String {
    let t = p.trim_start_matches('0');
    if t.is_empty() { "0".into() } else { t.into() }
}

/// Go module versions: `v` prefix required by Go but tolerated absent; `+incompatible` dropped.
pub fn parse_go(v: &str) -> Option<semver::Version> {
    let v = v.trim();
    let v = v.strip_suffix("+incompatible").unwrap_or(v);
    let v = v.strip_prefix('v').unwrap_or(v);
    let mut parsed = semver::Version::parse(v).ok()?;
    parsed.build = semver::BuildMetadata::EMPTY;
    Some(parsed)
}

// ---------------------------------------------------------------------------------------------
// PEP 440

/// A parsed PEP 440 version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pep440 {
    pub epoch: u64,
    pub release: Vec<u64>,
    /// (0 = a, 1 = b, 2 = rc, number)
    pub pre: Option<(u8, u64)>,
    pub post: Option<u64>,
    pub dev: Option<u64>,
    pub local: Vec<LocalSegment>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalSegment {
    Num(u64),
    Str(String),
}

impl PartialOrd for LocalSegment {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for LocalSegment {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (LocalSegment::Num(a), LocalSegment::Num(b)) => a.cmp(b),
            (LocalSegment::Str(a), LocalSegment::Str(b)) => a.cmp(b),
            // Numeric segments sort above alphanumeric ones.
            (LocalSegment::Num(_), LocalSegment::Str(_)) => Ordering::Greater,
            (LocalSegment::Str(_), LocalSegment::Num(_)) => Ordering::Less,
        }
    }
}

/// Sort key: epoch, release without trailing zeros, pre, post, dev.
type PepKey = (u64, Vec<u64>, (i8, u8, u64), (i8, u64), (i8, u64));

impl Pep440 {
    /// Parses with PEP 440's normalisation rules (case, `-`/`_`/`.` separators, `alpha`/`beta`/
    /// `c`/`pre`/`preview`, `rev`/`r`, implicit post `1.0-1`, leading `v`, surrounding space).
    pub fn parse(input: &str) -> Option<Pep440> {
        let s = input.trim().to_ascii_lowercase();
        let s = s.strip_prefix('v').unwrap_or(&s);
        let (public, local) = match s.split_once('+') {
            Some((p, l)) => (p, Some(l)),
            None => (s, None),
        };
        let b = public.as_bytes();
        let mut i = 0;
        let num = |i: &mut usize| -> Option<u64> {
            let start = *i;
            while *i < b.len() && b[*i].is_ascii_digit() {
                *i += 1;
            }
            if start == *i {
                return None;
            }
            public[start..*i].parse().ok()
        };
        // epoch + release
        let mut epoch = 0;
        let first = num(&mut i)?;
        let mut release = vec![first];
        if i < b.len() && b[i] == b'!' {
            epoch = first;
            i += 1;
            release = vec![num(&mut i)?];
        }
        while i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
            i += 1;
            release.push(num(&mut i)?);
        }
        let is_sep = |c: u8| c == b'.' || c == b'-' || c == b'_';
        let word = |i: &mut usize| -> String {
            let start = *i;
            while *i < b.len() && b[*i].is_ascii_alphabetic() {
                *i += 1;
            }
            public[start..*i].to_string()
        };
        let opt_num = |i: &mut usize| -> u64 {
            let save = *i;
            if *i < b.len() && is_sep(b[*i]) {
                *i += 1;
            }
            match num(i) {
                Some(n) => n,
                None => {
                    *i = save;
                    0
                }
            }
        };
        let mut pre = None;
        let mut post = None;
        let mut dev = None;
        // pre
        {
            let save = i;
            if i < b.len() && is_sep(b[i]) {
                i += 1;
            }
            let w = word(&mut i);
            let kind = match w.as_str() {
                "a" | "alpha" => Some(0),
                "b" | "beta" => Some(1),
                "rc" | "c" | "pre" | "preview" => Some(2),
                _ => None,
            };
            match kind {
                Some(k) => pre = Some((k, opt_num(&mut i))),
                None => i = save,
            }
        }
        // post
        {
            let save = i;
            if i < b.len() && b[i] == b'-' && i + 1 < b.len() && b[i + 1].is_ascii_digit() {
                i += 1;
                post = Some(num(&mut i)?);
            } else {
                if i < b.len() && is_sep(b[i]) {
                    i += 1;
                }
                let w = word(&mut i);
                if matches!(w.as_str(), "post" | "rev" | "r") {
                    post = Some(opt_num(&mut i));
                } else {
                    i = save;
                }
            }
        }
        // dev
        {
            let save = i;
            if i < b.len() && is_sep(b[i]) {
                i += 1;
            }
            let w = word(&mut i);
            if w == "dev" {
                dev = Some(opt_num(&mut i));
            } else {
                i = save;
            }
        }
        if i != b.len() {
            return None;
        }
        let mut local_segs = Vec::new();
        if let Some(l) = local {
            for seg in l.split(['.', '-', '_']) {
                if seg.is_empty() || !seg.bytes().all(|c| c.is_ascii_alphanumeric()) {
                    return None;
                }
                local_segs.push(match seg.parse::<u64>() {
                    Ok(n) if seg.bytes().all(|c| c.is_ascii_digit()) => LocalSegment::Num(n),
                    _ => LocalSegment::Str(seg.to_string()),
                });
            }
        }
        Some(Pep440 {
            epoch,
            release,
            pre,
            post,
            dev,
            local: local_segs,
        })
    }

    fn key(&self) -> PepKey {
        let mut release = self.release.clone();
        while release.len() > 1 && release.last() == Some(&0) {
            release.pop();
        }
        // A dev release of the final version (no pre, no post) sorts before all its pres.
        let pre = match (self.pre, self.post, self.dev) {
            (None, None, Some(_)) => (-1, 0, 0),
            (Some((k, n)), _, _) => (0, k, n),
            (None, _, _) => (1, 0, 0),
        };
        let post = match self.post {
            None => (-1, 0),
            Some(n) => (0, n),
        };
        let dev = match self.dev {
            None => (1, 0),
            Some(n) => (0, n),
        };
        (self.epoch, release, pre, post, dev)
    }
}

impl PartialOrd for Pep440 {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Pep440 {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key()
            .cmp(&other.key())
            .then_with(|| self.local.cmp(&other.local))
    }
}

// ---------------------------------------------------------------------------------------------
// RubyGems

/// `Gem::Version`: segments of digits or letters; any letter makes it a prerelease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GemVersion {
    segments: Vec<GemSeg>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum GemSeg {
    Num(u64),
    Str(String),
}

impl GemVersion {
    pub fn parse(input: &str) -> Option<GemVersion> {
        let s = input.trim();
        if s.is_empty() {
            return Some(GemVersion {
                segments: vec![GemSeg::Num(0)],
            });
        }
        if !s
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'.' || c == b'-')
            || !s.as_bytes()[0].is_ascii_digit()
        {
            return None;
        }
        let s = s.replace('-', ".pre.");
        let mut segments = Vec::new();
        for part in s.split('.') {
            if part.is_empty() {
                return None;
            }
            // Split runs of digits and letters: "0a1" → 0, "a", 1
            let bytes = part.as_bytes();
            let mut start = 0;
            while start < bytes.len() {
                let digit = bytes[start].is_ascii_digit();
                let mut end = start;
                while end < bytes.len() && bytes[end].is_ascii_digit() == digit {
                    end += 1;
                }
                let seg = &part[start..end];
                segments.push(if digit {
                    GemSeg::Num(seg.parse().ok()?)
                } else {
                    GemSeg::Str(seg.to_string())
                });
                start = end;
            }
        }
        // canonical_segments: drop trailing zeros of the release part and of the prerelease part
        let split = segments
            .iter()
            .position(|s| matches!(s, GemSeg::Str(_)))
            .unwrap_or(segments.len());
        let mut release: Vec<GemSeg> = segments[..split].to_vec();
        let mut pre: Vec<GemSeg> = segments[split..].to_vec();
        while matches!(release.last(), Some(GemSeg::Num(0))) && release.len() > 1 {
            release.pop();
        }
        while matches!(pre.last(), Some(GemSeg::Num(0))) {
            pre.pop();
        }
        release.extend(pre);
        Some(GemVersion { segments: release })
    }

    pub fn is_prerelease(&self) -> bool {
        self.segments.iter().any(|s| matches!(s, GemSeg::Str(_)))
    }
}

impl PartialOrd for GemVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for GemVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        let n = self.segments.len().max(other.segments.len());
        let zero = GemSeg::Num(0);
        for i in 0..n {
            let l = self.segments.get(i).unwrap_or(&zero);
            let r = other.segments.get(i).unwrap_or(&zero);
            let ord = match (l, r) {
                (GemSeg::Num(a), GemSeg::Num(b)) => a.cmp(b),
                (GemSeg::Str(a), GemSeg::Str(b)) => a.cmp(b),
                (GemSeg::Str(_), GemSeg::Num(_)) => Ordering::Less,
                (GemSeg::Num(_), GemSeg::Str(_)) => Ordering::Greater,
            };
            if ord != Ordering::Equal {
                return ord;
            }
        }
        Ordering::Equal
    }
}
