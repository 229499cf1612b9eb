//! A job's output, read with a bound: the code under test can print without end
//! (150 MB of output once took 640 MB of memory and a 300 MB log), so what is kept of
//! each step is bounded while every marker line of the run is kept.
//!
//! Each step (the text between two of this run's markers, see [`super::script`]) keeps
//! its first `head_bytes` and its last `tail_bytes`; what lies between is replaced by
//! one line saying how many bytes were cut. A marker line is never cut, so the steps
//! and their exit codes are read as from the whole output; test runners' summaries
//! come at a step's end, which the tail keeps. A line longer than the head is cut
//! like any other text.

use std::collections::VecDeque;

use super::script::MARKER_PREFIX;

/// The note that replaces what was cut from a step.
pub fn cut_note(bytes: u64) -> String {
    format!("[swe-harvest: {bytes} bytes of this step's output were cut here]\n")
}

/// Collects a job's output chunk by chunk, within bounds.
#[derive(Debug)]
pub struct BoundedOutput {
    /// `@@swe-harvest <token> `: lines that start with it are this run's markers.
    marker: Vec<u8>,
    head_bytes: usize,
    tail_bytes: usize,
    kept: Vec<u8>,
    /// Bytes of the current step kept in `kept` so far.
    step_head: usize,
    /// The last bytes of the current step past its head.
    tail: VecDeque<u8>,
    /// Bytes of the current step that fell out of the tail.
    step_cut: u64,
    /// Bytes cut in all steps.
    cut: u64,
    /// The current line, until its end comes.
    line: Vec<u8>,
}

impl BoundedOutput {
    pub fn new(token: &str, head_bytes: usize, tail_bytes: usize) -> BoundedOutput {
        BoundedOutput {
            marker: format!("{MARKER_PREFIX} {token} ").into_bytes(),
            head_bytes,
            tail_bytes,
            kept: Vec::new(),
            step_head: 0,
            tail: VecDeque::new(),
            step_cut: 0,
            cut: 0,
            line: Vec::new(),
        }
    }

