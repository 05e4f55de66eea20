//! A decoder for `text/event-stream` bodies, following the WHATWG "server-sent events"
//! parsing rules, fed with network chunks of any size.
//!
//! Chunk boundaries never matter: a line (and so a UTF-8 character) split across chunks,
//! or a CRLF split between its CR and LF, decodes exactly as if it had arrived whole.
//!
//! Memory is bounded: a line, or the data of one event, longer than the decoder's limit
//! ([`FRAME_LIMIT`] unless set) fails the stream with [`FrameTooLarge`] instead of growing
//! without end (a server that never ends a line would otherwise fill the memory).

/// How long a line or one event's data may grow: room for a generated image sent inline.
pub const FRAME_LIMIT: usize = 32 * 1024 * 1024;

/// A line or an event's data outgrew the decoder's limit; the stream cannot go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("an event of the stream is larger than {limit} bytes")]
pub struct FrameTooLarge {
    /// The limit, in bytes.
    pub limit: usize,
}

/// One dispatched event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseFrame {
    /// The `event:` field, if the frame had one.
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
    /// The `id:` field, if the frame had one (not carried over to later frames).
    pub id: Option<String>,
}

/// Incremental decoder: [`SseDecoder::push`] each chunk, then [`SseDecoder::finish`] at EOF.
#[derive(Debug)]
pub struct SseDecoder {
    /// Bytes of the line being read, not yet terminated.
    line: Vec<u8>,
    /// The previous chunk ended in `\r`, so a leading `\n` belongs to that line ending.
    after_cr: bool,
    /// Whether the first line (which may start with a byte-order mark) is still to come.
    at_start: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    id: Option<String>,
    /// How long `line` and `data` may grow.
    limit: usize,
    /// Set once the limit was passed: every later push fails.
    overflowed: bool,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl SseDecoder {
    /// A decoder whose lines and events may hold up to [`FRAME_LIMIT`] bytes.
    pub fn new() -> Self {
        Self::with_limit(FRAME_LIMIT)
    }

    /// A decoder whose lines and events may hold up to `limit` bytes.
    pub fn with_limit(limit: usize) -> Self {
        Self {
            line: Vec::new(),
            after_cr: false,
            at_start: true,
            event: None,
            data: String::new(),
            has_data: false,
            id: None,
            limit,
            overflowed: false,
        }
    }

    /// Feeds one chunk of the body; returns the frames it completed, or
    /// [`FrameTooLarge`] (now and for every later chunk) once a line or an event's data
    /// outgrows the limit. Frames completed earlier in the same chunk go with it: the
    /// stream is broken anyway.
    pub fn push(&mut self, mut bytes: &[u8]) -> Result<Vec<SseFrame>, FrameTooLarge> {
        let mut frames = Vec::new();
        if self.overflowed {
            return Err(self.too_large());
        }
        if bytes.is_empty() {
            return Ok(frames);
        }
        if std::mem::take(&mut self.after_cr) && bytes.first() == Some(&b'\n') {
            bytes = &bytes[1..];
        }
        while let Some(end) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.extend_line(&bytes[..end])?;
            let crlf = bytes[end] == b'\r' && bytes.get(end + 1) == Some(&b'\n');
            if bytes[end] == b'\r' && end + 1 == bytes.len() {
                self.after_cr = true;
            }
            bytes = &bytes[end + if crlf { 2 } else { 1 }..];
            frames.extend(self.end_line());
            if self.data.len() > self.limit {
                return Err(self.too_large());
            }
        }
        self.extend_line(bytes)?;
        Ok(frames)
    }

