//! `cargo bench`: the same report as `ptxjit bench` (`-- --quick` for the short run).

#[path = "../src/bench.rs"]
mod bench;

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    // `-- --only compute,features`: just those groups.
    let args: Vec<String> = std::env::args().collect();
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(|g| g.split(',').map(String::from).collect())
        .unwrap_or_default();
    bench::print_report(&bench::Options { quick, only });
}
