//! The driver: arbtest's random search with a time budget, an input counter, the time and memory
//! bounds every input must meet, and on a failure the input saved and minimised.
//!
//! Why arbtest (on `arbitrary`): it runs on stable Rust in a plain test binary, so the fuzz
//! targets are ordinary `cargo test` tests that CI runs on every push; it is a few hundred lines
//! with one dependency (`arbitrary`, whose `Unstructured` drives our structure-aware generators);
//! it takes a wall-clock budget and reproduces a failure from one printed seed. proptest brings a
//! strategy framework and shrinking per value type that we do not need (our generators are
//! grammar and corpus mutators over bytes), bolero's stable mode is a wrapper over the same idea
//! with a larger tree, and neither is coverage-guided on stable either.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use arbitrary::Unstructured;

/// Counts the bytes allocated by each thread, and their peak since the last reset.
pub struct Counting;

thread_local! {
    static CURRENT: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

fn grow(n: usize) {
    let _ = CURRENT.try_with(|c| {
        let v = c.get().saturating_add(n);
        c.set(v);
        let _ = PEAK.try_with(|p| {
            if v > p.get() {
                p.set(v)
            }
        });
    });
}

fn shrink(n: usize) {
    let _ = CURRENT.try_with(|c| c.set(c.get().saturating_sub(n)));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grow(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grow(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        shrink(layout.size());
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            shrink(layout.size());
            grow(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// This thread's CPU time: unlike wall time it does not grow while the machine runs others.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out pointer; CLOCK_THREAD_CPUTIME_ID exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Runs `f`, returning its CPU time and the peak of bytes it held above what was held before.
pub fn measure(f: impl FnOnce()) -> (Duration, usize) {
    let base = CURRENT.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let t = thread_cpu();
    f();
    let spent = thread_cpu().saturating_sub(t);
    let peak = PEAK.with(Cell::get).saturating_sub(base);
    (spent, peak)
}

fn env_f64(name: &str) -> Option<f64> {
    std::env::var(name).ok()?.trim().parse().ok()
}

/// Seconds per target: `FUZZ_SECONDS` (benches/fuzz.sh, .ci/run), else 2.
pub fn budget() -> Duration {
    Duration::from_secs_f64(env_f64("FUZZ_SECONDS").unwrap_or(2.0).max(0.0))
}

/// No input may take longer than this to parse and refuse: `FUZZ_TIME_BOUND_MS`, which
/// benches/fuzz.sh sets to 50 for its optimised build; 250 by default, for the unoptimised test
/// build `cargo test` makes (about five times slower).
pub fn time_bound() -> Duration {
    Duration::from_secs_f64(env_f64("FUZZ_TIME_BOUND_MS").unwrap_or(250.0) / 1000.0)
}

/// ... nor hold more than this (64 MiB).
pub const MEMORY_BOUND: usize = 64 << 20;

/// The largest entropy an input is generated from; the inputs stay a few KiB.
const SIZE_MAX: u32 = 4096;

/// Where failing inputs are saved.
fn crash_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-crashes")
}

fn fails(check: &dyn Fn(&[u8]), input: &[u8]) -> bool {
    catch_unwind(AssertUnwindSafe(|| check(input))).is_err()
}

/// Delta debugging: removes ever smaller chunks while the check still fails.
fn minimise(check: &dyn Fn(&[u8]), input: &[u8]) -> Vec<u8> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let start = Instant::now();
    let mut cur = input.to_vec();
    let mut chunk = cur.len().div_ceil(2).max(1);
    while chunk >= 1 && start.elapsed() < Duration::from_secs(20) {
        let mut i = 0;
        let mut removed = false;
        while i < cur.len() {
            let mut cand = cur.clone();
            cand.drain(i..(i + chunk).min(cur.len()));
            if fails(check, &cand) {
                cur = cand;
                removed = true;
            } else {
                i += chunk;
            }
        }
        if !removed {
            if chunk == 1 {
                break;
            }
            chunk /= 2;
        }
    }
    std::panic::set_hook(hook);
    cur
}

fn save(name: &str, what: &str, input: &[u8]) -> String {
    let dir = crash_dir();
    let _ = std::fs::create_dir_all(&dir);
    let mut h: u64 = 0xcbf29ce484222325;
    for b in input {
        h = (h ^ *b as u64).wrapping_mul(0x100000001b3);
    }
    let path = dir.join(format!("{name}-{what}-{h:016x}"));
    let _ = std::fs::write(&path, input);
    path.display().to_string()
}

/// Runs one input through `check`, enforcing the bounds; on a failure saves the input and its
/// minimised form and panics with both.
pub fn run_one(name: &str, input: &[u8], check: &dyn Fn(&[u8])) {
    let mut panicked = false;
    let (spent, peak) = measure(|| {
        panicked = catch_unwind(AssertUnwindSafe(|| check(input))).is_err();
    });
    if panicked {
        let full = save(name, "crash", input);
        let min = minimise(check, input);
        let small = save(name, "crash-min", &min);
        panic!(
            "fuzz {name}: the property failed (see the panic above) on {full}; minimised to {small}: {:?}",
            String::from_utf8_lossy(&min)
        );
    }
    let bound = time_bound();
    if spent > bound {
        // Once more, to tell a slow input from a descheduled moment.
        let (again, _) = measure(|| check(input));
        if again > bound {
            let full = save(name, "slow", input);
            panic!(
                "fuzz {name}: an input took {again:?} of CPU (bound {bound:?}): {full} ({} bytes)",
                input.len()
            );
        }
    }
    if peak > MEMORY_BOUND {
        let full = save(name, "memory", input);
        panic!(
            "fuzz {name}: an input held {peak} bytes (bound {MEMORY_BOUND}): {full} ({} bytes)",
            input.len()
        );
    }
}

/// One fuzz target: runs `seeds` first (each must meet the property too), then generated inputs
/// until the budget is spent, and reports the count.
pub fn fuzz(
    name: &str,
    seeds: &[Vec<u8>],
    mut make: impl FnMut(&mut Unstructured<'_>) -> arbitrary::Result<Vec<u8>>,
    check: impl Fn(&[u8]),
) {
    fuzz_for(name, seeds, budget(), &mut make, &check)
}

/// [`fuzz`] with its own budget (the targets that drive the binaries take a share).
pub fn fuzz_for(
    name: &str,
    seeds: &[Vec<u8>],
    budget: Duration,
    make: &mut dyn FnMut(&mut Unstructured<'_>) -> arbitrary::Result<Vec<u8>>,
    check: &dyn Fn(&[u8]),
) {
    // Warm-up: lazily built regexes and the like are not the input's cost.
    for s in seeds {
        let _ = catch_unwind(AssertUnwindSafe(|| check(s)));
    }
    let start = Instant::now();
    let mut count: u64 = 0;
    for s in seeds {
        run_one(name, s, check);
        count += 1;
    }
    let reproduce = std::env::var("ARBTEST_SEED").is_ok();
    let remaining = budget.saturating_sub(start.elapsed());
    if !remaining.is_zero() || reproduce {
        arbtest::arbtest(|u| {
            let input = make(u)?;
            run_one(name, &input, check);
            count += 1;
            Ok(())
        })
        .size_max(SIZE_MAX)
        .budget(remaining.max(Duration::from_millis(1)))
        .run();
    }
    report(name, count, start.elapsed());
}

fn report(name: &str, count: u64, elapsed: Duration) {
    let secs = elapsed.as_secs_f64();
    let line = format!(
        "fuzz {name}: {count} inputs in {secs:.1} s ({:.0}/s)",
        count as f64 / secs.max(1e-9)
    );
    eprintln!("{line}");
    if let Ok(path) = std::env::var("FUZZ_REPORT") {
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(f, "{name}\t{count}\t{secs:.3}");
        }
    }
}
