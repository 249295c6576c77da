//! Lenient reading of the fields a file's diagnostics are made of, without a detour through
//! a tree of values: each field is visited once, takes what fits its type, and drops
//! anything else as its default. Diagnostics are the bulk of what servers send (a pull of a
//! Django module answers hundreds of them), so this is the path where that detour cost most.

use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserialize, DeserializeOwned, Deserializer, IgnoredAny, Visitor};

/// A field's type read laxly: each hook gives the value a JSON scalar or object of that
/// kind stands for, or `None` for the default; arrays always give the default.
pub(crate) trait Lax: Default + Sized {
    fn from_str(_: &str) -> Option<Self> {
        None
    }
    fn from_u64(_: u64) -> Option<Self> {
        None
    }
    fn from_i64(n: i64) -> Option<Self> {
        u64::try_from(n).ok().and_then(Self::from_u64)
    }
    fn from_f64(_: f64) -> Option<Self> {
        None
    }
    /// An object: read it whole as the type, or drain it.
    fn from_map<'de, A: de::MapAccess<'de>>(mut map: A) -> Result<Option<Self>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

/// Reads a field laxly, for `#[serde(deserialize_with = "lax")]`.
pub(crate) fn lax<'de, D: Deserializer<'de>, T: Lax>(d: D) -> Result<T, D::Error> {
    d.deserialize_any(LaxVisitor(PhantomData))
}

struct LaxVisitor<T>(PhantomData<T>);

impl<'de, T: Lax> Visitor<'de> for LaxVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_u64<E>(self, n: u64) -> Result<T, E> {
        Ok(T::from_u64(n).unwrap_or_default())
    }
    fn visit_i64<E>(self, n: i64) -> Result<T, E> {
        Ok(T::from_i64(n).unwrap_or_default())
    }
    fn visit_f64<E>(self, n: f64) -> Result<T, E> {
        Ok(T::from_f64(n).unwrap_or_default())
    }
    fn visit_str<E>(self, s: &str) -> Result<T, E> {
        Ok(T::from_str(s).unwrap_or_default())
    }
    fn visit_unit<E>(self) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_none<E>(self) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        lax(d)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(T::default())
    }
    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        Ok(T::from_map(map)?.unwrap_or_default())
    }
}

impl Lax for String {
    fn from_str(s: &str) -> Option<Self> {
        Some(s.to_owned())
    }
}

impl Lax for Option<String> {
    fn from_str(s: &str) -> Option<Self> {
        Some(Some(s.to_owned()))
    }
}

impl Lax for Option<u64> {
    fn from_u64(n: u64) -> Option<Self> {
        Some(Some(n))
    }
}

impl Lax for Option<i64> {
    fn from_u64(n: u64) -> Option<Self> {
        i64::try_from(n).ok().map(Some)
    }
    fn from_i64(n: i64) -> Option<Self> {
        Some(Some(n))
    }
}

impl Lax for u32 {
    fn from_u64(n: u64) -> Option<Self> {
        u32::try_from(n).ok()
    }
}

impl Lax for Option<crate::protocol::NumberOrString> {
    fn from_str(s: &str) -> Option<Self> {
        Some(Some(crate::protocol::NumberOrString::String(s.to_owned())))
    }
    fn from_u64(n: u64) -> Option<Self> {
        Some(Some(crate::protocol::NumberOrString::Number(n.into())))
    }
    fn from_i64(n: i64) -> Option<Self> {
        Some(Some(crate::protocol::NumberOrString::Number(n.into())))
    }
    fn from_f64(n: f64) -> Option<Self> {
        serde_json::Number::from_f64(n).map(|n| Some(crate::protocol::NumberOrString::Number(n)))
    }
}

/// An object type read laxly: an object is read as it, anything else is its default.
macro_rules! lax_object {
    ($($t:ty),*) => {$(
        impl Lax for $t {
            fn from_map<'de, A: de::MapAccess<'de>>(map: A) -> Result<Option<Self>, A::Error> {
                <$t>::deserialize(MapAccessDeserializer::new(map)).map(Some)
            }
        }
    )*};
}
lax_object!(crate::protocol::Position, crate::protocol::Range);

/// A list read laxly: an array keeps the objects in it that read as `T` (others are
/// skipped), one object stands for a list of one, and anything else is empty.
pub(crate) fn lax_list<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    d: D,
) -> Result<Vec<T>, D::Error> {
    Ok(d.deserialize_any(ListVisitor(PhantomData))?
        .unwrap_or_default())
}

