//! TOML with a line for every key and value (G17).
//!
//! `toml` gives spans only through `toml::Spanned`; this reader asks the deserializer for the
//! spanned form of every value itself, so one visitor builds a tree ([`Node`]) that keeps each
//! key's and value's byte range, and [`Doc`] turns ranges into `<file>:<line>` for every error.
//! It is the only code that knows the private names `serde_spanned` uses.

use super::*;

// `toml::Spanned` is recognized by its deserializer through these names (serde_spanned 0.6 and
// 1.x use the same ones). Asking for them directly lets one visitor take a spanned value and an
// unspanned one (a date-time's marker key, a table `toml` gives no span), which `toml::Spanned`
// itself cannot. The tests check that spans arrive.
pub(super) const SPANNED_NAME: &str = "$__serde_spanned_private_Spanned";
pub(super) const SPANNED_START: &str = "$__serde_spanned_private_start";
pub(super) const SPANNED_END: &str = "$__serde_spanned_private_end";
pub(super) const SPANNED_VALUE: &str = "$__serde_spanned_private_value";
pub(super) const SPANNED_FIELDS: &[&str] = &[SPANNED_START, SPANNED_END, SPANNED_VALUE];
/// The single key of the map `toml` presents a date-time as.
pub(super) const DATETIME_FIELD: &str = "$__toml_private_datetime";

/// A TOML value as parsed, with the byte span `toml` reported for it.
#[derive(Debug)]
pub(super) struct Node {
    pub(super) span: Option<Range<usize>>,
    pub(super) kind: NodeKind,
}

#[derive(Debug)]
pub(super) enum NodeKind {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Datetime(String),
    Array(Vec<Node>),
    Table(Vec<(Key, Node)>),
}

/// A table key with its byte span.
#[derive(Debug)]
pub(super) struct Key {
    pub(super) name: String,
    pub(super) span: Option<Range<usize>>,
}

/// The document root.
pub(super) struct Root(Node);

impl<'de> serde::Deserialize<'de> for Root {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor { spanned: false }).map(Root)
    }
}

/// Deserializes a value asking for its span.
pub(super) struct SpannedSeed;

impl<'de> DeserializeSeed<'de> for SpannedSeed {
    type Value = Node;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Node, D::Error> {
        d.deserialize_struct(SPANNED_NAME, SPANNED_FIELDS, NodeVisitor { spanned: true })
    }
}

/// Deserializes the value inside a span wrapper.
pub(super) struct PlainSeed;

impl<'de> DeserializeSeed<'de> for PlainSeed {
    type Value = Node;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Node, D::Error> {
        d.deserialize_any(NodeVisitor { spanned: false })
    }
}

/// Builds a [`Node`]; with `spanned`, a map whose first key is the span marker is the span
/// wrapper around the value.
pub(super) struct NodeVisitor {
    pub(super) spanned: bool,
}

