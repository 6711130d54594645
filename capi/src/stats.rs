//! `PTXJIT_STATS=FILE`: when the process exits, it appends one line of ptxjit's totals
//! (`ptxjit::stats`) to FILE, so that a test runner's worker processes each add theirs:
//!
//! `pid=4242 compiles=310 compile_s=1.204113 hot_compiles=2 hot_compile_s=0.031207 launches=2875 launch_s=9.870554`
//!
//! Launch time includes hot compiles. Armed by the first call into the library that compiles
//! or launches (`ptx_run`, `cuInit`).

use std::io::Write;
use std::sync::Once;

pub fn arm() {
    static ARMED: Once = Once::new();
    ARMED.call_once(|| {
        if std::env::var_os("PTXJIT_STATS").is_some() {
            // SAFETY: `report` is an `extern "C" fn()` that does not unwind.
            unsafe { libc::atexit(report) };
        }
    });
}

fn line() -> String {
    let t = ptxjit::stats::totals();
    format!(
        "pid={} compiles={} compile_s={:.6} hot_compiles={} hot_compile_s={:.6} launches={} launch_s={:.6}\n",
        std::process::id(),
        t.compiles.count,
        t.compiles.time.as_secs_f64(),
        t.hot_compiles.count,
        t.hot_compiles.time.as_secs_f64(),
        t.launches.count,
        t.launches.time.as_secs_f64(),
    )
}

extern "C" fn report() {
    let _ = std::panic::catch_unwind(|| {
        let Some(path) = std::env::var_os("PTXJIT_STATS") else {
            return;
        };
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path);
        // One write per line, so that lines from processes exiting together do not mix.
        if let Ok(mut f) = file {
            let _ = f.write_all(line().as_bytes());
        }
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_line_names_every_total() {
        let line = super::line();
        for key in [
            "pid=",
            " compiles=",
            " compile_s=",
            " hot_compiles=",
            " launches=",
            " launch_s=",
        ] {
            assert!(line.contains(key), "{key} in {line}");
        }
        assert!(line.ends_with('\n'));
    }
}
