//! Lane masks in JSON: a 32-bit mask (bit *l* = lane *l*) is written as a hexadecimal string
//! of eight digits, `"0xffffffff"` for the whole warp, `"0x0000ffff"` for half-warp 0, so that
//! lanes can be read off by eye. Use with `#[serde(with = "warpscope_model::mask")]` and
//! `#[schemars(with = "warpscope_model::mask::LaneMask")]`.

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serializer};
use std::borrow::Cow;

/// `mask` as `"0x"` and eight lower-case hexadecimal digits.
pub fn to_hex(mask: u32) -> String {
    format!("{mask:#010x}")
}

/// Parses `"0x…"` (1 to 8 hexadecimal digits, either case). Errors: the text, for the message.
pub fn from_hex(s: &str) -> Result<u32, String> {
    let digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .ok_or_else(|| format!("lane mask '{s}' does not start with 0x"))?;
    u32::from_str_radix(digits, 16)
        .map_err(|_| format!("lane mask '{s}' is not 1 to 8 hexadecimal digits after 0x"))
}

/// Serializes a lane mask as [`to_hex`].
pub fn serialize<S: Serializer>(mask: &u32, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&to_hex(*mask))
}

/// Deserializes a lane mask written by [`serialize`].
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let s = String::deserialize(d)?;
    from_hex(&s).map_err(serde::de::Error::custom)
}

/// The JSON Schema of a lane mask: a string `^0x[0-9a-f]{8}$`.
pub struct LaneMask;

impl JsonSchema for LaneMask {
    fn schema_name() -> Cow<'static, str> {
        "LaneMask".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": "^0x[0-9a-f]{8}$",
            "description": "Lanes of a warp as a 32-bit mask, bit l = lane l, in hexadecimal: \"0xffffffff\" is the whole warp, \"0x0000ffff\" half-warp 0."
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_round_trip_as_eight_hex_digits() {
        assert_eq!(to_hex(u32::MAX), "0xffffffff");
        assert_eq!(to_hex(0xffff), "0x0000ffff");
        assert_eq!(to_hex(0), "0x00000000");
        for m in [0, 1, 0xffff_0000, u32::MAX, 0x8000_0001] {
            assert_eq!(from_hex(&to_hex(m)), Ok(m));
        }
        assert_eq!(from_hex("0XFF"), Ok(255));
        assert!(from_hex("255").is_err());
        assert!(from_hex("0x1ffffffff").is_err());
    }
}
