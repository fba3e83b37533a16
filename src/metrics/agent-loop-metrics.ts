import type { Counter, Histogram, Registry } from './prom-client';
import { CountedOnce } from './counted-once';
import { METRIC_NAMES, MODEL_CALL_BUCKETS, TURN_BUCKETS } from './metric-names';
import { counterOn, histogramOn } from './registered-metric';
import { TodoWriteMetrics } from './todo-write-metrics';

/** One attempt of the `callModel` activity, as {@link AgentLoopMetrics.modelCall} counts it. */
export interface ModelCallRecord {
  /** The model the call asked for. */
  model: string;
  /** `ok`, `cancelled`, the failure's type (`ModelUnavailable`, `ModelRequestRejected`, …), or `error`. */
  outcome: string;
  seconds: number;
  /** The tokens the endpoint reported, for a call that answered. */
  tokens?: { input: number; output: number };
}

/**
 * What a worker counts in the agent loop's activities (never in workflow code, which a replay
 * runs again): the loop's `todo_write` answers, each model call with its tokens and time, and
 * each turn's end with its duration.
 */
export class AgentLoopMetrics {
  readonly todoWrites: TodoWriteMetrics;
  private readonly modelCalls: Counter<'model' | 'outcome'>;
  private readonly modelTokens: Counter<'model' | 'kind'>;
  private readonly modelCallSeconds: Histogram<'model' | 'outcome'>;
  private readonly turns: Counter<'outcome'>;
  private readonly turnSeconds: Histogram<'outcome'>;
  private readonly turnsCounted = new CountedOnce();

  constructor(registry: Registry) {
    this.todoWrites = new TodoWriteMetrics(registry);
    this.modelCalls = counterOn(registry, METRIC_NAMES.modelCalls, 'Model calls (attempts of the callModel activity) by model and outcome', ['model', 'outcome']);
    this.modelTokens = counterOn(registry, METRIC_NAMES.modelTokens, 'Tokens the model endpoint reported, by model and kind (input, output)', ['model', 'kind']);
    this.modelCallSeconds = histogramOn(
      registry,
      METRIC_NAMES.modelCallDuration,
      'How long each model call took, in seconds, by model and outcome',
      ['model', 'outcome'],
      MODEL_CALL_BUCKETS,
    );
    this.turns = counterOn(registry, METRIC_NAMES.turns, 'Agent turns that ended, by outcome (the reason they ended)', ['outcome']);
    this.turnSeconds = histogramOn(registry, METRIC_NAMES.turnDuration, 'Agent turn duration in seconds, by outcome', ['outcome'], TURN_BUCKETS);
  }

  /** Counts one model call: every attempt is a request the endpoint served (or refused), so every attempt counts. */
  modelCall({ model, outcome, seconds, tokens }: ModelCallRecord): void {
    this.modelCalls.inc({ model, outcome });
    this.modelCallSeconds.observe({ model, outcome }, seconds);
    if (tokens !== undefined) {
      this.modelTokens.inc({ model, kind: 'input' }, tokens.input);
      this.modelTokens.inc({ model, kind: 'output' }, tokens.output);
    }
  }

  /**
   * Counts the end of one turn, once per `key` (the activity that ended it: its retries share
   * it); `seconds` is left out when the turn's start is not known.
   */
  turnEnded(key: string, outcome: string, seconds: number | undefined): void {
    if (!this.turnsCounted.first(key)) return;
    this.turns.inc({ outcome });
    if (seconds !== undefined) this.turnSeconds.observe({ outcome }, seconds);
  }
}
