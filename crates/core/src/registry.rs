//! Registries of named kinds, each with its own parameter struct: the congestion control
//! algorithms (tcplab-cc) and the queue disciplines (tcplab-net). A scenario names a kind
//! (`"cubic"`) or writes a table (`{ kind = "cubic", beta = 0.7 }`); [`registry!`](crate::registry!)
//! declares, from one list, the setting's type, its JSON Schema, its parsing with one-line
//! errors and its `tcplab list` catalog, and each registry adds what only it has (building an
//! instance, validation).

use serde::{de::DeserializeOwned, Serialize};
use serde_json::Map;
pub use serde_json::Value;

/// Name, unit and one-line description of a parameter; its default is read from the
/// parameter struct's `Default`, so it cannot drift from the code.
pub struct ParamDoc {
    pub name: &'static str,
    pub unit: &'static str,
    pub doc: &'static str,
}

/// One parameter, for `tcplab list`.
#[derive(Clone, Debug, Serialize)]
pub struct ParamInfo {
    pub name: &'static str,
    pub default: String,
    pub unit: &'static str,
    pub doc: &'static str,
}

/// One kind, for `tcplab list`.
#[derive(Clone, Debug, Serialize)]
pub struct KindInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub params: Vec<ParamInfo>,
}

/// The catalog entry of parameter struct `T`, its defaults read from `T::default()`.
pub fn info<T: Default + Serialize>(name: &'static str, summary: &'static str, params: &[ParamDoc]) -> KindInfo {
    let defaults = serde_json::to_value(T::default()).expect("parameter structs serialize");
    let params = params
        .iter()
        .map(|p| {
            let default = match &defaults[p.name] {
                Value::Null => panic!("{name}: PARAMS names {:?}, which is not a field", p.name),
                Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            ParamInfo { name: p.name, default, unit: p.unit, doc: p.doc }
        })
        .collect();
    KindInfo { name, summary, params }
}

/// What a registry's setting accepts besides its names, and the words of its errors.
pub struct Setting {
    /// What one kind is called: "algorithm" in `unknown algorithm "x"; allowed: …`.
    pub noun: &'static str,
    /// Other accepted names, as (alias, canonical name); the JSON Schema lists them too.
    pub aliases: &'static [(&'static str, &'static str)],
    /// The JSON Schema description of the setting.
    pub description: &'static str,
    /// The message for a value that is neither a name nor a table, from the allowed names
    /// (comma-separated) and the value found.
    pub not_name_or_table: fn(&str, &Value) -> String,
    /// The message for a `kind` that is not a string, from the allowed names and the value found.
    pub kind_not_a_name: fn(&str, &Value) -> String,
    /// The message for a wrong parameter, from the kind and serde's message.
    pub bad_param: fn(&str, String) -> String,
}

impl Setting {
    /// The canonical name of `name` (itself unless an alias).
    pub fn canonical<'a>(&self, name: &'a str) -> &'a str {
        self.aliases.iter().find(|(alias, _)| *alias == name).map_or(name, |(_, canonical)| canonical)
    }
}

/// Serde's error for a parameter table, with the path of the parameter at fault.
pub type ParamError = serde_path_to_error::Error<serde_json::Error>;

/// The parameters of one kind from its table (without `kind`), parsed as the kind's own
/// struct so that an error keeps its key.
pub fn params<T: DeserializeOwned>(table: Value) -> Result<T, ParamError> {
    serde_path_to_error::deserialize(table)
}

/// Parses a setting: a bare name or a table with `kind`, of one of `names` (canonical, in
/// registry order) or an alias; `from_params` reads the rest of the table for a checked
/// canonical kind. An error is (the key at fault, empty for the value as a whole; what is
/// wrong and what is allowed).
pub fn parse<T>(
    value: Value,
    setting: &Setting,
    names: &[&str],
    from_params: impl FnOnce(&str, Value) -> Result<T, ParamError>,
) -> Result<T, (String, String)> {
    let allowed = names.join(", ");
    let (mut table, kind_key) = match value {
        Value::String(name) => (Map::from_iter([("kind".to_string(), Value::String(name))]), ""),
        Value::Object(table) => (table, "kind"),
        other => return Err((String::new(), (setting.not_name_or_table)(&allowed, &other))),
    };
    let kind = match table.remove("kind") {
        Some(Value::String(k)) => setting.canonical(&k).to_string(),
        Some(other) => return Err((kind_key.into(), (setting.kind_not_a_name)(&allowed, &other))),
        None => return Err((kind_key.into(), format!("missing; allowed: {allowed}"))),
    };
    if !names.contains(&kind.as_str()) {
        return Err((kind_key.into(), format!("unknown {} {kind:?}; allowed: {allowed}", setting.noun)));
    }
    from_params(&kind, Value::Object(table)).map_err(|e| {
        let key = e.path().to_string();
        (if key == "." { String::new() } else { key }, (setting.bad_param)(&kind, e.into_inner().to_string()))
    })
}

