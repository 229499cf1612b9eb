//! What the readers of CI files need of a YAML tree (yaml-rust2's [`Yaml`]): a
//! mapping's value by key with YAML's merge keys (`<<: *defaults`, CircleCI's and
//! GitLab's habit) applied, scalars as the text they were written as, a list or a
//! lone scalar as a list, and a script (a string, or a list of strings, nested lists
//! flattened: GitLab's `- *setup` anchors).

use yaml_rust2::Yaml;
use yaml_rust2::yaml::Hash;

/// The documents of `text`, or the parser's message.
pub fn parse(text: &str) -> Result<Vec<Yaml>, String> {
    yaml_rust2::YamlLoader::load_from_str(text).map_err(|error| error.to_string())
}

/// The first document of `text` (an empty file is an empty mapping).
pub fn parse_first(text: &str) -> Result<Yaml, String> {
    Ok(parse(text)?.into_iter().next().unwrap_or(Yaml::Hash(Hash::new())))
}

/// The value of `key` in a mapping, or in what its merge keys (`<<`) bring; `None`
/// for anything else.
pub fn get<'a>(node: &'a Yaml, key: &str) -> Option<&'a Yaml> {
    let Yaml::Hash(hash) = node else { return None };
    if let Some(value) = hash.get(&Yaml::String(key.to_string())) {
        return Some(value);
    }
    match hash.get(&Yaml::String("<<".to_string()))? {
        merged @ Yaml::Hash(_) => get(merged, key),
        Yaml::Array(merged) => merged.iter().find_map(|merged| get(merged, key)),
        _ => None,
    }
}

/// The entries of a mapping, its merge keys' entries after its own (own keys win),
/// keys as text; empty for anything else.
pub fn entries(node: &Yaml) -> Vec<(String, &Yaml)> {
    let Yaml::Hash(hash) = node else { return Vec::new() };
    let mut found: Vec<(String, &Yaml)> = Vec::new();
    let mut merged: Vec<&Yaml> = Vec::new();
    for (key, value) in hash {
        match scalar(key) {
            Some(key) if key == "<<" => match value {
                Yaml::Array(items) => merged.extend(items.iter()),
                other => merged.push(other),
            },
            Some(key) => found.push((key, value)),
            None => {}
        }
    }
    for node in merged {
        for (key, value) in entries(node) {
            if !found.iter().any(|(known, _)| *known == key) {
                found.push((key, value));
            }
        }
    }
    found
}

/// A scalar as written (`3.10` stays `3.10`: yaml-rust2 keeps a float's text); `None`
/// for a list, a mapping or null.
pub fn scalar(node: &Yaml) -> Option<String> {
    match node {
        Yaml::String(text) | Yaml::Real(text) => Some(text.clone()),
        Yaml::Integer(number) => Some(number.to_string()),
        Yaml::Boolean(value) => Some(value.to_string()),
        _ => None,
    }
}

/// The scalars of a list, or a lone scalar as a list of one.
pub fn scalars(node: &Yaml) -> Vec<String> {
    match node {
        Yaml::Array(items) => items.iter().filter_map(scalar).collect(),
        other => scalar(other).into_iter().collect(),
    }
}

/// The items of a list, or a lone value as a list of one (nothing for null).
pub fn items(node: &Yaml) -> Vec<&Yaml> {
    match node {
        Yaml::Array(items) => items.iter().collect(),
        Yaml::Null | Yaml::BadValue => Vec::new(),
        other => vec![other],
    }
}

/// The commands of a script: a string (its lines), or a list of them, nested lists
/// flattened; other items (a mapping) are skipped.
pub fn script(node: &Yaml) -> Vec<String> {
    match node {
        Yaml::Array(items) => items.iter().flat_map(script).collect(),
        other => scalar(other).into_iter().collect(),
    }
}

/// `name: value` pairs of a mapping whose values are scalars (an environment block).
pub fn scalar_entries(node: &Yaml) -> Vec<(String, String)> {
    entries(node).into_iter().filter_map(|(key, value)| Some((key, scalar(value)?))).collect()
}
