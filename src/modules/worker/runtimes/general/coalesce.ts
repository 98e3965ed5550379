import { wrapLanguageModel, type LanguageModel, type LanguageModelMiddleware } from 'ai';

/**
 * Text and reasoning deltas that reach the worker in one turn of the event loop, coalesced before the AI SDK's stream
 * pipeline sees them. A provider's deltas often arrive many to a socket read (a model streaming faster than the worker
 * reads, a buffered response after a slow start); each one costs the same trip through the SDK's transform streams,
 * the turn's translation into a RunEvent, the NDJSON writer, the runner's relay and the conductor's event log. Joined
 * per turn, a burst of deltas makes a few events instead of hundreds, with the same text in the same order.
 *
 * The first delta after a quiet turn goes on at once (a run's first words wait for nothing); the deltas that follow it
 * in the same turn are joined into one and go at the turn's end (`setImmediate`), and so on while the burst lasts.
 * Only consecutive deltas of the same part (type and id) without provider metadata are joined; every other part (tool
 * calls and their inputs, step and finish parts, errors) passes as it came, in order, and first sends on what was
 * joined before it. A delta that arrives alone is never held back more than one turn.
 */
type StreamResult = Awaited<ReturnType<Parameters<NonNullable<LanguageModelMiddleware['wrapStream']>>[0]['doStream']>>;
type Part = StreamResult['stream'] extends ReadableStream<infer P> ? P : never;
type Delta = Extract<Part, { type: 'text-delta' | 'reasoning-delta' }>;

const isDelta = (part: Part): part is Delta => (part.type === 'text-delta' || part.type === 'reasoning-delta') && part.providerMetadata == null;

/** Parts read ahead of the SDK: enough to keep the provider's stream moving, bounded for a consumer that falls behind. */
const HIGH_WATER_MARK = 64;

export function coalesceDeltaStream(source: ReadableStream<Part>): ReadableStream<Part> {
  const reader = source.getReader();
  let controller!: ReadableStreamDefaultController<Part>;
  /** Deltas of one part joined in this turn, not yet sent. */
  let joined: Delta | undefined;
  /** A turn with output is under way: deltas wait for its end. */
  let busy = false;
  let ended = false;
  let room: (() => void) | undefined;

  const send = (part: Part) => {
    if (!ended) controller.enqueue(part);
  };
  const sendJoined = () => {
    if (joined) send(joined);
    joined = undefined;
  };
  // The turn's end: what was joined goes; a turn that joined something keeps the next one busy too.
  const onTurnEnd = () => {
    if (joined && !ended) {
      sendJoined();
      setImmediate(onTurnEnd);
    } else busy = false;
  };

  async function pump(): Promise<void> {
    try {
      for (;;) {
        if ((controller.desiredSize ?? 1) <= 0) await new Promise<void>((resolve) => (room = resolve));
        if (ended) return;
        const { done, value } = await reader.read();
        if (ended) return;
        if (done) break;
        if (!isDelta(value)) {
          sendJoined();
          send(value);
        } else if (joined && joined.type === value.type && joined.id === value.id) {
          joined.delta += value.delta;
        } else {
          sendJoined();
          if (busy) joined = { ...value }; // a copy of its own, to add to
          else {
            send(value);
            busy = true;
            setImmediate(onTurnEnd);
          }
        }
      }
      sendJoined();
      ended = true;
      controller.close();
    } catch (err) {
      sendJoined();
      // erroring a stream drops what it holds: the parts read before the failure go first
      while (!ended && (controller.desiredSize ?? HIGH_WATER_MARK) < HIGH_WATER_MARK) await new Promise<void>((resolve) => (room = resolve));
      ended = true;
      controller.error(err);
    }
  }

  return new ReadableStream<Part>(
    {
      start(c) {
        controller = c;
        void pump();
      },
      pull() {
        const resume = room;
        room = undefined;
        resume?.();
      },
      cancel(reason) {
        ended = true;
        room?.();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: HIGH_WATER_MARK },
  );
}

const middleware: LanguageModelMiddleware = {
  async wrapStream({ doStream }) {
    const result = await doStream();
    return { ...result, stream: coalesceDeltaStream(result.stream) };
  },
};

/** The model with its streamed deltas coalesced per turn of the event loop (a model id string is left as it is). */
export function coalesceDeltas(model: LanguageModel): LanguageModel {
  return typeof model === 'string' ? model : wrapLanguageModel({ model, middleware });
}
