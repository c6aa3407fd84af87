//! Go's `%q` quoting, for the messages that name values exactly as the reference tool does.

/// `s` quoted like Go's `%q` (`strconv.Quote`).
pub fn quote(s: &str) -> String {
    quote_bytes(s.as_bytes())
}

/// `bytes` quoted like Go's `%q`: printable characters as they are, `\a \b \f \n \r \t \v \\ \"`,
/// other control and non-printable characters as `\xHH`, `\uHHHH` or `\UHHHHHHHH`, and each byte
/// that is not valid UTF-8 as `\xHH`. Printable follows Go's `unicode.IsPrint` for controls,
/// spaces other than U+0020, format and private-use characters; unassigned code points (which Go
/// also escapes) are not recognized and stay as they are.
pub fn quote_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    let mut rest = bytes;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(text) => {
                push_escaped(&mut out, text);
                break;
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                push_escaped(&mut out, &String::from_utf8_lossy(valid));
                let bad = e.error_len().unwrap_or(after.len());
                for b in &after[..bad] {
                    out.push_str(&format!("\\x{b:02x}"));
                }
                rest = &after[bad..];
            }
        }
    }
    out.push('"');
    out
}

pub(super) fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if is_go_printable(c) => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
}

/// Go's `unicode.IsPrint`, except that unassigned code points count as printable.
pub(super) fn is_go_printable(c: char) -> bool {
    let u = c as u32;
    let format_or_private = matches!(u,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x890..=0x891 | 0x8E2 | 0x180E
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F | 0xFEFF
        | 0xFFF9..=0xFFFB | 0xFFFE..=0xFFFF | 0x110BD | 0x110CD | 0x13430..=0x1343F
        | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F
        | 0xE000..=0xF8FF | 0xF0000..=0x10FFFF);
    !(c.is_control() || (c.is_whitespace() && c != ' ') || format_or_private)
}
