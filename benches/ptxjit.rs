//! `cargo bench`: the same report as `ptxjit bench` (`-- --quick` for the short run).

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    ptxjit::bench::print_report(&ptxjit::bench::Options { quick });
}
