//! The pprof messages, written by hand for `prost` (no `protoc`, no build
//! script), following `proto/profile.proto` in google/pprof.
//!
//! Every `int64` field documented there as an "index into string table" is
//! visited by [`try_for_each_string_index`], the single place that knows
//! where a profile's strings are; validation, re-interning and comparison
//! all go through it.

/// A pprof profile: the top-level message of a `.pb.gz` file.
///
/// Encoders built on [`strtab`] leave [`string_table`](Self::string_table)
/// empty and append field 6 with [`strtab::pprof::write_string_table`]; the
/// decoder fills it.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Profile {
    /// What each of a sample's values measures, e.g. `cpu-time/nanoseconds`.
    #[prost(message, repeated, tag = "1")]
    pub sample_type: Vec<ValueType>,
    /// The samples: a stack (location ids, leaf first), values and labels.
    #[prost(message, repeated, tag = "2")]
    pub sample: Vec<Sample>,
    /// The binaries the locations belong to.
    #[prost(message, repeated, tag = "3")]
    pub mapping: Vec<Mapping>,
    /// Program locations referenced by samples.
    #[prost(message, repeated, tag = "4")]
    pub location: Vec<Location>,
    /// Functions referenced by locations.
    #[prost(message, repeated, tag = "5")]
    pub function: Vec<Function>,
    /// All strings of the profile; `string_table[0]` must be `""`.
    #[prost(string, repeated, tag = "6")]
    pub string_table: Vec<String>,
    /// Regexp of frames to drop (string index).
    #[prost(int64, tag = "7")]
    pub drop_frames: i64,
    /// Regexp of frames to keep (string index).
    #[prost(int64, tag = "8")]
    pub keep_frames: i64,
    /// When collection started, in nanoseconds since the Unix epoch.
    #[prost(int64, tag = "9")]
    pub time_nanos: i64,
    /// How long collection took, in nanoseconds.
    #[prost(int64, tag = "10")]
    pub duration_nanos: i64,
    /// The kind of events between sampled occurrences.
    #[prost(message, optional, tag = "11")]
    pub period_type: Option<ValueType>,
    /// The number of events between sampled occurrences.
    #[prost(int64, tag = "12")]
    pub period: i64,
    /// Free-form comments (string indices).
    #[prost(int64, repeated, tag = "13")]
    pub comment: Vec<i64>,
    /// The type of the preferred sample value (string index).
    #[prost(int64, tag = "14")]
    pub default_sample_type: i64,
    /// A documentation link for the profile (string index).
    #[prost(int64, tag = "15")]
    pub doc_url: i64,
}

/// The type and unit of a value, both string indices.
#[derive(Clone, Copy, PartialEq, Eq, Hash, prost::Message)]
pub struct ValueType {
    /// E.g. `cpu-time` (string index).
    #[prost(int64, tag = "1")]
    pub r#type: i64,
    /// E.g. `nanoseconds` (string index).
    #[prost(int64, tag = "2")]
    pub unit: i64,
}

/// One sample: a stack, its values and its labels.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Sample {
    /// Location ids, leaf first.
    #[prost(uint64, repeated, tag = "1")]
    pub location_id: Vec<u64>,
    /// One value per entry of [`Profile::sample_type`].
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
    /// Extra context: thread, endpoint, ...
    #[prost(message, repeated, tag = "3")]
    pub label: Vec<Label>,
}

/// A sample label: a key with a string or numeric value.
#[derive(Clone, Copy, PartialEq, Eq, Hash, prost::Message)]
pub struct Label {
    /// The label's name (string index).
    #[prost(int64, tag = "1")]
    pub key: i64,
    /// A string value (string index), or 0.
    #[prost(int64, tag = "2")]
    pub str: i64,
    /// A numeric value.
    #[prost(int64, tag = "3")]
    pub num: i64,
    /// The unit of [`num`](Self::num) (string index), or 0.
    #[prost(int64, tag = "4")]
    pub num_unit: i64,
}

/// A binary or library mapped into the profiled process.
#[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
pub struct Mapping {
    /// Unique nonzero id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Load address.
    #[prost(uint64, tag = "2")]
    pub memory_start: u64,
    /// End of the mapped range.
    #[prost(uint64, tag = "3")]
    pub memory_limit: u64,
    /// File offset of `memory_start`.
    #[prost(uint64, tag = "4")]
    pub file_offset: u64,
    /// The object's path (string index).
    #[prost(int64, tag = "5")]
    pub filename: i64,
    /// The object's build id (string index).
    #[prost(int64, tag = "6")]
    pub build_id: i64,
    /// Whether functions are symbolized.
    #[prost(bool, tag = "7")]
    pub has_functions: bool,
    /// Whether file names are known.
    #[prost(bool, tag = "8")]
    pub has_filenames: bool,
    /// Whether line numbers are known.
    #[prost(bool, tag = "9")]
    pub has_line_numbers: bool,
    /// Whether inline frames are known.
    #[prost(bool, tag = "10")]
    pub has_inline_frames: bool,
}

