/**
 * Bad input for `todo_write`: a named corpus of tool arguments, a fast-check generator of random
 * ones, and the outcome the pure domain predicts for each. The channel tests
 * (`channels.test.ts`) send these through the client, the CLI, the HTTP API and a foreign
 * client and check every channel against the prediction, or, for the few cases where Temporal
 * or its SDK decides the answer, against the exact behaviour {@link LIMITS} promises.
 *
 * Cases are JSON *text*, not values: only text can carry a `__proto__` key (an object literal
 * would set the prototype instead), a lone-surrogate escape such as `"\ud800"`, duplicate keys,
 * `1e999`, or text that is not JSON at all.
 */
import fc from 'fast-check';
import {
  REJECTION_RULES,
  acceptTodoWrite,
  TODO_STATUSES,
  Rejection,
  trimTodoWriteArgs,
  type RejectionProblem,
  type RejectionRule,
  type TodoItem,
  type TodoPolicy,
} from '../../src/todo';

/** The deployment policy the channel tests run their worker with. */
export const POLICY: TodoPolicy = { allowParallelInProgress: false };

/** The HTTP service's default body limit (1 MiB). */
export const HTTP_BODY_LIMIT = 1024 * 1024;

/** What the issue asks to cover, one name per kind of bad input. */
export type Category =
  | 'valid'
  | 'trimming'
  | 'wrong-type'
  | 'missing-field'
  | 'null'
  | 'extra-key'
  | 'proto-key'
  | 'unicode'
  | 'huge-string'
  | 'many-items'
  | 'deep-nesting'
  | 'policy-and-duplicates'
  | 'invalid-json'
  | 'payload';

/** One named input. */
export interface CorpusCase {
  name: string;
  category: Category;
  /** The tool arguments as JSON text (possibly not valid JSON). */
  text: string;
  /** Raw bytes to send instead of `text` where a channel sends bytes (HTTP, CLI stdin, a file); `text` is then their UTF-8 decoding. */
  bytes?: Uint8Array;
  /** Part of the subset sent through the CLI (one process per case). */
  cli?: true;
  /** Sent through the CLI on stdin instead of `--json` (large texts always are). */
  stdin?: true;
}

/** What the domain predicts for one input on one channel. */
export type Outcome =
  | { kind: 'accepted'; todos: TodoItem[] }
  | { kind: 'rejected'; rule: RejectionRule; message: string; problems: readonly RejectionProblem[] }
  /** The text is not JSON: refused before anything is sent. */
  | { kind: 'invalid-json'; reason: string }
  /** The HTTP body is over the limit: 413. */
  | { kind: 'too-large' }
  /** Temporal or its SDK answers before any rule of ours can (see {@link LIMITS}). */
  | { kind: 'temporal-error'; message: RegExp }
  /** The Temporal CLI refuses the text and sends nothing (see {@link LIMITS}). */
  | { kind: 'refused-by-cli'; message: RegExp };

/**
 * The outcome of parsed tool arguments under {@link POLICY}: the accepted list exactly as it will
 * be stored, or the rejection with its first rule and whole message.
 */
export function predictArgs(args: unknown): Outcome {
  try {
    return { kind: 'accepted', todos: acceptTodoWrite(args, POLICY) };
  } catch (error) {
    if (!(error instanceof Rejection)) throw error;
    return { kind: 'rejected', rule: error.rule, message: error.message, problems: error.problems };
  }
}

/**
 * The outcome of a JSON text: `trim` for this project's tool layer (client, CLI, HTTP), which
 * trims every `content` before sending; without it for a foreign client, which sends the text
 * as it is.
 */
export function predict(text: string, options: { trim: boolean }): Outcome {
  let args: unknown;
  try {
    args = JSON.parse(text);
  } catch (error) {
    return { kind: 'invalid-json', reason: (error as Error).message };
  }
  return predictArgs(options.trim ? trimTodoWriteArgs(args) : args);
}

/**
 * What the HTTP API must answer for a body: 413 over the limit, 400 for non-JSON, else the
 * domain's verdict. The body is read as UTF-8 text the way a `TextDecoder` reads it, which drops
 * a leading byte-order mark (RFC 8259 lets a parser ignore one).
 */
