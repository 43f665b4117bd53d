//! The clients' HTTP and JSON, kept small: one `fetch` per request through a JS snippet (the response body is read
//! there too, so a call is a single await), JSON parsed and printed by the JS engine, and JSON values crossing the
//! boundary through two short walkers instead of a serde (de)serializer — the clients' wasm is mostly what they
//! link, and serde's generic code for JS values was most of it.

use js_sys::{Array, Promise, Reflect, Uint8Array};
use serde_json::{Map, Number, Value};
use wasm_bindgen::{JsCast, prelude::*};
use wasm_bindgen_futures::JsFuture;

use crate::{
    Error,
    api::shape::{JsonRead, Shape, is_safe_uint},
};

#[wasm_bindgen(module = "/src/wasm/js/http.js")]
extern "C" {
    /// `fetch` (or the client's own) and the whole body: resolves to `[status, retryAfter | null, body]`, the body a
    /// string, or a `Uint8Array` for a successful `binary` request; rejects when the service cannot be reached, the
    /// attempt timed out or the signal aborted. A 429 or 503 is retried up to `retries` times after its
    /// `Retry-After` (else 0.5 s, 1 s, 2 s, …) when that wait is at most `maxRetryDelay` seconds (default 60).
    #[wasm_bindgen(js_name = prFetch)]
    fn pr_fetch(
        method: &str,
        url: &str,
        auth: Option<&str>,
        body: &JsValue,
        json: bool,
        binary: bool,
        transport: &JsValue,
    ) -> Promise;
}

/// The allowed keys of an input that takes the transport options ([`transport`]): `keys`, then the option names.
/// A `'static` list (the argument readers intern it), so a macro rather than a concatenation.
macro_rules! with_transport_keys {
    ($($key:literal),* $(,)?) => {
        &[$($key,)* "timeout", "signal", "retries", "maxRetryDelay", "fetch"]
    };
}
pub(super) use with_transport_keys;

/// The transport options of a client's options (`timeout` ms per attempt, `signal`, `retries`, `maxRetryDelay` s,
/// `fetch`), checked, copied into the object `prFetch` reads (the signal as `signals`, a list: see [`over`]).
pub(super) fn transport(options: &JsValue) -> Result<JsValue, Error> {
    let out = js_sys::Object::new();
    let bad = |key: &str, what: &str| Error::InvalidArgument(format!("options.{key} must be {what}"));
    let number = |key: &'static str, min: f64, max: f64, integer: bool, what: &str| -> Result<(), Error> {
        let v = get_dyn(options, key);
        if v.is_undefined() {
            return Ok(());
        }
        match v.as_f64() {
            Some(n) if (min..=max).contains(&n) && (!integer || n.fract() == 0.0) => {
                let _ = Reflect::set(&out, &key.into(), &v);
                Ok(())
            }
            _ => Err(bad(key, what)),
        }
    };
    // setTimeout's limit (2^31 - 1 ms)
    number(
        "timeout",
        1.0,
        2_147_483_647.0,
        false,
        "a number of milliseconds (1 to 2^31 - 1)",
    )?;
    number("retries", 0.0, 10.0, true, "an integer from 0 to 10")?;
    number(
        "maxRetryDelay",
        0.0,
        86_400.0,
        false,
        "a number of seconds (0 to 86400)",
    )?;
    let signal = get_dyn(options, "signal");
    if !signal.is_undefined() {
        // an AbortSignal (or one from another realm / polyfill): `aborted` and `addEventListener`
        let aborted = get_dyn(&signal, "aborted");
        if !signal.is_object()
            || aborted.as_bool().is_none()
            || !get_dyn(&signal, "addEventListener").is_function()
        {
            return Err(bad("signal", "an AbortSignal"));
        }
        let _ = Reflect::set(&out, &"signals".into(), &Array::of1(&signal));
    }
    let fetch = get_dyn(options, "fetch");
    if !fetch.is_undefined() {
        if !fetch.is_function() {
            return Err(bad("fetch", "a function (the fetch API's signature)"));
        }
        let _ = Reflect::set(&out, &"fetch".into(), &fetch);
    }
    Ok(out.into())
}

/// The transport of one call: a client's (`client`, made by [`transport`]) with the call's own options over it
/// (`options`: `undefined`, or the same names, checked the same way). The call's `timeout`, `retries`,
/// `maxRetryDelay` and `fetch` replace the client's; its `signal` is added to the client's — either aborts the call.
pub(super) fn over(client: &JsValue, options: &JsValue) -> Result<JsValue, Error> {
    if options.is_undefined() || options.is_null() {
        return Ok(client.clone());
    }
    let call = transport(options)?;
    let signals = Array::new();
    for from in [client, &call] {
        let list = get_dyn(from, "signals");
        if Array::is_array(&list) {
            for s in Array::from(&list).iter() {
                signals.push(&s);
            }
        }
    }
    let merged = js_sys::Object::assign(
        &js_sys::Object::assign(&js_sys::Object::new(), client.unchecked_ref()),
        call.unchecked_ref(),
    );
    let _ = Reflect::set(&merged, &"signals".into(), &signals);
    Ok(merged.into())
}

