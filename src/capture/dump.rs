//! Record dumps: the raw CUPTI records of a capture, with the strings they
//! point at, saved so that decoding and conversion can be tested on machines
//! without a GPU (`sightline capture … --dump-records FILE`; the tests decode
//! dumps recorded on an H100, kept under `tests/fixtures/`).
//!
//! Format (little-endian): the magic `SLREC001`, then entries, each a tag byte:
//! - `R`: u32 length, then the record's bytes;
//! - `P`: u64 pointer, u32 length, UTF-8: the string a record pointed at;
//! - `A`: u8 domain (0 runtime, 1 driver), u32 callback id, u32 length, UTF-8:
//!   an API call's name;
//! - `S`: u64, the id of an NVTX range opened with start/end rather than
//!   push/pop, which CUPTI's records do not tell (written at the end).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::Path;

use super::records::{self, ApiDomain, Record, StringSource};

const MAGIC: &[u8; 8] = b"SLREC001";

/// A string a record referred to, as it was read live.
#[derive(Debug, Clone, PartialEq)]
pub enum StringEntry {
    Pointer(u64, String),
    Api(ApiDomain, u32, String),
}

/// The raw records of one CUPTI buffer.
#[derive(Debug, Clone, Default)]
pub struct RawBuffer {
    pub records: Vec<Vec<u8>>,
    pub strings: Vec<StringEntry>,
}

/// Appends buffers to a dump file.
pub struct DumpWriter {
    out: std::io::BufWriter<std::fs::File>,
}

impl DumpWriter {
    pub fn create(path: &Path) -> std::io::Result<DumpWriter> {
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        out.write_all(MAGIC)?;
        Ok(DumpWriter { out })
    }

    pub fn write(&mut self, buffer: &RawBuffer) -> std::io::Result<()> {
        for entry in &buffer.strings {
            match entry {
                StringEntry::Pointer(pointer, text) => {
                    self.out.write_all(b"P")?;
                    self.out.write_all(&pointer.to_le_bytes())?;
                    self.bytes(text.as_bytes())?;
                }
                StringEntry::Api(domain, cbid, text) => {
                    self.out.write_all(b"A")?;
                    self.out.write_all(&[domain_byte(*domain)])?;
                    self.out.write_all(&cbid.to_le_bytes())?;
                    self.bytes(text.as_bytes())?;
                }
            }
        }
        for record in &buffer.records {
            self.out.write_all(b"R")?;
            self.bytes(record)?;
        }
        Ok(())
    }

    fn bytes(&mut self, data: &[u8]) -> std::io::Result<()> {
        let len =
            u32::try_from(data.len()).map_err(|_| std::io::Error::other("an entry over 4 GiB"))?;
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(data)
    }

    /// Records which NVTX range ids were start/end ranges.
    pub fn write_started_ranges(&mut self, ids: &[u64]) -> std::io::Result<()> {
        for id in ids {
            self.out.write_all(b"S")?;
            self.out.write_all(&id.to_le_bytes())?;
        }
        Ok(())
    }

    pub fn finish(mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

fn domain_byte(domain: ApiDomain) -> u8 {
    match domain {
        ApiDomain::Runtime => 0,
        ApiDomain::Driver => 1,
    }
}

/// The strings of a dump, looked up by what the records say.
#[derive(Default)]
struct DumpStrings {
    pointers: HashMap<u64, String>,
    api: HashMap<(u8, u32), String>,
}

impl StringSource for DumpStrings {
    fn read(&mut self, pointer: u64) -> String {
        self.pointers.get(&pointer).cloned().unwrap_or_default()
    }

    fn api_name(&mut self, domain: ApiDomain, cbid: u32) -> String {
        self.api
            .get(&(domain_byte(domain), cbid))
            .cloned()
            .unwrap_or_else(|| format!("CUDA API {cbid}"))
    }
}

/// What a dump holds: the records in the order they were delivered, and the
/// ids of the NVTX ranges that were start/end ranges.
#[derive(Debug, Default, PartialEq)]
pub struct Dump {
    pub records: Vec<Record>,
    pub started_ranges: Vec<u64>,
}

/// Decodes every record of a dump.
pub fn read_dump(path: &Path) -> Result<Dump, String> {
    let mut data = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut data))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    decode_dump(&data).map_err(|why| format!("{}: {why}", path.display()))
}