export function predictHttp(c: CorpusCase): Outcome {
  if (bodyBytes(c) > HTTP_BODY_LIMIT) return { kind: 'too-large' };
  return predict(c.text.replace(/^\ufeff/, ''), { trim: true });
}

/** Size of what a byte channel sends. */
export function bodyBytes(c: CorpusCase): number {
  return c.bytes?.byteLength ?? Buffer.byteLength(c.text, 'utf8');
}

// ---------------------------------------------------------------------------------------------
// The named corpus
// ---------------------------------------------------------------------------------------------

const item = (content: unknown, status: unknown = 'pending'): Record<string, unknown> => ({ content, status });
const args = (...todos: unknown[]): string => JSON.stringify({ todos });
/** `{"todos":[<raw>]}` with `raw` spliced in as JSON text. */
const rawItem = (raw: string): string => `{"todos":[${raw}]}`;
const nested = (depth: number, open: string, close: string, core: string): string => open.repeat(depth) + core + close.repeat(depth);

function build(): CorpusCase[] {
  const cases: CorpusCase[] = [];
  const add = (category: Category, name: string, text: string, extra: Partial<CorpusCase> = {}): void => {
    cases.push({ name, category, text, ...extra });
  };
  const cli = { cli: true } as const;

  // -- valid, at the edges --------------------------------------------------------------------
  add('valid', 'one-todo', args(item('Run lint')), cli);
  add('valid', 'empty-list', '{"todos":[]}', cli);
  add('valid', 'every-status-once', args(item('Plan', 'completed'), item('Build', 'in_progress'), item('Ship')));
  add('valid', 'keys-in-other-order', '{"todos":[{"status":"completed","content":"Reordered"}]}', cli);
  add('valid', 'duplicate-json-key-last-wins', '{"todos":[{"content":"first","content":"second","status":"pending"}]}', cli);
  add('valid', 'escaped-key-names', '{"tod\\u006fs":[{"c\\u006fntent":"Escaped keys","st\\u0061tus":"pending"}]}');
  add('valid', 'pretty-printed', '\n{\n\t"todos" : [ { "content" : "Spaced" ,\r\n "status" : "pending" } ]\n}\n');
  add('valid', 'content-1000-chars', args(item('x'.repeat(1000))));
  add('valid', 'content-1000-emoji', args(item('😀'.repeat(1000))), cli);
  add('valid', '500-todos', args(...Array.from({ length: 500 }, (_, i) => item(`Step ${i}`))));
  add('valid', 'list-just-under-512KiB', args(...Array.from({ length: 500 }, (_, i) => item(`${i} `.padEnd(1000, 'x')))));
  add('valid', 'content-looks-like-json', args(item('{"todos":[]}'), item('[shape]'), item('null')));

  // -- trimming (the tool layer trims; a foreign client must send trimmed text) ----------------
  add('trimming', 'spaces-around', args(item('  Run lint \n')), cli);
  add('trimming', 'unicode-whitespace-around', args(item('\u00a0\ufeff\u3000Fix\u2028\u2029\u205f')), cli);
  add('trimming', 'whitespace-only', args(item(' \t\n\r\u00a0')), cli);
  add('trimming', 'empty-string', args(item('')), cli);
  add('trimming', 'collide-after-trim', args(item('a'), item(' a ')), cli);
  add('trimming', 'over-limit-only-untrimmed', args(item(` ${'y'.repeat(1000)} `)));
  add('trimming', 'zero-width-space-only', args(item('\u200b')), cli);
  add('trimming', 'mongolian-vowel-separator', args(item('\u180ea\u180e')));

  // -- wrong types ------------------------------------------------------------------------------
  add('wrong-type', 'top-level-array', '[{"todos":[]}]', cli);
  add('wrong-type', 'top-level-string', '"todos"', cli);
  add('wrong-type', 'top-level-number', '42');
  add('wrong-type', 'top-level-true', 'true');
  add('wrong-type', 'top-level-infinity', '1e999', cli);
  add('wrong-type', 'todos-string', '{"todos":"Run lint"}', cli);
  add('wrong-type', 'todos-number', '{"todos":3}');
  add('wrong-type', 'todos-object', '{"todos":{"0":{"content":"a","status":"pending"}}}', cli);
  add('wrong-type', 'todos-bool', '{"todos":false}');
  add('wrong-type', 'todos-infinity', '{"todos":-1e999}');
  add('wrong-type', 'item-string', '{"todos":["Run lint"]}', cli);
  add('wrong-type', 'item-number', '{"todos":[7]}');
  add('wrong-type', 'item-array', '{"todos":[["Run lint","pending"]]}');
  add('wrong-type', 'content-number', args(item(12)), cli);
  add('wrong-type', 'content-big-integer', rawItem('{"content":123456789012345678901234567890,"status":"pending"}'));
  add('wrong-type', 'content-array', args(item(['a'])));
  add('wrong-type', 'content-object', args(item({ text: 'a' })));
  add('wrong-type', 'content-bool', args(item(true)));
  add('wrong-type', 'status-number', args(item('a', 1)), cli);
  add('wrong-type', 'status-negative-zero', rawItem('{"content":"a","status":-0}'));
  add('wrong-type', 'status-unknown', args(item('a', 'done')), cli);
  add('wrong-type', 'status-uppercase', args(item('a', 'PENDING')));
  add('wrong-type', 'status-padded', args(item('a', ' pending')), cli);
  add('wrong-type', 'status-array', args(item('a', ['pending'])));
  add('wrong-type', 'mixed-good-and-bad-items', args(item('ok'), 5, item('bad', 'cancelled'), item(null, null)));

  // -- missing fields ---------------------------------------------------------------------------
  add('missing-field', 'empty-object', '{}', cli);
  add('missing-field', 'todos-misspelled', '{"todo":[{"content":"a","status":"pending"}]}', cli);
  add('missing-field', 'item-empty', '{"todos":[{}]}', cli);
  add('missing-field', 'item-no-content', '{"todos":[{"status":"pending"}]}');
  add('missing-field', 'item-no-status', '{"todos":[{"content":"a"}]}', cli);
  add('missing-field', 'items-key', '{"items":[]}');

  // -- nulls ------------------------------------------------------------------------------------
  add('null', 'top-level-null', 'null', cli);
  add('null', 'todos-null', '{"todos":null}', cli);
  add('null', 'item-null', '{"todos":[null]}');
  add('null', 'content-null', args(item(null)), cli);
  add('null', 'status-null', args(item('a', null)));
  add('null', 'extra-key-null', '{"todos":[],"note":null}');
  add('null', 'every-field-null', '{"todos":[{"content":null,"status":null},null]}');

  // -- extra keys -------------------------------------------------------------------------------
  add('extra-key', 'item-priority', rawItem('{"content":"a","status":"pending","priority":"high"}'), cli);
  add('extra-key', 'item-id', rawItem('{"id":1,"content":"a","status":"pending"}'));
  add('extra-key', 'top-level-expectedVersion', '{"todos":[],"expectedVersion":0}', cli);
  add('extra-key', 'empty-key-name', rawItem('{"content":"a","status":"pending","":0}'));
  add('extra-key', 'many-extra-keys', rawItem(`{"content":"a","status":"pending",${Array.from({ length: 30 }, (_, i) => `"k${i}":${i}`).join(',')}}`));
  add('extra-key', 'huge-extra-value', `{"todos":[],"junk":"${'j'.repeat(500_000)}"}`);

  // -- __proto__ / constructor keys -------------------------------------------------------------
  add('proto-key', 'item-__proto__-object', rawItem('{"content":"a","status":"pending","__proto__":{"polluted":true}}'), cli);
  add('proto-key', 'item-__proto__-null', rawItem('{"content":"a","status":"pending","__proto__":null}'));
  add('proto-key', 'item-fields-only-in-__proto__', rawItem('{"__proto__":{"content":"a","status":"pending"}}'), cli);
  add('proto-key', 'status-only-in-__proto__', rawItem('{"content":"a","__proto__":{"status":"pending"}}'));
  add('proto-key', 'top-level-__proto__', '{"todos":[],"__proto__":{"polluted":true}}', cli);
  add('proto-key', 'todos-only-in-__proto__', '{"__proto__":{"todos":[{"content":"a","status":"pending"}]}}');
  add('proto-key', 'escaped-__proto__', '{"todos":[],"\\u005f_proto__":{"polluted":true}}');
  add('proto-key', 'item-constructor', rawItem('{"content":"a","status":"pending","constructor":{"prototype":{"polluted":true}}}'), cli);
  add('proto-key', 'top-level-constructor', '{"todos":[],"constructor":{"prototype":{"polluted":true}}}');
  add('proto-key', 'item-prototype-toString-toJSON', rawItem('{"content":"a","status":"pending","prototype":1,"toString":2,"toJSON":3,"hasOwnProperty":4}'));
  add('proto-key', 'content-named-like-keys', args(item('__proto__'), item('constructor'), item('toString'), item('hasOwnProperty')), cli);

  // -- Unicode ----------------------------------------------------------------------------------
  add('unicode', 'nul-only', rawItem('{"content":"\\u0000","status":"pending"}'), cli);
  add('unicode', 'nul-inside', rawItem('{"content":"a\\u0000b","status":"pending"}'));
  add('unicode', 'control-characters', rawItem('{"content":"bell\\u0007 esc\\u001b del\\u007f","status":"pending"}'));
  add('unicode', 'lone-high-surrogate', rawItem('{"content":"\\ud800","status":"pending"}'), cli);
  add('unicode', 'lone-low-surrogate', rawItem('{"content":"x\\udc00y","status":"pending"}'));
  add('unicode', 'reversed-surrogate-pair', rawItem('{"content":"\\ude00\\ud83d","status":"pending"}'));
  add('unicode', 'escaped-surrogate-pair', rawItem('{"content":"\\ud83d\\ude00 escaped pair","status":"pending"}'), cli);
  add('unicode', 'lone-surrogate-in-key', rawItem('{"content":"a","status":"pending","\\ud800":1}'));
  add('unicode', 'lone-surrogate-in-status', rawItem('{"content":"a","status":"pending\\ud800"}'));
  add('unicode', 'lone-surrogate-and-whitespace', rawItem('{"content":"  \\udfff  ","status":"pending"}'));
  add('unicode', 'rtl-marks', args(item('\u200f\u202eReversed\u202c\u200e')), cli);
  add('unicode', 'rtl-mark-only', args(item('\u200f')));
  add('unicode', 'arabic-and-hebrew', args(item('مرحبا שלום')));
  add('unicode', 'combining-only', args(item('\u0301')), cli);
  add('unicode', 'zalgo', args(item(`e${'\u0301\u0316\u0338'.repeat(300)}`)));
  add('unicode', 'combining-over-limit', args(item(`e${'\u0301'.repeat(1000)}`)));
  add('unicode', 'nfc-and-nfd-are-distinct', args(item('caf\u00e9'), item('cafe\u0301')), cli);
  add('unicode', 'emoji-sequences', args(item('👨‍👩‍👧‍👦'), item('🇫🇷'), item('👍🏽'), item('🏳️‍🌈'), item('1️⃣')), cli);
  add('unicode', 'emoji-1001', args(item('😀'.repeat(1001))));
  add('unicode', 'astral-max', args(item('\u{10ffff}\u{e0001}\u{1d11e}')));
  add('unicode', 'noncharacters', args(item('\ufffe\uffff\ufdd0')));
  add('unicode', 'line-separators-inside', args(item('a\u2028b\u2029c')));
  add('unicode', 'fullwidth-cjk', args(item('ＲＵＮ 中文 テスト 한국어')));
  add('unicode', 'duplicate-emoji', args(item('🚀'), item('🚀', 'completed')));

  // -- huge strings -----------------------------------------------------------------------------
  add('huge-string', 'content-1001-chars', args(item('x'.repeat(1001))), cli);
  add('huge-string', 'content-100k-chars', args(item('x'.repeat(100_000))), { cli: true, stdin: true });
  add('huge-string', 'content-1M-chars', args(item('x'.repeat(1_000_000))), { cli: true, stdin: true });
  add('huge-string', 'status-100k-chars', args(item('a', 'p'.repeat(100_000))));
  add('huge-string', 'list-over-512KiB', args(...Array.from({ length: 300 }, (_, i) => item(`${i} `.padEnd(1000, '中')))), { cli: true, stdin: true });
  add('huge-string', 'list-over-512KiB-over-1MiB', args(...Array.from({ length: 500 }, (_, i) => item(`${i} `.padEnd(1000, '中')))));
  add('huge-string', 'unknown-key-900k-chars', `{"todos":[],"${'k'.repeat(900_000)}":1}`);
  add('huge-string', 'unknown-keys-90k', `{"todos":[],${Array.from({ length: 90_000 }, (_, i) => `"k${i}":0`).join(',')}}`);

  // -- 100,000 items ----------------------------------------------------------------------------
  add('many-items', '501-todos', args(...Array.from({ length: 501 }, (_, i) => item(`Step ${i}`))), cli);
  add('many-items', '100000-numbers', `{"todos":[${Array(100_000).fill('1').join(',')}]}`, { cli: true, stdin: true });
  add('many-items', '100000-empty-objects', `{"todos":[${Array(100_000).fill('{}').join(',')}]}`);
  add('many-items', '100000-nulls', `{"todos":[${Array(100_000).fill('null').join(',')}]}`);
  add('many-items', '100000-todos', args(...Array.from({ length: 100_000 }, (_, i) => item(`t${i}`))), { cli: true, stdin: true });

  // -- deep nesting -----------------------------------------------------------------------------
  add('deep-nesting', 'array-depth-100', `{"todos":[${nested(100, '[', ']', '')}]}`, cli);
  add('deep-nesting', 'array-depth-1000', `{"todos":[${nested(1000, '[', ']', '1')}]}`);
  add('deep-nesting', 'object-depth-1000-in-content', rawItem(`{"content":${nested(1000, '{"a":', '}', '1')},"status":"pending"}`));
  add('deep-nesting', 'object-depth-1000-extra-key', `{"todos":[],"x":${nested(1000, '{"a":', '}', 'null')}}`);
  add('deep-nesting', 'array-depth-10000', `{"todos":[${nested(10_000, '[', ']', '')}]}`, cli);
  add('deep-nesting', 'object-depth-10000-in-status', rawItem(`{"content":"a","status":${nested(10_000, '{"a":', '}', '1')}}`));
  add('deep-nesting', 'array-depth-100000', `{"todos":[${nested(100_000, '[', ']', '')}]}`);

  // -- the parallel policy and duplicates -------------------------------------------------------
  add('policy-and-duplicates', 'two-in-progress', args(item('a', 'in_progress'), item('b', 'in_progress')), cli);
  add('policy-and-duplicates', '500-in-progress', args(...Array.from({ length: 500 }, (_, i) => item(`Step ${i}`, 'in_progress'))));
  add('policy-and-duplicates', 'exact-duplicate', args(item('a'), item('a', 'completed')));
  add('policy-and-duplicates', '500-duplicates', args(...Array.from({ length: 500 }, () => item('same'))));
  add('policy-and-duplicates', 'every-problem-at-once', args(item(' dup'), item('dup', 'in_progress'), item('', 'in_progress'), item('x'.repeat(1001), 'in_progress')), cli);
  add('policy-and-duplicates', 'many-problems', args(...Array.from({ length: 40 }, (_, i) => item(i % 2 === 0 ? ' ' : `\ud800${i}`, 'in_progress'))));

  // -- not JSON at all (text channels only) -----------------------------------------------------
  add('invalid-json', 'empty-text', '', cli);
  add('invalid-json', 'whitespace-text', ' \n ');
  add('invalid-json', 'truncated', '{"todos":[{"content":"a","status":"pend', cli);
  add('invalid-json', 'trailing-comma', '{"todos":[{"content":"a","status":"pending"},]}');
  add('invalid-json', 'single-quotes', "{'todos':[]}", cli);
  add('invalid-json', 'unquoted-key', '{todos:[]}');
  add('invalid-json', 'nan', '{"todos":NaN}');
  add('invalid-json', 'comment', '{"todos":[] /* none */}');
  add('invalid-json', 'raw-control-character', '{"todos":[{"content":"a\u0007b","status":"pending"}]}');
  add('invalid-json', 'byte-order-mark', '\ufeff{"todos":[]}', cli);
  add('invalid-json', 'two-values', '{"todos":[]} {"todos":[]}');
  add('invalid-json', 'undefined-literal', 'undefined');
  add('invalid-json', 'bad-escape', rawItem('{"content":"\\x41","status":"pending"}'));

  // -- bytes that are not UTF-8 (byte channels: HTTP, CLI stdin, a file for the foreign client) --
  const invalidUtf8 = Buffer.concat([Buffer.from('{"todos":[{"content":"bad byte '), Buffer.from([0xff, 0xc3]), Buffer.from('","status":"pending"}]}')]);
  add('payload', 'invalid-utf8-bytes', new TextDecoder().decode(invalidUtf8), { bytes: invalidUtf8, cli: true, stdin: true });

  return cases;
}