/// A copy of the transport `t` whose requests carry `Prefer: <prefer>` (RFC 7240).
pub(super) fn with_prefer(t: &JsValue, prefer: &str) -> JsValue {
    let copy = js_sys::Object::assign(&js_sys::Object::new(), t.unchecked_ref());
    let _ = Reflect::set(&copy, &"prefer".into(), &prefer.into());
    copy.into()
}

/// What a request sends.
#[derive(Debug)]
pub(super) enum Body<'a> {
    /// Nothing.
    None,
    /// A JSON value (`JSON.stringify` of it, `content-type: application/json`).
    Json(&'a Value),
    /// A `FormData` (multipart; `fetch` writes the boundary).
    Form(&'a web_sys::FormData),
}

/// An answer: the HTTP status and the body as the JS engine read it.
#[derive(Debug)]
pub(super) struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// `Retry-After` in seconds (delay-seconds, or until an HTTP-date; at most a day), when given and readable.
    pub retry_after: Option<u32>,
    /// A string, or a `Uint8Array` for a successful binary request.
    pub body: JsValue,
}

/// A `ProfileRelayerError`: `code`, the HTTP `status` and `retryAfter` (seconds) when known.
pub(super) fn client_error(
    status: Option<u16>,
    code: &str,
    message: &str,
    retry_after: Option<u32>,
) -> JsValue {
    crate::wasm::error::new_error(message, code, status, retry_after, &JsValue::UNDEFINED)
}

/// The message of a thrown JS value (an `Error`'s `message`, a string as is).
pub(super) fn reason_of(thrown: &JsValue) -> String {
    thrown
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| thrown.as_string())
        .unwrap_or_else(|| "a non-Error value was thrown".to_owned())
}

/// Sends a request; only a service that cannot be reached (or a timeout, or the signal) fails here:
/// `NETWORK_ERROR`, the JS engine's error (`TypeError`, `TimeoutError`, the signal's reason) as its `cause`.
pub(super) async fn send(
    transport: &JsValue,
    method: &str,
    url: &str,
    auth: Option<&str>,
    body: Body<'_>,
    binary: bool,
) -> Result<Answer, JsValue> {
    let (payload, json) = match body {
        Body::None => (JsValue::UNDEFINED, false),
        Body::Json(value) => (to_js(value), true),
        Body::Form(form) => (form.into(), false),
    };
    let out = JsFuture::from(pr_fetch(method, url, auth, &payload, json, binary, transport))
        .await
        .map_err(|e| {
            let err = client_error(
                None,
                "NETWORK_ERROR",
                &format!("the service cannot be reached: {}", reason_of(&e)),
                None,
            );
            let _ = Reflect::set(&err, &"cause".into(), &e);
            err
        })?;
    let parts: Array = out.unchecked_into();
    Ok(Answer {
        status: parts.get(0).as_f64().map_or(0, |s| s as u16),
        // seconds, read by the snippet (delay-seconds or an HTTP-date, at most a day)
        retry_after: parts.get(1).as_f64().map(|s| s as u32),
        body: parts.get(2),
    })
}

impl Answer {
    /// Whether the status is 2xx.
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The answer itself when it is 2xx; else the service's `{"error": {code, message}}` as a
    /// `ProfileRelayerError` (`HTTP_ERROR` for a body without one).
    pub fn checked(self) -> Result<Self, JsValue> {
        if self.ok() {
            return Ok(self);
        }
        let error = self
            .body
            .as_string()
            .and_then(|text| js_sys::JSON::parse(&text).ok())
            .filter(JsValue::is_object)
            .and_then(|body| Reflect::get(&body, &"error".into()).ok())
            .filter(JsValue::is_object);
        let detail = error.and_then(|e| Some((get_str(&e, "code")?, get_str(&e, "message")?)));
        Err(match detail {
            Some((code, message)) => client_error(Some(self.status), &code, &message, self.retry_after),
            None => client_error(
                Some(self.status),
                "HTTP_ERROR",
                &format!("HTTP {}", self.status),
                self.retry_after,
            ),
        })
    }

    /// The body parsed by `JSON.parse`; `INVALID_RESPONSE` when it is not JSON.
    pub fn json(&self) -> Result<JsValue, JsValue> {
        self.body
            .as_string()
            .and_then(|text| js_sys::JSON::parse(&text).ok())
            .ok_or_else(|| self.invalid("the service answered a body that is not JSON"))
    }

