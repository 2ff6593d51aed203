//! One-line errors for scenario and queue JSON that serde rejects: the field's dotted path, the
//! value as the user wrote it, and what is allowed, in the user's words (no Rust type names).

/// Removes serde_json's " at line L column C" suffix (the JSON is machine-made; the path says
/// where the problem is).
fn strip_position(msg: &str) -> &str {
    match msg.rfind(" at line ") {
        Some(i) if msg[i..].contains(" column ") => &msg[..i],
        _ => msg,
    }
}

/// Text between the first pair of backticks.
fn backticked(msg: &str) -> Option<&str> {
    let start = msg.find('`')? + 1;
    let len = msg[start..].find('`')?;
    Some(&msg[start..start + len])
}

/// Appends a field or an index to a dotted path.
fn join_path(path: &str, seg: &str) -> String {
    if seg.is_empty() {
        path.to_string()
    } else if seg.starts_with('[') || path.is_empty() {
        format!("{path}{seg}")
    } else {
        format!("{path}.{seg}")
    }
}

/// The value at a serde_path_to_error path, if the JSON is well formed.
fn value_at<'a>(
    root: &'a serde_json::Value,
    path: &serde_path_to_error::Path,
) -> Option<&'a serde_json::Value> {
    use serde_path_to_error::Segment;
    let mut v = root;
    for seg in path.iter() {
        v = match seg {
            Segment::Seq { index } => v.get(*index)?,
            Segment::Map { key } => v.get(key)?,
            Segment::Enum { .. } => v,
            Segment::Unknown => return None,
        };
    }
    Some(v)
}

/// Whether `msg` ("invalid type/value: ...", "unknown variant ...") describes the value `v`.
fn leaf_matches(v: &serde_json::Value, msg: &str) -> bool {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            msg.contains(&format!("string {s:?}")) || msg.contains(&format!("variant `{s}`"))
        },
        Value::Number(n) => {
            if n.is_f64() {
                msg.contains("floating point `")
                    && n.as_f64().is_some_and(|f| msg.contains(&format!("`{f}")))
            } else {
                msg.contains(&format!("integer `{n}`"))
            }
        },
        Value::Bool(b) => msg.contains(&format!("boolean `{b}`")),
        Value::Array(_) => msg.contains("invalid type: sequence"),
        Value::Object(_) => msg.contains("invalid type: map"),
        Value::Null => msg.contains("invalid type: null") || msg.contains("invalid type: unit"),
    }
}

/// Relative path ("" for `v` itself) of the first value under `v`, depth first (at most 7
/// levels), for which `hit` holds.
fn find_path(
    v: &serde_json::Value,
    hit: &dyn Fn(&serde_json::Value) -> bool,
    rel: &str,
    depth: u32,
) -> Option<String> {
    use serde_json::Value;
    if hit(v) {
        return Some(rel.to_string());
    }
    if depth > 6 {
        return None;
    }
    match v {
        Value::Object(m) => m
            .iter()
            .find_map(|(k, x)| find_path(x, hit, &join_path(rel, k), depth + 1)),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, x)| find_path(x, hit, &join_path(rel, &format!("[{i}]")), depth + 1)),
        _ => None,
    }
}

/// Relative path of the first value under `v` that `msg` describes ("" for `v` itself).
fn find_culprit(v: &serde_json::Value, msg: &str) -> Option<String> {
    find_path(v, &|x| leaf_matches(x, msg), "", 0)
}

/// Relative path of an object under `v` that has the key `key`: `v` itself ("") if it has it,
/// else the first one found depth first.
fn find_key(v: &serde_json::Value, key: &str) -> Option<String> {
    find_path(v, &|x| x.get(key).is_some(), "", 0)
}

