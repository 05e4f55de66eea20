//! What the numbers were measured on, and the process-level meters they are read from:
//! CPU time (`getrusage`), resident memory (`/proc/self/statm`) and the system-wide
//! monotonic clock.

use std::time::Duration;

/// The machine, as printed above the table.
pub struct Machine {
    pub cpu_model: String,
    pub cores: usize,
    pub memory_gib: f64,
    pub kernel: String,
}

impl Machine {
    pub fn describe() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find_map(|line| line.strip_prefix("model name").and_then(|rest| rest.split_once(':')))
            .map_or_else(|| "unknown CPU".to_owned(), |(_, name)| name.trim().to_owned());
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let memory_kib: f64 = meminfo
            .lines()
            .find_map(|line| line.strip_prefix("MemTotal:"))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse().ok())
            .unwrap_or(0.0);
        Self {
            cpu_model,
            cores: std::thread::available_parallelism().map_or(1, usize::from),
            memory_gib: memory_kib / (1024.0 * 1024.0),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map_or_else(|_| "unknown".to_owned(), |k| k.trim().to_owned()),
        }
    }
}

/// CPU time every process on the machine has used so far (`/proc/stat`, all cores,
/// everything but idle and iowait), to tell how much else ran during a measurement.
pub fn machine_busy() -> Duration {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let Some(cpu) = stat.lines().find(|line| line.starts_with("cpu ")) else { return Duration::ZERO };
    let fields: Vec<u64> = cpu.split_whitespace().skip(1).filter_map(|f| f.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal: count all but idle (3) and iowait (4).
    let busy: u64 = fields.iter().take(8).enumerate().filter(|(i, _)| *i != 3 && *i != 4).map(|(_, v)| v).sum();
    // SAFETY: sysconf has no preconditions.
    let per_second = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).unwrap_or(100).max(1);
    Duration::from_nanos(busy.saturating_mul(1_000_000_000) / per_second)
}

/// CPU time (user + system, all threads) this process has used so far.
pub fn process_cpu() -> Duration {
    // SAFETY: getrusage only writes into the struct we hand it.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut usage) != 0 {
            return Duration::ZERO;
        }
        usage
    };
    timeval(usage.ru_utime) + timeval(usage.ru_stime)
}

fn timeval(tv: libc::timeval) -> Duration {
    Duration::from_secs(u64::try_from(tv.tv_sec).unwrap_or(0))
        + Duration::from_micros(u64::try_from(tv.tv_usec).unwrap_or(0))
}

/// CPU time (user + system) another process has used so far, from `/proc/PID/stat`
/// (clock-tick resolution, 10 ms on Linux).
pub fn child_cpu(pid: u32) -> Duration {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return Duration::ZERO };
    // The command name may contain spaces; the fields we want follow its closing ')'.
    let Some((_, rest)) = stat.rsplit_once(')') else { return Duration::ZERO };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After ')': state is field 3 of the man page, so utime (14) and stime (15) are at 11, 12.
    let ticks: u64 = [11, 12].iter().filter_map(|&i| fields.get(i)?.parse::<u64>().ok()).sum();
    // SAFETY: sysconf has no preconditions.
    let per_second = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).unwrap_or(100).max(1);
    Duration::from_nanos(ticks.saturating_mul(1_000_000_000) / per_second)
}

/// This process's resident set size, in bytes.
pub fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    let page = u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    pages * page
}

/// Hands memory that earlier runs freed back to the OS, so a baseline RSS read next is
/// not padded with heap that the next run would silently reuse.
pub fn release_free_memory() {
    // SAFETY: malloc_trim has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds. Unlike `Instant`, the raw value is comparable across
/// processes on the same machine (Linux keeps one monotonic clock per boot), which is how
/// the tap process and this one agree on when a byte left and when it arrived.
pub fn monotonic_ns() -> u64 {
    // SAFETY: clock_gettime only writes into the struct we hand it.
    let ts = unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
        ts
    };
    u64::try_from(ts.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(ts.tv_nsec).unwrap_or(0)
}

/// Lifts the soft open-files limit to the hard one: 1,000 concurrent streams need more
/// than the usual 1,024 descriptors across this process and the children that inherit it.
pub fn raise_open_files_limit() {
    // SAFETY: getrlimit/setrlimit only read and write the struct we hand them.
    unsafe {
        let mut limit: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}
