//! The advice of an analysis: the advice crate's findings ([`warpscope_advice::diagnose`])
//! for each row's costliest warp on each compute capability, merged into one [`Advice`] per
//! source line and cause. Accesses of one line that share a cause (an unrolled loop's copies
//! of one load, `s[i] += s[i + k]`'s two loads and its store) are one advice naming the rows
//! it covers (`×N`). Where the words differ by compute capability (a bank count, a padding),
//! the advice gives each group of compute capabilities its own words, so no compute
//! capability is described by another's figures.

use std::mem::Discriminant;

use warpscope_advice::{diagnose, neutral_verbs, weight, Cause, SiteFacts};
use warpscope_model::arch::all;
use warpscope_model::{cost, Arch, Config, Op, WarpAccess};

use crate::explain::{Advice, CcWords, FixOutcome};

/// One finding for one row on one compute capability, before merging.
pub(crate) struct Found {
    /// The analysis row (the table's `#`).
    row: usize,
    /// Position of the compute capability in the analysis's list.
    arch_pos: usize,
    cc: String,
    /// The cause's kind, and how many findings of that kind came before it on this compute
    /// capability (a second fix for one cause, such as `__ldg` after reordering).
    key: (Discriminant<Cause>, usize),
    /// Its place among the findings of its row on this compute capability (0: first).
    position: usize,
    cause: Cause,
    why: String,
    fix: String,
    /// The warp's cost before the fix, in its space's unit ([`weight`]).
    weight: u64,
    /// Load, store or atomic.
    op: Op,
    outcome: FixOutcome,
}

/// Diagnoses row `row` (described by `facts`) from its costliest warp on each compute
/// capability (`worst`, in the analysis's order) and costs each fix before and after.
pub(crate) fn findings(
    row: usize,
    facts: &SiteFacts,
    config: &Config,
    worst: &[(&Arch, WarpAccess)],
) -> Vec<Found> {
    let mut out: Vec<Found> = Vec::new();
    for (arch_pos, (arch, a)) in worst.iter().enumerate() {
        let before = cost(arch, config, a);
        let mut seen: Vec<Discriminant<Cause>> = Vec::new();
        for (position, f) in diagnose(facts, arch, config, a).into_iter().enumerate() {
            let kind = std::mem::discriminant(&f.cause);
            let rank = seen.iter().filter(|k| **k == kind).count();
            seen.push(kind);
            let fixed_config = f.fixed_config.unwrap_or(*config);
            out.push(Found {
                row,
                arch_pos,
                cc: arch.cc.to_string(),
                key: (kind, rank),
                position,
                cause: f.cause,
                why: f.why,
                fix: f.fix,
                weight: weight(&before, a.space),
                op: a.op,
                outcome: FixOutcome {
                    cc: arch.cc.to_string(),
                    before: before.into(),
                    after: f
                        .fixed
                        .as_ref()
                        .map(|x| cost(arch, &fixed_config, x).into()),
                },
            });
        }
    }
    out
}

/// Diagnoses one access on each compute capability from its representative warp there:
/// one [`Advice`] per cause, with the fix costed before and after on every compute
/// capability where it was found (no rows: for `explain`'s one access).
pub fn advise(facts: &SiteFacts, config: &Config, worst: &[(&Arch, WarpAccess)]) -> Vec<Advice> {
    let mut out = merge(findings(0, facts, config, worst));
    for a in &mut out {
        a.rows.clear();
    }
    out
}

