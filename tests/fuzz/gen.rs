//! Input generators, all driven by arbtest's `Unstructured`: byte-level mutation of corpus
//! seeds, structural mutation of JSON values (and of JSON-lines streams), and small grammars for
//! the location strings, shell lines and glob patterns.

use arbitrary::{Result, Unstructured};
use serde_json::{Map, Number, Value};

/// The largest input generated: the time and memory bounds are promised up to this size (a
/// reviewer's result, a configuration file or a sprint document is far smaller).
pub const MAX_INPUT: usize = 64 << 10;

/// A generator of inputs from a grammar.
pub type Grammar<'a> = dyn Fn(&mut Unstructured<'_>) -> Result<Vec<u8>> + 'a;

/// Seeds and a dictionary of tokens worth inserting.
#[derive(Default, Clone)]
pub struct Corpus {
    pub seeds: Vec<Vec<u8>>,
    /// The seeds that are JSON (one value each), for structural mutation.
    pub json: Vec<Value>,
    /// The seeds that are JSON lines, parsed per line.
    pub jsonl: Vec<Vec<Value>>,
    pub dict: Vec<Vec<u8>>,
    /// Object keys and string values found in the JSON seeds.
    pub keys: Vec<String>,
    pub strings: Vec<String>,
}

/// Tokens that break parsers: quotes, escapes, separators, odd Unicode, big numbers.
const HOSTILE: &[&str] = &[
    "\"",
    "\\",
    "\\u0000",
    "\\ud800",
    "\\uDFFF",
    "\0",
    "\n",
    "\r\n",
    "\r",
    "\t",
    " ",
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "=",
    "#",
    "'''",
    "\"\"\"",
    "[[",
    "]]",
    "..",
    "../",
    "/",
    "//",
    "-",
    "–",
    "—",
    "\u{feff}",
    "\u{200b}",
    "\u{2028}",
    "가",
    "é",
    "😀",
    "\u{10ffff}",
    "0",
    "-0",
    "1e999",
    "-1",
    "18446744073709551616",
    "9223372036854775808",
    "4294967296",
    "65536",
    "1.5",
    "NaN",
    "null",
    "true",
    "false",
    "[]",
    "{}",
    "\"\"",
    "*",
    "**",
    "?",
    "[!",
    "]",
    "$",
    "`",
    ";",
    "|",
    "&&",
    "||",
    ">",
    "<",
    "2>&1",
    "%",
    "\x1b[",
    "```",
    "~~~",
    "<!--",
    "-->",
    "# ",
    "## ",
    "- ",
    "* ",
    "1. ",
    "- [ ] ",
    "- [x] ",
    "`",
    "http://",
    "https://x",
    ":0",
    ":1-",
    "AC-1",
    "AC-",
];

impl Corpus {
    pub fn new(seeds: Vec<Vec<u8>>, extra: &[&str]) -> Corpus {
        let mut c = Corpus {
            dict: HOSTILE
                .iter()
                .chain(extra)
                .map(|s| s.as_bytes().to_vec())
                .collect(),
            ..Corpus::default()
        };
        for s in &seeds {
            let text = String::from_utf8_lossy(s);
            if let Ok(v) = serde_json::from_str::<Value>(&text) {
                c.collect(&v);
                c.json.push(v);
            } else {
                let lines: Vec<Value> = text
                    .lines()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .collect();
                if !lines.is_empty() {
                    for v in &lines {
                        c.collect(v);
                    }
                    c.jsonl.push(lines);
                }
            }
        }
        c.keys.sort();
        c.keys.dedup();
        c.strings.sort();
        c.strings.dedup();
        c.strings.truncate(2000);
        for k in c.keys.iter().chain(c.strings.iter().take(200)) {
            c.dict.push(k.as_bytes().to_vec());
        }
        c.seeds = seeds;
        c
    }

