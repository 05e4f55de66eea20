//! Reading a child process's output line by line with a cap on each line: a longer line
//! keeps its first `cap` bytes and says how many more it had, and the rest is dropped as
//! it arrives, never buffered. (tokio's `Lines` buffers a line however long it is, so a
//! program that writes without newlines would grow our memory without bound.)

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// One line of output, without its `\n` (or `\r\n`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CappedLine {
    /// The line, or its first `cap` bytes (invalid UTF-8 replaced).
    pub text: String,
    /// How many bytes were cut from its end; 0 when it is whole.
    pub cut: usize,
}

impl CappedLine {
    /// The text, marked when it was cut: `… [cut: 12345 more bytes]`.
    pub fn shown(&self) -> String {
        if self.cut == 0 { self.text.clone() } else { format!("{} … [cut: {} more bytes]", self.text, self.cut) }
    }
}

/// The lines of `reader`, each at most `cap` bytes kept.
pub struct CappedLines<R> {
    reader: BufReader<R>,
    cap: usize,
    /// Past the cap: read on to the end of the line (cut), or stop there (refuse).
    drain: bool,
}

impl<R: AsyncRead + Unpin> CappedLines<R> {
    /// Lines for showing (error output): a longer line is cut, and reading goes on.
    pub fn new(reader: R, cap: usize) -> Self {
        Self { reader: BufReader::new(reader), cap, drain: true }
    }

    /// Lines that are messages (a protocol's output): a line passing the cap is returned
    /// at once with `cut > 0` (how much of it was seen beyond the cap, not its size), and
    /// the caller is expected to stop reading, as the rest of it is never read.
    pub fn refusing(reader: R, cap: usize) -> Self {
        Self { reader: BufReader::new(reader), cap, drain: false }
    }

    /// The next line; `None` at the end of the output (a last line without a newline is
    /// still returned). Not cancel-safe: read it from one task, to the end.
    pub async fn next_line(&mut self) -> std::io::Result<Option<CappedLine>> {
        let mut head: Vec<u8> = Vec::new();
        let mut cut = 0usize;
        let mut started = false;
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                return Ok(started.then(|| line(head, cut)));
            }
            started = true;
            let newline = available.iter().position(|&b| b == b'\n');
            let content = newline.unwrap_or(available.len());
            let keep = content.min(self.cap.saturating_sub(head.len()));
            head.extend_from_slice(&available[..keep]);
            cut += content - keep;
            self.reader.consume(newline.map_or(content, |at| at + 1));
            if newline.is_some() || (cut > 0 && !self.drain) {
                return Ok(Some(line(head, cut)));
            }
        }
    }
}

fn line(mut head: Vec<u8>, cut: usize) -> CappedLine {
    if cut == 0 && head.last() == Some(&b'\r') {
        head.pop();
    }
    CappedLine { text: String::from_utf8_lossy(&head).into_owned(), cut }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn all(input: &[u8], cap: usize) -> Vec<CappedLine> {
        let mut lines = CappedLines::new(input, cap);
        let mut out = Vec::new();
        while let Some(line) = lines.next_line().await.unwrap() {
            out.push(line);
        }
        out
    }

    fn whole(text: &str) -> CappedLine {
        CappedLine { text: text.into(), cut: 0 }
    }

    #[tokio::test]
    async fn audit_14_a_line_over_the_cap_is_cut_and_says_so() {
        let long = "y".repeat(100_000);
        let input = format!("short\r\n{long}\nnext\nlast without newline");
        let lines = all(input.as_bytes(), 10).await;
        assert_eq!(
            lines,
            vec![
                whole("short"),
                CappedLine { text: "yyyyyyyyyy".into(), cut: 99_990 },
                whole("next"),
                CappedLine { text: "last witho".into(), cut: 10 },
            ]
        );
        assert_eq!(lines[1].shown(), "yyyyyyyyyy … [cut: 99990 more bytes]");
        assert_eq!(all(b"", 10).await, vec![]);
        assert_eq!(all(b"\n\n", 10).await, vec![whole(""), whole("")]);

        // A protocol's reader stops at the cap, however long the line would go on.
        let mut refusing = CappedLines::refusing(tokio::io::repeat(b'z'), 10);
        let line = refusing.next_line().await.unwrap().unwrap();
        assert_eq!(line.text, "zzzzzzzzzz");
        assert!(line.cut > 0);
    }
}