/// [`lax_list`] for a list whose absence means something: `null` or a value that is no
/// list is `None`.
pub(crate) fn lax_list_or_none<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    d: D,
) -> Result<Option<Vec<T>>, D::Error> {
    d.deserialize_any(ListVisitor(PhantomData))
}

struct ListVisitor<T>(PhantomData<T>);

impl<'de, T: DeserializeOwned> Visitor<'de> for ListVisitor<T> {
    type Value = Option<Vec<T>>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element::<Fits<T>>()? {
            items.extend(item.0);
        }
        Ok(Some(items))
    }
    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Ok(Some(Fits::<T>::object(map)?.0.into_iter().collect()))
    }
}

/// A list's item: an object read as `T`, or nothing for anything else.
struct Fits<T>(Option<T>);

impl<T: DeserializeOwned> Fits<T> {
    fn object<'de, A: de::MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        Ok(Fits(Some(T::deserialize(MapAccessDeserializer::new(map))?)))
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Fits<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ItemVisitor<T>(PhantomData<T>);
        impl<'de, T: DeserializeOwned> Visitor<'de> for ItemVisitor<T> {
            type Value = Fits<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Fits<T>, E> {
                Ok(Fits(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Fits<T>, E> {
                Ok(Fits(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Fits<T>, E> {
                Ok(Fits(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Fits<T>, E> {
                Ok(Fits(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Fits<T>, E> {
                Ok(Fits(None))
            }
            fn visit_unit<E>(self) -> Result<Fits<T>, E> {
                Ok(Fits(None))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Fits<T>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Fits(None))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Fits<T>, A::Error> {
                Fits::object(map)
            }
        }
        d.deserialize_any(ItemVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use crate::protocol::{Diagnostic, DiagnosticReport, NumberOrString, PublishedText};

    fn text<T: serde::de::DeserializeOwned>(text: &str) -> T {
        serde_json::from_str(text).unwrap()
    }

    /// Each field takes what fits its type and the default for anything else, as reading
    /// through a value did; an object in an odd place is skipped whole.
    #[test]
    fn odd_fields_take_their_default_and_the_rest_still_reads() {
        let d: Diagnostic = text(
            r#"{"range": {"start": {"line": -1, "character": 5000000000, "x": [1]},
                          "end": {"line": 3, "character": 2.0}},
                "severity": 2.5, "code": -3, "source": {"a": {"b": [1, {"c": 2}]}},
                "message": 7, "data": {"deep": [1, {"a": null}]}, "tags": [1]}"#,
        );
        assert_eq!((d.range.start.line, d.range.start.character), (0, 0));
        assert_eq!((d.range.end.line, d.range.end.character), (3, 0));
        assert_eq!((d.severity, d.source, d.message.as_str()), (None, None, ""));
        assert_eq!(d.code, Some(NumberOrString::Number((-3).into())));
        let d: Diagnostic = text(r#"{"range": "x", "severity": 2, "code": "E1", "message": "m"}"#);
        assert_eq!(
            (d.level(), d.code_tag(), d.message.as_str()),
            (2, " [E1]".into(), "m")
        );
        let published = |t| serde_json::from_str::<PublishedText>(t).unwrap();
        let p = published(
            r#"{"uri": "file:///a", "version": 4,
                "diagnostics": [{"message": "a"}, "junk", null, [1, 2], {"message": "b"}]}"#,
        );
        let items = p.items();
        let messages: Vec<_> = items.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            (p.uri.as_deref(), p.version, messages),
            (Some("file:///a"), Some(4), vec!["a", "b"])
        );
        let one = published(r#"{"diagnostics": {"message": "one"}}"#);
        assert_eq!(one.items().len(), 1);
        let none = published(r#"{"diagnostics": "x", "uri": 3}"#);
        assert!(none.items().is_empty() && none.uri.is_none());
        // The same text twice has one digest; another text another.
        let again = published(r#"{"uri": "file:///b", "diagnostics": "x"}"#);
        assert_eq!(again.digest(), none.digest());
        assert_ne!(one.digest(), none.digest());
        let unchanged: DiagnosticReport = text(r#"{"kind": "unchanged", "resultId": "7"}"#);
        assert!(unchanged.items.is_none());
        let empty: DiagnosticReport = text(r#"{"kind": "full", "items": []}"#);
        assert_eq!(empty.items.map(|i| i.len()), Some(0));
    }
}
