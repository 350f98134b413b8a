//! A minimal ZIP reader (stored and deflate entries, ZIP64) — enough for osv.dev's `all.zip`
//! exports, without another dependency.

use std::io::Read;

pub struct Entry {
    pub name: String,
    pub data: Vec<u8>,
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    b.get(at..at.checked_add(2)?)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at.checked_add(4)?)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    b.get(at..at.checked_add(8)?).map(|s| {
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        u64::from_le_bytes(a)
    })
}

/// Reads every file entry of the archive. Errors are plain messages (the caller adds the path).
pub fn read_all(bytes: &[u8]) -> Result<Vec<Entry>, String> {
    // End of central directory: search backwards (comment up to 64 KiB).
    let min = bytes.len().saturating_sub(22 + 65535);
    let eocd = (min..bytes.len().saturating_sub(21))
        .rev()
        .find(|&i| u32_at(bytes, i) == Some(0x0605_4b50))
        .ok_or("not a zip archive (no end of central directory)")?;
    let mut count = u64::from(u16_at(bytes, eocd + 10).ok_or("truncated EOCD")?);
    let mut cd_offset = u64::from(u32_at(bytes, eocd + 16).ok_or("truncated EOCD")?);
    // ZIP64 locator just before the EOCD.
    if eocd >= 20 && u32_at(bytes, eocd - 20) == Some(0x0706_4b50) {
        let z64 = usize::try_from(u64_at(bytes, eocd - 20 + 8).ok_or("truncated ZIP64 locator")?)
            .map_err(|_| "bad ZIP64 offset")?;
        if u32_at(bytes, z64) != Some(0x0606_4b50) {
            return Err("bad ZIP64 end of central directory".into());
        }
        count = u64_at(bytes, z64.saturating_add(32)).ok_or("truncated ZIP64 EOCD")?;
        cd_offset = u64_at(bytes, z64.saturating_add(48)).ok_or("truncated ZIP64 EOCD")?;
    }
    let mut entries = Vec::new();
    let mut at = usize::try_from(cd_offset).map_err(|_| "bad offset")?;
    for _ in 0..count {
        if u32_at(bytes, at) != Some(0x0201_4b50) {
            return Err(format!("bad central directory entry at offset {at}"));
        }
        let method = u16_at(bytes, at + 10).ok_or("truncated entry")?;
        let mut csize = u64::from(u32_at(bytes, at + 20).ok_or("truncated entry")?);
        let mut usize_ = u64::from(u32_at(bytes, at + 24).ok_or("truncated entry")?);
        let name_len = usize::from(u16_at(bytes, at + 28).ok_or("truncated entry")?);
        let extra_len = usize::from(u16_at(bytes, at + 30).ok_or("truncated entry")?);
        let comment_len = usize::from(u16_at(bytes, at + 32).ok_or("truncated entry")?);
        let mut local = u64::from(u32_at(bytes, at + 42).ok_or("truncated entry")?);
        let name_bytes = bytes
            .get(at + 46..at + 46 + name_len)
            .ok_or("truncated entry name")?;
        let name = String::from_utf8_lossy(name_bytes).into_owned();
        // ZIP64 extended information extra field.
        let extra = bytes
            .get(at + 46 + name_len..at + 46 + name_len + extra_len)
            .ok_or("truncated extra field")?;
        let mut e = 0;
        while e + 4 <= extra.len() {
            let id = u16_at(extra, e).unwrap_or(0);
            let len = usize::from(u16_at(extra, e + 2).unwrap_or(0));
            if id == 0x0001 {
                let mut p = e + 4;
                if usize_ == 0xFFFF_FFFF {
                    usize_ = u64_at(extra, p).ok_or("truncated ZIP64 field")?;
                    p += 8;
                }
                if csize == 0xFFFF_FFFF {
                    csize = u64_at(extra, p).ok_or("truncated ZIP64 field")?;
                    p += 8;
                }
                if local == 0xFFFF_FFFF {
                    local = u64_at(extra, p).ok_or("truncated ZIP64 field")?;
                }
            }
            e += 4 + len;
        }
        at += 46 + name_len + extra_len + comment_len;
        if name.ends_with('/') {
            continue;
        }
        let lh = usize::try_from(local).map_err(|_| "bad offset")?;
        if u32_at(bytes, lh) != Some(0x0403_4b50) {
            return Err(format!("bad local header for {name}"));
        }
        let lname =
            usize::from(u16_at(bytes, lh.saturating_add(26)).ok_or("truncated local header")?);
        let lextra =
            usize::from(u16_at(bytes, lh.saturating_add(28)).ok_or("truncated local header")?);
        let start = lh.saturating_add(30 + lname + lextra);
        let end = start
            .checked_add(usize::try_from(csize).map_err(|_| "entry too large")?)
            .ok_or("entry too large")?;
        let raw = bytes
            .get(start..end)
            .ok_or_else(|| format!("truncated data for {name}"))?;
        let data = match method {
            0 => raw.to_vec(),
            8 => {
                let mut out = Vec::with_capacity(usize::try_from(usize_).unwrap_or(0).min(1 << 26));
                flate2::read::DeflateDecoder::new(raw)
                    .read_to_end(&mut out)
                    .map_err(|e| format!("{name}: {e}"))?;
                out
            }
            m => return Err(format!("{name}: unsupported compression method {m}")),
        };
        entries.push(Entry { name, data });
    }
    Ok(entries)
}

/// Writes a stored/deflated archive (used by tests to build exports).
#[doc(hidden)]
pub fn write_deflated(files: &[(&str, &[u8])]) -> Vec<u8> {
    use std::io::Write;
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in files {
        let mut enc =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(data).ok();
        let comp = enc.finish().unwrap_or_default();
        let crc = crc32(data);
        let offset = out.len() as u32;
        let header = |sig: u32, central: bool| {
            let mut h = Vec::new();
            h.extend(sig.to_le_bytes());
            if central {
                h.extend(20u16.to_le_bytes());
            }
            h.extend(20u16.to_le_bytes()); // version needed
            h.extend(0u16.to_le_bytes()); // flags
            h.extend(8u16.to_le_bytes()); // deflate
            h.extend(0u32.to_le_bytes()); // time/date
            h.extend(crc.to_le_bytes());
            h.extend((comp.len() as u32).to_le_bytes());
            h.extend((data.len() as u32).to_le_bytes());
            h.extend((name.len() as u16).to_le_bytes());
            h.extend(0u16.to_le_bytes()); // extra
            if central {
                h.extend(0u16.to_le_bytes()); // comment
                h.extend(0u16.to_le_bytes()); // disk
                h.extend(0u16.to_le_bytes()); // internal attrs
                h.extend(0u32.to_le_bytes()); // external attrs
                h.extend(offset.to_le_bytes());
            }
            h.extend(name.as_bytes());
            h
        };
        out.extend(header(0x0403_4b50, false));
        out.extend(&comp);
        central.extend(header(0x0201_4b50, true));
    }
    let cd_offset = out.len() as u32;
    out.extend(&central);
    out.extend(0x0605_4b50u32.to_le_bytes());
    out.extend([0u8; 4]);
    out.extend((files.len() as u16).to_le_bytes());
    out.extend((files.len() as u16).to_le_bytes());
    out.extend((central.len() as u32).to_le_bytes());
    out.extend(cd_offset.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}