impl NodeVisitor {
    pub(super) fn node(kind: NodeKind) -> Node {
        Node { span: None, kind }
    }
}

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a TOML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<Node, E> {
        Ok(Self::node(NodeKind::Bool(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Node, E> {
        Ok(Self::node(NodeKind::Int(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Node, E> {
        i64::try_from(v)
            .map(|v| Self::node(NodeKind::Int(v)))
            .map_err(|_| E::custom("integer out of range"))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Node, E> {
        Ok(Self::node(NodeKind::Float(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Node, E> {
        Ok(Self::node(NodeKind::Str(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> std::result::Result<Node, E> {
        Ok(Self::node(NodeKind::Str(v)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(SpannedSeed)? {
            items.push(item);
        }
        Ok(Self::node(NodeKind::Array(items)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Node, A::Error> {
        let Some(first) = map.next_key_seed(KeySeed)? else {
            return Ok(Self::node(NodeKind::Table(Vec::new())));
        };
        if first.span.is_none() && first.name == DATETIME_FIELD {
            let text: String = map.next_value()?;
            return Ok(Self::node(NodeKind::Datetime(text)));
        }
        if self.spanned && first.span.is_none() && first.name == SPANNED_START {
            let start: usize = map.next_value()?;
            let mut end = start;
            let mut value = None;
            while let Some(key) = map.next_key::<String>()? {
                match key.as_str() {
                    SPANNED_END => end = map.next_value()?,
                    SPANNED_VALUE => value = Some(map.next_value_seed(PlainSeed)?),
                    other => {
                        return Err(de::Error::custom(format!("unexpected span field {other}")))
                    }
                }
            }
            let mut node = value.ok_or_else(|| de::Error::custom("span without a value"))?;
            node.span = Some(start..end);
            return Ok(node);
        }
        let mut entries = vec![(first, map.next_value_seed(SpannedSeed)?)];
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let value = map.next_value_seed(SpannedSeed)?;
            entries.push((key, value));
        }
        Ok(Self::node(NodeKind::Table(entries)))
    }
}

/// Deserializes a table key asking for its span.
pub(super) struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Key, D::Error> {
        d.deserialize_struct(SPANNED_NAME, SPANNED_FIELDS, KeyVisitor)
    }
}

pub(super) struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a table key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Key, E> {
        Ok(Key {
            name: v.to_owned(),
            span: None,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Key, A::Error> {
        let (mut start, mut end, mut name) = (None, None, None);
        while let Some(field) = map.next_key::<String>()? {
            match field.as_str() {
                SPANNED_START => start = Some(map.next_value::<usize>()?),
                SPANNED_END => end = Some(map.next_value::<usize>()?),
                SPANNED_VALUE => name = Some(map.next_value::<String>()?),
                other => return Err(de::Error::custom(format!("unexpected key field {other}"))),
            }
        }
        let name = name.ok_or_else(|| de::Error::custom("key without a name"))?;
        let span = start.zip(end).map(|(s, e)| s..e);
        Ok(Key { name, span })
    }
}

/// A TOML value with the 1-based line it starts on.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Val {
    pub(super) line: usize,
    pub(super) v: V,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum V {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Datetime(String),
    Array(Vec<Val>),
    Table(Vec<Field>),
}

/// A table entry with the 1-based line of its key.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Field {
    pub(super) key: String,
    pub(super) line: usize,
    pub(super) val: Val,
}

impl V {
    /// The value's type and text, for messages.
    pub(super) fn describe(&self) -> String {
        match self {
            V::Str(s) => format!("the string {}", quote(s)),
            V::Int(i) => format!("the integer {i}"),
            V::Float(f) => format!("the float {f}"),
            V::Bool(b) => format!("the boolean {b}"),
            V::Datetime(d) => format!("the date-time {d}"),
            V::Array(_) => "an array".to_owned(),
            V::Table(_) => "a table".to_owned(),
        }
    }
}

/// One configuration file being read: its path, text and kind, for `<file>:<line>` errors.
pub(super) struct Doc<'a> {
    pub(super) path: &'a Path,
    pub(super) src: &'a str,
    pub(super) kind: FileKind,
}

impl<'a> Doc<'a> {
    /// The file as UTF-8 text; other bytes are a configuration error at their line.
    pub(super) fn new(path: &'a Path, bytes: &'a [u8], kind: FileKind) -> Result<Self> {
        match std::str::from_utf8(bytes) {
            Ok(src) => Ok(Doc { path, src, kind }),
            Err(e) => {
                let line = line_at(bytes, e.valid_up_to());
                Err(
                    Error::refused(format!("{}:{line}: not valid UTF-8", path.display()))
                        .hint(kind.hint()),
                )
            }
        }
    }

    /// A configuration error at `line`.
    pub(super) fn error(&self, line: usize, message: impl fmt::Display) -> Error {
        Error::refused(format!("{}:{line}: {message}", self.path.display())).hint(self.kind.hint())
    }

    pub(super) fn origin(&self, line: usize) -> Origin {
        Origin::File {
            path: self.path.to_path_buf(),
            line,
        }
    }

    /// `value`, set at `line` of this file.
    pub(super) fn at<T>(&self, line: usize, value: T) -> Sourced<T> {
        Sourced {
            value,
            origin: self.origin(line),
        }
    }

    pub(super) fn line(&self, span: &Option<Range<usize>>) -> Option<usize> {
        span.as_ref().map(|s| line_at(self.src.as_bytes(), s.start))
    }

    /// Parses the document (TOML 1.0.0) into its top-level entries; a syntax error is a
    /// configuration error at its line (G17).
    pub(super) fn parse(&self) -> Result<Vec<Field>> {
        let root: Root = toml::from_str(self.src).map_err(|e| {
            let line = self.line(&e.span()).unwrap_or(1);
            self.error(line, format!("TOML: {}", e.message().trim_end()))
        })?;
        match self.annotate(root.0, 1).v {
            V::Table(fields) => Ok(fields),
            other => Err(self.error(
                1,
                format!("the document is {}, not a table", other.describe()),
            )),
        }
    }

    /// Turns spans into lines; a value without a span takes `fallback` (its parent's line).
    pub(super) fn annotate(&self, node: Node, fallback: usize) -> Val {
        let line = self.line(&node.span).unwrap_or(fallback);
        let v = match node.kind {
            NodeKind::Str(s) => V::Str(s),
            NodeKind::Int(i) => V::Int(i),
            NodeKind::Float(f) => V::Float(f),
            NodeKind::Bool(b) => V::Bool(b),
            NodeKind::Datetime(d) => V::Datetime(d),
            NodeKind::Array(items) => V::Array(
                items
                    .into_iter()
                    .map(|item| self.annotate(item, line))
                    .collect(),
            ),
            NodeKind::Table(entries) => V::Table(
                entries
                    .into_iter()
                    .map(|(key, value)| {
                        let val = self.annotate(value, line);
                        Field {
                            line: self.line(&key.span).unwrap_or(val.line),
                            key: key.name,
                            val,
                        }
                    })
                    .collect(),
            ),
        };
        Val { line, v }
    }

    /// `f`'s value as a string.
    pub(super) fn string(&self, f: &Field, what: &str) -> Result<String> {
        match &f.val.v {
            V::Str(s) => Ok(s.clone()),
            other => Err(self.error(
                f.line,
                format!("{what} must be a string, not {}", other.describe()),
            )),
        }
    }

    /// `f`'s value as a positive integer (G19).
    pub(super) fn positive(&self, f: &Field, what: &str) -> Result<Sourced<u64>> {
        match &f.val.v {
            V::Int(i) if *i > 0 => Ok(Sourced {
                value: i.unsigned_abs(),
                origin: self.origin(f.line),
            }),
            other => Err(self.error(
                f.line,
                format!(
                    "{what} must be a positive integer (seconds), not {}",
                    other.describe()
                ),
            )),
        }
    }

    /// `f`'s value as an array of strings; `item_problem` names what is wrong with an item.
    pub(super) fn strings(
        &self,
        f: &Field,
        what: &str,
        item_problem: impl Fn(&str) -> Option<String>,
    ) -> Result<Vec<String>> {
        let V::Array(items) = &f.val.v else {
            return Err(self.error(
                f.line,
                format!(
                    "{what} must be an array of strings, not {}",
                    f.val.v.describe()
                ),
            ));
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            match &item.v {
                V::Str(s) => {
                    if let Some(problem) = item_problem(s) {
                        return Err(self.error(
                            f.line,
                            format!("{what} item {} {}: {problem}", i + 1, quote(s)),
                        ));
                    }
                    out.push(s.clone());
                }
                other => {
                    return Err(self.error(
                        f.line,
                        format!(
                            "{what} item {} must be a string, not {}",
                            i + 1,
                            other.describe()
                        ),
                    ))
                }
            }
        }
        Ok(out)
    }
}

/// The 1-based line of byte `offset` in `src`.
pub(super) fn line_at(src: &[u8], offset: usize) -> usize {
    let end = offset.min(src.len());
    src[..end].iter().filter(|&&b| b == b'\n').count() + 1
}
