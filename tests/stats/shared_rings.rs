//! Rings that several processes share (`shared.c`): each process's counts
//! are its own, and the sums over the processes are what the kernel posted.

use super::*;

const SQ_ROUNDS: u64 = 250 * 8;
const HISTORY: u64 = 296;
const CQ_ENTRIES: u64 = 16;

/// The lines of one run, from stderr (text) or a JSON file, as maps.
fn lines_of(r: &Run, json: Option<&Path>) -> Vec<HashMap<String, String>> {
    let Some(path) = json else {
        return r.stat_lines();
    };
    let text = fs::read_to_string(path).expect("the JSON file");
    text.lines().map(json_fields).collect()
}

/// A flat JSON object of numbers, strings and nulls as key → value text.
fn json_fields(line: &str) -> HashMap<String, String> {
    let body = line.trim().trim_start_matches('{').trim_end_matches('}');
    let mut out = HashMap::new();
    let mut rest = body;
    while let Some(k_start) = rest.find('"') {
        let k_end = k_start + 1 + rest[k_start + 1..].find('"').expect("key end");
        let key = rest[k_start + 1..k_end].to_string();
        let after = &rest[k_end + 2..];
        let (value, next) = if let Some(v) = after.strip_prefix('"') {
            let end = v.find('"').expect("string end");
            (v[..end].to_string(), &v[end + 1..])
        } else if after.starts_with('{') {
            let end = after.find('}').expect("object end");
            (after[..=end].to_string(), &after[end + 1..])
        } else {
            let end = after.find(',').unwrap_or(after.len());
            (after[..end].to_string(), &after[end..])
        };
        out.insert(key, value);
        rest = next.trim_start_matches(',');
    }
    out
}

fn num(line: &HashMap<String, String>, key: &str) -> u64 {
    get(line, key)
        .parse()
        .unwrap_or_else(|_| panic!("{key} of {line:?}"))
}

/// Checks one run's lines (text or JSON) against the kernel's CqTail.
fn check_run(r: &Run, lines: &[HashMap<String, String>]) {
    let ctx = r.describe();
    let pid = |k: &str| r.field(k);
    for l in lines {
        assert!(
            num(l, "reap_max") <= CQ_ENTRIES,
            "a batch larger than the CQ: {l:?}\n{ctx}"
        );
        assert_eq!(num(l, "cq_entries"), CQ_ENTRIES, "{l:?}");
    }
    for i in 0..3 {
        let fd = r.field(&format!("ring{i}"));
        let tail: u64 = r.field(&format!("cqtail{i}")).parse().expect("cqtail");
        let of_ring: Vec<_> = lines.iter().filter(|l| get(l, "ring") == fd).collect();
        let cqes: u64 = of_ring.iter().map(|l| num(l, "cqes")).sum();
        let sqes: u64 = of_ring.iter().map(|l| num(l, "sqes")).sum();
        assert_eq!(cqes, tail, "ring {i}: the processes' cqes vs CqTail\n{ctx}");
        assert_eq!(sqes, tail, "ring {i}: the processes' sqes vs CqTail\n{ctx}");
        let worker = line_of(lines, &pid(&format!("worker{i}")), &fd, r);
        let extra = if i == 0 { 8 } else { 0 };
        assert_eq!(num(worker, "sqes"), SQ_ROUNDS + extra, "{worker:?}\n{ctx}");
        assert_eq!(num(worker, "cqes"), SQ_ROUNDS, "{worker:?}\n{ctx}");
        assert_eq!(get(worker, "shared"), "yes", "{worker:?}");
    }
    let ring0 = r.field("ring0");
    let parent = line_of(lines, &pid("parent"), &ring0, r);
    assert_eq!(
        (num(parent, "sqes"), num(parent, "cqes")),
        (HISTORY, HISTORY),
        "the parent's own reaps before the fork are the parent's\n{ctx}"
    );
    let reaper = line_of(lines, &pid("reaper"), &ring0, r);
    assert_eq!(
        (num(reaper, "sqes"), num(reaper, "cqes")),
        (0, 8),
        "the reaper reaped what worker 0 submitted\n{ctx}"
    );
    assert!(num(reaper, "reap_max") <= 8, "{reaper:?}");
    assert!(num(reaper, "reap_batches") >= 1, "{reaper:?}");
}

/// A parent with rings in MAP_SHARED memory (io_uring_queue_init_mem),
/// concurrent workers each on its own ring, and a process that reaps
/// another's ring: per ring, the processes' cqes (and sqes) add up to the
/// kernel's CqTail, nobody's batch exceeds the CQ, the reaper counts
/// reaps and no submissions, and the parent keeps its own history. The
/// text lines and the JSON lines say the same.
#[test]
fn shared_rings_count_per_process_and_add_up_to_the_kernels_tail() {
    let bin = build("shared");
    let r = run(&bin, &[], &[("RSURING_STATS", "1")]);
    if !r.expect_pass() {
        return;
    }
    let text = r.stat_lines();
    check_run(&r, &text);
    let dir = tempdir();
    let path = dir.0.join("shared.jsonl");
    let spec = format!("json:{}", path.display());
    let r = run(&bin, &[], &[("RSURING_STATS", &spec)]);
    if !r.expect_pass() {
        return;
    }
    let json = lines_of(&r, Some(&path));
    assert_eq!(json.len(), text.len(), "as many JSON lines as text lines");
    check_run(&r, &json);
}
