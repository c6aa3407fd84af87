//! A unified diff of two small texts (configuration files), for `--dry-run`: the longest common
//! subsequence of their lines, shown in hunks with three lines of context.

/// `--- a/<path>` / `+++ b/<path>` and the hunks; an absent side is `/dev/null`.
pub fn unified(path: &str, before: Option<&str>, after: Option<&str>) -> String {
    let a: Vec<&str> = before.map(|t| t.lines().collect()).unwrap_or_default();
    let b: Vec<&str> = after.map(|t| t.lines().collect()).unwrap_or_default();
    let mut out = format!(
        "--- {}\n+++ {}\n",
        before.map_or("/dev/null".to_string(), |_| format!("a/{path}")),
        after.map_or("/dev/null".to_string(), |_| format!("b/{path}")),
    );
    let ops = script(&a, &b);
    // Group the edit script into hunks: changed lines with up to 3 lines of context.
    const CONTEXT: usize = 3;
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, o)| !matches!(o, Op::Same(..)))
        .map(|(i, _)| i)
        .collect();
    let mut i = 0;
    while i < changed.len() {
        let start = changed[i].saturating_sub(CONTEXT);
        let mut end = changed[i];
        while i + 1 < changed.len() && changed[i + 1] <= end + 2 * CONTEXT + 1 {
            i += 1;
            end = changed[i];
        }
        let end = (end + CONTEXT + 1).min(ops.len());
        let (mut a_start, mut b_start) = (None, None);
        let (mut a_len, mut b_len) = (0, 0);
        let mut body = String::new();
        for op in &ops[start..end] {
            match op {
                Op::Same(x, y) => {
                    a_start.get_or_insert(*x);
                    b_start.get_or_insert(*y);
                    a_len += 1;
                    b_len += 1;
                    body.push_str(&format!(" {}\n", a[*x]));
                }
                Op::Del(x, y) => {
                    a_start.get_or_insert(*x);
                    b_start.get_or_insert(*y);
                    a_len += 1;
                    body.push_str(&format!("-{}\n", a[*x]));
                }
                Op::Add(x, y) => {
                    a_start.get_or_insert(*x);
                    b_start.get_or_insert(*y);
                    b_len += 1;
                    body.push_str(&format!("+{}\n", b[*y]));
                }
            }
        }
        let first = |s: Option<usize>, len: usize| {
            if len == 0 {
                s.unwrap_or(0)
            } else {
                s.unwrap_or(0) + 1
            }
        };
        out.push_str(&format!(
            "@@ -{},{a_len} +{},{b_len} @@\n",
            first(a_start, a_len),
            first(b_start, b_len)
        ));
        out.push_str(&body);
        i += 1;
    }
    out
}

/// One step of the edit script; the indexes are where in `a` and `b` it stands.
enum Op {
    Same(usize, usize),
    Del(usize, usize),
    Add(usize, usize),
}

fn script(a: &[&str], b: &[&str]) -> Vec<Op> {
    let (n, m) = (a.len(), b.len());
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::new();
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push(Op::Same(i, j));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(Op::Del(i, j));
            i += 1;
        } else {
            ops.push(Op::Add(i, j));
            j += 1;
        }
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::unified;

    #[test]
    fn a_new_file_is_all_additions() {
        let d = unified("x.json", None, Some("{\n}\n"));
        assert_eq!(d, "--- /dev/null\n+++ b/x.json\n@@ -0,0 +1,2 @@\n+{\n+}\n");
    }

    #[test]
    fn one_inserted_line_shows_with_its_context() {
        let before = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let after = "a\nb\nc\nd\nNEW\ne\nf\ng\nh\n";
        let d = unified("f", Some(before), Some(after));
        assert_eq!(
            d,
            "--- a/f\n+++ b/f\n@@ -2,6 +2,7 @@\n b\n c\n d\n+NEW\n e\n f\n g\n"
        );
    }

    #[test]
    fn a_deleted_file_is_all_removals() {
        let d = unified("f", Some("x\n"), None);
        assert_eq!(d, "--- a/f\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-x\n");
    }
}
