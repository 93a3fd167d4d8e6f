//! Runs a TOML scenario and prints its summary (a debugging aid: `cargo run --example quick -- FILE`).
fn main() {
    let path = std::env::args().nth(1).expect("usage: quick SCENARIO.toml");
    let value: serde_json::Value = toml::from_str(&std::fs::read_to_string(path).expect("readable")).expect("TOML");
    let s = tcplab_sim::resolve(value).unwrap_or_else(|e| panic!("{e}"));
    let out = tcplab_sim::run(s, 1, |_| Ok(())).unwrap_or_else(|e| panic!("{e:?}"));
    println!("{}", serde_json::to_string_pretty(&out.summary).unwrap());
}
