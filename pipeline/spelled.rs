//! Enums whose variants each have one fixed spelling (a stored code, a name shown to
//! people): [`spelled_enum!`] declares the enum with its spellings side by side and
//! gives it `ALL`, `as_str` and a `Display` that writes `as_str`, so the spelling of
//! a variant is written once; [`serde_by_spelling!`] stores such an enum as its
//! spelling. Parsing stays with each enum, whose error says what its input is.

/// Declares `enum NAME { Variant => "spelling", ... }` with `ALL` (every variant, in
/// declaration order), `as_str` and `Display`.
macro_rules! spelled_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$variant_meta:meta])* $variant:ident => $spelling:literal,)+
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $($(#[$variant_meta])* $variant,)+
        }

        impl $name {
            /// Every variant, in declaration order.
            #[allow(dead_code)] // not every enum's users list its variants
            pub const ALL: [$name; [$($spelling),+].len()] = [$($name::$variant),+];

            /// The variant's one spelling.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $spelling,)+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str(self.as_str())
            }
        }
    };
}

/// Serde for enums stored as their spelling: written with `as_str`, read with their
/// `FromStr`, whose error is the message a bad value gets.
macro_rules! serde_by_spelling {
    ($name:ident) => {
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                <String as serde::Deserialize>::deserialize(deserializer)?.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

pub(crate) use {serde_by_spelling, spelled_enum};
