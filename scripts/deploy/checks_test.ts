import assert from "node:assert/strict";
import { explainedByKill } from "./checks.ts";
import type { InstanceRecord } from "./platform.ts";

const instance = (over: Partial<InstanceRecord>): InstanceRecord => ({
  app: "webhooks",
  id: 1,
  startedAt: 1_000,
  readyAt: 1_500,
  stopAskedAt: 5_000,
  killedAtOnce: true,
  endedAt: 5_000,
  end: "killed",
  exitCode: null,
  signal: "SIGKILL",
  logPath: "/nonexistent",
  ...over,
});

Deno.test("a repeat is explained only by a kill of an instance that was up at the first send and gone before the repeat", () => {
  const killed = instance({});
  assert.equal(explainedByKill([killed], 2_000, 30_000), killed);
  // Started after the first send: it cannot have sent it.
  assert.equal(explainedByKill([instance({ startedAt: 2_500 })], 2_000, 30_000), undefined);
  // Killed only after the repeat: the repeat came from a live instance, a bug.
  assert.equal(explainedByKill([instance({ endedAt: 40_000 })], 2_000, 30_000), undefined);
  // Stopped in time (SIGINT, exit 0): what it sent it recorded, so no repeat is excused.
  assert.equal(
    explainedByKill([instance({ end: "evicted", signal: null, exitCode: 0 })], 2_000, 30_000),
    undefined,
  );
  assert.equal(explainedByKill([], 2_000, 30_000), undefined);
});
