//! The fast reading of a Python sample's payload in the layout nsys 2025.3
//! writes (`{"Python Periodic Sampling": {"Thread state ID": 1, "Thread
//! state": "Running", "Frames count": 2, "Frames": [{"Function": 4850,
//! "File": 122, "Line": 38}, …]}}`): only the fields used, strings borrowed
//! from the row, no tree of `serde_json::Value`s. A payload in any other
//! layout (another key, another nesting) is not read here: the caller then
//! reads it by the schema's names ([`super::python_samples`]), which gives
//! the same frames and state for this layout, only slower.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, IgnoredAny, Visitor};

/// A payload of the known layout.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct KnownPayload<'a> {
    #[serde(rename = "Python Periodic Sampling", borrow)]
    pub sample: KnownSample<'a>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct KnownSample<'a> {
    #[serde(rename = "Thread state ID", default)]
    _state_id: Option<IgnoredAny>,
    #[serde(rename = "Thread state", borrow, default)]
    pub state: Option<Scalar<'a>>,
    #[serde(rename = "Frames count", default)]
    _count: Option<IgnoredAny>,
    #[serde(rename = "Frames", borrow, default)]
    pub frames: Vec<KnownFrame<'a>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct KnownFrame<'a> {
    #[serde(rename = "Function", borrow)]
    pub function: Scalar<'a>,
    #[serde(rename = "File", borrow, default)]
    pub file: Option<Scalar<'a>>,
    #[serde(rename = "Line", borrow, default)]
    pub line: Option<Scalar<'a>>,
}

/// A JSON value that is not an object nor an array: a name given as text
/// or as a `StringIds` id, a line, a state.
#[derive(Debug, PartialEq)]
pub(super) enum Scalar<'a> {
    Int(i64),
    /// A non-negative integer (serde_json gives every one of these so).
    UInt(u64),
    Text(Cow<'a, str>),
    /// A float, a boolean or null.
    Other,
}

impl<'a> Scalar<'a> {
    /// The integer, where it fits an i64 (serde_json's `as_i64`).
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Scalar::Int(v) => Some(v),
            Scalar::UInt(v) => i64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The integer, where it is non-negative (serde_json's `as_u64`).
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Scalar::Int(v) => u64::try_from(v).ok(),
            Scalar::UInt(v) => Some(v),
            _ => None,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Scalar<'a> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number, a string, a boolean or null")
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Scalar::Int(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Scalar::UInt(v))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Scalar::Other)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Scalar::Other)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Other)
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Other)
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Scalar::Text(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Scalar::Text(Cow::Owned(v.to_string())))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Scalar::Text(Cow::Owned(v)))
    }
}

/// The payload in the known layout; None for any other (or not JSON).
pub(super) fn read_known(json: &str) -> Option<KnownPayload<'_>> {
    serde_json::from_str(json).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_known_layout_is_read_with_its_names_borrowed() {
        let p = read_known(
            r#"{"Python Periodic Sampling":{"Thread state ID":1,"Thread state":"Running","Frames count":2,"Frames":[{"Function":30,"File":"a.py","Line":7},{"Function":"f\"g","File":31}]}}"#,
        )
        .expect("known layout");
        assert_eq!(p.sample.state, Some(Scalar::Text(Cow::Borrowed("Running"))));
        assert_eq!(p.sample.frames.len(), 2);
        assert_eq!(p.sample.frames[0].function, Scalar::UInt(30));
        assert!(matches!(
            p.sample.frames[0].file,
            Some(Scalar::Text(Cow::Borrowed("a.py")))
        ));
        assert_eq!(
            p.sample.frames[0].line.as_ref().and_then(Scalar::as_u64),
            Some(7)
        );
        assert_eq!(
            p.sample.frames[1].function,
            Scalar::Text(Cow::Owned("f\"g".into()))
        );
        assert!(p.sample.frames[1].line.is_none());
    }

    #[test]
    fn another_layout_is_left_to_the_reading_by_names() {
        for other in [
            r#"{"Python Periodic Sampling":{"Thread state":"Running","Stack":[]}}"#,
            r#"{"Sampling":{"Frames":[]}}"#,
            r#"{"Python Periodic Sampling":{"Frames":[{"Func":1}]}}"#,
            r#"{"Python Periodic Sampling":{"Frames":[{"Function":{"id":1}}]}}"#,
            "not json",
        ] {
            assert!(read_known(other).is_none(), "{other}");
        }
    }
}