/// A program location: an address and its (possibly inlined) lines.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Location {
    /// Unique nonzero id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// The mapping's id, or 0.
    #[prost(uint64, tag = "2")]
    pub mapping_id: u64,
    /// The instruction address.
    #[prost(uint64, tag = "3")]
    pub address: u64,
    /// Source lines, innermost (inlined) first.
    #[prost(message, repeated, tag = "4")]
    pub line: Vec<Line>,
    /// Whether several symbols share this address.
    #[prost(bool, tag = "5")]
    pub is_folded: bool,
}

/// A source line of a location.
#[derive(Clone, Copy, PartialEq, Eq, Hash, prost::Message)]
pub struct Line {
    /// The function's id.
    #[prost(uint64, tag = "1")]
    pub function_id: u64,
    /// The line number.
    #[prost(int64, tag = "2")]
    pub line: i64,
    /// The column number.
    #[prost(int64, tag = "3")]
    pub column: i64,
}

/// A function: names and source file.
#[derive(Clone, Copy, PartialEq, Eq, Hash, prost::Message)]
pub struct Function {
    /// Unique nonzero id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Human-readable name (string index).
    #[prost(int64, tag = "2")]
    pub name: i64,
    /// Name as the system knows it, e.g. mangled (string index).
    #[prost(int64, tag = "3")]
    pub system_name: i64,
    /// Source file (string index).
    #[prost(int64, tag = "4")]
    pub filename: i64,
    /// First line of the function.
    #[prost(int64, tag = "5")]
    pub start_line: i64,
}

macro_rules! visit {
    ($f:ident, [$($m:ident)?], $idx:expr, $($path:tt)*) => {
        $f(&$($m)? $idx).map_err(|e| (format!($($path)*), e))?
    };
}

// Both visitors from one body, so they cannot disagree on where the
// strings are. The path is only formatted on error.
macro_rules! string_index_visitor {
    ($(#[$doc:meta])* $name:ident, $($m:ident)?) => {
        $(#[$doc])*
        pub fn $name<E>(
            profile: &$($m)? Profile,
            mut f: impl FnMut(&$($m)? i64) -> Result<(), E>,
        ) -> Result<(), (String, E)> {
            for (i, t) in (&$($m)? profile.sample_type).into_iter().enumerate() {
                visit!(f, [$($m)?], t.r#type, "sample_type[{i}].type");
                visit!(f, [$($m)?], t.unit, "sample_type[{i}].unit");
            }
            for (i, s) in (&$($m)? profile.sample).into_iter().enumerate() {
                for (j, l) in (&$($m)? s.label).into_iter().enumerate() {
                    visit!(f, [$($m)?], l.key, "sample[{i}].label[{j}].key");
                    visit!(f, [$($m)?], l.str, "sample[{i}].label[{j}].str");
                    visit!(f, [$($m)?], l.num_unit, "sample[{i}].label[{j}].num_unit");
                }
            }
            for (i, m) in (&$($m)? profile.mapping).into_iter().enumerate() {
                visit!(f, [$($m)?], m.filename, "mapping[{i}].filename");
                visit!(f, [$($m)?], m.build_id, "mapping[{i}].build_id");
            }
            for (i, func) in (&$($m)? profile.function).into_iter().enumerate() {
                visit!(f, [$($m)?], func.name, "function[{i}].name");
                visit!(f, [$($m)?], func.system_name, "function[{i}].system_name");
                visit!(f, [$($m)?], func.filename, "function[{i}].filename");
            }
            visit!(f, [$($m)?], profile.drop_frames, "drop_frames");
            visit!(f, [$($m)?], profile.keep_frames, "keep_frames");
            if let Some(t) = &$($m)? profile.period_type {
                visit!(f, [$($m)?], t.r#type, "period_type.type");
                visit!(f, [$($m)?], t.unit, "period_type.unit");
            }
            for (i, c) in (&$($m)? profile.comment).into_iter().enumerate() {
                visit!(f, [$($m)?], *c, "comment[{i}]");
            }
            visit!(f, [$($m)?], profile.default_sample_type, "default_sample_type");
            visit!(f, [$($m)?], profile.doc_url, "doc_url");
            Ok(())
        }
    };
}

string_index_visitor!(
    /// Calls `f` on every string index of `profile`, in a fixed order
    /// (sample types, sample labels, mappings, functions, then the
    /// profile's own fields), and stops at the first error, which comes
    /// back with the path of the field that caused it, e.g.
    /// `sample[3].label[1].key`. Does not look at
    /// [`Profile::string_table`] itself.
    ///
    /// # Errors
    ///
    /// The first error `f` returns, with the field's path.
    try_for_each_string_index,
);

string_index_visitor!(
    /// [`try_for_each_string_index`] with write access to each index, in
    /// the same order.
    ///
    /// # Errors
    ///
    /// The first error `f` returns, with the field's path.
    try_for_each_string_index_mut,
    mut
);