/// One line naming the field path of a deserialization error.
///
/// serde_path_to_error tracks the path through structs, sequences and maps; inside an
/// internally tagged enum (`queue`, `rtt`, `traffic[i]`) the path stops at the enum. There
/// the field named by "unknown field `x`" / "missing field `x`" is appended, and for a value of
/// the wrong type or an unknown variant the offending value is looked up in the JSON under
/// that path to name its field.
fn describe_json_error(
    json: &str,
    err: &serde_path_to_error::Error<serde_json::Error>,
    reparse: &dyn Fn(&str) -> Option<String>,
) -> String {
    let mut path = err.path().to_string();
    if path == "." {
        path.clear();
    }
    let msg = strip_position(&err.inner().to_string()).to_string();
    if err.inner().is_syntax() || err.inner().is_eof() {
        return format!("scenario is not valid JSON: {msg}");
    }
    let join = |p: &str, f: &str| {
        if p == f || p.ends_with(&format!(".{f}")) {
            p.to_string()
        } else {
            join_path(p, f)
        }
    };
    if let Some(rest) = msg.strip_prefix("unknown field ") {
        if let Some(field) = backticked(rest) {
            let expected = rest
                .split_once(", expected ")
                .map(|(_, e)| format!("allowed: {}", without_internal(e)))
                .unwrap_or_else(|| "no fields allowed here".to_string());
            // A table nested in a tagged one (an ftp source's `size`): name the table that
            // holds the key.
            let root: Option<serde_json::Value> = serde_json::from_str(json).ok();
            let inner = root
                .as_ref()
                .and_then(|r| value_at(r, err.path()))
                .and_then(|v| find_key(v, field));
            let at = match inner {
                Some(rel) if !rel.is_empty() => join_path(&path, &rel),
                _ => path,
            };
            return format!("{}: unknown field, {expected}", join(&at, field));
        }
    }
    if let Some(rest) = msg.strip_prefix("missing field ") {
        if let Some(field) = backticked(rest) {
            return format!("{}: missing (required)", join(&path, field));
        }
    }
    let root: Option<serde_json::Value> = serde_json::from_str(json).ok();
    let culprit = root
        .as_ref()
        .and_then(|r| value_at(r, err.path()))
        .and_then(|v| find_culprit(v, &msg));
    if let Some(rel) = &culprit {
        path = join_path(&path, rel);
    }
    if let Some(rest) = msg.strip_prefix("unknown variant ") {
        if let Some(variant) = backticked(rest) {
            let expected = rest
                .split_once(", expected ")
                .map(|(_, e)| e.to_string())
                .unwrap_or_default();
            let field = if culprit.is_some() {
                path
            } else {
                join(&path, "kind")
            };
            return format!("{field} = \"{variant}\": expected {expected}");
        }
    }
    if let Some(name) = msg.strip_prefix("data did not match any variant of untagged enum ") {
        if let Some(u) = UNTAGGED.iter().find(|u| u.name == name) {
            let at = match root.as_ref().and_then(|r| value_at(r, err.path())) {
                Some(v) if !u.keys.iter().any(|k| path.ends_with(k)) => u
                    .keys
                    .iter()
                    .find_map(|k| find_key(v, k).map(|rel| join(&join_path(&path, &rel), k)))
                    .unwrap_or_else(|| path.clone()),
                _ => path.clone(),
            };
            let shown = root
                .as_ref()
                .and_then(|r| value_at_dotted(r, &at))
                .map(show_value);
            return match shown {
                Some(v) => format!("{at} = {v}: expected {}", u.expected),
                None => format!("{at}: expected {}", u.expected),
            };
        }
    }
    if let Some((found, expected)) = split_invalid(&msg) {
        let shown = root
            .as_ref()
            .filter(|_| culprit.is_some())
            .and_then(|r| value_at_dotted(r, &path))
            .map(show_value)
            .unwrap_or_else(|| shown_from_serde(found));
        let what = if expected == "string or map" || expected == "variant identifier" {
            root.as_ref()
                .and_then(|r| variants_at(r, &path, reparse))
                .unwrap_or_else(|| "one of the names listed in the docs".to_string())
        } else {
            plain_expected(expected)
        };
        let at = if path.is_empty() { "scenario" } else { &path };
        return format!("{at} = {shown}: expected {what}");
    }
    if path.is_empty() {
        format!("scenario: {msg}")
    } else {
        format!("{path}: {msg}")
    }
}

/// Deserializes `json` into `T`; an error is one line naming the field (see the module docs).
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, String> {
    fn attempt<T: serde::de::DeserializeOwned>(
        json: &str,
    ) -> Result<T, serde_path_to_error::Error<serde_json::Error>> {
        let de = &mut serde_json::Deserializer::from_str(json);
        serde_path_to_error::deserialize(de)
    }
    attempt::<T>(json).map_err(|e| {
        let reparse = |text: &str| {
            attempt::<T>(text)
                .err()
                .map(|e| strip_position(&e.inner().to_string()).to_string())
        };
        describe_json_error(json, &e, &reparse)
    })
}

/// Keys the Python layer writes for the core (from `[[traffic]]` entries' own `tcp`, `rtt`,
/// `hop`): never offered to a user as allowed keys.
const INTERNAL_KEYS: &[&str] = &["traffic_tcp", "traffic_rtt", "traffic_hop"];