    /// Adds a chunk of output.
    pub fn push(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            match memchr::memchr(b'\n', bytes) {
                Some(end) => {
                    self.line.extend_from_slice(&bytes[..=end]);
                    bytes = &bytes[end + 1..];
                    let line = std::mem::take(&mut self.line);
                    self.take_line(&line);
                }
                None => {
                    self.line.extend_from_slice(bytes);
                    bytes = &[];
                    // A line without end can be long: past the head it is only text.
                    if self.line.len() > self.head_bytes.max(self.marker.len() + 64) {
                        let line = std::mem::take(&mut self.line);
                        self.take_text(&line);
                    }
                }
            }
        }
    }

    fn take_line(&mut self, line: &[u8]) {
        if line.starts_with(&self.marker) {
            self.end_step();
            self.kept.extend_from_slice(line);
        } else {
            self.take_text(line);
        }
    }

    fn take_text(&mut self, text: &[u8]) {
        let room = self.head_bytes.saturating_sub(self.step_head);
        let (head, rest) = text.split_at(room.min(text.len()));
        self.kept.extend_from_slice(head);
        self.step_head += head.len();
        self.tail.extend(rest);
        let over = self.tail.len().saturating_sub(self.tail_bytes);
        if over > 0 {
            self.tail.drain(..over);
            self.step_cut += over as u64;
        }
    }

    /// Closes the current step: its tail follows its head, with a note of the cut.
    fn end_step(&mut self) {
        if self.step_cut > 0 {
            if self.kept.last().is_some_and(|byte| *byte != b'\n') {
                self.kept.push(b'\n');
            }
            self.kept.extend_from_slice(cut_note(self.step_cut).as_bytes());
            self.cut += self.step_cut;
        }
        self.kept.extend(self.tail.drain(..));
        self.step_head = 0;
        self.step_cut = 0;
    }

    /// The output kept, and how many bytes were cut.
    pub fn finish(mut self) -> (String, u64) {
        let line = std::mem::take(&mut self.line);
        self.take_line(&line);
        self.end_step();
        (String::from_utf8_lossy(&self.kept).into_owned(), self.cut)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::script::split_steps;

    fn collect(chunks: &[&[u8]], head: usize, tail: usize) -> (String, u64) {
        let mut output = BoundedOutput::new("tok", head, tail);
        for chunk in chunks {
            output.push(chunk);
        }
        output.finish()
    }

    #[test]
    fn small_output_is_kept_whole() {
        let log = "@@swe-harvest tok pre begin\nline\n@@swe-harvest tok pre end 0\nafter";
        assert_eq!(collect(&[log.as_bytes()], 100, 100), (log.to_string(), 0));
    }

    #[test]
    fn a_flood_keeps_every_marker_and_each_steps_head_and_tail() {
        let mut log = String::from("@@swe-harvest tok install begin\nok\n@@swe-harvest tok install end 0\n");
        log.push_str("@@swe-harvest tok pre begin\ncollected 3 items\n");
        for index in 0..100_000 {
            log.push_str(&format!("noise {index}\n"));
        }
        log.push_str("=== short test summary info ===\nFAILED t.py::a\n@@swe-harvest tok pre end 1\n");
        log.push_str("@@swe-harvest tok post begin\nPASSED t.py::a\n@@swe-harvest tok post end 0\n");
        // Fed in odd-sized chunks, as a stream arrives.
        let chunks: Vec<&[u8]> = log.as_bytes().chunks(4093).collect();
        let (kept, cut) = collect(&chunks, 1000, 2000);
        assert!(kept.len() < 4000, "{} bytes kept", kept.len());
        // Everything is either kept or counted as cut (a newline may close a head cut mid-line).
        let accounted = cut as usize + kept.len() - cut_note(cut).len();
        assert!(accounted.abs_diff(log.len()) <= 1, "{accounted} bytes accounted for of {}", log.len());
        let steps = split_steps(&kept, "tok");
        assert_eq!(steps["install"].exit_code, Some(0));
        assert_eq!(steps["pre"].exit_code, Some(1));
        assert_eq!(steps["post"].exit_code, Some(0));
        assert!(steps["pre"].text.starts_with("collected 3 items\nnoise 0\n"), "the head stays");
        assert!(steps["pre"].text.contains(&cut_note(cut)), "the cut is said");
        assert!(steps["pre"].text.ends_with("FAILED t.py::a\n"), "the summary at the end stays");
        assert_eq!(steps["post"].text, "PASSED t.py::a\n");
    }

    #[test]
    fn a_forged_marker_of_another_token_is_cut_like_text() {
        let mut log = String::from("@@swe-harvest tok pre begin\n");
        for _ in 0..1000 {
            log.push_str("@@swe-harvest forged pre end 0\n");
        }
        log.push_str("@@swe-harvest tok pre end 1\n");
        let (kept, cut) = collect(&[log.as_bytes()], 100, 100);
        assert!(cut > 0 && kept.len() < 400, "{kept}");
        assert_eq!(split_steps(&kept, "tok")["pre"].exit_code, Some(1));
    }

    #[test]
    fn one_endless_line_is_bounded_too() {
        let mut output = BoundedOutput::new("tok", 64, 64);
        output.push(b"@@swe-harvest tok pre begin\n");
        for _ in 0..1000 {
            output.push(&[b'x'; 1000]);
        }
        output.push(b"\n@@swe-harvest tok pre end 0\n");
        let (kept, cut) = output.finish();
        assert!(kept.len() < 400, "{} bytes kept", kept.len());
        assert!(cut >= 1_000_000 - 128, "{cut}");
        assert_eq!(split_steps(&kept, "tok")["pre"].exit_code, Some(0));
    }
}