/** The named corpus. */
export const CORPUS: readonly CorpusCase[] = build();

/** A case by name (throws on a typo). */
export function corpusCase(name: string): CorpusCase {
  const found = CORPUS.find((c) => c.name === name);
  if (found === undefined) throw new Error(`no corpus case named ${name}`);
  return found;
}

// ---------------------------------------------------------------------------------------------
// Limits: where Temporal or its SDK, not this project, decides the answer
// ---------------------------------------------------------------------------------------------

/** Every rule a rejection can name, for reading `[rule]` out of a message. */
export const RULES: readonly RejectionRule[] = REJECTION_RULES;

/** The channels the corpus goes through. */
export type Channel = 'client' | 'http' | 'cli' | 'foreign';

/**
 * The exact answer a channel gives where a limit of Temporal or of its SDK decides it: accepted
 * with this stored list, a Temporal error whose text matches, or refused by the Temporal CLI
 * before anything is sent.
 */
export type LimitAnswer =
  | { kind: 'accepted'; todos: TodoItem[] }
  | { kind: 'temporal-error'; message: RegExp }
  | { kind: 'refused-by-cli'; message: RegExp };

/** One case whose answer on one channel is set by Temporal or its SDK, asserted as exactly as any other. */
export interface Limit {
  /** A corpus case, or a payload of the options test (`unknown-payload-encoding`). */
  case: string;
  channel: Channel;
  answer: LimitAnswer;
  /** What history holds afterwards: nothing, or one more write that the fold reads as this list. */
  history: 'nothing' | TodoItem[];
  /**
   * The workflow task failures the server records for this case, when it records any: their
   * cause, and how many (the server decides how often it retries before it answers the sender).
   * A case with failures is sent alone to its own session, so the retries meet no other case.
   */
  failedWorkflowTasks?: { cause: string; min: number; max: number };
  /** Which limit of Temporal or its SDK, and why this project cannot answer otherwise. */
  why: string;
}

