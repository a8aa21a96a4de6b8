//! Forking from a test: the child runs a closure, reports words through a pipe and leaves with
//! `_exit`, so it never runs the test harness's exit path; everything it does is inside
//! `catch_unwind`. Shared by the fork test binaries, each of which forks from a single test so no
//! other test thread runs while the process forks.
#![allow(dead_code)]

use rimeflake::admin::{inspect, StateHealth};
use std::path::Path;

/// Forks; the child runs `child` (its words go to the parent through a pipe) and `_exit`s.
/// Returns what the child wrote and its exit status.
pub fn fork_with(child: impl FnOnce() -> Vec<u64>) -> (Vec<u64>, i32) {
    // SAFETY: see the module docs.
    fork_by(|| unsafe { libc::fork() }, child)
}

/// `fork(2)` through the system call itself, as a raw `clone` in a runtime does: glibc's
/// `fork()` and so every at-fork handler is skipped.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub fn raw_fork() -> libc::pid_t {
    // SAFETY: clone with only SIGCHLD and no new stack is fork; the child runs our code only.
    (unsafe { libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_long, 0, 0, 0, 0) })
        as libc::pid_t
}

/// [`fork_with`], forking with `fork`.
pub fn fork_by(
    fork: impl FnOnce() -> libc::pid_t,
    child: impl FnOnce() -> Vec<u64>,
) -> (Vec<u64>, i32) {
    let mut fds = [0; 2];
    // SAFETY: a valid array of two descriptors.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe");
    let (read_fd, write_fd) = (fds[0], fds[1]);
    // The child only runs our code and then `_exit`s.
    let pid = fork();
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: the child's copy of the read end.
        unsafe { libc::close(read_fd) };
        let words = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child));
        let code = match &words {
            Ok(words) => {
                let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
                let mut at = 0;
                while at < bytes.len() {
                    // SAFETY: writing from a live buffer to our pipe.
                    let n = unsafe {
                        libc::write(write_fd, bytes[at..].as_ptr().cast(), bytes.len() - at)
                    };
                    if n <= 0 {
                        break;
                    }
                    at += n as usize;
                }
                if at == bytes.len() {
                    0
                } else {
                    3
                }
            }
            Err(_) => 2,
        };
        // SAFETY: leave without running the harness's (or any) exit handlers.
        unsafe { libc::_exit(code) };
    }
    // SAFETY: the parent's copy of the write end: closed, so EOF comes when the child exits.
    unsafe { libc::close(write_fd) };
    let mut bytes = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        // SAFETY: reading into a live buffer from our pipe.
        let n = unsafe { libc::read(read_fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        bytes.extend_from_slice(&buf[..n as usize]);
    }
    // SAFETY: our descriptor.
    unsafe { libc::close(read_fd) };
    let mut status = 0;
    // SAFETY: waiting for our own child; `status` is a valid out-parameter.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    let words = bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    (words, code)
}

/// The state file's raw bytes and its newest record's current clock-id and reservation, as
/// `state show` reads them (the state directory is the file's grandparent: `dir/namespace/`).
pub fn state_of(path: &Path) -> (Vec<u8>, u64, u64) {
    let bytes = std::fs::read(path).expect("the state file");
    let dir = path
        .parent()
        .and_then(Path::parent)
        .expect("a state directory");
    let info = inspect(dir)
        .expect("inspect")
        .into_iter()
        .find(|i| i.state_path == path)
        .expect("the state file's lease");
    let StateHealth::Ok {
        clock_id, reserved, ..
    } = info.state
    else {
        panic!("a valid record: {:?}", info.state);
    };
    let reserved = reserved[clock_id as usize].expect("a reservation");
    (bytes, clock_id, reserved)
}
