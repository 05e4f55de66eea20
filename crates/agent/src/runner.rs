//! The loop as the stream manager runs it: a [`TurnRequest`] is a [`TurnRunner`].

use turn::{ChunkSink, RunContext, TurnOutcome, TurnRunner};

use crate::{TurnRequest, run_turn};

#[async_trait::async_trait]
impl<S: ChunkSink> TurnRunner<S> for TurnRequest {
    /// The runner's idle timeout, part offset and steer signal replace the request's.
    async fn run(self: Box<Self>, context: RunContext, sink: &mut S) -> TurnOutcome {
        let mut request = *self;
        request.idle_timeout = context.idle_timeout;
        request.part_offset = context.part_offset;
        request.steer = context.steer;
        run_turn(request, context.cancel, sink).await
    }
}