/// Declares a registry from one list of `Variant(ParamStruct) = "name"` lines:
/// * the setting `$config`, an enum with one variant per kind (its attributes are the
///   caller's), with `parse`, `names`, `catalog`, `name` and a JSON Schema accepting a bare
///   name (or alias) or the table form;
/// * `$table`, the tagged table form `{ kind = "name", params… }`: its JSON Schema, and
///   `$config::table()` for serializing it.
///
/// `$kind` is the trait giving each parameter struct its `NAME`, `SUMMARY` and `PARAMS`
/// (the list's name must equal `NAME`, which the registries' tests check); `$setting` a
/// [`Setting`](crate::registry::Setting). The calling crate needs `serde` and `schemars`.
#[macro_export]
macro_rules! registry {
    (
        $(#[$config_attr:meta])*
        pub enum $config:ident;
        $(#[$table_attr:meta])*
        table $table:ident;
        kinds $kind:path, setting $setting:expr;
        $($(#[$doc:meta])* $variant:ident($param:ty) = $name:literal,)*
    ) => {
        $(#[$config_attr])*
        pub enum $config {
            $($(#[$doc])* $variant($param),)*
        }

        $(#[$table_attr])*
        #[derive(::serde::Serialize, ::schemars::JsonSchema)]
        #[serde(tag = "kind")]
        enum $table {
            $($(#[$doc])* #[serde(rename = $name)] $variant($param),)*
        }

        impl $config {
            /// Parses what a scenario writes: a bare name or a table with `kind`. An error
            /// is (the key at fault, empty for the value as a whole; what is wrong and
            /// what is allowed).
            pub fn parse(value: $crate::registry::Value) -> Result<Self, (String, String)> {
                $crate::registry::parse(value, &$setting, &Self::names(), |kind, params| match kind {
                    $($name => $crate::registry::params::<$param>(params).map(Self::$variant),)*
                    other => unreachable!("{other:?} was checked against the names"),
                })
            }

            /// Canonical names, in registry order.
            pub fn names() -> Vec<&'static str> {
                vec![$($name,)*]
            }

            /// Every kind with its parameters and defaults.
            pub fn catalog() -> Vec<$crate::registry::KindInfo> {
                vec![$(
                    $crate::registry::info::<$param>(<$param as $kind>::NAME, <$param as $kind>::SUMMARY, <$param as $kind>::PARAMS),
                )*]
            }

            pub fn name(&self) -> &'static str {
                match self {
                    $(Self::$variant(_) => <$param as $kind>::NAME,)*
                }
            }

            /// The tagged table form, `{ kind = "name", params… }`.
            fn table(&self) -> $table {
                match self {
                    $(Self::$variant(c) => $table::$variant(c.clone()),)*
                }
            }
        }

        /// A bare name (or alias) or the table form.
        impl ::schemars::JsonSchema for $config {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                stringify!($config).into()
            }
            fn json_schema(generator: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
                let mut names = Self::names();
                names.extend($setting.aliases.iter().map(|(alias, _)| *alias));
                let table = generator.subschema_for::<$table>();
                ::schemars::json_schema!({
                    "description": $setting.description,
                    "anyOf": [{ "type": "string", "enum": names }, table]
                })
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Gain {
        gain: f64,
    }

    const SETTING: Setting = Setting {
        noun: "shape",
        aliases: &[("g", "gain")],
        description: "",
        not_name_or_table: |allowed, _| format!("expected one of {allowed}"),
        kind_not_a_name: |_, found| format!("found {found}"),
        bad_param: |kind, message| format!("{kind}: {message}"),
    };

    fn parse(value: Value) -> Result<Gain, (String, String)> {
        super::parse(value, &SETTING, &["gain", "flat"], |kind, table| {
            assert_eq!(kind, "gain");
            params(table)
        })
    }

    #[test]
    fn errors_name_the_key_at_fault_and_what_is_allowed() {
        assert_eq!(parse(json!({ "kind": "g", "gain": 2.0 })), Ok(Gain { gain: 2.0 }));
        assert_eq!(parse(json!(5)), Err((String::new(), "expected one of gain, flat".into())));
        assert_eq!(parse(json!({ "kind": 5 })), Err(("kind".into(), "found 5".into())));
        assert_eq!(parse(json!({ "gain": 1.0 })), Err(("kind".into(), "missing; allowed: gain, flat".into())));
        assert_eq!(parse(json!("ramp")), Err((String::new(), "unknown shape \"ramp\"; allowed: gain, flat".into())));
        assert_eq!(parse(json!({ "kind": "ramp" })).unwrap_err().0, "kind");
        let (key, message) = parse(json!({ "kind": "gain", "gain": "x" })).unwrap_err();
        assert_eq!(key, "gain");
        assert!(message.starts_with("gain: invalid type: string \"x\""), "{message}");
        assert_eq!(parse(json!("gain")).unwrap_err(), (String::new(), "gain: missing field `gain`".into()));
    }

    #[derive(Default, Serialize)]
    struct Defaults {
        beta: f64,
        mode: &'static str,
    }

    #[test]
    fn catalog_defaults_come_from_the_struct() {
        let docs = [ParamDoc { name: "beta", unit: "", doc: "b" }, ParamDoc { name: "mode", unit: "", doc: "m" }];
        let info = info::<Defaults>("d", "s", &docs);
        let defaults: Vec<&str> = info.params.iter().map(|p| p.default.as_str()).collect();
        assert_eq!(defaults, ["0.0", ""]);
    }
}