/// [`read_dump`] on bytes.
pub fn decode_dump(data: &[u8]) -> Result<Dump, String> {
    let body = data
        .strip_prefix(MAGIC.as_slice())
        .ok_or("not a Sightline record dump (no SLREC001 header)")?;
    let mut cursor = Cursor { data: body, at: 0 };
    let mut strings = DumpStrings::default();
    let mut raw_records: Vec<&[u8]> = Vec::new();
    let mut started_ranges = Vec::new();
    while let Some(tag) = cursor.take(1) {
        match tag[0] {
            b'R' => raw_records.push(cursor.sized()?),
            b'S' => started_ranges.push(cursor.u64()?),
            b'P' => {
                let pointer = cursor.u64()?;
                let text = String::from_utf8_lossy(cursor.sized()?).into_owned();
                strings.pointers.insert(pointer, text);
            }
            b'A' => {
                let domain = cursor.take(1).ok_or("truncated entry")?[0];
                let cbid = cursor.u32()?;
                let text = String::from_utf8_lossy(cursor.sized()?).into_owned();
                strings.api.insert((domain, cbid), text);
            }
            other => {
                return Err(format!(
                    "unknown entry tag {other:#x} at byte {}",
                    cursor.at
                ));
            }
        }
    }
    let records = raw_records
        .into_iter()
        .filter_map(|bytes| records::decode(bytes, &mut strings))
        .collect();
    Ok(Dump {
        records,
        started_ranges,
    })
}

impl Dump {
    /// The report these records make, as a capture would have saved it
    /// (without the device facts, which a dump does not keep).
    pub fn to_report(&self, pid: u32) -> Result<super::live::LiveReport, String> {
        let mut live = super::live::LiveReport::create(
            pid,
            "sightline",
            &format!(
                "sightline {}: converted from a CUPTI record dump",
                env!("CARGO_PKG_VERSION")
            ),
        )?;
        live.mark_started_ranges(&self.started_ranges);
        // The session started just before its first record.
        let first = self
            .records
            .iter()
            .filter_map(record_time)
            .filter(|&t| t > 0)
            .min()
            .unwrap_or(0);
        live.set_origin(first);
        live.append(&self.records)?;
        live.close_open_ranges()?;
        Ok(live)
    }
}

/// When a record happened (its start), if it says.
fn record_time(record: &Record) -> Option<u64> {
    match record {
        Record::Kernel(k) => Some(k.place.start),
        Record::Memcpy(m) => Some(m.place.start),
        Record::Memset(m) => Some(m.place.start),
        Record::Sync(s) => Some(s.start),
        Record::Api(a) => Some(a.start),
        Record::Marker(m) => Some(m.timestamp),
        Record::MarkerData(_) => None,
    }
}

struct Cursor<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let slice = self.data.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(slice)
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4).ok_or("truncated entry")?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, String> {
        let b = self.take(8).ok_or("truncated entry")?;
        let mut raw = [0u8; 8];
        raw.copy_from_slice(b);
        Ok(u64::from_le_bytes(raw))
    }

    fn sized(&mut self) -> Result<&'a [u8], String> {
        let len = self.u32()? as usize;
        self.take(len).ok_or_else(|| "truncated entry".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(decode_dump(b"").is_err());
        assert!(decode_dump(b"SLREC001R\xff\xff\xff\xff").is_err());
        assert!(decode_dump(b"SLREC001Z").is_err());
        assert_eq!(decode_dump(b"SLREC001"), Ok(Dump::default()));
    }

    #[test]
    fn round_trip_keeps_records_and_strings() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("d.bin");
        let mut record = vec![0u8; 40];
        record[..4].copy_from_slice(&records::kind::RUNTIME.to_le_bytes());
        record[4..8].copy_from_slice(&211u32.to_le_bytes());
        let mut w = DumpWriter::create(&path).expect("create");
        w.write(&RawBuffer {
            records: vec![record],
            strings: vec![StringEntry::Api(
                ApiDomain::Runtime,
                211,
                "cudaLaunchKernel_v7000".into(),
            )],
        })
        .expect("write");
        w.finish().expect("finish");
        let dump = read_dump(&path).expect("read");
        let [Record::Api(api)] = dump.records.as_slice() else {
            panic!("{dump:?}");
        };
        assert_eq!(api.name, "cudaLaunchKernel_v7000");
    }
}
