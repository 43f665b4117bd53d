//! The subset of JSON Schema that `openapi.json` uses for the answers (`$ref`, `oneOf`, `const`, `enum`, `type`,
//! bounds, `items`, `properties`, `required`), checked strictly: every listed property must be answered.

use serde_json::Value;

/// The schema at `#/components/schemas/<name>`.
pub(super) fn schema<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc.pointer(&format!("/components/schemas/{name}"))
        .unwrap_or_else(|| panic!("openapi.json has no schema {name}"))
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_u64() || n.is_i64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The problems of `value` against `schema` (the subset of JSON Schema the document uses for these answers).
/// Stricter than JSON Schema in one way: every property the schema lists must be present, since the samples set every
/// optional field.
pub(super) fn check(doc: &Value, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    if let Some(pointer) = schema.get("$ref").and_then(Value::as_str) {
        match doc.pointer(pointer.trim_start_matches('#')) {
            Some(target) => check(doc, target, value, at, errors),
            None => errors.push(format!("{at}: unresolved $ref {pointer}")),
        }
        return;
    }
    if let Some(options) = schema.get("oneOf").and_then(Value::as_array) {
        let matching = options
            .iter()
            .filter(|option| {
                let mut inner = Vec::new();
                check(doc, option, value, at, &mut inner);
                inner.is_empty()
            })
            .count();
        if matching != 1 {
            errors.push(format!("{at}: {value} matches {matching} of the oneOf schemas"));
        }
    }
    if let Some(constant) = schema.get("const")
        && constant != value
    {
        errors.push(format!("{at}: {value} is not the const {constant}"));
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        errors.push(format!("{at}: {value} is not in the enum {allowed:?}"));
    }
    if let Some(ty) = schema.get("type") {
        let actual = json_type(value);
        let ok = |t: &Value| t == actual || (t == "number" && actual == "integer");
        let matches = match ty {
            Value::Array(types) => types.iter().any(ok),
            t => ok(t),
        };
        if !matches {
            errors.push(format!("{at}: {value} is not of type {ty}"));
        }
    }
    if let Some(n) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            errors.push(format!("{at}: {n} < minimum {min}"));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            errors.push(format!("{at}: {n} > maximum {max}"));
        }
    }
    if let Value::Array(items) = value {
        if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
            && (items.len() as u64) < min
        {
            errors.push(format!("{at}: {} items < minItems {min}", items.len()));
        }
        if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
            && (items.len() as u64) > max
        {
            errors.push(format!("{at}: {} items > maxItems {max}", items.len()));
        }
        if let Some(item_schema) = schema.get("items") {
            for (i, item) in items.iter().enumerate() {
                check(doc, item_schema, item, &format!("{at}[{i}]"), errors);
            }
        }
    }
    if let (Value::Object(object), Some(properties)) =
        (value, schema.get("properties").and_then(Value::as_object))
    {
        for (key, field) in object {
            match properties.get(key) {
                Some(field_schema) => check(doc, field_schema, field, &format!("{at}.{key}"), errors),
                None => errors.push(format!(
                    "{at}: the type answers {key:?}, the document does not list it"
                )),
            }
        }
        for key in properties.keys() {
            if !object.contains_key(key) {
                errors.push(format!(
                    "{at}: the document lists {key:?}, the type does not answer it"
                ));
            }
        }
        for key in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let listed = key.as_str().is_some_and(|k| properties.contains_key(k));
            if !listed {
                errors.push(format!("{at}: required {key} is not among the properties"));
            }
        }
    }
}