    /// The body (parsed by `JSON.parse`) checked against the shape of the core type it is documented as: an answer
    /// of another shape is `INVALID_RESPONSE`, naming the first field that differs.
    pub fn typed(&self, shape: &Shape) -> Result<JsValue, JsValue> {
        let value = self.json()?;
        shape
            .check(&value)
            .map_err(|e| self.invalid(&format!("the service answered an unexpected body: {e}")))?;
        Ok(value)
    }

    /// An `INVALID_RESPONSE` error for this answer.
    pub fn invalid(&self, message: &str) -> JsValue {
        client_error(Some(self.status), "INVALID_RESPONSE", message, None)
    }
}

/// `value[key]` as a string, if it is one.
pub(super) fn get_str(value: &JsValue, key: &str) -> Option<String> {
    get_dyn(value, key).as_string()
}

/// A JSON value as a JS value (what `JSON.parse` of its text gives).
pub(super) fn to_js(value: &Value) -> JsValue {
    match value {
        Value::Null => JsValue::NULL,
        Value::Bool(b) => JsValue::from_bool(*b),
        // u64 / i64 beyond 2^53 round like `JSON.parse` rounds them
        Value::Number(n) => JsValue::from_f64(n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) => JsValue::from_str(s),
        Value::Array(items) => items.iter().map(to_js).collect::<Array>().into(),
        Value::Object(map) => {
            let o = js_sys::Object::new();
            for (k, v) in map {
                let _ = Reflect::set(&o, &JsValue::from_str(k), &to_js(v));
            }
            o.into()
        }
    }
}

/// How deep a JS argument may nest before it is refused (a JSON document deeper than this is not metadata).
const MAX_DEPTH: usize = 64;

/// A JS argument as a JSON value, as `JSON.stringify` would write it: `undefined` object fields are left out,
/// integral numbers are integers. Refused (`INVALID_ARGUMENT`): functions, symbols, bigints, non-finite numbers
/// and nesting deeper than 64.
pub(super) fn from_js(value: &JsValue, what: &str) -> Result<Value, Error> {
    from_js_at(value, what, 0)
}

fn from_js_at(value: &JsValue, what: &str, depth: usize) -> Result<Value, Error> {
    let refuse = |why: &str| Error::InvalidArgument(format!("{what}: {why}"));
    if depth > MAX_DEPTH {
        return Err(refuse("nested too deep"));
    }
    if value.is_null() || value.is_undefined() {
        return Ok(Value::Null);
    }
    if let Some(b) = value.as_bool() {
        return Ok(Value::Bool(b));
    }
    if let Some(s) = value.as_string() {
        return Ok(Value::String(s));
    }
    if let Some(f) = value.as_f64() {
        return if is_safe_uint(f.abs()) {
            // exact: an integer within 2^53
            Ok(Value::Number(if f < 0.0 {
                Number::from(f as i64)
            } else {
                Number::from(f as u64)
            }))
        } else {
            Number::from_f64(f)
                .map(Value::Number)
                .ok_or_else(|| refuse("a number must be finite"))
        };
    }
    if Array::is_array(value) {
        let items: &Array = value.unchecked_ref();
        return items.iter().map(|v| from_js_at(&v, what, depth + 1)).collect();
    }
    if value.is_function() || !value.is_object() {
        return Err(refuse("not a JSON value (a function, symbol or bigint)"));
    }
    let mut map = Map::new();
    for entry in js_sys::Object::entries(value.unchecked_ref()).iter() {
        let pair: &Array = entry.unchecked_ref();
        let v = pair.get(1);
        if v.is_undefined() {
            continue;
        }
        map.insert(
            pair.get(0).as_string().unwrap_or_default(),
            from_js_at(&v, what, depth + 1)?,
        );
    }
    Ok(Value::Object(map))
}

/// Bytes of a `Uint8Array` answer body.
pub(super) fn bytes_of(body: &JsValue) -> Vec<u8> {
    body.dyn_ref::<Uint8Array>()
        .map(Uint8Array::to_vec)
        .unwrap_or_default()
}

impl JsonRead for JsValue {
    fn is_null(&self) -> bool {
        Self::is_null(self)
    }
    fn as_bool(&self) -> Option<bool> {
        Self::as_bool(self)
    }
    fn as_number(&self) -> Option<f64> {
        self.as_f64()
    }
    fn as_text(&self) -> Option<std::borrow::Cow<'_, str>> {
        self.as_string().map(std::borrow::Cow::Owned)
    }
    fn items(&self) -> Option<Vec<Self>> {
        Array::is_array(self).then(|| self.unchecked_ref::<Array>().to_vec())
    }
    fn is_object(&self) -> bool {
        Self::is_object(self) && !Array::is_array(self)
    }
    fn member(&self, name: &str) -> Option<Self> {
        Some(get_dyn(self, name)).filter(|v| !v.is_undefined())
    }
}

/// `obj[key]` for a key known only at run time.
fn get_dyn(obj: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}
