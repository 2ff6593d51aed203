//! Every queue kind with its defaults, as the core's own deserialiser gives them
//! (`aqmlab queues`, the counterpart of `aqmlab presets` for TCP): nothing is restated here,
//! so the listing cannot drift from what a scenario gets.

use aqmlab::aqm::config::AqmConfig;
use serde_json::{json, Map, Value};

/// A kind no queue has: serde's error for it lists the kinds.
const PROBE: &str = "\u{1}";
/// How many required keys a kind may have before the listing gives up on it.
const MAX_REQUIRED: usize = 8;

/// The queue kinds, in the order the core declares them (without their aliases: a name that
/// reads back as another is one).
pub(crate) fn kinds() -> Vec<String> {
    let err = serde_json::from_value::<AqmConfig>(json!({ "kind": PROBE }))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    let listed = err.split_once("expected one of ").map_or("", |(_, l)| l);
    listed
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .filter(|k| defaults(k).is_ok_and(|(t, _)| t["kind"] == Value::String(k.clone())))
        .collect()
}

/// `kind`'s table with every default filled in, and the keys it requires (no default: each
/// is `null` in the table).
pub(crate) fn defaults(kind: &str) -> Result<(Map<String, Value>, Vec<String>), String> {
    let mut table = Map::new();
    table.insert("kind".into(), Value::String(kind.into()));
    let mut required: Vec<String> = Vec::new();
    for _ in 0..=MAX_REQUIRED {
        match serde_json::from_value::<AqmConfig>(Value::Object(table.clone())) {
            Ok(cfg) => {
                let Value::Object(mut full) =
                    serde_json::to_value(&cfg).map_err(|e| e.to_string())?
                else {
                    return Err(format!("queue kind {kind}: not a table"));
                };
                for k in &required {
                    full.insert(k.clone(), Value::Null);
                }
                return Ok((full, required));
            },
            Err(e) => {
                let msg = e.to_string();
                let missing = msg
                    .strip_prefix("missing field `")
                    .and_then(|r| r.split_once('`'))
                    .map(|(k, _)| k.to_string())
                    .ok_or_else(|| format!("queue kind {kind}: {msg}"))?;
                // Any number serves to read the rest; the listing shows the key as required.
                table.insert(missing.clone(), json!(1));
                required.push(missing);
            },
        }
    }
    Err(format!(
        "queue kind {kind}: more than {MAX_REQUIRED} required keys"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_listed_with_its_defaults() {
        let kinds = kinds();
        assert!(kinds.len() >= 12, "{kinds:?}");
        assert_eq!(kinds[0], "droptail");
        for k in &kinds {
            let (table, _) = defaults(k).unwrap();
            assert_eq!(table["kind"], Value::String(k.clone()));
        }
        let (dt, required) = defaults("droptail").unwrap();
        assert_eq!(required, ["limit"]);
        assert_eq!(dt["limit"], Value::Null);
        let (fq, required) = defaults("fq_codel").unwrap();
        assert!(required.is_empty());
        assert_eq!(fq["limit"], json!(10240));
    }
}
