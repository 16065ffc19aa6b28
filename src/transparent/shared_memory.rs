//! Whether other processes may use a ring: its `struct io_uring`, or the
//! memory the application gave `io_uring_queue_init_mem`, lies in a mapping
//! shared with them (`MAP_SHARED`, SysV or POSIX shared memory). The kernel
//! shows every such mapping with `s` in the permissions column of
//! `/proc/PID/maps` (`rw-s`; SysV segments as `/SYSV...`, POSIX objects as
//! `/dev/shm/...`), and every private one with `p`.
//!
//! Read once per ring setup under RSURING_SQPOLL=1, only for a ring that
//! the cheaper conditions let through; never on a submit.

/// Whether a byte of any of `ranges` (address, length; a length of 0 counts
/// as 1) lies in a shared mapping of the `/proc/PID/maps` text `maps`.
pub fn in_shared_mapping(maps: &str, ranges: &[(usize, usize)]) -> bool {
    maps.lines().filter_map(shared_range).any(|(start, end)| {
        ranges.iter().any(|&(at, len)| {
            let last = at.saturating_add(len.max(1));
            at < end && last > start
        })
    })
}

/// The address range of a maps line whose mapping is shared, if it is.
fn shared_range(line: &str) -> Option<(usize, usize)> {
    let mut words = line.split_ascii_whitespace();
    let (start, end) = words.next()?.split_once('-')?;
    let perms = words.next()?;
    if perms.as_bytes().get(3) != Some(&b's') {
        return None;
    }
    let start = usize::from_str_radix(start, 16).ok()?;
    let end = usize::from_str_radix(end, 16).ok()?;
    Some((start, end))
}

/// Whether a byte of `ranges` lies in memory this process shares with
/// others; None when `/proc/self/maps` cannot be read (no /proc).
pub fn shared(ranges: &[(usize, usize)]) -> Option<bool> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    Some(in_shared_mapping(&maps, ranges))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
55d0c0a00000-55d0c0a21000 rw-p 00000000 00:00 0                          [heap]
7f0000000000-7f0000100000 rw-s 00000000 00:01 2050                       /dev/zero (deleted)
7f0000200000-7f0000300000 rw-s 00000000 00:01 7                          /SYSV00000000 (deleted)
7f0000400000-7f0000500000 rw-s 00000000 00:19 11                         /dev/shm/db (deleted)
7f0000600000-7f0000601000 rw-p 00000000 00:00 0 
7f0000700000-7f0000708000 rw-s 00000000 00:0f 3111                       anon_inode:[io_uring]
7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]
garbage line
";

    #[test]
    fn shared_mappings_of_every_kind_are_found() {
        for at in [0x7f00_0000_0000, 0x7f00_0020_0000, 0x7f00_004f_ffff] {
            assert!(in_shared_mapping(MAPS, &[(at, 216)]), "{at:#x}");
        }
    }

    #[test]
    fn private_memory_and_gaps_are_not_shared() {
        for at in [
            0x55d0_c0a0_0100,
            0x7f00_0060_0000,
            0x7ffc_0000_1000,
            0x7f00_0010_0000,
        ] {
            assert!(!in_shared_mapping(MAPS, &[(at, 216)]), "{at:#x}");
        }
        assert!(!in_shared_mapping("", &[(0x1000, 8)]));
    }

    #[test]
    fn a_range_that_reaches_into_a_shared_mapping_is_shared() {
        // Ends in the first byte of the SysV segment.
        assert!(in_shared_mapping(MAPS, &[(0x7f00_001f_fff0, 0x11)]));
        assert!(!in_shared_mapping(MAPS, &[(0x7f00_001f_fff0, 0x10)]));
        // Any range of several.
        assert!(in_shared_mapping(MAPS, &[(0x10, 8), (0x7f00_0040_0000, 0)]));
        // No overflow at the top of the address space.
        assert!(!in_shared_mapping(MAPS, &[(usize::MAX, usize::MAX)]));
    }

    #[test]
    fn this_process_tells_its_shared_memory_from_its_private_memory() {
        let len = 4096;
        // SAFETY: a new anonymous mapping, unmapped below; no pointer into
        // it outlives the test.
        let map = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(map, libc::MAP_FAILED);
        let on_heap = Box::new([0u8; 216]);
        let on_stack = [0u8; 216];
        assert_eq!(shared(&[(map as usize + 100, 216)]), Some(true));
        assert_eq!(shared(&[(on_heap.as_ptr() as usize, 216)]), Some(false));
        assert_eq!(shared(&[(on_stack.as_ptr() as usize, 216)]), Some(false));
        // SAFETY: the mapping made above, not used after this.
        assert_eq!(unsafe { libc::munmap(map, len) }, 0);
    }
}
