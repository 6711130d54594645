//! C programs (`tests/clients/*.c`, built here with the system `cc`) drive the driver API
//! through `libptxjit_capi.so`.

mod common;

/// End to end on the bundled h2_axpy example.
#[test]
fn a_c_program_runs_a_kernel_through_the_driver_api() {
    common::run_c_client("driver_api");
}

/// Hostile sizes and addresses: error codes, memory unchanged (issue 12).
#[test]
fn hostile_calls_return_errors_and_leave_memory_unchanged() {
    common::run_c_client("hostile_driver");
}

/// CUDA's state rules: cuInit first, a current context, no function of an unloaded module.
#[test]
fn calls_out_of_order_get_the_drivers_errors() {
    common::run_c_client("driver_state");
}

/// cuTensorMapEncodeTiled's map read by cp.async.bulk.tensor, and the driver's rules (issue 14).
#[test]
fn a_c_program_copies_tiles_through_a_tensor_map() {
    common::run_c_client("tensor_map");
}