    fn collect(&mut self, v: &Value) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    self.keys.push(k.clone());
                    self.collect(x);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| self.collect(x)),
            Value::String(s) if s.len() <= 200 => {
                self.strings.push(s.clone());
                // A string that is itself JSON (a result inside an event) is mined too.
                if let Ok(inner) = serde_json::from_str::<Value>(s) {
                    if inner.is_object() {
                        self.collect(&inner);
                    }
                }
            }
            _ => {}
        }
    }

    /// One input: a mutated seed, a structurally mutated JSON value or stream, or `grammar`'s.
    pub fn input(&self, u: &mut Unstructured<'_>, grammar: Option<&Grammar>) -> Result<Vec<u8>> {
        let pick = u.int_in_range(0..=19u8)?;
        let out = match pick {
            0 => {
                let n = u.arbitrary_len::<u8>()?.min(512);
                u.bytes(n)?.to_vec()
            }
            1..=7 => self.mutate_bytes(u)?,
            8..=13 if !self.json.is_empty() => {
                let seed = u.choose(&self.json)?.clone();
                let v = self.mutate_json(u, seed)?;
                self.print_json(u, &v)?
            }
            8..=13 if !self.jsonl.is_empty() => self.mutate_jsonl(u)?,
            _ => match grammar {
                Some(g) => g(u)?,
                None => self.mutate_bytes(u)?,
            },
        };
        let mut out = out;
        // Sometimes a few byte-level edits on top of a structural one.
        if pick >= 8 && u.ratio(1, 4)? {
            self.edit_bytes(u, &mut out)?;
        }
        out.truncate(MAX_INPUT);
        Ok(out)
    }

    fn token<'a>(&'a self, u: &mut Unstructured<'_>) -> Result<&'a [u8]> {
        Ok(u.choose(&self.dict)?)
    }

    pub fn mutate_bytes(&self, u: &mut Unstructured<'_>) -> Result<Vec<u8>> {
        let mut data = if self.seeds.is_empty() {
            Vec::new()
        } else {
            u.choose(&self.seeds)?.clone()
        };
        self.edit_bytes(u, &mut data)?;
        Ok(data)
    }

    fn edit_bytes(&self, u: &mut Unstructured<'_>, data: &mut Vec<u8>) -> Result<()> {
        let edits = u.int_in_range(1..=8u8)?;
        for _ in 0..edits {
            let len = data.len();
            let at = if len == 0 {
                0
            } else {
                u.choose_index(len + 1)?
            };
            match u.int_in_range(0..=8u8)? {
                0 if len > 0 => {
                    let i = at.min(len - 1);
                    data[i] ^= 1 << u.int_in_range(0..=7u8)?;
                }
                1 if len > 0 => {
                    let i = at.min(len - 1);
                    data[i] =
                        *u.choose(&[0u8, 0xff, 0x80, b'"', b'\\', b'\n', b'{', b':', b' '])?;
                }
                2 if len > 0 => {
                    let n = u.int_in_range(1..=64usize)?.min(len - at.min(len - 1));
                    let i = at.min(len - 1);
                    data.drain(i..(i + n).min(len));
                }
                3 | 4 => {
                    let t = self.token(u)?.to_vec();
                    data.splice(at..at, t);
                }
                5 if len > 0 => {
                    let i = at.min(len - 1);
                    let n = u.int_in_range(1..=128usize)?.min(len - i);
                    let piece = data[i..i + n].to_vec();
                    let to = u.choose_index(data.len() + 1)?;
                    let times = u.int_in_range(1..=4usize)?;
                    for _ in 0..times {
                        data.splice(to..to, piece.iter().copied());
                    }
                }
                6 if !self.seeds.is_empty() => {
                    let other = u.choose(&self.seeds)?;
                    if !other.is_empty() {
                        let i = u.choose_index(other.len())?;
                        let n = u.int_in_range(1..=256usize)?.min(other.len() - i);
                        data.splice(at..at, other[i..i + n].iter().copied());
                    }
                }
                7 => {
                    let n = u.int_in_range(1..=16usize)?;
                    let bytes = u.bytes(n.min(u.len()))?.to_vec();
                    data.splice(at..at, bytes);
                }
                _ => data.truncate(at),
            }
        }
        Ok(())
    }

    fn random_value(&self, u: &mut Unstructured<'_>, depth: u32) -> Result<Value> {
        Ok(match u.int_in_range(0..=11u8)? {
            0 => Value::Null,
            1 => Value::Bool(u.arbitrary()?),
            2 => Value::Number(Number::from(u.arbitrary::<i64>()?)),
            3 => Value::Number(Number::from(*u.choose(&[
                0u64,
                1,
                2,
                7,
                40,
                65535,
                u64::MAX,
            ])?)),
            4 => Number::from_f64(*u.choose(&[0.5, -1.5, 1e300, -0.0, 3.0])?)
                .map(Value::Number)
                .unwrap_or(Value::Null),
            5 | 6 if !self.strings.is_empty() => Value::String(u.choose(&self.strings)?.clone()),
            7 => Value::String(String::from_utf8_lossy(self.token(u)?).into_owned()),
            8 => Value::String(u.arbitrary::<String>()?),
            9 if depth < 4 => {
                let n = u.int_in_range(0..=3usize)?;
                let mut a = Vec::new();
                for _ in 0..n {
                    a.push(self.random_value(u, depth + 1)?);
                }
                Value::Array(a)
            }
            10 if depth < 4 && !self.keys.is_empty() => {
                let n = u.int_in_range(0..=3usize)?;
                let mut m = Map::new();
                for _ in 0..n {
                    m.insert(
                        u.choose(&self.keys)?.clone(),
                        self.random_value(u, depth + 1)?,
                    );
                }
                Value::Object(m)
            }
            _ => Value::String(String::new()),
        })
    }

    /// Edits a random node of `v`, a few times.
    pub fn mutate_json(&self, u: &mut Unstructured<'_>, mut v: Value) -> Result<Value> {
        let edits = u.int_in_range(1..=6u8)?;
        for _ in 0..edits {
            self.edit_node(u, &mut v, 0)?;
            // Edits that repeat nested arrays multiply; an input past MAX_INPUT is cut anyway.
            if serde_json::to_vec(&v).map_or(0, |t| t.len()) > MAX_INPUT {
                break;
            }
        }
        Ok(v)
    }

    fn edit_node(&self, u: &mut Unstructured<'_>, v: &mut Value, depth: u32) -> Result<()> {
        // Descend with probability 3/4 while there are children.
        let descend = u.ratio(3, 4)?;
        match v {
            Value::Object(m) if descend && !m.is_empty() => {
                let i = u.choose_index(m.len())?;
                if let Some((_, child)) = m.iter_mut().nth(i) {
                    return self.edit_node(u, child, depth + 1);
                }
            }
            Value::Array(a) if descend && !a.is_empty() => {
                let i = u.choose_index(a.len())?;
                return self.edit_node(u, &mut a[i], depth + 1);
            }
            _ => {}
        }
        match u.int_in_range(0..=9u8)? {
            0..=2 => *v = self.random_value(u, depth)?,
            3 => {
                if let Value::Object(m) = v {
                    if !m.is_empty() {
                        let i = u.choose_index(m.len())?;
                        let k = m.keys().nth(i).cloned().unwrap_or_default();
                        m.remove(&k);
                    }
                }
            }
            4 => {
                if let Value::Object(m) = v {
                    if !self.keys.is_empty() {
                        let k = u.choose(&self.keys)?.clone();
                        m.insert(k, self.random_value(u, depth + 1)?);
                    }
                }
            }
            5 => {
                if let Value::Array(a) = v {
                    if !a.is_empty() {
                        let i = u.choose_index(a.len())?;
                        let x = a[i].clone();
                        let size = serde_json::to_vec(&x).map_or(1, |t| t.len().max(1));
                        let n = u.int_in_range(1..=50usize)?.min(MAX_INPUT / size).max(1);
                        a.extend(std::iter::repeat_n(x, n));
                    } else {
                        a.push(self.random_value(u, depth + 1)?);
                    }
                }
            }
            6 => {
                // A subtree of another seed.
                if !self.json.is_empty() {
                    let mut other = u.choose(&self.json)?;
                    for _ in 0..u.int_in_range(0..=3u8)? {
                        other = match other {
                            Value::Object(m) if !m.is_empty() => {
                                let i = u.choose_index(m.len())?;
                                m.values().nth(i).unwrap_or(other)
                            }
                            Value::Array(a) if !a.is_empty() => &a[u.choose_index(a.len())?],
                            _ => other,
                        };
                    }
                    *v = other.clone();
                }
            }
            7 => {
                // Deep nesting.
                let depth = u.int_in_range(1..=200usize)?;
                let mut x = v.take();
                for _ in 0..depth {
                    x = if u.ratio(1, 2)? {
                        Value::Array(vec![x])
                    } else {
                        let mut m = Map::new();
                        m.insert("a".into(), x);
                        Value::Object(m)
                    };
                }
                *v = x;
            }
            8 => {
                if let Value::String(s) = v {
                    let mut b = s.clone().into_bytes();
                    self.edit_bytes(u, &mut b)?;
                    *s = String::from_utf8_lossy(&b).into_owned();
                }
            }
            _ => {
                if let Value::String(s) = v {
                    let n = u.int_in_range(1..=2000usize)?;
                    *s = s.repeat(n.min(20_000 / s.len().max(1)));
                }
            }
        }
        Ok(())
    }

    fn print_json(&self, u: &mut Unstructured<'_>, v: &Value) -> Result<Vec<u8>> {
        let mut text = if u.arbitrary()? {
            serde_json::to_vec(v).unwrap_or_default()
        } else {
            serde_json::to_vec_pretty(v).unwrap_or_default()
        };
        // A duplicated key, which a Value cannot hold but a text can.
        if u.ratio(1, 10)? && !self.keys.is_empty() {
            if let Some(i) = text.iter().position(|&b| b == b'{') {
                let k = u.choose(&self.keys)?;
                let dup = format!("\"{k}\":null,");
                text.splice(i + 1..i + 1, dup.into_bytes());
            }
        }
        Ok(text)
    }

    fn mutate_jsonl(&self, u: &mut Unstructured<'_>) -> Result<Vec<u8>> {
        let mut lines = u.choose(&self.jsonl)?.clone();
        for _ in 0..u.int_in_range(1..=6u8)? {
            if lines.is_empty() {
                break;
            }
            let i = u.choose_index(lines.len())?;
            match u.int_in_range(0..=5u8)? {
                0..=2 => {
                    // A line's JSON edited; strings that hold JSON are edited inside too.
                    let v = lines[i].take();
                    lines[i] = self.mutate_json(u, v)?;
                }
                3 => {
                    lines.remove(i);
                }
                4 => {
                    let x = lines[i].clone();
                    let to = u.choose_index(lines.len() + 1)?;
                    lines.insert(to, x);
                }
                _ => {
                    // A line from another stream.
                    let other = u.choose(&self.jsonl)?;
                    if !other.is_empty() {
                        let x = other[u.choose_index(other.len())?].clone();
                        lines.insert(i, x);
                    }
                }
            }
        }
        let mut out = Vec::new();
        for l in &lines {
            out.extend(serde_json::to_vec(l).unwrap_or_default());
            out.push(b'\n');
        }
        Ok(out)
    }
}