    fn extend_line(&mut self, bytes: &[u8]) -> Result<(), FrameTooLarge> {
        if self.line.len() + bytes.len() > self.limit {
            return Err(self.too_large());
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    /// Fails this push and every later one; what was buffered is dropped.
    fn too_large(&mut self) -> FrameTooLarge {
        self.overflowed = true;
        self.line = Vec::new();
        self.data = String::new();
        FrameTooLarge { limit: self.limit }
    }

    /// Ends the body: a last frame that lacked its blank line is still dispatched.
    pub fn finish(&mut self) -> Option<SseFrame> {
        if self.overflowed {
            return None;
        }
        if !self.line.is_empty() {
            // A non-empty line never dispatches, so nothing is lost here.
            let _ = self.end_line();
        }
        self.after_cr = false;
        self.dispatch()
    }

    fn end_line(&mut self) -> Option<SseFrame> {
        let raw = std::mem::take(&mut self.line);
        let frame = self.process_line(&raw);
        // Keep the buffer's capacity for the next line.
        self.line = raw;
        self.line.clear();
        frame
    }

    fn process_line(&mut self, raw: &[u8]) -> Option<SseFrame> {
        let mut line = String::from_utf8_lossy(raw);
        if std::mem::take(&mut self.at_start)
            && let Some(rest) = line.strip_prefix('\u{feff}')
        {
            line = rest.to_owned().into();
        }
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (&*line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_owned()),
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            // `retry:` and unknown fields are ignored, as the spec says.
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseFrame> {
        let event = self.event.take();
        let id = self.id.take();
        if !std::mem::take(&mut self.has_data) {
            return None;
        }
        Some(SseFrame { event, data: std::mem::take(&mut self.data), id })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_whole(bytes: &[u8]) -> Vec<SseFrame> {
        let mut decoder = SseDecoder::new();
        let mut frames = decoder.push(bytes).unwrap();
        frames.extend(decoder.finish());
        frames
    }

    fn data(text: &str) -> SseFrame {
        SseFrame { data: text.to_owned(), ..SseFrame::default() }
    }

    #[test]
    fn decodes_lf_and_crlf_frames() {
        let frames = decode_whole(b"data: one\n\ndata: two\r\n\r\ndata: three\r\rdata:four\n\n");
        assert_eq!(frames, vec![data("one"), data("two"), data("three"), data("four")]);
    }

    #[test]
    fn skips_comments_and_joins_multi_line_data() {
        let frames = decode_whole(b": keep-alive\n\n:another\ndata: a\ndata:  b\ndata\n\n");
        assert_eq!(frames, vec![data("a\n b\n")]);
    }

    #[test]
    fn reads_event_and_id_fields_per_frame() {
        let frames = decode_whole(b"event: error\nid: 7\nretry: 100\ndata: {}\n\ndata: x\n\n");
        assert_eq!(frames[0], SseFrame { event: Some("error".into()), data: "{}".into(), id: Some("7".into()) });
        assert_eq!(frames[1], data("x"));
    }

    #[test]
    fn frames_without_data_are_not_dispatched() {
        assert_eq!(decode_whole(b"event: ping\n\nid: 1\n\n\n\n"), vec![]);
        assert_eq!(decode_whole(b"data:\n\n"), vec![data("")]);
    }

    #[test]
    fn a_final_frame_without_its_blank_line_is_dispatched_at_eof() {
        assert_eq!(decode_whole(b"data: a\n\ndata: [DONE]"), vec![data("a"), data("[DONE]")]);
        assert_eq!(decode_whole(b"data: a\n\ndata: [DONE]\n"), vec![data("a"), data("[DONE]")]);
    }

    #[test]
    fn strips_a_leading_byte_order_mark() {
        assert_eq!(decode_whole("\u{feff}data: a\n\n".as_bytes()), vec![data("a")]);
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        assert_eq!(decode_whole(b"data: a\xffb\n\n"), vec![data("a\u{fffd}b")]);
    }

    #[test]
    fn audit_14_a_line_or_an_event_longer_than_the_limit_fails_the_stream() {
        // A line that never ends, however it is split.
        let mut decoder = SseDecoder::with_limit(16);
        assert_eq!(decoder.push(b"data: 0123456789").unwrap(), vec![]);
        assert_eq!(decoder.push(b"abc"), Err(FrameTooLarge { limit: 16 }));
        assert_eq!(decoder.push(b"\n\n"), Err(FrameTooLarge { limit: 16 }), "nothing more comes out");
        assert_eq!(decoder.finish(), None);

        // Short lines adding up to one event too large.
        let mut decoder = SseDecoder::with_limit(16);
        assert_eq!(decoder.push(b"data: 01234567\ndata: 01234567\n"), Err(FrameTooLarge { limit: 16 }));

        // Up to the limit is fine, and the default limit leaves room for big events.
        let mut decoder = SseDecoder::with_limit(16);
        assert_eq!(decoder.push(b"data: 0123456789\n\n").unwrap(), vec![data("0123456789")]);
        let mut decoder = SseDecoder::new();
        let big = format!("data: {}\n\n", "x".repeat(4 * 1024 * 1024));
        assert_eq!(decoder.push(big.as_bytes()).unwrap().len(), 1);
    }

    /// Any split of the body into network chunks yields the same frames as the whole body.
    #[test]
    fn every_split_point_yields_the_same_frames() {
        let transcript = "\u{feff}: hello\r\nevent: message\r\ndata: {\"text\":\"héllo 🎉\"}\r\n\r\n\
                          data: line one\ndata: line two\n\nid: 3\rdata: ünï\r\r\
                          data: [DONE]"
            .as_bytes();
        let expected = decode_whole(transcript);
        assert_eq!(expected.len(), 4);
        for split in 0..=transcript.len() {
            let mut decoder = SseDecoder::new();
            let mut frames = decoder.push(&transcript[..split]).unwrap();
            frames.extend(decoder.push(&transcript[split..]).unwrap());
            frames.extend(decoder.finish());
            assert_eq!(frames, expected, "split at byte {split}");
        }
        let mut decoder = SseDecoder::new();
        let mut frames: Vec<_> =
            transcript.iter().flat_map(|b| decoder.push(std::slice::from_ref(b)).unwrap()).collect();
        frames.extend(decoder.finish());
        assert_eq!(frames, expected, "one byte at a time");
    }
}