/// Merges the findings of the rows of one source line: one [`Advice`] per cause (and rank),
/// in the order the advice crate gives them (the least place a cause has in any row's
/// findings; then first found). On each compute capability the first row with the cause
/// gives the words and the costliest row the figures (the first on a tie); the words are
/// composed per group of compute capabilities where they differ ([`by_cc`]).
pub(crate) fn merge(found: Vec<Found>) -> Vec<Advice> {
    let mut keys: Vec<(Discriminant<Cause>, usize)> = Vec::new();
    for f in &found {
        if !keys.contains(&f.key) {
            keys.push(f.key);
        }
    }
    // The order the advice crate gives (3.x's 8-byte banks before a rewrite, after it when
    // it only helps on top of it), first found first among equals.
    let first_position = |k: &(Discriminant<Cause>, usize)| {
        found
            .iter()
            .filter(|f| f.key == *k)
            .map(|f| f.position)
            .min()
    };
    keys.sort_by_key(first_position);
    keys.into_iter()
        .filter_map(|key| {
            let of_key: Vec<&Found> = found.iter().filter(|f| f.key == key).collect();
            let mut rows: Vec<usize> = of_key.iter().map(|f| f.row).collect();
            rows.sort_unstable();
            rows.dedup();
            // Per compute capability: the words of the first row that has the cause there
            // (so that the words come from one access wherever they can), the figures of
            // the costliest row (the first on a tie).
            let mut chosen: Vec<(&Found, &Found)> = Vec::new();
            for &f in &of_key {
                match chosen.iter_mut().find(|c| c.0.arch_pos == f.arch_pos) {
                    Some(c) if f.weight > c.1.weight => c.1 = f,
                    Some(_) => {}
                    None => chosen.push((f, f)),
                }
            }
            chosen.sort_by_key(|c| c.0.arch_pos);
            let (first, _) = chosen.first()?;
            // Words for one direction do not describe a line that reads and writes.
            let mixed = of_key.iter().any(|f| f.op != of_key[0].op);
            let words = |text: &str| {
                if mixed {
                    neutral_verbs(text)
                } else {
                    text.to_string()
                }
            };
            let why: Vec<(&str, String)> = chosen
                .iter()
                .map(|(w, _)| (w.cc.as_str(), words(&w.why)))
                .collect();
            let fix: Vec<(&str, String)> = chosen
                .iter()
                .map(|(w, _)| (w.cc.as_str(), words(&w.fix)))
                .collect();
            let why = by_cc(why.iter().map(|(cc, t)| (*cc, t.as_str())));
            let fix = by_cc(fix.iter().map(|(cc, t)| (*cc, t.as_str())));
            Some(Advice {
                cause: first.cause,
                why: joined(&why),
                why_by_cc: if why.len() > 1 { why } else { Vec::new() },
                fix: joined(&fix),
                fix_by_cc: if fix.len() > 1 { fix } else { Vec::new() },
                outcomes: chosen.iter().map(|(_, f)| f.outcome.clone()).collect(),
                rows,
            })
        })
        .collect()
}

/// Each distinct text once, with the compute capabilities it is for, in the order first
/// met.
pub(crate) fn by_cc<'a>(texts: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<CcWords> {
    let mut groups: Vec<CcWords> = Vec::new();
    for (cc, text) in texts {
        match groups.iter_mut().find(|g| g.text == text) {
            Some(g) => g.ccs.push(cc.to_string()),
            None => groups.push(CcWords {
                ccs: vec![cc.to_string()],
                text: text.to_string(),
            }),
        }
    }
    groups
}

/// One text when every compute capability has the same; else each after the compute
/// capabilities it is for: "on 1.0–1.3: …; on 2.0–12.1: …".
pub(crate) fn joined(groups: &[CcWords]) -> String {
    match groups {
        [one] => one.text.clone(),
        _ => groups
            .iter()
            .map(|g| format!("on {}: {}", cc_list(&g.ccs), g.text))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// Compute capabilities as short as exact: each run of three or more that follow one
/// another in the list of every compute capability warpscope knows
/// ([`warpscope_model::arch::all`]) as "first–last", the others one by one: "1.0–1.3,
/// 2.0", "3.5, 9.0".
pub fn cc_list<S: AsRef<str>>(ccs: &[S]) -> String {
    let known = all();
    let position = |cc: &str| known.iter().position(|a| a.cc.to_string() == cc);
    let mut runs: Vec<Vec<&str>> = Vec::new();
    for cc in ccs.iter().map(AsRef::as_ref) {
        let follows = match (runs.last().and_then(|r| r.last()), position(cc)) {
            (Some(prev), Some(p)) => position(prev) == p.checked_sub(1),
            _ => false,
        };
        match runs.last_mut() {
            Some(run) if follows => run.push(cc),
            _ => runs.push(vec![cc]),
        }
    }
    runs.iter()
        .map(|run| match run.as_slice() {
            [a, .., b] if run.len() >= 3 => format!("{a}–{b}"),
            _ => run.join(", "),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cc_lists_name_runs_of_known_ccs_only() {
        let every: Vec<String> = all().iter().map(|a| a.cc.to_string()).collect();
        let every: Vec<&str> = every.iter().map(String::as_str).collect();
        let first = every[0];
        let last = every[every.len() - 1];
        assert_eq!(cc_list(&every), format!("{first}–{last}"));
        // Neighbours in the analysis's list but not among all CCs: no range.
        assert_eq!(cc_list(&["1.3", "9.0"]), "1.3, 9.0");
        assert_eq!(
            cc_list(&["1.0", "1.1", "1.2", "1.3", "3.5"]),
            "1.0–1.3, 3.5"
        );
        assert_eq!(cc_list(&["2.0", "2.1"]), "2.0, 2.1");
    }

    #[test]
    fn texts_that_differ_by_cc_name_their_ccs() {
        let same = by_cc([("1.3", "a"), ("9.0", "a")].into_iter());
        assert_eq!((same.len(), joined(&same).as_str()), (1, "a"));
        let texts = [
            ("1.0", "16 banks"),
            ("1.1", "16 banks"),
            ("1.2", "16 banks"),
            ("2.0", "32 banks"),
            ("9.0", "32 banks"),
        ];
        assert_eq!(
            joined(&by_cc(texts.into_iter())),
            "on 1.0–1.2: 16 banks; on 2.0, 9.0: 32 banks"
        );
    }
}
