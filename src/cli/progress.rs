//! What a long launch says on standard error while it runs: a progress bar (blocks done of
//! total, time left) once the run has taken a second, on a terminal only; and, for a launch
//! estimated from its first blocks to take more than half a minute, a note saying so and
//! suggesting a smaller grid. `--quiet` turns both off.

use indicatif::{HumanCount, HumanDuration, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;
use warpscope::Progress;

/// How often the counters are read.
const TICK: Duration = Duration::from_millis(100);
/// The bar appears once the run has taken this long.
const SHOW_AFTER: Duration = Duration::from_secs(1);
/// The run time over which a launch is called long (the note).
const LONG_SECS: f64 = 30.0;
/// How long the run goes before its rate is taken for the estimate.
const SAMPLE: Duration = Duration::from_millis(200);

/// Runs `f` with a fresh [`Progress`] (`None` under `--quiet`) while another thread shows it.
pub fn with_progress<T>(f: impl FnOnce(Option<Arc<Progress>>) -> T) -> T {
    if super::quiet() {
        return f(None);
    }
    let progress = Arc::new(Progress::default());
    let (done, stop) = channel::<()>();
    std::thread::scope(|s| {
        let p = progress.clone();
        s.spawn(move || ticker(&p, &stop));
        let r = f(Some(progress));
        drop(done);
        r
    })
}

fn ticker(p: &Progress, stop: &Receiver<()>) {
    let terminal = std::io::stderr().is_terminal();
    let mut bar: Option<ProgressBar> = None;
    let mut estimated = false;
    // Until the run ends (the sender is dropped).
    while let Err(RecvTimeoutError::Timeout) = stop.recv_timeout(TICK) {
        let Some(elapsed) = p.elapsed() else { continue };
        let (done, total) = p.blocks();
        if !estimated && elapsed >= SAMPLE && done > 0 {
            estimated = true;
            if let Some(note) = long_launch_note(p) {
                match &bar {
                    Some(b) => b.suspend(|| eprintln!("{note}")),
                    None => eprintln!("{note}"),
                }
            }
        }
        if terminal && bar.is_none() && elapsed >= SHOW_AFTER && done < total {
            bar = Some(new_bar(total, done, elapsed));
        }
        if let Some(b) = &bar {
            b.set_position(done);
            // Time left at the run's average rate (indicatif's own estimate follows the last
            // few ticks, and jumps).
            if done > 0 {
                let left = elapsed.as_secs_f64() * (total - done.min(total)) as f64 / done as f64;
                b.set_message(human_secs(left));
            }
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}

fn new_bar(total: u64, done: u64, elapsed: Duration) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden())
        .with_elapsed(elapsed)
        .with_position(done);
    let style = ProgressStyle::with_template(
        "{elapsed:>4} [{wide_bar}] {human_pos}/{human_len} blocks, {msg} left",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style.progress_chars("=> "));
    bar.set_message("?");
    bar.set_draw_target(ProgressDrawTarget::stderr());
    bar
}

/// The note for a launch whose first blocks' rate puts the whole over [`LONG_SECS`].
pub fn long_launch_note(p: &Progress) -> Option<String> {
    let secs = p.estimated_total_secs()?;
    if secs <= LONG_SECS {
        return None;
    }
    let (done, total) = p.blocks();
    let steps = p.steps_done.load(std::sync::atomic::Ordering::Relaxed) / done.max(1);
    Some(format!(
        "warpscope: note: this launch has {} blocks; its first {} ran {} warp instructions each, so all of them would take about {}. Run a sample of the blocks with --sample-blocks 1000 (the totals are extrapolated), or stop it with Ctrl-C",
        HumanCount(total),
        HumanCount(done),
        HumanCount(steps),
        human_secs(secs)
    ))
}

/// `secs` in words: "3 minutes", "2 years", or "4.0e9 years" past what a `Duration` holds.
fn human_secs(secs: f64) -> String {
    const YEAR: f64 = 365.25 * 86400.0;
    if secs < 1000.0 * YEAR {
        format!("{}", HumanDuration(Duration::from_secs_f64(secs)))
    } else {
        format!("{:.1e} years", secs / YEAR)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_words() {
        assert_eq!(human_secs(45.0), "45 seconds");
        assert_eq!(human_secs(3.0 * 3600.0), "3 hours");
        assert_eq!(human_secs(4.0e9 * 365.25 * 86400.0), "4.0e9 years");
    }
}
