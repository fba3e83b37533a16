/**
 * The state that sessions of the previous release carry across continue-as-new (recorded by
 * test/recording/record-carried.ts with that release checked out) is accepted by this one: the
 * same checks a continued run makes, and `release promote` asks the new build to make.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkCarriedSample, type CarriedSample } from '../../src/session/carried-check';
import { recordedCarriedSamples } from '../helpers';

test('the carried state of every recorded release is accepted by this build', () => {
  const recorded = recordedCarriedSamples();
  assert.ok(recorded.length > 0, 'no recorded carried state in test/fixtures/carried');
  for (const [file, samples] of recorded) {
    assert.ok(samples.length > 0, `${file} holds no sample`);
    for (const sample of samples) {
      const input = sample.input as { carried?: unknown; carriedAgent?: unknown };
      assert.ok(input.carried !== undefined && input.carriedAgent !== undefined, `${file}: a sample carries both the session's and the agent's state`);
      assert.equal(checkCarriedSample(sample), undefined, `${file}: ${sample.sessionId}`);
    }
  }
});

test('a carried state that breaks a rule is refused with the session, the rule and where', () => {
  const [[, samples]] = recordedCarriedSamples() as [[string, CarriedSample[]]];
  const sample = samples[0]!;
  const input = sample.input as { carried: { todos: unknown } };
  const broken = { ...sample, input: { ...input, carried: { ...input.carried, todos: [{ content: 'x', status: 'done' }] } } };
  const refusal = checkCarriedSample(broken);
  assert.equal(refusal?.sessionId, sample.sessionId);
  assert.equal(refusal?.rule, 'InvariantViolation');
  assert.match(refusal?.message ?? '', /the state carried into this run/);
  const unknownField = checkCarriedSample({ ...sample, input: { ...(sample.input as object), surprise: 1 } });
  assert.equal(unknownField?.rule, 'InvalidSessionInput');
  assert.match(unknownField?.message ?? '', /surprise/);
});
