//! The strings an input's operations name, shared by the `table_ops` and
//! `shared_ops` targets (included with `#[path]`).

use arbitrary::Arbitrary;

/// Longest string a `Repeat` makes: past `MAX_CHUNK_CAPACITY` and the
/// largest normal block, so dedicated chunks are exercised.
pub const MAX_REPEAT: usize = 600 * 1024;
/// Cap on the bytes one input may intern in total, and one operation make
/// (keeps RSS bounded).
pub const MAX_TOTAL_BYTES: usize = 8 << 20;

#[derive(Arbitrary, Debug)]
pub enum Text {
    /// Arbitrary bytes, made valid UTF-8 (lossily).
    Bytes(Vec<u8>),
    /// A string the model already holds (index modulo its length).
    Existing(u16),
    /// Copies of a byte (ASCII): `lo` copies, or with `hi`,
    /// `(hi << 16 | lo) % MAX_REPEAT` (any length up to 600 KiB, byte-exact
    /// around every chunk and block boundary; short lengths stay common).
    Repeat { byte: u8, lo: u16, hi: Option<u8> },
    /// A short numbered string: many distinct strings from few input bytes.
    Numbered(u16),
}

impl Text {
    /// The text's string, for a model holding `strings` (never empty: `""`
    /// first) of `total_bytes` bytes in all; `pending` bytes of strings
    /// are already made for the same operation (a batch's or a merge's)
    /// and count towards [`MAX_TOTAL_BYTES`] with the model's. A string
    /// past that cap is `"too-big"`.
    pub fn make(&self, strings: &[String], total_bytes: usize, pending: usize) -> String {
        let room = MAX_TOTAL_BYTES.saturating_sub(total_bytes.saturating_add(pending));
        let s = match self {
            Text::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            Text::Existing(i) => strings[usize::from(*i) % strings.len()].clone(),
            Text::Repeat { byte, lo, hi } => {
                let c = char::from(b' ' + byte % 95);
                let len = match hi {
                    None => usize::from(*lo),
                    Some(hi) => (usize::from(*hi) << 16 | usize::from(*lo)) % MAX_REPEAT,
                };
                if len > room {
                    return String::from("too-big");
                }
                c.to_string().repeat(len)
            }
            Text::Numbered(n) => format!("s{n}"),
        };
        if s.len() > room {
            String::from("too-big")
        } else {
            s
        }
    }
}

/// The strings of `texts`, made for one operation: their bytes together
/// stay within [`MAX_TOTAL_BYTES`] with the model's (each text checked
/// alone, one batch of 450 repeats of 600 KiB passed).
pub fn make_all(texts: &[Text], strings: &[String], total_bytes: usize) -> Vec<String> {
    let mut pending = 0;
    texts
        .iter()
        .map(|t| {
            let s = t.make(strings, total_bytes, pending);
            pending += s.len();
            s
        })
        .collect()
}