/// serde's "one of `a`, `b`, …" without the internal keys.
fn without_internal(expected: &str) -> String {
    let mut out = expected.to_string();
    for k in INTERNAL_KEYS {
        for pattern in [format!(", `{k}`"), format!("`{k}`, ")] {
            out = out.replace(&pattern, "");
        }
    }
    out
}

/// An untagged enum of the scenario: serde can only say that no variant matched, so the
/// fields that hold it and what they allow are listed here.
struct Untagged {
    name: &'static str,
    keys: &'static [&'static str],
    expected: &'static str,
}

const UNTAGGED: &[Untagged] = &[
    Untagged {
        name: "Weight",
        keys: &["w_q"],
        expected: r#"a number in (0, 1] or one of "auto_1s", "auto_rtt", "auto_fast""#,
    },
    Untagged {
        name: "FramingConfig",
        keys: &["bottleneck_framing", "access_framing", "framing"],
        expected: r#""none", "ethernet" or a table { overhead_bytes = N }"#,
    },
];

/// "invalid type: X, expected Y" / "invalid value: X, expected Y" -> (X, Y).
fn split_invalid(msg: &str) -> Option<(&str, &str)> {
    let rest = msg
        .strip_prefix("invalid type: ")
        .or_else(|| msg.strip_prefix("invalid value: "))?;
    rest.split_once(", expected ")
}

/// serde's name of an expected type, in the words of docs/scenario.md.
fn plain_expected(expected: &str) -> String {
    let word = match expected {
        "f64" | "f32" => "a number",
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number, 0 or more",
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number",
        "a boolean" | "bool" => "true or false",
        "a sequence" => "a list",
        "a map" => "a table",
        "a string" | "a borrowed string" => "a string",
        other if other.starts_with("struct ") || other.starts_with("a map") => "a table",
        other if other.starts_with("a sequence") || other.starts_with("tuple") => "a list",
        other => return other.to_string(),
    };
    word.to_string()
}

/// A value as serde describes it ("integer `3`", "string \"a\"") as the user wrote it.
fn shown_from_serde(found: &str) -> String {
    for prefix in ["integer ", "floating point ", "boolean "] {
        if let Some(v) = found.strip_prefix(prefix) {
            return v.trim_matches('`').to_string();
        }
    }
    if let Some(v) = found.strip_prefix("string ") {
        return v.to_string();
    }
    match found {
        "sequence" => "a list".to_string(),
        "map" => "a table".to_string(),
        "null" | "unit value" => "nothing".to_string(),
        other => other.to_string(),
    }
}

/// A JSON value as TOML shows it (strings quoted, tables in braces).
fn show_value(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            let items: Vec<String> = m
                .iter()
                .map(|(k, x)| format!("{k} = {}", show_value(x)))
                .collect();
            format!("{{{}}}", items.join(", "))
        },
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(show_value).collect();
            format!("[{}]", items.join(", "))
        },
        Value::Null => "nothing".to_string(),
        other => other.to_string(),
    }
}

/// The segments of a dotted path ("traffic[0].kind" -> traffic, 0, kind).
fn segments(path: &str) -> Vec<Result<usize, &str>> {
    let mut out = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (key, mut idx) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            out.push(Err(key));
        }
        while let Some(close) = idx.find(']') {
            if let Ok(i) = idx[1..close].parse() {
                out.push(Ok(i));
            }
            idx = &idx[close + 1..];
        }
    }
    out
}

fn value_at_dotted<'a>(root: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    segments(path)
        .into_iter()
        .try_fold(root, |v, seg| match seg {
            Ok(i) => v.get(i),
            Err(k) => v.get(k),
        })
}

/// The names an enum field allows: the same JSON with the field set to a name no enum has,
/// parsed again, makes serde list them ("unknown variant `…`, expected one of …").
fn variants_at(
    root: &serde_json::Value,
    path: &str,
    reparse: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    const PROBE: &str = "\u{1}";
    let mut probe = root.clone();
    let mut v = &mut probe;
    for seg in segments(path) {
        v = match seg {
            Ok(i) => v.get_mut(i)?,
            Err(k) => v.get_mut(k)?,
        };
    }
    *v = serde_json::Value::String(PROBE.to_string());
    let msg = reparse(&serde_json::to_string(&probe).ok()?)?;
    let rest = msg.strip_prefix("unknown variant ")?;
    rest.split_once(", expected ").map(|(_, e)| e.to_string())
}