/// Joins `n` picks of `parts` with separators of `seps`.
pub fn words(
    u: &mut Unstructured<'_>,
    parts: &[&[&str]],
    seps: &[&str],
    max: usize,
) -> Result<String> {
    let n = u.int_in_range(1..=max)?;
    let mut s = String::new();
    for i in 0..n {
        if i > 0 {
            s.push_str(u.choose(seps)?);
        }
        let class = u.choose(parts)?;
        s.push_str(u.choose(class)?);
    }
    Ok(s)
}

/// A number as a location or link may spell it.
pub fn number(u: &mut Unstructured<'_>) -> Result<String> {
    Ok(match u.int_in_range(0..=5u8)? {
        0 => u.int_in_range(0..=12u32)?.to_string(),
        1 => u.arbitrary::<u32>()?.to_string(),
        2 => u.arbitrary::<u64>()?.to_string(),
        3 => "9".repeat(u.int_in_range(19..=60usize)?),
        4 => format!("0{}", u.int_in_range(0..=9u8)?),
        _ => (*u.choose(&["", "-1", "+1", "1.5", "١", "1e3", " 1"])?).to_string(),
    })
}

/// A structural edit may repeat an array's element up to 50 times, and six edits on nested
/// arrays multiplied: one input of the agy stream target grew to 24 GB and the machine killed
/// the run. Whatever the bytes, an edited value stays within a few `MAX_INPUT`s.
#[test]
fn structural_edits_stay_bounded() {
    let leaf = Value::String("x".repeat(200));
    let nested = Value::Array(vec![Value::Array(vec![Value::Array(vec![
        leaf.clone(),
        leaf,
    ])])]);
    let seed = serde_json::to_vec(&nested).unwrap();
    let c = Corpus::new(vec![seed.clone()], &[]);
    let bound = seed.len() + 7 * MAX_INPUT;
    let mut bytes = vec![0u8; 4096];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    for round in 0..20_000 {
        for b in bytes.iter_mut() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *b = state as u8;
        }
        let mut u = Unstructured::new(&bytes);
        if let Ok(v) = c.mutate_json(&mut u, nested.clone()) {
            let n = serde_json::to_vec(&v).unwrap().len();
            assert!(n <= bound, "round {round}: an edited value of {n} bytes");
        }
    }
}
