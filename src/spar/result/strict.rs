//! The reviewer's text read as exactly one JSON value, with a duplicate key refused (G1) where
//! `serde_json` would keep the last one.

use super::*;

/// Parses exactly one JSON value, refusing duplicated keys at any depth (serde_json alone keeps
/// the last one silently, which would read the result as another value).
pub(super) fn parse_strict(text: &str) -> Result<Value, InvalidOutput> {
    let not_one = |err: serde_json::Error| {
        invalid(format!("the result is not exactly one JSON object: {err}"))
    };
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = StrictValue {
        path: String::new(),
    }
    .deserialize(&mut deserializer)
    .map_err(not_one)?;
    deserializer.end().map_err(not_one)?;
    Ok(value)
}

/// A [`Value`] seed that knows where it is, to name a duplicated key with its path.
pub(super) struct StrictValue {
    pub(super) path: String,
}

impl<'de> DeserializeSeed<'de> for StrictValue {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        // JSON text never holds NaN or infinities; `from` maps them to null anyway.
        Ok(Value::from(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(StrictValue {
            path: format!("{}[{}]", self.path, items.len()),
        })? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if map.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "duplicate key {key:?}{}",
                    within(&self.path)
                )));
            }
            let path = if self.path.is_empty() {
                key.clone()
            } else {
                format!("{}.{key}", self.path)
            };
            let value = access.next_value_seed(StrictValue { path })?;
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}
