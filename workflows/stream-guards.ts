import { ApplicationFailure, condition, log, setHandler } from '@temporalio/workflow';
import {
  decodePayloadWire,
  workflowStreamPollUpdate,
  workflowStreamPublishSignal,
  type PollInput,
  type PollResult,
  type PublishInput,
  type WorkflowStream,
} from '@temporalio/workflow-streams/workflow';

/** The most entries one publish signal may carry (the publisher sends batches of at most 512 KB). */
const MAX_BATCH_ENTRIES = 10_000;

/** The longest topic name a reader may ask for or a publisher use. */
const MAX_TOPIC_CHARS = 256;

/** The most topics one poll may name. */
const MAX_POLL_TOPICS = 64;

/** What of `WorkflowStream` the guards hand checked input to: its own handlers, and whether it is draining. */
interface StreamHandlers {
  onPublish(input: PublishInput): void;
  onPoll(input: PollInput): Promise<PollResult>;
  draining: boolean;
}

/**
 * Creates the stream with `create` and puts a check in front of the handlers
 * `@temporalio/workflow-streams` registers (it trusts its input): anyone who can reach Temporal
 * can signal or update a stream. Without it, a publish signal that is not a batch (no `items`, an
 * entry whose data is not a payload) threw inside the signal handler, which fails the workflow
 * task, and every retry of it, so the stream stalled for good; a poll without `topics` did the
 * same from its update handler.
 *
 * A publish that is not a batch is dropped whole (a signal cannot be refused) and logged; a poll
 * that is not one is refused by its validator, so it never reaches history. A well-formed batch
 * or poll goes to the library's own handler exactly as before, in the order they came, so no
 * history changes.
 *
 * The checks are registered before the stream is created as well as after: signals and updates
 * that came with the stream's first workflow task wait for a handler, and are handed, at once, to
 * the first one registered, which would otherwise be the library's own (its constructor registers
 * them). The handlers are the library's private methods: `@temporalio/workflow-streams` is pinned
 * to exactly 1.23.0, and the streaming tests fail if they move.
 */
export function guardedStream(create: () => WorkflowStream): WorkflowStream {
  let handlers: StreamHandlers | undefined = undefined;
  // Batches that came before the stream existed, applied in order once it does.
  const early: PublishInput[] = [];
  const register = (): void => {
    setHandler(workflowStreamPublishSignal, (input) => {
      const problem = publishProblem(input);
      if (problem !== undefined) {
        log.warn('stream: a publish signal that is not a batch was dropped', { problem });
        return;
      }
      if (handlers === undefined) early.push(input);
      else handlers.onPublish(input);
    });
    setHandler(
      workflowStreamPollUpdate,
      async (input) => {
        await condition(() => handlers !== undefined);
        return handlers!.onPoll(input);
      },
      {
        validator: (input) => {
          if (handlers?.draining === true) {
            // The library's own answer while it drains for continue-as-new: a reader retries on the next run.
            throw ApplicationFailure.create({ message: 'Workflow is draining for continue-as-new', type: 'StreamDraining', nonRetryable: true });
          }
          const problem = pollProblem(input);
          if (problem !== undefined) throw ApplicationFailure.create({ message: `stream poll refused: ${problem}`, type: 'InvalidStreamPoll', nonRetryable: true });
        },
      },
    );
  };
  register();
  const stream = create();
  const created = stream as unknown as StreamHandlers;
  if (typeof created.onPublish !== 'function' || typeof created.onPoll !== 'function') {
    throw new TypeError('@temporalio/workflow-streams no longer has the handlers the stream guards wrap: check workflows/stream-guards.ts against the installed version');
  }
  handlers = created;
  register();
  for (const input of early.splice(0)) created.onPublish(input);
  return stream;
}

/** Why `input` is not a publish batch `{items: [{topic, data}], publisher_id, sequence}`, or `undefined` when it is one. */
export function publishProblem(input: unknown): string | undefined {
  if (!isRecord(input)) return 'the signal must carry an object {items, publisher_id, sequence}';
  const { items, publisher_id: publisherId, sequence } = input;
  if (typeof publisherId !== 'string' || publisherId.length > MAX_TOPIC_CHARS) return `publisher_id must be a string of at most ${MAX_TOPIC_CHARS} characters`;
  if (publisherId !== '' && !(typeof sequence === 'number' && Number.isSafeInteger(sequence) && sequence >= 0)) return 'sequence must be a whole number from 0';
  if (!Array.isArray(items)) return 'items must be a list';
  if (items.length > MAX_BATCH_ENTRIES) return `items holds ${items.length} entries; at most ${MAX_BATCH_ENTRIES}`;
  for (const [k, entry] of items.entries()) {
    if (!isRecord(entry) || !isTopic(entry.topic) || typeof entry.data !== 'string') return `items[${k}] must be {topic, data} with a topic of 1 to ${MAX_TOPIC_CHARS} characters and data a string`;
    try {
      decodePayloadWire(entry.data);
    } catch {
      return `items[${k}].data is not a payload (base64 of a Payload protobuf)`;
    }
  }
  return undefined;
}

/** Why `input` is not a poll `{topics, from_offset}`, or `undefined` when it is one. */
export function pollProblem(input: unknown): string | undefined {
  if (!isRecord(input)) return 'the update must carry an object {topics, from_offset}';
  const { topics, from_offset: fromOffset } = input;
  if (!Array.isArray(topics) || topics.length > MAX_POLL_TOPICS || !topics.every(isTopic)) return `topics must be a list of at most ${MAX_POLL_TOPICS} topic names of 1 to ${MAX_TOPIC_CHARS} characters`;
  if (!(typeof fromOffset === 'number' && Number.isSafeInteger(fromOffset) && fromOffset >= 0)) return 'from_offset must be a whole number from 0';
  return undefined;
}

function isTopic(value: unknown): value is string {
  return typeof value === 'string' && value.length >= 1 && value.length <= MAX_TOPIC_CHARS;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
