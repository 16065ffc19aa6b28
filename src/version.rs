//! The liburing API version this library implements (2.15), and
//! liburing's version check.

use core::ffi::c_int;

/// Major version of the liburing API this library implements.
pub const MAJOR: c_int = 2;
/// Minor version of the liburing API this library implements.
pub const MINOR: c_int = 15;

/// `io_uring_check_version`: true when this library is OLDER than
/// `major.minor` (liburing's meaning: "the check fails").
pub fn older_than(major: c_int, minor: c_int) -> bool {
    major > MAJOR || (major == MAJOR && minor > MINOR)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_later_versions_fail_the_check() {
        assert!(!older_than(MAJOR, MINOR));
        assert!(!older_than(MAJOR, MINOR - 1));
        assert!(!older_than(1, 99));
        assert!(older_than(MAJOR, MINOR + 1));
        assert!(older_than(MAJOR + 1, 0));
        assert!(!older_than(-1, -1));
    }
}