const foreign = 'foreign' as const;

/**
 * The promises where Temporal or its SDK decides the answer. The channel tests hold each case to
 * its answer and its history here (any other answer fails them), and check that every entry was
 * exercised. Everything else is answered by this project's rules, as {@link predict} says.
 */
export const LIMITS: readonly Limit[] = [
  {
    case: '100000-todos',
    channel: foreign,
    answer: {
      kind: 'temporal-error',
      message: /unable to update workflow: Unable to perform workflow execution update due to (unexpected workflow task failure\.|Workflow Task in failed state\.)/,
    },
    history: 'nothing',
    failedWorkflowTasks: { cause: 'WORKFLOW_TASK_FAILED_CAUSE_PAYLOADS_TOO_LARGE', min: 1, max: 2 },
    why:
      'Temporal\'s 2 MB payload limit (the server\'s blob size limit). The worker\'s rejection of an update carries the ' +
      'rejected request back to the server (temporal.api.update.v1.Rejection), so a request of 4 MB makes a rejection the ' +
      'SDK refuses to send whatever the validator says (TMPRL1103); it fails the workflow task instead. Server 1.31 ' +
      'records that failure (WorkflowTaskFailed, cause PAYLOADS_TOO_LARGE; 1.29 dropped it) and answers the sender ' +
      'with one of these two errors, depending on whether its retry of the task (which fails the same way and is ' +
      'recorded too) came first; no write is applied and a later task succeeds. Our client, the CLI and the HTTP API refuse such a list before sending, with [too-many-items].',
  },
  {
    case: 'invalid-utf8-bytes',
    channel: foreign,
    answer: { kind: 'accepted', todos: [{ content: 'bad byte \ufffd\ufffd', status: 'pending' }] },
    history: [{ content: 'bad byte \ufffd\ufffd', status: 'pending' }],
    why:
      'The SDK\'s JSON payload converter decodes a payload\'s bytes with U+FFFD for each byte that is not UTF-8, before ' +
      'any workflow code (validator or interceptor) sees the arguments, so the validator judges the replaced text. ' +
      'History keeps the bytes as sent, and every replay decodes them the same way, so the list stays what was accepted. ' +
      'The HTTP API and the CLI refuse such bytes themselves as not valid JSON.',
  },
  {
    case: 'unknown-payload-encoding',
    channel: foreign,
    answer: { kind: 'temporal-error', message: /unable to update workflow: Unknown encoding: foo\/bar \(type: ValueError/ },
    history: 'nothing',
    why:
      'The SDK decodes an update\'s arguments before the validator runs and rejects the update with its own ValueError ' +
      'when a payload\'s encoding is unknown, so no rule of ours can name it; the update is rejected all the same.',
  },
  ...['array-depth-10000', 'object-depth-10000-in-status', 'array-depth-100000'].map(
    (name): Limit => ({
      case: name,
      channel: foreign,
      answer: { kind: 'refused-by-cli', message: /input #1 is not valid JSON/ },
      history: 'nothing',
      why:
        'The Temporal CLI checks its input with Go\'s encoding/json, which refuses nesting deeper than 10,000 levels, ' +
        'so it sends nothing; JavaScript parses the text, and our channels reject it as [shape].',
    }),
  ),
];

/** The limit that sets a case's answer on a channel, if any. */
export function limitFor(name: string, channel: Channel): Limit | undefined {
  return LIMITS.find((limit) => limit.case === name && limit.channel === channel);
}

// ---------------------------------------------------------------------------------------------
// Random arguments (fast-check)
// ---------------------------------------------------------------------------------------------

// Characters chosen to stress trimming, escaping, uniqueness and key handling.
const TRICKY = [
  'a', 'b', 'Z', '0', ' ', '\t', '\n', '\r', '\u00a0', '\u2028', '\u3000', '\ufeff', '\u200b', '\u0000', '\u0007',
  '\u200e', '\u200f', '\u202e', '\u0301', 'e\u0301', '\u00e9', '😀', '👨‍👩‍👧', '🇫🇷', '"', '\\', '/', '中', 'ش',
  '__proto__', 'constructor', '[shape]',
] as const;

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
const unit = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...TRICKY) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: loneSurrogate },
);
const contentArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 10, arbitrary: fc.string({ unit, maxLength: 10 }) },
  { weight: 3, arbitrary: fc.constantFrom('Run lint', 'Fix errors', ' Run lint', 'Run lint ', '', '   ') },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(1000), 'x'.repeat(1001), ` ${'y'.repeat(1000)} `, '😀'.repeat(1001)) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);
const statusArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...TODO_STATUSES) },
  { weight: 1, arbitrary: fc.constantFrom('done', 'PENDING', ' pending', 'in-progress', '', 'pending\u0000') },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
);
const keyArb = fc.oneof(
  fc.constantFrom('priority', 'id', '__proto__', 'constructor', 'prototype', 'toString', 'toJSON', '', 'todos', 'content', 'status'),
  fc.string({ unit, maxLength: 6 }),
);

/** An object with own properties only, `__proto__` included (never a prototype change). */
function own(entries: ReadonlyArray<readonly [string, unknown]>): Record<string, unknown> {
  const target: Record<string, unknown> = {};
  for (const [key, value] of entries) Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  return target;
}

type Mutation = (value: { todos: unknown[] } & Record<string, unknown>) => unknown;

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  // a field of an item gets a wrong value, or goes missing, or an item gets an extra key
  fc.tuple(fc.nat(), fc.constantFrom('content', 'status'), fc.jsonValue({ maxDepth: 2 })).map(
    ([at, field, wrong]): Mutation => (v) => withItem(v, at, (it) => own([...Object.entries(it).filter(([k]) => k !== field), [field, wrong]])),
  ),
  fc.tuple(fc.nat(), fc.constantFrom('content', 'status')).map(
    ([at, field]): Mutation => (v) => withItem(v, at, (it) => own(Object.entries(it).filter(([k]) => k !== field))),
  ),
  fc.tuple(fc.nat(), keyArb, fc.jsonValue({ maxDepth: 2 })).map(
    ([at, key, extra]): Mutation => (v) => withItem(v, at, (it) => own([...Object.entries(it), [key, extra]])),
  ),
  // an item is replaced by something that is not an item, or repeated
  fc.tuple(fc.nat(), fc.jsonValue({ maxDepth: 2 })).map(([at, wrong]): Mutation => (v) => withItem(v, at, () => wrong)),
  fc.nat().map((at): Mutation => (v) => (v.todos.length === 0 ? v : { ...v, todos: [...v.todos, v.todos[at % v.todos.length]] })),
  // every todo in progress; whitespace around every content
  fc.constant<Mutation>((v) => ({ ...v, todos: v.todos.map((it) => (isRecord(it) ? own([...Object.entries(it), ['status', 'in_progress']]) : it)) })),
  fc.constant<Mutation>((v) => ({ ...v, todos: v.todos.map((it) => (isRecord(it) && typeof it.content === 'string' ? own([...Object.entries(it), ['content', ` ${it.content}\t`]]) : it)) })),
  // the arguments: an extra key, todos replaced, or not an object at all
  fc.tuple(keyArb, fc.jsonValue({ maxDepth: 2 })).map(([key, extra]): Mutation => (v) => own([...Object.entries(v), [key, extra]])),
  fc.jsonValue({ maxDepth: 2 }).map((wrong): Mutation => (v) => own([...Object.entries(v).filter(([k]) => k !== 'todos'), ['todos', wrong]])),
  fc.jsonValue({ maxDepth: 2 }).map((wrong): Mutation => () => wrong),
);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function withItem(v: { todos: unknown[] } & Record<string, unknown>, at: number, change: (item: Record<string, unknown>) => unknown): unknown {
  if (v.todos.length === 0) return v;
  const index = at % v.todos.length;
  const current = v.todos[index];
  const todos = [...v.todos];
  todos[index] = change(isRecord(current) ? current : {});
  return { ...v, todos };
}

/** Near-valid arguments: a list of plausible todos with zero to two mutations. */
const nearValidArb: fc.Arbitrary<string> = fc
  .tuple(fc.array(fc.tuple(contentArb, statusArb), { maxLength: 6 }), fc.array(mutationArb, { maxLength: 2 }))
  .map(([items, mutations]) => {
    let value: unknown = { todos: items.map(([content, status]) => own([['content', content], ['status', status]])) };
    for (const mutate of mutations) {
      if (isRecord(value) && Array.isArray(value.todos)) value = mutate(value as { todos: unknown[] } & Record<string, unknown>);
    }
    return JSON.stringify(value);
  });

/**
 * Random tool arguments as JSON text: mostly near-valid lists with mutations, some fully random
 * JSON, some `{"todos": [random JSON...]}`.
 */
export const randomArgsText: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: nearValidArb },
  { weight: 1, arbitrary: fc.json({ maxDepth: 4 }) },
  { weight: 1, arbitrary: fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 5 }).map((todos) => JSON.stringify({ todos })) },
);
