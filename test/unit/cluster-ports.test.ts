import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CLUSTER_PORT_RANGE, clusterPorts, workerMetricsPort } from '../../src/devserver/cluster-ports';

test('the default frontend port gives the Temporal services the ports of Temporal\'s own configuration', () => {
  assert.deepEqual(clusterPorts(7233), {
    frontendGrpc: 7233,
    frontendHttp: 7243,
    frontendMembership: 6933,
    historyGrpc: 7234,
    historyMembership: 6934,
    matchingGrpc: 7235,
    matchingMembership: 6935,
    workerGrpc: 7239,
    workerMembership: 6939,
    postgres: 5433,
  });
});

test('two clusters on different frontend ports share no port', () => {
  const a = new Set(Object.values(clusterPorts(7233)));
  const b = Object.values(clusterPorts(7333));
  assert.deepEqual(b.filter((port) => a.has(port)), []);
  assert.equal(a.size, 10, 'the ports of one cluster are distinct');
});

test('a frontend port whose derived ports would be privileged or too large for Temporal\'s membership table is refused', () => {
  assert.equal(CLUSTER_PORT_RANGE.min, 2824);
  assert.equal(CLUSTER_PORT_RANGE.max, 33061);
  assert.equal(clusterPorts(CLUSTER_PORT_RANGE.min).postgres, 1024);
  assert.equal(clusterPorts(CLUSTER_PORT_RANGE.max).workerMembership, 32767);
  for (const port of [CLUSTER_PORT_RANGE.min - 1, CLUSTER_PORT_RANGE.max + 1, 7233.5, Number.NaN]) {
    assert.throws(() => clusterPorts(port), (error: unknown) => {
      assert.ok(error instanceof RangeError);
      assert.match(error.message, /from 2824 to 33061/);
      assert.match(error.message, /at most 32767/);
      return true;
    });
  }
});

test("the workers' metrics ports follow the frontend port, clear of every other port of the cluster and of one 100 ports up", () => {
  assert.deepEqual([workerMetricsPort(7233, 0), workerMetricsPort(7233, 1)], [7253, 7254]);
  const metrics = Array.from({ length: 64 }, (_, i) => workerMetricsPort(7233, i));
  const taken = new Set([...Object.values(clusterPorts(7233)), ...Object.values(clusterPorts(7333))]);
  assert.deepEqual(metrics.filter((port) => taken.has(port)), []);
  assert.ok(workerMetricsPort(CLUSTER_PORT_RANGE.max, 63) <= 65535);
});
